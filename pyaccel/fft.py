"""The Array API 2023.12 ``fft`` extension: ``pyaccel.fft``.

fft, ifft, fftn, ifftn, rfft, irfft, rfftn, irfftn, hfft, ihfft run on the device's op
provider (``fft_c2c`` / ``fft_r2c`` / ``fft_c2r``): NumPy's pocketfft on cpu, Stockham and
Bluestein WGSL kernels for complex64 on WebGPU devices (docs/fft.md). fftfreq, rfftfreq,
fftshift and ifftshift are built from namespace functions (arange, concat, multiply, roll).

Dtype rules (the standard's): fft, ifft, fftn, ifftn, irfft, irfftn and hfft take complex
input (a real array raises TypeError naming the cast); rfft, rfftn and ihfft take real
floating input. Results keep the precision: complex64 <-> float32, complex128 <-> float64
(float16 input to rfft / rfftn / ihfft is computed as float32 and gives complex64).
``norm`` is 'backward' (default), 'ortho' or 'forward'; ``n`` / ``s`` pad with zeros or trim.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from . import dtypes as _dtypes
from . import elementwise as ew
from ._shapes import normalize_axis
from .array import Array
from .creation import arange
from .dtypes import DType, float16, float32
from .manipulation import concat, roll
from .placement import place_module
from .promotion import check_dtype, default_float
from .registry import as_device

__all__ = ["fft", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifftn", "ifftshift", "ihfft",
           "irfft", "irfftn", "rfft", "rfftfreq", "rfftn"]

NORMS = ("backward", "ortho", "forward")
# (float16 input computes as float32)
COMPLEX_OF: dict[DType, DType] = {float16: _dtypes.COMPLEX_OF[float32], **_dtypes.COMPLEX_OF}
REAL_OF: dict[DType, DType] = _dtypes.REAL_OF


# -- argument checks ------------------------------------------------------------------------
def _array(x: Any, what: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"fft.{what}: expected a pyaccel Array, got {type(x).__name__}; convert it "
                        "with pyaccel.asarray(x)")
    return x


def _complex(x: Any, what: str) -> Array:
    x = _array(x, what)
    if x.dtype.kind != "c":
        fix = (f"x.astype(pyaccel.{COMPLEX_OF[x.dtype].name})" if x.dtype in COMPLEX_OF
               else "x.astype(pyaccel.complex64)")
        real = " (or use rfft / ihfft for real input)" if what in ("fft", "ifft", "fftn", "ifftn") else ""
        raise TypeError(f"fft.{what}: input must have a complex floating-point dtype (Array API "
                        f"2023.12), got {x.dtype.name}; cast it with {fix}{real}")
    return x


def _real(x: Any, what: str) -> Array:
    x = _array(x, what)
    if x.dtype not in COMPLEX_OF:
        raise TypeError(f"fft.{what}: input must have a real floating-point dtype, got {x.dtype.name}; "
                        + ("use fft / fftn for complex input" if x.dtype.kind == "c"
                           else "cast it with x.astype(pyaccel.float32)"))
    if x.dtype is float16:  # no complex32: computed in float32
        x = x.astype(float32)
    return x


def _norm(norm: Any, what: str) -> str:
    if norm not in NORMS:
        raise ValueError(f"fft.{what}: norm={norm!r} is not one of {', '.join(map(repr, NORMS))}")
    return norm


def _length(n: Any, what: str, name: str = "n") -> int:
    if isinstance(n, bool) or not hasattr(n, "__index__"):
        raise TypeError(f"fft.{what}: {name} must be an int, got {n!r}")
    n = n.__index__()
    if n < 1:
        raise ValueError(f"fft.{what}: invalid number of data points {name}={n}; it must be >= 1")
    return n


def _axis(x: Array, axis: Any, what: str) -> int:
    if x.ndim == 0:
        raise ValueError(f"fft.{what}: x must have at least one dimension, got a 0-d array")
    return normalize_axis(axis, x.ndim, f"fft.{what} axis")


def _axes_s(x: Array, s: Any, axes: Any, what: str, half_last: bool = False) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Normalised (s, axes); ``half_last``: s[-1] defaults to 2 * (M - 1) (irfftn)."""
    if axes is None:
        if s is not None:
            raise ValueError(f"fft.{what}: s={s!r} was given without axes; pass axes= as well "
                             "(the standard requires both, or neither)")
        ax = tuple(range(x.ndim))
    else:
        if isinstance(axes, int) or not isinstance(axes, Sequence):
            raise TypeError(f"fft.{what}: axes must be a sequence of ints, got {axes!r}")
        ax = tuple(normalize_axis(a, x.ndim, f"fft.{what} axes") for a in axes)
    if s is None:
        sv = [x.shape[a] for a in ax]
        if half_last and ax:
            sv[-1] = 2 * (x.shape[ax[-1]] - 1)
    else:
        if isinstance(s, int) or not isinstance(s, Sequence):
            raise TypeError(f"fft.{what}: s must be a sequence of ints, got {s!r}")
        if len(s) != len(ax):
            raise ValueError(f"fft.{what}: s={tuple(s)!r} and axes={tuple(ax)!r} must have the same length")
        sv = []
        for k, (v, a) in enumerate(zip(s, ax, strict=True)):
            if not isinstance(v, bool) and hasattr(v, "__index__") and v.__index__() == -1:
                v = 2 * (x.shape[a] - 1) if half_last and k == len(ax) - 1 else x.shape[a]
            sv.append(v)
    return tuple(_length(v, what, "s") for v in sv), ax


def _out(x: Array, dt: DType, what: str) -> None:
    check_dtype(x.device, dt, f"fft.{what}")


# -- transforms -----------------------------------------------------------------------------
def fft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """One-dimensional discrete Fourier transform along ``axis`` (length ``n``)."""
    x = _complex(x, "fft")
    a = _axis(x, axis, "fft")
    n = _length(x.shape[a] if n is None else n, "fft")
    return x.device.ops.fft_c2c(x, (n,), (a,), True, _norm(norm, "fft"))


def ifft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """One-dimensional inverse discrete Fourier transform along ``axis``."""
    x = _complex(x, "ifft")
    a = _axis(x, axis, "ifft")
    n = _length(x.shape[a] if n is None else n, "ifft")
    return x.device.ops.fft_c2c(x, (n,), (a,), False, _norm(norm, "ifft"))


def fftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str = "backward") -> Array:
    """n-dimensional discrete Fourier transform over ``axes`` (all by default)."""
    x = _complex(x, "fftn")
    sv, ax = _axes_s(x, s, axes, "fftn")
    return x.device.ops.fft_c2c(x, sv, ax, True, _norm(norm, "fftn"))


def ifftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> Array:
    """n-dimensional inverse discrete Fourier transform over ``axes`` (all by default)."""
    x = _complex(x, "ifftn")
    sv, ax = _axes_s(x, s, axes, "ifftn")
    return x.device.ops.fft_c2c(x, sv, ax, False, _norm(norm, "ifftn"))


def rfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """Transform of real input: the ``n // 2 + 1`` non-negative frequencies along ``axis``."""
    x = _real(x, "rfft")
    a = _axis(x, axis, "rfft")
    n = _length(x.shape[a] if n is None else n, "rfft")
    _out(x, COMPLEX_OF[x.dtype], "rfft")
    return x.device.ops.fft_r2c(x, (n,), (a,), True, _norm(norm, "rfft"))


def irfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """Inverse of :func:`rfft`: real output of length ``n`` (default ``2 * (M - 1)``)."""
    x = _complex(x, "irfft")
    a = _axis(x, axis, "irfft")
    n = _length(2 * (x.shape[a] - 1) if n is None else n, "irfft")
    _out(x, REAL_OF[x.dtype], "irfft")
    return x.device.ops.fft_c2r(x, (n,), (a,), False, _norm(norm, "irfft"))


def rfftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> Array:
    """n-dimensional transform of real input; the last axis keeps ``s[-1] // 2 + 1`` values."""
    x = _real(x, "rfftn")
    sv, ax = _axes_s(x, s, axes, "rfftn")
    if not ax:
        raise ValueError("fft.rfftn: needs at least one axis to transform, got axes=()")
    _out(x, COMPLEX_OF[x.dtype], "rfftn")
    return x.device.ops.fft_r2c(x, sv, ax, True, _norm(norm, "rfftn"))


def irfftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str = "backward") -> Array:
    """Inverse of :func:`rfftn`: real output, the last axis of length ``s[-1]``."""
    x = _complex(x, "irfftn")
    sv, ax = _axes_s(x, s, axes, "irfftn", half_last=True)
    if not ax:
        raise ValueError("fft.irfftn: needs at least one axis to transform, got axes=()")
    _out(x, REAL_OF[x.dtype], "irfftn")
    return x.device.ops.fft_c2r(x, sv, ax, False, _norm(norm, "irfftn"))


def hfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """Transform of a Hermitian-symmetric signal given by its first half: real output of
    length ``n`` (default ``2 * (M - 1)``)."""
    x = _complex(x, "hfft")
    a = _axis(x, axis, "hfft")
    n = _length(2 * (x.shape[a] - 1) if n is None else n, "hfft")
    _out(x, REAL_OF[x.dtype], "hfft")
    return x.device.ops.fft_c2r(x, (n,), (a,), True, _norm(norm, "hfft"))


def ihfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """Inverse of :func:`hfft` for real input: ``n // 2 + 1`` complex values."""
    x = _real(x, "ihfft")
    a = _axis(x, axis, "ihfft")
    n = _length(x.shape[a] if n is None else n, "ihfft")
    _out(x, COMPLEX_OF[x.dtype], "ihfft")
    return x.device.ops.fft_r2c(x, (n,), (a,), False, _norm(norm, "ihfft"))


# -- helpers built from namespace functions -----------------------------------------------------
def _freq_args(n: Any, d: Any, what: str) -> tuple[int, float]:
    n = _length(n, what)
    if isinstance(d, bool) or not isinstance(d, (int, float)) or d == 0 or not math.isfinite(d):
        raise ValueError(f"fft.{what}: d={d!r} must be a finite non-zero real number")
    return n, float(d)


def _freq_dtype(dev: Any, dtype: Any, what: str) -> DType:
    if dtype is None:
        return default_float(dev)
    dt = check_dtype(dev, dtype, f"fft.{what}")
    if dt.kind != "f":
        raise TypeError(f"fft.{what}: dtype must be a real floating-point dtype, got {dt.name}")
    return dt


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Array:
    """Sample frequencies ``[0, 1, ..., -2, -1] / (d * n)`` in ``dtype`` (default: the
    device's default float dtype; the ``dtype`` keyword is the 2024.12 standard's)."""
    n, d = _freq_args(n, d, "fftfreq")
    dev = as_device(device)
    dt = _freq_dtype(dev, dtype, "fftfreq")
    pos = arange(0, (n - 1) // 2 + 1, dtype=dt, device=dev)
    neg = arange(-(n // 2), 0, dtype=dt, device=dev)
    return ew.multiply(concat([pos, neg]) if n > 1 else pos, 1.0 / (n * d))


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Array:
    """Sample frequencies ``[0, 1, ..., n // 2] / (d * n)`` (for rfft / irfft), in ``dtype``
    (default: the device's default float dtype)."""
    n, d = _freq_args(n, d, "rfftfreq")
    dev = as_device(device)
    dt = _freq_dtype(dev, dtype, "rfftfreq")
    return ew.multiply(arange(0, n // 2 + 1, dtype=dt, device=dev), 1.0 / (n * d))


def _shift(x: Array, axes: Any, what: str, sign: int) -> Array:
    x = _array(x, what)
    if axes is None:
        ax = list(range(x.ndim))
    elif isinstance(axes, (list, tuple)):
        ax = [normalize_axis(a, x.ndim, f"fft.{what} axes") for a in axes]
    else:
        ax = [normalize_axis(axes, x.ndim, f"fft.{what} axes")]
    return roll(x, [sign * (x.shape[a] // 2) for a in ax], axis=ax)


def fftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array:
    """Move the zero-frequency term to the centre (roll by ``size // 2`` along ``axes``)."""
    return _shift(x, axes, "fftshift", 1)


def ifftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array:
    """Inverse of :func:`fftshift` (roll by ``-(size // 2)``)."""
    return _shift(x, axes, "ifftshift", -1)


place_module(globals(), __all__)  # the committed device rule (pyaccel/placement.py)
