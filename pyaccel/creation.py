"""Array API creation functions.

``device=`` takes a Device or a URI string (default: ``pyaccel.get_device()``).
Without ``dtype=``, Python floats give the device's default float (float64 on cpu,
float32 on WebGPU devices), Python ints the default int (int64 / int32). On WebGPU
devices fills, ``arange``, ``eye`` and ``tril``/``triu`` are kernels (no host upload);
``linspace`` follows NumPy's float64 formula on the host (bit-identical results) and
uploads; ``empty`` leaves memory uninitialised.
"""

from __future__ import annotations

import math
from typing import Any

from . import _host
from ._shapes import broadcast_shapes
from .array import Array, asarray, norm_shape
from .dtypes import DType, as_dtype, bool_
from .ops import elementwise as _k
from .ops import table as _table
from .promotion import (
    check_dtype,
    check_scalar_fits,
    default_float,
    default_int,
)
from .registry import as_device

__all__ = [
    "arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like",
    "linspace", "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like",
]


def _np() -> Any:
    return _host.numpy() or __import__("numpy")


def _dev_dtype(device: Any, dtype: Any, default: DType | None, what: str) -> tuple[Any, DType]:
    dev = as_device(device)
    dt = as_dtype(dtype) if dtype is not None else (default or default_float(dev))
    return dev, check_dtype(dev, dt, what)


def _fill(out: Array, value: Any) -> Array:
    """Fill ``out`` with a Python scalar (a kernel on GPUs)."""
    dt = out.dtype
    if out.device.is_cpu:
        if out.size:
            out._np()[...] = value
        return out
    if out.size:
        from .manipulation import _cast_expr, _scalar_t32

        expr, T, conv = _cast_expr(dt, dt)
        _k.run(out.device, expr, T, out._buf, dt, [_k.scalar(value, _scalar_t32(dt), conv)],
               list(out.shape), name="fill")
    return out


def _coerce_fill(value: Any, dt: DType, what: str) -> Any:
    if isinstance(value, Array):
        value = value.item()
    if dt.kind == "b":
        return bool(value)
    if dt.kind in "iu":
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError(f"{what}: cannot fill a {dt.name} array with {value}")
            value = int(value)
        check_scalar_fits(int(value), dt, what)
        return int(value)
    return float(value)


def empty(shape: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """An uninitialised array."""
    dev, dt = _dev_dtype(device, dtype, None, "empty")
    return Array._empty(dev, norm_shape(shape), dt)


def zeros(shape: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """An array of zeros."""
    dev, dt = _dev_dtype(device, dtype, None, "zeros")
    return _fill(Array._empty(dev, norm_shape(shape), dt), 0)


def ones(shape: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """An array of ones."""
    dev, dt = _dev_dtype(device, dtype, None, "ones")
    return _fill(Array._empty(dev, norm_shape(shape), dt), 1)


def _fill_dtype(value: Any, dev: Any) -> DType:
    if isinstance(value, Array):
        return value.dtype
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return default_int(dev)
    if isinstance(value, float):
        return default_float(dev)
    raise TypeError(f"full: fill_value must be a bool, int or float, got {type(value).__name__} {value!r}")


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """An array filled with ``fill_value`` (dtype inferred from it when not given)."""
    dev = as_device(device)
    dt = check_dtype(dev, as_dtype(dtype) if dtype is not None else _fill_dtype(fill_value, dev), "full")
    if dtype is None and isinstance(fill_value, int) and not isinstance(fill_value, bool):
        check_scalar_fits(fill_value, dt, "full")
    return _fill(Array._empty(dev, norm_shape(shape), dt), _coerce_fill(fill_value, dt, "full"))


def _like(x: Array, dtype: Any, device: Any, what: str) -> tuple[Any, DType]:
    if not isinstance(x, Array):
        raise TypeError(f"{what}: expected a pyaccel Array, got {type(x).__name__}")
    dev = as_device(device) if device is not None else x.device
    dt = as_dtype(dtype) if dtype is not None else x.dtype
    return dev, check_dtype(dev, dt, what)


def empty_like(x: Array, /, *, dtype: Any = None, device: Any = None) -> Array:
    dev, dt = _like(x, dtype, device, "empty_like")
    return Array._empty(dev, x.shape, dt)


def zeros_like(x: Array, /, *, dtype: Any = None, device: Any = None) -> Array:
    dev, dt = _like(x, dtype, device, "zeros_like")
    return _fill(Array._empty(dev, x.shape, dt), 0)


def ones_like(x: Array, /, *, dtype: Any = None, device: Any = None) -> Array:
    dev, dt = _like(x, dtype, device, "ones_like")
    return _fill(Array._empty(dev, x.shape, dt), 1)


def full_like(x: Array, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Array:
    dev, dt = _like(x, dtype, device, "full_like")
    return _fill(Array._empty(dev, x.shape, dt), _coerce_fill(fill_value, dt, "full_like"))


def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None) -> Array:
    """Evenly spaced values in ``[start, stop)`` (``arange(n)`` is 0..n-1)."""
    if stop is None:
        start, stop = 0, start
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"arange: {name} must be an int or float, got {v!r}")
    if step == 0:
        raise ValueError("arange: step must not be zero")
    dev = as_device(device)
    is_float = any(isinstance(v, float) for v in (start, stop, step))
    dt = as_dtype(dtype) if dtype is not None else (default_float(dev) if is_float else default_int(dev))
    dt = check_dtype(dev, dt, "arange")
    n = max(0, math.ceil((stop - start) / step))
    if dev.is_cpu:
        np = _np()
        return Array._from_numpy(dev, np.arange(start, stop, step, dtype=np.dtype(dt.name)), dt)
    if dt.kind == "b":
        raise TypeError("arange: bool dtype is not supported; use a numeric dtype")
    out = Array._empty(dev, (n,), dt)
    if n:
        if dt.kind in "iu":
            check_scalar_fits(int(start), dt, "arange")
            check_scalar_fits(int(start + (n - 1) * step), dt, "arange")
        from .manipulation import _scalar_t32

        row = _table.get("arange_kernel")
        T = _k.compute_type(dt)
        sdt = _scalar_t32(dt)
        cast = float if dt.kind == "f" else int
        _k.run(dev, row.expr(_k.kind_of(dt)), T, out._buf, dt,
               [_k.scalar(cast(start), sdt, T), _k.scalar(cast(step), sdt, T)], [n], name="arange")
    return out


def linspace(start: Any, stop: Any, /, num: int, *, dtype: Any = None, device: Any = None,
             endpoint: bool = True) -> Array:
    """``num`` evenly spaced values from ``start`` to ``stop`` (inclusive unless endpoint=False)."""
    if isinstance(num, bool) or not isinstance(num, int) or num < 0:
        raise ValueError(f"linspace: num must be an int >= 0, got {num!r}")
    for name, v in (("start", start), ("stop", stop)):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"linspace: {name} must be a real number, got {v!r}")
    dev = as_device(device)
    dt = check_dtype(dev, as_dtype(dtype) if dtype is not None else default_float(dev), "linspace")
    if dev.is_cpu:
        np = _np()
        return Array._from_numpy(dev, np.linspace(start, stop, num, endpoint=endpoint,
                                                  dtype=np.dtype(dt.name)), dt)
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    last = float(stop) if endpoint and num > 1 else float(start + (num - 1) * step)
    # NumPy's formula on the host (float64 start + i * step, rounded once to the dtype):
    # bit-identical with NumPy, which float32 kernel math is not (linspace(1, 0, 4)[2])
    np = _host.numpy()
    if np is not None:
        return asarray(np.linspace(start, stop, num, endpoint=endpoint, dtype=np.dtype(dt.name)),
                       dtype=dt, device=dev)
    if dt.kind == "f" and num <= _LINSPACE_PY_MAX:
        return asarray(_linspace_f64(start, stop, num, endpoint), dtype=dt, device=dev)
    fdt = dt if dt.kind == "f" else check_dtype(dev, default_float(dev), "linspace")
    out = Array._empty(dev, (num,), fdt)
    if num:
        from .manipulation import _scalar_t32

        row = _table.get("linspace_kernel")
        sdt = _scalar_t32(fdt)
        _k.run(dev, row.expr("f"), "f32", out._buf, fdt,
               [_k.scalar(float(start), sdt, "f32"), _k.scalar(float(step), sdt, "f32"),
                _k.scalar(last, sdt, "f32")], [num], name="linspace")
    return out if fdt is dt else out.astype(dt)


_LINSPACE_PY_MAX = 1 << 20  # without NumPy: pure Python up to this many values, then a kernel


def _linspace_f64(start: float, stop: float, num: int, endpoint: bool) -> list[float]:
    """NumPy's linspace values in float64 (numpy/_core/function_base.py), as Python floats."""
    div = (num - 1) if endpoint else num
    start, delta = float(start), float(stop) - float(start)
    step = delta / div if div > 0 else math.nan
    if div <= 0:
        ys = [i * delta for i in range(num)]
    elif step == 0:  # step underflows: NumPy divides first
        ys = [i / div * delta for i in range(num)]
    else:
        ys = [i * step for i in range(num)]
    ys = [y + start for y in ys]
    if endpoint and num > 1:
        ys[-1] = float(stop)
    return ys


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None,
        device: Any = None) -> Array:
    """A 2-D array with ones on the k-th diagonal and zeros elsewhere."""
    if n_cols is None:
        n_cols = n_rows
    for name, v in (("n_rows", n_rows), ("n_cols", n_cols), ("k", k)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"eye: {name} must be an int, got {v!r}")
    dev, dt = _dev_dtype(device, dtype, None, "eye")
    shape = norm_shape((n_rows, n_cols), "eye shape")
    if dev.is_cpu:
        np = _np()
        return Array._from_numpy(dev, np.eye(n_rows, n_cols, k=k, dtype=np.dtype(dt.name)), dt)
    out = Array._empty(dev, shape, dt)
    if out.size:
        row = _table.get("eye_kernel")
        T = _k.compute_type(dt)
        _k.run(dev, row.expr(_k.kind_of(dt)), T, out._buf, dt, [], list(shape),
               prm=(n_cols, 0, k, 0), name="eye")
    return out


def _tri(x: Array, k: int, name: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{name}: expected a pyaccel Array, got {type(x).__name__}")
    if x.ndim < 2:
        raise ValueError(f"{name} needs an array with >= 2 dimensions, got shape {x.shape}")
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"{name}: k must be an int, got {k!r}")
    if x.device.is_cpu:
        np = _np()
        return Array._from_numpy(x.device, getattr(np, name)(x._np(), k=k), x.dtype)
    out = Array._empty(x.device, x.shape, x.dtype)
    if out.size:
        row = _table.get(name)
        T = _k.compute_type(x.dtype)
        rows, cols = x.shape[-2], x.shape[-1]
        _k.run(x.device, row.expr(_k.kind_of(x.dtype)), T, out._buf, x.dtype,
               [_k.buf(x._buf, x.dtype, T)], list(x.shape), prm=(cols, rows, k, 0), name=name)
    return out


def tril(x: Array, /, *, k: int = 0) -> Array:
    """Lower triangle of the last two axes (elements above the k-th diagonal zeroed)."""
    return _tri(x, k, "tril")


def triu(x: Array, /, *, k: int = 0) -> Array:
    """Upper triangle of the last two axes (elements below the k-th diagonal zeroed)."""
    return _tri(x, k, "triu")


def meshgrid(*arrays: Array, indexing: str = "xy") -> list[Array]:
    """Coordinate grids from 1-D arrays (``indexing='xy'`` swaps the first two axes)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    from .manipulation import broadcast_to, reshape

    for a in arrays:
        if not isinstance(a, Array) or a.ndim != 1:
            raise ValueError(f"meshgrid takes 1-D pyaccel arrays, got {getattr(a, 'shape', type(a).__name__)}")
    n = len(arrays)
    if n == 0:
        return []
    sizes = [a.shape[0] for a in arrays]
    if indexing == "xy" and n >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for j, a in enumerate(arrays):
        shp = [1] * n
        pos = j
        if indexing == "xy" and n >= 2 and j < 2:
            pos = 1 - j
        shp[pos] = a.shape[0]
        out.append(broadcast_to(reshape(a, tuple(shp)), tuple(sizes)))
    broadcast_shapes(*(o.shape for o in out))
    return out


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Array:
    """An Array from any DLPack-capable object (through NumPy; copied onto ``device``)."""
    np = _host.numpy()
    if np is None:
        from .errors import BackendUnavailableError

        raise BackendUnavailableError("from_dlpack needs NumPy; use asarray(memoryview(obj)) instead")
    if isinstance(x, Array):
        return asarray(x, device=device, copy=copy)
    return asarray(np.from_dlpack(x), device=device, copy=None if copy is False else copy)
