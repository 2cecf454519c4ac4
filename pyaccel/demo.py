"""The main job's computation: a SAXPY-plus-reduction kernel on the best device and on every GPU,
each result checked against NumPy."""

from __future__ import annotations

import time

from . import registry
from .capabilities import Capability
from .kernel import Kernel

SAXPY = """
struct Params { n: u32, a: f32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < p.n) {
        y[i] = p.a * x[i] + sin(y[i]);
    }
}
"""


def _reference(x, y, p):  # noqa: ANN001 - NumPy views
    import numpy as np

    y[:] = p["a"] * x + np.sin(y)


def run_demo(uri: str | None = None, n: int = 1 << 20) -> int:
    """Run SAXPY on the chosen (or best) device and every GPU adapter; return 0 if all match NumPy."""
    import numpy as np

    rng = np.random.default_rng()
    x = rng.standard_normal(n, dtype=np.float32)
    y0 = rng.standard_normal(n, dtype=np.float32)
    expected = (np.float32(2.5) * x + np.sin(y0)).astype(np.float32)
    kernel = Kernel(SAXPY, reference=_reference, name="saxpy")
    first = registry.device(uri) if uri else registry.get_device()
    others = [] if uri else [registry.device(d.uri) for d in registry.devices() if d.uri != first.uri]
    # every other device that runs WGSL (the cpu device runs the NumPy reference instead)
    targets = [first] + [d for d in others if Capability.KERNELS_RUN_REFERENCE not in d.capabilities]
    failures = 0
    print(f"\nSAXPY y = 2.5*x + sin(y) on {n} float32 elements (checked against NumPy):")
    for dev in targets:
        xb, yb = dev.malloc(x.nbytes), dev.malloc(y0.nbytes)
        xb.write(x)
        yb.write(y0)
        t0 = time.perf_counter()
        kernel(xb, yb, {"n": n, "a": 2.5}, grid=n)  # first call compiles the pipeline
        got = np.frombuffer(yb.read(), dtype=np.float32)
        first_t = time.perf_counter() - t0
        yb.write(y0)
        t0 = time.perf_counter()
        kernel(xb, yb, {"n": n, "a": 2.5}, grid=n)
        got = np.frombuffer(yb.read(), dtype=np.float32)
        dt = time.perf_counter() - t0
        err = float(np.max(np.abs(got - expected)))
        ok = err <= 1e-5 * (1 + float(np.max(np.abs(expected))))
        failures += not ok
        mark = "(default)" if dev is first else ""
        print(f"  {dev.uri:9s} {dev.name[:36]:36s} {dt * 1e3:8.2f} ms (first {first_t * 1e3:7.2f} ms)  max|err|={err:.2e}  "
              f"{'OK' if ok else 'MISMATCH'} {mark}")
        xb.free()
        yb.free()
    return 1 if failures else 0
