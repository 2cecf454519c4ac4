"""Core overhead of pyaccel against raw wgpu-py on the same adapter (default ``vulkan:0``).

    python benchmarks/bench_core.py [--quick] [--device vulkan:0]

Writes ``benchmarks/results/core.json`` and prints a table. Every comparison is timed
ABAB-interleaved (see ``common.interleaved``) and reported as the ratio of medians
(pyaccel time / baseline time). Cases and targets:

(a) one small kernel (4 KiB in, 4 KiB out), synchronised per call (kernel + read back):
    pyaccel ``kernel(xb, yb); yb.read()`` vs raw wgpu-py with the pipeline, bind group and
    staging buffer created once (per call: encoder, pass, dispatch, copy, submit, map, read)
    -> <= 1.10; vs ``wgpu.utils.compute_with_buffers`` (reported).
(b) 1000 chained small kernels (each reads the previous output), then one read:
    pyaccel vs raw wgpu-py recording all 1000 dispatches into one encoder -> <= 1.00;
    vs the same chain through ``compute_with_buffers`` -> >= 10x faster.
(c) upload (write + wait) and download (read) of 4 KiB, 1 MiB, 64 MiB:
    ``Buffer.write`` / ``Buffer.read`` vs raw ``queue.write_buffer`` / copy to a cached
    staging buffer + map -> pyaccel at least as fast (time ratio <= 1.00, 5 % noise band).
(d) cold start, a fresh interpreter from ``import`` to the first result: pyaccel vs raw
    wgpu-py -> <= 1.10.

``run(quick=False) -> dict`` is the entry point ``pyaccel bench`` uses.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import common
    from common import ROOT, Row, ensure_path, interleaved, median, table
else:
    from . import common
    from .common import ROOT, Row, ensure_path, interleaved, median, table

ensure_path()

NOISE = 1.05  # ratios within 5 % of a ">= 1.0x" target count as met (timer noise on 2 cores)

SMALL = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&y)) { y[g.x] = x[g.x] * 2.0 + 1.0; }
}
"""
STEP = """
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&dst)) { dst[g.x] = src[g.x] + 1.0; }
}
"""
N_SMALL = 1024  # 4 KiB of float32
WG = 64


class Raw:
    """Raw wgpu-py: the baseline, written as a careful user would (pipeline, bind groups and
    staging buffers created once). It drives the very ``GPUDevice`` pyaccel opened (same
    adapter, features and limits), so only the Python layers differ; pass ``adapter`` to
    give it a device of its own instead."""

    def __init__(self, wgpu: Any, device: Any = None, adapter: Any = None) -> None:
        self.wgpu = wgpu
        self.dev = device if device is not None else adapter.request_device_sync()
        self.q = self.dev.queue
        self.usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
        self._staging: dict[int, Any] = {}
        self._fence_src = self.buffer(4)

    def buffer(self, nbytes: int, data: Any = None) -> Any:
        if data is not None:
            return self.dev.create_buffer_with_data(data=data, usage=self.usage)
        return self.dev.create_buffer(size=nbytes, usage=self.usage)

    def staging(self, nbytes: int) -> Any:
        st = self._staging.get(nbytes)
        if st is None:
            st = self._staging[nbytes] = self.dev.create_buffer(
                size=nbytes, usage=self.wgpu.BufferUsage.MAP_READ | self.wgpu.BufferUsage.COPY_DST)
        return st

    def pipeline(self, src: str) -> Any:
        module = self.dev.create_shader_module(code=src)
        return self.dev.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": "main"})

    def bind(self, pipe: Any, *bufs: Any) -> Any:
        return self.dev.create_bind_group(
            layout=pipe.get_bind_group_layout(0),
            entries=[{"binding": i, "resource": {"buffer": b, "offset": 0, "size": b.size}}
                     for i, b in enumerate(bufs)])

    def read_after(self, enc: Any, buf: Any, nbytes: int) -> bytes:
        """Copy ``buf`` to a cached staging buffer in ``enc``, submit, map, copy out."""
        st = self.staging(nbytes)
        enc.copy_buffer_to_buffer(buf, 0, st, 0, nbytes)
        self.q.submit([enc.finish()])
        st.map_sync(self.wgpu.MapMode.READ, 0, nbytes)
        try:
            return bytes(st.read_mapped(0, nbytes, copy=False))
        finally:
            st.unmap()

    def wait(self) -> None:
        self.read_after(self.dev.create_command_encoder(), self._fence_src, 4)


def _adapter(wgpu: Any, api: str) -> Any:
    names = {"vulkan": "Vulkan", "gl": "OpenGL", "metal": "Metal", "dx12": "D3D12"}
    for a in wgpu.gpu.enumerate_adapters_sync():
        if a.info.get("backend_type") == names.get(api, api):
            return a
    raise RuntimeError(f"no wgpu {api} adapter here")


def bench_small_sync(dev: Any, raw: Raw, rounds: int, inner: int) -> list[Row]:
    import numpy as np
    from wgpu.utils.compute import compute_with_buffers

    import pyaccel

    x = np.random.default_rng(1).uniform(1, 2, N_SMALL).astype(np.float32)
    expect = (x * 2 + 1).tobytes()
    k = pyaccel.Kernel(SMALL, name="small")
    xb, yb = dev.malloc(x.nbytes), dev.malloc(x.nbytes)
    xb.write(x)

    def ours() -> bytes:
        k(xb, yb, grid=N_SMALL)
        return yb.read()

    pipe = raw.pipeline(SMALL)
    rx, ry = raw.buffer(x.nbytes, x), raw.buffer(x.nbytes)
    group = raw.bind(pipe, rx, ry)

    def theirs() -> bytes:
        enc = raw.dev.create_command_encoder()
        p = enc.begin_compute_pass()
        p.set_pipeline(pipe)
        p.set_bind_group(0, group)
        p.dispatch_workgroups(N_SMALL // WG, 1, 1)
        p.end()
        return raw.read_after(enc, ry, x.nbytes)

    def cwb() -> bytes:
        out = compute_with_buffers({0: x}, {1: (N_SMALL, "f")}, SMALL, n=(N_SMALL // WG, 1, 1))
        return bytes(out[1])

    assert ours() == expect and theirs() == expect and cwb() == expect
    t = interleaved({"pyaccel": ours, "raw": theirs}, rounds, inner=inner)
    t2 = interleaved({"pyaccel": ours, "cwb": cwb}, max(3, rounds // 4), inner=max(1, inner // 10))
    return [
        Row("(a) small kernel + read, per call", median(t["pyaccel"]), "raw wgpu-py, cached pipeline",
            median(t["raw"]), "<= 1.10", 1.10, samples=rounds * inner),
        Row("(a) small kernel + read, per call", median(t2["pyaccel"]), "wgpu.utils.compute_with_buffers",
            median(t2["cwb"]), "(reported)", float("inf"), samples=len(t2["cwb"])),
    ]


def bench_chain(dev: Any, raw: Raw, rounds: int, steps: int, cwb_steps: int) -> list[Row]:
    import numpy as np
    from wgpu.utils.compute import compute_with_buffers

    import pyaccel

    x = np.random.default_rng(2).uniform(1, 2, N_SMALL).astype(np.float32)
    e = x.copy()
    for _ in range(steps):
        e += np.float32(1)  # the same float32 additions, one at a time
    expect = e.tobytes()
    k = pyaccel.Kernel(STEP, name="step")
    a, b = dev.malloc(x.nbytes), dev.malloc(x.nbytes)

    def ours() -> bytes:
        a.write(x)
        for i in range(steps):
            if i % 2 == 0:
                k(a, b, grid=N_SMALL)
            else:
                k(b, a, grid=N_SMALL)
        return (b if steps % 2 else a).read()

    pipe = raw.pipeline(STEP)
    ra, rb = raw.buffer(x.nbytes), raw.buffer(x.nbytes)
    g_ab, g_ba = raw.bind(pipe, ra, rb), raw.bind(pipe, rb, ra)

    def theirs() -> bytes:
        raw.q.write_buffer(ra, 0, x)
        enc = raw.dev.create_command_encoder()
        p = enc.begin_compute_pass()
        p.set_pipeline(pipe)
        for i in range(steps):
            p.set_bind_group(0, g_ab if i % 2 == 0 else g_ba)
            p.dispatch_workgroups(N_SMALL // WG, 1, 1)
        p.end()
        return raw.read_after(enc, rb if steps % 2 else ra, x.nbytes)

    def cwb_chain(n: int) -> bytes:
        cur = x
        for _ in range(n):
            out = compute_with_buffers({0: cur}, {1: (N_SMALL, "f")}, STEP, n=(N_SMALL // WG, 1, 1))
            cur = np.frombuffer(out[1], np.float32)
        return cur.tobytes()

    assert ours() == expect and theirs() == expect
    assert cwb_chain(3) == (x + np.float32(1) + np.float32(1) + np.float32(1)).tobytes()
    t = interleaved({"pyaccel": ours, "raw": theirs}, rounds)
    # compute_with_buffers is ~1000x slower: time cwb_steps steps and scale to the chain length
    tc = interleaved({"pyaccel": ours, "cwb": lambda: cwb_chain(cwb_steps)}, 3, warmup=0)
    cwb_per_chain = median(tc["cwb"]) * steps / cwb_steps
    note = "" if cwb_steps == steps else f"compute_with_buffers timed over {cwb_steps} steps, scaled to {steps}"
    return [
        Row(f"(b) {steps} chained kernels + one read", median(t["pyaccel"]),
            "raw wgpu-py, one encoder", median(t["raw"]), "<= 1.00", 1.0 * NOISE, samples=rounds),
        Row(f"(b) {steps} chained kernels + one read", median(tc["pyaccel"]),
            "compute_with_buffers chain", cwb_per_chain, ">= 10x faster", 10.0, mode="min", note=note,
            samples=3),
    ]


def bench_transfers(dev: Any, raw: Raw, sizes: list[int], budget_s: float) -> list[Row]:
    import numpy as np

    rows = []
    rng = np.random.default_rng(3)
    for n in sizes:
        data = rng.integers(0, 256, n, dtype=np.uint8)
        buf = dev.malloc(n)
        rbuf = raw.buffer(n)

        def up_ours(buf: Any = buf, data: Any = data) -> None:
            buf.write(data)
            dev.synchronize()

        def up_raw(rbuf: Any = rbuf, data: Any = data) -> None:
            raw.q.write_buffer(rbuf, 0, data)
            raw.wait()

        def down_ours(buf: Any = buf) -> bytes:
            return buf.read()

        def down_raw(rbuf: Any = rbuf, n: int = n) -> bytes:
            return raw.read_after(raw.dev.create_command_encoder(), rbuf, n)

        up_ours()
        up_raw()
        assert down_ours() == down_raw() == data.tobytes()
        t0 = time.perf_counter()
        down_ours()
        one = max(time.perf_counter() - t0, 1e-6)
        rounds = int(min(200, max(15, budget_s / one / 4)))
        inner = 1 if one > 1e-3 else 10
        label = _size(n)
        t = interleaved({"pyaccel": up_ours, "raw": up_raw}, rounds, inner=inner)
        rows.append(Row(f"(c) upload {label} (write + wait)", median(t["pyaccel"]), "raw queue.write_buffer",
                        median(t["raw"]), "<= 1.00", 1.0 * NOISE, samples=rounds * inner))
        t = interleaved({"pyaccel": down_ours, "raw": down_raw}, rounds, inner=inner)
        rows.append(Row(f"(c) download {label} (read)", median(t["pyaccel"]), "raw copy + map_sync",
                        median(t["raw"]), "<= 1.00", 1.0 * NOISE, samples=rounds * inner))
        buf.free()
        rbuf.destroy()
    return rows


def _size(n: int) -> str:
    return f"{n // 2**20} MiB" if n >= 2**20 else f"{n // 2**10} KiB"


COLD_PYACCEL = """
import numpy as np
import pyaccel
k = pyaccel.Kernel(SRC)
x = np.arange(1024, dtype=np.float32)
y = np.empty_like(x)
k(x, y, grid=1024, device=URI)
assert y[3] == 7.0
"""
COLD_RAW = """
import numpy as np
import wgpu
names = {"vulkan": "Vulkan", "gl": "OpenGL", "metal": "Metal", "dx12": "D3D12"}
adapter = next(a for a in wgpu.gpu.enumerate_adapters_sync()
               if a.info["backend_type"] == names[URI.split(":")[0]])
dev = adapter.request_device_sync()
x = np.arange(1024, dtype=np.float32)
usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
bx = dev.create_buffer_with_data(data=x, usage=usage)
by = dev.create_buffer(size=x.nbytes, usage=usage)
pipe = dev.create_compute_pipeline(layout="auto", compute={
    "module": dev.create_shader_module(code=SRC), "entry_point": "main"})
group = dev.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=[
    {"binding": 0, "resource": {"buffer": bx, "offset": 0, "size": x.nbytes}},
    {"binding": 1, "resource": {"buffer": by, "offset": 0, "size": x.nbytes}}])
enc = dev.create_command_encoder()
p = enc.begin_compute_pass()
p.set_pipeline(pipe)
p.set_bind_group(0, group)
p.dispatch_workgroups(16, 1, 1)
p.end()
dev.queue.submit([enc.finish()])
y = np.frombuffer(dev.queue.read_buffer(by), np.float32)
assert y[3] == 7.0
"""


def bench_cold(uri: str, rounds: int) -> list[Row]:
    import tempfile

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.pop("PYACCEL_DEVICE", None)
    # Both sides start with cached bytecode, as an installed package would: a source checkout
    # under PYTHONDONTWRITEBYTECODE=1 would otherwise recompile every pyaccel module on each
    # start while wgpu-py's installed .pyc files load directly. The warm-up run of each variant
    # fills a private cache (PYTHONPYCACHEPREFIX), used by both.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="pyaccel-bench-pyc-")
    head = f"SRC = {SMALL!r}\nURI = {uri!r}\n"

    cpu: dict[str, list[float]] = {"pyaccel": [], "raw": []}

    def run(name: str, code: str) -> None:
        before = _child_cpu()
        subprocess.run([sys.executable, "-c", head + textwrap.dedent(code)], env=env, check=True,
                       capture_output=True, timeout=120)
        cpu[name].append(_child_cpu() - before)

    t = interleaved({"pyaccel": lambda: run("pyaccel", COLD_PYACCEL), "raw": lambda: run("raw", COLD_RAW)},
                    rounds)
    rows = [Row("(d) cold start: new process to first result", median(t["pyaccel"]), "raw wgpu-py script",
                median(t["raw"]), "<= 1.10", 1.10, note="wall time, includes interpreter start-up",
                samples=rounds)]
    if cpu["raw"] and min(cpu["raw"]) > 0:
        rows.append(Row("(d) cold start, CPU time (user + sys)", median(cpu["pyaccel"]), "raw wgpu-py script",
                        median(cpu["raw"]), "(reported)", float("inf"),
                        note="CPU seconds of the child: insensitive to other load", samples=rounds))
    return rows


def _child_cpu() -> float:
    try:
        import resource
    except ImportError:  # not on this platform
        return 0.0
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(quick: bool = False, device: str = "vulkan:0", write: bool = True) -> dict[str, Any]:
    """Run every case; returns (and by default writes) the results as a dict."""
    import wgpu

    import pyaccel

    dev = pyaccel.device(device)
    if dev.is_cpu:
        raise ValueError("bench_core compares against raw wgpu-py: pass a GPU device URI (vulkan:0, gl:0)")
    gpu_device = getattr(getattr(dev.impl, "f", None), "device", None)  # the wgpu-py GPUDevice
    raw = Raw(wgpu, gpu_device) if gpu_device is not None else Raw(wgpu, adapter=_adapter(wgpu, dev.api))
    t0 = time.perf_counter()
    rows: list[Row] = []
    rows += bench_small_sync(dev, raw, rounds=10 if quick else 30, inner=20 if quick else 50)
    rows += bench_chain(dev, raw, rounds=5 if quick else 15, steps=1000, cwb_steps=20 if quick else 100)
    sizes = [4 * 2**10, 2**20] + ([] if quick else [64 * 2**20])
    rows += bench_transfers(dev, raw, sizes, budget_s=0.5 if quick else 2.0)
    rows += bench_cold(device, rounds=3 if quick else 9)
    res = common.result("core", rows, quick=quick, device=device, dev=dev, t0=t0, write=write)
    print(table(rows))
    return res


def main(argv: list[str] | None = None) -> int:
    args = common.arg_parser(__doc__, "fewer rounds, no 64 MiB transfers").parse_args(argv)
    return common.report(run(quick=args.quick, device=args.device), strict=True)


if __name__ == "__main__":
    raise SystemExit(main())
