"""Neural-network helpers: ``softmax``, ``log_softmax``, ``logsumexp`` along an axis.

They run on the device's op provider (``softmax`` / ``logsumexp``). On WebGPU devices
the axis is moved last (a gather when it is not already) and the
rows go through :func:`pyaccel.ops.gpu_kernels.softmax_rows` /
:func:`~pyaccel.ops.gpu_kernels.logsumexp_rows` (max-shifted, float32 math). Integer
inputs compute in the device's default float. Rows whose maximum is infinite: softmax
gives NaN (``x - max``), logsumexp gives that infinity; an empty axis gives ``-inf``
(logsumexp). The cpu device computes the same formulas with NumPy.
"""

from __future__ import annotations

from typing import Any

from ._shapes import normalize_axis
from .array import Array
from .elementwise import subtract
from .placement import place_module
from .promotion import check_dtype, default_float

__all__ = ["log_softmax", "logsumexp", "softmax"]


def _prep(x: Any, axis: int, what: str) -> tuple[Array, int]:
    if not isinstance(x, Array):
        raise TypeError(f"{what}: expected a pyaccel Array, got {type(x).__name__}")
    if x.ndim == 0:
        raise ValueError(f"{what} needs an array with at least one dimension")
    if x.dtype.kind != "f":
        x = x.astype(check_dtype(x.device, default_float(x.device), what))
    return x, normalize_axis(axis, x.ndim, f"{what} axis")


def softmax(x: Array, /, *, axis: int = -1) -> Array:
    """``exp(x) / sum(exp(x))`` along ``axis`` (max-shifted for stability)."""
    x, ax = _prep(x, axis, "softmax")
    return x.device.ops.softmax(x, ax)


def logsumexp(x: Array, /, *, axis: int = -1, keepdims: bool = False) -> Array:
    """``log(sum(exp(x)))`` along ``axis`` (max-shifted for stability)."""
    x, ax = _prep(x, axis, "logsumexp")
    return x.device.ops.logsumexp(x, ax, bool(keepdims))


def log_softmax(x: Array, /, *, axis: int = -1) -> Array:
    """``x - logsumexp(x)`` along ``axis``."""
    x, ax = _prep(x, axis, "log_softmax")
    return subtract(x, logsumexp(x, axis=ax, keepdims=True))


place_module(globals(), __all__)  # the committed device rule (pyaccel/placement.py)
