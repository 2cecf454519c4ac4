"""Host-side cost of small eager ops on a GPU device (default ``vulkan:0``): microseconds
per op for ``x + y`` (fusion off), ``sum(x)``, ``x[1:3] = y`` and a 16 x 16 ``matmul``, on
64-element float32 arrays. Per-op overhead (lock, plan lookup, allocation, recording)
dominates at this size. By default the timed loop only records (the automatic submit is
moved to the untimed synchronize), so lavapipe's execution on the same CPUs stays out.

    python benchmarks/bench_small_ops.py [--device vulkan:0] [--ops 2000] [--rounds 7]

For an A/B of two checkouts, run it alternately from each (the venv imports the pyaccel of
the working directory) in the same time window and compare the medians; note the load
average. Prints one line per op: median and min of ``rounds`` rounds of ``ops`` calls.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

import pyaccel as xp


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="vulkan:0")
    ap.add_argument("--ops", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--with-submits", action="store_true",
                    help="keep the automatic submit every BATCH_LIMIT dispatches in the timed "
                         "loop (default: record only; the device's work runs at the untimed sync)")
    a = ap.parse_args(argv)
    if not a.with_submits:
        from pyaccel.runtime import webgpu_common

        webgpu_common.BATCH_LIMIT = 1 << 30  # (read per dispatch: the timed loop only records)
    dev = xp.device(a.device)
    rng = np.random.default_rng(0)
    x = xp.asarray(rng.standard_normal(64).astype(np.float32), device=dev)
    y = xp.asarray(rng.standard_normal(64).astype(np.float32), device=dev)
    y2 = xp.asarray(rng.standard_normal(2).astype(np.float32), device=dev)
    m = xp.asarray(rng.standard_normal((16, 16)).astype(np.float32), device=dev)

    def setitem() -> None:
        x[1:3] = y2

    cases = {"x + y": lambda: x + y, "sum(x)": lambda: xp.sum(x), "x[1:3] = y": setitem,
             "matmul 16x16": lambda: xp.matmul(m, m)}
    print(f"pyaccel {xp.__file__}  device {a.device}  load {os.getloadavg()[0]:.2f}")
    with xp.fusion(False):
        for name, fn in cases.items():
            for _ in range(50):
                fn()
            dev.synchronize()
            per = []
            for _ in range(a.rounds):
                t = time.perf_counter()
                for _ in range(a.ops):
                    fn()
                per.append((time.perf_counter() - t) / a.ops * 1e6)
                dev.synchronize()  # (not timed: the device's own work)
            print(f"{name:<14} median {statistics.median(per):7.2f} us/op   min {min(per):7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
