"""What the adapter can do, measured through raw wgpu-py, and pyaccel against it.

* :func:`fma_peak`: a register-only kernel (8 independent vec4 ``fma`` chains of
  :data:`ITERS` steps per invocation, no memory traffic but one store), ``groups`` workgroups
  of 64; GFLOP/s = 2 * 4 * 8 * ITERS * invocations / seconds, best of ``reps``.
* :func:`copy_bandwidth`: a buffer-to-buffer copy; GB/s counts bytes read + written.
* :func:`measure`: both, then pyaccel's float32 ``matmul`` (n x n) and ``x + y`` on the same
  device in the same process, as % of those limits (what ``pyaccel bench`` prints and
  ``benchmarks/bench_limits.py`` records).

Both limits drive the wgpu-py ``GPUDevice`` pyaccel opened for the device (same adapter,
features and limits); a device without one (cpu, the browser) has no raw limits here.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

ITERS = 4096  # fma steps per invocation (well under Mesa's 65,535-iteration cap)
CHAINS = 8
FMA_WGSL = """
struct P { seed: f32, _a: f32, _b: f32, _c: f32 }
@group(0) @binding(0) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(1) var<uniform> p: P;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    let s = p.seed + f32(i) * 1e-9;
    var x0 = vec4<f32>(s, s + 1.0, s + 2.0, s + 3.0);
    var x1 = x0 + 0.1; var x2 = x0 + 0.2; var x3 = x0 + 0.3;
    var x4 = x0 + 0.4; var x5 = x0 + 0.5; var x6 = x0 + 0.6; var x7 = x0 + 0.7;
    let m = vec4<f32>(0.9999);
    let c = vec4<f32>(1e-4);
    for (var k = 0u; k < ITERSu; k += 1u) {
        x0 = fma(x0, m, c); x1 = fma(x1, m, c); x2 = fma(x2, m, c); x3 = fma(x3, m, c);
        x4 = fma(x4, m, c); x5 = fma(x5, m, c); x6 = fma(x6, m, c); x7 = fma(x7, m, c);
    }
    out[i] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}
""".replace("ITERS", str(ITERS))


def raw_gpu_device(dev: Any) -> Any | None:
    """The wgpu-py ``GPUDevice`` behind a pyaccel device, or ``None`` (cpu, browser)."""
    return getattr(getattr(getattr(dev, "impl", None), "f", None), "device", None)


def fma_peak(device: Any, groups: int = 512, reps: int = 3) -> dict[str, float]:
    """Best GFLOP/s of the register-only FMA kernel over ``reps`` runs of ``groups``
    workgroups on a wgpu-py ``GPUDevice``."""
    import numpy as np
    import wgpu

    n = groups * 64
    out = device.create_buffer(size=n * 16, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
    uni = device.create_buffer_with_data(data=np.array([0.5, 0, 0, 0], np.float32).tobytes(),
                                         usage=wgpu.BufferUsage.UNIFORM)
    mod = device.create_shader_module(code=FMA_WGSL)
    pipe = device.create_compute_pipeline(layout="auto", compute={"module": mod, "entry_point": "main"})
    bg = device.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=[
        {"binding": 0, "resource": {"buffer": out, "offset": 0, "size": out.size}},
        {"binding": 1, "resource": {"buffer": uni, "offset": 0, "size": 16}}])
    gx = min(groups, 65535)
    gy = -(-groups // gx)

    def run() -> float:
        enc = device.create_command_encoder()
        cp = enc.begin_compute_pass()
        cp.set_pipeline(pipe)
        cp.set_bind_group(0, bg)
        cp.dispatch_workgroups(gx, gy, 1)
        cp.end()
        t = time.perf_counter()
        device.queue.submit([enc.finish()])
        device.queue.read_buffer(out, 0, 16)  # waits for the dispatch
        return time.perf_counter() - t

    run()  # compile + warm
    best = min(run() for _ in range(max(1, reps)))
    flop = 2.0 * 4 * CHAINS * ITERS * gx * gy * 64
    return {"gflops": flop / best / 1e9, "seconds": best, "invocations": gx * gy * 64}


def copy_bandwidth(device: Any, nbytes: int = 64 << 20, reps: int = 3) -> dict[str, float]:
    """Best GB/s (read + written) of a buffer-to-buffer copy of ``nbytes`` on a wgpu-py
    ``GPUDevice``."""
    import wgpu

    usage = wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    src = device.create_buffer(size=nbytes, usage=usage)
    dst = device.create_buffer(size=nbytes, usage=usage)
    device.queue.write_buffer(src, 0, b"\x01" * nbytes)

    def run() -> float:
        enc = device.create_command_encoder()
        enc.copy_buffer_to_buffer(src, 0, dst, 0, nbytes)
        t = time.perf_counter()
        device.queue.submit([enc.finish()])
        device.queue.read_buffer(dst, 0, 16)
        return time.perf_counter() - t

    run()
    best = min(run() for _ in range(max(1, reps)))
    src.destroy()
    dst.destroy()
    return {"gbs": 2 * nbytes / best / 1e9, "seconds": best, "bytes": nbytes}


def time_matmul(dev: Any, n: int, reps: int, rng: Any) -> dict[str, float]:
    """pyaccel float32 n x n matmul on ``dev``: median seconds (after a warm-up call),
    GFLOP/s, the variant run and the max error vs NumPy / sqrt(n)."""
    import numpy as np

    import pyaccel

    from .ops.gpu_kernels import matmul_variant

    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    xa, xb = pyaccel.asarray(a, device=dev), pyaccel.asarray(b, device=dev)
    dev.synchronize()
    c = pyaccel.matmul(xa, xb)  # warm-up: compile (and tune), pool
    err = float(np.max(np.abs(np.asarray(c) - a @ b))) / np.sqrt(n)
    ts = []
    for _ in range(max(1, reps)):
        t = time.perf_counter()
        c = pyaccel.matmul(xa, xb).block_until_ready()  # (a lazy product: synchronize() alone waits for nothing)
        ts.append(time.perf_counter() - t)
        del c
    s = statistics.median(ts)
    return {"n": n, "seconds": s, "gflops": 2.0 * n ** 3 / s / 1e9, "max_err_over_sqrt_n": err,
            "variant": matmul_variant(dev, n, n, n) if dev.api != "cpu" else "numpy"}


def time_add(dev: Any, n: int, reps: int) -> dict[str, float]:
    """pyaccel float32 ``x + y`` of n elements: median seconds, GB/s (read + written)."""
    import numpy as np

    import pyaccel

    x = pyaccel.asarray(np.arange(n, dtype=np.float32), device=dev)
    y = pyaccel.asarray(np.ones(n, np.float32), device=dev)
    z = x + y
    if float(np.asarray(z[n - 1])) != float(n):
        raise AssertionError(f"x + y gave {np.asarray(z[n - 1])} at {n - 1}, want {float(n)}")
    dev.synchronize()
    ts = []
    for _ in range(max(1, reps)):
        t = time.perf_counter()
        z = (x + y).block_until_ready()
        ts.append(time.perf_counter() - t)
        del z
    s = statistics.median(ts)
    return {"n": n, "seconds": s, "gbs": 3 * 4 * n / s / 1e9}


def measure(dev: Any, sizes: tuple[int, ...] = (256, 512, 1024), add_n: int = 1 << 22,
            quick: bool = False, groups: int = 512) -> dict[str, Any]:
    """The adapter's limits (None without a raw wgpu-py device) and pyaccel's matmul and
    add on ``dev`` as % of them, all in this process."""
    import numpy as np

    reps = 2 if quick else 3
    raw = raw_gpu_device(dev)
    peak = fma_peak(raw, groups // 4 if quick else groups, reps) if raw is not None else None
    copy = copy_bandwidth(raw, (16 << 20) if quick else (64 << 20), reps) if raw is not None else None
    rng = np.random.default_rng(0)
    mm = []
    for n in sizes:
        r = time_matmul(dev, n, 1 if (quick or n >= 2048) else reps, rng)
        r["pct_of_peak"] = 100 * r["gflops"] / peak["gflops"] if peak else None
        mm.append(r)
    add = time_add(dev, add_n, 3 if quick else 5)
    add["pct_of_copy"] = 100 * add["gbs"] / copy["gbs"] if copy else None
    return {"device": dev.uri, "adapter": dev.name, "driver": dev.descriptor.driver,
            "fma_peak": peak, "copy": copy, "matmul": mm, "add": add}


def format_report(res: dict[str, Any]) -> str:
    """The table ``pyaccel bench`` prints for :func:`measure`'s result."""
    lines = [f"Adapter limits and pyaccel against them: {res['device']} = {res['adapter']} "
             f"({res['driver']})"]
    pk, cp = res["fma_peak"], res["copy"]
    if pk is None:
        lines.append("  (no raw wgpu-py device behind this device: limits not measured)")
    else:
        lines.append(f"  FMA peak (raw wgpu-py)        {pk['gflops']:9.1f} GFLOP/s")
        lines.append(f"  copy bandwidth (raw wgpu-py)  {cp['gbs']:9.2f} GB/s (read + written)")
    for r in res["matmul"]:
        pct = f"{r['pct_of_peak']:5.1f} % of FMA peak" if r["pct_of_peak"] is not None else ""
        lines.append(f"  matmul float32 {r['n']:5d}^2        {r['gflops']:9.2f} GFLOP/s  {pct}  "
                     f"({r['seconds'] * 1e3:.1f} ms, variant {r['variant']})")
    a = res["add"]
    pct = f"{a['pct_of_copy']:5.1f} % of copy" if a["pct_of_copy"] is not None else ""
    lines.append(f"  add float32 {a['n']:>9,d}         {a['gbs']:9.2f} GB/s     {pct}  "
                 f"({a['seconds'] * 1e3:.2f} ms)")
    return "\n".join(lines)


__all__ = ["CHAINS", "FMA_WGSL", "ITERS", "copy_bandwidth", "fma_peak", "format_report", "measure",
           "raw_gpu_device", "time_add", "time_matmul"]
