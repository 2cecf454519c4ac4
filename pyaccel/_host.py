"""Host-side conversions that work with or without NumPy.

In Pyodide without NumPy, arrays come in from Python lists, scalars, ``array.array``,
``memoryview`` and bytes-like objects and go out as lists, bytes and memoryviews; this
module does those conversions with the ``array`` and ``struct`` modules. When NumPy is
importable it is used instead (much faster for large data). Set
``PYACCEL_NO_NUMPY=1`` (or :data:`FORCE_NO_NUMPY`) to take the NumPy-free paths even
where NumPy is installed (the tests do, to cover the browser path natively).
"""

from __future__ import annotations

import array as _array
import math
import os
import struct
import sys
from typing import Any

from .dtypes import (
    ALL_DTYPES,
    REAL_OF,
    DType,
    float16,
    float32,
    float64,
)

FORCE_NO_NUMPY = False


def numpy() -> Any:
    """The numpy module, or None when it is not importable (or disabled)."""
    if FORCE_NO_NUMPY or os.environ.get("PYACCEL_NO_NUMPY", "") not in ("", "0"):
        return None
    np = sys.modules.get("numpy")
    if np is not None:
        return np
    try:
        import numpy as np
    except ImportError:
        return None
    return np


def is_numpy_array(x: Any) -> bool:
    """True for NumPy arrays and scalars (checked without importing NumPy)."""
    return type(x).__module__ == "numpy" and hasattr(x, "dtype") and hasattr(x, "shape")


# storage layout on WebGPU devices: (struct/array format char, itemsize)
# array.array typecodes with a fixed size on every platform we run on
_ARRAY_CODES = {"b": "b", "B": "B", "h": "h", "H": "H", "i": "i", "I": "I", "q": "q", "Q": "Q",
                "f": "f", "d": "d"}

# memoryview / array.array format char -> dtype (sizes checked separately)
_FORMAT_KIND = {"?": "b", "b": "i", "h": "i", "i": "i", "l": "i", "q": "i", "n": "i",
                "B": "u", "H": "u", "I": "u", "L": "u", "Q": "u", "N": "u", "c": "u",
                "e": "f", "f": "f", "d": "f"}
_BY_KIND_SIZE = {(d.kind, d.itemsize): d for d in ALL_DTYPES}  # (kind and size name one dtype)
# complex format chars (no array.array typecode): packed as (real, imag) pairs of f / d
_COMPLEX_LANES = {"F": "f", "D": "d", "Zf": "f", "Zd": "d"}


def dtype_of_format(fmt: str, itemsize: int) -> DType | None:
    f = fmt.lstrip("@=<>!")
    if f in ("Zf", "Zd"):  # complex (PEP 3118)
        return _BY_KIND_SIZE.get(("c", itemsize)) if fmt[:1] not in (">", "!") else None
    if len(f) != 1:
        return None
    if fmt[:1] in (">", "!") and itemsize > 1:
        return None  # big-endian data: not supported without NumPy
    kind = _FORMAT_KIND.get(f)
    if kind is None:
        return None
    return _BY_KIND_SIZE.get((kind, itemsize))


def _f32_ok(v: float) -> float:
    """A float that struct's 'f' format packs (past float32's range: inf, as NumPy rounds)."""
    if math.isfinite(v) and abs(v) >= 3.4028235677973366e38:
        return math.copysign(math.inf, v)
    if math.isfinite(v) and abs(v) > 3.4028234663852886e38:
        return math.copysign(3.4028234663852886e38, v)
    return v


def pack(values: list, char: str) -> bytes:
    """Pack a flat list of Python numbers with a struct/array format char (``F`` / ``D``:
    complex numbers as (real, imag) float32 / float64 pairs)."""
    if not values:
        return b""
    if char in ("F", "D"):
        parts = []
        for v in values:
            c = complex(v)
            parts += [c.real, c.imag]
        if char == "F":
            parts = [_f32_ok(x) for x in parts]
        return pack(parts, "f" if char == "F" else "d")
    if char == "?":
        return bytes(1 if v else 0 for v in values)
    if char == "e":
        return struct.pack(f"<{len(values)}e", *values)
    if char in _COMPLEX_LANES:
        parts = []
        for v in values:
            v = complex(v)
            parts += (v.real, v.imag)
        return pack(parts, _COMPLEX_LANES[char])
    code = _ARRAY_CODES[char]
    a = _array.array(code, values)
    if sys.byteorder == "big":
        a.byteswap()
    return a.tobytes()


def unpack(data: bytes | memoryview, char: str, count: int) -> list:
    """Flat list of Python numbers from packed data."""
    if count == 0:
        return []
    if char in ("F", "D"):
        parts = unpack(data, "f" if char == "F" else "d", 2 * count)
        return [complex(parts[2 * j], parts[2 * j + 1]) for j in range(count)]
    if char == "?":
        return [b != 0 for b in bytes(data[:count])]
    if char == "e":
        return list(struct.unpack_from(f"<{count}e", data))
    if char in _COMPLEX_LANES:
        lanes = unpack(data, _COMPLEX_LANES[char], 2 * count)
        return [complex(lanes[2 * j], lanes[2 * j + 1]) for j in range(count)]
    a = _array.array(_ARRAY_CODES[char])
    a.frombytes(bytes(data[: count * a.itemsize]))
    if sys.byteorder == "big":
        a.byteswap()
    return a.tolist()


def nested(obj: Any, what: str = "asarray") -> tuple[list, tuple[int, ...]]:
    """(flat values, shape) of a nested list/tuple of Python scalars."""
    if not isinstance(obj, (list, tuple)):
        return [obj], ()
    shape: list[int] = []
    probe: Any = obj
    while isinstance(probe, (list, tuple)):
        shape.append(len(probe))
        if not probe:
            break
        probe = probe[0]
    flat: list = []

    def walk(x: Any, depth: int, path: str) -> None:
        if depth == len(shape):
            if isinstance(x, (list, tuple)):
                raise ValueError(f"{what}: ragged nested sequence at {path}: expected a scalar, got a "
                                 f"{type(x).__name__} of length {len(x)}; every row needs the same length")
            flat.append(x)
            return
        if not isinstance(x, (list, tuple)) or len(x) != shape[depth]:
            got = f"length {len(x)}" if isinstance(x, (list, tuple)) else f"scalar {x!r}"
            raise ValueError(f"{what}: ragged nested sequence at {path}: expected length {shape[depth]}, "
                             f"got {got}; every row needs the same length")
        for j, v in enumerate(x):
            walk(v, depth + 1, f"{path}[{j}]")

    walk(obj, 0, "")
    return flat, tuple(shape)


_KIND_ORDER = "bifc"


def scalar_kind(values: list, what: str = "asarray") -> str:
    """'b', 'i', 'f' or 'c' for a flat list of Python scalars (the widest wins; empty: 'f')."""
    if not values:
        return "f"
    kind = "b"
    for v in values:
        if isinstance(v, bool):
            continue
        if isinstance(v, int):
            k = "i"
        elif isinstance(v, float):
            k = "f"
        elif isinstance(v, complex):
            k = "c"
        else:
            item = getattr(v, "item", None)  # NumPy scalars, 0-d arrays
            if not callable(item):
                raise TypeError(f"{what}: cannot convert {type(v).__name__} {v!r:.60} to an array "
                                "element; use Python bool/int/float/complex values")
            k = scalar_kind([item()], what)
        if _KIND_ORDER.index(k) > _KIND_ORDER.index(kind):
            kind = k
    return kind


def coerce(values: list, dt: DType, what: str = "asarray") -> list:
    """Python values converted to ``dt``'s Python type (range-checked for ints)."""
    out = []
    if dt.kind == "b":
        return [bool(_item(v)) for v in values]
    if dt.kind == "c":
        # components rounded as the real dtype's (complex64: float32, overflow to inf)
        comp = REAL_OF[dt]
        for v in values:
            v = complex(_item(v))
            re_, im_ = coerce([v.real, v.imag], comp, what)
            out.append(complex(re_, im_))
        return out
    if dt.kind == "f":
        for v in values:
            v = float(_item(v))
            if dt is not float64 and math.isfinite(v):
                # values past the largest finite value (plus half an ULP) round to inf
                lim = 65520.0 if dt is float16 else 3.4028235677973366e38
                if abs(v) >= lim:
                    v = math.copysign(math.inf, v)
                elif dt is float32 and abs(v) > 3.4028234663852886e38:
                    v = math.copysign(3.4028234663852886e38, v)
            out.append(v)
        return out
    lo, hi = (0, (1 << dt.bits) - 1) if dt.kind == "u" else (-(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1)
    for v in values:
        v = _item(v)
        if isinstance(v, float):
            if not math.isfinite(v):
                raise ValueError(f"{what}: cannot convert float {v} to {dt.name}")
            v = int(v)
        v = int(v)
        if not lo <= v <= hi:
            raise OverflowError(f"{what}: Python int {v} is out of bounds for {dt.name} (range {lo}..{hi}); "
                                "pass a wider dtype= or values in range")
        out.append(v)
    return out


def _item(v: Any) -> Any:
    if isinstance(v, (bool, int, float, complex)):
        return v
    item = getattr(v, "item", None)
    return item() if callable(item) else v


def wrap_int(v: int, dt: DType) -> int:
    """Two's-complement wrap of an int to an integer dtype (astype semantics)."""
    if dt.kind == "b":
        return int(bool(v))
    m = v & ((1 << dt.bits) - 1)
    if dt.kind == "i" and m >= 1 << (dt.bits - 1):
        m -= 1 << dt.bits
    return m


def convert_values(values: list, src: DType, dst: DType) -> list:
    """astype on a flat list (wrapping ints, truncating floats)."""
    if src is dst:
        return list(values)
    if dst.kind == "b":
        return [bool(v) for v in values]
    if dst.kind == "c":
        return coerce([complex(v) for v in values], dst)
    if src.kind == "c":
        raise TypeError(f"astype: cannot cast {src.name} to {dst.name} (the Array API leaves out "
                        "complex -> real casts); take pyaccel.real(x) or pyaccel.imag(x) first")
    if dst.kind == "f":
        return coerce([float(v) for v in values], dst)
    out = []
    for v in values:
        if isinstance(v, float):
            v = int(v) if math.isfinite(v) else 0
        out.append(wrap_int(int(v), dst))
    return out


def memoryview_of(obj: Any) -> memoryview | None:
    try:
        return memoryview(obj)
    except TypeError:
        return None


def shape_list(flat: list, shape: tuple[int, ...]) -> Any:
    """Nest a flat list into lists of ``shape`` (a scalar for shape ())."""
    if not shape:
        return flat[0]
    if len(shape) == 1:
        return list(flat)
    step = 1
    for d in shape[1:]:
        step *= d
    return [shape_list(flat[j * step:(j + 1) * step], shape[1:]) for j in range(shape[0])]
