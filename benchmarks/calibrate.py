"""How fast is this machine's software GPU? A few-second calibration for test-time budgets.

Machines of one kind differ a lot in lavapipe speed (PLATFORM.md: Array ``add`` of 2^24
float32 on vulkan:0 at 8.5 GB/s on one host, 1.4 GB/s on another), and the test suite's
wall time follows it. ``scripts/test.sh`` runs this first and prints the figures, so a
recorded suite time can be scaled to another machine: ``docs/testing.md`` says how.

Measured, each as the best of a few rounds on one device (default ``vulkan:0``):

* ``add_gbs``: ``x + y`` on 2^24 float32 Arrays, bytes moved (3 x 4 x n) per second;
* ``compile_ms``: first call of a float32 elementwise kernel never compiled before in this
  process (a fresh random constant in the WGSL, so neither pyaccel's nor the driver's
  shader cache has it), i.e. WGSL -> SPIR-V -> LLVM, single-threaded CPU work;
* ``python_us``: recording one small ``x + 1`` (host-side cost of one op, no wait).

``python benchmarks/calibrate.py [--device URI] [--json]``; the output line is
``calibration: vulkan:0 add 2^24 f32 7.12 GB/s, compile 41 ms, record 9.1 us/op``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any


def calibrate(uri: str = "vulkan:0") -> dict[str, Any]:
    """The three figures above for ``uri`` (a dict; raises if the device cannot be opened).
    Measured with fusion off (docs/fusion.md): a fused ``x + y`` is only recorded until it is
    read, and the figures must stay comparable with the runs docs/testing.md records."""
    import pyaccel

    with pyaccel.fusion(False):
        return _calibrate(uri)


def _calibrate(uri: str) -> dict[str, Any]:
    import numpy as np

    import pyaccel

    dev = pyaccel.device(uri)
    n = 1 << 24
    rng = np.random.default_rng(0)
    a = pyaccel.asarray(rng.random(n, dtype=np.float32), device=dev)
    b = pyaccel.asarray(rng.random(n, dtype=np.float32), device=dev)
    c = a + b
    got = c[:8].to_numpy()
    if not np.array_equal(got, a[:8].to_numpy() + b[:8].to_numpy()):
        raise AssertionError(f"calibration: add gave wrong values on {uri}: {got}")
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        c = (a + b).block_until_ready()  # (eager under fusion(False); computes it if it ever is lazy)
        best = min(best, time.perf_counter() - t0)
    del a, b, c

    # a kernel no cache has seen: a random constant makes the WGSL source unique
    k = pyaccel.Kernel(f"""
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
    if (g.x < arrayLength(&y)) {{ y[g.x] = exp(y[g.x]) * {rng.random() + 1.0:.17f}; }}
}}""")
    y = pyaccel.asarray(np.ones(64, np.float32), device=dev)
    t0 = time.perf_counter()
    k(y, grid=64, device=dev)
    dev.synchronize()
    compile_s = time.perf_counter() - t0

    s = pyaccel.asarray(np.ones(256, np.float32), device=dev)
    for _ in range(50):
        s + 1.0
    dev.synchronize()
    reps = 2000
    t0 = time.perf_counter()
    for _ in range(reps):
        s + 1.0
    rec_s = (time.perf_counter() - t0) / reps
    dev.synchronize()
    return {"device": uri, "add_gbs": round(3 * 4 * n / best / 1e9, 3),
            "compile_ms": round(compile_s * 1e3, 1), "python_us": round(rec_s * 1e6, 2),
            "cpus": os.cpu_count(), "load_1min": round(os.getloadavg()[0], 2)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="vulkan:0")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = p.parse_args(argv)
    try:
        r = calibrate(args.device)
    except Exception as exc:  # the suite reports the missing device itself
        print(f"calibration: {args.device} unavailable ({type(exc).__name__}: {exc})")
        return 0
    if args.json:
        print(json.dumps(r))
    else:
        print(f"calibration: {r['device']} add 2^24 f32 {r['add_gbs']:.2f} GB/s, compile "
              f"{r['compile_ms']:.0f} ms, record {r['python_us']:.1f} us/op "
              f"({r['cpus']} CPUs, load {r['load_1min']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
