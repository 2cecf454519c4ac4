"""Neural-network helpers: ``softmax``, ``log_softmax``, ``logsumexp`` along an axis.

On WebGPU devices the axis is moved last (a gather when it is not already) and the
rows go through :func:`pyaccel.ops.gpu_kernels.softmax_rows` /
:func:`~pyaccel.ops.gpu_kernels.logsumexp_rows` (max-shifted, float32 math). Integer
inputs compute in the device's default float. Rows whose maximum is infinite: softmax
gives NaN (``x - max``), logsumexp gives that infinity; an empty axis gives ``-inf``
(logsumexp). The cpu device computes the same formulas with NumPy.
"""

from __future__ import annotations

from typing import Any

from . import _host
from ._shapes import normalize_axis
from .array import Array, prod
from .manipulation import moveaxis, reshape
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


def _np_logsumexp(np: Any, v: Any, ax: int) -> Any:
    if v.shape[ax] == 0:
        return np.full(v.shape[:ax] + v.shape[ax + 1:], -np.inf, dtype=v.dtype)
    with np.errstate(all="ignore"):
        m = np.max(v, axis=ax, keepdims=True)
        m = np.where(np.isfinite(m), m, 0)
        s = np.sum(np.exp(v - m), axis=ax, keepdims=True)
        return (np.log(s) + m).squeeze(ax).astype(v.dtype)


def softmax(x: Array, /, *, axis: int = -1) -> Array:
    """``exp(x) / sum(exp(x))`` along ``axis`` (max-shifted for stability)."""
    x, ax = _prep(x, axis, "softmax")
    if x.device.is_cpu:
        np = _host.numpy() or __import__("numpy")
        v = x._np()
        if v.shape[ax] == 0:
            return Array._from_numpy(x.device, v.copy(), x.dtype)
        with np.errstate(all="ignore"):
            m = np.max(v, axis=ax, keepdims=True)
            e = np.exp(v - m)  # an infinite max gives NaN (as the GPU kernel)
            r = (e / np.sum(e, axis=ax, keepdims=True)).astype(v.dtype)
        return Array._from_numpy(x.device, r, x.dtype)
    xx = x if ax == x.ndim - 1 else moveaxis(x, ax, -1)
    n = xx.shape[-1]
    from .ops import gpu_kernels

    buf = gpu_kernels.softmax_rows(x.device, xx._buf, xx.dtype, prod(xx.shape[:-1]), n)
    r = Array(buf, xx.shape, x.dtype, x.device)
    return r if ax == x.ndim - 1 else moveaxis(r, -1, ax)


def logsumexp(x: Array, /, *, axis: int = -1, keepdims: bool = False) -> Array:
    """``log(sum(exp(x)))`` along ``axis`` (max-shifted for stability)."""
    x, ax = _prep(x, axis, "logsumexp")
    if x.device.is_cpu:
        np = _host.numpy() or __import__("numpy")
        r = _np_logsumexp(np, x._np(), ax)
        if keepdims:
            r = np.expand_dims(r, ax)
        return Array._from_numpy(x.device, np.asarray(r), x.dtype)
    xx = x if ax == x.ndim - 1 else moveaxis(x, ax, -1)
    from .ops import gpu_kernels

    buf = gpu_kernels.logsumexp_rows(x.device, xx._buf, xx.dtype, prod(xx.shape[:-1]), xx.shape[-1])
    shape = x.shape[:ax] + ((1,) if keepdims else ()) + x.shape[ax + 1:]
    return reshape(Array(buf, xx.shape[:-1], x.dtype, x.device), shape)


def log_softmax(x: Array, /, *, axis: int = -1) -> Array:
    """``x - logsumexp(x)`` along ``axis``."""
    from .elementwise import subtract

    x, ax = _prep(x, axis, "log_softmax")
    return subtract(x, logsumexp(x, axis=ax, keepdims=True))
