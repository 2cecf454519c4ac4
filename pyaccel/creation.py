"""Array API creation functions.

``device=`` takes a Device or a URI string (default: ``pyaccel.get_device()``).
Without ``dtype=``, Python floats give the device's default float and Python complex numbers
its default complex (under the default dtype policy float64 / complex128 on cpu, float32 /
complex64 on WebGPU devices, whose float64 is emulated; ``pyaccel.set_dtype_policy("exact")``
makes them float64 / complex128 there too), Python ints the default int (int64). Fills,
``arange``, ``linspace``, ``eye`` and ``tril``/``triu`` run on the device's op provider
(kernels on WebGPU devices: no host upload; ``linspace`` follows
NumPy's float64 formula on the host for bit-identical results, then uploads); ``empty`` leaves memory uninitialised.
"""

from __future__ import annotations

import math
from typing import Any

from . import _host
from ._shapes import broadcast_shapes, norm_shape
from .array import Array, asarray
from .dtypes import DType, as_dtype, bool_
from .manipulation import broadcast_to, reshape
from .placement import place_module
from .promotion import (
    check_default_float_fits,
    check_dtype,
    check_scalar_fits,
    default_complex,
    default_float,
    default_int,
)
from .registry import as_device

__all__ = [
    "arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like",
    "linspace", "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like",
]


def _dev_dtype(device: Any, dtype: Any, default: DType | None, what: str) -> tuple[Any, DType]:
    dev = as_device(device)
    dt = as_dtype(dtype) if dtype is not None else (default or default_float(dev))
    return dev, check_dtype(dev, dt, what)


def _fill(out: Array, value: Any) -> Array:
    """Fill ``out`` with a Python scalar (a kernel on GPUs)."""
    return out.device.ops.fill(out, value)


def _coerce_fill(value: Any, dt: DType, what: str) -> Any:
    if isinstance(value, Array):
        value = value.item()
    if dt.kind == "c":
        return complex(value)
    if isinstance(value, complex):
        raise TypeError(f"{what}: cannot fill a {dt.name} array with the complex value {value!r}; use a "
                        "complex dtype (or its real part, value.real)")
    if dt.kind == "b":
        return bool(value)
    if dt.kind in "iu":
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError(f"{what}: cannot fill a {dt.name} array with {value}")
            value = int(value)
        check_scalar_fits(int(value), dt, what)
        return int(value)
    return complex(value) if dt.kind == "c" else float(value)


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
    if isinstance(value, complex):
        return default_complex(dev)
    raise TypeError(f"full: fill_value must be a bool, int, float or complex, got {type(value).__name__} "
                    f"{value!r}")


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """An array filled with ``fill_value`` (dtype inferred from it when not given)."""
    dev = as_device(device)
    dt = check_dtype(dev, as_dtype(dtype) if dtype is not None else _fill_dtype(fill_value, dev), "full")
    if dtype is None and isinstance(fill_value, int) and not isinstance(fill_value, bool):
        check_scalar_fits(fill_value, dt, "full")
    if dtype is None:
        check_default_float_fits((fill_value,), dt, dev, "full")
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


def _bound(v: Any, name: str, what: str, kinds: str) -> Any:
    """A bound of ``arange`` / ``linspace`` as a Python number: Python numbers as they are, and
    (as NumPy and array-api-strict take them) 0-d pyaccel arrays, NumPy scalars and 0-d NumPy
    arrays by their value (so the kind of the value picks the default dtype)."""
    if isinstance(v, Array) or _host.is_numpy_array(v):
        if getattr(v, "ndim", 0) != 0:
            raise TypeError(f"{what}: {name} must be a number or a 0-d array, got an array of "
                            f"shape {tuple(v.shape)}; pass x[i] or float(x) for one element")
        if v.dtype.kind not in kinds:
            raise TypeError(f"{what}: {name} must be a real number, got a 0-d {v.dtype} array"
                            if "c" not in kinds else
                            f"{what}: {name} must be a number, got a 0-d {v.dtype} array")
        v = v.item()
    numbers = (int, float, complex) if "c" in kinds else (int, float)
    if isinstance(v, bool) or not isinstance(v, numbers):
        kind = "an int or float" if "c" not in kinds else "a number"
        raise TypeError(f"{what}: {name} must be {kind} (or a 0-d array), got {v!r}")
    return v


def _bounds_device(device: Any, *bounds: Any) -> Any:
    """``device``, else the device of an Array bound (the output goes where its inputs are)."""
    if device is not None:
        return as_device(device)
    for b in bounds:
        if isinstance(b, Array):
            return b.device
    return as_device(None)


def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None) -> Array:
    """Evenly spaced values in ``[start, stop)`` (``arange(n)`` is 0..n-1). The bounds are
    Python numbers or 0-d arrays (pyaccel or NumPy): float values give the default float."""
    dev = _bounds_device(device, start, stop, step)
    if stop is None:
        start, stop = 0, start
    start, stop, step = (_bound(v, n, "arange", "biuf") for n, v in
                         (("start", start), ("stop", stop), ("step", step)))
    if step == 0:
        raise ValueError("arange: step must not be zero")
    is_float = any(isinstance(v, float) for v in (start, stop, step))
    dt = as_dtype(dtype) if dtype is not None else (default_float(dev) if is_float else default_int(dev))
    dt = check_dtype(dev, dt, "arange")
    n = max(0, math.ceil((stop - start) / step))
    return dev.ops.arange(start, stop, step, n, dt)


def linspace(start: Any, stop: Any, /, num: int, *, dtype: Any = None, device: Any = None,
             endpoint: bool = True) -> Array:
    """``num`` evenly spaced values from ``start`` to ``stop`` (inclusive unless endpoint=False).
    The bounds are numbers or 0-d arrays (pyaccel or NumPy), ``num`` an int (or 0-d int array)."""
    if (isinstance(num, Array) or _host.is_numpy_array(num)) and getattr(num, "ndim", 1) == 0 \
            and num.dtype.kind in "iu":
        num = int(num.item())
    if isinstance(num, bool) or not isinstance(num, int) or num < 0:
        raise ValueError(f"linspace: num must be an int >= 0, got {num!r}")
    dev = _bounds_device(device, start, stop)
    start, stop = (_bound(v, n, "linspace", "biufc") for n, v in (("start", start), ("stop", stop)))
    is_complex = isinstance(start, complex) or isinstance(stop, complex)
    dt = as_dtype(dtype) if dtype is not None else (default_complex(dev) if is_complex
                                                     else default_float(dev))
    dt = check_dtype(dev, dt, "linspace")
    if is_complex and dt.kind != "c":
        raise TypeError(f"linspace: complex start/stop need a complex dtype, got dtype={dt.name}")
    fdt = dt if dt.kind in "fc" else check_dtype(dev, default_float(dev), "linspace")
    return dev.ops.linspace(start, stop, num, endpoint, dt, fdt)


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None,
        device: Any = None) -> Array:
    """A 2-D array with ones on the k-th diagonal and zeros elsewhere."""
    if n_cols is None:
        n_cols = n_rows
    for name, v in (("n_rows", n_rows), ("n_cols", n_cols), ("k", k)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"eye: {name} must be an int, got {v!r}")
    dev, dt = _dev_dtype(device, dtype, None, "eye")
    n_rows, n_cols = norm_shape((n_rows, n_cols), "eye shape")
    # a diagonal past the matrix is all zeros: clamp k so a kernel's 32-bit parameter never
    # wraps (eye(1, k=2**32) was a diagonal on GPUs)
    k = max(-n_rows, min(k, n_cols))
    return dev.ops.eye(n_rows, n_cols, k, dt)


def _tri(x: Array, k: int, name: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{name}: expected a pyaccel Array, got {type(x).__name__}")
    if x.ndim < 2:
        raise ValueError(f"{name} needs an array with >= 2 dimensions, got shape {x.shape}")
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"{name}: k must be an int, got {k!r}")
    return x.device.ops.tri(x, k, name == "triu")


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


place_module(globals(), __all__)  # the committed device rule (pyaccel/placement.py)
