"""Data types, and one table (:data:`DTYPE_TABLE`) that says how each is stored and computed.

WGSL can store only 32-bit scalars (and f16 with the ``shader-f16`` feature), so
on WebGPU devices bool is stored as u32 (0/1) and int8/int16/uint8/uint16 are
stored widened to i32/u32 (results wrap to the narrow type after every op).
float64/int64/uint64 need :attr:`Capability.FLOAT64` / ``INT64`` and complex64/complex128
:attr:`Capability.COMPLEX`; on WebGPU devices they are multi-lane (``vec2<u32>`` words,
``vec2<f32>`` / ``vec4<u32>`` pairs, bit-identical to NumPy's little-endian bytes) and their
arithmetic is emulated in WGSL libraries (``ew_i64``, ``ew_u64``, ``ew_f64``, ``ew_c64``,
``ew_c128``) named by each row's ``functions`` and ``prefix``.

Adding a dtype is a new :class:`DType` singleton and a :class:`DTypeRow` here, its export,
its place in ``promotion.py`` and its WGSL function file (``pyaccel/ops/ew_<name>.wgsl``);
the full list is docs/architecture.md ("What a dtype touches"), and
``tests/unit/test_dtype_touch.py`` keeps the files naming each dtype under a ceiling.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .capabilities import Capability
from .errors import UnsupportedDTypeError


@dataclass(frozen=True, eq=False)
class DType:
    """A pyaccel dtype (singletons: compare with ``is`` or ``==``)."""

    name: str
    kind: str  # "b" bool, "i" signed int, "u" unsigned int, "f" real float, "c" complex
    itemsize: int  # logical size in bytes (host / NumPy)
    char: str  # struct/array module format character

    @property
    def wgsl(self) -> str | None:
        """WGSL storage type on WebGPU devices (None: no WGSL storage), from :data:`DTYPE_TABLE`."""
        return DTYPE_TABLE[self].wgsl_storage

    @property
    def storage_itemsize(self) -> int:
        """Bytes per element in a WebGPU buffer (from :data:`DTYPE_TABLE`)."""
        lay = WGSL_LAYOUT.get(self)
        return lay.itemsize if lay is not None else 4

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

    @property
    def dtype(self) -> Any:
        """The NumPy dtype, under the attribute NumPy reads: ``np.dtype(pyaccel.float32)``,
        ``np.result_type(...)`` and Dask (chunk metadata) accept pyaccel dtypes through it."""
        return self.numpy

    def __getattr__(self, name: str) -> Any:
        # NumPy-dtype attributes that duck-array libraries read from ``x.dtype`` (Dask:
        # ``x.dtype.type``, ``.str``); only these, so a DType never looks like an array
        if name in _NUMPY_DTYPE_ATTRS:
            return getattr(self.numpy, name)
        raise AttributeError(f"pyaccel dtype {self.__dict__.get('name')} has no attribute {name!r}")


_NUMPY_DTYPE_ATTRS = frozenset((
    "type", "str", "descr", "byteorder", "num", "alignment", "isbuiltin", "isnative", "names",
    "fields", "hasobject", "subdtype", "base", "metadata", "newbyteorder",
))

bool_ = DType("bool", "b", 1, "?")
int8 = DType("int8", "i", 1, "b")
int16 = DType("int16", "i", 2, "h")
int32 = DType("int32", "i", 4, "i")
int64 = DType("int64", "i", 8, "q")
uint8 = DType("uint8", "u", 1, "B")
uint16 = DType("uint16", "u", 2, "H")
uint32 = DType("uint32", "u", 4, "I")
uint64 = DType("uint64", "u", 8, "Q")
float16 = DType("float16", "f", 2, "e")
float32 = DType("float32", "f", 4, "f")
float64 = DType("float64", "f", 8, "d")
complex64 = DType("complex64", "c", 8, "F")
complex128 = DType("complex128", "c", 16, "D")

ALL_DTYPES: tuple[DType, ...] = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                                 float16, float32, float64, complex64, complex128)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NAME.update({"bool_": bool_, "f4": float32, "f8": float64, "f2": float16, "i4": int32,
                 "u4": uint32, "i8": int64, "u8": uint64, "i1": int8, "u1": uint8, "i2": int16,
                 "u2": uint16, "?": bool_, "half": float16, "single": float32, "double": float64,
                 "c8": complex64, "c16": complex128, "F": complex64, "D": complex128,
                 "csingle": complex64, "cdouble": complex128})
WGSL_SCALARS = {"f32": float32, "f16": float16, "i32": int32, "u32": uint32, "bool": bool_}
# WGSL scalar types a shader must enable before it names them (``enable f16;``)
WGSL_ENABLE: dict[str, str] = {"f16": "f16"}


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


# ---------------------------------------------------------------------------
# The dtype table: per logical dtype, what a device needs to hold it, its WGSL storage
# and compute types, and the WGSL function library that implements its op families.
# Host conversions (array.py, _host.py) and the kernels (ops/) read it.
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class StorageLayout:
    """How elements of one dtype sit in a device buffer.

    ``itemsize``: bytes per element; ``char``: struct/array format of one lane;
    ``numpy``: NumPy dtype name of one lane; ``lanes``: scalars per element (2 for an
    emulated 64-bit type or a complex number, later).
    """

    itemsize: int
    char: str
    numpy: str
    lanes: int = 1


@dataclass(frozen=True)
class DTypeRow:
    """One row of :data:`DTYPE_TABLE`.

    needs: the capability a device must have to hold the dtype (NONE: every device).
    wgsl_storage / wgsl_compute: WGSL types of a stored element and of the arithmetic on
    it (None: no WGSL representation). functions: the WGSL function file (``ops/<name>.wgsl``)
    implementing the elementwise op families for the compute type. wrap: WGSL expression
    re-narrowing a 32-bit result ``r`` to the dtype (widened narrow ints), or None.
    """

    dtype: DType
    needs: Capability
    wgsl_storage: str | None
    wgsl_compute: str | None
    functions: str | None
    wrap: str | None = None
    prefix: str | None = None  # WGSL function prefix of a multi-lane library (``f64_add``), else None
    tol: tuple[float, float] = (0.0, 0.0)  # (rtol, atol) of oracle comparisons (exact: integers)
    extension: bool = False  # not an Array API dtype (float16): listed by name only (info.dtypes)

    def supported_by(self, caps: Capability) -> bool:
        return self.needs in caps

    @property
    def host_layout(self) -> StorageLayout:
        """The host (NumPy / struct) layout: what the cpu device stores."""
        return StorageLayout(self.dtype.itemsize, self.dtype.char, self.dtype.name)

    @property
    def wgsl_layout(self) -> StorageLayout | None:
        """The layout in a WebGPU buffer (None where WGSL cannot store the dtype)."""
        st = self.wgsl_storage
        if st is None:
            return None
        return StorageLayout(*_WGSL_SCALAR_LAYOUT[st])


_WGSL_SCALAR_LAYOUT = {"f32": (4, "f", "float32"), "f16": (2, "e", "float16"),
                       "i32": (4, "i", "int32"), "u32": (4, "I", "uint32"),
                       # multi-lane storage (bit-identical to NumPy's little-endian bytes):
                       # 64-bit ints and float64 as (low word, high word); complex64 as
                       # (real, imag); complex128 as (real low, real high, imag low, imag high)
                       "vec2<u32>": (8, "I", "uint32", 2), "vec2<f32>": (8, "f", "float32", 2),
                       "vec4<u32>": (16, "I", "uint32", 4)}
_NONE = Capability.NONE
DTYPE_TABLE: dict[DType, DTypeRow] = {r.dtype: r for r in (
    DTypeRow(bool_, _NONE, "u32", "u32", "ew_uint"),
    DTypeRow(int8, _NONE, "i32", "i32", "ew_sint", "(r << 24u) >> 24u"),
    DTypeRow(int16, _NONE, "i32", "i32", "ew_sint", "(r << 16u) >> 16u"),
    DTypeRow(int32, _NONE, "i32", "i32", "ew_sint"),
    DTypeRow(int64, Capability.INT64, "vec2<u32>", "vec2<u32>", "ew_i64", prefix="i64_"),
    DTypeRow(uint8, _NONE, "u32", "u32", "ew_uint", "r & 0xffu"),
    DTypeRow(uint16, _NONE, "u32", "u32", "ew_uint", "r & 0xffffu"),
    DTypeRow(uint32, _NONE, "u32", "u32", "ew_uint"),
    DTypeRow(uint64, Capability.INT64, "vec2<u32>", "vec2<u32>", "ew_u64", prefix="u64_"),
    DTypeRow(float16, Capability.F16, "f16", "f32", "ew_float", tol=(1e-2, 1e-3), extension=True),
    DTypeRow(float32, _NONE, "f32", "f32", "ew_float", tol=(1e-5, 1e-6)),
    DTypeRow(float64, Capability.FLOAT64, "vec2<u32>", "vec2<u32>", "ew_f64", prefix="f64_",
             tol=(1e-12, 1e-14)),
    # complex: as the component dtype, per component
    DTypeRow(complex64, Capability.COMPLEX, "vec2<f32>", "vec2<f32>", "ew_c64", prefix="c64_",
             tol=(1e-5, 1e-6)),
    DTypeRow(complex128, Capability.COMPLEX | Capability.FLOAT64, "vec4<u32>", "vec4<u32>",
             "ew_c128", prefix="c128_", tol=(1e-12, 1e-14)),
)}
# WebGPU buffer layout per dtype (dtypes WGSL cannot store are absent)
WGSL_LAYOUT: dict[DType, StorageLayout] = {
    d: lay for d, r in DTYPE_TABLE.items() if (lay := r.wgsl_layout) is not None}
# host layout per dtype (the cpu device stores these)
HOST_LAYOUT: dict[DType, StorageLayout] = {d: r.host_layout for d, r in DTYPE_TABLE.items()}
# WGSL compute type -> its function library (ops/<name>.wgsl)
# (32-bit scalar compute types only; multi-lane dtypes name their library and prefix in the row)
WGSL_FUNCTIONS: dict[str, str] = {r.wgsl_compute: r.functions for r in DTYPE_TABLE.values()
                                  if r.wgsl_compute is not None and r.functions is not None
                                  and r.prefix is None}


# every multi-lane dtype's row (emulated 64-bit types and complex numbers)
MULTI_LANE: dict[DType, DTypeRow] = {d: r for d, r in DTYPE_TABLE.items() if r.prefix is not None}
# their library order: a conversion between two of them lives in the later one's library
# (``f64_from_i64``, ``c128_from_c64``; COMMON.md contract 2)
MULTI_LANE_ORDER: tuple[DType, ...] = (uint64, int64, float64, complex64, complex128)

# Capabilities of the emulated dtypes (all of them; see GPU_WIDE for what GPUs are granted).
WIDE_CAPABILITIES = Capability.INT64 | Capability.FLOAT64 | Capability.COMPLEX
# What every WebGPU device is granted (``runtime/webgpu_common.py``): the emulated dtypes
# whose libraries are complete, plus EMULATED_64 (they are emulated: exact, slower).
GPU_WIDE = Capability.INT64 | Capability.FLOAT64 | Capability.COMPLEX | Capability.EMULATED_64


# complex dtype of a real floating dtype's precision, and the component dtype of a complex one
COMPLEX_OF: dict[DType, DType] = {float32: complex64, float64: complex128}
REAL_OF: dict[DType, DType] = {c: r for r, c in COMPLEX_OF.items()}


def gpu_wide() -> Capability:
    """The emulated-dtype capabilities every WebGPU device has (:data:`GPU_WIDE`)."""
    return GPU_WIDE


def is_multi_lane(dt: DType) -> bool:
    """True for dtypes stored as several 32-bit lanes on WebGPU devices."""
    return dt in MULTI_LANE


def dtypes_for(caps: Capability) -> tuple[DType, ...]:
    """Every dtype a device with capabilities ``caps`` holds (in :data:`ALL_DTYPES` order)."""
    return tuple(d for d in ALL_DTYPES if DTYPE_TABLE[d].supported_by(caps))
