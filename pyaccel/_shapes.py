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
