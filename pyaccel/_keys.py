"""Index keys parsed into plans: the part of ``x[key]`` shared by every device and by both
layers (the namespace's views in :mod:`pyaccel.indexing`, the providers' gathers and
scatters). Below the namespace: it imports nothing above :mod:`pyaccel.array`, so the op
layer (``pyaccel/ops``) uses it without climbing into :mod:`pyaccel.indexing`, which
re-exports these names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import _host
from ._shapes import broadcast_shapes, contiguous_strides
from .array import Array


@dataclass
class _Plan:
    offset: int = 0
    before: list[tuple[int, int]] = field(default_factory=list)  # basic out dims before adv block
    after: list[tuple[int, int]] = field(default_factory=list)  # basic out dims after (or all)
    adv: list[tuple[Any, int, int]] = field(default_factory=list)  # (index, dim size, stride)
    adv_first: bool = False  # adv block goes first (non-adjacent advanced indices)
    empty_bool: bool = False


def _is_int(k: Any) -> bool:
    return (isinstance(k, int) and not isinstance(k, bool)) or (
        type(k).__module__ == "numpy" and hasattr(k, "__index__") and getattr(k, "ndim", 0) == 0
        and getattr(getattr(k, "dtype", None), "kind", "") in "iu")


def _is_seq(k: Any) -> bool:
    return isinstance(k, (list, tuple)) or _host.is_numpy_array(k)


def _key_error(x: Array, key: Any, msg: str) -> IndexError:
    return IndexError(f"index {key!r} for an array of shape {x.shape}: {msg}")


def _consumed(k: Any) -> int:
    if k is None or k is Ellipsis or isinstance(k, bool):
        return 0
    if isinstance(k, Array):
        return k.ndim if k.dtype.kind == "b" else 1
    if _host.is_numpy_array(k) and k.dtype.kind == "b":
        return k.ndim
    if isinstance(k, list):
        flat, shape = _host.nested(k, "index")
        if flat and all(isinstance(v, bool) for v in flat):
            return len(shape)
    return 1


def _normalize_key(x: Array, key: Any) -> list[Any]:
    items = list(key) if isinstance(key, tuple) else [key]
    n_ell = sum(1 for k in items if k is Ellipsis)
    if n_ell > 1:
        raise _key_error(x, key, "an index can only have a single ellipsis ('...')")
    used = sum(_consumed(k) for k in items)
    if used > x.ndim:
        raise _key_error(x, key, f"too many indices: {used} for {x.ndim} dimension(s)")
    fill = [slice(None)] * (x.ndim - used)
    if n_ell:  # (by identity: list.index compares with ==, elementwise for NumPy arrays)
        j = next(i for i, k in enumerate(items) if k is Ellipsis)
        items = items[:j] + fill + items[j + 1:]
    else:
        items = items + fill
    return items


def _host_index(x: Array, key: Any, k: Any, n: int) -> tuple[list, tuple[int, ...]]:
    """Host index data (list / NumPy) as a flat list of in-range ints and its shape."""
    np = _host.numpy()
    if np is not None and _host.is_numpy_array(k):
        arr = np.asarray(k)
        if arr.dtype.kind not in "iu":
            raise _key_error(x, key, f"index arrays must be integers or booleans, got {arr.dtype}")
        flat, shape = arr.reshape(-1).tolist(), tuple(arr.shape)
    else:
        flat, shape = _host.nested(k, "index")
        for v in flat:
            if isinstance(v, bool) or not isinstance(v, int):
                raise _key_error(x, key, f"index lists must hold ints, got {v!r}")
    out = []
    for v in flat:
        if not -n <= v < n:
            raise _key_error(x, key, f"index {v} is out of bounds for an axis of size {n}")
        out.append(v + n if v < 0 else v)
    return out, shape


def _bool_positions(x: Array, key: Any, mask: Any, dims: tuple[int, ...]) -> list[tuple[list, tuple]]:
    """Integer positions (one list per mask axis) of the True elements of a mask (host sync)."""
    if isinstance(mask, Array):
        mshape = mask.shape
        vals = mask.tolist()
        flat = _host.nested(vals, "mask")[0] if mask.ndim else [vals]
    else:
        np = _host.numpy()
        if np is not None and _host.is_numpy_array(mask):
            flat, mshape = np.asarray(mask).reshape(-1).tolist(), tuple(mask.shape)
        else:
            flat, mshape = _host.nested(list(mask), "mask")
    if tuple(mshape) != tuple(dims):
        raise _key_error(x, key, f"boolean index of shape {tuple(mshape)} does not match the indexed "
                                 f"axes of shape {tuple(dims)}")
    cols: list[list[int]] = [[] for _ in dims]
    strides = contiguous_strides(dims)
    for j, v in enumerate(flat):
        if v:
            for a, s in enumerate(strides):
                cols[a].append((j // s) % dims[a] if dims[a] else 0)
    return [(c, (len(c),)) for c in cols]


def plan_key(x: Array, key: Any, strides: tuple[int, ...] | None = None) -> _Plan:
    """The key's plan over x's elements with ``strides`` (default: C-contiguous ones)."""
    items = _normalize_key(x, key)
    st = contiguous_strides(x.shape) if strides is None else strides
    p = _Plan()
    d = 0
    basic: list[tuple[int, int, int]] = []  # (position in key walk, size, stride)
    adv_positions: list[int] = []
    # a 0-d boolean mask adds an axis of length 1 or 0, exactly like a Python bool (reads it back)
    items = [bool(k) if (isinstance(k, Array) or _host.is_numpy_array(k)) and k.dtype.kind == "b"
             and k.ndim == 0 else k for k in items]
    has_array = any(isinstance(k, Array) or _is_seq(k) for k in items)
    for pos, k in enumerate(items):
        if k is None:
            basic.append((pos, 1, 0))
        elif isinstance(k, bool):
            basic.append((pos, 1, 0))
            if not k:
                p.empty_bool = True
                basic[-1] = (pos, 0, 0)
        elif _is_int(k):
            n = x.shape[d]
            v = int(k)
            if not -n <= v < n:
                raise _key_error(x, key, f"index {v} is out of bounds for axis {d} with size {n}")
            p.offset += (v + n if v < 0 else v) * st[d]
            if has_array:
                adv_positions.append(pos)
            d += 1
        elif isinstance(k, slice):
            n = x.shape[d]
            for part in (k.start, k.stop, k.step):
                if part is not None and not hasattr(part, "__index__"):
                    raise _key_error(x, key, f"slice bounds must be ints or None, got {part!r}")
            if k.step == 0:
                raise _key_error(x, key, "slice step cannot be zero")
            start, stop, step = k.indices(n)
            length = len(range(start, stop, step))
            if length:
                p.offset += start * st[d]
            basic.append((pos, length, step * st[d]))
            d += 1
        elif isinstance(k, Array) or _is_seq(k):
            if isinstance(k, Array) or _host.is_numpy_array(k):
                is_bool = k.dtype.kind == "b"
            else:
                is_bool = _is_bool_list(k)
            if is_bool:
                nd = len(_host.nested(list(k), "mask")[1]) if isinstance(k, (list, tuple)) else k.ndim
                dims = x.shape[d:d + nd]
                for a, (cols, shape) in enumerate(_bool_positions(x, key, k, dims)):
                    p.adv.append(((cols, shape), x.shape[d + a], st[d + a]))
                d += nd
            else:
                if isinstance(k, Array) and k.dtype.kind not in "iu":
                    raise _key_error(x, key, f"index arrays must be integer or bool, got {k.dtype.name}")
                if isinstance(k, Array) and k.device is not x.device:
                    raise _key_error(x, key, f"the index array is on {k.device.uri}, the array on "
                                             f"{x.device.uri}; move it with idx.to_device(...)")
                p.adv.append((k if isinstance(k, Array) else _host_index(x, key, k, x.shape[d]),
                              x.shape[d], st[d]))
                d += 1
            adv_positions.append(pos)
        else:
            raise _key_error(x, key, f"unsupported index item {k!r} ({type(k).__name__}); use ints, "
                                     "slices, ..., None, or integer/boolean arrays")
    if p.adv:
        first, last = min(adv_positions), max(adv_positions)
        contiguous = not any(first < b[0] < last for b in basic)
        p.adv_first = not contiguous
        if contiguous:
            p.before = [(s, t) for (pos, s, t) in basic if pos < first]
            p.after = [(s, t) for (pos, s, t) in basic if pos > last]
        else:
            p.after = [(s, t) for (_, s, t) in basic]
    else:
        p.after = [(s, t) for (_, s, t) in basic]
    return p


def _is_bool_list(k: Any) -> bool:
    if not isinstance(k, (list, tuple)):
        return False
    flat, _ = _host.nested(list(k), "index")
    return bool(flat) and all(isinstance(v, bool) for v in flat)


def numpy_key(x: Array, key: Any, view: Any) -> Any:
    """``key`` for NumPy indexing of host memory: index Arrays become NumPy arrays (``view``)."""
    items = key if isinstance(key, tuple) else (key,)
    out = []
    for k in items:
        if isinstance(k, Array):
            if k.device is not x.device:
                raise _key_error(x, key, f"the index array is on {k.device.uri}, the array on "
                                         f"{x.device.uri}; move it with idx.to_device(...)")
            out.append(view(k))
        else:
            out.append(k)
    return tuple(out)


def adv_layout(p: _Plan, bshape: tuple[int, ...]) -> tuple[list[int], list[int], list[int]]:
    """(result shape, x strides, offset-array strides) with the advanced block placed."""
    bst = contiguous_strides(bshape)
    if p.adv_first:
        shape = list(bshape) + [s for s, _ in p.after]
        xs = [0] * len(bshape) + [t for _, t in p.after]
        os_ = list(bst) + [0] * len(p.after)
    else:
        shape = [s for s, _ in p.before] + list(bshape) + [s for s, _ in p.after]
        xs = [t for _, t in p.before] + [0] * len(bshape) + [t for _, t in p.after]
        os_ = [0] * len(p.before) + list(bst) + [0] * len(p.after)
    return shape, xs, os_


def _is_basic_item(k: Any) -> bool:
    return k is None or k is Ellipsis or isinstance(k, slice) or _is_int(k)


def is_basic(key: Any) -> bool:
    """True for a basic key (ints, slices, ``...``, ``None``): its result is a view."""
    if isinstance(key, tuple):
        return all(_is_basic_item(k) for k in key)
    return _is_basic_item(key)


def check_value_shape(v: Array, shape: list[int], key: Any, x: Array) -> None:
    try:
        ok = broadcast_shapes(v.shape, tuple(shape)) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"x[{key!r}] = value: value of shape {v.shape} cannot be broadcast to the "
                         f"indexed shape {tuple(shape)}")
