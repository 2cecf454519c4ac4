"""Generate and launch elementwise-skeleton kernels (``elementwise.wgsl``) from op-table rows.

A kernel is identified by (expression, compute type, output dtype, operand modes,
store mode); :func:`source` builds its WGSL once (memoised) with
``ops.launch.specialize`` aliases and a generated ``compute``/``dst`` pair, and the
device caches the pipeline by source. :func:`run` sizes the grid (``grid_1d``: more
than 65535 workgroups spread over y), packs the parameter block and records one
dispatch per call (no submit, no wait).

Operands (:class:`Operand`) are device buffers with an element offset and strides over
the iteration shape (0 = broadcast, negative = reversed), Python scalars carried in the
parameter block (no upload), or an indexed gather (``x0[o.x + x1[o.y]]``).
"""

from __future__ import annotations

import functools
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..device import Buffer, Device
from ..dtypes import DType, int8, int16, uint8, uint16
from . import launch

MAXD = 8
_SLOTS = "xyzw"
_VARS = ("x", "y", "z")
_PARAMS_FMT = "4I4I4I4i32I32i"  # n, ndim, pad, pad | aux | prm | off | shape[8] (.x) | st[8][4]


def compute_type(dt: DType) -> str:
    """The 32-bit WGSL type an op on ``dt`` computes in (float16 computes in f32)."""
    if dt.kind == "f":
        return "f32"
    if dt.kind == "i":
        return "i32"
    return "u32"


def kind_of(dt: DType) -> str:
    """Compute kind of the op table: f, i, u, or b (bool)."""
    return "b" if dt.kind == "b" else {"f": "f", "i": "i", "u": "u"}[dt.kind]


_HELPERS = {"f32": "ew_float", "i32": "ew_sint", "u32": "ew_uint"}
# (device impl, source) -> pipeline: skips re-hashing the source on every call
_PIPES: dict[tuple[Any, str], Any] = {}
_WRAP = {
    int8.name: "(r << 24u) >> 24u",
    int16.name: "(r << 16u) >> 16u",
    uint8.name: "r & 0xffu",
    uint16.name: "r & 0xffffu",
}


@dataclass(frozen=True)
class Operand:
    """An input of a kernel.

    mode: ``"buf"`` (strided device buffer), ``"scalar"`` (value in the parameter
    block), ``"gather"`` (``x_k[o + index]`` with the index from the next operand),
    ``"index"`` (an int32 index buffer read by a gather operand or by the store).
    conv: the type the operand is converted to before the expression: a WGSL scalar
    type or ``"bool"`` (truth value).
    """

    mode: str
    dtype: DType  # storage dtype (buffers) or value dtype (scalars)
    conv: str
    buf: Buffer | None = None
    offset: int = 0
    strides: tuple[int, ...] | None = None  # None: C-contiguous over the iteration shape
    value: Any = None

    def key(self) -> tuple:
        return (self.mode, self.dtype.wgsl if self.mode != "scalar" else compute_type(self.dtype),
                self.conv)


def buf(b: Buffer, dtype: DType, conv: str, offset: int = 0,
        strides: Sequence[int] | None = None) -> Operand:
    return Operand("buf", dtype, conv, b, offset, None if strides is None else tuple(strides))


def scalar(value: Any, dtype: DType, conv: str) -> Operand:
    return Operand("scalar", dtype, conv, value=value)


def scalar_bits(value: Any, dtype: DType) -> int:
    """32-bit pattern of a Python scalar in the compute type of ``dtype``."""
    t = compute_type(dtype)
    if t == "f32":
        return struct.unpack("<I", struct.pack("<f", float(value)))[0]
    v = int(value)
    return v & 0xFFFFFFFF


def _convert(v: str, storage: str, conv: str) -> str:
    if conv == "bool":
        if storage in ("f32", "f16"):
            return f"!(f32({v}) == 0.0)"
        zero = "0i" if storage == "i32" else "0u"
        return f"({v} != {zero})"
    if conv == storage:
        return v
    return f"{conv}({v})"


@functools.lru_cache(maxsize=4096)
def source(expr: str, T: str, out_wgsl: str, out_name: str, operands: tuple[tuple, ...],
           store: str, helpers: str, linear: bool = False) -> str:
    """WGSL of one kernel: aliases + helper library + skeleton + generated compute/dst.

    ``linear``: every buffer operand is read at the output index (``x_k[i]``: contiguous,
    same shape, no offset) so the strided offsets are dead code and loads vectorise.
    """
    aliases = {"T": T, "R": out_wgsl}
    lines = []
    for k in range(3):
        st = operands[k][1] if k < len(operands) and operands[k][0] != "scalar" else "u32"
        aliases[f"A{k}"] = st
    var = 0
    for k, (mode, storage, conv) in enumerate(operands):
        if mode == "index":
            continue
        name = _VARS[var]
        var += 1
        if not re.search(rf"\b{name}\b", expr):
            continue
        if mode == "scalar":
            raw = f"bitcast<{storage}>(p.aux.{_SLOTS[k]})"
        elif mode == "gather":
            raw = f"x{k}[o.{_SLOTS[k]} + x{k + 1}[o.{_SLOTS[k + 1]}]]"
        elif linear:
            raw = f"x{k}[i]"
        else:
            raw = f"x{k}[o.{_SLOTS[k]}]"
        lines.append(f"    let {name} = {_convert(raw, storage, conv)};")
    wrap = _WRAP.get(out_name)
    lines.append(f"    let r = {out_wgsl}({expr});")
    lines.append(f"    return {wrap or 'r'};")
    if store == "linear":
        dst = "i32(i)"
    elif store == "strided":
        dst = "o.w"
    else:  # "index": o.w + index buffer x1
        dst = "o.w + x1[o.y]"
    gen = (
        "fn compute(i: u32, o: vec4<i32>) -> R {\n" + "\n".join(lines) + "\n}\n"
        f"fn dst(i: u32, o: vec4<i32>) -> i32 {{\n    return {dst};\n}}\n"
    )
    body = (launch.wgsl_source(helpers) if helpers else "") + "\n" + launch.wgsl_source("elementwise")
    return launch.specialize(body + "\n" + gen, **aliases)


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    out = []
    s = 1
    for d in reversed(shape):
        out.append(s)
        s *= d
    return tuple(reversed(out))


def collapse(shape: Sequence[int], strides: Sequence[Sequence[int]]) -> tuple[list[int], list[list[int]]]:
    """Drop size-1 dims and merge dims that are contiguous for every operand."""
    dims = [(n, [st[d] for st in strides]) for d, n in enumerate(shape) if n != 1]
    if not dims:
        return [], [[] for _ in strides]
    out_shape = [dims[0][0]]
    out_st = [[s] for s in dims[0][1]]
    for n, sts in dims[1:]:
        if all(out_st[k][-1] == sts[k] * n for k in range(len(strides))):
            out_shape[-1] *= n
            for k in range(len(strides)):
                out_st[k][-1] = sts[k]
        else:
            out_shape.append(n)
            for k in range(len(strides)):
                out_st[k].append(sts[k])
    return out_shape, out_st


def run(device: Device, expr: str, T: str, out: Buffer, out_dtype: DType, operands: Sequence[Operand],
        shape: Sequence[int], *, out_offset: int = 0, out_strides: Sequence[int] | None = None,
        store: str = "linear", prm: Sequence[int] = (0, 0, 0, 0), name: str = "") -> None:
    """Record the kernel computing ``expr`` over ``shape`` into ``out`` (see module docstring)."""
    n = 1
    for d in shape:
        n *= d
    if n == 0:
        return
    shape = list(shape)
    cstr = contiguous_strides(shape)
    all_st = []
    for op in operands:
        all_st.append(list(op.strides) if op.strides is not None else list(cstr))
    if store == "linear":
        all_st.append(list(cstr))
    else:
        all_st.append(list(out_strides) if out_strides is not None else list(cstr))
    cshape, cst = collapse(shape, all_st)
    if len(cshape) > MAXD:
        # split the leading dim: one dispatch per index (rare: > 8 non-mergeable dims)
        lead, rest = cshape[0], cshape[1:]
        ops_rest = []
        for j in range(lead):
            ops_rest = [
                Operand(op.mode, op.dtype, op.conv, op.buf, op.offset + j * cst[k][0],
                        tuple(cst[k][1:]), op.value)
                for k, op in enumerate(operands)
            ]
            run(device, expr, T, out, out_dtype, ops_rest, rest,
                out_offset=out_offset + j * cst[-1][0], out_strides=cst[-1][1:],
                store="strided" if store == "linear" else store, prm=prm, name=name)
        return
    helpers = _HELPERS[T] if re.search(r"\b[fiu]_\w+\(", expr) else ""
    linear = store == "linear" and len(cshape) == 1 and all(
        op.mode == "scalar" or (op.mode == "buf" and op.offset == 0 and cst[k][0] == 1)
        for k, op in enumerate(operands))
    src = source(expr, T, out_dtype.wgsl, out_dtype.name, tuple(op.key() for op in operands),
                 store, helpers, linear)
    aux = [0, 0, 0, 0]
    offs = [0, 0, 0, out_offset]
    for k, op in enumerate(operands):
        if op.mode == "scalar":
            aux[k] = scalar_bits(op.value, op.dtype)
        else:
            offs[k] = op.offset
    shp = [v for d in cshape + [1] * (MAXD - len(cshape)) for v in (d, 0, 0, 0)]
    st_flat: list[int] = []
    for d in range(MAXD):  # st[d] = strides of dim d for (x0, x1, x2, out)
        for k in range(4):
            row = cst[-1] if k == 3 else (cst[k] if k < len(operands) else [])
            st_flat.append(row[d] if d < len(row) else 0)
    params = struct.pack("<" + _PARAMS_FMT, n, len(cshape), 0, 0, *aux, *[int(v) & 0xFFFFFFFF for v in prm],
                         *offs, *shp, *st_flat)
    impl = device.impl
    pipe = _PIPES.get((impl, src))
    if pipe is None:
        pipe = _PIPES[(impl, src)] = impl.pipeline(src, "main", None, name or "elementwise")
    entries = [(0, out.handle, 0, _bsize(out))]
    entries.append((1, impl.uniform(params), 0, len(params)))
    used = _used_bindings(src)
    for k, op in enumerate(operands):
        if op.mode != "scalar" and op.buf is not None and (2 + k) in used:
            entries.append((2 + k, op.buf.handle, 0, _bsize(op.buf)))
    with device._lock:
        impl.dispatch(pipe, entries, launch.grid_1d(device, n))


@functools.lru_cache(maxsize=4096)
def _used_bindings(src: str) -> frozenset[int]:
    gen = src[src.rindex("fn compute("):]
    return frozenset(2 + k for k in range(3) if re.search(rf"\bx{k}\[", gen))


def _bsize(b: Buffer) -> int:
    return max(4, (b.nbytes + 3) & ~3)




__all__ = ["MAXD", "Operand", "buf", "collapse", "compute_type", "contiguous_strides", "kind_of",
           "run", "scalar", "source"]
