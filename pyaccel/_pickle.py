"""Pickling of arrays and devices: what ``pickle.loads`` calls in the receiving process.

An :class:`~pyaccel.Array` pickles as (device URI, dtype name, shape, the data in NumPy's
little-endian host layout); a :class:`~pyaccel.Device` as its URI. Unpickling opens the
device the data came from:

* the **same URI**, when that device exists in the receiving process (``vulkan:0`` pickled
  in one process opens ``vulkan:0`` in the other, which is that process's own device);
* otherwise (``vulkan:3`` on a machine with one GPU, a ``webgpu`` array in a native
  process, a backend that is not installed) the receiving process's **current device**,
  ``pyaccel.get_device()``: the innermost ``pyaccel.using()``, else ``set_device()``, else
  ``PYACCEL_DEVICE``, else the default ranking. A ``RuntimeWarning`` names both URIs once
  per missing URI and process.

A device that exists but cannot hold the dtype raises ``UnsupportedDTypeError`` (never a
silent downcast). With protocol 5 the data travels as an out-of-band ``PickleBuffer``
(``pickle.dumps(x, protocol=5, buffer_callback=...)``, as Dask's distributed does).

This module imports nothing from pyaccel at module level: its functions reach the
namespace through ``sys.modules`` (``pickle.loads`` imports ``pyaccel`` before calling them),
so ``array.py`` and ``device.py`` can reference them without an import cycle.
"""

from __future__ import annotations

import sys
import threading
import warnings
from typing import Any

_warned: set[str] = set()
_warned_lock = threading.Lock()


def _pyaccel() -> Any:
    return sys.modules[__package__]


def open_device(uri: str) -> Any:
    """The device for a pickled URI: the same URI here, else the current device (see above)."""
    pa = _pyaccel()
    try:
        return pa.device(uri)
    except (pa.DeviceNotFoundError, pa.BackendUnavailableError, pa.InvalidDeviceURIError) as exc:
        dev = pa.get_device()
        with _warned_lock:
            first = uri not in _warned
            _warned.add(uri)
        if first:
            warnings.warn(
                f"unpickling pyaccel data from device {uri!r}, which does not exist in this process "
                f"({type(exc).__name__}); it goes to the current device {dev.uri!r} "
                "(pyaccel.using() / set_device() / PYACCEL_DEVICE choose it)",
                RuntimeWarning, stacklevel=3)
        return dev


def rebuild_device(uri: str) -> Any:
    """``pickle.loads`` of a Device."""
    return open_device(uri)


def rebuild_array(uri: str, dtype_name: str, shape: tuple[int, ...], data: Any) -> Any:
    """``pickle.loads`` of an Array: upload the host bytes to the device (see the module doc)."""
    pa = _pyaccel()
    dev = open_device(uri)
    return from_host_bytes(pa, memoryview(data), dtype_name, tuple(shape), dev)


def from_host_bytes(pa: Any, data: memoryview, dtype_name: str, shape: tuple[int, ...],
                    dev: Any) -> Any:
    """An Array on ``dev`` from C-order bytes in NumPy's layout of the dtype (any dtype row)."""
    from . import _host  # (no cycle: _host imports nothing from pyaccel's namespace)

    dt = pa.dtypes.as_dtype(dtype_name)
    n = 1
    for s in shape:
        n *= s
    if data.nbytes != n * dt.itemsize:
        raise ValueError(f"corrupt pickled pyaccel array: {data.nbytes} bytes for shape {shape} of "
                         f"{dt.name} ({n * dt.itemsize} expected)")
    np = _host.numpy()
    if np is not None:
        host = np.frombuffer(data, dtype=np.dtype(dt.name).newbyteorder("<")).reshape(shape)
        return pa.asarray(host, dtype=dt, device=dev)
    flat = _host.unpack(data.tobytes(), dt.char, n)
    return pa.reshape(pa.asarray(flat, dtype=dt, device=dev), shape)
