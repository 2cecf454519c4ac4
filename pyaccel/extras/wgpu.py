"""Zero-copy interop with wgpu-py: the ``GPUBuffer`` behind an array, arrays over your buffers.

Native devices only (``vulkan:N``, ``metal:N``, ``dx12:N``, ``gl:N``); the rules (lifetime,
usage flags, synchronisation) are in docs/interop.md, in short:

* :func:`as_wgpu_buffer` returns the array's own ``wgpu.GPUBuffer`` (no copy). The array's
  elements are its first :func:`storage_nbytes` bytes (the buffer may be larger: pyaccel
  allocates in size classes), in the device's storage layout (:func:`storage_layout`: bool
  as u32 0/1, int8/int16/uint8/uint16 widened to 32 bits on WebGPU devices). Arrays are
  always C-contiguous and start at offset 0 of their buffer; a ``reshape`` shares the buffer,
  so it returns the same buffer. Once exported, the buffer is never recycled by pyaccel's
  pool: when the array dies, pyaccel drops its reference and wgpu-py frees the buffer when
  yours goes too.
* :func:`from_wgpu_buffer` wraps a buffer you created (no copy). You keep owning it:
  pyaccel never destroys or pools it; the array holds a reference, so do not ``destroy()``
  it while the array (or arrays pyaccel derived by ``reshape``) is in use. It needs
  ``STORAGE | COPY_SRC | COPY_DST`` usage and ``size >= storage_nbytes``.
* pyaccel records work into an open encoder; your queue calls run in *queue order*. Call
  :func:`submit` (``as_wgpu_buffer`` does it too) before your own ``queue.write_buffer``,
  ``queue.submit`` or ``queue.read_buffer`` that touches a buffer pyaccel used, so pyaccel's
  recorded work goes first. pyaccel work recorded after your queue calls is submitted after
  them: nothing to do in that direction.
"""

from __future__ import annotations

import weakref
from typing import Any

from ..array import Array
from ..device import Buffer, Device
from ..dtypes import as_dtype
from ..promotion import check_dtype
from ..registry import as_device

__all__ = ["as_wgpu_buffer", "from_wgpu_buffer", "required_usage", "storage_layout",
           "storage_nbytes", "submit", "wgpu_device"]


REQUIRED_USAGE_NAMES = ("STORAGE", "COPY_SRC", "COPY_DST")


def required_usage() -> int:
    """The ``wgpu.BufferUsage`` flags a buffer needs for :func:`from_wgpu_buffer`
    (``STORAGE | COPY_SRC | COPY_DST``; OR in your own, e.g. ``VERTEX``)."""
    import wgpu

    flags = 0
    for name in REQUIRED_USAGE_NAMES:
        flags |= int(getattr(wgpu.BufferUsage, name))
    return flags


def _facade(device: Device, what: str) -> Any:
    from ..runtime.wgpu_native import WgpuFacade

    f = getattr(device.impl, "f", None)
    if not isinstance(f, WgpuFacade):
        raise TypeError(
            f"{what}: {device.uri} is not a native wgpu-py device (its backend is "
            f"{device.backend!r}); use a vulkan:N / metal:N / dx12:N / gl:N device "
            "(in the browser: pyaccel.extras.webgpu)")
    if device.is_lost:
        device.impl._check()  # raises DeviceLostError with the recovery hint
    return f


def wgpu_device(device: Any = None) -> Any:
    """The ``wgpu.GPUDevice`` behind a native pyaccel device (URI, Device or None: current).

    Create your own buffers, pipelines and render passes on it; they can then share buffers
    with pyaccel arrays (a ``GPUBuffer`` belongs to one ``GPUDevice``)."""
    dev = as_device(device)
    return _facade(dev, "wgpu_device").device


def submit(device: Any = None) -> None:
    """Submit pyaccel's recorded work on ``device`` to its queue now (no wait).

    Call it before your own queue operations on buffers pyaccel used or will read, so they
    run after pyaccel's work (queue order). It does not wait for the GPU."""
    dev = as_device(device)
    f = _facade(dev, "submit")
    with dev.impl.lock:
        dev.impl.flush()
        f._drain()  # (a submission handed to the facade's submit thread reaches the queue)


def storage_layout(x: Array) -> Any:
    """The storage layout of ``x``'s dtype on its device (``itemsize``, NumPy ``numpy`` lane
    type, ``lanes``): how the elements lie in the buffer ``as_wgpu_buffer`` returns."""
    return x.device.ops.layout(x.dtype)


def storage_nbytes(x: Array) -> int:
    """Bytes the array's elements take in its buffer (``x.size * storage_layout(x).itemsize``)."""
    return x.size * storage_layout(x).itemsize


def as_wgpu_buffer(x: Array) -> Any:
    """The ``wgpu.GPUBuffer`` that stores ``x`` (its own storage: no copy).

    Submits pyaccel's recorded work first (:func:`submit`), so your queue operations on the
    buffer see ``x``'s values. The elements occupy bytes ``[0, storage_nbytes(x))``; the
    buffer is never recycled by pyaccel while you hold it (see the module doc)."""
    if not isinstance(x, Array):
        raise TypeError(f"as_wgpu_buffer(x): x must be a pyaccel.Array, got {type(x).__name__}")
    dev = x.device
    _facade(dev, "as_wgpu_buffer")
    if x._strides is not None:
        raise ValueError("as_wgpu_buffer(x): x is a strided view into another array's buffer "
                         "(offset / strides); pass pyaccel.asarray(x, copy=True) to get an array "
                         "of its own")
    buf = x._buf
    h = buf.handle  # BufferFreedError after free()
    _export(buf)
    submit(dev)
    return h.buf


class _Exported(weakref.finalize):
    """The finalizer of a buffer the user may hold a wgpu reference to: it never pools."""


def _export(buf: Buffer) -> None:
    """Make ``buf``'s release drop the handle instead of pooling it (an exported buffer must
    never be handed to another array while the user may still hold it)."""
    fin = buf._finalizer
    if not fin.alive or isinstance(fin, _Exported):
        return
    detached = fin.detach()
    if detached is None:
        return
    _, _, (handle, _nbytes), _ = detached
    impl = buf.device.impl
    buf._finalizer = _Exported(buf, _release_exported, impl, handle)


def _release_exported(impl: Any, handle: Any) -> None:
    # the live-memory counters only: the wgpu buffer stays alive as long as anyone holds it
    # (wgpu-py releases it when its last reference goes); never pooled, never destroyed
    try:
        got = impl.lock.acquire(blocking=False)
        try:
            impl.stats["live_buffers"] -= 1
            impl.stats["live_bytes"] -= handle.size
        finally:
            if got:
                impl.lock.release()
    except Exception:  # interpreter shutdown
        pass


def from_wgpu_buffer(buffer: Any, shape: Any, dtype: Any, device: Any = None) -> Array:
    """A pyaccel Array over an existing ``wgpu.GPUBuffer`` (no copy; you keep owning it).

    ``buffer`` must belong to ``device``'s ``GPUDevice`` (:func:`wgpu_device`), be unmapped,
    have usage ``STORAGE | COPY_SRC | COPY_DST`` (more flags are fine: ``VERTEX``,
    ``UNIFORM``, ...) and hold at least ``prod(shape) * storage itemsize`` bytes, the
    elements in the device's storage layout from offset 0. Writes through either side are
    visible to the other, in queue order (call :func:`submit` before your queue work)."""
    import wgpu

    dev = as_device(device)
    f = _facade(dev, "from_wgpu_buffer")
    if not isinstance(buffer, wgpu.GPUBuffer):
        raise TypeError(f"from_wgpu_buffer: buffer must be a wgpu.GPUBuffer, got "
                        f"{type(buffer).__name__}")
    owner = getattr(buffer, "_device", None)  # (wgpu-py keeps the owning GPUDevice here)
    if owner is not None and owner is not f.device:
        raise ValueError(
            f"from_wgpu_buffer: the buffer belongs to another GPUDevice than {dev.uri}'s; create "
            "it with pyaccel.extras.wgpu.wgpu_device(device).create_buffer(...)")
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
        raise ValueError(f"from_wgpu_buffer: shape must be a tuple of ints >= 0, got {shape!r}")
    dt = check_dtype(dev, as_dtype(dtype), "from_wgpu_buffer")
    n = 1
    for s in shape:
        n *= s
    nbytes = n * dev.ops.layout(dt).itemsize
    usage = int(buffer.usage)
    missing = [u for u in REQUIRED_USAGE_NAMES if not usage & int(getattr(wgpu.BufferUsage, u))]
    if missing:
        raise ValueError(
            f"from_wgpu_buffer: the buffer's usage lacks {' | '.join(missing)}; pyaccel binds it "
            "as storage and copies from/to it. Create it with usage=wgpu.BufferUsage.STORAGE | "
            "wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST (plus your own flags)")
    if buffer.size < nbytes:
        raise ValueError(
            f"from_wgpu_buffer: shape {shape} of {dt.name} needs {nbytes} bytes on {dev.uri}, "
            f"the buffer has {buffer.size}; pass a smaller shape or a larger buffer")
    limit = dev.limits.max_storage_binding_size
    if nbytes > limit:
        raise ValueError(
            f"from_wgpu_buffer: {nbytes} bytes is above {dev.uri}'s max_storage_binding_size "
            f"({limit}); a kernel could not bind it. Split the data over several buffers")
    if str(buffer.map_state) != "unmapped":
        raise ValueError(f"from_wgpu_buffer: the buffer is {buffer.map_state}; unmap() it first")
    from ..runtime.webgpu_common import GPUBuffer

    handle = GPUBuffer(buffer, int(buffer.size))
    buf = Buffer(dev, handle, nbytes)
    buf._finalizer.detach()  # the user owns it: never pooled or destroyed by pyaccel
    buf._finalizer = _Exported(buf, _noop)
    return Array._new(buf, shape, dt, dev)


def _noop() -> None:
    pass
