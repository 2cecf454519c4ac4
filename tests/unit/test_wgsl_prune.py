"""Pruning built-in WGSL to what an entry point reaches (pyaccel/ops/wgsl_graph.py), no device.

The reference for "what an entry point reaches" is an independent analyser: kernel.py's
call-graph walk (``_function_bodies`` / ``_used_names``, which reads function bodies and
subtracts locals), so a bug in the pruner's own graph does not hide itself.
"""

from __future__ import annotations

from importlib import resources

import pytest

from pyaccel import kernel as K
from pyaccel.ops import gpu_kernels as G
from pyaccel.ops import kernelgen as E
from pyaccel.ops import launch
from pyaccel.ops.fft_wgsl import fft_source
from pyaccel.ops.wgsl_graph import blank_comments, declarations, prune


def _fns(src: str) -> set[str]:
    return {d.name for d in declarations(src) if d.kind == "fn"}


def _reference_reached_fns(src: str, entry: str) -> set[str]:
    text = K._blank_comments(src)
    bodies = K._function_bodies(text)
    used = K._used_names(text, entry)
    assert used is not None
    return {n for n in used if n in bodies} | {entry}


def _kernels() -> list[tuple[str, str, str]]:
    """(label, source, entry) of kernels from every family that has a multi-function source."""
    out = []
    for T in ("f32", "vec2<u32>", "vec2<f32>", "vec4<u32>"):
        op = {"f32": "f_exp(x) + y", "vec2<u32>": "f64_sin(x)", "vec2<f32>": "c64_add(x, y)",
              "vec4<u32>": "c128_multiply(x, y)"}[T]
        name = {"f32": "float32", "vec2<u32>": "float64", "vec2<f32>": "complex64",
                "vec4<u32>": "complex128"}[T]
        helpers = "ew_float" if T == "f32" else ""
        operands = (("buf", name if T != "f32" else "f32", name if T != "f32" else "f32"),) * 2
        src = E.source(op, name if T != "f32" else "f32", T, name, operands, "linear", helpers)
        out.append((f"elementwise {name}", src, "main"))
    for family, aliases in (("reduce", {"T": "f32", "A": "f32"}), ("scan", {"T": "f32"}),
                            ("argreduce", {"A": "f32"}), ("softmax", {"T": "f32"})):
        src = launch.specialize(launch.wgsl_source(family), **aliases)
        for d in declarations(src):
            if d.entry:
                out.append((f"{family}.{d.name}", src, d.name))
    fsrc = fft_source(False, False)
    for d in declarations(fsrc):
        if d.entry:
            out.append((f"fft.{d.name}", fsrc, d.name))
    body = G._template("wide_matmul", R="vec4<u32>", pfx="c128_")
    out.append(("matmul complex128", E.library_source(body) + "\n" + body, "main"))
    return out


KERNELS = _kernels()


@pytest.mark.parametrize("label,src,entry", KERNELS, ids=[k[0] for k in KERNELS])
def test_pruned_source_has_exactly_the_reached_functions(label: str, src: str, entry: str) -> None:
    out = prune(src, (entry,))
    want = _reference_reached_fns(src, entry)
    got = _fns(out)
    assert got == want, (label, sorted(got ^ want))
    # closed: every module-scope name a kept declaration uses is kept; minimal: every kept
    # declaration is reached from the entry inside the pruned source itself
    names = {d.name for d in declarations(src) if d.name}
    kept = {d.name: d for d in declarations(out) if d.name}
    for d in kept.values():
        missing = (d.uses & names) - set(kept)
        assert not missing, (label, d.name, missing)
    seen, todo = set(), [entry]
    while todo:
        n = todo.pop()
        if n in seen or n not in kept:
            continue
        seen.add(n)
        todo += list(kept[n].uses)
    assert seen == set(kept), (label, sorted(set(kept) - seen))


@pytest.mark.parametrize("label,src,entry", KERNELS[:6], ids=[k[0] for k in KERNELS[:6]])
def test_pruning_is_deterministic_and_idempotent(label: str, src: str, entry: str) -> None:
    a = prune(src, (entry,))
    b = prune(str(src), (entry,))
    assert a == b
    assert prune(a, (entry,)) == a
    # kept declarations stay in source order
    order = [d.name for d in declarations(src) if d.name in _fns(a)]
    assert [d.name for d in declarations(a) if d.kind == "fn"] == order


def test_complex_kernel_shrinks() -> None:
    """The issue's example: a complex64 add carried all of ew_f64 (2,000+ lines)."""
    label, src, entry = next(k for k in KERNELS if k[0] == "elementwise complex64")
    out = prune(src, (entry,))
    assert src.count("\n") > 1500
    assert out.count("\n") < 150
    assert "f64_add" not in out and "c64_add" in out


SYNTH = """enable f16;
alias T = f32;
alias V = vec2<T>;          // reached through V only
struct Inner { a: T, }
struct Outer { i: Inner, b: u32 }
struct Unused { z: u32 }
const N: u32 = 4u;
const M = N * 2u;
const DEAD: u32 = 7u;
override WG: u32 = 64u;
override UNSET: u32 = 1u;
var<workgroup> tile: array<T, M>;
var<private> junk: u32 = 0u;
@group(0) @binding(0) var<storage, read_write> out: array<T>;
@group(0) @binding(1) var<storage, read> unused_buf: array<T>;
/* a block comment /* nested */ mentioning dead_fn() and Unused */
fn helper(o: Outer) -> V { return V(o.i.a, T(o.b)); }  // dead_fn() in a comment
fn dead_fn() -> u32 { return DEAD + junk; }
fn shadow(x: u32) -> u32 { let helper2 = x; return helper2; }
fn helper2() -> u32 { return 0u; }
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    tile[gid.x % M] = helper(Outer(Inner(1.0), shadow(gid.x))).x;
    out[gid.x] = tile[0];
}
@compute @workgroup_size(1)
fn other() { out[0] = T(dead_fn()); }
"""


def test_synthetic_module() -> None:
    out = prune(SYNTH, ("main",))
    names = {d.name for d in declarations(out) if d.name}
    assert names == {"T", "V", "Inner", "Outer", "N", "M", "WG", "tile", "out", "helper", "shadow",
                     "helper2", "main"}  # helper2: a local of that name keeps it (conservative)
    assert out.startswith("enable f16;")
    assert "Unused" not in blank_comments(out) and "dead_fn" not in blank_comments(out)
    # an override a pipeline sets is kept; every entry point by default
    assert "UNSET" in prune(SYNTH, ("main",), ("UNSET",))
    both = prune(SYNTH)
    assert {"dead_fn", "DEAD", "junk", "other"} <= {d.name for d in declarations(both)}
    # a missing entry point leaves the source to the compiler's error
    assert prune(SYNTH, ("nope",)) == SYNTH


def test_bad_module_scope_text_names_the_line() -> None:
    with pytest.raises(ValueError, match="line 2"):
        declarations("const A = 1u;\nlet b = 2u;\n")
    with pytest.raises(ValueError, match="unbalanced"):
        declarations("fn f() {\n  if (true) {\n}\n")


@pytest.mark.parametrize("name", sorted(p.name[:-5] for p in resources.files("pyaccel.ops").iterdir()
                                        if p.name.endswith(".wgsl")))
def test_every_builtin_wgsl_file_parses(name: str) -> None:
    decls = declarations(launch.wgsl_source(name))
    assert decls
    # every fn is found by kernel.py's independent scan too
    assert {d.name for d in decls if d.kind == "fn"} == set(
        K._function_bodies(K._blank_comments(launch.wgsl_source(name))))


def test_pipeline_helper_prunes_and_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []

    class Impl:
        def pipeline(self, wgsl: str, entry: str, constants: object, name: str) -> str:
            seen.append(wgsl)
            return "pipe"

    monkeypatch.setattr(launch, "PRUNE", True)
    label, src, entry = KERNELS[2]
    assert launch.pipeline(Impl(), src, entry, None, "x") == "pipe"
    assert seen[-1] == prune(src, (entry,))
    assert launch.pruned(src, entry) is launch.pruned(src, entry)  # cached
    monkeypatch.setattr(launch, "PRUNE", False)
    launch.pipeline(Impl(), src, entry, None, "x")
    assert seen[-1] is src


def test_every_builtin_family_compiles_through_launch_pipeline() -> None:
    """Pruning is applied at one shared point: no op module calls ``impl.pipeline`` itself."""
    import ast

    offenders = []
    for p in resources.files("pyaccel.ops").iterdir():
        if not p.name.endswith(".py") or p.name == "launch.py":
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "pipeline"
                    and not (isinstance(node.func.value, ast.Name) and node.func.value.id == "launch")):
                offenders.append(f"{p.name}:{node.lineno}")
    assert not offenders, f"built-in pipelines made outside ops/launch.pipeline: {offenders}"
