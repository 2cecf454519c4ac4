"""Data-type rules of the array namespace: which dtypes a device holds, type promotion,
weak Python scalars, default dtypes, the dtype policy, and the Array API data-type
functions (``result_type``, ``can_cast``, ``finfo``, ``iinfo``, ``isdtype``).

Device dtypes come from the dtype table (:data:`pyaccel.dtypes.DTYPE_TABLE`) and the
device's capability flags: ``cpu:0`` (FLOAT64, INT64, F16) holds every dtype (NumPy).
WebGPU devices hold bool, int8/16/32, uint8/16/32, float32, and int64/uint64/float64
emulated over 32-bit words (``Capability.INT64 | FLOAT64 | EMULATED_64``), plus float16
when ``Capability.F16`` is set.

The dtype policy (``pyaccel.set_dtype_policy(name)`` or ``PYACCEL_DTYPE_POLICY=name``) picks
the default dtypes; explicit dtypes are never changed, except by ``"downcast"``:

* ``"fast"`` (the default): where float64 is emulated (``Capability.FLOAT64`` with
  ``EMULATED_64``: WebGPU devices), the default real float is float32 and the default complex
  complex64 (Python floats and complex numbers, ``linspace``, float ``arange``, fills without
  ``dtype=``, int -> float results); int64 stays the default integer and index dtype. Where
  float64 is native (cpu) the defaults are float64 / complex128.
* ``"exact"`` (``"strict"``, the name before issue 21, is the same policy): float64 /
  complex128 / int64 defaults on every device that holds them.
* ``"downcast"``: on devices that emulate (or lack) them, float64 -> float32, int64 -> int32,
  uint64 -> uint32 everywhere, explicit dtypes and NumPy data included (values converted like
  ``astype``), and the defaults are float32 / complex64 / int32.

A device without a dtype raises :class:`~pyaccel.UnsupportedDTypeError` (except under
``"downcast"``).

Promotion follows NumPy 2 (which extends the Array API table to mixed kinds): so
``cpu:0`` results always have NumPy's dtype. Python scalars are *weak* (NEP 50 / the
Array API): ``int8_array + 1`` is int8, ``float64_array * 0.5`` is float64 on every device,
``int_array + 1.5`` is the device's default float, and an int scalar that does not fit the
array's dtype raises OverflowError.

Complex (``Capability.COMPLEX``): complex with anything gives the complex dtype whose parts
hold both (complex64 + float64 -> complex128, as NumPy); a Python complex scalar is weak
(``float32_array * 1j`` is complex64); the default complex dtype is the complex dtype of the
default float's precision; ``finfo`` of a complex dtype describes its real part.
"""

from __future__ import annotations

import math
import os
import struct
from dataclasses import dataclass
from typing import Any

from .capabilities import Capability
from .device import Device
from .dtypes import (
    DTYPE_TABLE,
    DType,
    as_dtype,
    complex64,
    complex128,
    dtypes_for,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .errors import UnsupportedDTypeError

POLICY_ENV = "PYACCEL_DTYPE_POLICY"
POLICIES = ("fast", "exact", "downcast")
POLICY_ALIASES = {"strict": "exact"}  # the name of "exact" before issue 21
_policy: list[str | None] = [None]
# called with no arguments when set_dtype_policy runs (memos of result dtypes clear themselves)
_ON_POLICY_CHANGE: list[Any] = []

_DOWN = {float64: float32, int64: int32, uint64: uint32}


def _canonical(policy: str) -> str | None:
    p = policy.strip().lower()
    p = POLICY_ALIASES.get(p, p)
    return p if p in POLICIES else None


def set_dtype_policy(policy: str | None) -> str:
    """Set the dtype policy; returns the old one.

    ``"fast"`` (default): float32 / complex64 default floats on devices whose float64 is
    emulated (WebGPU devices), float64 / complex128 where it is native (cpu); explicit
    float64 stays exact. ``"exact"`` (alias ``"strict"``): float64 / complex128 defaults on
    every device that holds them. ``"downcast"``: 64-bit dtypes become float32 / int32 /
    uint32 on devices that emulate or lack them, explicit ones included. The default integer
    is int64 except under ``"downcast"``. ``None`` returns to the environment variable
    ``PYACCEL_DTYPE_POLICY`` (default ``"fast"``).
    """
    try:
        old = get_dtype_policy()
    except ValueError:  # a bad environment value: reported by get_dtype_policy
        old = "fast"
    if policy is not None:
        canon = _canonical(policy) if isinstance(policy, str) else None
        if canon is None:
            raise ValueError(f"dtype policy must be one of {POLICIES} (or None), got {policy!r}; "
                             f"{', '.join(f'{a!r} means {b!r}' for a, b in POLICY_ALIASES.items())}")
        policy = canon
    _policy[0] = policy
    for fn in _ON_POLICY_CHANGE:
        fn()
    return old


def get_dtype_policy() -> str:
    """The active dtype policy: ``"fast"``, ``"exact"`` or ``"downcast"``."""
    if _policy[0] is not None:
        return _policy[0]
    env = os.environ.get(POLICY_ENV, "").strip().lower()
    if not env:
        return "fast"
    canon = _canonical(env)
    if canon is None:
        raise ValueError(f"{POLICY_ENV}={env!r} is not a dtype policy; use one of {POLICIES}")
    return canon


def on_policy_change(fn: Any) -> None:
    """Call ``fn()`` whenever :func:`set_dtype_policy` runs (for memos of result dtypes;
    an environment change takes effect for them through ``set_dtype_policy(None)``)."""
    _ON_POLICY_CHANGE.append(fn)


def float64_emulated(device: Device) -> bool:
    """True where the device holds float64 but emulates it (``Capability.FLOAT64`` with
    ``EMULATED_64``: exact, but many times slower than float32)."""
    caps = device.capabilities
    return Capability.FLOAT64 in caps and Capability.EMULATED_64 in caps


def device_dtypes(device: Device) -> tuple[DType, ...]:
    """Every dtype arrays on ``device`` can have (the dtype table's rows its capabilities allow)."""
    return dtypes_for(device.capabilities)


def supports(device: Device, dtype: DType) -> bool:
    return DTYPE_TABLE[dtype].supported_by(device.capabilities)


def _downcasting(device: Device) -> bool:
    """True where the downcast policy maps 64-bit dtypes to 32 bits on ``device``: devices
    that emulate them (``Capability.EMULATED_64``) or lack them."""
    caps = device.capabilities
    if Capability.EMULATED_64 not in caps and Capability.FLOAT64 in caps:
        return False
    return get_dtype_policy() == "downcast"


def check_dtype(device: Device, dtype: Any, what: str = "") -> DType:
    """``dtype`` as a DType the device holds (applying the downcast policy) or raise."""
    d = as_dtype(dtype)
    if supports(device, d):
        if d in _DOWN and Capability.EMULATED_64 in device.capabilities and _downcasting(device):
            return _DOWN[d]  # the opt-in fast path on devices that emulate 64-bit types
        return d
    if d in _DOWN and get_dtype_policy() == "downcast":
        return _DOWN[d]
    have = ", ".join(x.name for x in device_dtypes(device))
    where = f"{what}: " if what else ""
    if d is float16:
        why = "the device lacks the shader-f16 feature"
        fix = "use dtype=pyaccel.float32, or a device with Capability.F16"
    elif d.kind == "c":
        why = ("the device has no complex support (Capability.COMPLEX"
               + (" and FLOAT64" if d is complex128 else "") + ")")
        fix = ("run on device='cpu', or keep the real and imaginary parts in two real arrays "
               "(pyaccel.real(z), pyaccel.imag(z))")
    else:
        why = "WGSL has no 64-bit types"
        alt = _DOWN.get(d, float32)
        fix = (f"use dtype=pyaccel.{alt.name} (x.astype(pyaccel.{alt.name})), run on device='cpu', "
               f"or opt in to automatic conversion with pyaccel.set_dtype_policy('downcast') "
               f"(or {POLICY_ENV}=downcast)")
    raise UnsupportedDTypeError(
        f"{where}dtype {d.name} is not supported on {device.uri} ({why}); "
        f"{device.uri} supports {have}; {fix}"
    )


def _wide_default(device: Device, cap: Capability) -> bool:
    caps = device.capabilities
    if cap not in caps:
        return False
    return Capability.EMULATED_64 not in caps or get_dtype_policy() != "downcast"


def default_float(device: Device) -> DType:
    """The default real floating dtype on ``device`` under the dtype policy: float64 where
    float64 is native (cpu) or the policy is ``"exact"``; float32 where float64 is emulated
    (``"fast"``, the default) or absent."""
    caps = device.capabilities
    if Capability.FLOAT64 not in caps:
        return float32
    if Capability.EMULATED_64 not in caps:
        return float64
    return float64 if get_dtype_policy() == "exact" else float32


def default_int(device: Device) -> DType:
    return int64 if _wide_default(device, Capability.INT64) else int32


def default_uint(device: Device) -> DType:
    return uint64 if _wide_default(device, Capability.INT64) else uint32


def index_dtype(device: Device) -> DType:
    return int64 if _wide_default(device, Capability.INT64) else int32


def default_complex(device: Device) -> DType:
    """The complex dtype of the default float's precision: complex128 where the default
    float is float64, else complex64."""
    return complex128 if default_float(device) is float64 else complex64


def default_dtypes(device: Device) -> dict[str, DType | None]:
    """The Array API default dtypes of a device under the dtype policy ("complex floating" is
    None without Capability.COMPLEX)."""
    cplx = default_complex(device) if Capability.COMPLEX in device.capabilities else None
    return {"real floating": default_float(device), "complex floating": cplx,
            "integral": default_int(device), "indexing": index_dtype(device)}


def real_dtype(dt: DType) -> DType:
    """The real dtype of a complex dtype's components (complex64 -> float32); others unchanged."""
    if dt.kind != "c":
        return dt
    return float32 if dt is complex64 else float64


def complex_dtype(dt: DType) -> DType:
    """The complex dtype whose components have (at least) the precision of a float dtype."""
    if dt.kind == "c":
        return dt
    return complex128 if dt is float64 else complex64


# ---------------------------------------------------------------------------
# promotion
# ---------------------------------------------------------------------------
_SIGNED = {8: int8, 16: int16, 32: int32, 64: int64}
_UNSIGNED = {8: uint8, 16: uint16, 32: uint32, 64: uint64}
_FLOATS = {16: float16, 32: float32, 64: float64}
# smallest float bit width that holds every value of an integer width (NumPy's rule)
_INT_TO_FLOAT_BITS = {8: 16, 16: 32, 32: 64, 64: 64}


def promote(a: DType, b: DType) -> DType:
    """NumPy 2 / Array API promotion of two dtypes."""
    if a is b:
        return a
    if a.kind == "b":
        return b
    if b.kind == "b":
        return a
    if a.kind == "c" or b.kind == "c":
        # complex with anything: the complex dtype whose components hold both (NumPy's rule:
        # complex64 + float64 -> complex128, complex64 + int32 -> complex128)
        ra = real_dtype(a) if a.kind == "c" else (a if a.kind == "f" else _FLOATS[_INT_TO_FLOAT_BITS[a.bits]])
        rb = real_dtype(b) if b.kind == "c" else (b if b.kind == "f" else _FLOATS[_INT_TO_FLOAT_BITS[b.bits]])
        return complex128 if 64 in (ra.bits, rb.bits) else complex64
    if a.kind == "f" or b.kind == "f":
        if a.kind == "f" and b.kind == "f":
            return a if a.bits >= b.bits else b
        f, i = (a, b) if a.kind == "f" else (b, a)
        return _FLOATS[max(f.bits, _INT_TO_FLOAT_BITS[i.bits])]
    if a.kind == b.kind:
        return a if a.bits >= b.bits else b
    s, u = (a, b) if a.kind == "i" else (b, a)
    if s.bits > u.bits:
        return s
    if u.bits == 64:
        return float64
    return _SIGNED[u.bits * 2]


def result_type(*arrays_and_dtypes: Any) -> DType:
    """Array API ``result_type``: promote dtypes, arrays and (weak) Python scalars. With an
    array among the arguments the rules of its device apply (2024.12): the device's default
    dtypes for scalars, and the dtype policy's mapping of dtypes the device lacks."""
    dts = []
    scalars = []
    dev = None
    for x in arrays_and_dtypes:
        if isinstance(x, (bool, int, float, complex)):
            scalars.append(x)
        elif hasattr(x, "dtype") and not isinstance(x, type) and not isinstance(x, DType):
            dts.append(as_dtype(x.dtype))
            if dev is None and isinstance(getattr(x, "device", None), Device):
                dev = x.device
        else:
            dts.append(as_dtype(x))
    if not dts:
        if not scalars:
            raise ValueError("result_type() needs at least one array or dtype")
        # ValueError, as array-api-strict raises (SciPy's _logspace catches exactly that)
        raise ValueError("result_type() needs at least one array or dtype besides Python scalars")
    out = dts[0]
    for d in dts[1:]:
        out = promote(out, d)
    for s in scalars:
        out = scalar_result(out, s, dev)
    if dev is not None:
        try:
            out = check_dtype(dev, out)
        except UnsupportedDTypeError:
            pass  # (an op would raise the dtype error; result_type names the promoted dtype)
    return out


def scalar_result(dt: DType, value: Any, device: Device | None) -> DType:
    """Dtype of ``array(dt) <op> value`` for a Python scalar (weak)."""
    if isinstance(value, bool):
        return dt
    if isinstance(value, int):
        if dt.kind == "b":
            return int64 if device is None else default_int(device)
        return dt
    if isinstance(value, float):
        if dt.kind in "biu":
            return float64 if device is None else default_float(device)
        return dt
    if isinstance(value, complex):
        # weak: a real float array gives the complex dtype of its precision
        if dt.kind in "biu":
            return complex128 if device is None else default_complex(device)
        return complex_dtype(dt)
    raise TypeError(f"expected an array or a Python scalar, got {type(value).__name__} {value!r:.40}")


def can_cast(from_: Any, to: Any, /) -> bool:
    """True when ``from_`` promotes to ``to`` without changing kind order (safe cast). For an
    array, on its device (2024.12): False when the device cannot hold ``to``."""
    f = as_dtype(from_.dtype if hasattr(from_, "dtype") and not isinstance(from_, DType) else from_)
    t = as_dtype(to)
    dev = getattr(from_, "device", None)
    if isinstance(dev, Device) and not isinstance(from_, DType) and not supports(dev, t):
        return False
    if f is t:
        return True
    if f.kind == "b":
        return True
    if t.kind == "b":
        return False
    try:
        return promote(f, t) is t
    except KeyError:
        return False


def isdtype(dtype: Any, kind: Any) -> bool:
    """Array API ``isdtype``: kind is a dtype, a kind name, or a tuple of them."""
    d = as_dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(d, k) for k in kind)
    if isinstance(kind, str):
        table = {
            "bool": d.kind == "b",
            "signed integer": d.kind == "i",
            "unsigned integer": d.kind == "u",
            "integral": d.kind in "iu",
            "real floating": d.kind == "f",
            "complex floating": d.kind == "c",
            "numeric": d.kind in "iufc",
        }
        if kind not in table:
            raise ValueError(f"isdtype: unknown kind {kind!r}; use one of {', '.join(table)}")
        return table[kind]
    return d is as_dtype(kind)


# ---------------------------------------------------------------------------
# finfo / iinfo
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class finfo_object:
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: DType


@dataclass(frozen=True)
class iinfo_object:
    bits: int
    max: int
    min: int
    dtype: DType


_FINFO = {
    "float16": (16, 2.0**-10, 65504.0, 2.0**-14),
    "float32": (32, 2.0**-23, struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0], 2.0**-126),
    "float64": (64, 2.0**-52, 1.7976931348623157e308, 2.0**-1022),
}


def finfo(type: Any, /) -> finfo_object:  # noqa: A002 - Array API name
    """Machine limits of a floating-point dtype (of a complex dtype: those of its real
    components, with the real dtype, as the Array API says)."""
    d = as_dtype(type.dtype if hasattr(type, "dtype") and not isinstance(type, DType) else type)
    if d.kind not in "fc":
        raise TypeError(f"finfo: {d.name} is not a floating-point dtype; use iinfo for integers")
    d = real_dtype(d)
    bits, eps, mx, tiny = _FINFO[d.name]
    return finfo_object(bits, eps, mx, -mx, tiny, d)


def iinfo(type: Any, /) -> iinfo_object:  # noqa: A002 - Array API name
    """Machine limits of an integer dtype."""
    d = as_dtype(type.dtype if hasattr(type, "dtype") and not isinstance(type, DType) else type)
    if d.kind not in "iu":
        raise TypeError(f"iinfo: {d.name} is not an integer dtype; use finfo for floats")
    lo, hi = int_range(d)
    return iinfo_object(d.bits, hi, lo, d)


def int_range(d: DType) -> tuple[int, int]:
    if d.kind == "b":
        return 0, 1
    if d.kind == "u":
        return 0, (1 << d.bits) - 1
    return -(1 << (d.bits - 1)), (1 << (d.bits - 1)) - 1


def check_scalar_fits(value: Any, dt: DType, what: str = "") -> None:
    """Raise OverflowError when a Python int does not fit an integer dtype."""
    if isinstance(value, bool) or not isinstance(value, int) or dt.kind not in "iu":
        return
    lo, hi = int_range(dt)
    if not lo <= value <= hi:
        where = f"{what}: " if what else ""
        raise OverflowError(
            f"{where}Python int {value} is out of bounds for {dt.name} (range {lo}..{hi}); "
            f"convert the array first (x.astype(...)) or use a value in range"
        )



# the smallest magnitude that rounds to infinity in float32 (2**128 - 2**103: half an ulp
# above the largest float32, which rounds to even, i.e. up)
_F32_OVERFLOW = 2.0**128 - 2.0**103


def check_default_float_fits(values: Any, dt: DType, device: Device, what: str) -> None:
    """Raise OverflowError when a finite Python float (or a complex part) among ``values``
    would become infinite in ``dt``, a 32-bit default float the dtype policy chose for
    Python data (a value is never turned into inf silently by a default)."""
    if dt not in (float32, complex64):
        return
    for v in values:
        if isinstance(v, complex):
            parts: tuple[float, ...] = (v.real, v.imag)
        elif isinstance(v, float):
            parts = (v,)
        else:
            continue
        for x in parts:
            if _F32_OVERFLOW <= abs(x) < math.inf:
                raise OverflowError(
                    f"{what}: Python float {x!r} does not fit {dt.name}, the default floating dtype "
                    f"on {device.uri} under the dtype policy {get_dtype_policy()!r}; pass "
                    f"dtype=pyaccel.{'complex128' if dt.kind == 'c' else 'float64'} (exact), or "
                    "make float64 the default with pyaccel.set_dtype_policy('exact') "
                    f"({POLICY_ENV}=exact)")


def common_device(*devices: Device) -> Device:
    first = devices[0]
    for d in devices[1:]:
        if d is not first:
            raise ValueError(
                f"arrays are on different devices ({first.uri} and {d.uri}); move one with "
                f"x.to_device({first.uri!r}) before combining them"
            )
    return first

