"""Device, DeviceDescriptor and Buffer: what a user holds once a device is open.

A :class:`Device` is backend-neutral. All backend work goes through its
``impl`` (a :class:`DeviceImpl`): ``runtime/cpu.py`` implements it over NumPy,
``runtime/webgpu_common.py`` over the WebGPU facade that the wgpu-py and the
browser backends provide. Array ops go through ``device.ops``, the op provider the impl
makes (``impl.make_ops(device)``; see ``pyaccel/ops/provider.py``).

Thread model: any number of threads (and asyncio tasks) may share one device. Each open
device has one re-entrant lock, ``device.impl.lock`` (``Device._lock`` is the same object),
taken once at each entry: ``Device`` / ``Buffer`` methods, each public op of the op layer,
``Kernel`` calls. The impl's allocation and recording methods (``alloc``, and the
:class:`GPUImpl` members ``alloc_output``, ``pipeline``, ``uniform``, ``dispatch*``) assume
the caller holds it; nested helpers inside an op check ``lock._is_owned()`` instead of taking
it again (``tests/backends/test_device_lock.py``: 1 acquisition per ``x + y``, ``sum``,
``x[1:3] = y``, ``matmul``). It is never held across an ``await``.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ._lru import LRU
from .capabilities import Capability, Limits
from .errors import BufferFreedError, OutOfDeviceMemoryError
from .uri import DeviceURI

if TYPE_CHECKING:  # typing only: the op layer sits above the device layer
    from .ops.provider import OpProvider

ADAPTER_TYPES = ("discrete", "integrated", "cpu", "virtual", "unknown")


@dataclass(frozen=True)
class DeviceDescriptor:
    """What a backend knows of a device before it is opened (cheap to list)."""

    uri: str
    name: str
    vendor: str
    api: str  # vulkan / metal / dx12 / gl / webgpu / cpu
    adapter_type: str  # discrete / integrated / cpu / virtual / unknown
    backend: str  # registry name of the backend that owns it
    vendor_id: int = 0
    device_id: int = 0
    driver: str = ""
    arch: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def is_software(self) -> bool:
        """True for a CPU implementation of a GPU API (lavapipe, llvmpipe, SwiftShader)."""
        return self.adapter_type == "cpu" and self.api != "cpu"


class DeviceImpl(Protocol):
    """The small protocol a backend implements for an open device."""

    capabilities: Capability
    limits: Limits
    runtime_version: str
    lock: Any  # a threading.RLock (added by Device when the impl has none)

    def alloc(self, nbytes: int) -> Any: ...
    def release(self, handle: Any, nbytes: int) -> None: ...
    def write(self, handle: Any, offset: int, data: memoryview) -> None: ...
    def read(self, handle: Any, offset: int, nbytes: int, out: memoryview | None = None,
             timeout: float | None = None) -> Any: ...
    async def read_async(self, handle: Any, offset: int, nbytes: int) -> bytes: ...
    def copy(self, src: Any, src_offset: int, dst: Any, dst_offset: int, nbytes: int) -> None: ...
    def synchronize(self, timeout: float | None = None) -> None: ...
    async def synchronize_async(self) -> None: ...
    def memory_stats(self) -> dict[str, int]: ...
    def info_lines(self) -> list[str]: ...
    def make_ops(self, device: Device) -> Any: ...
    # optional: ``close()`` (Device.close) and ``is_lost`` (True once lost or closed)


@runtime_checkable
class GPUImpl(DeviceImpl, Protocol):
    """What the GPU op layer (``pyaccel.ops``) and :class:`pyaccel.Kernel` use of a GPU
    device impl beyond :class:`DeviceImpl`: compiled pipelines, small uniform blocks and
    recorded dispatches. Every WebGPU impl (native wgpu-py, the browser, plugin backends
    built on ``GPUDeviceImpl``) provides it; ``tests/unit/test_gpu_contract.py`` checks the
    impls against it and that ``pyaccel.ops`` calls nothing else on an impl. The caller holds
    :attr:`DeviceImpl.lock` around every call of these (the op takes it once, at its entry)."""

    def alloc_output(self, nbytes: int) -> Any: ...
    def pipeline(self, wgsl: str, entry: str, constants: dict[str, float] | None = None,
                 name: str = "") -> Any: ...
    def uniform(self, data: bytes) -> Any: ...
    def dispatch(self, pipeline: Any, entries: list[tuple[int, Any, int, int]],
                 workgroups: tuple[int, int, int]) -> Any: ...
    def dispatch_bound(self, pipeline: Any, key: int, binds: tuple[tuple[int, int], ...],
                       handles: tuple[Any, ...], workgroups: tuple[int, int, int]) -> None: ...
    def dispatch_group(self, pipeline: Any, group: Any, handles: tuple[Any, ...],
                       workgroups: tuple[int, int, int]) -> None: ...
    def flush(self) -> None: ...


class Device:
    """An open device. Obtain with ``pyaccel.device(uri)``; one object per device per process."""

    def __init__(self, descriptor: DeviceDescriptor, impl: DeviceImpl) -> None:
        self.descriptor = descriptor
        self.impl = impl
        lock = getattr(impl, "lock", None)
        if lock is None:
            lock = threading.RLock()
            try:
                impl.lock = lock
            except AttributeError:  # an impl with __slots__: the Device keeps the lock
                pass
        self._lock = lock
        self._memos: dict[str, LRU] = {}

    def memo(self, name: str, maxsize: int) -> LRU:
        """This device's bounded cache ``name`` (the op layer's launch plans and op memos):
        it lives and dies with the device, so no module-level cache keeps a closed or lost
        device alive, and its size limit keeps memory flat."""
        m = self._memos.get(name)
        if m is None:
            m = self._memos[name] = LRU(maxsize)
        return m

    def close(self) -> None:
        """Release the device now instead of at exit: queued work finishes, pooled buffers,
        compiled pipelines and caches are freed, and the runtime's device is destroyed.
        Afterwards the device (and its arrays) raise DeviceLostError, and
        ``pyaccel.device(uri)`` opens a fresh device. Closing twice is a no-op."""
        with self._lock:
            close = getattr(self.impl, "close", None)
            if close is not None:
                close()
            self._memos.clear()
            self.__dict__.pop("ops", None)  # the provider and its caches go with it

    # -- identity ---------------------------------------------------------
    @property
    def uri(self) -> str:
        """Canonical URI, e.g. ``'vulkan:0'``."""
        return self.descriptor.uri

    @property
    def backend(self) -> str:
        return self.descriptor.backend

    @property
    def api(self) -> str:
        return self.descriptor.api

    @property
    def name(self) -> str:
        return self.descriptor.name

    @property
    def arch(self) -> str:
        """Architecture string (vendor-specific; e.g. ``'swiftshader'``, ``'x86_64'``)."""
        return self.descriptor.arch

    @property
    def runtime_version(self) -> str:
        """Version of the runtime behind the device (wgpu-native, browser, NumPy)."""
        return self.impl.runtime_version

    @property
    def capabilities(self) -> Capability:
        return self.impl.capabilities

    @property
    def limits(self) -> Limits:
        return self.impl.limits

    @functools.cached_property
    def ops(self) -> OpProvider:
        """The device's op provider (``pyaccel.ops.provider.OpProvider``), made once by
        ``impl.make_ops(self)``: what the array namespace functions execute on. (Cached in
        the instance: later reads are a plain attribute lookup, on the hot path.)"""
        return self.impl.make_ops(self)

    @property
    def is_cpu(self) -> bool:
        return self.descriptor.api == "cpu"

    @property
    def is_lost(self) -> bool:
        """True once the device is lost (every call then raises DeviceLostError);
        ``pyaccel.device(uri)`` then opens a fresh device."""
        return bool(getattr(self.impl, "is_lost", False))

    def __repr__(self) -> str:
        return f"<pyaccel.Device {self.uri} {self.name!r}>"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                return DeviceURI.parse(other) == DeviceURI.parse(self.uri)
            except Exception:
                return False
        return self is other

    __hash__ = object.__hash__

    def __reduce__(self) -> tuple:
        """A Device pickles as its URI; unpickling opens that URI in the receiving process,
        or its current device when the URI does not exist there (docs/interop.md)."""
        from . import _pickle

        return (_pickle.rebuild_device, (self.uri,))

    # -- memory -----------------------------------------------------------
    def malloc(self, nbytes: int) -> Buffer:
        """Allocate ``nbytes`` of device memory (contents undefined). Freed by ``free()`` or GC."""
        if isinstance(nbytes, bool) or not isinstance(nbytes, int):
            raise TypeError(f"malloc(nbytes): nbytes must be an int, got {type(nbytes).__name__} {nbytes!r}")
        if nbytes < 0:
            raise ValueError(f"malloc(nbytes): nbytes must be >= 0, got {nbytes}")
        limit = min(self.limits.max_buffer_size, self.limits.max_storage_binding_size)
        if nbytes > limit:
            raise OutOfDeviceMemoryError(
                f"malloc({nbytes}) on {self.uri}: above the device limit of {limit} bytes "
                f"(max_buffer_size={self.limits.max_buffer_size}, "
                f"max_storage_binding_size={self.limits.max_storage_binding_size}); "
                "split the data into smaller buffers"
            )
        lock = self._lock
        if lock._is_owned():  # (an op in progress holds it)
            return Buffer(self, self.impl.alloc(nbytes), nbytes)
        with lock:
            handle = self.impl.alloc(nbytes)
        return Buffer(self, handle, nbytes)

    def memory_stats(self) -> dict[str, int]:
        """Allocator counters: live/pooled bytes and buffers, buffers created so far."""
        return self.impl.memory_stats()

    # -- sync ---------------------------------------------------------------
    def synchronize(self, timeout: float | None = None) -> None:
        """Submit queued work and wait until the device is idle.

        The wait is interruptible (Ctrl-C). With ``timeout`` (seconds) it raises
        :class:`~pyaccel.errors.DeviceTimeoutError` when the device is still busy then;
        the work keeps running and the device stays usable.
        """
        if timeout is not None:
            _check_timeout(timeout, "synchronize")
        with self._lock:
            self.impl.synchronize(timeout=timeout)

    async def synchronize_async(self) -> None:
        """Async twin of :meth:`synchronize` (works natively under asyncio and in the browser)."""
        await self.impl.synchronize_async()

    # -- report -----------------------------------------------------------
    def info(self) -> str:
        """A multi-line report: adapter, driver, API, capabilities, limits, memory."""
        d = self.descriptor
        lines = [
            f"Device {d.uri}",
            f"  name            : {d.name}",
            f"  vendor          : {d.vendor} (vendor_id=0x{d.vendor_id:04x}, device_id=0x{d.device_id:04x})",
            f"  api             : {d.api}",
            f"  adapter type    : {d.adapter_type}{' (software)' if d.is_software else ''}",
            f"  backend         : {d.backend}",
            f"  driver          : {d.driver or 'unknown'}",
            f"  arch            : {d.arch or 'unknown'}",
            f"  runtime         : {self.runtime_version}",
            f"  capabilities    : {', '.join(self.capabilities.names()) or 'none'}",
        ]
        lines.extend(self.impl.info_lines())
        lines.append("  limits:")
        for k, v in self.limits.as_dict().items():
            lines.append(f"    {k:32s}: {_fmt_limit(v)}")
        stats = self.memory_stats()
        lines.append("  memory (pyaccel allocator):")
        for k, v in stats.items():
            lines.append(f"    {k:32s}: {v}")
        return "\n".join(lines)


def _fmt_limit(v: int) -> str:
    if v >= 2**40:
        return "unbounded"
    if v >= 2**20 and v % 2**20 == 0:
        return f"{v} ({v // 2**20} MiB)"
    return str(v)


class Buffer:
    """A block of device memory. ``free()`` returns it to the device's pool."""

    __slots__ = ("device", "nbytes", "_handle", "_finalizer", "__weakref__")

    def __init__(self, device: Device, handle: Any, nbytes: int) -> None:
        self.device = device
        self.nbytes = nbytes
        self._handle = handle
        self._finalizer = weakref.finalize(self, device.impl.release, handle, nbytes)

    def __repr__(self) -> str:
        state = "freed" if self._handle is None else f"{self.nbytes} bytes"
        return f"<pyaccel.Buffer {state} on {self.device.uri}>"

    def __reduce__(self) -> tuple:
        raise TypeError(
            f"a pyaccel.Buffer ({self.nbytes} bytes on {self.device.uri}) is raw device memory of "
            "this process and cannot be pickled; pickle an Array over it, or its bytes "
            "(buffer.read())"
        )

    @property
    def freed(self) -> bool:
        return self._handle is None

    @property
    def handle(self) -> Any:
        """The backend object (raises :class:`BufferFreedError` after ``free()``)."""
        if self._handle is None:
            raise BufferFreedError(
                f"buffer of {self.nbytes} bytes on {self.device.uri} was freed; "
                "allocate a new one with device.malloc(nbytes)"
            )
        return self._handle

    def free(self) -> None:
        """Return the memory to the device pool; later use raises BufferFreedError. Idempotent."""
        if self._handle is not None:
            self._handle = None
            with self.device._lock:
                self._finalizer()

    def _check_range(self, what: str, offset: int, nbytes: int) -> None:
        for name, v in (("offset", offset), ("nbytes", nbytes)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"Buffer.{what}: {name} must be an int >= 0, got {v!r}")
        if offset + nbytes > self.nbytes:
            raise ValueError(
                f"Buffer.{what}: range [{offset}, {offset + nbytes}) is outside the buffer of "
                f"{self.nbytes} bytes; use a smaller offset/size or a larger buffer"
            )

    def write(self, data: Any, offset: int = 0) -> None:
        """Copy bytes-like ``data`` (bytes, memoryview, array.array, NumPy array) into the buffer."""
        handle = self.handle
        mv = as_bytes_view(data, "Buffer.write(data)")
        self._check_range("write", offset, mv.nbytes)
        if mv.nbytes:
            with self.device._lock:
                self.device.impl.write(handle, offset, mv)

    def read(self, nbytes: int | None = None, offset: int = 0, *, timeout: float | None = None) -> bytes:
        """Read ``nbytes`` (default: the rest of the buffer) starting at ``offset``.

        Waits for the queued work that writes it (interruptible); with ``timeout`` (seconds)
        raises :class:`~pyaccel.errors.DeviceTimeoutError` when it is not done by then.
        """
        if timeout is not None:
            _check_timeout(timeout, "Buffer.read")
        handle = self.handle
        if nbytes is None:
            nbytes = self.nbytes - offset if isinstance(offset, int) else 0
        self._check_range("read", offset, nbytes)
        if nbytes == 0:
            return b""
        with self.device._lock:
            return self.device.impl.read(handle, offset, nbytes, timeout=timeout)

    async def read_async(self, nbytes: int | None = None, offset: int = 0) -> bytes:
        """Async twin of :meth:`read`."""
        handle = self.handle
        if nbytes is None:
            nbytes = self.nbytes - offset if isinstance(offset, int) else 0
        self._check_range("read_async", offset, nbytes)
        if nbytes == 0:
            return b""
        return await self.device.impl.read_async(handle, offset, nbytes)

    def copy_from(self, src: Buffer, nbytes: int | None = None, src_offset: int = 0, offset: int = 0) -> None:
        """Device-side copy of ``nbytes`` from ``src`` (same device) into this buffer."""
        if src.device is not self.device:
            raise ValueError(
                f"copy_from: source buffer is on {src.device.uri}, destination on {self.device.uri}; "
                "read it to the host first"
            )
        if nbytes is None:
            nbytes = min(src.nbytes - src_offset, self.nbytes - offset)
        src._check_range("copy_from(src)", src_offset, nbytes)
        self._check_range("copy_from", offset, nbytes)
        if nbytes:
            with self.device._lock:
                self.device.impl.copy(src.handle, src_offset, self.handle, offset, nbytes)


def _check_timeout(timeout: Any, what: str) -> None:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout >= 0:
        raise ValueError(f"{what}(timeout=...): timeout must be a number of seconds >= 0 or None, "
                         f"got {timeout!r}")


def as_bytes_view(data: Any, what: str) -> memoryview:
    """A flat, C-contiguous byte view of a bytes-like object (no copy when possible)."""
    if isinstance(data, Buffer):
        raise TypeError(f"{what}: got a Buffer; use dst.copy_from(src) for device-to-device copies")
    try:
        mv = memoryview(data)
    except TypeError:
        raise TypeError(
            f"{what}: expected a bytes-like object (bytes, bytearray, memoryview, array.array, "
            f"NumPy array), got {type(data).__name__}"
        ) from None
    if not mv.c_contiguous:
        try:
            import numpy as np

            mv = memoryview(np.ascontiguousarray(data))
        except ImportError:
            mv = memoryview(mv.tobytes())
    if mv.format == "B" and mv.ndim == 1:
        return mv
    try:
        return mv.cast("B")
    except TypeError:  # formats memoryview cannot cast (structured dtypes, 0-d)
        return memoryview(mv.tobytes())
