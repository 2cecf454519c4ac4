"""``x[key]`` and ``x[key] = value`` with NumPy / Array API semantics.

Keys: ints, slices (any step), ``...``, ``None``, Python bools, integer arrays (pyaccel
Arrays, lists, NumPy arrays; broadcast together, NumPy's placement rules for the
result axes) and boolean masks.

This module parses keys (shared by every device). A basic key (ints, slices, ``...``,
``None``) gives a *view* on every device (no kernel; ``basic_view``), and ``x[key] = v``
through a strided view is one strided scatter into its base. Other keys call the device's
op provider (``device.ops.getitem`` / ``setitem``): on ``cpu:0`` NumPy indexing; on WebGPU
devices basic setitem is one strided scatter kernel; integer-array indexing first computes the element offsets of the
indexed axes on the device (int32), then gathers or scatters through them. A boolean
mask has a data-dependent result shape, so it reads the mask back to the host (a
device sync) and continues with the integer positions of its True elements;
``x[mask] = scalar`` needs no sync (it is a ``where``). Index values given as host
data (lists, NumPy arrays, ints) are bounds-checked; the values of an index *Array*
already on a GPU are not (that would need a sync): out-of-range positions there read
or write unspecified elements (never outside the buffer). With repeated indices in a
setitem, which write wins is unspecified (NumPy: the last).
"""

from __future__ import annotations

from typing import Any

from ._dispatch import register
from ._keys import (  # noqa: F401 - re-exported (the op providers import them from _keys)
    _is_int,
    _Plan,
    adv_layout,
    check_value_shape,
    is_basic,
    numpy_key,
    plan_key,
)
from .array import Array, _write_view, asarray
from .placement import place_module
from .promotion import check_scalar_fits

__all__ = ["getitem", "setitem"]


def basic_view(x: Array, key: Any) -> Array:
    """``x[key]`` for a basic key: a view sharing x's buffer (no kernel)."""
    p = plan_key(x, key, x._phys_strides())
    return Array._view(x, x._offset + p.offset, [s for s, _ in p.after], [t for _, t in p.after])


def getitem(x: Array, key: Any) -> Array:
    """``x[key]``: a view for a basic key (ints, slices, ``...``, ``None``), else a new array."""
    if is_basic(key):
        return basic_view(x, key)
    return x.device.ops.getitem(x, key)


def _value_operand(x: Array, value: Any) -> Any:
    if isinstance(value, Array):
        if value.device is not x.device:
            raise ValueError(f"x[...] = value: value is on {value.device.uri}, x on {x.device.uri}; "
                             "move it with value.to_device(...)")
        if value._strides is None and value._base is x._base:
            # the source overlaps the destination (a strided view is gathered into a copy)
            value = value.astype(value.dtype, copy=True)
        return value
    if isinstance(value, (bool, int, float)):
        if isinstance(value, int) and not isinstance(value, bool):
            check_scalar_fits(value, x.dtype, "x[...] = value")
        if x.dtype.kind in "iu" and isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise ValueError(f"x[...] = {value}: cannot store a non-finite float in a "
                                 f"{x.dtype.name} array")
            value = int(value)
        if x.dtype.kind == "b":
            value = bool(value)
        return value
    if isinstance(value, complex):
        if x.dtype.kind != "c":
            raise TypeError(f"x[...] = {value!r}: cannot store a complex value in a {x.dtype.name} array; "
                            "store value.real, or use a complex array")
        return value
    return asarray(value, device=x.device)


def setitem(x: Array, key: Any, value: Any) -> None:
    """``x[key] = value`` in place (value broadcast and cast to x's dtype). On a view, only
    the view's elements of its base change."""
    v = _value_operand(x, value)
    if x._strides is None:
        x.device.ops.setitem(x, key, v)
        return
    if is_basic(key):  # a view of the view: one strided scatter into the base
        y = basic_view(x, key)
        if isinstance(v, Array):
            check_value_shape(v, list(y.shape), key, x)
        _write_view(y, v)
        return
    # advanced keys on a strided view: on a contiguous copy, then its elements written back
    t = x._materialize()
    x.device.ops.setitem(t, key, v)
    _write_view(x, t)


# the committed device rule (pyaccel/placement.py); x[...] = v never moves x
place_module(globals(), __all__, pinned={"setitem": 0})
register(getitem=getitem, setitem=setitem)
