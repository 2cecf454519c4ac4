"""Shape arithmetic shared by the array modules (no device work)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def prod(shape: Sequence[int]) -> int:
    """Number of elements of a shape."""
    n = 1
    for d in shape:
        n *= d
    return n


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Element strides of a C-contiguous array of ``shape``."""
    out = []
    s = 1
    for d in reversed(shape):
        out.append(s)
        s *= d
    return tuple(reversed(out))


def norm_shape(shape: Any, what: str = "shape") -> tuple[int, ...]:
    """A shape tuple from an int or a sequence of ints (each >= 0)."""
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        out = tuple(shape)
    except TypeError:
        raise TypeError(f"{what} must be an int or a tuple of ints, got {shape!r}") from None
    for d in out:
        if isinstance(d, bool) or not hasattr(d, "__index__"):
            raise TypeError(f"{what} must contain ints, got {shape!r}")
        if d.__index__() < 0:
            raise ValueError(f"{what} {shape!r} has a negative dimension; dimensions must be >= 0")
    return tuple(d.__index__() for d in out)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The broadcast of shapes (Array API rules); ValueError names the shapes."""
    nd = max((len(s) for s in shapes), default=0)
    out = [1] * nd
    for s in shapes:
        for j, d in enumerate(s):
            k = nd - len(s) + j
            if out[k] == 1:
                out[k] = d
            elif d != 1 and d != out[k]:
                raise ValueError(
                    f"shapes {', '.join(str(tuple(x)) for x in shapes)} cannot be broadcast together "
                    f"(axis {k - nd}: {out[k]} vs {d}); reshape or use expand_dims so sizes match or are 1"
                )
    return tuple(out)


def broadcast_strides(shape: Sequence[int], out_shape: Sequence[int]) -> tuple[int, ...]:
    """Element strides of a C-contiguous ``shape`` read over ``out_shape`` (0 where broadcast)."""
    cs = contiguous_strides(shape)
    pad = len(out_shape) - len(shape)
    st = [0] * pad
    for j, d in enumerate(shape):
        st.append(0 if d == 1 and out_shape[pad + j] != 1 else cs[j])
    return tuple(st)


def normalize_axis(axis: Any, ndim: int, what: str = "axis") -> int:
    if isinstance(axis, bool) or not hasattr(axis, "__index__"):
        raise TypeError(f"{what} must be an int, got {axis!r}")
    a = axis.__index__()
    if not -ndim <= a < ndim:
        # NumPy's AxisError wording ("source: axis 10 is out of bounds for array of dimension 1"),
        # which clients' tests match (SciPy's input validation)
        who = what[:-5] if what.endswith(" axis") else "" if what == "axis" else what
        where = f"{who}: " if who else ""
        raise IndexError(f"{where}axis {axis} is out of bounds for array of dimension {ndim} "
                         + (f"(valid: {-ndim}..{ndim - 1})" if ndim else "(a 0-d array has no axes)"))
    return a % ndim


def normalize_axes(axis: Any, ndim: int, what: str = "axis") -> tuple[int, ...]:
    """Sorted, unique axes from None (all), an int or a tuple of ints."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        out = [normalize_axis(a, ndim, what) for a in axis]
        if len(set(out)) != len(out):
            raise ValueError(f"{what} {tuple(axis)!r} repeats an axis")
        return tuple(sorted(out))
    return (normalize_axis(axis, ndim, what),)


def reshape_strides(shape: tuple[int, ...], strides: tuple[int, ...],
                     new: tuple[int, ...]) -> tuple[int, ...] | None:
    """Strides that give ``new`` over the same elements without a copy, or None (NumPy's
    rule: each group of old axes merged into new ones must be contiguous)."""
    if prod(shape) == 0:
        return contiguous_strides(new)
    old = [(d, t) for d, t in zip(shape, strides, strict=True) if d != 1]
    od = [d for d, _ in old]
    ot = [t for _, t in old]
    ns = [0] * len(new)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(new) and oi < len(od):
        np_, op = new[ni], od[oi]
        while np_ != op:
            if np_ < op:
                np_ *= new[nj]
                nj += 1
            else:
                op *= od[oj]
                oj += 1
        for ok in range(oi, oj - 1):
            if ot[ok] != od[ok + 1] * ot[ok + 1]:
                return None
        ns[nj - 1] = ot[oj - 1]
        for nk in range(nj - 1, ni, -1):
            ns[nk - 1] = ns[nk] * new[nk]
        ni, nj, oi, oj = nj, nj + 1, oj, oj + 1
    return tuple(ns)
