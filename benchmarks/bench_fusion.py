"""Lazy elementwise fusion: fused pyaccel vs ``fusion(False)`` vs a hand-written wgpu-py kernel.

    python benchmarks/bench_fusion.py [--device vulkan:0] [--quick] [--rounds 7]

One process, side by side, ABAB-interleaved (benchmarks/common.py): for ``exp(2x+1) - x``
and a 10-op add/multiply chain at 2^24 float32 (``--quick``: 2^20), the time of one
evaluation (recording + the device's work + ``device.synchronize()``), for

* ``fused``: pyaccel with fusion on (one generated kernel),
* ``eager``: the same code under ``pyaccel.fusion(False)`` (what ``PYACCEL_FUSION=0`` runs),
* ``raw``: one hand-written WGSL kernel of the same expression, compiled and dispatched
  through wgpu-py on the same ``wgpu.GPUDevice`` (``pyaccel.extras.wgpu.wgpu_device``),
  buffers bound once, 4 elements per invocation (as pyaccel's vec4 path does). WGSL's
  built-in ``exp``; ``raw_f_exp``: the same kernel calling pyaccel's own ``f_exp``
  (ew_float.wgsl: NumPy's results for NaN/inf, 1-2 ulp), to separate fusion from the exp.

``sum(x * y)`` at the same size: fused (the reduction's first pass computes ``x * y``), eager,
and ``raw``: a hand-fused wgpu-py reduction (one kernel reading x and y with vec4 loads, a
contiguous run per thread into four accumulators, as pyaccel's ``seg`` layout, then a
one-thread kernel adding the 4096 partials);

plus dispatches per chain (``device.memory_stats()["dispatches"]``), and the MLP demo
forward (examples/mlp.py, batch 256, width 512) and examples/heat_diffusion.py (256 x 256,
20 steps) with fusion on vs off; ``relu(a @ w + b)`` at 512^3 (256^3 with ``--quick``) fused
(one matmul kernel with the bias and ReLU as its epilogue), eager, and the bare ``a @ w``
(its kernel alone: the epilogue's cost is fused / bare - 1).

``pyaccel.jit`` (docs/jit.md): a traced 100-op function (elementwise ops and a reduction every
25 ops, on 64 x 64 float32, so the device's work is small and the Python cost shows), per-call
time of recording one call and submitting it (``device.synchronize()`` between calls, outside
the timed region), with fusion on and off, for

* ``jit``: the replay of the trace (``pyaccel.jit``),
* ``eager``: the same function called directly (the op layer plans and records every op),
* ``raw``: wgpu-py's public API recording the trace's own dispatches (the same pipelines,
  bind groups over the same buffers, made once): encoder, one compute pass, per dispatch
  ``set_pipeline`` + ``set_bind_group`` + ``dispatch_workgroups``, ``finish``, ``submit``;

and each again recording only (``*_rec``: pyaccel's submit happens in the synchronize
between calls, outside the timed region; raw's command buffer is finished, not submitted).

Writes ``benchmarks/results/fusion.json`` (``--only-jit``: ``fusion_jit.json``).
"""

from __future__ import annotations

import itertools
import os
import re
import sys
import time
from typing import Any

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import RESULTS_DIR, arg_parser, ensure_path, interleaved, load_average, median
else:
    from .common import RESULTS_DIR, arg_parser, ensure_path, interleaved, load_average, median

ensure_path()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import pyaccel  # noqa: E402
from pyaccel.extras import wgpu as xw  # noqa: E402
from pyaccel.ops import fusion as F  # noqa: E402
from pyaccel.ops import launch  # noqa: E402

RESULTS = RESULTS_DIR / "fusion.json"


def expr1(xp: Any, x: Any) -> Any:
    return xp.exp(x * 2 + 1) - x


def chain10(xp: Any, x: Any) -> Any:
    return ((((x * 1.5 + 0.5) * x - 0.25) * 0.75 + x) * x - 1.0) * 0.5 + x


WGSL = {
    "expr1": "exp(x * 2.0 + 1.0) - x",
    "chain10": "((((x * 1.5 + 0.5) * x - 0.25) * 0.75 + x) * x - 1.0) * 0.5 + x",
}

RAW_SRC = """
@group(0) @binding(0) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> xs: array<vec4<f32>>;
fn f(x: f32) -> f32 {{ return {expr}; }}
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
    let q = gid.x + gid.y * (nwg.x * 256u);
    if (q >= arrayLength(&xs)) {{ return; }}
    let v = xs[q];
    out[q] = vec4<f32>(f(v.x), f(v.y), f(v.z), f(v.w));
}}
"""


class Raw:
    """One hand-written kernel on pyaccel's own wgpu device: dispatch, submit, wait."""

    def __init__(self, dev: Any, x: Any, expr: str, lib: str = "") -> None:
        import wgpu

        self.dev = dev
        self.wd = xw.wgpu_device(dev)
        n = x.size
        self.xb = xw.as_wgpu_buffer(x)
        self.ob = self.wd.create_buffer(size=n * 4, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
        mod = self.wd.create_shader_module(code=lib + RAW_SRC.format(expr=expr))
        self.pipe = self.wd.create_compute_pipeline(layout="auto", compute={"module": mod, "entry_point": "main"})
        self.group = self.wd.create_bind_group(layout=self.pipe.get_bind_group_layout(0), entries=[
            {"binding": 0, "resource": {"buffer": self.ob, "offset": 0, "size": n * 4}},
            {"binding": 1, "resource": {"buffer": self.xb, "offset": 0, "size": n * 4}}])
        groups = -(-n // 4 // 256)
        lim = dev.limits.max_workgroups_per_dimension
        self.wg = (groups, 1, 1) if groups <= lim else (lim, -(-groups // lim), 1)

    def __call__(self) -> None:
        enc = self.wd.create_command_encoder()
        p = enc.begin_compute_pass()
        p.set_pipeline(self.pipe)
        p.set_bind_group(0, self.group)
        p.dispatch_workgroups(*self.wg)
        p.end()
        self.wd.queue.submit([enc.finish()])
        self.dev.synchronize()

    def result(self) -> np.ndarray:
        self()
        return np.frombuffer(self.wd.queue.read_buffer(self.ob), dtype=np.float32)


RAW_DOT_SRC = """
const TH: u32 = {threads}u;
@group(0) @binding(0) var<storage, read_write> part: array<f32>;
@group(0) @binding(1) var<storage, read> xs: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> ys: array<vec4<f32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let t = gid.x;
    let n4 = arrayLength(&xs);
    let per = (n4 + TH - 1u) / TH;  // a contiguous run of vec4s per thread (streams on a CPU)
    let hi = min(t * per + per, n4);
    var a = vec4<f32>(0.0);
    var b = vec4<f32>(0.0);
    var c = vec4<f32>(0.0);
    var d = vec4<f32>(0.0);
    var q = t * per;
    for (; q + 3u < hi; q += 4u) {{  // four independent accumulators (as reduce.wgsl's seg)
        a += xs[q] * ys[q];
        b += xs[q + 1u] * ys[q + 1u];
        c += xs[q + 2u] * ys[q + 2u];
        d += xs[q + 3u] * ys[q + 3u];
    }}
    for (; q < hi; q += 1u) {{ a += xs[q] * ys[q]; }}
    let s = (a + b) + (c + d);
    part[t] = (s.x + s.y) + (s.z + s.w);
}}
"""
RAW_DOT_FINISH = """
const TH: u32 = {threads}u;
@group(0) @binding(0) var<storage, read_write> total: array<f32>;
@group(0) @binding(1) var<storage, read> parts: array<f32>;
@compute @workgroup_size(1)
fn finish() {{
    var s = 0.0;
    for (var i = 0u; i < TH; i += 1u) {{ s += parts[i]; }}
    total[0] = s;
}}
"""


class RawDot:
    """sum(x * y) hand-fused: one kernel reads x and y (vec4, a contiguous run and a partial
    per thread), a one-thread kernel adds the partials; both in one pass, then submit and wait."""

    THREADS = 4096

    def __init__(self, dev: Any, x: Any, y: Any) -> None:
        import wgpu

        self.dev = dev
        self.wd = wd = xw.wgpu_device(dev)
        n = x.size
        assert n % 4 == 0 and n // 4 >= 2 * self.THREADS
        usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
        self.part = wd.create_buffer(size=self.THREADS * 4, usage=usage)
        self.out = wd.create_buffer(size=16, usage=usage)
        mod1 = wd.create_shader_module(code=RAW_DOT_SRC.format(threads=self.THREADS))
        mod2 = wd.create_shader_module(code=RAW_DOT_FINISH.format(threads=self.THREADS))
        self.p1 = wd.create_compute_pipeline(layout="auto", compute={"module": mod1, "entry_point": "main"})
        self.p2 = wd.create_compute_pipeline(layout="auto", compute={"module": mod2, "entry_point": "finish"})

        def res(b: Any, size: int) -> dict:
            return {"buffer": b, "offset": 0, "size": size}
        self.g1 = wd.create_bind_group(layout=self.p1.get_bind_group_layout(0), entries=[
            {"binding": 0, "resource": res(self.part, self.THREADS * 4)},
            {"binding": 1, "resource": res(xw.as_wgpu_buffer(x), n * 4)},
            {"binding": 2, "resource": res(xw.as_wgpu_buffer(y), n * 4)}])
        self.g2 = wd.create_bind_group(layout=self.p2.get_bind_group_layout(0), entries=[
            {"binding": 0, "resource": res(self.out, 16)},
            {"binding": 1, "resource": res(self.part, self.THREADS * 4)}])

    def __call__(self) -> None:
        enc = self.wd.create_command_encoder()
        p = enc.begin_compute_pass()
        p.set_pipeline(self.p1)
        p.set_bind_group(0, self.g1)
        p.dispatch_workgroups(self.THREADS // 256, 1, 1)
        p.set_pipeline(self.p2)
        p.set_bind_group(0, self.g2)
        p.dispatch_workgroups(1, 1, 1)
        p.end()
        self.wd.queue.submit([enc.finish()])
        self.dev.synchronize()

    def result(self) -> np.ndarray:
        self()
        return np.frombuffer(self.wd.queue.read_buffer(self.out), dtype=np.float32)[:1]


def _dot(dev: Any, x: Any, y: Any, on: bool) -> Any:
    def run() -> Any:
        with pyaccel.fusion(on):
            s = pyaccel.sum(x * y)
        dev.synchronize()
        return s
    return run


def _eval(dev: Any, fn: Any, x: Any, on: bool) -> Any:
    def run() -> Any:
        with pyaccel.fusion(on):
            y = fn(pyaccel, x)
            F.materialize(y)
        dev.synchronize()
        return y
    return run


def _dispatches(dev: Any, fn: Any, on: bool) -> int:
    d0 = dev.memory_stats()["dispatches"]
    fn()
    return dev.memory_stats()["dispatches"] - d0


def hundred(x: Any, y: Any) -> Any:
    """The 100-op function of the jit benchmark (and tests/backends/test_jit.py)."""
    v = x
    for i in range(100):
        if i % 25 == 24:
            v = v - pyaccel.mean(v, axis=0)
        elif i % 3 == 0:
            v = pyaccel.tanh(v * 1.01 + y)
        elif i % 3 == 1:
            v = v * 0.9 - 0.05
        else:
            v = pyaccel.maximum(v, y * 0.5)
    return v


class RawReplay:
    """wgpu-py's public API recording the dispatches of one jit trace (made once)."""

    def __init__(self, dev: Any, trace: Any, args: list[Any]) -> None:
        from pyaccel.jit import _ALLOC, _DISPATCH

        self.wd = xw.wgpu_device(dev)
        impl = dev.impl
        bufs = list(trace.template)
        for r, a in zip(trace.arg_refs, args, strict=True):
            bufs[r] = a._b.handle
        self._keep = []
        for ev in trace.events:
            if ev[0] == _ALLOC:
                bufs[ev[1]] = impl.alloc(ev[2])
                self._keep.append((bufs[ev[1]], ev[2]))
        self.calls = []
        for ev in trace.events:
            if ev[0] != _DISPATCH:
                continue
            _, pipe, _prefix, binds, refs, wg = ev
            group = self.wd.create_bind_group(
                layout=pipe.get_bind_group_layout(0),
                entries=[{"binding": b, "resource": {"buffer": bufs[r].buf, "offset": o, "size": sz}}
                         for (b, o, sz), r in zip(binds, refs, strict=True)])
            self.calls.append((pipe, group, wg))

    def record(self) -> Any:
        enc = self.wd.create_command_encoder()
        p = enc.begin_compute_pass()
        for pipe, group, wg in self.calls:
            p.set_pipeline(pipe)
            p.set_bind_group(0, group)
            p.dispatch_workgroups(*wg)
        p.end()
        return enc.finish()

    def __call__(self) -> None:
        self.wd.queue.submit([self.record()])


def bench_jit(dev: Any, rounds: int, rng: Any) -> list[dict[str, Any]]:
    """Per-call time of a traced 100-op function: jit replay vs eager vs raw wgpu-py."""
    rows = []
    a, b = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2))
    x, y = pyaccel.asarray(a, device=dev), pyaccel.asarray(b, device=dev)
    for on in (True, False):
        jf = pyaccel.jit(hundred)
        with pyaccel.fusion(on):
            np.testing.assert_array_equal(jf(x, y).to_numpy(), hundred(x, y).to_numpy())
            np.testing.assert_array_equal(jf(x, y).to_numpy(), hundred(x, y).to_numpy())  # (a replay)
        (trace,) = jf.traces()
        raw = RawReplay(dev, trace, [x, y])

        def v_jit(on: bool = on, jf: Any = jf) -> None:
            with pyaccel.fusion(on):
                jf(x, y)
            dev.impl.flush()

        def v_eager(on: bool = on) -> None:
            with pyaccel.fusion(on):
                F.materialize(hundred(x, y))
            dev.impl.flush()

        def r_jit(on: bool = on, jf: Any = jf) -> None:
            with pyaccel.fusion(on):
                jf(x, y)

        def r_eager(on: bool = on) -> None:
            with pyaccel.fusion(on):
                F.materialize(hundred(x, y))

        # *_rec: recording only (pyaccel's submit happens in the synchronize between calls,
        # outside the timed region; raw's command buffer is finished and dropped)
        variants = {"jit": v_jit, "eager": v_eager, "raw": raw,
                    "jit_rec": r_jit, "eager_rec": r_eager, "raw_rec": raw.record}
        d0 = dev.memory_stats()["dispatches"]
        v_jit()
        disp_jit = dev.memory_stats()["dispatches"] - d0
        assert disp_jit == trace.ndispatches == len(raw.calls), (disp_jit, trace.ndispatches)
        times: dict[str, list[float]] = {k: [] for k in variants}
        inner = 5
        for r in range(rounds * 4 + 1):
            order = list(variants) if r % 2 == 0 else list(variants)[::-1]
            for k in order:
                dev.synchronize()
                t0 = time.perf_counter()
                for _ in range(inner):
                    variants[k]()
                if r:  # (round 0: warm-up)
                    times[k].append((time.perf_counter() - t0) / inner)
        dev.synchronize()
        med = {k: median(v) for k, v in times.items()}
        row = {"case": f"jit100_{'fused' if on else 'eager'}", "dispatches": trace.ndispatches,
               **{f"{k}_s": med[k] for k in med}, "jit_over_raw": med["jit"] / med["raw"],
               "eager_over_jit": med["eager"] / med["jit"],
               "jit_rec_over_raw_rec": med["jit_rec"] / med["raw_rec"],
               "eager_rec_over_jit_rec": med["eager_rec"] / med["jit_rec"]}
        rows.append(row)
        for sfx, what in (("", "record + submit"), ("_rec", "record only  ")):
            j, e, w = med["jit" + sfx], med["eager" + sfx], med["raw" + sfx]
            print(f"jit 100 ops, fusion {'on ' if on else 'off'}, {what}: {trace.ndispatches:3d} dispatches | "
                  f"per call jit {j * 1e6:7.0f} us  eager {e * 1e6:7.0f} us  raw wgpu-py {w * 1e6:7.0f} us | "
                  f"jit/raw {j / w:.2f}x  eager/jit {e / j:.2f}x")
    return rows


def main(argv: list[str] | None = None) -> int:
    p = arg_parser(__doc__, "2^20 elements, fewer rounds")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--only-jit", action="store_true", help="run only the pyaccel.jit rows")
    args = p.parse_args(argv)
    dev = pyaccel.device(args.device)
    n = 1 << (20 if args.quick else 24)
    rounds = 3 if args.quick else args.rounds
    rng = np.random.default_rng(0)
    xh = rng.uniform(-1, 1, n).astype(np.float32)
    x = pyaccel.asarray(xh, device=dev)
    rows: list[dict[str, Any]] = []
    print(f"device {dev.uri} ({dev}), n = 2^{n.bit_length() - 1}, load average {load_average()}")
    rows += bench_jit(dev, rounds, rng)
    for name, fn in (() if args.only_jit else (("expr1", expr1), ("chain10", chain10))):
        raw = Raw(dev, x, WGSL[name])
        variants = {"fused": _eval(dev, fn, x, True), "eager": _eval(dev, fn, x, False), "raw": raw}
        if "exp(" in WGSL[name]:  # the same kernel with pyaccel's f_exp (ew_float.wgsl) for exp
            lib = re.sub(r"\bT\b", "f32", launch.wgsl_source("ew_float")) + "\n"
            variants["raw_f_exp"] = Raw(dev, x, WGSL[name].replace("exp(", "f_exp("), lib)
        want = fn(np, xh)
        for label, v in variants.items():
            got = v.result() if isinstance(v, Raw) else v().to_numpy()
            np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, err_msg=label)
        disp = {"fused": _dispatches(dev, variants["fused"], True),
                "eager": _dispatches(dev, variants["eager"], False), "raw": 1}
        t = interleaved(variants, rounds)
        med = {k: median(v) for k, v in t.items()}
        row = {"case": name, "n": n, **{f"{k}_s": med[k] for k in med},
               "fused_over_raw": med["fused"] / med["raw"], "eager_over_raw": med["eager"] / med["raw"],
               "eager_over_fused": med["eager"] / med["fused"],
               **{f"dispatches_{k}": v for k, v in disp.items()}}
        rows.append(row)
        if "raw_f_exp" in med:
            row["fused_over_raw_f_exp"] = med["fused"] / med["raw_f_exp"]
        extra = (f" raw(f_exp) {med['raw_f_exp'] * 1e3:8.2f} ms, fused/raw(f_exp) "
                 f"{row['fused_over_raw_f_exp']:.2f}x |" if "raw_f_exp" in med else "")
        print(f"{name:8s} fused {med['fused'] * 1e3:8.2f} ms  eager {med['eager'] * 1e3:8.2f} ms  "
              f"raw {med['raw'] * 1e3:8.2f} ms |{extra} fused/raw {row['fused_over_raw']:.2f}x  "
              f"eager/raw {row['eager_over_raw']:.2f}x  eager/fused {row['eager_over_fused']:.2f}x | "
              f"dispatches fused {disp['fused']} eager {disp['eager']}")

    # sum(x * y): the reduction computes x * y in its first pass (fusion_reduce.py)
    yh = rng.uniform(-1, 1, n).astype(np.float32)
    y = pyaccel.asarray(yh, device=dev)
    variants = {"fused": _dot(dev, x, y, True), "eager": _dot(dev, x, y, False), "raw": RawDot(dev, x, y)}
    want = float(np.dot(xh.astype(np.float64), yh))
    for label, v in variants.items():
        got = v.result() if isinstance(v, RawDot) else v().to_numpy()
        np.testing.assert_allclose(float(np.asarray(got).reshape(-1)[0]), want, rtol=1e-3, atol=0.5,
                                   err_msg=label)
    disp = {"fused": _dispatches(dev, variants["fused"], True),
            "eager": _dispatches(dev, variants["eager"], False), "raw": 2}
    t = interleaved(variants, rounds)
    med = {k: median(v) for k, v in t.items()}
    row = {"case": "sum(x*y)", "n": n, **{f"{k}_s": med[k] for k in med},
           "fused_over_raw": med["fused"] / med["raw"], "eager_over_raw": med["eager"] / med["raw"],
           "eager_over_fused": med["eager"] / med["fused"],
           **{f"dispatches_{k}": v for k, v in disp.items()}}
    rows.append(row)
    print(f"{'sum(x*y)':8s} fused {med['fused'] * 1e3:8.2f} ms  eager {med['eager'] * 1e3:8.2f} ms  "
          f"raw {med['raw'] * 1e3:8.2f} ms | fused/raw {row['fused_over_raw']:.2f}x  "
          f"eager/raw {row['eager_over_raw']:.2f}x  eager/fused {row['eager_over_fused']:.2f}x | "
          f"dispatches fused {disp['fused']} eager {disp['eager']} raw 2")

    # the MLP demo forward and heat diffusion, fusion on vs off
    import heat_diffusion
    import mlp

    sizes = [784, 512, 512, 10]
    layers = [(pyaccel.asarray((rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32), device=dev),
               pyaccel.asarray((rng.standard_normal(b) * 0.1).astype(np.float32), device=dev))
              for a, b in itertools.pairwise(sizes)]
    xb = pyaccel.asarray(rng.standard_normal((256, 784)).astype(np.float32), device=dev)
    u0 = pyaccel.asarray(rng.random((256, 256), dtype=np.float32), device=dev)
    steps = 5 if args.quick else 20

    def app(kind: str, on: bool) -> Any:
        def run() -> Any:
            with pyaccel.fusion(on):
                if kind == "mlp":
                    y = mlp.forward(pyaccel, xb, layers, lambda z: pyaccel.nn.softmax(z, axis=-1))
                else:
                    y = heat_diffusion.simulate(pyaccel, u0, 0.2, steps)
                F.materialize(y)
            dev.synchronize()
            return y
        return run

    for kind in (() if args.only_jit else ("mlp", "heat")):
        on, off = app(kind, True), app(kind, False)
        np.testing.assert_allclose(on().to_numpy(), off().to_numpy(), rtol=1e-5, atol=1e-6)
        disp = {"fused": _dispatches(dev, on, True), "eager": _dispatches(dev, off, False)}
        t = interleaved({"fused": on, "eager": off}, rounds)
        med = {k: median(v) for k, v in t.items()}
        row = {"case": kind, **{f"{k}_s": med[k] for k in med}, "speedup": med["eager"] / med["fused"],
               **{f"dispatches_{k}": v for k, v in disp.items()}}
        rows.append(row)
        print(f"{kind:8s} fused {med['fused'] * 1e3:8.2f} ms  eager {med['eager'] * 1e3:8.2f} ms  "
              f"speed-up {row['speedup']:.2f}x | dispatches fused {disp['fused']} eager {disp['eager']}")

    # relu(a @ w + b): the matmul kernel with the bias and ReLU as its epilogue
    # (ops/fusion_matmul.py) vs fusion off vs the bare product a @ w (its kernel alone)
    if not args.only_jit:
        mn = 256 if args.quick else 512
        ah, wh = rng.standard_normal((mn, mn)).astype(np.float32), rng.standard_normal((mn, mn)).astype(np.float32)
        bh = rng.standard_normal(mn).astype(np.float32)
        a, w, b = (pyaccel.asarray(t, device=dev) for t in (ah, wh, bh))

        def epi(on: bool, bare: bool = False) -> Any:
            def run() -> Any:
                with pyaccel.fusion(on):
                    y = a @ w if bare else pyaccel.maximum(a @ w + b, 0.0)
                    F.materialize(y)
                dev.synchronize()
                return y
            return run

        variants = {"fused": epi(True), "eager": epi(False), "matmul_only": epi(True, True)}
        np.testing.assert_array_equal(variants["fused"]().to_numpy(), variants["eager"]().to_numpy())
        disp = {"fused": _dispatches(dev, variants["fused"], True), "eager": _dispatches(dev, variants["eager"], False),
                "matmul_only": _dispatches(dev, variants["matmul_only"], True)}
        t = interleaved(variants, rounds)
        med = {k: median(v) for k, v in t.items()}
        row = {"case": f"relu(a@w+b) {mn}^3", **{f"{k}_s": med[k] for k in med},
               "speedup": med["eager"] / med["fused"], "fused_over_matmul_only": med["fused"] / med["matmul_only"],
               **{f"dispatches_{k}": v for k, v in disp.items()}}
        rows.append(row)
        print(f"epilogue fused {med['fused'] * 1e3:8.2f} ms  eager {med['eager'] * 1e3:8.2f} ms  "
              f"a@w alone {med['matmul_only'] * 1e3:8.2f} ms | speed-up {row['speedup']:.2f}x  fused/(a@w alone) "
              f"{row['fused_over_matmul_only']:.2f}x | dispatches fused {disp['fused']} eager {disp['eager']} "
              f"a@w {disp['matmul_only']}")

    import json

    results = RESULTS.with_name("fusion_jit.json") if args.only_jit else RESULTS
    results.parent.mkdir(parents=True, exist_ok=True)
    out = {"benchmark": "fusion", "device": dev.uri, "adapter": str(dev), "quick": args.quick,
           "load_average": load_average(), "time": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
           "rows": rows}
    results.write_text(json.dumps(out, indent=2) + "\n")
    print(f"load average after {load_average()}; wrote {results}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
