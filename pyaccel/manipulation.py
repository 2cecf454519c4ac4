"""Array API manipulation functions (and ``astype``, ``take``) on every device.

The copies run on the device's op provider (``astype``, ``permute_dims``,
``broadcast_to``, ``concat``, ``flip``); the others are built from those and from
indexing. On WebGPU devices each primitive is one strided *gather* (or *scatter*)
kernel of the elementwise skeleton: the output is written in C order while the source
is read through an offset and per-axis strides (0 for broadcast axes, negative for
flipped ones), converting the dtype on the way when needed. ``permute_dims`` (and ``matrix_transpose``,
``moveaxis``), ``expand_dims``, ``squeeze`` and ``reshape`` (where the new shape can be
strided over the same elements; unless ``copy=True``) return views sharing the input's
buffer (offset + strides; see :mod:`pyaccel.array`). On ``cpu:0`` the primitives are NumPy.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from ._dispatch import register
from ._shapes import broadcast_shapes as _bshapes
from ._shapes import (
    norm_shape,
    normalize_axes,
    normalize_axis,
    prod,
    reshape_strides,
)
from .array import Array, asarray
from .dtypes import as_dtype
from .placement import place_module
from .promotion import check_dtype, common_device, index_dtype, promote
from .registry import as_device

__all__ = [
    "astype", "broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "expand_dims", "flip",
    "matrix_transpose", "moveaxis", "permute_dims", "repeat", "reshape", "roll", "squeeze",
    "stack", "take", "take_along_axis", "tile", "unstack",
]


def _check_array(x: Any, what: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{what}: expected a pyaccel Array, got {type(x).__name__}; convert it with "
                        "pyaccel.asarray(x)")
    return x


# ---------------------------------------------------------------------------
def astype(x: Array, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Array:
    """``x`` converted to ``dtype`` (a copy unless ``copy=False`` and nothing changes)."""
    _check_array(x, "astype")
    if device is not None:
        dev = as_device(device)
        if dev is not x.device:
            return astype(x.to_device(dev), dtype, copy=False)
    dt = check_dtype(x.device, as_dtype(dtype), "astype")
    if x.dtype.kind == "c" and dt.kind not in "bc":
        raise TypeError(f"astype: cannot cast {x.dtype.name} to {dt.name}: the Array API leaves complex -> "
                        "real casts out (which part to keep?); use pyaccel.real(x), pyaccel.imag(x) or "
                        f"pyaccel.abs(x), then .astype(pyaccel.{dt.name})")
    if dt is x.dtype and not copy:
        return x
    ops = x.device.ops
    lazy = getattr(ops, "lazy_astype", None)  # GPU devices: a fused cast (docs/fusion.md)
    if lazy is not None:
        r = lazy(x, dt)
        if r is not None:
            return r
    return ops.astype(x, dt)


def reshape(x: Array, /, shape: Any, *, copy: bool | None = None) -> Array:
    """Same data in a new shape (one dimension may be -1); shares the buffer unless copy=True."""
    _check_array(x, "reshape")
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    shape = tuple(shape)
    unknown = [j for j, d in enumerate(shape) if d == -1]
    if len(unknown) > 1:
        raise ValueError(f"reshape: shape {shape} has more than one -1; at most one dimension can be inferred")
    known = prod([d for d in shape if d != -1])
    for d in shape:
        if d != -1 and (not isinstance(d, int) or d < 0):
            raise ValueError(f"reshape: invalid dimension {d!r} in shape {shape}")
    if unknown:
        if known == 0 or x.size % known:
            raise ValueError(f"reshape: cannot reshape an array of size {x.size} (shape {x.shape}) into "
                             f"shape {shape}")
        shape = tuple(x.size // known if d == -1 else d for d in shape)
    if prod(shape) != x.size:
        raise ValueError(f"reshape: cannot reshape an array of size {x.size} (shape {x.shape}) into shape "
                         f"{shape} (size {prod(shape)}); the sizes must match")
    shape = tuple(int(d) for d in shape)
    if copy:
        return reshape(astype(x, x.dtype, copy=True), shape, copy=False)
    if x._lazy is not None:  # a lazy result of fusion (docs/fusion.md): stays lazy where it can
        r = sys.modules["pyaccel.ops.fusion"].defer_reshape(x, shape)
        if r is not None:
            return r
    if x._strides is None:
        return Array._new(x._base, shape, x.dtype, x.device)
    st = reshape_strides(x.shape, x._strides, shape)
    if st is not None:
        return Array._view(x, x._offset, shape, st)
    if copy is False:
        raise ValueError(f"reshape(copy=False): the view of shape {x.shape} (strides "
                         f"{x._strides}) cannot be reshaped to {shape} without a copy; pass copy=None")
    return Array._new(x._buf, shape, x.dtype, x.device)


def permute_dims(x: Array, /, axes: Sequence[int]) -> Array:
    """Permute the axes of ``x`` (a view sharing x's buffer)."""
    _check_array(x, "permute_dims")
    axes = tuple(normalize_axis(a, x.ndim, "permute_dims axes") for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"permute_dims: axes {axes} is not a permutation of 0..{x.ndim - 1}")
    st = x._phys_strides()
    return Array._view(x, x._offset, [x.shape[a] for a in axes], [st[a] for a in axes])


def matrix_transpose(x: Array, /) -> Array:
    """Transpose the last two axes."""
    _check_array(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs an array with >= 2 dimensions, got shape {x.shape}")
    axes = list(range(x.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return permute_dims(x, axes)


def moveaxis(x: Array, source: Any, destination: Any, /) -> Array:
    """Move axes to new positions (the others keep their order)."""
    _check_array(x, "moveaxis")
    src = [normalize_axis(a, x.ndim, "moveaxis source") for a in
           (source if isinstance(source, (tuple, list)) else [source])]
    dst = [normalize_axis(a, x.ndim, "moveaxis destination") for a in
           (destination if isinstance(destination, (tuple, list)) else [destination])]
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source!r} and destination {destination!r} differ in length")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return permute_dims(x, order)


def expand_dims(x: Array, /, axis: Any = 0) -> Array:
    """Insert size-1 axes at ``axis`` (an int or a tuple, positions in the result)."""
    _check_array(x, "expand_dims")
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = x.ndim + len(axes)
    pos = sorted(normalize_axis(a, nd, "expand_dims axis") for a in axes)
    if len(set(pos)) != len(pos):
        raise ValueError(f"expand_dims: axis {axis!r} repeats a position")
    shape = list(x.shape)
    st = list(x._phys_strides())
    for p in pos:
        shape.insert(p, 1)
        st.insert(p, 0)
    return Array._view(x, x._offset, shape, st)


def squeeze(x: Array, /, axis: Any) -> Array:
    """Remove size-1 axes ``axis`` (an int or a tuple)."""
    _check_array(x, "squeeze")
    axes = normalize_axes(axis, x.ndim, "squeeze axis")
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has size {x.shape[a]} (shape {x.shape}); only size-1 "
                             "axes can be removed")
    shape = tuple(d for j, d in enumerate(x.shape) if j not in axes)
    st = tuple(t for j, t in enumerate(x._phys_strides()) if j not in axes)
    return Array._view(x, x._offset, shape, st)


def broadcast_to(x: Array, /, shape: Any) -> Array:
    """``x`` broadcast to ``shape`` (a copy)."""
    _check_array(x, "broadcast_to")
    shape = norm_shape(shape, "broadcast_to shape")
    if len(shape) < x.ndim or _bshapes(x.shape, shape) != shape:
        raise ValueError(f"broadcast_to: cannot broadcast shape {x.shape} to {shape}")
    return x.device.ops.broadcast_to(x, shape)


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """The shape that arrays of ``shapes`` broadcast to (the 2025.12 draft); ValueError names
    the shapes that do not broadcast."""
    return _bshapes(*(norm_shape(s) for s in shapes))


def broadcast_arrays(*arrays: Array) -> list[Array]:
    """Every array broadcast to their common shape."""
    for a in arrays:
        _check_array(a, "broadcast_arrays")
    shape = _bshapes(*(a.shape for a in arrays))
    return [a if a.shape == shape else broadcast_to(a, shape) for a in arrays]


def concat(arrays: Sequence[Array], /, *, axis: int | None = 0) -> Array:
    """Join arrays along an existing axis (``axis=None`` flattens them first)."""
    arrays = list(arrays) if not isinstance(arrays, Array) else [arrays]
    if not arrays:
        raise ValueError("concat needs at least one array")
    for a in arrays:
        _check_array(a, "concat")
    dev = common_device(*(a.device for a in arrays))
    dt = arrays[0].dtype
    for a in arrays[1:]:
        dt = promote(dt, a.dtype)
    dt = check_dtype(dev, dt, "concat")
    if axis is None:
        arrays = [reshape(a, (-1,)) for a in arrays]
        axis = 0
    nd = arrays[0].ndim
    if nd == 0:
        raise ValueError("concat: 0-d arrays cannot be concatenated; use stack, or axis=None")
    ax = normalize_axis(axis, nd, "concat axis")
    for a in arrays:
        if a.ndim != nd or any(a.shape[j] != arrays[0].shape[j] for j in range(nd) if j != ax):
            raise ValueError(
                f"concat: all shapes must match except on axis {ax}; got "
                f"{', '.join(str(b.shape) for b in arrays)}")
    return dev.ops.concat(arrays, ax, dt)


def stack(arrays: Sequence[Array], /, *, axis: int = 0) -> Array:
    """Join arrays of one shape along a new axis."""
    arrays = list(arrays)
    if not arrays:
        raise ValueError("stack needs at least one array")
    for a in arrays:
        _check_array(a, "stack")
        if a.shape != arrays[0].shape:
            raise ValueError(f"stack: all arrays need the same shape; got "
                             f"{', '.join(str(b.shape) for b in arrays)}")
    ax = normalize_axis(axis, arrays[0].ndim + 1, "stack axis")
    return concat([expand_dims(a, ax) for a in arrays], axis=ax)


def unstack(x: Array, /, *, axis: int = 0) -> tuple[Array, ...]:
    """Split ``x`` along ``axis`` into a tuple of arrays with that axis removed."""
    _check_array(x, "unstack")
    if x.ndim == 0:
        raise ValueError("unstack: a 0-d array has no axis to split")
    ax = normalize_axis(axis, x.ndim, "unstack axis")
    return tuple(x[(slice(None),) * ax + (j,)] for j in range(x.shape[ax]))


def flip(x: Array, /, *, axis: Any = None) -> Array:
    """Reverse the order of elements along ``axis`` (all axes when None)."""
    _check_array(x, "flip")
    axes = normalize_axes(axis, x.ndim, "flip axis")
    return x.device.ops.flip(x, axes)


def roll(x: Array, /, shift: Any, *, axis: Any = None) -> Array:
    """Shift elements along ``axis`` (flattened when None), wrapping around."""
    _check_array(x, "roll")
    if axis is None:
        if not isinstance(shift, int):
            raise ValueError(f"roll: with axis=None, shift must be an int, got {shift!r}")
        return reshape(roll(reshape(x, (-1,)), shift, axis=0), x.shape)
    shifts = list(shift) if isinstance(shift, (tuple, list)) else [shift]
    axes = list(axis) if isinstance(axis, (tuple, list)) else [axis]
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift {shift!r} and axis {axis!r} must have the same length")
    total: dict[int, int] = {}
    for s, a in zip(shifts, axes, strict=True):
        a = normalize_axis(a, x.ndim, "roll axis")
        total[a] = total.get(a, 0) + int(s)
    out = x
    for a, s in total.items():
        n = x.shape[a]
        if n == 0 or s % n == 0:
            continue
        k = s % n
        pre = (slice(None),) * a
        out = concat([out[pre + (slice(n - k, None),)], out[pre + (slice(0, n - k),)]], axis=a)
    return out if out is not x else astype(x, x.dtype, copy=True)


def tile(x: Array, repetitions: Sequence[int], /) -> Array:
    """Repeat the whole array ``repetitions[i]`` times along axis i."""
    _check_array(x, "tile")
    reps = tuple(int(r) for r in repetitions)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be >= 0, got {reps}")
    nd = max(len(reps), x.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    shape = (1,) * (nd - x.ndim) + x.shape
    inter = []
    big = []
    for r, d in zip(reps, shape, strict=True):
        inter += [1, d]
        big += [r, d]
    y = broadcast_to(reshape(x, tuple(inter)), tuple(big))
    return reshape(y, tuple(r * d for r, d in zip(reps, shape, strict=True)))


def repeat(x: Array, repeats: Any, /, *, axis: int | None = None) -> Array:
    """Repeat each element ``repeats`` times along ``axis`` (flattened when None)."""
    _check_array(x, "repeat")
    if axis is None:
        x = reshape(x, (-1,))
        axis = 0
    ax = normalize_axis(axis, x.ndim, "repeat axis")
    if isinstance(repeats, Array) or isinstance(repeats, (list, tuple)):
        reps = repeats.tolist() if isinstance(repeats, Array) else list(repeats)
        if isinstance(reps, int):
            reps = [reps]
        if len(reps) == 1:
            reps = reps * x.shape[ax]
        if len(reps) != x.shape[ax]:
            raise ValueError(f"repeat: {len(reps)} repeats for an axis of length {x.shape[ax]}")
        idx = [j for j, r in enumerate(reps) for _ in range(int(r))]
        return take(x, asarray(idx, dtype=index_dtype(x.device), device=x.device), axis=ax)
    r = int(repeats)
    if r < 0:
        raise ValueError(f"repeat: repeats must be >= 0, got {r}")
    shape = list(x.shape)
    y = reshape(x, tuple(shape[: ax + 1] + [1] + shape[ax + 1:]))
    y = broadcast_to(y, tuple(shape[: ax + 1] + [r] + shape[ax + 1:]))
    shape[ax] *= r
    return reshape(y, tuple(shape))


def take(x: Array, indices: Any, /, *, axis: int | None = None) -> Array:
    """Elements of ``x`` at integer ``indices`` along ``axis``."""
    _check_array(x, "take")
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"take: axis is required for a {x.ndim}-d array (shape {x.shape})")
        axis = 0
    ax = normalize_axis(axis, x.ndim, "take axis")
    if isinstance(indices, Array) and indices.dtype.kind not in "iu":
        raise TypeError(f"take: indices must be an integer array, got {indices.dtype.name}")
    return x[(slice(None),) * ax + (indices,)]


def take_along_axis(x: Array, indices: Array, /, *, axis: int = -1) -> Array:
    """``x`` picked along ``axis`` by ``indices`` of the same rank (e.g. from argsort)."""
    _check_array(x, "take_along_axis")
    _check_array(indices, "take_along_axis")
    if indices.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices must have x's rank {x.ndim}, got shape {indices.shape}")
    ax = normalize_axis(axis, x.ndim, "take_along_axis axis")
    key = []
    for d in range(x.ndim):
        if d == ax:
            key.append(indices)
        else:
            shp = [1] * x.ndim
            shp[d] = x.shape[d]
            n = x.shape[d]
            key.append(reshape(x.device.ops.arange(0, n, 1, n, indices.dtype), tuple(shp)))
    return x[tuple(key)]


place_module(globals(), __all__)  # the committed device rule (pyaccel/placement.py)
register(astype=astype, permute_dims=permute_dims, matrix_transpose=matrix_transpose)
