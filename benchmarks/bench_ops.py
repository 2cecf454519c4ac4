"""Array ops (``pyaccel.Array`` API) against NumPy and raw wgpu-py kernels, in one run.

    python benchmarks/bench_ops.py [--quick] [--device vulkan:0]

Writes ``benchmarks/results/ops.json`` (``ops-quick.json`` with ``--quick``) and prints a
table. Every case times its variants ABAB-interleaved (``common.interleaved``) and reports
medians; GPU variants include computing and waiting for the result (``y.block_until_ready()``
for pyaccel: an elementwise result or a matmul is lazy until needed, docs/fusion.md, and
``device.synchronize()`` alone would time nothing; a fence read for raw wgpu-py), inputs are uploaded once, outside the timed region, and every
variant's result is checked against NumPy once before timing.

Cases (float32):

* copy: ``Buffer.copy_from`` of 64 MiB, the device's copy bandwidth in this run
  (bytes read + written per second): the yardstick for the bandwidth ratios below.
* elementwise ``x + y`` and ``pyaccel.exp(x)`` at 2^20 and 2^24 elements: pyaccel vs a raw
  wgpu-py kernel (one thread per element, pipeline and bind group made once) vs NumPy
  (``x + y``, ``np.exp(x)``, each allocating its result as the Array op does). GB/s =
  bytes read + written per second; ``vs copy`` = that / the copy bandwidth; ``numpy
  time-equivalent`` = NumPy time / pyaccel time (1.0: as fast as NumPy).
* ``pyaccel.sum(X)``, ``pyaccel.sum(X, axis=1)``, ``pyaccel.nn.softmax(X, axis=-1)`` on
  4096 x 4096 through the Array API vs the same kernels called directly
  (``pyaccel.ops.gpu_kernels``, what ``bench_kernels.py`` measures) vs NumPy. Sums: GB/s of
  bytes read; softmax: read + written.
* ``A @ B`` at 256 / 512 / 1024 (GFLOP/s = 2 n^3 / t) vs a naive raw wgpu-py kernel (one
  thread per output element) vs NumPy.
* 100 chained elementwise ops then one read (``y = y + x`` on 1024 elements, then
  ``y.to_numpy()``) vs raw wgpu-py recording the same 100 dispatches into one encoder
  (ping-pong buffers, bind groups made once) then copying out and mapping: µs per op for the
  whole chain, and for the Python time to record it (before the read). With fusion on (the
  default) pyaccel's adds are lazy nodes computed by a few fused kernels (``per_chain``
  counts them), so its recording figure is building the tree, not 100 dispatches.

Targets on lavapipe (reported, not asserted): elementwise at 2^24 >= 0.5x NumPy
time-equivalent; reductions (full and row-wise sum) >= 50 % of the copy bandwidth; matmul
1024 >= 4 GFLOP/s and faster than the naive kernel; chained ops <= 15 µs per op (recording;
the whole chain including the GPU work and the read is reported next to raw wgpu-py's).

``run(quick=False) -> dict`` is the entry point (``benchmarks/run_all.py``, ``pyaccel bench``).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_core import Raw, _adapter

    import common
    from common import ensure_path, fmt_time, interleaved, median, ready
else:
    from . import common
    from .bench_core import Raw, _adapter
    from .common import ensure_path, fmt_time, interleaved, median, ready

ensure_path()

WG = 256
COPY_BYTES = 64 * 2**20
CHAIN_N = 1024
CHAIN_STEPS = 100

# one thread per element; grids past 65535 workgroups spread over y (as pyaccel's kernels)
RAW_ADD = """
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = g.x + g.y * (nwg.x * 256u);
    if (i < arrayLength(&c)) { c[i] = a[i] + b[i]; }
}
"""
RAW_EXP = """
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = g.x + g.y * (nwg.x * 256u);
    if (i < arrayLength(&c)) { c[i] = exp(a[i]); }
}
"""
RAW_MATMUL_NAIVE = """
const N: u32 = {n}u;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
    let row = g.y;
    let col = g.x;
    if (row >= N || col >= N) {{ return; }}
    var acc = 0.0;
    for (var k = 0u; k < N; k = k + 1u) {{
        acc = acc + a[row * N + k] * b[k * N + col];
    }}
    c[row * N + col] = acc;
}}
"""


def _grid(n: int, limit: int = 65535) -> tuple[int, int, int]:
    groups = -(-n // WG)
    y = -(-groups // limit)
    return (-(-groups // y), y, 1)


def _raw_dispatch(raw: Raw, pipe: Any, group: Any, grid: tuple[int, int, int]) -> None:
    enc = raw.dev.create_command_encoder()
    p = enc.begin_compute_pass()
    p.set_pipeline(pipe)
    p.set_bind_group(0, group)
    p.dispatch_workgroups(*grid)
    p.end()
    raw.q.submit([enc.finish()])
    raw.wait()


def _raw_read(raw: Raw, buf: Any, nbytes: int) -> bytes:
    return raw.read_after(raw.dev.create_command_encoder(), buf, nbytes)


class Results:
    """Rows of measurements (one per case and implementation) and target verdicts."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.targets: list[dict[str, Any]] = []

    def add(self, case: str, impl: str, times: list[float], **metrics: Any) -> dict[str, Any]:
        row = {"case": case, "impl": impl, "median_s": median(times), "best_s": min(times),
               "samples": len(times), **metrics}
        self.rows.append(row)
        return row

    def target(self, name: str, value: float, limit: float, met: bool, unit: str = "",
               note: str = "") -> None:
        self.targets.append({"target": name, "value": round(value, 4), "limit": limit, "unit": unit,
                             "met": bool(met), "note": note})


def _rounds(quick: bool, full: int, fast: int = 3) -> int:
    return fast if quick else full


# ---------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------
def bench_copy(dev: Any, res: Results, quick: bool) -> float:
    import numpy as np

    n = COPY_BYTES
    src = dev.malloc(n)
    src.write(np.random.default_rng(0).integers(0, 256, n, dtype=np.uint8))
    dst = dev.malloc(n)

    def copy() -> None:
        dst.copy_from(src)
        dev.synchronize()

    copy()
    assert dst.read(64, n - 64) == src.read(64, n - 64)
    t = interleaved({"pyaccel": copy}, _rounds(quick, 9, 5))
    gbs = 2 * n / median(t["pyaccel"]) / 1e9
    res.add("copy 64 MiB (Buffer.copy_from)", "pyaccel", t["pyaccel"], gbs=round(gbs, 3))
    src.free()
    dst.free()
    return gbs


def bench_elementwise(dev: Any, raw: Raw, res: Results, copy_gbs: float, quick: bool) -> None:
    import numpy as np

    rng = np.random.default_rng(1)
    pipes = {"add": raw.pipeline(RAW_ADD), "exp": raw.pipeline(RAW_EXP)}
    for log2n in (20, 24):
        n = 2**log2n
        xh = rng.uniform(-4, 4, n).astype(np.float32)
        yh = rng.uniform(-4, 4, n).astype(np.float32)
        rounds = _rounds(quick, 15 if log2n == 20 else 9, 3 if log2n == 24 else 5)
        for op in ("add", "exp"):
            _elementwise_case(dev, raw, res, copy_gbs, op, pipes[op], xh, yh, log2n, rounds,
                              5 if log2n == 20 else 1)


def _elementwise_case(dev: Any, raw: Raw, res: Results, copy_gbs: float, op: str, pipe: Any,
                      xh: Any, yh: Any, log2n: int, rounds: int, inner: int) -> None:
    import numpy as np

    import pyaccel

    n = xh.size
    x, y = pyaccel.asarray(xh, device=dev), pyaccel.asarray(yh, device=dev)
    ra, rc = raw.buffer(xh.nbytes, xh), raw.buffer(xh.nbytes)
    grid = _grid(n, dev.limits.max_workgroups_per_dimension)
    if op == "add":
        rb = raw.buffer(yh.nbytes, yh)
        group = raw.bind(pipe, ra, rb, rc)
        moved, tol = 3 * 4 * n, 0.0

        def ours() -> Any:
            return (x + y).block_until_ready()  # (lazy until then: fusion)

        def numpy() -> Any:
            return xh + yh
    else:
        rb = None
        group = raw.bind(pipe, ra, rc)
        moved, tol = 2 * 4 * n, 2e-5

        def ours() -> Any:
            return pyaccel.exp(x).block_until_ready()

        def numpy() -> Any:
            return np.exp(xh)

    def theirs() -> None:
        _raw_dispatch(raw, pipe, group, grid)

    expect = numpy()
    np.testing.assert_allclose(ours().to_numpy(), expect, rtol=tol)
    theirs()
    np.testing.assert_allclose(np.frombuffer(_raw_read(raw, rc, xh.nbytes), np.float32), expect, rtol=tol)
    t = interleaved({"pyaccel": ours, "raw": theirs, "numpy": numpy}, rounds, inner=inner)
    tn = median(t["numpy"])
    for impl in ("pyaccel", "raw", "numpy"):
        gbs = moved / median(t[impl]) / 1e9
        res.add(f"{op} 2^{log2n} f32", {"raw": "raw wgpu-py"}.get(impl, impl), t[impl], gbs=round(gbs, 3),
                vs_copy=round(gbs / copy_gbs, 4) if impl != "numpy" else None,
                numpy_time_equiv=round(tn / median(t[impl]), 4))
    if log2n == 24:
        ratio = tn / median(t["pyaccel"])
        res.target(f"elementwise {op} 2^24 >= 0.5x NumPy time-equivalent", ratio, 0.5, ratio >= 0.5, "x")
    for b in (ra, rb, rc):
        if b is not None:
            b.destroy()


def bench_reductions(dev: Any, res: Results, copy_gbs: float, quick: bool) -> None:
    import numpy as np

    import pyaccel
    from pyaccel import dtypes
    from pyaccel.ops import gpu_kernels as gk

    side = 4096
    f32 = dtypes.float32
    xh = np.random.default_rng(2).standard_normal((side, side)).astype(np.float32)
    X = pyaccel.asarray(xh, device=dev)
    nbytes = xh.nbytes
    rounds = _rounds(quick, 9, 3)

    def gpu(fn: Callable[[], Any]) -> Callable[[], Any]:
        def call() -> Any:
            return ready(fn(), dev)  # (an Array result may be lazy: computed, then waited for)
        return call

    def np_softmax() -> Any:
        e = np.exp(xh - xh.max(axis=1, keepdims=True))
        e /= e.sum(axis=1, keepdims=True)
        return e

    absx = np.abs(xh)
    # (float32 sums: error bound ~ eps * sum |x| per output)
    cases = [
        ("sum 4096x4096 f32 (all)", nbytes, gpu(lambda: pyaccel.sum(X)),
         gpu(lambda: gk.reduce_axis(dev, X._buf, f32, 1, side * side, 1, "sum")), lambda: xh.sum(),
         lambda: xh.sum(dtype=np.float64), 1e-6 * float(absx.sum()), True),
        ("sum 4096x4096 f32 (axis=1)", nbytes, gpu(lambda: pyaccel.sum(X, axis=1)),
         gpu(lambda: gk.reduce_axis(dev, X._buf, f32, side, side, 1, "sum")), lambda: xh.sum(axis=1),
         lambda: xh.sum(axis=1, dtype=np.float64), 1e-6 * float(absx.sum(axis=1).max()), True),
        ("softmax 4096x4096 f32 (axis=-1)", 2 * nbytes, gpu(lambda: pyaccel.nn.softmax(X, axis=-1)),
         gpu(lambda: gk.softmax_rows(dev, X._buf, f32, side, side)), np_softmax, np_softmax, 1e-9, False),
    ]
    _reduction_cases(res, copy_gbs, cases, rounds)


def _reduction_cases(res: Results, copy_gbs: float, cases: list[tuple], rounds: int) -> None:
    import numpy as np

    for case, moved, ours, kernel, numpy, exact, atol, is_reduction in cases:
        ref = np.asarray(exact(), dtype=np.float64)
        got = ours().to_numpy()
        rtol = 1e-5 if is_reduction else 1e-4
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)
        kb = kernel()
        kv = np.frombuffer(kb.read(), np.float32).reshape(ref.shape)
        np.testing.assert_allclose(kv, ref, rtol=rtol, atol=atol)
        kb.free()
        t = interleaved({"pyaccel": ours, "kernel": lambda k=kernel: k().free(), "numpy": numpy}, rounds)
        tn = median(t["numpy"])
        for impl, label in (("pyaccel", "pyaccel Array API"), ("kernel", "gpu_kernels call"),
                            ("numpy", "numpy")):
            gbs = moved / median(t[impl]) / 1e9
            res.add(case, label, t[impl], gbs=round(gbs, 3),
                    vs_copy=round(gbs / copy_gbs, 4) if impl != "numpy" else None,
                    numpy_time_equiv=round(tn / median(t[impl]), 4))
        if is_reduction:
            frac = moved / median(t["pyaccel"]) / 1e9 / copy_gbs
            res.target(f"{case}: >= 50% of copy bandwidth", 100 * frac, 50, frac >= 0.5, "%")


def bench_matmul(dev: Any, raw: Raw, res: Results, quick: bool) -> None:
    import numpy as np

    import pyaccel

    rng = np.random.default_rng(3)
    for s in (256, 512, 1024):
        ah = rng.standard_normal((s, s)).astype(np.float32)
        bh = rng.standard_normal((s, s)).astype(np.float32)
        A, B = pyaccel.asarray(ah, device=dev), pyaccel.asarray(bh, device=dev)
        pipe = raw.pipeline(RAW_MATMUL_NAIVE.format(n=s))
        ra, rb, rc = raw.buffer(ah.nbytes, ah), raw.buffer(bh.nbytes, bh), raw.buffer(ah.nbytes)
        group = raw.bind(pipe, ra, rb, rc)
        grid = (-(-s // 16), -(-s // 16), 1)

        def ours(A: Any = A, B: Any = B) -> Any:
            return (A @ B).block_until_ready()  # (a deferred matmul until then)

        def naive(pipe: Any = pipe, group: Any = group, grid: Any = grid) -> None:
            _raw_dispatch(raw, pipe, group, grid)

        expect = ah.astype(np.float64) @ bh.astype(np.float64)
        np.testing.assert_allclose(ours().to_numpy(), expect, rtol=1e-3, atol=1e-3 * np.sqrt(s))
        naive()
        got = np.frombuffer(_raw_read(raw, rc, ah.nbytes), np.float32).reshape(s, s)
        np.testing.assert_allclose(got, expect, rtol=1e-3, atol=1e-3 * np.sqrt(s))
        rounds = _rounds(quick, 7 if s < 1024 else 5, 3 if s < 1024 else 2)
        inner = 5 if s == 256 else 1
        t = interleaved({"pyaccel": ours, "raw naive": naive, "numpy": lambda ah=ah, bh=bh: ah @ bh},
                        rounds, inner=inner)
        flop = 2.0 * s**3
        tn = median(t["numpy"])
        gf = {}
        for impl, label in (("pyaccel", "pyaccel A @ B"), ("raw naive", "raw wgpu-py naive"),
                            ("numpy", "numpy")):
            gf[impl] = flop / median(t[impl]) / 1e9
            res.add(f"matmul {s} f32", label, t[impl], gflops=round(gf[impl], 3),
                    numpy_time_equiv=round(tn / median(t[impl]), 4))
        if s == 1024:
            res.target("matmul 1024 >= 4 GFLOP/s", gf["pyaccel"], 4.0, gf["pyaccel"] >= 4.0, "GFLOP/s")
            sp = gf["pyaccel"] / gf["raw naive"]
            res.target("matmul 1024 faster than the naive kernel", sp, 1.0, sp > 1.0, "x naive")
        for b in (ra, rb, rc):
            b.destroy()


def bench_chain(dev: Any, raw: Raw, res: Results, quick: bool) -> None:
    import numpy as np

    import pyaccel

    n, steps = CHAIN_N, CHAIN_STEPS
    xh = np.random.default_rng(4).uniform(-1, 1, n).astype(np.float32)
    expect = xh.copy()
    for _ in range(steps):
        expect = expect + xh  # the same float32 additions, in order
    x = pyaccel.asarray(xh, device=dev)
    rec: dict[str, list[float]] = {"pyaccel": [], "raw": []}

    def ours() -> Any:
        t0 = time.perf_counter()
        y = x
        for _ in range(steps):
            y = y + x
        rec["pyaccel"].append(time.perf_counter() - t0)
        return y.to_numpy()

    src = RAW_ADD  # c = a + b: a = the running value, b = x
    pipe = raw.pipeline(src)
    rx = raw.buffer(xh.nbytes, xh)
    r0, r1 = raw.buffer(xh.nbytes), raw.buffer(xh.nbytes)
    # step 0 reads x (y = x); then ping-pong r0 <-> r1
    g_first = raw.bind(pipe, rx, rx, r0)
    g_01, g_10 = raw.bind(pipe, r0, rx, r1), raw.bind(pipe, r1, rx, r0)
    grid = (-(-n // WG), 1, 1)

    def theirs() -> Any:
        t0 = time.perf_counter()
        enc = raw.dev.create_command_encoder()
        p = enc.begin_compute_pass()
        p.set_pipeline(pipe)
        for i in range(steps):
            p.set_bind_group(0, g_first if i == 0 else (g_01 if i % 2 else g_10))
            p.dispatch_workgroups(*grid)
        p.end()
        last = r0 if steps % 2 else r1
        rec["raw"].append(time.perf_counter() - t0)
        return np.frombuffer(raw.read_after(enc, last, xh.nbytes), np.float32)

    np.testing.assert_array_equal(ours(), expect)
    np.testing.assert_array_equal(theirs(), expect)
    s0 = dev.memory_stats()
    ours()
    s1 = dev.memory_stats()
    counts = {k: s1[k] - s0[k] for k in ("bind_groups_created", "buffers_created", "dispatches")}
    for v in rec.values():
        v.clear()
    t = interleaved({"pyaccel": ours, "raw": theirs}, _rounds(quick, 41, 15), warmup=0)
    case = f"{steps} chained ops ({n} elements) + one read"
    for impl, label in (("pyaccel", "pyaccel y = y + x"), ("raw", "raw wgpu-py, one encoder")):
        res.add(case, label, t[impl], us_per_op=round(median(t[impl]) / steps * 1e6, 2),
                record_us_per_op=round(median(rec[impl]) / steps * 1e6, 2),
                **({"per_chain": counts} if impl == "pyaccel" else {}))
    us_rec = median(rec["pyaccel"]) / steps * 1e6
    us_all = median(t["pyaccel"]) / steps * 1e6
    us_raw = median(t["raw"]) / steps * 1e6
    res.target("chained ops: recording <= 15 us per op", us_rec, 15.0, us_rec <= 15.0, "us/op")
    res.target("chained ops: whole chain incl. GPU work and read <= 15 us per op", us_all, 15.0,
               us_all <= 15.0, "us/op", note=f"raw wgpu-py: {us_raw:.1f} us/op (the device's time per "
               "dispatch bounds both)")
    for b in (rx, r0, r1):
        b.destroy()


# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------
def table(res: Results) -> str:
    head = (f"{'case':36s} {'impl':26s} {'median':>11s} {'GB/s':>7s} {'GFLOP/s':>8s} {'vs copy':>8s} "
            f"{'np-equiv':>8s} {'us/op':>7s} {'rec us/op':>9s}")
    lines = [head, "-" * len(head)]
    def f(r: dict[str, Any], k: str, fmt: str) -> str:
        v = r.get(k)
        return format(v, fmt) if isinstance(v, (int, float)) else ""

    for r in res.rows:
        vs = f"{100 * r['vs_copy']:.0f}%" if isinstance(r.get("vs_copy"), float) else ""
        lines.append(f"{r['case']:36s} {r['impl']:26s} {fmt_time(r['median_s'])} {f(r, 'gbs', '.2f'):>7s} "
                     f"{f(r, 'gflops', '.2f'):>8s} {vs:>8s} {f(r, 'numpy_time_equiv', '.2f'):>8s} "
                     f"{f(r, 'us_per_op', '.1f'):>7s} {f(r, 'record_us_per_op', '.1f'):>9s}")
    lines.append("")
    for tg in res.targets:
        note = f" [{tg['note']}]" if tg.get("note") else ""
        lines.append(f"target {tg['target']}: {tg['value']:.3g} {tg['unit']} -> "
                     f"{'met' if tg['met'] else 'NOT met'}{note}")
    return "\n".join(lines)


def run(quick: bool = False, device: str = "vulkan:0", write: bool = True) -> dict[str, Any]:
    """Run every case; returns (and by default writes) the results as a dict."""
    import wgpu

    import pyaccel

    dev = pyaccel.device(device)
    if dev.is_cpu:
        raise ValueError("bench_ops compares against raw wgpu-py: pass a GPU device URI (vulkan:0, gl:0)")
    gpu_device = getattr(getattr(dev.impl, "f", None), "device", None)  # the wgpu-py GPUDevice
    raw = Raw(wgpu, gpu_device) if gpu_device is not None else Raw(wgpu, adapter=_adapter(wgpu, dev.api))
    t0 = time.perf_counter()
    res = Results()
    load0 = common.load_average()
    copy_gbs = bench_copy(dev, res, quick)
    bench_elementwise(dev, raw, res, copy_gbs, quick)
    bench_reductions(dev, res, copy_gbs, quick)
    bench_matmul(dev, raw, res, quick)
    bench_chain(dev, raw, res, quick)
    load = {"start": load0, "end": common.load_average()}
    out = common.result("ops", res.rows, quick=quick, device=device, dev=dev, t0=t0, write=write,
                        targets=res.targets, load_average=load, copy_gbs=round(copy_gbs, 3))
    print(table(res))
    return out


def main(argv: list[str] | None = None) -> int:
    args = common.arg_parser(__doc__, "fewer rounds (about a minute or less)").parse_args(argv)
    return common.report(run(quick=args.quick, device=args.device))


if __name__ == "__main__":
    raise SystemExit(main())
