"""Benchmark the linalg factorizations against NumPy (same run, same float32 data).

    python benchmarks/bench_linalg.py [--device vulkan:0] [--sizes 256 1024] [--repeat 3]
                                      [--budget 120] [--quick]

Prints a table and writes ``benchmarks/results/linalg.json``. Each pyaccel timing covers
recording every dispatch *and* waiting for it (``common.ready``: every result array computed,
a lazy one too, then ``device.synchronize()``; the Jacobi methods
also read one convergence scalar back per sweep, the failure checks of solve / cholesky
one flag per matrix); best of ``--repeat`` runs after one warm-up run (pipeline
compilation excluded). Inputs are uploaded once, outside the timed region. NumPy runs
``numpy.linalg`` (LAPACK through OpenBLAS) on the same host, float32, single-threaded
(see below).

Cases: solve (one right-hand side), inv, cholesky, det, slogdet, qr (reduced), svd
(full_matrices=False), eigh (``--ops`` picks; default all but det / slogdet). Each row also gives the dispatches, submits and host reads of one call, from the
device's counters (``device.impl.stats``: ``dispatches``, ``submits``, ``reads``). A case whose estimated time (the smaller size's time scaled by n^3) exceeds
``--budget`` seconds is not run and is reported as skipped with that estimate.

``--accuracy`` instead prints the accuracy table of docs/linalg.md for ``--sizes``
(default there: 16 64 256): errors against NumPy in float64 on the same float32 data, and
the residual norms.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

# NumPy single-threaded: in one process with lavapipe's worker threads, OpenBLAS's own
# threads thrash on a 2-core machine (cholesky 256 took 110 ms instead of 1.2 ms, svd 256
# 2.2 s instead of 45 ms). Set OPENBLAS_NUM_THREADS yourself to override.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import ROOT, arg_parser, ensure_path, ready, write_json
else:
    from .common import ROOT, arg_parser, ensure_path, ready, write_json

ensure_path()

import pyaccel  # noqa: E402


def counts(dev: Any, fn: Callable[[], Any]) -> dict[str, int]:
    """Dispatches, submits and host reads of one call of ``fn`` (0s where the device keeps no
    counters, as cpu)."""
    stats = getattr(dev.impl, "stats", {})
    keys = ("dispatches", "submits", "reads")
    before = {k: stats.get(k, 0) for k in keys}
    fn()
    return {k: stats.get(k, 0) - before[k] for k in keys}


def best_time(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm-up: pipelines, pool
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def inputs(n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    a = (rng.standard_normal((n, n)) / np.sqrt(n) + 2 * np.eye(n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    return {"a": a, "spd": (b @ b.T / n + np.eye(n)).astype(np.float32),
            "sym": ((b + b.T) / 2).astype(np.float32), "rhs": rng.standard_normal((n, 1)).astype(np.float32)}


def cases(dev: Any, data: dict[str, np.ndarray]) -> dict[str, tuple[Callable[[], Any], Callable[[], Any]]]:
    la = pyaccel.linalg
    A = {k: pyaccel.asarray(v, device=dev) for k, v in data.items()}

    def gpu(f: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> None:
            ready(f(), dev)  # (results computed if lazy, then waited for: docs/fusion.md)
        return run
    return {
        "solve": (gpu(lambda: la.solve(A["a"], A["rhs"])), lambda: np.linalg.solve(data["a"], data["rhs"])),
        "inv": (gpu(lambda: la.inv(A["a"])), lambda: np.linalg.inv(data["a"])),
        "cholesky": (gpu(lambda: la.cholesky(A["spd"])), lambda: np.linalg.cholesky(data["spd"])),
        "det": (gpu(lambda: la.det(A["a"])), lambda: np.linalg.det(data["a"])),
        "slogdet": (gpu(lambda: la.slogdet(A["a"])), lambda: np.linalg.slogdet(data["a"])),
        "qr": (gpu(lambda: la.qr(A["a"])), lambda: np.linalg.qr(data["a"])),
        "svd": (gpu(lambda: la.svd(A["a"], full_matrices=False)),
                lambda: np.linalg.svd(data["a"], full_matrices=False)),
        "eigh": (gpu(lambda: la.eigh(A["sym"])), lambda: np.linalg.eigh(data["sym"])),
    }


def accuracy(dev: Any, sizes: list[int]) -> None:
    """Print the accuracy table (markdown) of docs/linalg.md."""
    la = pyaccel.linalg
    rng = np.random.default_rng(12345)

    def relerr(x: Any, y: Any) -> float:
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        return float(np.linalg.norm((x - y).ravel()) / np.linalg.norm(y.ravel()))

    def maxrel(x: Any, y: Any) -> float:
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        return float(np.max(np.abs(x - y)) / np.max(np.abs(y)))

    def d(x: Any) -> Any:
        return pyaccel.asarray(x, device=dev)
    print("| function | n | max rel. error vs NumPy float64 | residuals |\n|---|---|---|---|")
    for n in sizes:
        eye = np.eye(n)
        a = (rng.standard_normal((n, n)) / np.sqrt(n) + 2 * eye).astype(np.float32)
        a64 = a.astype(np.float64)
        b = rng.standard_normal((n, n))
        spd = (b @ b.T / n + eye).astype(np.float32)
        sym = ((b + b.T) / 2).astype(np.float32)
        g = rng.standard_normal((n, n)).astype(np.float32)
        g64 = g.astype(np.float64)
        rhs = rng.standard_normal((n, 1)).astype(np.float32)
        low = la.cholesky(d(spd)).to_numpy()
        print(f"| cholesky | {n} | {maxrel(low, np.linalg.cholesky(spd.astype(np.float64))):.1e} | "
              f"‖LLᵀ−A‖ {relerr(low @ low.T, spd):.1e} |")
        x = la.solve(d(a), d(rhs)).to_numpy()
        print(f"| solve | {n} | {maxrel(x, np.linalg.solve(a64, rhs)):.1e} | ‖Ax−b‖ {relerr(a64 @ x, rhs):.1e} |")
        ai = la.inv(d(a)).to_numpy()
        print(f"| inv | {n} | {maxrel(ai, np.linalg.inv(a64)):.1e} | ‖AX−I‖ {relerr(a64 @ ai, eye):.1e} |")
        half = (a * 0.5).astype(np.float32)
        want = np.linalg.det(half.astype(np.float64))
        print(f"| det | {n} | {abs(float(la.det(d(half)).to_numpy()) - want) / abs(want):.1e} | |")
        sg, lg = la.slogdet(d(a))
        ws, wl = np.linalg.slogdet(a64)
        print(f"| slogdet | {n} | {abs(float(lg.to_numpy()) - wl) / abs(wl):.1e} (sign exact: "
              f"{float(sg.to_numpy()) == ws}) | |")
        q, r = (t.to_numpy() for t in la.qr(d(g)))
        wq, wr = np.linalg.qr(g64)
        print(f"| qr | {n} | R {maxrel(r, wr):.1e}, Q {maxrel(q, wq):.1e} | ‖A−QR‖ {relerr(q @ r, g64):.1e}, "
              f"‖QᵀQ−I‖ {relerr(q.T @ q, eye):.1e} |")
        w, v = (t.to_numpy() for t in la.eigh(d(sym)))
        s64 = sym.astype(np.float64)
        print(f"| eigh | {n} | λ {maxrel(w, np.linalg.eigvalsh(s64)):.1e} | ‖AV−VΛ‖ "
              f"{np.linalg.norm(s64 @ v - v * w) / np.linalg.norm(s64):.1e}, ‖VᵀV−I‖ {relerr(v.T @ v, eye):.1e} |")
        u, sv, vh = (t.to_numpy() for t in la.svd(d(g)))
        ws_ = np.linalg.svd(g64, compute_uv=False)
        print(f"| svd | {n} | σ {maxrel(sv, ws_):.1e} (smallest σ {abs(sv[-1] - ws_[-1]) / ws_[-1]:.1e}) | "
              f"‖A−UΣVᵀ‖ {relerr((u * sv) @ vh, g64):.1e}, ‖UᵀU−I‖ {relerr(u.T @ u, eye):.1e}, "
              f"‖VVᵀ−I‖ {relerr(vh @ vh.T, eye):.1e} |")
        print(f"| pinv | {n} | {maxrel(la.pinv(d(g)).to_numpy(), np.linalg.pinv(g64)):.1e} | |", flush=True)


def main(argv: list[str] | None = None) -> None:
    ap = arg_parser(__doc__, "sizes 64 and 256, one repeat")
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 1024])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--budget", type=float, default=120.0, help="seconds one timed call may take")
    ap.add_argument("--ops", nargs="+", default=["solve", "inv", "cholesky", "qr", "svd", "eigh"])
    ap.add_argument("--out", default="linalg.json", help="file name under benchmarks/results")
    ap.add_argument("--accuracy", action="store_true", help="print the accuracy table instead")
    args = ap.parse_args(argv)
    if args.accuracy:
        accuracy(pyaccel.device(args.device), args.sizes)
        return
    if args.quick:
        args.sizes, args.repeat = [64, 256], 1
    dev = pyaccel.device(args.device)
    rng = np.random.default_rng(0)
    rows: list[dict[str, Any]] = []
    last: dict[str, tuple[int, float]] = {}
    print(f"device {dev.uri}: {dev.info().get('adapter', dev.info()) if isinstance(dev.info(), dict) else ''}")
    print(f"{'case':<16}{'pyaccel s':>12}{'numpy s':>12}{'ratio':>10}{'disp':>7}{'subm':>6}{'reads':>6}")
    for n in sorted(args.sizes):
        data = inputs(n, rng)
        fns = cases(dev, data)
        for op in args.ops:
            g, h = fns[op]
            est = None
            if op in last:
                n0, t0 = last[op]
                est = t0 * (n / n0) ** 3
            t_np = best_time(h, max(args.repeat, 3))
            if est is not None and est > args.budget:
                rows.append({"case": f"{op} {n}", "pyaccel_s": None, "numpy_s": t_np,
                             "note": f"skipped: estimated {est:.0f} s > budget {args.budget:.0f} s"})
                print(f"{op + ' ' + str(n):<16}{'skipped':>12}{t_np:>12.4f}   (estimated {est:.0f} s)")
                continue
            rep = args.repeat if (est is None or est * args.repeat < args.budget) else 1
            t_g = best_time(g, rep) if est is None or est * 2 < args.budget else _once(g)
            last[op] = (n, t_g)
            c = counts(dev, g) if t_g * 2 < args.budget else {}
            rows.append({"case": f"{op} {n}", "pyaccel_s": t_g, "numpy_s": t_np, "ratio": t_g / t_np, **c})
            print(f"{op + ' ' + str(n):<16}{t_g:>12.4f}{t_np:>12.4f}{t_g / t_np:>10.1f}"
                  f"{c.get('dispatches', '-'):>7}{c.get('submits', '-'):>6}{c.get('reads', '-'):>6}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    out = write_json(args.out, {"device": dev.uri, "load_average_1min": load, "rows": rows})
    print(f"load average {load}; wrote {out.relative_to(ROOT)}")


def _once(fn: Callable[[], Any]) -> float:
    """One timed call without a warm-up (pipelines are warm from the smaller size)."""
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
