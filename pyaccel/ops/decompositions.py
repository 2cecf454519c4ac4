"""The composites of the op layer, written once against the primitive set
(:class:`pyaccel.ops.primitives.Primitives`): every function takes the provider ``p`` that
runs its primitives. The WGSL provider runs these for the dtypes and ops it has no single
kernel for; the NumPy provider has a native version of each and overrides them all.

* multi-lane dtypes (int64, uint64, float64, complex on WebGPU): the pairwise reduction tree
  (:func:`tree`), argmin / argmax (:func:`arg_wide`), the bitonic sort (:func:`sort_wide`),
  the doubling scan (:func:`scan`), mean / var / softmax / logsumexp (``*_wide``);
* complex matmul as one real matmul (:func:`matmul_complex`);
* integer-array indexing offsets and ``x[mask] = v`` (:func:`adv_offsets`,
  :func:`masked_fill`);
* the linalg post-processing: failure flags, det / slogdet from pivots, the sorting of
  eigen / singular values and vectors, NumPy's non-finite-input behaviour.

No invocation of any kernel here loops over an axis (Mesa's loop cap). This module calls
the provider only, never the namespace (tests/unit/test_import_graph.py).
"""

from __future__ import annotations

import math
from typing import Any

from .._keys import _Plan
from .._shapes import broadcast_shapes, contiguous_strides, prod
from ..array import Array
from ..dtypes import REAL_OF, DType, bool_, int32
from ..errors import LinAlgError
from . import table as _table
from .primitives import Primitives, PrimitivesWide, Strided, moveaxis, reshape, upload


def part_dtype(dt: DType) -> DType:
    """The component dtype of a complex dtype: float32 for complex64, float64 for complex128."""
    return REAL_OF[dt]


def parts(x: Array) -> Array:
    """The C-contiguous complex array ``x`` as its components: shape ``x.shape + (2,)`` (real,
    imag) of the component dtype, sharing ``x``'s buffer (no copy). Byte for byte the same
    storage (WGSL_LAYOUT: complex64 vec2<f32> = two f32; complex128 vec4<u32> = two float64
    vec2<u32>), so complex ops that work per component run the real kernels on this view."""
    return Array._new(x._buf, x.shape + (2,), part_dtype(x.dtype), x.device)


# -- elementwise through the primitive -------------------------------------------------------
def ew(p: Primitives, name: str, *args: Any, dtype: DType | None = None) -> Array:
    """Table row ``name`` over ``args`` (arrays of one dtype and Python scalars) through
    ``p.elementwise``; computed in ``dtype`` (default: the value arrays' dtype)."""
    row = _table.get(name)
    arrays = [a for a in args if isinstance(a, Array)]
    values = args[1:] if name == "where" else args
    if dtype is None:
        dtype = next(a.dtype for a in values if isinstance(a, Array))
    shape = broadcast_shapes(*(a.shape for a in arrays))
    if row.result == "bool":
        out = bool_
    elif row.result == "realpart" and dtype.kind == "c":
        out = part_dtype(dtype)
    else:
        out = dtype
    return p.elementwise(row, args, shape, dtype, out)[0]


def reduce_all(p: Primitives, x: Array, op: str, dtype: DType | None = None) -> Array:
    """``op`` over every axis of ``x`` (a 0-d array)."""
    return p.reduce(x, tuple(range(x.ndim)), (), op, dtype or x.dtype)


def reduce_axes(p: Primitives, x: Array, axes: tuple[int, ...], op: str,
                dtype: DType | None = None) -> Array:
    """``op`` over ``axes`` (non-negative, sorted), the reduced axes dropped."""
    shape = tuple(d for j, d in enumerate(x.shape) if j not in axes)
    return p.reduce(x, axes, shape, op, dtype or x.dtype)


# -- multi-lane reductions, scans, sorting ---------------------------------------------------
def tree(p: Primitives, a: Array, outer: int, n: int, inner: int, row_name: str, dt: DType) -> Array:
    """Reduce ``a`` viewed as (outer, n, inner) over n with the elementwise row ``row_name``
    (add, multiply, maximum, minimum) of any dtype: pairwise, one elementwise pass per
    level (element j combined with element j + ceil(n / 2)), so no invocation loops.
    Returns a C-contiguous (outer, inner) array. The caller holds the device lock."""
    dev = p.device
    if n == 0:
        out = Array._empty(dev, (outer, inner), dt)
        return p.fill(out, 1 if row_name == "multiply" else 0)
    row = _table.get(row_name)
    while n > 1:
        m = (n + 1) // 2
        out = Array._empty(dev, (outer, m, inner), dt)
        st = (n * inner, inner, 1)
        ost = (m * inner, inner, 1)
        p.map_strided(row, [Strided(a, 0, st), Strided(a, m * inner, st)], [outer, n - m, inner], dt,
                      Strided(out, 0, ost), name=f"tree_{row_name}")
        if n % 2:  # the middle element has no partner: copied
            p.map_strided(None, [Strided(a, (m - 1) * inner, (n * inner, 1))], [outer, inner], dt,
                          Strided(out, (m - 1) * inner, (m * inner, 1)), name="tree_copy")
        a, n = out, m
    return Array._new(a._buf, (outer, inner), dt, dev)


def arg_wide(p: PrimitivesWide, x: Array, axis: int | None, shape: tuple[int, ...], op: str,
             dtype: DType) -> Array:
    """argmax / argmin of a multi-lane dtype: the extreme by :func:`tree` (NaN wins, as
    maximum / minimum propagate it), then each position's index where the element equals
    it (NaN matching NaN) and a large value elsewhere, then the 32-bit min reduction: the
    first occurrence, NumPy's answer. No invocation loops over the axis."""
    dev, dt = p.device, x.dtype
    if axis is None:
        outer, n, inner = 1, x.size, 1
    else:
        outer, n, inner = prod(x.shape[:axis]), x.shape[axis], prod(x.shape[axis + 1:])
    if outer * inner == 0:
        return Array._empty(dev, shape, dtype)
    ext = tree(p, x, outer, n, inner, "maximum" if op == "argmax" else "minimum", dt)
    cand = p.arg_candidates(x, ext, outer, n, inner, op)
    r = p.reduce(cand, (1,), (outer, inner), "min", int32)
    r = Array._new(r._buf, shape, int32, dev)
    return r if dtype is int32 else p.astype(r, dtype)


def sort_wide(p: PrimitivesWide, x: Array, rows: int, n: int, descending: bool, indices: bool,
              dtype: DType) -> Array:
    """Stable sort (or argsort) of the last axis of a multi-lane array: rows padded to a
    power of two, bitonic passes over (value, index) pairs (:meth:`WideKernels.sort_pairs`)."""
    dev, dt = p.device, x.dtype
    if rows * n == 0:
        return Array._empty(dev, x.shape, dtype)
    P = 1 << max(0, (n - 1).bit_length())
    keys = Array._empty(dev, (rows, P), dt)
    p.scatter(keys, [rows, n], 0, [P, 1], x, [n, 1])
    idx = p.sort_pairs(keys, rows, n, P, descending)
    src = idx if indices else keys
    r = reshape(p.gather(src, [rows, n], 0, [P, 1]), x.shape)
    return p.astype(r, dtype) if r.dtype is not dtype else r


def scan(p: Primitives, a: Array, outer: int, n: int, inner: int, include_initial: bool, dt: DType,
         op: str = "add") -> Array:
    """Inclusive prefix sums (``op="multiply"``: products) of ``a`` (dtype ``dt``) viewed as
    (outer, n, inner) along n: Hillis-Steele, one elementwise pass per doubling of the
    offset (no invocation loops); with ``include_initial`` an identity row (0 / 1) first.
    The caller holds the device lock."""
    dev = p.device
    row = _table.get(op)
    st = (n * inner, inner, 1)
    off = 1
    if n <= 1 and not include_initial:  # no pass runs: a new array all the same (a result
        out = Array._empty(dev, (outer, n, inner), dt)  # never aliases its input: views write through)
        if outer * n * inner:
            p.map_strided(None, [Strided(a, 0, (n * inner, 1))], [outer, n * inner], dt,
                          Strided(out, 0, (n * inner, 1)), name="scan_copy")
        return out
    while off < n:
        out = Array._empty(dev, (outer, n, inner), dt)
        p.map_strided(None, [Strided(a, 0, (n * inner, 1))], [outer, off * inner], dt,
                      Strided(out, 0, (n * inner, 1)), name="scan_copy")
        p.map_strided(row, [Strided(a, off * inner, st), Strided(a, 0, st)], [outer, n - off, inner], dt,
                      Strided(out, off * inner, st), name="scan_add")
        a, off = out, off * 2
    if not include_initial:
        return a
    out = Array._empty(dev, (outer, n + 1, inner), dt)
    p.fill(out, 0 if op == "add" else 1)
    if n:
        p.scatter(out, [outer, n, inner], inner, [(n + 1) * inner, inner, 1], a, st)
    return out


def mean_wide(p: Primitives, x: Array, outer: int, n: int, inner: int, shape: tuple[int, ...],
              dtype: DType) -> Array:
    """The mean of ``x`` (dtype ``dtype``, viewed as (outer, n, inner)) over n: the tree's sum / n."""
    total = tree(p, x, outer, n, inner, "add", dtype)
    return reshape(ew(p, "divide", total, float(n)), shape)


def var_wide(p: Primitives, x: Array, outer: int, n: int, inner: int, shape: tuple[int, ...],
             correction: float, dtype: DType) -> Array:
    """NumPy's two-pass variance, as trees (``x`` of ``dtype`` viewed as (outer, n, inner))."""
    if n == 0:
        return p.fill(Array._empty(p.device, shape, dtype), math.nan)
    x3 = reshape(x, (outer, n, inner))
    mean = ew(p, "divide", reshape(tree(p, x3, outer, n, inner, "add", dtype), (outer, 1, inner)), float(n))
    d = ew(p, "subtract", x3, mean)
    ss = tree(p, ew(p, "multiply", d, d), outer, n, inner, "add", dtype)
    return reshape(ew(p, "divide", ss, float(max(n - correction, 0))), shape)


def softmax_wide(p: Primitives, x: Array, axis: int) -> Array:
    """exp(x - max) / sum(...) along ``axis``, the reductions as trees."""
    xx = x if axis == x.ndim - 1 else moveaxis(x, axis, x.ndim - 1)
    rows, n = prod(xx.shape[:-1]), xx.shape[-1]
    if rows * n == 0:
        return p.astype(x, x.dtype)
    x3 = reshape(xx, (rows, n, 1))
    m = reshape(tree(p, x3, rows, n, 1, "maximum", x.dtype), (rows, 1, 1))
    e = ew(p, "exp", ew(p, "subtract", x3, m))
    s = reshape(tree(p, e, rows, n, 1, "add", x.dtype), (rows, 1, 1))
    r = reshape(ew(p, "divide", e, s), xx.shape)
    return r if axis == x.ndim - 1 else moveaxis(r, x.ndim - 1, axis)


def logsumexp_wide(p: Primitives, x: Array, axis: int, keepdims: bool) -> Array:
    """log(sum(exp(x - m))) + m along ``axis``, m the finite max (else 0), as trees."""
    xx = x if axis == x.ndim - 1 else moveaxis(x, axis, x.ndim - 1)
    rows, n = prod(xx.shape[:-1]), xx.shape[-1]
    shape = x.shape[:axis] + ((1,) if keepdims else ()) + x.shape[axis + 1:]
    if rows == 0 or n == 0:
        return p.fill(Array._empty(p.device, shape, x.dtype), -math.inf)
    x3 = reshape(xx, (rows, n, 1))
    m = reshape(tree(p, x3, rows, n, 1, "maximum", x.dtype), (rows, 1, 1))
    m = ew(p, "where", ew(p, "isfinite", m), m, 0.0)
    s = tree(p, ew(p, "exp", ew(p, "subtract", x3, m)), rows, n, 1, "add", x.dtype)
    r = ew(p, "add", ew(p, "log", s), reshape(m, (rows, 1)))
    return reshape(r, shape)


# -- complex matmul ---------------------------------------------------------------------------
def matmul_complex(p: Primitives, x1: Array, x2: Array, dt: DType, a_shape: tuple[int, ...],
                   b_shape: tuple[int, ...], final: tuple[int, ...]) -> Array:
    """Complex matmul as one real matmul in the component dtype (float32 / float64) on the
    interleaved components: A's parts viewed as (..., M, 2K) = [ar, ai, ...] times the real
    (..., 2K, 2N) matrix whose rows 2k, 2k + 1 are B[k] = [br, bi, ...] and i B[k] =
    [-bi, br, ...], so each output pair is (sum ar br - ai bi, sum ar bi + ai br): the four
    real products of BLAS cgemm / zgemm, with the real path's K splitting, broadcasting and
    1-D handling. Its (..., M, 2N) real result is the complex (..., M, N) one, byte for
    byte. A real x1 multiplies B's parts (..., K, 2N) directly (no i B rows)."""
    dev, pt = p.device, part_dtype(dt)
    K, N = a_shape[-1], b_shape[-1]
    b = reshape(x2 if x2.dtype is dt else p.astype(x2, dt), b_shape)
    if x1.dtype.kind != "c":  # (real A) B = A br + i A bi: the parts of B side by side
        a = reshape(x1 if x1.dtype is pt else p.astype(x1, pt), a_shape)
        rb = Array._new(b._buf, b_shape[:-1] + (2 * N,), pt, dev)
        r = p.matmul(a, rb, pt)
        return Array._new(r._buf, final, dt, dev)
    a = x1 if x1.dtype is dt else p.astype(x1, dt)
    ra = Array._new(a._buf, a_shape[:-1] + (2 * K,), pt, dev)  # (..., M, 2K)
    lead = b_shape[:-2]
    big = Array._empty(dev, lead + (K, 2, N, 2), pt)  # rows (k, 0) = B[k], (k, 1) = i B[k]
    st = contiguous_strides(big.shape)
    part_st = contiguous_strides(b_shape + (2,))
    # big[..., k, 0, n, c] = B[..., k, n, c]
    p.scatter(big, b_shape + (2,), 0, [*st[:-3], st[-2], 1], parts(b), part_st)
    # big[..., k, 1, n, 1 - c] = conj(B)[..., k, n, c]: (-bi, br), the parts of i B (exact:
    # a sign flip and a move, so inf and NaN parts stay where they were)
    cb = ew(p, "conj", b)
    p.scatter(big, b_shape + (2,), st[-3] + 1, [*st[:-3], st[-2], -1], parts(cb), part_st)
    r = p.matmul(ra, reshape(big, lead + (2 * K, 2 * N)), pt)
    return Array._new(r._buf, final, dt, dev)


# -- indexing ---------------------------------------------------------------------------------
def adv_offsets(p: Primitives, x: Array, plan: _Plan) -> tuple[Array, tuple[int, ...]]:
    """int32 element offsets (shape = broadcast of the index arrays) of the advanced indices
    of ``plan`` (negative indices wrapped)."""
    dev = p.device
    idx_arrays = []
    for idx, n, stride in plan.adv:
        if isinstance(idx, Array):
            a = idx if idx.dtype is int32 else p.astype(idx, int32)
            a = ew(p, "where", ew(p, "less", a, 0), ew(p, "add", a, n), a)
        else:
            flat, shape = idx
            a = upload(dev, flat, int32, tuple(shape))
        idx_arrays.append((a, stride))
    bshape = broadcast_shapes(*(a.shape for a, _ in idx_arrays))
    total = None
    for a, stride in idx_arrays:
        term = a if stride == 1 else ew(p, "multiply", a, stride)
        total = term if total is None else ew(p, "add", total, term)
    assert total is not None
    if total.shape != bshape:
        total = p.broadcast_to(total, bshape)
    return total, bshape


def masked_fill(p: Primitives, x: Array, mask: Array, v: Any) -> None:
    """``x[mask] = v`` for a C-contiguous ``x``, a bool ``mask`` over its leading axes and a
    Python scalar ``v`` of x's kind: one ``where`` and a copy back (no host sync)."""
    m = reshape(mask, mask.shape + (1,) * (x.ndim - mask.ndim))
    res = ew(p, "where", m, v, x, dtype=x.dtype)
    if res.size:
        x._buf.copy_from(res._buf, res.size * p.layout(x.dtype).itemsize)


# -- linalg post-processing -------------------------------------------------------------------
def zero_pivot_flags(p: Primitives, piv: Array) -> Array:
    """Per matrix: any pivot exactly 0 (singular), from pivots (..., n)."""
    return reduce_axes(p, ew(p, "equal", piv, 0.0), (piv.ndim - 1,), "any", bool_)


def det_from_pivots(p: Primitives, piv: Array, sgn: Array) -> Array:
    """det = prod(pivots) * (interchange parity)."""
    return ew(p, "multiply", reduce_axes(p, piv, (piv.ndim - 1,), "prod"), sgn)


def slogdet_from_pivots(p: Primitives, piv: Array, sgn: Array) -> tuple[Array, Array]:
    """(sign, log|det|) from the pivots: pivot signs (a NaN pivot counts as positive, as in
    NumPy: sign 1, logabsdet NaN) times the parity, and the sum of log|pivot|."""
    one = p.fill(p.output(piv.shape, piv.dtype), 1.0)
    # (an array operand keeps the sign in piv's dtype: two Python scalars would give the
    # default float dtype, float64)
    sg = ew(p, "where", ew(p, "less", piv, 0.0), -1.0, ew(p, "where", ew(p, "equal", piv, 0.0), 0.0, one))
    last = (piv.ndim - 1,)
    sign = ew(p, "multiply", reduce_axes(p, sg, last, "prod"), sgn)
    logabs = reduce_axes(p, ew(p, "log", ew(p, "abs", piv)), last, "sum")
    return sign, logabs


def take_last(p: Primitives, x: Array, order: Array) -> Array:
    """``take_along_axis(x, order, axis=-1)`` for a C-contiguous ``x`` (batch, ..., n) and
    int32 ``order`` (batch, n) shared by every row of a matrix: one indexed gather."""
    n = x.shape[-1]
    batch = x.shape[0]
    mid = x.shape[1:-1]
    xs = contiguous_strides(x.shape)
    return p.take(x, x.shape, 0, list(xs[:-1]) + [0], order, [n] + [0] * len(mid) + [1]) \
        if batch * n else Array._empty(p.device, x.shape, x.dtype)


def argsort_last(p: Primitives, x: Array, descending: bool = False) -> Array:
    """int32 stable argsort along the last axis."""
    return p.sort(x, x.ndim - 1, descending, True, True, int32)


def nonfinite(p: Primitives, x: Array, what: str, *outs: Array) -> tuple[Array, ...]:
    """NumPy's behaviour for a non-finite input to eigh / svd: NaN raises LinAlgError (LAPACK
    does not converge), inf gives NaN results. Costs one more readback, only here."""
    mat = (x.ndim - 2, x.ndim - 1)
    bad = reduce_axes(p, ew(p, "isnan", x), mat, "any", bool_)
    if bad.ndim and bool(reduce_all(p, bad, "any")):
        flat = reshape(p.astype(bad, int32), (bad.size,))
        first = int(p.argreduce(flat, None, (), "argmax", int32))
        raise LinAlgError(f"{what}: did not converge: matrix {first} of the stack (flattened "
                          "batch index) has NaN")
    if not bad.ndim and bool(bad):
        raise LinAlgError(f"{what}: did not converge: the matrix has NaN")
    inf = reduce_axes(p, ew(p, "logical_not", ew(p, "isfinite", x)), mat, "any", bool_)
    flat = reshape(inf, (inf.size, 1, 1))
    return tuple(ew(p, "where", flat, float("nan"), o) for o in outs)


__all__ = ["adv_offsets", "arg_wide", "argsort_last", "det_from_pivots", "ew", "logsumexp_wide",
           "masked_fill", "matmul_complex", "mean_wide", "nonfinite", "part_dtype", "parts",
           "reduce_all", "reduce_axes", "scan", "slogdet_from_pivots", "softmax_wide", "sort_wide",
           "take_last", "tree", "var_wide", "zero_pivot_flags"]
