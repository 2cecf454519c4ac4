"""Adapter limits (FMA peak, copy bandwidth) through raw wgpu-py, and pyaccel's float32 matmul
as a fraction of that peak, beside NumPy's sgemm, all in one process.

* FMA peak: a register-only kernel (8 independent vec4 ``fma`` chains per invocation,
  ``ITERS`` steps, no memory traffic but one store), enough workgroups to fill the
  adapter; GFLOP/s = 2 * 4 * 8 * ITERS * invocations / seconds (best of a few reps).
* Copy bandwidth: a buffer-to-buffer copy of 64 MiB; GB/s counts bytes read + written.
* matmul: ``pyaccel.matmul`` on float32 n x n (256, 512, 1024; 2048 with ``--big``), median
  seconds, GFLOP/s = 2 n^3 / s, the % of the FMA peak and the ratio of NumPy's time.

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

ITERS = 4096  # fma steps per invocation (well under Mesa's 65,535-iteration cap)
CHAINS = 8
_FMA_WGSL = """
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


def _raw_device(name: str) -> Any:
    """A wgpu-py device on the adapter pyaccel calls ``name`` (by adapter name and backend)."""
    import wgpu

    want_backend = "OpenGL" if "gl" in name.split(":")[0] else "Vulkan"
    for ad in wgpu.gpu.enumerate_adapters_sync():
        if ad.info.get("backend_type", "").lower().startswith(want_backend.lower()):
            return ad, ad.request_device_sync()
    ad = wgpu.gpu.request_adapter_sync()
    return ad, ad.request_device_sync()


def fma_peak(device: Any, groups: int, reps: int) -> dict[str, float]:
    """Best GFLOP/s of the register-only FMA kernel over ``reps`` runs of ``groups`` workgroups."""
    import wgpu

    n = groups * 64
    out = device.create_buffer(size=n * 16, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
    uni = device.create_buffer_with_data(data=np.array([0.5, 0, 0, 0], np.float32).tobytes(),
                                         usage=wgpu.BufferUsage.UNIFORM)
    mod = device.create_shader_module(code=_FMA_WGSL)
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
    best = min(run() for _ in range(reps))
    flop = 2.0 * 4 * CHAINS * ITERS * gx * gy * 64
    return {"gflops": flop / best / 1e9, "seconds": best, "invocations": gx * gy * 64}


def copy_bandwidth(device: Any, nbytes: int, reps: int) -> dict[str, float]:
    """Best GB/s (read + written) of a buffer-to-buffer copy of ``nbytes``."""
    import wgpu

    src = device.create_buffer(size=nbytes, usage=wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST)
    dst = device.create_buffer(size=nbytes, usage=wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST)
    device.queue.write_buffer(src, 0, np.ones(nbytes // 4, np.float32).tobytes())

    def run() -> float:
        enc = device.create_command_encoder()
        enc.copy_buffer_to_buffer(src, 0, dst, 0, nbytes)
        t = time.perf_counter()
        device.queue.submit([enc.finish()])
        device.queue.read_buffer(dst, 0, 16)
        return time.perf_counter() - t

    run()
    best = min(run() for _ in range(reps))
    return {"gbs": 2 * nbytes / best / 1e9, "seconds": best, "bytes": nbytes}


def time_matmul(dev: Any, n: int, reps: int, rng: np.random.Generator) -> tuple[float, float, float]:
    """(pyaccel median s, NumPy median s, max abs error vs NumPy / sqrt(n)) for n x n float32."""
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    xa, xb = pyaccel.asarray(a, device=dev), pyaccel.asarray(b, device=dev)
    dev.synchronize()
    c = pyaccel.matmul(xa, xb)  # warm-up: compile, pool
    err = float(np.max(np.abs(np.asarray(c) - a @ b))) / np.sqrt(n)
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        c = pyaccel.matmul(xa, xb)
        dev.synchronize()
        ts.append(time.perf_counter() - t)
        del c
    tn = []
    for _ in range(max(reps, 3)):
        t = time.perf_counter()
        a @ b
        tn.append(time.perf_counter() - t)
    return statistics.median(ts), statistics.median(tn), err


def main(argv: list[str] | None = None) -> int:
    ap = arg_parser(__doc__, "fewer reps, sizes 256 and 512 only")
    ap.add_argument("--big", action="store_true", help="also n = 2048")
    ap.add_argument("--groups", type=int, default=512, help="FMA-kernel workgroups (64 invocations each)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    load0 = load_average()
    _, raw = _raw_device(args.device)
    reps = 2 if args.quick else 3
    peak = fma_peak(raw, args.groups, reps)
    copy = copy_bandwidth(raw, 64 << 20, reps)
    dev = pyaccel.device(args.device)
    rng = np.random.default_rng(0)
    sizes = [256, 512] if args.quick else [256, 512, 1024] + ([2048] if args.big else [])
    rows: list[dict[str, Any]] = []
    for n in sizes:
        r = 1 if n >= 2048 else (3 if n >= 1024 else 5)
        tp, tn, err = time_matmul(dev, n, 1 if args.quick else r, rng)
        gf = 2.0 * n ** 3 / tp / 1e9
        rows.append({"n": n, "pyaccel_s": tp, "pyaccel_gflops": gf, "pct_of_peak": 100 * gf / peak["gflops"],
                     "numpy_s": tn, "numpy_gflops": 2.0 * n ** 3 / tn / 1e9, "time_vs_numpy": tp / tn,
                     "max_err_over_sqrt_n": err, "met": True})
    from pyaccel.ops.gpu_kernels import matmul_variant
    res = result("limits", rows, quick=args.quick, device=args.device, t0=t0, dev=dev,
                 fma_peak=peak, copy=copy, load_average={"start": load0, "end": load_average()},
                 date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                 matmul_variant=matmul_variant(dev, 1024, 1024, 1024))
    print(f"FMA peak {peak['gflops']:.1f} GFLOP/s ({peak['invocations']} invocations, "
          f"{peak['seconds'] * 1e3:.1f} ms); copy {copy['gbs']:.2f} GB/s")
    print(f"{'n':>6s} {'pyaccel ms':>11s} {'GFLOP/s':>8s} {'% peak':>7s} {'NumPy ms':>9s} {'NumPy GF/s':>10s} "
          f"{'x NumPy':>8s}")
    for r in rows:
        print(f"{r['n']:6d} {r['pyaccel_s'] * 1e3:11.1f} {r['pyaccel_gflops']:8.2f} {r['pct_of_peak']:6.1f}% "
              f"{r['numpy_s'] * 1e3:9.2f} {r['numpy_gflops']:10.1f} {r['time_vs_numpy']:8.1f}")
    return report(res)


if __name__ == "__main__":
    raise SystemExit(main())
