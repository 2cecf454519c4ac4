"""Data types: one table that says how each dtype is stored on each kind of device.

WGSL can store only 32-bit scalars (and f16 with the ``shader-f16`` feature), so
on WebGPU devices bool is stored as u32 (0/1) and int8/int16/uint8/uint16 are
stored widened to i32/u32 (results wrap to the narrow type after every op).
float64/int64/uint64 exist on the cpu device only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import UnsupportedDTypeError


@dataclass(frozen=True, eq=False)
class DType:
    """A pyaccel dtype (singletons: compare with ``is`` or ``==``)."""

    name: str
    kind: str  # "b" bool, "i" signed int, "u" unsigned int, "f" float
    itemsize: int  # logical size in bytes (host / NumPy)
    wgsl: str | None  # WGSL storage type on WebGPU devices (None: cpu only)
    char: str  # struct/array module format character

    @property
    def storage_itemsize(self) -> int:
        """Bytes per element in a WebGPU buffer."""
        return 2 if self.wgsl == "f16" else 4

    @property
    def bits(self) -> int:
        return self.itemsize * 8

    def __repr__(self) -> str:
        return f"pyaccel.{self.name}"

    __str__ = lambda self: self.name  # noqa: E731

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DType):
            return other is self
        try:
            return as_dtype(other) is self
        except (TypeError, UnsupportedDTypeError, ValueError):
            return False

    def __hash__(self) -> int:
        return hash(self.name)

    @property
    def numpy(self) -> Any:
        import numpy as np

        return np.dtype(self.name)


bool_ = DType("bool", "b", 1, "u32", "?")
int8 = DType("int8", "i", 1, "i32", "b")
int16 = DType("int16", "i", 2, "i32", "h")
int32 = DType("int32", "i", 4, "i32", "i")
int64 = DType("int64", "i", 8, None, "q")
uint8 = DType("uint8", "u", 1, "u32", "B")
uint16 = DType("uint16", "u", 2, "u32", "H")
uint32 = DType("uint32", "u", 4, "u32", "I")
uint64 = DType("uint64", "u", 8, None, "Q")
float16 = DType("float16", "f", 2, "f16", "e")
float32 = DType("float32", "f", 4, "f32", "f")
float64 = DType("float64", "f", 8, None, "d")

ALL_DTYPES: tuple[DType, ...] = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                                 float16, float32, float64)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NAME.update({"bool_": bool_, "f4": float32, "f8": float64, "f2": float16, "i4": int32,
                 "u4": uint32, "i8": int64, "u8": uint64, "i1": int8, "u1": uint8, "i2": int16,
                 "u2": uint16, "?": bool_, "half": float16, "single": float32, "double": float64})
WGSL_SCALARS = {"f32": float32, "f16": float16, "i32": int32, "u32": uint32, "bool": bool_}


def as_dtype(x: Any) -> DType:
    """A DType from a DType, a name ('float32'), a NumPy dtype/type, or Python bool/int/float."""
    if isinstance(x, DType):
        return x
    if x is bool:
        return bool_
    if x is int:
        return int64
    if x is float:
        return float64
    if isinstance(x, str):
        d = _BY_NAME.get(x)
        if d is not None:
            return d
    name = getattr(x, "name", None)
    if name is None and isinstance(x, type):
        name = getattr(x, "__name__", None)
    if isinstance(name, str):
        d = _BY_NAME.get(name)
        if d is not None:
            return d
    if hasattr(x, "dtype") and not isinstance(x, type):
        return as_dtype(x.dtype)
    raise TypeError(
        f"not a pyaccel dtype: {x!r}; use one of {', '.join(d.name for d in ALL_DTYPES)}"
    )


def from_wgsl(t: str) -> DType | None:
    """DType of a WGSL scalar type name (f32, i32, u32, f16), else None."""
    return WGSL_SCALARS.get(t)
