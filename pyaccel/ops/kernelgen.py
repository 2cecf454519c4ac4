"""Generate and launch elementwise-skeleton kernels (``elementwise.wgsl``) from op-table rows.

A kernel is identified by (expression, compute type, output dtype, operand modes,
store mode); :func:`source` builds its WGSL once (memoised) with
``ops.launch.specialize`` aliases and a generated ``compute``/``dst`` pair, and the
device caches the pipeline by source. :func:`plan` does everything that depends only on
the launch's signature (operand modes, dtypes, offsets, strides and buffer sizes, the
shape): it merges dims, builds the source, sizes the grid (``grid_1d``: more than 65535
workgroups spread over y) and packs the parameter block with the scalar slots open; the
:class:`Plan` is memoised, so a repeat launch only packs its scalars and records one
dispatch (:meth:`Plan.record`; no submit, no wait). :func:`run` is plan + record.

Operands (:class:`Operand`) are device buffers with an element offset and strides over
the iteration shape (0 = broadcast, negative = reversed), Python scalars carried in the
parameter block (no upload), or an indexed gather (``x0[o.x + x1[o.y]]``).
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._shapes import contiguous_strides
from ..device import Buffer, Device
from ..dtypes import (
    DTYPE_TABLE,
    MULTI_LANE,
    MULTI_LANE_ORDER,
    WGSL_FUNCTIONS,
    DType,
    bool_,
    float32,
    int32,
    uint32,
)
from . import launch

MAXD = 8
_SLOTS = "xyzw"
_VARS = ("x", "y", "z")


# Multi-lane dtypes (emulated 64-bit, complex): their *tag* is the dtype name (several
# dtypes share one WGSL storage type, e.g. vec2<u32>), their functions' prefix the row's
# (``i64``), their WGSL type the row's storage type.
_ML_PREFIX = {d.name: r.prefix.rstrip("_") for d, r in MULTI_LANE.items() if r.prefix}
_ML_WGSL = {d.name: r.wgsl_storage for d, r in MULTI_LANE.items()}
_ML_RANK = {d.name: j for j, d in enumerate(MULTI_LANE_ORDER)}
_ML_LIB = {d.name: r.functions for d, r in MULTI_LANE.items()}


def is_wide(tag: str) -> bool:
    """True for a multi-lane tag (a dtype name such as ``"int64"``)."""
    return tag in _ML_WGSL


def wgsl_type(tag: str) -> str:
    """The WGSL type of a storage / compute tag (a multi-lane dtype name maps to its storage)."""
    return _ML_WGSL.get(tag, tag)


def storage_tag(dt: DType) -> str:
    """A buffer operand's storage tag: the WGSL scalar type, or the dtype name (multi-lane)."""
    return dt.name if dt in MULTI_LANE else dt.wgsl  # type: ignore[return-value]


def compute_type(dt: DType) -> str:
    """The tag an op on ``dt`` computes in: the dtype table's 32-bit ``wgsl_compute``
    (float16 computes in f32), or the dtype name for a multi-lane dtype (``"int64"``:
    ``vec2<u32>`` words through the ``i64_`` functions)."""
    if dt in MULTI_LANE:
        return dt.name
    t = DTYPE_TABLE[dt].wgsl_compute
    if t is not None:
        return t
    return "f32" if dt.kind == "f" else "i32" if dt.kind == "i" else "u32"


def scalar_t32(dt: DType) -> DType:
    """The 32-bit dtype whose bit pattern carries a scalar of ``dt`` in a parameter block
    (the dtype of ``dt``'s compute type; bool stays bool)."""
    if dt.kind == "b":
        return bool_
    if dt in MULTI_LANE:
        return dt  # carried whole in the block's ``wide`` slots
    return {"f32": float32, "i32": int32, "u32": uint32}[compute_type(dt)]


def cast_expr(src: DType, dst: DType) -> tuple[str, str, str]:
    """(expression, compute type T, operand conversion) copying ``src`` data into ``dst``."""
    if dst.kind == "b":
        return "x", "u32", "bool"
    if src.kind == "f" and dst.kind == "u" and src not in MULTI_LANE and dst not in MULTI_LANE:
        # negative floats wrap like NumPy's casts on common hosts: u32(i32(x))
        return "select(u32(x), u32(i32(x)), x < 0.0)", "f32", "f32"
    t = compute_type(dst)
    return "x", t, t


def kind_of(dt: DType) -> str:
    """Compute kind of the op table: f, i, u, or b (bool)."""
    return "b" if dt.kind == "b" else {"f": "f", "i": "i", "u": "u"}[dt.kind]


_HELPERS = WGSL_FUNCTIONS  # compute type -> WGSL function library (from the dtype table)
# dtype name -> WGSL re-narrowing of a 32-bit result r (widened narrow ints; the dtype table)
_WRAP = {d.name: r.wrap for d, r in DTYPE_TABLE.items() if r.wrap is not None}


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
        return (self.mode, storage_tag(self.dtype) if self.mode != "scalar" else compute_type(self.dtype),
                self.conv)


def buf(b: Buffer, dtype: DType, conv: str, offset: int = 0,
        strides: Sequence[int] | None = None) -> Operand:
    return Operand("buf", dtype, conv, b, offset, None if strides is None else tuple(strides))


def scalar(value: Any, dtype: DType, conv: str) -> Operand:
    return Operand("scalar", dtype, conv, value=value)


def _f32_bits(v: float) -> int:
    if math.isfinite(v) and abs(v) >= 3.4028235677973366e38:
        v = math.copysign(math.inf, v)  # past float32's range (plus half an ULP): inf
    return struct.unpack("<I", struct.pack("<f", v))[0]


def scalar_words(value: Any, dtype: DType) -> tuple[int, ...]:
    """The 32-bit words of a Python scalar in a multi-lane dtype's storage (exact: int64 /
    uint64 wrap like ``astype``, float64 is the double itself, complex as (real, imag))."""
    if dtype.kind in "iu":
        v = int(value) & 0xFFFFFFFFFFFFFFFF
        return (v & 0xFFFFFFFF, v >> 32)
    if dtype.kind == "f":
        return struct.unpack("<2I", struct.pack("<d", float(value)))
    c = complex(value)
    if dtype.itemsize == 8:
        return (_f32_bits(c.real), _f32_bits(c.imag))
    return struct.unpack("<4I", struct.pack("<2d", c.real, c.imag))


def scalar_bits(value: Any, dtype: DType) -> int:
    """32-bit pattern of a Python scalar in the compute type of ``dtype``."""
    t = compute_type(dtype)
    if t == "f32":
        return struct.unpack("<I", struct.pack("<f", float(value)))[0]
    v = int(value)
    return v & 0xFFFFFFFF


def _truth(v: str, tag: str) -> str:
    """WGSL truth value of a multi-lane value (NumPy's ``bool(x)``: -0.0 is False, NaN True)."""
    if tag == "complex64":
        return f"any({v} != vec2<f32>(0.0))"
    if tag == "float64":
        return f"(({v}.x | ({v}.y & 0x7fffffffu)) != 0u)"
    if tag == "complex128":
        return f"((({v}.x | ({v}.y & 0x7fffffffu)) | ({v}.z | ({v}.w & 0x7fffffffu))) != 0u)"
    return f"any({v} != vec2<u32>(0u))"


def convert_call(v: str, src: str, dst: str) -> str:
    """WGSL converting ``v`` from tag ``src`` to tag ``dst`` where either is multi-lane, through
    the contract's conversion functions (``i64_from_i32``, ``f64_to_u32``, ``f64_from_i64``)."""
    S, D = _ML_PREFIX.get(src), _ML_PREFIX.get(dst)
    if S and D:
        if _ML_RANK[dst] > _ML_RANK[src]:
            return f"{D}_from_{S}({v})"
        return f"{S}_to_{D}({v})"
    if D:
        if src == "f16":
            return f"{D}_from_f32(f32({v}))"
        return f"{D}_from_{src}({v})"
    if dst == "f16":
        return f"f16({S}_to_f32({v}))"
    return f"{S}_to_{dst}({v})"


def _convert(v: str, storage: str, conv: str) -> str:
    if conv == "bool":
        if storage in _ML_WGSL:
            return _truth(v, storage)
        if storage in ("f32", "f16"):
            return f"!(f32({v}) == 0.0)"
        zero = "0i" if storage == "i32" else "0u"
        return f"({v} != {zero})"
    if conv == storage:
        return v
    if storage in _ML_WGSL or conv in _ML_WGSL:
        return convert_call(v, storage, conv)
    return f"{conv}({v})"


def _scalar_raw(k: int, tag: str) -> str:
    """WGSL reading scalar operand ``k`` (tag ``tag``) from the parameter block."""
    if tag in _ML_WGSL:
        st = _ML_WGSL[tag]
        if st == "vec4<u32>":
            return f"p.wide[{k}]"
        if st == "vec2<f32>":
            return f"bitcast<vec2<f32>>(p.wide[{k}].xy)"
        return f"p.wide[{k}].xy"
    return f"bitcast<{tag}>(p.aux.{_SLOTS[k]})"


def _requires(lib: str) -> list[str]:
    """Libraries named on a WGSL library's ``// requires:`` lines."""
    out = []
    for line in launch.wgsl_source(lib).splitlines():
        line = line.strip()
        if line.startswith("// requires:"):
            out += [x.strip() for x in line.split(":", 1)[1].split(",") if x.strip()]
    return out


@functools.lru_cache(maxsize=256)
def libraries(code: str) -> tuple[str, ...]:
    """The multi-lane WGSL libraries ``code`` calls, with their ``// requires:`` closure."""
    todo = [_ML_LIB[n] for n, pfx in _ML_PREFIX.items()
            if re.search(rf"\b{pfx}_\w+\(", code)]
    seen: list[str] = []
    while todo:
        lib = todo.pop()
        if lib in seen:
            continue
        seen.append(lib)
        todo += _requires(lib)
    return tuple(sorted(seen))


def library_source(code: str) -> str:
    """Concatenated text of the libraries :func:`libraries` finds for ``code``."""
    return "\n".join(launch.wgsl_source(lib) for lib in libraries(code))


@functools.lru_cache(maxsize=4096)
def source(expr: str, T: str, out_wgsl: str, out_name: str, operands: tuple[tuple, ...],
           store: str, helpers: str, linear: bool = False) -> str:
    """WGSL of one kernel: aliases + helper library + skeleton + generated compute/dst.

    ``linear``: every buffer operand is read at the output index (``x_k[i]``: contiguous,
    same shape, no offset) so the strided offsets are dead code and loads vectorise.
    """
    aliases = {"T": wgsl_type(T), "R": out_wgsl}
    lines = []
    for k in range(3):
        st = operands[k][1] if k < len(operands) and operands[k][0] != "scalar" else "u32"
        aliases[f"A{k}"] = wgsl_type(st)
    var = 0
    for k, (mode, storage, conv) in enumerate(operands):
        if mode == "index":
            continue
        name = _VARS[var]
        var += 1
        if not re.search(rf"\b{name}\b", expr):
            continue
        if mode == "scalar":
            raw = _scalar_raw(k, storage)
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
    return launch.specialize(library_source(gen) + "\n" + body + "\n" + gen, **aliases)


VEC_MIN = 1024  # elements from which a contiguous kernel handles 4 per invocation
# WGSL characters past which a multi-lane kernel has no contiguous variant (_wide_kernel)
WIDE_LINEAR_MAX = 12_000


def _names(operands: tuple[tuple, ...]) -> list[tuple[int, str]]:
    """(operand index, expression variable) of the value operands (index buffers have none)."""
    out = []
    for k, (mode, _, _) in enumerate(operands):
        if mode != "index":
            out.append((k, _VARS[len(out)]))
    return out


@functools.lru_cache(maxsize=1024)
def vec_source(expr: str, T: str, out_wgsl: str, out_name: str, operands: tuple[tuple, ...],
               helpers: str) -> tuple[str, frozenset[int]]:
    """(WGSL, bound bindings) of a contiguous kernel that handles 4 elements per invocation.

    For the ``linear`` case of :func:`source` with 32-bit storage and a multiple of 4
    elements: buffers are read and written as ``vec4`` (one 16-byte load per operand and
    one store per invocation, a quarter of the invocations); the row's expression runs per
    lane on scalars, exactly as in the skeleton, with ``i`` the element index. On lavapipe
    this halves the time of a large ``x + y`` (the per-invocation work of the generic
    skeleton, not the memory, bounds it there). Same bindings and parameter block as
    ``elementwise.wgsl`` (its ``Params`` struct is copied from that file).
    """
    skel = launch.wgsl_source("elementwise")
    start = skel.index("struct Params {")
    params = skel[start: skel.index("}", start) + 1]
    aliases = {"T": T, "R": out_wgsl}
    for k in range(3):
        aliases[f"A{k}"] = operands[k][1] if k < len(operands) and operands[k][0] != "scalar" else "u32"
    decl, args, lets, used = [], [], [], set()
    for k, name in _names(operands):
        if not re.search(rf"\b{name}\b", expr):
            continue
        mode, storage, conv = operands[k]
        if mode == "scalar":
            raw = f"bitcast<{storage}>(p.aux.{_SLOTS[k]})"
        else:
            used.add(2 + k)
            decl.append(f"@group(0) @binding({2 + k}) var<storage, read> x{k}: array<vec4<A{k}>>;")
            args.append((k, f"a{k}: A{k}"))
            raw = f"a{k}"
        lets.append(f"    let {name} = {_convert(raw, storage, conv)};")
    wrap = _WRAP.get(out_name)
    params_sig = "".join(f", {a}" for _, a in args)
    lanes = []
    for j, comp in enumerate("xyzw"):
        idx = "i" if j == 0 else f"i + {j}u"
        lanes.append(f"ew_lane({idx}{''.join(f', v{k}.{comp}' for k, _ in args)})")
    loads = "".join(f"    let v{k} = x{k}[q];\n" for k, _ in args)
    gen = (
        "override WG: u32 = 256u;\n" + params + "\n"
        "@group(0) @binding(0) var<storage, read_write> out: array<vec4<R>>;\n"
        "@group(0) @binding(1) var<uniform> p: Params;\n" + "\n".join(decl) + "\n"
        f"fn ew_lane(i: u32{params_sig}) -> R {{\n" + "\n".join(lets) + "\n"
        f"    let r = R({expr});\n    return {wrap or 'r'};\n}}\n"
        "@compute @workgroup_size(WG)\n"
        "fn main(@builtin(global_invocation_id) gid: vec3<u32>, "
        "@builtin(num_workgroups) nwg: vec3<u32>) {\n"
        "    let q = gid.x + gid.y * (nwg.x * WG);\n"
        "    if (q >= p.n / 4u) {\n        return;\n    }\n"
        "    let i = q * 4u;\n" + loads +
        f"    out[q] = vec4<R>({', '.join(lanes)});\n}}\n"
    )
    body = (launch.wgsl_source(helpers) if helpers else "") + "\n" + gen
    return launch.specialize(body, **aliases), frozenset(used)


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


_AUX = struct.Struct("<4I")
_WIDE = struct.Struct("<12I")  # wide: array<vec4<u32>, 3>: multi-lane scalar k in wide[k]
_WIDE0 = _WIDE.pack(*[0] * 12)
_HEAD = struct.Struct("<4I")
_TAIL_FMT = "<4I4i32I32i"  # prm | off | shape[8] (.x) | st[8][4]
_PLAN_CACHE = 2048  # launch plans kept per device (Device.memo; least recently used evicted)
_plan_ids = itertools.count(1)


class Plan:
    """Everything about one kernel launch that does not depend on which buffers it runs on
    or on the values of its scalar operands: the pipeline, the parameter block (with the
    scalar slots left open), the bindings and the grid. :meth:`record` then only packs the
    scalars (if any), looks up the uniform and records the dispatch."""

    __slots__ = ("impl", "pipe", "params", "head", "tail", "scal", "slots", "bufs", "binds", "key", "wg")

    def __init__(self, impl: Any, pipe: Any, head: bytes, tail: bytes, scal: tuple[tuple[int, DType], ...],
                 bufs: tuple[int, ...], binds: tuple[tuple[int, int], ...],
                 wg: tuple[int, int, int], slots: tuple[int, ...] = ()) -> None:
        self.impl = impl
        self.pipe = pipe
        self.head = head
        self.tail = tail
        self.params = (head + _AUX.pack(0, 0, 0, 0) + tail + _WIDE0
                       if len(slots) == len(scal) else None)
        self.scal = scal  # (operand index, scalar dtype) of every scalar operand
        # positions in scal of the scalars read from a buffer (bound after the buffers in
        # bufs, see _wide_kernel), not from the parameter block
        self.slots = slots
        self.bufs = bufs  # operand indexes of the bound buffers, in binding order
        self.binds = binds  # (binding, size) of out, params, each bound buffer, each slot
        self.key = next(_plan_ids)  # names this (pipeline, bindings) in the bind-group cache
        self.wg = wg

    def record(self, out: Any, handles: Sequence[Any], values: Sequence[Any] = ()) -> None:
        """Record the dispatch writing ``out`` (a GPUBuffer) from the bound buffers ``handles``
        (GPUBuffers of the operands in :attr:`bufs`) and the scalar ``values`` (of :attr:`scal`).
        The caller holds the device lock."""
        params = self.params
        impl = self.impl
        if self.slots:  # (each a cached block: the next uniform() cannot evict it)
            handles = (*handles, *(impl.uniform(_scalar_bytes(values[j], self.scal[j][1]))
                                   for j in self.slots))
        if params is None:
            aux = [0, 0, 0, 0]
            wide = None
            for j, ((k, dt), v) in enumerate(zip(self.scal, values, strict=True)):
                if j in self.slots:
                    continue
                if dt in MULTI_LANE:
                    if wide is None:
                        wide = [0] * 12
                    w = scalar_words(v, dt)
                    wide[4 * k: 4 * k + len(w)] = w
                else:
                    aux[k] = scalar_bits(v, dt)
            params = (self.head + _AUX.pack(*aux) + self.tail
                      + (_WIDE0 if wide is None else _WIDE.pack(*wide)))
        impl.dispatch_bound(self.pipe, self.key, self.binds, (out, impl.uniform(params), *handles),
                            self.wg)


def plan(device: Device, expr: str, T: str, out_nbytes: int, out_dtype: DType,
         operands: Sequence[Operand], shape: Sequence[int], *, out_offset: int = 0,
         out_strides: Sequence[int] | None = None, store: str = "linear",
         prm: Sequence[int] = (0, 0, 0, 0), name: str = "") -> Plan | None:
    """The (memoised) :class:`Plan` of a launch, or None when it needs more than MAXD dims
    after merging (then :func:`run` splits it) or has no elements. Scalar operand values
    and buffer identities are not part of it."""
    plans = device.memo("elementwise_plans", _PLAN_CACHE)
    key = (expr, T, out_nbytes, out_dtype,
           tuple((op.mode, op.dtype, op.conv, op.offset, op.strides,
                  op.buf.nbytes if op.buf is not None else -1) for op in operands),
           tuple(shape), out_offset, None if out_strides is None else tuple(out_strides), store,
           tuple(prm), name)
    try:
        p = plans[key]
    except KeyError:
        return plans.put(key, _make_plan(device, expr, T, out_nbytes, out_dtype, operands, shape,
                                         out_offset, out_strides, store, prm, name))
    plans.move_to_end(key)
    return p


def _make_plan(device: Device, expr: str, T: str, out_nbytes: int, out_dtype: DType,
               operands: Sequence[Operand], shape: Sequence[int], out_offset: int,
               out_strides: Sequence[int] | None, store: str, prm: Sequence[int], name: str) -> Plan | None:
    n = 1
    for d in shape:
        n *= d
    if n == 0:
        return None
    shape = list(shape)
    cstr = contiguous_strides(shape)
    wide = _wide_kernel(T, out_dtype, operands)
    # multi-lane scalars of a wide kernel: read from a stride-0 buffer (see _wide_kernel)
    slot_ops = frozenset()
    if wide and all(op.mode in ("buf", "scalar") for op in operands):
        slot_ops = frozenset(k for k, op in enumerate(operands)
                             if op.mode == "scalar" and op.dtype in MULTI_LANE)
    all_st = []
    for k, op in enumerate(operands):
        all_st.append([0] * len(shape) if k in slot_ops else
                      list(op.strides) if op.strides is not None else list(cstr))
    if store == "linear":
        all_st.append(list(cstr))
    else:
        all_st.append(list(out_strides) if out_strides is not None else list(cstr))
    cshape, cst = collapse(shape, all_st)
    if len(cshape) > MAXD:
        return None
    helpers = _HELPERS.get(T, "") if re.search(r"\b[fiu]_\w+\(", expr) else ""
    linear = store == "linear" and len(cshape) == 1 and all(
        (op.mode == "scalar" and k not in slot_ops) or (op.mode == "buf" and op.offset == 0 and cst[k][0] == 1)
        for k, op in enumerate(operands))
    keys = tuple(("buf", storage_tag(op.dtype), op.conv) if k in slot_ops else op.key()
                 for k, op in enumerate(operands))
    # 4 elements per invocation: contiguous 32-bit data, a multiple of 4 elements, buffers
    # whose bindings are whole vec4s
    # (32-bit storage only: multi-lane elements are already 8 or 16 bytes)
    vec = (linear and n >= VEC_MIN and n % 4 == 0 and out_dtype.wgsl != "f16"
           and out_dtype not in MULTI_LANE and not is_wide(T)
           and out_nbytes % 16 == 0
           and all((op.mode == "scalar" and op.dtype not in MULTI_LANE)
                   or (op.dtype.wgsl != "f16" and op.dtype not in MULTI_LANE
                       and op.buf is not None and op.buf.nbytes % 16 == 0) for op in operands))
    if vec:
        src, used = vec_source(expr, T, out_dtype.wgsl, out_dtype.name, keys, helpers)
    else:
        src = source(expr, T, out_dtype.wgsl, out_dtype.name, keys, store, helpers, linear)
        if wide and linear and len(src) > WIDE_LINEAR_MAX:
            # a big emulated kernel (float64 / complex transcendentals): one source for every
            # layout, the strided one (see _wide_kernel)
            linear = False
            src = source(expr, T, out_dtype.wgsl, out_dtype.name, keys, "strided", helpers, False)
        used = _used_bindings(src)
    offs = [0, 0, 0, out_offset]
    scal = []
    slots = []
    for k, op in enumerate(operands):
        if op.mode == "scalar":
            if k in slot_ops:
                slots.append(len(scal))
            scal.append((k, op.dtype))
        else:
            offs[k] = op.offset
    shp = [v for d in cshape + [1] * (MAXD - len(cshape)) for v in (d, 0, 0, 0)]
    st_flat: list[int] = []
    for d in range(MAXD):  # st[d] = strides of dim d for (x0, x1, x2, out)
        for k in range(4):
            row = cst[-1] if k == 3 else (cst[k] if k < len(operands) else [])
            st_flat.append(row[d] if d < len(row) else 0)
    head = _HEAD.pack(n, len(cshape), 0, 0)
    tail = struct.pack(_TAIL_FMT, *[int(v) & 0xFFFFFFFF for v in prm], *offs, *shp, *st_flat)
    impl = device.impl
    pipe = launch.pipeline(impl, src, "main", None, name or "elementwise")
    bufs = tuple(k for k, op in enumerate(operands)
                 if op.mode != "scalar" and op.buf is not None and (2 + k) in used)
    slots = [j for j in slots if (2 + scal[j][0]) in used]
    binds = ((0, launch.binding_size(out_nbytes)), (1, len(head) + _AUX.size + len(tail) + _WIDE.size),
             *((2 + k, _bsize(operands[k].buf)) for k in bufs),
             *((2 + scal[j][0], launch.binding_size(scal[j][1].itemsize)) for j in slots))
    return Plan(impl, pipe, head, tail, tuple(scal), bufs, binds,
                launch.grid_1d(device, n // 4 if vec else n), tuple(slots))


def _wide_kernel(T: str, out_dtype: DType, operands: Sequence[Operand]) -> bool:
    """Whether a launch computes or moves a multi-lane dtype (int64, uint64, float64, complex:
    emulated in WGSL). Those kernels take seconds to compile on software GPUs (LLVM inlines
    every soft-float call), so they have two sources per op and dtypes: the contiguous one
    (every operand read at the output index) and the strided one for everything else, where
    multi-lane Python scalars are read from a stride-0 buffer (a cached uniform block bound
    as storage, :class:`Plan`) instead of compiling a variant per scalar position: on float64,
    ``x[::2] * y``, ``x * y[:1]``, ``x * 2.0`` and ``2.0 * x`` share one pipeline, ``x * y``
    (contiguous) has the other. Kernels past :data:`WIDE_LINEAR_MAX` characters (the
    float64 / complex transcendentals, 20-35k; the arithmetic is 2-8k) have only the
    strided source: there the emulated math dominates (float64 ``exp`` at 2^20 elements:
    1.05x the contiguous kernel's time on lavapipe) and each compile takes seconds, while
    for the cheap ops the contiguous variant pays (a float64 add: 1.7x faster)."""
    return is_wide(T) or out_dtype in MULTI_LANE or any(op.dtype in MULTI_LANE for op in operands)


def run(device: Device, expr: str, T: str, out: Buffer, out_dtype: DType, operands: Sequence[Operand],
        shape: Sequence[int], *, out_offset: int = 0, out_strides: Sequence[int] | None = None,
        store: str = "linear", prm: Sequence[int] = (0, 0, 0, 0), name: str = "") -> None:
    """Record the kernel computing ``expr`` over ``shape`` into ``out`` (see module docstring)."""
    n = 1
    for d in shape:
        n *= d
    if n == 0:
        return
    p = plan(device, expr, T, out.nbytes, out_dtype, operands, shape, out_offset=out_offset,
             out_strides=out_strides, store=store, prm=prm, name=name)
    if p is not None:
        out_h = out.handle
        handles = [operands[k].buf.handle for k in p.bufs]  # type: ignore[union-attr]
        values = [operands[k].value for k, _ in p.scal]
        lock = launch.device_lock(device)
        if launch.lock_held(lock):  # (the calling op holds it, as a rule)
            p.record(out_h, handles, values)
        else:
            with lock:
                p.record(out_h, handles, values)
        return
    # more than MAXD non-mergeable dims (rare): one dispatch per index of the leading dim
    shape = list(shape)
    cstr = contiguous_strides(shape)
    all_st = [list(op.strides) if op.strides is not None else list(cstr) for op in operands]
    if store == "linear":
        all_st.append(list(cstr))
    else:
        all_st.append(list(out_strides) if out_strides is not None else list(cstr))
    cshape, cst = collapse(shape, all_st)
    lead, rest = cshape[0], cshape[1:]
    for j in range(lead):
        ops_rest = [
            Operand(op.mode, op.dtype, op.conv, op.buf, op.offset + j * cst[k][0],
                    tuple(cst[k][1:]), op.value)
            for k, op in enumerate(operands)
        ]
        run(device, expr, T, out, out_dtype, ops_rest, rest,
            out_offset=out_offset + j * cst[-1][0], out_strides=cst[-1][1:],
            store="strided" if store == "linear" else store, prm=prm, name=name)


def _scalar_bytes(value: Any, dtype: DType) -> bytes:
    w = scalar_words(value, dtype)
    return struct.pack(f"<{len(w)}I", *w)


@functools.lru_cache(maxsize=4096)
def _used_bindings(src: str) -> frozenset[int]:
    gen = src[src.rindex("fn compute("):]
    return frozenset(2 + k for k in range(3) if re.search(rf"\bx{k}\[", gen))


def _bsize(b: Buffer) -> int:
    return launch.binding_size(b.nbytes)




__all__ = ["MAXD", "Operand", "Plan", "buf", "cast_expr", "collapse", "compute_type", "contiguous_strides",
           "kind_of", "plan", "run", "scalar", "scalar_t32", "source", "vec_source"]
