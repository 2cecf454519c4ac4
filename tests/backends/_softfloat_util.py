"""Run expressions of the float64 soft-float library (pyaccel/ops/ew_f64.wgsl) on a device.

``run_f64(device, "f64_add(a0, a1)", [x, y], out="f64")`` builds a one-element-per-invocation
kernel over the library, uploads the operands as uint32 words (float64 / int64 / uint64 as two
words, little-endian: NumPy's bytes), poisons the output and returns it viewed as the output
kind. Operand kinds follow the NumPy dtypes given: float64, int64, uint64 (``vec2<u32>``),
float32 (``f32``), int32 (``i32``), uint32 (``u32``).
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import numpy as np

import pyaccel

_WORDS = {"f64": 2, "i64": 2, "u64": 2, "f32": 1, "i32": 1, "u32": 1, "bool": 1}
_DTYPE = {"f64": np.float64, "i64": np.int64, "u64": np.uint64, "f32": np.float32,
          "i32": np.int32, "u32": np.uint32, "bool": np.uint32}
_KIND = {np.dtype(v): k for k, v in _DTYPE.items() if k != "bool"}
_LOAD = {
    "f64": "vec2<u32>(a{k}[2u * i], a{k}[2u * i + 1u])",
    "i64": "vec2<u32>(a{k}[2u * i], a{k}[2u * i + 1u])",
    "u64": "vec2<u32>(a{k}[2u * i], a{k}[2u * i + 1u])",
    "f32": "bitcast<f32>(a{k}[i])",
    "i32": "bitcast<i32>(a{k}[i])",
    "u32": "a{k}[i]",
}
_STORE = {
    "f64": "o[2u * i] = r.x; o[2u * i + 1u] = r.y;",
    "i64": "o[2u * i] = r.x; o[2u * i + 1u] = r.y;",
    "u64": "o[2u * i] = r.x; o[2u * i + 1u] = r.y;",
    "f32": "o[i] = bitcast<u32>(r);",
    "i32": "o[i] = bitcast<u32>(r);",
    "u32": "o[i] = r;",
    "bool": "o[i] = select(0u, 1u, r);",
}
_KERNELS: dict[str, pyaccel.Kernel] = {}


def library() -> str:
    """The WGSL text of the float64 library."""
    return resources.files("pyaccel.ops").joinpath("ew_f64.wgsl").read_text()


def source(expr: str, kinds: list[str], out: str) -> str:
    """A kernel evaluating ``expr`` over operands ``a0, a1, ...`` of the given kinds."""
    decl = "".join(f"@group(0) @binding({k}) var<storage, read> a{k}: array<u32>;\n"
                   for k in range(len(kinds)))
    loads = "".join(f"    let a{k} = {_LOAD[kind].format(k=k)};\n" for k, kind in enumerate(kinds))
    # operands shadow the buffers inside main: rename buffers to b<k>
    decl = decl.replace("var<storage, read> a", "var<storage, read> b")
    loads = loads.replace("(a", "(b").replace(", a", ", b").replace("= a", "= b")
    n_out = len(kinds)
    return (library() + "\n" + decl
            + f"@group(0) @binding({n_out}) var<storage, read_write> o: array<u32>;\n"
            + "@compute @workgroup_size(64)\n"
            + "fn main(@builtin(global_invocation_id) g: vec3<u32>,"
            + " @builtin(num_workgroups) nwg: vec3<u32>) {\n"
            + "    let i = g.x + g.y * nwg.x * 64u;\n"
            + f"    if (i >= arrayLength(&o) / {_WORDS[out]}u) {{ return; }}\n"
            + loads + f"    let r = {expr};\n    {_STORE[out]}\n}}\n")


def run_f64(device: Any, expr: str, args: list[np.ndarray], out: str = "f64") -> np.ndarray:
    """Evaluate ``expr`` (operands ``a0, a1, ...``) elementwise on ``device``; the result as
    a NumPy array of the output kind (``bool`` results as a bool array)."""
    arrs = [np.ascontiguousarray(a) for a in args]
    kinds = [_KIND[a.dtype] for a in arrs]
    n = arrs[0].size
    src = source(expr, kinds, out)
    kern = _KERNELS.get(src)
    if kern is None:
        kern = _KERNELS[src] = pyaccel.Kernel(src)
    words = [a.view(np.uint32).copy() for a in arrs]
    o = np.full(n * _WORDS[out], 0xDEADBEEF, dtype=np.uint32)  # poison: unwritten words show
    grid = (min(n, 65535 * 64), -(-n // (65535 * 64)))
    kern(*words, o, grid=grid if grid[1] > 1 else n, device=device)
    if out == "bool":
        assert set(np.unique(o)) <= {0, 1}, "unwritten or non-boolean output words"
        return o.astype(bool)
    return o.view(_DTYPE[out])


def run_op(device: Any, name: str, args: list[np.ndarray]) -> np.ndarray:
    """``pyaccel.<name>(*args)`` on float64 arrays on ``device``, as a NumPy array: the library
    function through the op's own kernel. The accuracy tests call the op rather than a
    :func:`run_f64` kernel of their own, so each function compiles once per device and
    worker (the elementwise sweeps build the same kernel; a second kernel around the same
    function doubled the suite's longest compiles). Poison the outputs with the
    ``poisoned`` fixture (tests/backends/_array_util.py)."""
    arrs = [pyaccel.asarray(np.ascontiguousarray(a, dtype=np.float64), device=device) for a in args]
    return np.asarray(getattr(pyaccel, name)(*arrs).to_numpy())


def same_bits(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Elementwise: the same bits, or both NaN (any NaN payload)."""
    want = np.asarray(want)
    if want.dtype.kind != "f":
        return got == want
    w = want.view(np.uint64 if want.itemsize == 8 else np.uint32)
    g = got.view(w.dtype)
    return (g == w) | (np.isnan(got) & np.isnan(want))


def mismatches(got: np.ndarray, want: np.ndarray, *ins: np.ndarray, limit: int = 8) -> str:
    """A readable list of the first mismatches (operands, got, want, as hex and repr)."""
    bad = np.flatnonzero(~same_bits(got, want))[:limit]

    def h(v: Any) -> str:
        v = np.asarray(v)
        return f"{v!r}/0x{int(v.view(np.uint64 if v.itemsize == 8 else np.uint32)):x}"

    return "\n".join(f"  in={[h(a[i]) for a in ins]} got={h(got[i])} want={h(np.asarray(want)[i])}"
                     for i in bad)


def ulp_error(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in units of the last place of ``want`` (float64; NaN/inf must match)."""
    got = got.astype(np.float64)
    want = want.astype(np.float64)
    same_special = (np.isnan(got) & np.isnan(want)) | (got == want)
    spacing = np.spacing(np.abs(want))
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(got - want) / spacing
    err = np.where(same_special, 0.0, err)
    return np.where(np.isfinite(err), err, np.inf)
