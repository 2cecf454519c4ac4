"""Dispatch overhead, A/B between checkouts (issue 8): one measurement per process.

    PYTHONPATH=<checkout> python benchmarks/bench_dispatch.py WHAT [REPS]

WHAT is one of
* ``chain1000``: bench_core's case (b), 1000 chained ``Kernel`` calls on two Buffers + one read,
  against the same chain recorded with wgpu-py's public API on pyaccel's own ``GPUDevice``
  (interleaved rounds
  wall time, min and median, and the calling thread's CPU time);
* ``record``: the calling thread's CPU time (``time.thread_time``) per recorded ``y = y + x``
  (2,000-op loop on 1,024 float32
  ``NOPS`` to change), the Python-side cost of the Array path (with fusion on, the default:
  building lazy nodes, plus the fused kernels recorded when a tree is full; the last tree is
  computed by the untimed read. ``PYACCEL_FUSION=0``: one recorded dispatch per op);
* ``calls``: cProfile's exact Python call count per recorded ``y = y + x`` and the top functions;
* ``opschain``: bench_ops' chain, 100 x ``y = y + x`` + ``to_numpy()``, per op (wall and CPU).

Run each checkout on ``PYTHONPATH`` (a script run from elsewhere imports the installed pyaccel)
and alternate the checkouts back to back
take minimums over many repeats on a loaded machine.
"""

import os
import statistics
import sys
import time

import numpy as np

import pyaccel

if os.environ.get("PYTHONPATH"):
    assert os.path.dirname(pyaccel.__file__).startswith(os.environ["PYTHONPATH"].split(os.pathsep)[0]), \
        f"imported {pyaccel.__file__}, not the checkout on PYTHONPATH"
what = sys.argv[1]
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 15
URI = os.environ.get("URI", "vulkan:0")
dev = pyaccel.device(URI)
import wgpu  # noqa: E402

STEP = """
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&dst)) { dst[g.x] = src[g.x] + 1.0
    }
}
"""
N = 1024

def raw_setup():
    d = dev.impl.f.device
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    ra, rb = d.create_buffer(size=4096, usage=usage), d.create_buffer(size=4096, usage=usage)
    st = d.create_buffer(size=4096, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
    m = d.create_shader_module(code=STEP)
    pipe = d.create_compute_pipeline(layout="auto", compute={"module": m, "entry_point": "main"})
    def bind(a, b):
        return d.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=[
            {"binding": 0, "resource": {"buffer": a, "offset": 0, "size": 4096}},
            {"binding": 1, "resource": {"buffer": b, "offset": 0, "size": 4096}}])
    gab, gba = bind(ra, rb), bind(rb, ra)
    return d, ra, rb, st, pipe, gab, gba

if what == "chain1000":
    steps = 1000
    x = np.random.default_rng(2).uniform(1, 2, N).astype(np.float32)
    e = x.copy()
    for _ in range(steps):
        e += np.float32(1)
    k = pyaccel.Kernel(STEP, name="step")
    a, b = dev.malloc(x.nbytes), dev.malloc(x.nbytes)
    def ours():
        a.write(x)
        for i in range(steps):
            if i % 2 == 0:
                k(a, b, grid=N)
            else:
                k(b, a, grid=N)
        return (b if steps % 2 else a).read()
    d, ra, rb, st, pipe, gab, gba = raw_setup()
    q = d.queue
    def theirs():
        q.write_buffer(ra, 0, x)
        enc = d.create_command_encoder()
        p = enc.begin_compute_pass()
        p.set_pipeline(pipe)
        for i in range(steps):
            p.set_bind_group(0, gab if i % 2 == 0 else gba)
            p.dispatch_workgroups(N // 64, 1, 1)
        p.end()
        last = rb if steps % 2 else ra
        enc.copy_buffer_to_buffer(last, 0, st, 0, 4096)
        q.submit([enc.finish()])
        st.map_sync(wgpu.MapMode.READ, 0, 4096)
        try:
            return bytes(st.read_mapped(0, 4096, copy=False))
        finally:
            st.unmap()
    assert ours() == e.tobytes() and theirs() == e.tobytes()
    T = {"p": [], "r": []}
    C = {"p": [], "r": []}
    for r in range(reps):
        for nm, fn in ((("p", ours), ("r", theirs)) if r % 2 == 0 else (("r", theirs), ("p", ours))):
            c0 = time.thread_time()
            t0 = time.perf_counter()
            fn()
            T[nm].append(time.perf_counter() - t0)
            C[nm].append(time.thread_time() - c0)
    ratios = sorted(p / r for p, r in zip(T["p"], T["r"], strict=True))
    print(f"chain1000 wall ms: pyaccel min {min(T['p'])*1e3:.2f} med {statistics.median(T['p'])*1e3:.2f} | raw min {min(T['r'])*1e3:.2f} med {statistics.median(T['r'])*1e3:.2f} | ratio min/min {min(T['p'])/min(T['r']):.3f} med/med {statistics.median(T['p'])/statistics.median(T['r']):.3f} median pair ratio {statistics.median(ratios):.3f}")
    print(f"chain1000 cpu ms: pyaccel min {min(C['p'])*1e3:.2f} med {statistics.median(C['p'])*1e3:.2f} | raw min {min(C['r'])*1e3:.2f} med {statistics.median(C['r'])*1e3:.2f}")
elif what in ("record", "calls"):
    xh = np.random.default_rng(4).uniform(-1, 1, N).astype(np.float32)
    x = pyaccel.asarray(xh, device=dev)
    nops = int(os.environ.get("NOPS", 2000))
    def loop():
        y = x
        for _ in range(nops):
            y = y + x
        return y
    y = loop()
    y.to_numpy()
    dev.synchronize()
    if what == "calls":
        import cProfile
        import pstats
        pr = cProfile.Profile()
        y = x
        pr.enable()
        for _ in range(nops):
            y = y + x
        pr.disable()
        y.to_numpy()
        st = pstats.Stats(pr)
        print(f"calls/op {st.total_calls / nops:.2f}")
        st.sort_stats(os.environ.get("SORT","tottime")).print_stats(int(os.environ.get("NPR","25")))
    else:
        best = []
        bestw = []
        for _ in range(reps):
            c0 = time.thread_time()
            t0 = time.perf_counter()
            y = loop()
            best.append(time.thread_time() - c0)
            bestw.append(time.perf_counter() - t0)
            y.to_numpy()
            dev.synchronize()
        print(f"record us/op: cpu min {min(best)/nops*1e6:.2f} med {statistics.median(best)/nops*1e6:.2f}  wall min {min(bestw)/nops*1e6:.2f}")
elif what == "opschain":
    steps = 100
    xh = np.random.default_rng(4).uniform(-1, 1, N).astype(np.float32)
    x = pyaccel.asarray(xh, device=dev)
    expect = xh.copy()
    for _ in range(steps):
        expect = expect + xh
    def ours():
        y = x
        for _ in range(steps):
            y = y + x
        return y.to_numpy()
    np.testing.assert_array_equal(ours(), expect)
    T, C = [], []
    for _ in range(reps):
        c0 = time.thread_time()
        t0 = time.perf_counter()
        ours()
        T.append(time.perf_counter() - t0)
        C.append(time.thread_time() - c0)
    print(f"opschain us/op: wall min {min(T)/steps*1e6:.1f} med {statistics.median(T)/steps*1e6:.1f} | cpu min {min(C)/steps*1e6:.1f} med {statistics.median(C)/steps*1e6:.1f}")
