"""Array API statistical, searching, sorting, set and utility functions.

Reductions, ``cumulative_sum`` and sorting run on the device's op provider (NumPy on
``cpu:0``; on WebGPU devices the kernels of :mod:`pyaccel.ops.gpu_kernels` on the array
viewed as (outer, n, inner): reduced axes that are adjacent need no copy; otherwise the
kept axes are permuted to the front first, one gather). Functions whose result shape
depends on the data (``nonzero``, ``unique_*``, and ``searchsorted``) read the array back
(a device sync on GPUs), compute on the host (NumPy when present, else pure Python) and
upload the result, on every device.

Result dtypes follow the Array API: ``sum``/``prod``/``cumulative_sum`` of bool and
signed ints give the default int (int64 on cpu, int32 on WebGPU), of unsigned ints the
default uint; floats keep their dtype. ``mean``/``var``/``std`` of integers give the
default float. Index results (``argmin``, ``argsort``, ``nonzero``, ...) are int64 on
cpu and int32 on WebGPU devices. Floats accumulate in float32 on WebGPU devices
(float16 data accumulates in float32 on every device, cpu included); integer sums wrap
on overflow.
"""

from __future__ import annotations

import math
from typing import Any

from . import _host
from ._shapes import contiguous_strides, normalize_axes, normalize_axis
from ._shapes import prod as _prod
from .array import Array, _upload_flat, asarray
from .dtypes import DType, as_dtype, bool_
from .elementwise import equal, less, logical_not, not_equal, sqrt, subtract, where
from .manipulation import broadcast_to, concat, reshape, take
from .placement import place_module
from .promotion import (
    check_dtype,
    default_float,
    default_int,
    default_uint,
    index_dtype,
    promote,
)

__all__ = [
    "all", "any", "argmax", "argmin", "argsort", "count_nonzero", "cumulative_prod", "diff", "isin",
    "cumulative_sum", "max",
    "mean", "min", "nonzero", "prod", "searchsorted", "sort", "std", "sum", "unique_all",
    "unique_counts", "unique_inverse", "unique_values", "var",
]

def _np() -> Any:
    return _host.numpy() or __import__("numpy")


def _check(x: Any, what: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{what}: expected a pyaccel Array, got {type(x).__name__}; convert it with "
                        "pyaccel.asarray(x)")
    return x


def _real_only(x: Array, what: str) -> None:
    """TypeError for complex input where the Array API defines ``what`` for real dtypes only."""
    if x.dtype.kind == "c":
        raise TypeError(f"{what}: complex input ({x.dtype.name}) has no order; the Array API defines {what} "
                        "for real dtypes only: use pyaccel.real(x), pyaccel.imag(x) or pyaccel.abs(x)")


def _out_shape(x: Array, axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if j in axes else d for j, d in enumerate(x.shape))
    return tuple(d for j, d in enumerate(x.shape) if j not in axes)


def _sum_dtype(x: Array, dtype: Any, what: str) -> DType:
    dev = x.device
    if dtype is not None:
        return check_dtype(dev, as_dtype(dtype), what)
    dt = x.dtype
    if dt.kind == "b":
        return default_int(dev)
    if dt.kind == "i":
        di = default_int(dev)
        return di if di.bits >= dt.bits else dt
    if dt.kind == "u":
        du = default_uint(dev)
        return du if du.bits >= dt.bits else dt
    return dt




def _sum_like(x: Array, axis: Any, dtype: Any, keepdims: bool, op: str) -> Array:
    _check(x, op)
    if x.dtype.kind not in "biufc":
        raise TypeError(f"{op}: unsupported dtype {x.dtype.name}")
    out_dt = _sum_dtype(x, dtype, op)
    axes = normalize_axes(axis, x.ndim, f"{op} axis")
    return x.device.ops.reduce(x, axes, _out_shape(x, axes, keepdims), op, out_dt)


def sum(x: Array, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Array:  # noqa: A001
    """Sum over ``axis`` (all axes when None)."""
    return _sum_like(x, axis, dtype, keepdims, "sum")


def prod(x: Array, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Array:  # noqa: A001,F811
    """Product over ``axis`` (all axes when None)."""
    return _sum_like(x, axis, dtype, keepdims, "prod")




def _minmax(x: Array, axis: Any, keepdims: bool, op: str) -> Array:
    _check(x, op)
    _real_only(x, op)
    axes = normalize_axes(axis, x.ndim, f"{op} axis")
    if axes and _prod([x.shape[a] for a in axes]) == 0:
        raise ValueError(f"{op}: the reduced axes {axes} of shape {x.shape} are empty, and {op} has no "
                         "identity; check x.size first")
    return x.device.ops.reduce(x, axes, _out_shape(x, axes, keepdims), op, x.dtype)


def min(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:  # noqa: A001
    """Minimum over ``axis`` (NaN propagates); empty reductions raise ValueError."""
    return _minmax(x, axis, keepdims, "min")


def max(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:  # noqa: A001
    """Maximum over ``axis`` (NaN propagates); empty reductions raise ValueError."""
    return _minmax(x, axis, keepdims, "max")


def _float_dt(x: Array, what: str) -> DType:
    return x.dtype if x.dtype.kind in "fc" else check_dtype(x.device, default_float(x.device), what)


def mean(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:
    """Arithmetic mean over ``axis`` (integers give the default float; empty gives NaN)."""
    _check(x, "mean")
    out_dt = _float_dt(x, "mean")
    axes = normalize_axes(axis, x.ndim, "mean axis")
    return x.device.ops.mean(x, axes, _out_shape(x, axes, keepdims), out_dt)


def var(x: Array, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Array:
    """Variance over ``axis`` with ``correction`` (degrees of freedom removed)."""
    _check(x, "var")
    _real_only(x, "var")
    out_dt = _float_dt(x, "var")
    axes = normalize_axes(axis, x.ndim, "var axis")
    return x.device.ops.var(x, axes, _out_shape(x, axes, keepdims), correction, out_dt)


def std(x: Array, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Array:
    """Standard deviation over ``axis`` (square root of :func:`var`)."""
    _check(x, "std")
    _real_only(x, "std")
    return sqrt(var(x, axis=axis, correction=correction, keepdims=keepdims))


def _arg(x: Array, axis: int | None, keepdims: bool, op: str) -> Array:
    _check(x, op)
    _real_only(x, op)
    idt = index_dtype(x.device)
    if axis is None:
        if x.size == 0:
            raise ValueError(f"{op} of an empty array (shape {x.shape}) has no result; check x.size first")
        return x.device.ops.argreduce(x, None, (1,) * x.ndim if keepdims else (), op, idt)
    ax = normalize_axis(axis, x.ndim, f"{op} axis")
    if x.shape[ax] == 0:
        raise ValueError(f"{op}: axis {ax} of shape {x.shape} is empty; there is no {op[3:]}imum")
    return x.device.ops.argreduce(x, ax, _out_shape(x, (ax,), keepdims), op, idt)


def argmin(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the first minimum (of the flattened array when axis is None)."""
    return _arg(x, axis, keepdims, "argmin")


def argmax(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the first maximum (of the flattened array when axis is None)."""
    return _arg(x, axis, keepdims, "argmax")


def _anyall(x: Array, axis: Any, keepdims: bool, op: str) -> Array:
    _check(x, op)
    axes = normalize_axes(axis, x.ndim, f"{op} axis")
    return x.device.ops.reduce(x, axes, _out_shape(x, axes, keepdims), op, bool_)


def any(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:  # noqa: A001
    """True where any element along ``axis`` is nonzero (NaN counts as nonzero)."""
    return _anyall(x, axis, keepdims, "any")


def all(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:  # noqa: A001
    """True where every element along ``axis`` is nonzero (NaN counts as nonzero)."""
    return _anyall(x, axis, keepdims, "all")


def count_nonzero(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:
    """Number of nonzero elements along ``axis`` (default int dtype)."""
    _check(x, "count_nonzero")
    zero: Any = False if x.dtype.kind == "b" else (0.0 if x.dtype.kind == "f" else 0)
    return sum(not_equal(x, zero), axis=axis, dtype=default_int(x.device), keepdims=keepdims)


def _cumulative(x: Array, axis: int | None, dtype: Any, include_initial: bool, op: str) -> Array:
    _check(x, op)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{op}: axis is required for a {x.ndim}-d array (shape {x.shape})")
        axis = 0
    if x.ndim == 0:
        raise ValueError(f"{op} needs an array with at least one dimension")
    ax = normalize_axis(axis, x.ndim, f"{op} axis")
    out_dt = _sum_dtype(x, dtype, op)
    return getattr(x.device.ops, op)(x, ax, bool(include_initial), out_dt)


def cumulative_sum(x: Array, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> Array:
    """Running sum along ``axis`` (required for arrays with more than one dimension)."""
    return _cumulative(x, axis, dtype, include_initial, "cumulative_sum")


def cumulative_prod(x: Array, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Array:
    """Running product along ``axis`` (required for arrays with more than one dimension; the
    Array API 2024.12). Result dtype as :func:`prod`; ``include_initial`` puts a 1 first."""
    return _cumulative(x, axis, dtype, include_initial, "cumulative_prod")


def diff(x: Array, /, *, axis: int = -1, n: int = 1, prepend: Any = None,
         append: Any = None) -> Array:
    """The ``n``-th forward difference along ``axis`` (``out[i] = x[i+1] - x[i]``, repeated;
    the Array API 2024.12). ``prepend`` / ``append`` (arrays with x's shape except along
    ``axis``, or scalars, as NumPy takes them) are joined first; dtypes promote. Bool data
    differ by ``!=`` (NumPy's rule). Built from slices and one subtraction per order."""
    _check(x, "diff")
    if x.ndim == 0:
        raise ValueError("diff needs an array with at least one dimension")
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"diff: n must be an int >= 0, got {n!r}")
    ax = normalize_axis(axis, x.ndim, "diff axis")
    parts = []
    for name, e in (("prepend", prepend), ("x", x), ("append", append)):
        if e is None:
            continue
        if not isinstance(e, Array):
            if isinstance(e, bool) or not isinstance(e, (int, float, complex)):
                raise TypeError(f"diff: {name} must be a pyaccel Array or a Python scalar, got "
                                f"{type(e).__name__}")
            shape = list(x.shape)
            shape[ax] = 1
            e = broadcast_to(asarray(e, dtype=x.dtype, device=x.device), tuple(shape))
        elif e.ndim != x.ndim or [d for j, d in enumerate(e.shape) if j != ax] != \
                [d for j, d in enumerate(x.shape) if j != ax]:
            raise ValueError(f"diff: {name} of shape {e.shape} must match x's shape {x.shape} "
                             f"except along axis {ax}")
        parts.append(e)
    y = parts[0] if len(parts) == 1 else concat(parts, axis=ax)
    lead = (slice(None),) * ax
    for _ in range(n):
        hi, lo = y[(*lead, slice(1, None))], y[(*lead, slice(None, -1))]
        y = not_equal(hi, lo) if y.dtype.kind == "b" else subtract(hi, lo)
    return y


# ---------------------------------------------------------------------------
# sorting
# ---------------------------------------------------------------------------
def _sort(x: Array, axis: int, descending: bool, stable: bool, indices: bool) -> Array:
    what = "argsort" if indices else "sort"
    _check(x, what)
    _real_only(x, what)
    if x.ndim == 0:
        raise ValueError(f"{what} needs an array with at least one dimension")
    ax = normalize_axis(axis, x.ndim, f"{what} axis")
    idt = index_dtype(x.device)
    return x.device.ops.sort(x, ax, bool(descending), bool(stable), indices, idt if indices else x.dtype)


def sort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """Sorted copy along ``axis`` (stable; NaNs last, or first when descending)."""
    return _sort(x, axis, descending, stable, False)


def argsort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """Indices that sort ``x`` along ``axis`` (stable: ties keep their order)."""
    return _sort(x, axis, descending, stable, True)


# ---------------------------------------------------------------------------
# data-dependent shapes (host)
# ---------------------------------------------------------------------------
def _host_values(x: Array) -> tuple[Any, bool]:
    """(NumPy array or flat list, is_numpy) of x's values on the host (a device sync)."""
    np = _host.numpy()
    if np is not None:
        return x.to_numpy(), True
    return x._flat_values(x._storage_bytes()), False


def _upload(values: Any, dt: DType, device: Any, shape: tuple[int, ...] | None = None) -> Array:
    np = _host.numpy()
    if np is not None and not isinstance(values, list):
        return asarray(np.asarray(values).astype(np.dtype(dt.name)), device=device, dtype=dt)
    vals = list(values)
    return _upload_flat(_host.coerce(vals, dt) if dt.kind != "b" else [bool(v) for v in vals],
                        shape if shape is not None else (len(vals),), dt, device)


def nonzero(x: Array, /) -> tuple[Array, ...]:
    """Indices of the nonzero elements, one index array per axis (a device sync on GPUs)."""
    _check(x, "nonzero")
    if x.ndim == 0:
        raise ValueError("nonzero of a 0-d array is not defined; use nonzero(reshape(x, (1,)))")
    idt = index_dtype(x.device)
    vals, is_np = _host_values(x)
    if is_np:
        np = _np()
        return tuple(_upload(a, idt, x.device) for a in np.nonzero(vals))
    st = contiguous_strides(x.shape)
    cols: list[list[int]] = [[] for _ in x.shape]
    for j, v in enumerate(vals):
        if v:
            for a, s in enumerate(st):
                cols[a].append((j // s) % x.shape[a])
    return tuple(_upload(c, idt, x.device) for c in cols)


def searchsorted(x1: Array, x2: Any, /, *, side: str = "left", sorter: Array | None = None) -> Array:
    """Insertion indices of ``x2`` into the sorted 1-D ``x1`` (``sorter``: indices that sort
    ``x1``, as from argsort). A binary-search kernel on GPUs (no device sync); NaN sorts last,
    as NumPy. ``x2`` may be a Python scalar (a 0-d result; the 2025.12 draft)."""
    _check(x1, "searchsorted")
    if isinstance(x2, (bool, int, float)):
        x2 = asarray(x2, dtype=x1.dtype if not (isinstance(x2, float) and x1.dtype.kind in "biu")
                     else default_float(x1.device), device=x1.device)
    _check(x2, "searchsorted")
    _real_only(x1, "searchsorted")
    _real_only(x2, "searchsorted")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if x1.ndim != 1:
        raise ValueError(f"searchsorted: x1 must be 1-D, got shape {x1.shape}")
    if sorter is not None:
        _check(sorter, "searchsorted sorter")
        if sorter.dtype.kind not in "iu" or sorter.shape != x1.shape:
            raise ValueError(f"searchsorted: sorter must be an integer array of x1's shape "
                             f"{x1.shape} (indices that sort x1), got {sorter.dtype.name} of "
                             f"shape {sorter.shape}")
        x1 = take(x1, sorter)
    dt = check_dtype(x1.device, promote(x1.dtype, x2.dtype), "searchsorted")
    a = x1 if x1.dtype is dt else x1.astype(dt)
    v = x2 if x2.dtype is dt else x2.astype(dt)
    return x1.device.ops.searchsorted(a, v, side == "right", index_dtype(x1.device))


def isin(x1: Any, x2: Any, /, *, invert: bool = False) -> Array:
    """True where an element of ``x1`` equals some element of ``x2`` (``invert``: is not in;
    the 2025.12 draft). Real data: ``x2`` sorted on the device, then one binary search per
    element of ``x1`` (the searchsorted kernel) and a gather; complex: pairwise equality.
    One of them may be a Python scalar (a 0-d result for a scalar ``x1``)."""
    if not isinstance(x1, Array) and not isinstance(x2, Array):
        raise TypeError(f"isin: at least one argument must be a pyaccel Array, got "
                        f"{type(x1).__name__} and {type(x2).__name__}")
    ref = x1 if isinstance(x1, Array) else x2
    if not isinstance(x1, Array):
        x1 = _scalar_operand(x1, ref, "isin")
    if not isinstance(x2, Array):
        x2 = _scalar_operand(x2, ref, "isin")
    dt = check_dtype(x1.device, promote(x1.dtype, x2.dtype), "isin")
    a = x1 if x1.dtype is dt else x1.astype(dt)
    b = reshape(x2 if x2.dtype is dt else x2.astype(dt), (-1,))
    if b.size == 0 or a.size == 0:
        return asarray(bool(invert), device=a.device) if a.ndim == 0 and a.size else \
            broadcast_to(asarray(bool(invert), device=a.device), a.shape)
    if dt.kind == "c":
        hit = any(equal(reshape(a, (*a.shape, 1)), b), axis=-1)
    else:
        b = sort(b)
        at = searchsorted(b, a)
        at = where(less(at, b.size), at, b.size - 1)
        hit = equal(take(b, reshape(at, (-1,))), reshape(a, (-1,)))
        hit = reshape(hit, a.shape)
    return logical_not(hit) if invert else hit


def _scalar_operand(v: Any, ref: Array, what: str) -> Array:
    if isinstance(v, bool) or not isinstance(v, (int, float, complex)):
        raise TypeError(f"{what}: expected a pyaccel Array or a Python int/float, got "
                        f"{type(v).__name__}")
    dt = ref.dtype if not (isinstance(v, float) and ref.dtype.kind in "biu") else default_float(ref.device)
    return asarray(v, dtype=dt, device=ref.device)


def _nan_key(v: Any) -> Any:
    return (1, 0.0) if isinstance(v, float) and math.isnan(v) else (0, v)


def _unique_host(x: Array) -> tuple[list, list, list, list]:
    """Pure-Python unique: (values, first indices, inverse, counts); NaNs are distinct."""
    vals = x._flat_values(x._storage_bytes())
    order = sorted(range(len(vals)), key=lambda j: (_nan_key(vals[j]), j))
    uniq: list = []
    first: list[int] = []
    counts: list[int] = []
    inverse = [0] * len(vals)
    for j in order:
        v = vals[j]
        is_nan = isinstance(v, float) and math.isnan(v)
        if uniq and not is_nan and not (isinstance(uniq[-1], float) and math.isnan(uniq[-1])) and uniq[-1] == v:
            counts[-1] += 1
        else:
            uniq.append(v)
            first.append(j)
            counts.append(1)
        inverse[j] = len(uniq) - 1
    return uniq, first, inverse, counts


def _unique(x: Array, what: str) -> tuple[Array, Array, Array, Array]:
    _check(x, what)
    dev = x.device
    idt = index_dtype(dev)
    np = _host.numpy()
    if np is not None:
        r = np.unique_all(x.to_numpy())
        outs = (r.values, r.indices, r.inverse_indices, r.counts)
        dts = (x.dtype, idt, idt, idt)
        return tuple(_upload(np.asarray(a), d, dev) for a, d in zip(outs, dts, strict=True))  # type: ignore[return-value]
    uniq, first, inverse, counts = _unique_host(x)
    return (_upload(uniq, x.dtype, dev), _upload(first, idt, dev),
            _upload(inverse, idt, dev, x.shape), _upload(counts, idt, dev))


class UniqueAllResult(tuple):
    """(values, indices, inverse_indices, counts) with named fields."""

    __slots__ = ()
    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])
    inverse_indices = property(lambda self: self[2])
    counts = property(lambda self: self[3])


class UniqueCountsResult(tuple):
    __slots__ = ()
    values = property(lambda self: self[0])
    counts = property(lambda self: self[1])


class UniqueInverseResult(tuple):
    __slots__ = ()
    values = property(lambda self: self[0])
    inverse_indices = property(lambda self: self[1])


def unique_all(x: Array, /) -> UniqueAllResult:
    """Sorted unique values, first indices, inverse indices (shape of x) and counts."""
    return UniqueAllResult(_unique(x, "unique_all"))


def unique_counts(x: Array, /) -> UniqueCountsResult:
    """Sorted unique values and their counts."""
    v, _, _, c = _unique(x, "unique_counts")
    return UniqueCountsResult((v, c))


def unique_inverse(x: Array, /) -> UniqueInverseResult:
    """Sorted unique values and, for each element of x, the index of its value."""
    v, _, inv, _ = _unique(x, "unique_inverse")
    return UniqueInverseResult((v, inv))


def unique_values(x: Array, /) -> Array:
    """Sorted unique values (NaNs are distinct)."""
    return _unique(x, "unique_values")[0]


place_module(globals(), __all__)  # the committed device rule (pyaccel/placement.py)
