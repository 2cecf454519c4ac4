"""Lazy elementwise fusion on WebGPU devices (docs/fusion.md).

With fusion on (the default on GPU devices; ``PYACCEL_FUSION=0``, :func:`set_fusion` or the
:func:`fusion` context manager turn it off), an elementwise op whose dtypes are fusable
(float32, int32, uint32, bool, int8 / int16 / uint8 / uint16, float16; or a multi-lane
dtype, ``dtypes.MULTI_LANE``, for the cheap rows: :func:`wide_cheap`)
does not dispatch:
``WgslOps.elementwise`` calls :func:`defer` (``astype``: :func:`defer_cast`), which returns an Array whose ``_lazy`` slot holds a :class:`Node` (the op
table row's expression, its compute type, and its operands: plain arrays, Python scalars or
other lazy arrays). The namespace's checks (dtypes, categories, broadcasting, scalar ranges)
have run before, so errors raise at the op that received the bad input.

A lazy array is *materialised* (:func:`materialize`: one generated kernel computing its
whole tree, written into a new buffer) when its buffer is needed: ``Array._base`` /
``_buf`` (every non-fusable op, reads, views, ``Kernel`` calls, DLPack/extras export), an
in-place write into a buffer it reads (:func:`before_write`), or when a new node would pass
the size limits (:data:`MAX_OPS` ops, or more distinct input buffers than the device's
``max_storage_buffers_per_stage`` minus one). Multi-consumer rule: a lazy array is
recomputed inside each consumer's kernel while its tree has at most :data:`RECOMPUTE_OPS`
ops; a bigger one is materialised when its second consumer is made. Inside one kernel a node
reached twice is computed once.

``reshape`` of a lazy array is lazy too (:func:`defer_reshape`: a :class:`ReshapeNode`, a
view of its source that gets the source's buffer when the source gets one) where every leaf's
strides survive it.

Reductions consume a lazy input without materialising it (:mod:`.fusion_reduce`: the
reduction kernel computes the tree from :func:`_walk` / :func:`_compute`).

Generated kernels are cached per device by structure (:func:`_collect`'s key: the trees'
expressions, compute types, operand conversions, input storage types and layout classes
``lin`` / ``s0`` (one element broadcast) / ``bc`` (broadcast with strides), the vec4 mode);
scalars, sizes, shapes and strides travel in the uniform parameter block, never in source.
"""

from __future__ import annotations

import functools
import itertools
import re
import struct
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .._flags import check_flag, env_flag
from .._shapes import broadcast_strides, contiguous_strides, prod, reshape_strides
from ..array import Array
from ..dtypes import DTYPE_TABLE, MULTI_LANE, REAL_OF, WGSL_ENABLE, DType, bool_
from . import kernelgen as _k
from . import launch

ENV = "PYACCEL_FUSION"
# float32, int32, uint32, bool, the narrow integers (stored widened to 32 bits, every
# result wrapped to the narrow type as the eager kernels do: the dtype table's ``wrap``) and
# float16 (stored as f16 where the device has shader-f16, computed in f32: every float16
# node returns ``f16(value)``, the rounding the eager kernel does at its store)
FUSABLE: frozenset[DType] = frozenset(d for d in DTYPE_TABLE if d not in MULTI_LANE)
# The multi-lane dtypes (dtypes.MULTI_LANE, emulated in WGSL: 64-bit integers and the soft
# 64-bit float as vec2<u32>, the complex ones as vec2<f32> / vec4<u32>) fuse for the cheap rows
# only: their kernels are big (the 64-bit float pow is 28k characters of WGSL, its exp 21k: 1.2 s to compile on
# lavapipe), and every distinct tree is a new kernel, so a transcendental would be compiled
# again for every tree it appears in. The rule (docs/fusion.md, "Multi-lane dtypes", with
# the measured sizes and compile times): a row fuses on a multi-lane dtype when it is one of
# WIDE_ROWS and its eager kernel's pruned WGSL on that dtype is at most WIDE_SRC_MAX
# characters (:func:`wide_cheap`); every other row stays eager there (and materialises its
# lazy inputs). Casts between any two of FUSABLE | WIDE fuse (defer_cast).
WIDE: frozenset[DType] = frozenset(MULTI_LANE)
WIDE_ROWS: frozenset[str] = frozenset({
    "add", "subtract", "multiply", "negative", "positive", "abs", "sign", "square",
    "divide", "reciprocal", "sqrt", "floor", "ceil", "trunc", "round",
    "maximum", "minimum", "copysign", "signbit", "isnan", "isinf", "isfinite",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "where", "logical_not", "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert",
    "bitwise_left_shift", "bitwise_right_shift", "real", "imag", "conj",
})
WIDE_SRC_MAX = 9000  # characters of pruned WGSL (a 64-bit float multiply: 6,177; a 128-bit complex one: 8,188)
MAX_OPS = 32  # ops in one fused tree
MAX_WIDE_OPS = 8  # multi-lane ops (casts included) in one fused tree
RECOMPUTE_OPS = 4  # a lazy array of at most this many ops is recomputed in each consumer
_KERNEL_CACHE = 512
STATS = {"nodes": 0, "kernels_compiled": 0, "launches": 0}

_GLOBAL = [env_flag(ENV)]
_local = threading.local()


def enabled() -> bool:
    """Whether elementwise ops on GPU devices fuse in this thread now."""
    v = getattr(_local, "on", None)
    return _GLOBAL[0] if v is None else v


def set_fusion(on: bool) -> None:
    """Turn lazy elementwise fusion on or off for every thread (default: ``PYACCEL_FUSION``,
    on unless it is ``0``). Arrays that are already lazy stay lazy until they are needed."""
    _GLOBAL[0] = check_flag("set_fusion", on)  # type: ignore[assignment]


@contextmanager
def fusion(on: bool = True) -> Iterator[None]:
    """``with pyaccel.fusion(False): ...`` runs the block with fusion off (or on) in this
    thread, then restores the previous setting."""
    flag = check_flag("fusion", on)
    old = getattr(_local, "on", None)
    _local.on = flag
    try:
        yield
    finally:
        _local.on = old


class Node:
    """The value of a lazy array: ``fn`` (expression, compute type, result storage type,
    operand conversions) applied to ``ins`` (Arrays, lazy or not, and ``_Scalar``s)."""

    __slots__ = ("fn", "ins", "nops", "wide", "leaves", "nusers", "users", "lock", "dev", "mm", "aliases")

    def __init__(self, fn: tuple | None, ins: list[Any], nops: int, leaves: frozenset[int], dev: Any,
                 mm: int = 0, wide: frozenset[int] = frozenset()) -> None:
        self.fn = fn
        self.ins = ins
        self.nops = nops
        # tokens of the distinct multi-lane nodes of the tree (at most MAX_WIDE_OPS; a node
        # reached twice is one op of the kernel)
        self.wide = wide
        self.leaves = leaves
        self.nusers = 0
        self.users: dict[int, weakref.ref[Array]] = {}  # lazy consumers (id -> weak ref)
        self.dev = dev
        self.lock = launch.device_lock(dev)
        # the token of the deferred matmul the tree holds (ops/fusion_matmul.py; 0: none)
        self.mm = mm
        # lazy reshapes of this array (id -> weak ref): they get its buffer when it gets one
        self.aliases: dict[int, weakref.ref[Array]] | None = None


_mm_ids = itertools.count(1)
_wide_ids = itertools.count(1)
# fusion_matmul.launch, set when that module is imported (it makes every MatmulNode)
_MATMUL_LAUNCH: list[Any] = [None]


class MatmulNode(Node):
    """The value of a deferred matmul (:mod:`.fusion_matmul`): ``a @ b`` over the contiguous
    buffers of ``ins`` (two plain Arrays), recorded when it is needed, with the elementwise
    tree that consumes it as the kernel's epilogue when that tree is computed first. Its
    ``nops`` is above :data:`RECOMPUTE_OPS`, so it is never recomputed by two consumers."""

    __slots__ = ("dims",)

    def __init__(self, ins: list[Array], dims: tuple, dev: Any) -> None:
        super().__init__(None, ins, RECOMPUTE_OPS + 1, frozenset(id(a._b) for a in ins), dev, next(_mm_ids))
        self.dims = dims  # (dtype, batch, M, K, N, a batch stride, b batch stride)


class ReshapeNode(Node):
    """The value of a lazy reshape (:func:`defer_reshape`): the lazy array ``ins[0]`` (a
    plain tree, never a reshape nor a deferred matmul) in the reshaped array's shape, the same
    row-major elements. It stands for a view: when its source gets a buffer (materialised for
    any reason) the reshaped array becomes an array over that buffer (:func:`_resolve`), so
    writes through either reach the other as with an eager reshape. Inside a tree its source
    is walked in the source's shape, and each leaf's strides are carried through the reshape
    (:func:`_lift`). Consumers count on the source's node (:func:`_counted`)."""

    __slots__ = ()

    def __init__(self, src: Array) -> None:
        node = src._lazy
        super().__init__(None, [src], node.nops, node.leaves, node.dev, 0, node.wide)  # type: ignore[union-attr]


class _Scalar:
    __slots__ = ("value", "dtype", "tag", "conv")

    def __init__(self, value: Any, dtype: DType, conv: str) -> None:
        self.value = value
        self.dtype = dtype
        self.tag = _k.compute_type(dtype)  # (a multi-lane dtype: its name, carried in 2 or 4 words)
        self.conv = conv


# Buffer -> {id: weak ref} of the lazy arrays reading it directly (computed before the
# buffer is written in place); an entry leaves when its array is computed or dies
_READERS: weakref.WeakKeyDictionary[Any, dict[int, weakref.ref[Array]]] = weakref.WeakKeyDictionary()
_REG = threading.Lock()


def _register(buf: Any, arr: Array) -> None:
    with _REG:
        s = _READERS.get(buf)
        if s is None:
            s = _READERS[buf] = {}
        k = id(arr)
        s[k] = weakref.ref(arr, lambda _r, s=s, k=k: s.pop(k, None))


def _unregister(buf: Any, arr: Array) -> None:
    with _REG:
        s = _READERS.get(buf)
        if s is not None:
            s.pop(id(arr), None)


def before_write(x: Array) -> None:
    """Materialise every lazy array that reads ``x``'s buffer (``x`` itself first, if it is
    lazy): called before the buffer is written in place (setitem, in-place ops, kernels)."""
    buf = x._base
    with _REG:
        s = _READERS.get(buf)
        readers = [r() for r in s.values()] if s else ()
    for a in readers:
        if a is not None and a._lazy is not None:
            materialize(a)


@functools.lru_cache(maxsize=512)
def wide_cheap(name: str, dt: DType) -> bool:
    """Whether the elementwise row ``name`` fuses computing in the multi-lane dtype ``dt``
    (or with its operands in ``dt``: the cheap-set rule of :data:`WIDE_ROWS`): in WIDE_ROWS
    and the pruned WGSL of its eager contiguous kernel on ``dt`` (every operand of ``dt``) is
    at most :data:`WIDE_SRC_MAX` characters."""
    from . import table

    if name not in WIDE_ROWS:
        return False
    row = table.get(name)
    wdt = dt if dt in WIDE else None
    if wdt is None:  # (a 32-bit compute dtype over multi-lane operands: logical ops, casts)
        return True
    return _eager_size(row, wdt) <= WIDE_SRC_MAX


def _eager_size(row: Any, dt: DType) -> int:
    """Characters of the pruned WGSL of ``row``'s eager contiguous kernel on ``dt`` data
    (kernelgen.source, as ``WgslOps.elementwise`` builds it)."""
    bool_args = bool(row.args) and all(a == "bool" for a in row.args)
    T = _k.compute_type(dt) if not row.args or "T" in row.args else "u32"
    expr = row.expr("b") if bool_args else row.wide_expr(MULTI_LANE[dt].prefix or "")
    if expr is None:
        return 0
    if row.result == "bool":
        out = bool_
    elif row.result == "realpart" and dt.kind == "c":
        out = REAL_OF[dt]
    else:
        out = dt
    ops = []
    for j in range(row.arity):
        conv = row.args[j] if row.args else "T"
        conv = T if conv == "T" else conv
        ops.append(("buf", "u32", "bool") if row.name == "where" and j == 0 else ("buf", dt.name, conv))
    src = _k.source(expr, T, out.wgsl, out.name, tuple(ops), "linear", "", True)
    return len(launch.pruned(src, "main"))


def _ok(dt: DType) -> bool:
    return dt in FUSABLE or dt in WIDE


def _too_big(ops: Any, shape: tuple[int, ...], dt: DType) -> bool:
    """Whether a result of ``shape`` and ``dt`` passes one storage binding (the eager path
    raises the typed error at this op)."""
    lim = ops.device.limits
    size = (4 if dt in FUSABLE else ops.layout(dt).itemsize) * prod(shape)
    return size > min(lim.max_buffer_size, lim.max_storage_binding_size)


def defer(ops: Any, row: Any, args: Sequence[Any], shape: tuple[int, ...], cdt: DType,
          out_dt: DType, expr: str, T: str) -> tuple[Array, Any] | None:
    """A lazy result of ``row`` over ``args`` and a memo replaying it, or None when this op
    is not fused (fusion off, a dtype outside :data:`FUSABLE` and :data:`WIDE`, a row outside
    :data:`WIDE_ROWS` on a multi-lane dtype, more than 8 dims)."""
    if not enabled() or not _ok(cdt) or not _ok(out_dt) or len(shape) > _k.MAXD:
        return None
    wide = cdt in WIDE or out_dt in WIDE
    kinds = []
    for k, a in enumerate(args):
        conv = row.args[k] if row.args else "T"
        conv = T if conv == "T" else conv
        if isinstance(a, Array):
            if a._dtype not in FUSABLE:
                if a._dtype not in WIDE:
                    return None
                wide = True
            kinds.append((True, conv, None))
        else:
            kinds.append((False, conv, bool_ if conv == "bool" else _k.scalar_t32(cdt)))
    if wide and not wide_cheap(row.name, cdt):
        return None
    if _too_big(ops, shape, out_dt):
        return None
    fn = (expr, T, _k.storage_tag(out_dt), tuple(c for _, c, _ in kinds), DTYPE_TABLE[out_dt].wrap)
    tmpl = _Template(ops.device, row, cdt, fn, tuple(kinds), shape, out_dt, int(wide))
    with tmpl.lock:
        return tmpl._make(args), tmpl


def defer_cast(ops: Any, x: Array, dt: DType) -> Array | None:
    """A lazy ``astype(x, dt)`` (the eager gather's cast: ``kernelgen.cast_expr``, the same
    conversion, expression and wrap), or None when it is not fused (fusion off, a dtype
    outside :data:`FUSABLE` and :data:`WIDE`, more than 8 dims, an empty or too big result).
    Views are leaves read in place, as in every fused tree."""
    shape = x._shape
    if (not enabled() or not _ok(x._dtype) or not _ok(dt) or len(shape) > _k.MAXD
            or prod(shape) == 0 or _too_big(ops, shape, dt)):
        return None
    expr, T, conv = _k.cast_expr(x._dtype, dt)
    fn = (expr, T, _k.storage_tag(dt), (conv,), DTYPE_TABLE[dt].wrap)
    wide = int(x._dtype in WIDE or dt in WIDE)
    tmpl = _Template(ops.device, None, x._dtype, fn, ((True, conv, None),), shape, dt, wide)
    with tmpl.lock:
        return tmpl._make([x])


class _Template:
    """The memo of one fused elementwise signature (``elementwise._apply``'s fast path)."""

    __slots__ = ("dev", "row", "cdt", "fn", "kinds", "shape", "dt", "lock", "max_leaves", "wide")

    def __init__(self, dev: Any, row: Any, cdt: DType, fn: tuple, kinds: tuple, shape: tuple[int, ...],
                 dt: DType, wide: int = 0) -> None:
        self.dev = dev
        self.row = row
        self.cdt = cdt
        self.fn = fn
        self.kinds = kinds
        self.shape = shape
        self.dt = dt
        self.lock = launch.device_lock(dev)
        self.max_leaves = max(1, min(31, dev.limits.max_storage_buffers_per_stage - 1))
        self.wide = wide  # 1: this op computes, reads or makes a multi-lane dtype

    def __call__(self, args: Sequence[Any]) -> Array:
        if not enabled():  # (fusion turned off while this memo is alive: the eager path)
            return self.dev.ops.elementwise(self.row, args, self.shape, self.cdt, self.dt)[0]
        with self.lock:
            return self._make(args)

    def _make(self, args: Sequence[Any]) -> Array:
        ins: list[Any] = []
        seen: set[int] = set()
        for (is_arr, conv, sdt), a in zip(self.kinds, args, strict=True):
            if not is_arr:
                ins.append(_Scalar(a, sdt, conv))
                continue
            node = a._lazy
            if node is not None:
                c = _counted(a)
                if id(c) not in seen:
                    seen.add(id(c))
                    node = c._lazy
                    node.nusers += 1
                    # the multi-consumer rule, and a big tree is not recomputed per element
                    # of a broadcast (a tree holding a deferred matmul may have several
                    # consumers: fusion_matmul.launch computes it first if they are not all
                    # in the kernel it records)
                    if node.nops > RECOMPUTE_OPS and (a._shape != self.shape or (node.nusers >= 2 and not node.mm)):
                        _materialize_locked(c)
            elif a._b._handle is None:
                a._b.handle  # noqa: B018 - a freed buffer raises BufferFreedError here, at the op
            ins.append(a)
        mms = [a for a in ins if isinstance(a, Array) and a._lazy is not None and a._lazy.mm]
        for a in mms[1:]:  # one deferred matmul per kernel: trees of the others computed first
            if a._lazy is not None and a._lazy.mm != mms[0]._lazy.mm:
                _materialize_locked(a)
        while True:
            nops, wide, leaves = 1, set(), set()
            for a in ins:
                if isinstance(a, Array):
                    node = a._lazy
                    if node is None:
                        leaves.add(id(a._b))
                    else:
                        nops += node.nops
                        wide |= node.wide
                        leaves |= node.leaves
            wops = len(wide) + self.wide
            if nops <= MAX_OPS and len(leaves) <= self.max_leaves and wops <= MAX_WIDE_OPS:
                break
            big = max((a for a in ins if isinstance(a, Array) and a._lazy is not None),
                      key=(lambda a: len(a._lazy.wide)) if wops > MAX_WIDE_OPS else (lambda a: a._lazy.nops))
            _materialize_locked(big)
        if self.wide:
            wide.add(next(_wide_ids))
        out = Array._new(None, self.shape, self.dt, self.dev)  # type: ignore[arg-type]
        mm = next((a._lazy.mm for a in ins if isinstance(a, Array) and a._lazy is not None and a._lazy.mm), 0)
        node = Node(self.fn, ins, nops, frozenset(leaves), self.dev, mm, frozenset(wide))
        out._lazy = node
        for a in ins:
            if isinstance(a, Array):
                if a._lazy is None:
                    _register(a._b, out)
                else:
                    users = a._lazy.users
                    if len(users) >= 64:  # a small node with many consumers: drop dead ones
                        for k in [k for k, r in users.items() if r() is None]:
                            del users[k]
                    users[id(out)] = weakref.ref(out)
        STATS["nodes"] += 1
        return out


def materialize(arr: Array) -> None:
    """Compute the lazy array ``arr`` into a new buffer (one kernel); no-op if it is not lazy."""
    node = arr._lazy
    if node is None:
        return
    with node.lock:
        if arr._lazy is not None:
            _materialize_locked(arr)


def evaluate(arr: Array) -> Array:
    """A new array computed from the lazy ``arr``'s tree by the kernel that materialising it
    would record, leaving ``arr`` lazy (``arr`` itself when it is not lazy): lets a test read
    every step of a chain while the chain keeps growing (tests/fuzz)."""
    node = arr._lazy
    if node is None:
        return arr
    with node.lock:
        if arr._lazy is None:
            return arr
        return _launch(arr)


def _materialize_locked(arr: Array) -> None:
    node = arr._lazy
    if node is None:
        return
    if isinstance(node, ReshapeNode):  # a lazy reshape: its source's buffer (a view of it)
        src = node.ins[0]
        _materialize_locked(src)  # (resolves every alias of src, arr among them)
        if arr._lazy is not None:
            _resolve(arr, src._b)
        return
    out = _launch(arr)
    arr._b = out._b
    arr._lazy = None
    for r in list(node.users.values()):
        c = r()
        if c is not None and c._lazy is not None:
            _register(arr._b, c)
    for a in node.ins:
        if isinstance(a, Array) and a._lazy is None:
            _unregister(a._b, arr)
    node.ins = []  # drop the inputs (their buffers may be freed now)
    if node.aliases:
        for r in list(node.aliases.values()):
            al = r()
            if al is not None and al._lazy is not None:
                _resolve(al, arr._b)
        node.aliases = None


def _resolve(al: Array, buf: Any) -> None:
    """The lazy reshape ``al`` becomes a plain array over its source's new buffer ``buf``;
    its lazy consumers now read that buffer (registered, so a write into it computes them
    first)."""
    node = al._lazy
    al._b = buf
    al._lazy = None
    for r in list(node.users.values()):  # type: ignore[union-attr]
        c = r()
        if c is not None and c._lazy is not None:
            _register(buf, c)
    node.ins = []  # type: ignore[union-attr]


def _counted(a: Array) -> Array:
    """The lazy array whose node counts ``a``'s consumers: the source of a lazy reshape
    (its consumers compute the source's tree), else ``a``."""
    node = a._lazy
    return node.ins[0] if isinstance(node, ReshapeNode) else a


def defer_reshape(x: Array, shape: tuple[int, ...]) -> Array | None:
    """A lazy ``reshape(x, shape)`` of the lazy ``x`` (C-contiguous, so the row-major order of
    its elements does not change), or None (then the eager reshape: ``x`` is materialised and
    the result shares its buffer): fusion off, more than 8 dims, a tree holding a deferred
    matmul, or a tree with a leaf (or a node that could become one) whose strides do not
    survive the reshape (a broadcast row read through a merged axis: ``(x + row).reshape(-1)``)."""
    node = x._lazy
    if node is None or not enabled() or len(shape) > _k.MAXD:
        return None
    with node.lock:
        if x._lazy is None:
            return None
        src = _counted(x)
        snode = src._lazy
        if snode.mm or isinstance(snode, MatmulNode) or not _liftable(src, shape):  # type: ignore[union-attr]
            return None
        out = Array._new(None, shape, x._dtype, x._device)  # type: ignore[arg-type]
        out._committed = x._committed
        out._lazy = ReshapeNode(src)
        if snode.aliases is None:  # type: ignore[union-attr]
            snode.aliases = {}  # type: ignore[union-attr]
        aliases = snode.aliases  # type: ignore[union-attr]
        if len(aliases) >= 64:
            for k in [k for k, r in aliases.items() if r() is None]:
                del aliases[k]
        aliases[id(out)] = weakref.ref(out)
        return out


def _lift(st: tuple[int, ...] | None, ctx: tuple, root: tuple[int, ...]) -> tuple[int, ...] | None:
    """Element strides ``st`` over the innermost space of ``ctx`` (frames ``(source shape,
    reshaped shape)``, innermost first, the root's shape outside them) carried out to the
    root: through each reshape (:func:`pyaccel._shapes.reshape_strides`), then broadcast into
    the enclosing space; None where a reshape cannot carry them."""
    for k, (S, S2) in enumerate(ctx):
        if st is None:
            return None
        st = reshape_strides(S, st, S2)
        if st is None:
            return None
        st = _view_strides(S2, st, ctx[k + 1][0] if k + 1 < len(ctx) else root)
    return st


def _space_strides(a: Array, space: tuple[int, ...]) -> tuple[int, ...]:
    """The element strides of ``a`` read over ``space`` (a view: through its own strides)."""
    if a._strides is not None:
        return _view_strides(a._shape, a._strides, space)
    return tuple(broadcast_strides(a._shape, space))


def _liftable(src: Array, shape: tuple[int, ...]) -> bool:
    """Whether every array of ``src``'s tree (leaves, and the lazy ones as the contiguous
    arrays they become when materialised) can be read through ``src`` reshaped to ``shape``."""
    seen: set[tuple] = set()

    def ok(a: Array, ctx: tuple) -> bool:
        key = (id(a), ctx)
        if key in seen:
            return True
        seen.add(key)
        space = ctx[0][0]
        node = a._lazy
        st = _space_strides(a, space) if node is None else tuple(broadcast_strides(a._shape, space))
        if _lift(st, ctx, shape) is None:
            return False
        if node is None:
            return True
        if isinstance(node, ReshapeNode):
            inner = node.ins[0]
            return ok(inner, ((inner._shape, a._shape), *ctx) if inner._shape != a._shape else ctx)
        return all(ok(b, ctx) for b in node.ins if isinstance(b, Array))

    return ok(src, ((src._shape, shape),))


def _launch(arr: Array) -> Array:
    """Record the fused kernel computing the lazy ``arr`` into a new array (device lock held)."""
    node = arr._lazy
    dev = node.dev  # type: ignore[union-attr]
    w = None
    if node.mm:  # type: ignore[union-attr]  # a deferred matmul: the tree is its epilogue
        out, w = _MATMUL_LAUNCH[0](arr)  # (fusion_matmul.launch: that module made the node)
        if out is not None:
            return out
    kern, leaves, walk = _collect(arr, w)
    n = prod(arr._shape)
    out = Array._output(dev, arr._shape, arr._dtype)
    handles = [out._b.handle] + [b.handle for b in leaves]
    params = walk.param_bytes(kern.ns4, kern.nst)
    impl = dev.impl
    sizes = (launch.binding_size(out._b.nbytes), len(params),
             *(launch.binding_size(b.nbytes) for b in leaves))
    bkey = kern.bind_keys.get(sizes)
    if bkey is None:
        bkey = kern.bind_keys[sizes] = next(_bind_ids)
    # (binding 0: out, 1: params, 2..: leaves)
    binds = ((0, sizes[0]), (1, sizes[1]), *((2 + j, s) for j, s in enumerate(sizes[2:])))
    wg = launch.grid_1d(dev, n // 4 if kern.vec else n)
    impl.dispatch_bound(kern.pipe, bkey, binds,
                        (handles[0], impl.uniform(params), *handles[1:]), wg)
    STATS["launches"] += 1
    return out


_bind_ids = itertools.count(1 << 40)


class _Kernel:
    __slots__ = ("pipe", "vec", "ns4", "nst", "bind_keys", "src")

    def __init__(self, pipe: Any, vec: bool, ns4: int, nst: int, src: str) -> None:
        self.pipe = pipe
        self.vec = vec
        self.ns4 = ns4
        self.nst = nst
        self.bind_keys: dict[tuple, int] = {}
        self.src = src


class _Walk:
    """One lazy tree walked (:func:`_walk`): its nodes in evaluation order, the leaf buffers
    (binding order) with their storage types / layout classes / strides / offsets, the
    scalars, the ``bc`` leaves and the collapsed iteration shape and strides."""

    __slots__ = ("nodes", "leaves", "leaf_desc", "leaf_off", "scalars", "bc", "cshape", "cst", "shape",
                 "dt", "mm", "arrays", "spos", "nwords")

    def __init__(self, nodes: list[tuple], leaves: list[Any], leaf_desc: list[tuple[str, str]],
                 leaf_off: list[int], scalars: list[_Scalar], bc: list[int], cshape: list[int],
                 cst: list[list[int]], shape: tuple[int, ...], dt: DType) -> None:
        self.nodes = nodes
        self.leaves = leaves
        self.leaf_desc = leaf_desc
        self.leaf_off = leaf_off
        self.scalars = scalars
        self.bc = bc
        self.cshape = cshape
        self.cst = cst
        self.shape = shape
        self.dt = dt
        self.mm: Array | None = None  # the deferred matmul the tree reads (ref ("m",)), if any
        self.arrays: list[Array] = []  # the lazy array of each node (nodes' order)
        # each scalar's first word in the block's ``s`` words (a multi-lane scalar: a whole vec4)
        self.spos, self.nwords = _scalar_layout(scalars)

    def key(self) -> tuple:
        """The structure (never values): nodes, leaf types and classes, scalar types, the
        result type and the ``bc`` leaves."""
        return (tuple(self.nodes), tuple(self.leaf_desc), tuple(s.tag for s in self.scalars),
                _k.storage_tag(self.dt), tuple(self.bc))

    def sizes(self) -> tuple[int, int]:
        """(ns4, nst): vec4 slots of the scalars and of the ``bc`` strides in the uniform block."""
        return max(1, -(-self.nwords // 4)), max(1, 3 * len(self.bc))

    def param_bytes(self, ns4: int, nst: int) -> bytes:
        """:meth:`param_words` packed for a uniform buffer."""
        words = self.param_words(ns4, nst)
        return struct.pack(f"<{len(words)}I", *[int(v) & 0xFFFFFFFF for v in words])

    def param_words(self, ns4: int, nst: int) -> list[int]:
        """The uniform block (``Params`` of :func:`_source`): n, nd, pa = 0, pb = 0, the
        collapsed shape, the scalars' bits, the ``bc`` leaves' strides and offsets."""
        cshape = self.cshape
        shp = list(cshape) + [1] * (8 - len(cshape))
        words = [prod(self.shape), len(cshape), 0, 0, *shp]
        sw = [0] * (4 * ns4)
        for s, j in zip(self.scalars, self.spos, strict=True):
            if s.dtype in WIDE:
                w = _k.scalar_words(s.value, s.dtype)
                sw[j: j + len(w)] = w
            else:
                sw[j] = _k.scalar_bits(s.value, s.dtype)
        words += sw
        for st, off in zip(self.cst, [self.leaf_off[j] for j in self.bc], strict=True):
            words += list(st) + [0] * (8 - len(st)) + [off, 0, 0, 0]
        words += [0] * (4 * nst - 12 * len(self.bc))
        return words


def _scalar_layout(scalars: Sequence[_Scalar]) -> tuple[list[int], int]:
    """(first word of each scalar in the uniform block's ``s`` words, words used): one word
    per 32-bit scalar, an aligned vec4 per multi-lane one (2 or 4 words of its storage)."""
    pos, n = [], 0
    for s in scalars:
        if s.dtype in WIDE:
            n = -(-n // 4) * 4
            pos.append(n)
            n += 4
        else:
            pos.append(n)
            n += 1
    return pos, n


def _walk(root: Array, keep_arrays: bool = False) -> _Walk:
    """Walk the lazy tree of ``root`` (a node reached twice is computed once). The walk
    holds the nodes' lazy Arrays (``arrays``) only with ``keep_arrays``: a walk kept alive
    (a reduction's FusedInput) must not keep dead lazy arrays registered as readers."""
    shape = root._shape
    n = prod(shape)
    leaf_ix: dict[tuple, int] = {}
    leaves: list[Any] = []  # Buffers
    leaf_desc: list[tuple[str, str]] = []  # (storage wgsl, class)
    leaf_st: list[tuple[int, ...]] = []
    leaf_off: list[int] = []
    scalars: list[_Scalar] = []
    nodes: list[tuple] = []
    node_ix: dict[tuple, int] = {}
    mm: list[Array] = []
    arrays: list[Array] = []
    nw = [0]  # scalar words so far (_scalar_layout's)

    cst_root = contiguous_strides(shape)

    def leaf(a: Array, ctx: tuple) -> tuple:
        off = 0
        if ctx:  # under lazy reshapes: strides carried out to the root (defer_reshape checked it)
            st = _lift(_space_strides(a, ctx[0][0]), ctx, shape)  # type: ignore[assignment]
            assert st is not None
            if a._strides is not None:
                off, cls = a._offset, "bc"
            elif all(t == c or d == 1 for t, c, d in zip(st, cst_root, shape, strict=True)):
                cls, st = "lin", ()
            else:
                cls = "s0" if not any(st) else "bc"
        elif a._strides is not None:  # a view: read in place (offset, strides into its base)
            st = _view_strides(a._shape, a._strides, shape)
            off, cls = a._offset, "bc"
        elif a._shape == shape:
            cls, st = "lin", ()
        else:
            st = tuple(broadcast_strides(a._shape, shape))
            cls = "s0" if not any(st) else "bc"
        b = a._b
        key = (id(b), cls, st, a._dtype, off)
        j = leaf_ix.get(key)
        if j is None:
            j = leaf_ix[key] = len(leaves)
            leaves.append(b)
            leaf_desc.append((_k.storage_tag(a._dtype), cls))
            leaf_st.append(st)
            leaf_off.append(off)
        return ("l", j)

    def visit(a: Array, ctx: tuple) -> tuple:
        # ctx: the lazy reshapes above a, innermost first ((source shape, reshaped shape))
        node = a._lazy
        if node is None:
            return leaf(a, ctx)
        if isinstance(node, ReshapeNode):  # its source, walked in the source's shape
            src = node.ins[0]
            return visit(src, ((src._shape, a._shape), *ctx) if src._shape != a._shape else ctx)
        if isinstance(node, MatmulNode):  # (one per tree: Template._make; never under a reshape)
            if not mm:
                mm.append(a)
            return ("m", a._dtype.wgsl)
        k = node_ix.get((id(a), ctx))  # (a node reached again in the same space: computed once)
        if k is not None:
            return ("n", k)
        refs = []
        for x in node.ins:
            if isinstance(x, _Scalar):
                if x.dtype in WIDE:
                    j = -(-nw[0] // 4) * 4
                    nw[0] = j + 4
                else:
                    j = nw[0]
                    nw[0] += 1
                refs.append(("s", j, x.tag))
                scalars.append(x)
            else:
                refs.append(visit(x, ctx))
        k = node_ix[(id(a), ctx)] = len(nodes)
        nodes.append((node.fn, tuple(refs)))
        if keep_arrays:
            arrays.append(a)
        return ("n", k)

    visit(root, ())
    bc = [j for j, (_, c) in enumerate(leaf_desc) if c == "bc"]
    if bc:
        cshape, cst = _k.collapse(list(shape), [list(leaf_st[j]) for j in bc])
    else:
        cshape, cst = ([n] if n != 1 else []), []
    w = _Walk(nodes, leaves, leaf_desc, leaf_off, scalars, bc, list(cshape), [list(c) for c in cst],
              shape, root._dtype)
    w.mm = mm[0] if mm else None
    w.arrays = arrays
    return w


def _collect(root: Array, w: _Walk | None = None) -> tuple[_Kernel, list[Any], _Walk]:
    """Walk the lazy tree of ``root`` (unless ``w`` is that walk): the cached kernel, the leaf
    buffers (binding order) and the walk (scalars, collapsed shape, strides of the ``bc``
    leaves: its uniform block)."""
    w = _walk(root) if w is None else w
    n = prod(root._shape)
    bc, leaf_desc, leaves = w.bc, w.leaf_desc, w.leaves
    # (f16 data: one element per invocation, as in the eager kernels)
    # (multi-lane data: one element per invocation, as in the eager kernels; 8 or 16 bytes each)
    vec = (not bc and n % 4 == 0 and n >= _k.VEC_MIN and not _enables(w) and not _has_wide(w)
           and all(c != "lin" or b.nbytes % 16 == 0 for (_, c), b in zip(leaf_desc, leaves, strict=True)))
    out_tag = _k.storage_tag(root._dtype)
    key = (tuple(w.nodes), tuple(leaf_desc), tuple(s.tag for s in w.scalars), out_tag, vec,
           tuple(bc))
    dev = root._lazy.dev  # type: ignore[union-attr]
    cache = dev.memo("fusion_kernels", _KERNEL_CACHE)
    kern = cache.get(key)
    if kern is None:
        ns4, nst = w.sizes()
        src = _source(w.nodes, leaf_desc, [s.tag for s in w.scalars], out_tag, vec, bc, ns4, nst,
                      _enables(w))
        pipe = launch.pipeline(dev.impl, src, "main", None, "fused_elementwise")
        kern = cache.put(key, _Kernel(pipe, vec, ns4, nst, src))
        STATS["kernels_compiled"] += 1
    else:
        cache.move_to_end(key)
    return kern, leaves, w


def _has_wide(w: _Walk) -> bool:
    """Whether the tree reads, computes or makes a multi-lane dtype (its tags are the dtype
    names)."""
    return (w.dt in WIDE or any(_k.is_wide(t) for t, _ in w.leaf_desc)
            or any(_k.is_wide(fn[1]) or _k.is_wide(fn[2]) or any(_k.is_wide(c) for c in fn[3])
                   for fn, _ in w.nodes))


def _enables(w: _Walk) -> tuple[str, ...]:
    """The WGSL extensions the tree's data needs (float16 leaves or nodes: ``f16``); such
    trees run one element per invocation, as the eager kernels do."""
    tags = {w.dt.wgsl, *(t for t, _ in w.leaf_desc), *(fn[2] for fn, _ in w.nodes)}
    return tuple(sorted({WGSL_ENABLE[t] for t in tags if t in WGSL_ENABLE}))


def _view_strides(vshape: tuple[int, ...], vst: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """A view's element strides over the iteration ``shape`` it broadcasts to (0 where it
    broadcasts)."""
    lead = len(shape) - len(vshape)
    return tuple(0 if d < lead or vshape[d - lead] == 1 else vst[d - lead] for d in range(len(shape)))


# multi-lane tags stored as two f32 (the single-precision complex dtype)
_F32_PAIRS = frozenset(d.name for d, r in MULTI_LANE.items() if r.wgsl_storage == "vec2<f32>")
_LIBS = (("f_", "ew_float", "f32"), ("i_", "ew_sint", "i32"), ("u_", "ew_uint", "u32"))
_T = re.compile(r"\bT\b")


def _compute(nodes: list[tuple], leaf_desc: list[tuple[str, str]], out_wgsl: str,
             opaque_last: bool = False, mm_t: str | None = None) -> str:
    """WGSL of a tree's functions: the ``ew_*`` libraries it calls, one function per row and
    ``compute(a0, a1, ...)`` (leaf values in, the root's value out). Every f32 node but the
    root goes through the opaque ``p.pa`` round trip (no FMA contraction across nodes); the
    root too with ``opaque_last`` (a consumer inside the same kernel: a reduction)."""
    fns: dict[tuple, str] = {}
    fn_src: list[str] = []
    libs: set[str] = set()
    for fn, _ in nodes:
        if fn in fns:
            continue
        expr, T, Rt, convs, wrap = fn
        R = _k.wgsl_type(Rt)  # (tags: WGSL scalar types, or a multi-lane dtype's name)
        name = fns[fn] = f"op{len(fns)}"
        params = ", ".join(f"{v}: {'bool' if c == 'bool' else _k.wgsl_type(c)}"
                           for v, c in zip("xyz", convs, strict=False))
        body = _T.sub(_k.wgsl_type(T), expr)
        # (a narrow integer result is wrapped as kernelgen's eager kernels wrap it)
        ret = f"return {R}({body});" if wrap is None else f"let r = {R}({body});\n    return {wrap};"
        fn_src.append(f"fn {name}({params}) -> {R} {{\n    {ret}\n}}")
        for pfx, lib, _t in _LIBS:
            if re.search(rf"\b{pfx}\w+\(", expr):
                libs.add(lib)
    lines = []
    for k, (fn, refs) in enumerate(nodes):
        args = []
        for ref, conv in zip(refs, fn[3], strict=True):
            if ref[0] == "l":
                raw, tag = f"a{ref[1]}", leaf_desc[ref[1]][0]
            elif ref[0] == "m":  # the deferred matmul's value (the epilogue's argument am)
                raw, tag = "am", ref[1]
            elif ref[0] == "s":
                j, tag = ref[1], ref[2]
                raw = _wide_scalar(j, tag) if _k.is_wide(tag) else f"bitcast<{tag}>(p.s[{j // 4}].{'xyzw'[j % 4]})"
            else:
                raw, tag = f"n{ref[1]}", nodes[ref[1]][0][2]
            args.append(_k._convert(raw, tag, conv))
        call = f"{fns[fn]}({', '.join(args)})"
        if fn[2] == "f32" and (opaque_last or k != len(nodes) - 1):
            # an opaque round trip (p.pa is 0, unknown to the compiler): the value is the
            # rounded f32 the eager kernel stores, never contracted with its consumer into an
            # FMA (lavapipe does contract x * a + y otherwise: 1 ulp off in a third of them)
            call = f"bitcast<f32>(bitcast<u32>({call}) ^ p.pa)"
        elif fn[2] in _F32_PAIRS and (opaque_last or k != len(nodes) - 1):
            # (a complex of two f32: the same round trip on both)
            call = f"bitcast<vec2<f32>>(bitcast<vec2<u32>>({call}) ^ vec2<u32>(p.pa))"
        lines.append(f"    let n{k} = {call};")
    last = len(nodes) - 1
    sig = ", ".join([f"a{j}: {_k.wgsl_type(t)}" for j, (t, _) in enumerate(leaf_desc)]
                    + ([f"am: {mm_t}"] if mm_t else []))
    compute = (f"fn compute({sig}) -> {_k.wgsl_type(out_wgsl)} {{\n" + "\n".join(lines)
               + f"\n    return n{last};\n}}\n")
    lib_src = ""
    for _pfx, lib, t in _LIBS:
        if lib in libs:
            lib_src += _T.sub(t, launch.wgsl_source(lib)) + "\n"
    code = "\n".join(fn_src) + "\n" + compute
    # the multi-lane libraries the code calls (operand conversions too), as the eager kernels
    # include them (kernelgen.library_source: the ``// requires:`` closure; pruned later)
    wide_src = _k.library_source(code)
    return lib_src + (wide_src + "\n" if wide_src else "") + code


def _wide_scalar(j: int, tag: str) -> str:
    """WGSL reading the multi-lane scalar at word ``j`` (a vec4 of ``p.s``), as the eager
    kernels read their ``p.wide`` slots (kernelgen._scalar_raw)."""
    st = _k.wgsl_type(tag)
    if st == "vec4<u32>":
        return f"p.s[{j // 4}]"
    if st == "vec2<f32>":
        return f"bitcast<vec2<f32>>(p.s[{j // 4}].xy)"
    return f"p.s[{j // 4}].xy"


# the element offset of flat index i in ``bc`` leaf j (collapsed shape and strides in p)
_BC_OFF = (
    "fn bc_off(i: u32, j: u32) -> u32 {\n"
    "    var rem = i;\n    var o = p.st[j * 3u + 2u].x;\n"
    "    for (var d = i32(p.nd) - 1; d >= 0; d = d - 1) {\n"
    "        let du = u32(d);\n"
    "        let s = p.shape[du / 4u][du % 4u];\n"
    "        o = o + i32(rem % s) * p.st[j * 3u + du / 4u][du % 4u];\n"
    "        rem = rem / s;\n    }\n    return u32(o);\n}\n"
)


def _params_struct(name: str, ns4: int, nst: int) -> str:
    """WGSL of the uniform block a tree's kernels read (:meth:`_Walk.param_words`' layout)."""
    return (f"struct {name} {{\n    n: u32,\n    nd: u32,\n    pa: u32,\n    pb: u32,\n"
            f"    shape: array<vec4<u32>, 2>,\n    s: array<vec4<u32>, {ns4}>,\n"
            f"    st: array<vec4<i32>, {nst}>,\n}}\n")


def _source(nodes: list[tuple], leaf_desc: list[tuple[str, str]], stags: list[str], out_wgsl: str,
            vec: bool, bc: list[int], ns4: int, nst: int, enables: tuple[str, ...] = ()) -> str:
    """WGSL of a fused kernel (see the module docstring; ``enables``: the WGSL extensions
    its data needs, :func:`_enables`)."""
    body = _compute(nodes, leaf_desc, out_wgsl)
    decl = []
    for j, (t, c) in enumerate(leaf_desc):
        ty = f"vec4<{t}>" if vec and c == "lin" else _k.wgsl_type(t)
        decl.append(f"@group(0) @binding({2 + j}) var<storage, read> x{j}: array<{ty}>;")
    out_ty = f"vec4<{out_wgsl}>" if vec else _k.wgsl_type(out_wgsl)
    head = (
        "override WG: u32 = 256u;\n"
        + _params_struct("Params", ns4, nst) +
        f"@group(0) @binding(0) var<storage, read_write> out: array<{out_ty}>;\n"
        "@group(0) @binding(1) var<uniform> p: Params;\n" + "\n".join(decl) + "\n"
    )
    if bc:
        head += _BC_OFF
    main = ("@compute @workgroup_size(WG)\n"
            "fn main(@builtin(global_invocation_id) gid: vec3<u32>, "
            "@builtin(num_workgroups) nwg: vec3<u32>) {\n"
            "    let q = gid.x + gid.y * (nwg.x * WG);\n")
    if vec:
        main += "    if (q >= p.n / 4u) {\n        return;\n    }\n"
        for j, (_, c) in enumerate(leaf_desc):
            main += f"    let v{j} = x{j}[{'q' if c == 'lin' else '0u'}];\n"
        lanes = []
        for comp in "xyzw":
            a = ", ".join(f"v{j}.{comp}" if c == "lin" else f"v{j}" for j, (_, c) in enumerate(leaf_desc))
            lanes.append(f"compute({a})")
        main += f"    out[q] = vec4<{out_wgsl}>({', '.join(lanes)});\n}}\n"
    else:
        main += "    if (q >= p.n) {\n        return;\n    }\n"
        bcj = {j: m for m, j in enumerate(bc)}
        for j, (_, c) in enumerate(leaf_desc):
            ix = "q" if c == "lin" else "0u" if c == "s0" else f"bc_off(q, {bcj[j]}u)"
            main += f"    let v{j} = x{j}[{ix}];\n"
        main += f"    out[q] = compute({', '.join(f'v{j}' for j in range(len(leaf_desc)))});\n}}\n"
    return "".join(f"enable {e};\n" for e in enables) + head + body + main

__all__ = ["ENV", "FUSABLE", "MAX_OPS", "MAX_WIDE_OPS", "RECOMPUTE_OPS", "STATS", "WIDE", "WIDE_ROWS", "WIDE_SRC_MAX",
           "MatmulNode", "ReshapeNode", "before_write", "defer", "defer_cast", "defer_reshape", "enabled",
           "evaluate", "fusion", "materialize", "set_fusion", "wide_cheap"]
