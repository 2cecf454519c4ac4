"""First-call (compile) time of each op family x dtype, each in a fresh process.

    python benchmarks/bench_compile.py [--quick] [--device vulkan:0] [--no-compare]
                                       [--ops add,exp] [--dtypes float32,float64] [--profile]

Every case runs in a new Python process (``--child``) with the driver's shader cache off
(``MESA_SHADER_CACHE_DISABLE=true``), so nothing compiled before helps: the process opens the
device, uploads its inputs (no kernel runs for that), then times the op's first call up to
``device.synchronize()`` (its kernels compiled and run: what a user waits for) and a second
call (run only), as wall time and as the process's CPU time (all its threads: lavapipe
compiles in its queue thread), which another job on the machine inflates far less than the
wall time. Inside the first call it also records the time spent creating pipelines
(``Facade.create_pipeline``: WGSL -> naga -> SPIR-V -> the driver) and the WGSL lines
compiled.

With ``--compare`` (the default) every case also runs with ``PYACCEL_WGSL_PRUNE=0`` (whole
library sources, the code before issue 21), the two variants alternating case by case in
the same run, so before/after share the run conditions.

Targets (issue 21, on vulkan:0, pruned): every dtype's median first call (over the ops it
shares with float32) within 2x of float32's median over the same ops, and no single first
call above 1 s.

``--profile`` adds, for the slowest cases, where a first compile spends its time: each
pipeline the op compiled is replayed on a fresh raw wgpu device in the child, timing
``create_shader_module`` (naga: WGSL parse + validation) apart from
``create_compute_pipeline`` (naga's SPIR-V writer and the driver's vkCreateComputePipelines:
SPIR-V -> NIR -> LLVM on lavapipe) and the first dispatch of it against a second one (code
generation a driver defers to first use). ``perf record`` of a child splits the remaining
time by library (see docs/performance.md, "Kernel compile time"). ``--scaling`` measures the
compile CPU time of one more inlined float64 call (writes ``compile-scaling.json``).

Each case runs ``--repeat`` times (default 2) per variant; a case's time is the minimum
(a case over 5 s runs once: float64 / complex128 transcendentals take 5-150 s under load).
Writes ``benchmarks/results/compile.json`` (``compile-quick.json`` with ``--quick``).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import ROOT, arg_parser, load_average, machine_info, write_json
else:
    from .common import ROOT, arg_parser, load_average, machine_info, write_json

DTYPES = ("int32", "int64", "float32", "float64", "complex64", "complex128")
# op -> (family, dtype kinds it takes: i int, f real float, c complex)
OPS: dict[str, tuple[str, str]] = {
    "add": ("elementwise", "ifc"),
    "exp": ("elementwise", "fc"),
    "sin": ("elementwise", "fc"),
    "tan": ("elementwise", "f"),
    "pow": ("elementwise", "f"),
    "logaddexp": ("elementwise", "f"),
    "astype": ("elementwise", "ifc"),  # a cast to float32 / complex64
    "take": ("gather", "ifc"),
    "sum": ("reduction", "ifc"),
    "argmax": ("reduction", "if"),
    "cumulative_sum": ("scan", "ifc"),
    "matmul": ("matmul", "ifc"),
    "sort": ("sort", "if"),
    "softmax": ("softmax", "f"),
    "fft": ("fft", "c"),
    "solve": ("linalg", "f"),
}
QUICK_OPS = ("add", "exp", "sum", "cumulative_sum", "matmul", "sort")
N = 4096  # elements of a 1-D input; matrices are 64 x 64
SLOW_ONCE_S = 5.0  # a case whose first call takes longer runs once per variant


def _kind(dt: str) -> str:
    return "c" if dt.startswith("complex") else ("f" if dt.startswith("float") else "i")


def cases(ops: tuple[str, ...], dtypes: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(op, dt) for op in ops for dt in dtypes if _kind(dt) in OPS[op][1]]


# ---------------------------------------------------------------------------
# child: one case in this (fresh) process
# ---------------------------------------------------------------------------
def _inputs(xp: Any, np: Any, dev: Any, op: str, dt: str) -> Any:
    rng = np.random.default_rng(1)
    k = _kind(dt)

    def data(shape: tuple[int, ...]) -> Any:
        if k == "i":
            return rng.integers(-1000, 1000, shape).astype(dt)
        h = rng.standard_normal(shape)
        if k == "c":
            h = h + 1j * rng.standard_normal(shape)
        return h.astype(dt)

    if op in ("matmul", "solve"):
        a = data((64, 64))
        if op == "solve":
            a = a + 64 * np.eye(64, dtype=dt)
        x, y = xp.asarray(a, device=dev), xp.asarray(data((64, 64)), device=dev)
    else:
        x, y = xp.asarray(data((N,)), device=dev), xp.asarray(data((N,)), device=dev)
    idx = xp.asarray(rng.integers(0, N, N // 2).astype("int64"), device=dev)
    cast = "complex64" if k == "c" else "float32"
    if dt == cast:
        cast = "complex128" if k == "c" else "int32"
    fns = {
        "add": lambda: xp.add(x, y), "multiply": lambda: xp.multiply(x, y),
        "divide": lambda: xp.divide(x, y), "exp": lambda: xp.exp(x), "sin": lambda: xp.sin(x),
        "tan": lambda: xp.tan(x), "pow": lambda: xp.pow(x, y),
        "logaddexp": lambda: xp.logaddexp(x, y),
        "less": lambda: xp.less(x, y), "astype": lambda: xp.astype(x, getattr(xp, cast)),
        "take": lambda: xp.take(x, idx), "sum": lambda: xp.sum(x), "max": lambda: xp.max(x),
        "argmax": lambda: xp.argmax(x), "cumulative_sum": lambda: xp.cumulative_sum(x),
        "matmul": lambda: xp.matmul(x, y), "sort": lambda: xp.sort(x),
        "softmax": lambda: xp.nn.softmax(x) if hasattr(xp, "nn") else _softmax(x),
        "fft": lambda: xp.fft.fft(x), "solve": lambda: xp.linalg.solve(x, y),
    }
    return fns[op]


def _softmax(x: Any) -> Any:
    from pyaccel import nn

    return nn.softmax(x)


def _force(r: Any) -> None:
    """Compute a lazy (fusion) result: synchronize() alone leaves it a graph."""
    for a in r if isinstance(r, tuple) else (r,):
        getattr(a, "_base", None)  # (Array._base materialises a lazy array)


def child(op: str, dt: str, device: str, profile: bool) -> dict[str, Any]:
    import numpy as np

    import pyaccel as xp
    from pyaccel.ops import host_path, launch

    dev = xp.device(device)
    fn = _inputs(xp, np, dev, op, dt)
    dev.synchronize()
    impl = dev.impl
    fac = impl.f
    made: list[tuple[str, str, dict, float]] = []
    orig = fac.create_pipeline

    def spy(wgsl: str, entry: str, constants: dict[str, float]) -> Any:
        t = time.perf_counter()
        try:
            return orig(wgsl, entry, constants)
        finally:
            made.append((wgsl, entry, dict(constants or {}), time.perf_counter() - t))

    fac.create_pipeline = spy
    host0 = sum(host_path.HOST_CALLS.values())
    t0, c0 = time.perf_counter(), time.process_time()
    _force(fn())
    dev.synchronize()
    first, first_cpu = time.perf_counter() - t0, time.process_time() - c0
    n_made = len(made)
    t0, c0 = time.perf_counter(), time.process_time()
    _force(fn())
    dev.synchronize()
    second, second_cpu = time.perf_counter() - t0, time.process_time() - c0
    fac.create_pipeline = orig
    out: dict[str, Any] = {
        "op": op, "dtype": dt, "prune": launch.PRUNE, "first_s": first, "second_s": second,
        "first_cpu_s": first_cpu, "second_cpu_s": second_cpu,
        "pipelines": n_made, "create_pipeline_s": sum(m[3] for m in made[:n_made]),
        "wgsl_lines": sum(m[0].count("\n") + 1 for m in made[:n_made]),
        "max_wgsl_lines": max((m[0].count("\n") + 1 for m in made[:n_made]), default=0),
        "host_path": sum(host_path.HOST_CALLS.values()) > host0,
    }
    if profile and made:
        # (the child ran with PYACCEL_WGSL_PRUNE=0, so these are the whole sources)
        out["phases"] = _replay(made[:n_made])
    return out


def _replay(made: list[tuple[str, str, dict, float]], rounds: int = 3) -> dict[str, Any]:
    """Compile the op's pipelines again on a fresh raw wgpu device, the whole sources and the
    pruned ones alternating (``rounds`` each), timing each phase as CPU time of this process
    (the minimum over the rounds) and wall time (the median): ``create_shader_module`` (naga:
    WGSL parse + validation), ``create_compute_pipeline`` (naga's SPIR-V writer and
    vkCreateComputePipelines), and a first dispatch (lavapipe generates the machine code
    with LLVM on first use) less a second one. A compile over 3 s CPU gets one round."""
    import wgpu

    from pyaccel.ops.wgsl_graph import prune

    adapter = next(a for a in wgpu.gpu.enumerate_adapters_sync()
                   if a.info.get("backend_type", "").lower() == "vulkan")
    device = adapter.request_device_sync()
    fence = device.create_buffer(size=16, usage=wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST)

    def timed(f: Any) -> tuple[Any, float, float]:
        c, t = time.process_time(), time.perf_counter()
        r = f()
        return r, time.process_time() - c, time.perf_counter() - t

    def dispatch(pipe: Any, group: Any) -> None:
        enc = device.create_command_encoder()
        cp = enc.begin_compute_pass()
        cp.set_pipeline(pipe)
        cp.set_bind_group(0, group)
        cp.dispatch_workgroups(1, 1, 1)
        cp.end()
        device.queue.submit([enc.finish()])
        device.queue.read_buffer(fence)  # (waits for the submitted work)

    def once(wgsl: str, entry: str, consts: dict) -> dict[str, tuple[float, float]]:
        module, c1, w1 = timed(lambda: device.create_shader_module(code=wgsl))
        compute: dict[str, Any] = {"module": module, "entry_point": entry}
        if consts:
            compute["constants"] = consts
        pipe, c2, w2 = timed(lambda: device.create_compute_pipeline(layout="auto", compute=compute))
        group = device.create_bind_group(layout=pipe.get_bind_group_layout(0),
                                         entries=_dummy_entries(device, wgsl, entry))
        _, c3, w3 = timed(lambda: dispatch(pipe, group))
        _, c4, w4 = timed(lambda: dispatch(pipe, group))
        return {"shader_module": (c1, w1), "pipeline": (c2, w2),
                "first_dispatch": (max(0.0, c3 - c4), max(0.0, w3 - w4))}

    out: dict[str, Any] = {}
    samples: dict[str, list[dict[str, tuple[float, float]]]] = {"whole": [], "pruned": []}
    for r in range(rounds):
        if r and sum(v["shader_module"][0] + v["pipeline"][0] + v["first_dispatch"][0]
                     for v in samples["whole"]) > 3.0 * r:
            break  # a slow compile (seconds): one round of each is enough
        order = ("whole", "pruned") if r % 2 == 0 else ("pruned", "whole")
        for variant in order:
            tot: dict[str, list[float]] = {}
            for wgsl, entry, consts, _ in made:
                src = prune(wgsl, (entry,), tuple(sorted(consts))) if variant == "pruned" else wgsl
                for k, (c, w) in once(src, entry, consts).items():
                    acc = tot.setdefault(k, [0.0, 0.0])
                    acc[0] += c
                    acc[1] += w
            samples[variant].append({k: (v[0], v[1]) for k, v in tot.items()})
    for variant, runs in samples.items():
        out[variant] = {f"{k}_cpu_s": min(run[k][0] for run in runs) for k in runs[0]}
        out[variant].update({f"{k}_wall_s": statistics.median(run[k][1] for run in runs) for k in runs[0]})
        out[variant]["lines"] = sum(
            (prune(w, (e,), tuple(sorted(c))) if variant == "pruned" else w).count("\n") + 1
            for w, e, c, _ in made)
    return out


def _dummy_entries(device: Any, wgsl: str, entry: str) -> list[dict[str, Any]]:
    import wgpu

    from pyaccel import kernel as K

    text = K._blank_comments(wgsl)
    used = K._used_names(text, entry) or set()
    ents = []
    for b in K.reflect(wgsl)[0]:
        if b.name not in used:
            continue
        usage = wgpu.BufferUsage.UNIFORM if b.space == "uniform" else wgpu.BufferUsage.STORAGE
        size = 4096
        buf = device.create_buffer(size=size, usage=usage | wgpu.BufferUsage.COPY_DST)
        ents.append({"binding": b.index, "resource": {"buffer": buf, "offset": 0, "size": size}})
    return ents


def scaling(ops: tuple[str, ...] = ("f64_add", "f64_multiply", "f64_divide"),
            counts: tuple[int, ...] = (1, 2, 4, 8, 16)) -> list[dict[str, Any]]:
    """Compile CPU time of a kernel that calls one float64 library function k times in a
    row, for several k, on a raw wgpu device (pruned source; minimum of 2): the cost of one
    more inlined call site, which is what makes float64 / complex128 transcendentals slow to
    compile (NIR inlines every call; LLVM then compiles one long function)."""
    import wgpu

    from pyaccel.ops import launch
    from pyaccel.ops.wgsl_graph import prune

    lib = launch.wgsl_source("ew_f64")
    adapter = next(a for a in wgpu.gpu.enumerate_adapters_sync()
                   if a.info.get("backend_type", "").lower() == "vulkan")
    d = adapter.request_device_sync()
    fence = d.create_buffer(size=16, usage=wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST)
    buf = d.create_buffer(size=4096, usage=wgpu.BufferUsage.STORAGE)

    def compile_cpu(src: str) -> float:
        c = time.process_time()
        m = d.create_shader_module(code=src)
        p = d.create_compute_pipeline(layout="auto", compute={"module": m, "entry_point": "main"})
        g = d.create_bind_group(layout=p.get_bind_group_layout(0), entries=[
            {"binding": 0, "resource": {"buffer": buf, "offset": 0, "size": 4096}}])
        enc = d.create_command_encoder()
        cp = enc.begin_compute_pass()
        cp.set_pipeline(p)
        cp.set_bind_group(0, g)
        cp.dispatch_workgroups(1)
        cp.end()
        d.queue.submit([enc.finish()])
        d.queue.read_buffer(fence)
        return time.process_time() - c

    out = []
    for op in ops:
        for k in counts:
            body = "\n".join(f"    v = {op}(v, x[(i + {j}u) % 64u]);" for j in range(k))
            src = prune(lib + "\n@group(0) @binding(0) var<storage, read_write> x: array<vec2<u32>>;\n"
                        "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n"
                        f"    let i = g.x;\n    var v = x[i];\n{body}\n    x[i] = v;\n}}\n", ("main",))
            out.append({"function": op, "calls": k, "compile_cpu_s": min(compile_cpu(src) for _ in range(2))})
    return out


# ---------------------------------------------------------------------------
# parent
# ---------------------------------------------------------------------------
def _spawn(op: str, dt: str, device: str, prune: bool, profile: bool) -> dict[str, Any]:
    env = dict(os.environ, MESA_SHADER_CACHE_DISABLE="true", PYACCEL_WGSL_PRUNE="1" if prune else "0",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.setdefault("XDG_RUNTIME_DIR", "/tmp")
    cmd = [sys.executable, os.path.abspath(__file__), "--child", op, dt, "--device", device]
    if profile:
        cmd.append("--profile")
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        return {"op": op, "dtype": dt, "prune": prune, "error": (p.stderr or p.stdout).strip()[-800:]}
    row = json.loads(p.stdout.strip().splitlines()[-1])
    row["process_s"] = wall
    return row


def summarize(rows: list[dict[str, Any]], prune: bool, key: str = "first_s") -> dict[str, Any]:
    """Per dtype: median of ``key`` (first-call wall or CPU time) over its ops, and over the
    ops it shares with float32 against float32's median over the same ops; the targets."""
    ok = [r for r in rows if r.get("prune") == prune and "error" not in r]
    first = {(r["op"], r["dtype"]): r[key] for r in ok}
    f32_ops = {op for op, dt in first if dt == "float32"}
    per_dtype = {}
    for dt in DTYPES:
        ops = sorted(op for (op, d) in first if d == dt)
        if not ops:
            continue
        common = [op for op in ops if op in f32_ops]
        med = statistics.median(first[(op, dt)] for op in ops)
        med_common = statistics.median(first[(op, dt)] for op in common) if common else None
        med_f32 = statistics.median(first[(op, "float32")] for op in common) if common else None
        ratio = med_common / med_f32 if common and med_f32 else None
        per_dtype[dt] = {"ops": len(ops), "median_first_s": med, "common_ops": len(common),
                         "median_first_common_s": med_common, "float32_median_common_s": med_f32,
                         "ratio_to_float32": ratio,
                         "max_first_s": max(first[(op, dt)] for op in ops),
                         "slowest_op": max(ops, key=lambda op: first[(op, dt)])}
    worst = max(ok, key=lambda r: r[key]) if ok else None
    return {"metric": key, "per_dtype": per_dtype,
            "max_first_s": worst[key] if worst else None,
            "max_case": f"{worst['op']} {worst['dtype']}" if worst else None,
            "targets": [
                {"target": "every dtype's median first call <= 2x float32's (same ops)",
                 "value": max((v["ratio_to_float32"] or 0) for v in per_dtype.values()) if per_dtype else None,
                 "met": all((v["ratio_to_float32"] or 0) <= 2.0 for v in per_dtype.values())},
                {"target": "no single op's first call > 1 s",
                 "value": worst[key] if worst else None,
                 "met": bool(worst) and worst[key] <= 1.0},
            ]}


def _print_table(rows: list[dict[str, Any]], compare: bool) -> None:
    by = {(r["op"], r["dtype"], r.get("prune")): r for r in rows}
    keys = sorted({(r["op"], r["dtype"]) for r in rows},
                  key=lambda k: (list(OPS).index(k[0]), DTYPES.index(k[1])))
    head = (f"{'op':15} {'dtype':11} {'first':>9} {'1st cpu':>9} {'second':>9} {'compile':>9} "
            f"{'pipes':>5} {'lines':>6}")
    if compare:
        head += f" | {'whole: first':>12} {'1st cpu':>9} {'compile':>9} {'lines':>6} {'speed-up':>8}"
    print(head)
    print("-" * len(head))
    for op, dt in keys:
        r = by.get((op, dt, True))
        if r is None or "error" in r:
            print(f"{op:15} {dt:11} ERROR {r.get('error', '')[-200:] if r else ''}")
            continue
        line = (f"{op:15} {dt:11} {r['first_s'] * 1e3:7.1f}ms {r['first_cpu_s'] * 1e3:7.1f}ms "
                f"{r['second_s'] * 1e3:7.1f}ms "
                f"{r['create_pipeline_s'] * 1e3:7.1f}ms {r['pipelines']:5d} {r['wgsl_lines']:6d}")
        if r.get("host_path"):
            line += " (host path)"
        w = by.get((op, dt, False))
        if compare and w is not None and "error" not in w:
            line += (f" | {w['first_s'] * 1e3:10.1f}ms {w['first_cpu_s'] * 1e3:7.1f}ms "
                     f"{w['create_pipeline_s'] * 1e3:7.1f}ms "
                     f"{w['wgsl_lines']:6d} {w['first_s'] / r['first_s']:7.2f}x")
        print(line)


def _aggregate(raw: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (op, dtype, prune): the minimum of each time over the repeats (the least
    disturbed by other load), the samples kept."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in raw:
        groups.setdefault((r["op"], r["dtype"], r["prune"]), []).append(r)
    out = []
    for rs in groups.values():
        good = [r for r in rs if "error" not in r]
        if not good:
            out.append(rs[0])
            continue
        row = dict(good[0])
        for k in ("first_s", "first_cpu_s", "second_s", "second_cpu_s", "create_pipeline_s"):
            row[k] = min(r[k] for r in good)
        row["samples_first_s"] = [r["first_s"] for r in good]
        row["samples_first_cpu_s"] = [r["first_cpu_s"] for r in good]
        out.append(row)
    return out


def run(device: str = "vulkan:0", quick: bool = False, compare: bool = True,
        ops: tuple[str, ...] | None = None, dtypes: tuple[str, ...] = DTYPES,
        profile: bool = False, repeat: int = 2) -> dict[str, Any]:
    t_start = time.perf_counter()
    la0 = load_average()
    ops = ops or (QUICK_OPS if quick else tuple(OPS))
    todo = cases(ops, dtypes)
    raw = []
    slow: set[tuple[str, str, bool]] = set()
    for rep in range(repeat):
        for j, (op, dt) in enumerate(todo):
            variants = [True, False] if compare else [True]
            if compare and (j + rep) % 2:
                variants.reverse()  # alternate which variant goes first
            for pr in variants:
                if (op, dt, pr) in slow:
                    continue  # over SLOW_ONCE_S once: its noise is small next to it
                raw.append(_spawn(op, dt, device, pr, False))
                if raw[-1].get("first_s", 0.0) > SLOW_ONCE_S:
                    slow.add((op, dt, pr))
                print(f"  [{rep + 1}/{repeat}] {op} {dt} prune={pr}: "
                      + (f"{raw[-1]['first_s'] * 1e3:.1f} ms" if "error" not in raw[-1] else "ERROR"),
                      file=sys.stderr, flush=True)
    rows = _aggregate(raw)
    prof = []
    if profile:
        pruned_rows = [r for r in rows if r.get("prune") and "error" not in r]
        slow = sorted(pruned_rows, key=lambda r: -r["first_s"])[:6]
        for r in slow:
            prof.append(_spawn(r["op"], r["dtype"], device, False, True))
    _print_table(rows, compare)
    summ = {"pruned": summarize(rows, True), "pruned_cpu": summarize(rows, True, "first_cpu_s")}
    if compare:
        summ["whole"] = summarize(rows, False)
        summ["whole_cpu"] = summarize(rows, False, "first_cpu_s")
    for name, s in summ.items():
        print(f"\n{name} sources ({s['metric']}): per dtype, median first call (ops shared with "
              "float32) / float32's:")
        for dt, v in s["per_dtype"].items():
            ratio = v["ratio_to_float32"]
            print(f"  {dt:11} {v['median_first_common_s'] * 1e3:8.1f} ms / "
                  f"{v['float32_median_common_s'] * 1e3:7.1f} ms = {ratio:5.2f}x   (max "
                  f"{v['max_first_s'] * 1e3:.0f} ms: {v['slowest_op']})")
        for t in s["targets"]:
            print(f"  target: {t['target']}: {t['value']:.3f} -> {'met' if t['met'] else 'NOT met'}")
    if prof:
        print("\nprofile: the op's pipelines compiled again on a fresh raw wgpu device, whole vs "
              "pruned alternating; CPU ms (min of 3) / wall ms (median):")
        print(f"{'case':24} {'source':7} {'lines':>6} {'shader module':>15} {'pipeline':>15} "
              f"{'1st dispatch':>15}")
        for p in prof:
            if "error" in p or "phases" not in p:
                continue
            for variant in ("whole", "pruned"):
                ph = p["phases"][variant]
                cells = " ".join(f"{ph[k + '_cpu_s'] * 1e3:7.1f}/{ph[k + '_wall_s'] * 1e3:7.1f}"
                                 for k in ("shader_module", "pipeline", "first_dispatch"))
                print(f"{p['op'] + ' ' + p['dtype']:24} {variant:7} {ph['lines']:6d} {cells}")
    import pyaccel as xp  # (for the machine line only, after the children ran)

    res = {"benchmark": "compile", "quick": quick, "device": device,
           "machine": machine_info(xp.device(device)),
           "load_average": {"start": la0, "end": load_average()},
           "conditions": {"MESA_SHADER_CACHE_DISABLE": "true", "fresh_process_per_case": True,
                          "N": N, "matrix": 64, "repeat": repeat, "per_case": "min over repeats"},
           "seconds": round(time.perf_counter() - t_start, 1),
           "rows": rows, "summary": summ, "profile": prof,
           "targets": summ["pruned"]["targets"],
           "all_targets_met": all(t["met"] for t in summ["pruned"]["targets"])}
    res["written_to"] = str(write_json("compile-quick.json" if quick else "compile.json", res))
    print(f"\nresults: {res['written_to']} ({res['seconds']} s)")
    return res


def main(argv: list[str] | None = None) -> int:
    p = arg_parser(__doc__, "six ops only")
    p.add_argument("--no-compare", action="store_true", help="pruned sources only")
    p.add_argument("--ops", default="", help="comma list (default: all)")
    p.add_argument("--dtypes", default=",".join(DTYPES))
    p.add_argument("--profile", action="store_true", help="phase times of the slowest cases")
    p.add_argument("--repeat", type=int, default=2, help="fresh processes per case and variant (min)")
    p.add_argument("--scaling", action="store_true",
                   help="only: compile CPU time against the number of inlined float64 calls")
    p.add_argument("--child", nargs=2, metavar=("OP", "DTYPE"), help=argparse_suppress())
    a = p.parse_args(argv)
    if a.child:
        sys.path.insert(0, str(ROOT))
        print(json.dumps(child(a.child[0], a.child[1], a.device, a.profile)))
        return 0
    if a.scaling:
        sys.path.insert(0, str(ROOT))
        rows = scaling()
        for r in rows:
            print(f"{r['function']:14} x{r['calls']:<3d} {r['compile_cpu_s'] * 1e3:8.1f} ms CPU")
        print("results:", write_json("compile-scaling.json", {"benchmark": "compile-scaling",
                                                              "machine": machine_info(), "rows": rows}))
        return 0
    ops = tuple(o for o in a.ops.split(",") if o) or None
    run(a.device, a.quick, not a.no_compare, ops, tuple(a.dtypes.split(",")), a.profile, a.repeat)
    return 0


def argparse_suppress() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    sys.exit(main())
