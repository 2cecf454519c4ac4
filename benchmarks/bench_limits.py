"""Adapter limits (FMA peak, copy bandwidth) through raw wgpu-py, and pyaccel's float32 matmul
as a fraction of that peak, beside NumPy's sgemm, all in one process.

* FMA peak and copy bandwidth: ``pyaccel.adapter_limits`` (``fma_peak``: 8 independent
  vec4 ``fma`` chains of 4,096 steps per invocation, 512 workgroups of 64; ``copy_bandwidth``:
  a 64 MiB buffer-to-buffer copy, bytes read + written), on the wgpu-py ``GPUDevice`` pyaccel
  opened.
* matmul: ``pyaccel.matmul`` on float32 n x n (256, 512, 1024; 2048 with ``--big``),
  GFLOP/s = 2 n^3 / s. With ``--variants a,b,..`` each round measures the FMA peak, then
  one call of each variant (pinned, order alternating round to round); the % of peak is
  the median over rounds of (variant GFLOP/s / that round's peak). NumPy's sgemm on the
  same sizes beside it.

Writes ``benchmarks/results/limits.json`` (``limits-quick.json`` with ``--quick``).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from typing import Any

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import arg_parser, ensure_path, load_average, report, result
else:
    from .common import arg_parser, ensure_path, load_average, report, result

ensure_path()

import pyaccel  # noqa: E402
from pyaccel.adapter_limits import (  # noqa: E402
    copy_bandwidth,
    fma_peak,
    raw_gpu_device,
)
from pyaccel.ops.gpu_kernels import matmul_variant  # noqa: E402


def _numpy_s(a: np.ndarray, b: np.ndarray, reps: int) -> float:
    ts = []
    for _ in range(max(reps, 3)):
        t = time.perf_counter()
        a @ b
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def main(argv: list[str] | None = None) -> int:
    ap = arg_parser(__doc__, "fewer reps, sizes 256 and 512 only")
    ap.add_argument("--big", action="store_true", help="also n = 2048")
    ap.add_argument("--sizes", default=None, help="comma-separated n (overrides the defaults)")
    ap.add_argument("--variants", default=None,
                    help="comma-separated matmul variants to compare (default: the unpinned choice)")
    ap.add_argument("--rounds", type=int, default=None, help="rounds per size (default 3; 2048: 2)")
    ap.add_argument("--groups", type=int, default=512, help="FMA-kernel workgroups (64 invocations each)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    load0 = load_average()
    dev = pyaccel.device(args.device)
    raw = raw_gpu_device(dev)
    if raw is None:
        print(f"bench_limits: {dev.uri} has no wgpu-py device (cpu / browser)", file=sys.stderr)
        return 2
    copy = copy_bandwidth(raw, 64 << 20, 3)
    rng = np.random.default_rng(0)
    if args.sizes:
        sizes = [int(v) for v in args.sizes.split(",")]
    else:
        sizes = [256, 512] if args.quick else [256, 512, 1024] + ([2048] if args.big else [])
    variants = args.variants.split(",") if args.variants else [None]
    rows: list[dict[str, Any]] = []
    peaks: list[float] = []
    for n in sizes:
        a = rng.standard_normal((n, n)).astype(np.float32)
        b = rng.standard_normal((n, n)).astype(np.float32)
        xa, xb = pyaccel.asarray(a, device=dev), pyaccel.asarray(b, device=dev)
        want = a.astype(np.float64) @ b
        errs = {}
        for v in variants:  # warm-up (compile, tune) and check
            pyaccel.set_matmul_variant(v)
            errs[v] = float(np.max(np.abs(np.asarray(xa @ xb) - want))) / np.sqrt(n)
        rounds = args.rounds or (1 if args.quick else (2 if n >= 2048 else 3))
        gf: dict[Any, list[float]] = {v: [] for v in variants}
        pct: dict[Any, list[float]] = {v: [] for v in variants}
        pk_n = []
        for r in range(rounds):
            pk = fma_peak(raw, args.groups, 2)["gflops"]
            pk_n.append(pk)
            for v in (variants if r % 2 == 0 else variants[::-1]):
                pyaccel.set_matmul_variant(v)
                dev.synchronize()
                t = time.perf_counter()
                c = (xa @ xb).block_until_ready()  # (lazy until then: matmul epilogues)
                g = 2.0 * n ** 3 / (time.perf_counter() - t) / 1e9
                del c
                gf[v].append(g)
                pct[v].append(100 * g / pk)
        pyaccel.set_matmul_variant(None)
        peaks += pk_n
        tn = _numpy_s(a, b, 3)
        for v in variants:
            g = statistics.median(gf[v])
            rows.append({"n": n, "variant": v or matmul_variant(dev, n, n, n), "pinned": v is not None,
                         "pyaccel_gflops": g, "pyaccel_s": 2.0 * n ** 3 / g / 1e9,
                         "pct_of_peak": statistics.median(pct[v]), "peak_gflops": statistics.median(pk_n),
                         "rounds": rounds, "gflops_runs": gf[v],
                         "numpy_s": tn, "numpy_gflops": 2.0 * n ** 3 / tn / 1e9,
                         "time_vs_numpy": 2.0 * n ** 3 / g / 1e9 / tn,
                         "max_err_over_sqrt_n": errs[v], "met": True})
        print(f"n={n}: peak {statistics.median(pk_n):.1f} GFLOP/s; "
              + "; ".join(f"{rw['variant']} {rw['pyaccel_gflops']:.2f} GFLOP/s {rw['pct_of_peak']:.1f} %"
                          for rw in rows if rw["n"] == n), flush=True)
    peak = {"gflops": statistics.median(peaks), "min": min(peaks), "max": max(peaks), "runs": len(peaks)}
    res = result("limits", rows, quick=args.quick, device=args.device, t0=t0, dev=dev,
                 fma_peak=peak, copy=copy, load_average={"start": load0, "end": load_average()},
                 date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    print(f"FMA peak {peak['gflops']:.1f} GFLOP/s (median of {len(peaks)}, {peak['min']:.1f}-{peak['max']:.1f}); "
          f"copy {copy['gbs']:.2f} GB/s; load average {load0} -> {load_average()}")
    print(f"{'n':>6s} {'variant':>8s} {'ms':>9s} {'GFLOP/s':>8s} {'% peak':>7s} {'NumPy ms':>9s} {'x NumPy':>8s}")
    for r in rows:
        print(f"{r['n']:6d} {r['variant']:>8s} {r['pyaccel_s'] * 1e3:9.1f} {r['pyaccel_gflops']:8.2f} "
              f"{r['pct_of_peak']:6.1f}% {r['numpy_s'] * 1e3:9.2f} {r['time_vs_numpy']:8.1f}")
    return report(res)


if __name__ == "__main__":
    raise SystemExit(main())
