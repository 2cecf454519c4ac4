"""Benchmark the built-in GPU kernel families against NumPy (same run, same data).

    python benchmarks/bench_kernels.py [--device vulkan:0] [--repeat 5] [--quick]

Prints a table and writes ``benchmarks/results/kernels.json``. Every GPU timing covers
recording the dispatches *and* waiting for them (``device.synchronize()``), median of
``--repeat`` runs after one warm-up run (pipeline compilation excluded). Inputs are
uploaded once, outside the timed region.

Measured: device buffer copy bandwidth (``Buffer.copy_from``, bytes read + written);
full and row-wise sum of a 4096 x 4096 float32 matrix (bytes read per second, and as a
fraction of the copy bandwidth); row softmax of 4096 x 4096; matmul 256 / 512 / 1024
float32 (GFLOP/s = 2 M N K / t), tiled vs naive vs NumPy.

Targets (software Vulkan, lavapipe; reported, not asserted): reductions >= 50 % of the
copy bandwidth; matmul 1024 >= 4 GFLOP/s and faster than the naive kernel.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import RESULTS_DIR, arg_parser, ensure_path, load_average
else:
    from .common import RESULTS_DIR, arg_parser, ensure_path, load_average

ensure_path()

import pyaccel  # noqa: E402
from pyaccel import dtypes  # noqa: E402
from pyaccel.ops import gpu_kernels as gk  # noqa: E402

RESULTS = RESULTS_DIR / "kernels.json"


def sync(dev: Any, buf: Any = None) -> None:
    """Wait for all queued work. Falls back to a 4-byte readback (which waits for every
    submitted command too) if ``device.synchronize()`` fails in this wgpu build."""
    try:
        dev.synchronize()
    except Exception:
        if buf is not None and buf.nbytes >= 4:
            buf.read(4)
        else:
            raise


class Timing(float):
    """A median time in seconds that also carries the fastest run (``best``)."""

    best: float


def median_time(fn: Callable[[], Any], repeat: int) -> Timing:
    fn()  # warm-up: compile pipelines, fill the pool
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    med = Timing(statistics.median(times))
    med.best = min(times)
    return med


def gpu_timer(dev: Any, call: Callable[[], Any]) -> Callable[[], None]:
    def run() -> None:
        out = call()
        sync(dev, out)
        out.free()
    return run


def upload(dev: Any, a: np.ndarray) -> Any:
    b = dev.malloc(a.nbytes)
    b.write(np.ascontiguousarray(a))
    return b


def main(argv: list[str] | None = None) -> int:
    ap = arg_parser(__doc__, "smaller sizes (smoke run)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args(argv)

    dev = pyaccel.device(args.device)
    rep = args.repeat
    rng = np.random.default_rng(0)
    side = 1024 if args.quick else 4096
    mm_sizes = (128, 256) if args.quick else (256, 512, 1024)
    rows: list[dict[str, Any]] = []

    def record(name: str, impl: str, seconds: float, **metrics: Any) -> None:
        best = getattr(seconds, "best", seconds)
        rows.append({"name": name, "impl": impl, "ms": seconds * 1e3, "ms_best": best * 1e3,
                     **metrics})

    # -- copy bandwidth -------------------------------------------------------
    x = rng.standard_normal((side, side)).astype(np.float32)
    nbytes = x.nbytes
    xb = upload(dev, x)
    dst = dev.malloc(nbytes)

    def copy() -> None:
        dst.copy_from(xb)
        sync(dev, dst)

    t = median_time(copy, rep)
    copy_gbs = 2 * nbytes / t / 1e9
    record(f"copy {side}x{side} f32", "pyaccel", t, gbs=copy_gbs)
    t = median_time(lambda: np.copyto(np.empty_like(x), x), rep)
    record(f"copy {side}x{side} f32", "numpy", t, gbs=2 * nbytes / t / 1e9)

    # -- reductions -----------------------------------------------------------
    f32 = dtypes.float32
    red_fracs = []
    for label, shape, npfn in (
        ("sum all", (1, side * side, 1), lambda: x.sum()),
        ("sum rows (axis=1)", (side, side, 1), lambda: x.sum(axis=1)),
        ("sum cols (axis=0)", (1, side, side), lambda: x.sum(axis=0)),
    ):
        t = median_time(gpu_timer(dev, lambda s=shape: gk.reduce_axis(dev, xb, f32, *s, "sum")), rep)
        gbs = nbytes / t / 1e9
        frac = gbs / copy_gbs
        if label != "sum cols (axis=0)":
            red_fracs.append(frac)
        record(f"{label} {side}x{side} f32", "pyaccel", t, gbs=gbs, vs_copy=frac)
        t = median_time(npfn, rep)
        record(f"{label} {side}x{side} f32", "numpy", t, gbs=nbytes / t / 1e9)

    # -- softmax --------------------------------------------------------------
    t = median_time(gpu_timer(dev, lambda: gk.softmax_rows(dev, xb, f32, side, side)), rep)
    record(f"softmax rows {side}x{side} f32", "pyaccel", t, gbs=2 * nbytes / t / 1e9)

    def np_softmax() -> None:
        e = np.exp(x - x.max(axis=1, keepdims=True))
        e /= e.sum(axis=1, keepdims=True)

    t = median_time(np_softmax, rep)
    record(f"softmax rows {side}x{side} f32", "numpy", t, gbs=2 * nbytes / t / 1e9)
    xb.free()
    dst.free()

    # -- matmul ---------------------------------------------------------------
    mm: dict[int, dict[str, float]] = {}
    for s in mm_sizes:
        a = rng.standard_normal((s, s)).astype(np.float32)
        b = rng.standard_normal((s, s)).astype(np.float32)
        ab, bb = upload(dev, a), upload(dev, b)
        flop = 2.0 * s ** 3
        res = {}
        for impl, fn in (("tiled", gk.matmul), ("naive", gk.matmul_naive)):
            def call(fn: Any = fn, ab: Any = ab, bb: Any = bb, s: int = s) -> Any:
                return fn(dev, ab, bb, f32, 1, s, s, s, 0, 0)

            # the naive kernel at the largest size is slow on software devices: fewer runs
            t = median_time(gpu_timer(dev, call), rep if s < 1024 or impl == "tiled" else min(rep, 3))
            res[impl] = flop / t / 1e9
            record(f"matmul {s} f32", f"pyaccel {impl}", t, gflops=res[impl])
        t = median_time(lambda a=a, b=b: a @ b, rep)
        res["numpy"] = flop / t / 1e9
        record(f"matmul {s} f32", "numpy", t, gflops=res["numpy"])
        mm[s] = res
        ab.free()
        bb.free()

    # -- report ---------------------------------------------------------------
    big = max(mm_sizes)
    targets = {
        "reductions >= 50% of copy bandwidth": all(f >= 0.5 for f in red_fracs),
        f"matmul {big} >= 4 GFLOP/s": mm[big]["tiled"] >= 4.0,
        f"matmul {big} tiled faster than naive": mm[big]["tiled"] > mm[big]["naive"],
    }
    load = load_average()
    load_s = f"; load average {load[0]:.2f}" if load else ""
    print(f"device: {dev.uri} ({dev.name}); numpy {np.__version__}; median of {rep} runs{load_s}")
    print(f"{'benchmark':38s} {'impl':16s} {'ms':>10s} {'GB/s':>8s} {'GFLOP/s':>8s} {'vs copy':>8s}")
    for r in rows:
        gbs = f"{r['gbs']:.2f}" if "gbs" in r else ""
        gfl = f"{r['gflops']:.2f}" if "gflops" in r else ""
        vs = f"{100 * r['vs_copy']:.0f}%" if "vs_copy" in r else ""
        print(f"{r['name']:38s} {r['impl']:16s} {r['ms']:10.2f} {gbs:>8s} {gfl:>8s} {vs:>8s}")
    for k, v in targets.items():
        print(f"target {k}: {'met' if v else 'NOT met'}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "device": dev.uri, "device_name": dev.name, "numpy": np.__version__,
        "machine": platform.machine(), "cpus": os.cpu_count(), "load_average": load, "repeat": rep,
        "quick": args.quick, "results": rows, "targets": targets,
    }, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
