"""The browser's WebGPU objects behind pyaccel arrays and devices (Pyodide only), zero-copy.

The browser twin of :mod:`pyaccel.extras.wgpu` (native wgpu-py), with the same rules:

* :func:`as_gpu_buffer` ``(x)`` -> the JS ``GPUBuffer`` that holds ``x``'s storage (no copy);
* :func:`from_gpu_buffer` ``(buffer, shape, dtype, device)`` -> an :class:`~pyaccel.Array`
  over a JS ``GPUBuffer`` you created (no copy);
* :func:`gpu_device` ``(device)`` -> the JS ``GPUDevice`` pyaccel records on.

Storage layout: C order, the device's storage layout of the dtype
(``device.ops.layout(dtype)``): bool and 8/16-bit integers take 4 bytes per element on
WebGPU, the other dtypes their NumPy itemsize (little-endian).

Lifetime: the buffer of :func:`as_gpu_buffer` belongs to pyaccel. It is valid while the
array lives (keep a reference to ``x``); once the array is freed or collected the buffer
goes back to pyaccel's pool and holds other arrays' data. Never ``destroy()`` it. It may be
larger than the array (pooled size classes): the array is its first ``x.size * itemsize``
bytes. An array made by :func:`from_gpu_buffer` never destroys or pools your buffer; keep
the buffer alive (not destroyed, not mapped) while the array is in use.

Usage flags: pyaccel's buffers have ``STORAGE | UNIFORM | COPY_SRC | COPY_DST`` (bind them
as storage in a compute or fragment shader, copy from/to them). A buffer given to
:func:`from_gpu_buffer` needs at least ``STORAGE | COPY_SRC | COPY_DST``.

Synchronisation: pyaccel records work into an open command encoder and submits it when a
result is read, on ``synchronize()``, or after 256 commands. Your commands on the same
``GPUQueue`` run in submission order with pyaccel's *submitted* work, so:

* :func:`as_gpu_buffer` submits the work pyaccel recorded so far (it does not wait):
  commands you submit afterwards see ``x``'s values. Call it again (or
  ``device.synchronize()``) after recording more pyaccel work on ``x``.
* Before you write a buffer that pyaccel work may still read (``queue.writeBuffer``, your
  own passes), submit that pyaccel work first the same way, or your write can overtake it.
* pyaccel work recorded after you submitted your commands sees their results.
"""

from __future__ import annotations

import weakref
from math import prod
from typing import Any

from ..array import Array
from ..device import Buffer, Device
from ..dtypes import as_dtype
from ..errors import UnsupportedDTypeError
from ..promotion import supports

__all__ = ["as_gpu_buffer", "from_gpu_buffer", "gpu_device"]

# GPUBufferUsage bits (the WebGPU spec's values)
_USAGE = {"MAP_READ": 1, "MAP_WRITE": 2, "COPY_SRC": 4, "COPY_DST": 8, "INDEX": 16,
          "VERTEX": 32, "UNIFORM": 64, "STORAGE": 128, "INDIRECT": 256, "QUERY_RESOLVE": 512}
REQUIRED_USAGE = ("STORAGE", "COPY_SRC", "COPY_DST")


def _browser_device(device: Any, what: str) -> Device:
    if device is None:
        from ..registry import get_device

        device = get_device()
    elif not isinstance(device, Device):
        from ..registry import device as open_device

        device = open_device(device)
    if getattr(device.impl, "js_device", None) is None or not hasattr(device.impl, "js_buffer"):
        raise TypeError(
            f"{what}: {device.uri} is not a browser WebGPU device; pyaccel.extras.webgpu works "
            "on 'webgpu' devices in Pyodide. Fix: use device='webgpu' in a page, or "
            "pyaccel.extras.wgpu (as_wgpu_buffer / from_wgpu_buffer / wgpu_device) natively"
        )
    return device


def gpu_device(device: Device | str | None = None) -> Any:
    """The JS ``GPUDevice`` of a browser device (default: the current device).

    Create your pipelines and buffers on it to share buffers with pyaccel; a GPUBuffer
    belongs to one GPUDevice."""
    return _browser_device(device, "gpu_device").impl.js_device


def as_gpu_buffer(x: Array) -> Any:
    """The JS ``GPUBuffer`` holding ``x``'s storage (no copy); submits pyaccel's recorded work.

    Valid while ``x`` lives; see the module docstring for the layout, usage flags and
    synchronisation rules."""
    if not isinstance(x, Array):
        raise TypeError(f"as_gpu_buffer(x): x must be a pyaccel.Array, got {type(x).__name__}; "
                        "make one with pyaccel.asarray(obj, device='webgpu')")
    dev = _browser_device(x.device, "as_gpu_buffer")
    if x._strides is not None:
        raise ValueError("as_gpu_buffer(x): x is a strided view into another array's buffer "
                         "(offset / strides); pass pyaccel.asarray(x, copy=True) to get an array "
                         "of its own")
    handle = x._buf.handle  # BufferFreedError once freed
    dev.impl.flush()  # commands the caller submits next come after pyaccel's work on x
    return dev.impl.js_buffer(handle)


def _usage_names(bits: int) -> str:
    return " | ".join(n for n, b in _USAGE.items() if bits & b) or "none"


def _keep(_buffer: Any) -> None:
    """Finalizer of a wrapped buffer: drops the reference, never destroys or pools it."""


def from_gpu_buffer(buffer: Any, shape: int | tuple[int, ...], dtype: Any,
                    device: Device | str | None = None) -> Array:
    """An Array over a JS ``GPUBuffer`` created on ``device``'s GPUDevice (no copy).

    ``buffer`` needs ``GPUBufferUsage.STORAGE | COPY_SRC | COPY_DST``, must be unmapped and
    at least ``prod(shape) * itemsize`` bytes (the device's storage layout of ``dtype``).
    Writes to the buffer made in queue order are visible through the Array and the
    Array's in-place updates through the buffer; pyaccel never destroys it."""
    dev = _browser_device(device, "from_gpu_buffer")
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, tuple | list) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
        raise TypeError(f"from_gpu_buffer: shape must be a tuple of non-negative ints, got {shape!r}")
    shape = tuple(shape)
    d = as_dtype(dtype)
    if not supports(dev, d):
        raise UnsupportedDTypeError(
            f"from_gpu_buffer: dtype {d.name} is not supported on {dev.uri}; wrap the buffer "
            "with a dtype the device supports (its bytes are not converted)")
    usage = getattr(buffer, "usage", None)
    size = getattr(buffer, "size", None)
    if not isinstance(usage, int) or not isinstance(size, int | float) or not hasattr(buffer, "destroy"):
        raise TypeError(f"from_gpu_buffer: buffer must be a JS GPUBuffer, got {type(buffer).__name__} "
                        f"{buffer!r:.60}; create one with gpu_device(device).createBuffer(...)")
    size = int(size)
    missing = [n for n in REQUIRED_USAGE if not usage & _USAGE[n]]
    if missing:
        raise ValueError(
            f"from_gpu_buffer: the GPUBuffer's usage is {_usage_names(usage)}; pyaccel binds array "
            f"buffers as storage and copies to and from them, so it also needs {' | '.join(missing)}. "
            "Fix: create it with usage GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | "
            "GPUBufferUsage.COPY_DST (plus what you need)")
    state = str(getattr(buffer, "mapState", "unmapped"))
    if state != "unmapped":
        raise ValueError(f"from_gpu_buffer: the GPUBuffer is {state}; unmap() it first "
                         "(a mapped buffer cannot be used by GPU commands)")
    itemsize = dev.ops.layout(d).itemsize
    nbytes = prod(shape) * itemsize
    if size < nbytes:
        raise ValueError(
            f"from_gpu_buffer: the GPUBuffer has {size} bytes, but shape {shape} of {d.name} needs "
            f"{nbytes} ({prod(shape)} elements x {itemsize} bytes on {dev.uri}). Fix: a smaller "
            "shape, or a larger buffer")
    if nbytes > dev.limits.max_storage_binding_size:
        raise ValueError(
            f"from_gpu_buffer: {nbytes} bytes are above {dev.uri}'s max_storage_binding_size "
            f"({dev.limits.max_storage_binding_size}); kernels could not bind it")
    from ..runtime.webgpu_common import GPUBuffer

    handle = GPUBuffer(buffer, size)
    buf = Buffer(dev, handle, nbytes)
    buf._finalizer.detach()  # not pyaccel's memory: never pooled nor destroyed
    buf._finalizer = weakref.finalize(buf, _keep, buffer)
    return Array._new(buf, shape, d, dev)
