"""Array API elementwise functions, generated from the op table (``pyaccel/ops/table.py``).

Every function broadcasts its array arguments, accepts Python scalars as *weak*
operands (``x + 1`` keeps x's dtype; see :mod:`pyaccel.promotion`) and returns a new
Array on the arguments' device. Validation, promotion and broadcasting happen here once;
the device's op provider computes the result (``device.ops.elementwise``): on ``cpu:0``
the table's NumPy function, on WebGPU devices one generated kernel per (op, dtypes),
recorded without a wait. A call whose signature was seen before replays the provider's
memo (no promotion, no planning).

Semantics on WebGPU devices (what the tests check against NumPy):

* NaN/inf: as NumPy: NaN propagates through arithmetic, ``maximum``/``minimum``/``clip``,
  comparisons with NaN are False except ``not_equal``; ``log(-1)``, ``sqrt(-1)`` are NaN,
  ``log(0)`` is -inf, ``x / 0`` is +-inf (NaN for 0 / 0), ``pow`` follows C99 ``pow``
  (``pow(-inf, 0.5)`` is +inf; NumPy's scalar-exponent fast path, used on cpu, gives NaN).
  Denormals are kept where the device keeps them (lavapipe does).
* Integers: overflow wraps (two's complement), as in NumPy. ``floor_divide`` and
  ``remainder`` by zero give 0 (NumPy's result, without its warning; WGSL alone would
  give ``x / 0 == x``). ``pow`` with a negative integer exponent gives 0 (1 for base 1,
  +-1 for base -1) where NumPy raises ValueError. Shifts by >= the bit width give 0
  (left) or the sign fill (right), as NumPy.
* Float -> int conversion of NaN/out-of-range values is implementation-defined (NumPy
  too); lavapipe clamps.
* float16 data (only where ``Capability.F16``) computes in float32 and rounds once, like
  NumPy's float16 loops. Accuracy: add/sub/mul exact rounding; divide and sqrt within
  2.5 ULP; exp/log family a few ULP; sin/cos within 2^-11 absolute on [-pi, pi] (the
  WebGPU bound).
* Float-only functions (``sin``, ``divide``, ...) accept integer and bool arrays and
  compute in the device's default float dtype (``default_dtypes(device=)``: float32 on a
  GPU device whose float64 is emulated, float64 on cpu and under ``set_dtype_policy("exact")``).
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any

from ._dispatch import register
from ._shapes import broadcast_shapes
from .array import Array
from .device import Device
from .dtypes import DType, bool_
from .ops import table as _table
from .ops.fusion import enabled as _fusion_on
from .ops.table import CATEGORIES, FLOAT_CATEGORIES, OpDef
from .placement import placed, resolve
from .promotion import (
    check_dtype,
    check_scalar_fits,
    common_device,
    default_complex,
    default_float,
    default_int,
    int_range,
    on_policy_change,
    promote,
    real_dtype,
    scalar_result,
)

_SCALARS = (bool, int, float, complex)


def _type_error_operand(name: str, x: Any) -> TypeError:
    return TypeError(
        f"{name}: expected a pyaccel Array or a Python scalar, got {type(x).__name__}; convert it "
        "with pyaccel.asarray(x, device=...)"
    )


def _scalar_dtype(value: Any, dev: Device) -> DType:
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return default_int(dev)
    if isinstance(value, complex):
        return default_complex(dev)
    return default_float(dev)


def _promote_operands(name: str, ops: list[Any], dev: Device) -> DType:
    dt: DType | None = None
    for a in ops:
        if isinstance(a, Array):
            dt = a.dtype if dt is None else promote(dt, a.dtype)
    scalars = [a for a in ops if not isinstance(a, Array)]
    if dt is None:
        # only scalars (e.g. where(c, 1, 2.5)): the strongest Python kind wins
        dt = _scalar_dtype(scalars[0], dev)
        for s in scalars[1:]:
            dt = promote(dt, _scalar_dtype(s, dev))
        return dt
    for s in scalars:
        dt = scalar_result(dt, s, dev)
    return dt


def _check_category(row: OpDef, dt: DType) -> None:
    kinds = CATEGORIES[row.dtypes]
    if dt.kind in kinds or (row.dtypes in FLOAT_CATEGORIES and dt.kind in "biu"):
        return
    need = {"numeric": "a numeric (integer or floating-point)", "real": "a real numeric",
            "integer": "an integer", "integer_or_bool": "an integer or bool", "bool": "a bool",
            "real_floating": "a real (not complex)"}[row.dtypes]
    fix = "x.astype(pyaccel.int32)" if dt.kind == "b" else "x.astype(pyaccel.int32) or a float dtype"
    if row.dtypes in ("integer", "integer_or_bool"):
        fix = "an integer dtype (x.astype(pyaccel.int32))"
    if dt.kind == "c":
        fix = ("a real part first: pyaccel.real(x), pyaccel.imag(x) or pyaccel.abs(x) (the Array API "
               f"defines {row.name} for real dtypes only)")
    raise TypeError(f"{row.name} needs {need} dtype, got {dt.name}; convert with {fix}")


def _result(row: OpDef, dt: DType, dev: Device) -> tuple[DType, DType]:
    """(compute dtype, output dtype) of a row applied to promoted dtype ``dt``."""
    if row.dtypes in FLOAT_CATEGORIES and dt.kind in "biu":
        dt = default_float(dev)  # integer / bool inputs of float functions
    if row.result == "float":
        return dt, dt
    if row.result == "bool":
        return dt, bool_
    if row.result == "realpart":  # abs, real, imag: complex64 -> float32, complex128 -> float64
        return dt, real_dtype(dt)
    return dt, dt


# signature -> (indexes of int scalars to range-check, their dtype, the provider's memo):
# everything _apply derives from a signature (dtype, shape, device and buffer size of each
# array; the Python type of each scalar) is fixed, so a repeat call only checks int
# scalars' ranges and replays the memo (an output buffer and one recorded kernel).
# (kept per device in Device.memo("elementwise_fast"): it dies with its device)
_FAST_LIMIT = 1024
# bumped when the dtype policy changes (result dtypes of int -> float functions follow it):
# part of every memo key, so a memo made under another policy is never replayed
_POLICY_EPOCH = [0]


def _policy_changed() -> None:
    _POLICY_EPOCH[0] += 1


on_policy_change(_policy_changed)
_SIG_SCALARS = (bool, int, float, complex)


def _signature(row: OpDef, args: tuple[Any, ...]) -> tuple | None:
    # (rows are module constants: ids stay valid; fusion on / off replays different memos)
    key: list[Any] = [id(row), _POLICY_EPOCH[0], _fusion_on()]
    for a in args:
        t = type(a)
        if t is Array:
            if a._strides is not None:
                return None  # a strided view: gathered on each call (no memo)
            b = a._b  # (None while lazy: a fused result; the memo does not depend on its size)
            key.append((a._dtype, a._shape, a._device, -1 if b is None else b.nbytes))
        elif t in _SIG_SCALARS:
            key.append(t)
        else:
            return None
    return tuple(key)


def _memo(args: tuple[Any, ...]) -> Any:
    """The elementwise memo of the first Array argument's device (Device.memo)."""
    for a in args:
        if type(a) is Array:
            return a._device.memo("elementwise_fast", _FAST_LIMIT)
    return None


def _apply(row: OpDef, args: tuple[Any, ...]) -> Array:
    key = _signature(row, args)
    if key is not None:
        fast = _memo(args).get(key)
        if fast is not None:
            fits, conv, run = fast
            for k in fits:
                check_scalar_fits(args[k], conv, row.name)
            return _mark(run(args), args)
    return _mark(_apply_slow(row, args, key), args)


def _mark(out: Array, args: tuple[Any, ...]) -> Array:
    """The result is uncommitted when every array operand is (pyaccel/placement.py)."""
    for a in args:
        if type(a) is Array and a._committed:
            return out
    out._committed = False
    return out


def _apply_slow(row: OpDef, args: tuple[Any, ...], key: tuple | None) -> Array:
    name = row.name
    arrays = [a for a in args if isinstance(a, Array)]
    for a in args:
        if not isinstance(a, (Array, *_SCALARS)):
            raise _type_error_operand(name, a)
    if not arrays:
        raise TypeError(f"{name}: at least one argument must be a pyaccel Array; got "
                        f"{', '.join(type(a).__name__ for a in args)}")
    dev = arrays[0].device
    if any(a.device is not dev for a in arrays):  # the committed rule moves uncommitted operands
        args = resolve(args, None, name)[0]
        arrays = [a for a in args if isinstance(a, Array)]
        dev = common_device(*(a.device for a in arrays))
        key = None  # (the memo is for same-device operands)
    value_args = list(args[1:]) if name == "where" else list(args)
    dt = _promote_operands(name, value_args, dev)
    if name == "where":
        cond = args[0]
        if isinstance(cond, Array) and cond.dtype is not bool_:
            raise TypeError(f"where: condition must be a bool array, got {cond.dtype.name}; "
                            "use x != 0 (or x.astype(pyaccel.bool))")
    _check_category(row, dt)
    cdt0, out_dt0 = _result(row, dt, dev)
    what = f"{name}({', '.join(a.dtype.name if isinstance(a, Array) else type(a).__name__ for a in args)})"
    cdt = check_dtype(dev, cdt0, what)
    out_dt = check_dtype(dev, out_dt0, what)
    conv_dt = cdt
    fits = []
    for k, a in enumerate(args):
        is_value = not (name == "where" and k == 0)
        if is_value and isinstance(a, int) and not isinstance(a, bool):
            check_scalar_fits(a, conv_dt, name)
            fits.append(k)
    shape = broadcast_shapes(*(a.shape for a in arrays))
    out, fast = dev.ops.elementwise(row, args, shape, cdt, out_dt)
    # memoise for this signature when no downcast happened (the key holds the dtype
    # policy's epoch: default floats of int inputs depend on it)
    if fast is not None and key is not None and cdt is cdt0 and out_dt is out_dt0:
        dev.memo("elementwise_fast", _FAST_LIMIT).put(key, (tuple(fits), conv_dt, fast))
    return out


# ---------------------------------------------------------------------------
# public functions (one per table row)
# ---------------------------------------------------------------------------
def _make_unary(row: OpDef) -> Callable[[Array], Array]:
    def f(x: Array, /) -> Array:
        return _apply(row, (x,))

    return f


def _make_binary(row: OpDef) -> Callable[[Any, Any], Array]:
    def f(x1: Any, x2: Any, /) -> Array:
        return _apply(row, (x1, x2))

    return f


def _finish(f: Callable[..., Any], row: OpDef) -> Callable[..., Any]:
    f.__name__ = f.__qualname__ = row.name
    f.__module__ = __name__
    cat = row.dtypes.replace("_", " ")
    res = {"same": "the promoted dtype", "bool": "bool", "float": "a floating-point dtype"}.get(
        row.result, row.result)
    f.__doc__ = (f"Elementwise ``{row.name}`` (Array API); inputs: {cat} dtypes; result: {res}. "
                 f"NumPy reference: ``numpy.{row.numpy}``.")
    return f


_g = globals()
for _row in _table.ELEMENTWISE:
    if _row.name in ("clip", "where"):
        continue
    _maker = _make_unary if _row.arity == 1 else _make_binary
    _g[_row.name] = _finish(_maker(_row), _row)


def clip(x: Array, /, min: Any = None, max: Any = None) -> Array:  # noqa: A002 - Array API names
    """Clamp each element of ``x`` to ``[min, max]`` (NaN propagates); result has x's dtype.

    ``min``/``max`` may be None, Python scalars or arrays (cast to x's dtype); integer
    bounds outside x's dtype range are clamped to the range.
    """
    row = _table.get("clip")
    if not isinstance(x, Array):
        raise _type_error_operand("clip", x)
    _check_category(row, x.dtype)
    dt = x.dtype
    bounds = []
    for v, lo_side in ((min, True), (max, False)):
        if v is None:
            if dt.kind == "f":
                v = float("-inf") if lo_side else float("inf")
            else:
                lo, hi = int_range(dt)
                v = lo if lo_side else hi
        elif isinstance(v, Array):
            if v.dtype is not dt:
                v = v.astype(dt)
        elif isinstance(v, _SCALARS):
            if dt.kind in "iu":
                lo, hi = int_range(dt)
                if isinstance(v, float):
                    if math.isnan(v):
                        raise ValueError(f"clip: NaN bound for an integer array ({dt.name})")
                    if math.isinf(v):
                        v = lo if v < 0 else hi
                    else:  # integer x >= 1.5 <=> x >= 2; x <= 1.5 <=> x <= 1
                        v = math.ceil(v) if lo_side else math.floor(v)
                v = builtins.min(builtins.max(int(v), lo), hi)
            else:
                v = float(v)
        else:
            raise _type_error_operand("clip", v)
        bounds.append(v)
    common_device(*(a.device for a in (x, *bounds) if isinstance(a, Array)))
    broadcast_shapes(*(a.shape for a in (x, *bounds) if isinstance(a, Array)))
    return x.device.ops.clip(x, bounds[0], bounds[1])


def where(condition: Any, x1: Any, x2: Any, /) -> Array:
    """``x1`` where ``condition`` is True, else ``x2`` (broadcast; scalars allowed)."""
    return _apply(_table.get("where"), (condition, x1, x2))


__all__ = [r.name for r in _table.ELEMENTWISE]

clip = placed(clip)  # (the others apply the committed rule in _apply_slow)

register(**{name: globals()[name] for name in __all__})
