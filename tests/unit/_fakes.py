"""Fake backends and a fake device impl for registry/device unit tests (no GPU, no NumPy)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyaccel.capabilities import Capability, Limits
from pyaccel.device import Device, DeviceDescriptor
from pyaccel.errors import DeviceNotFoundError
from pyaccel.registry import BackendEntry
from pyaccel.uri import DeviceURI

FAKE_LIMITS = Limits(max_buffer_size=1 << 20, max_storage_binding_size=1 << 19)


class FakeImpl:
    """A DeviceImpl over bytearrays; capabilities and limits are whatever a test says."""

    def __init__(self, capabilities: Capability = Capability.NONE, limits: Limits = FAKE_LIMITS) -> None:
        self.capabilities = capabilities
        self.limits = limits
        self.runtime_version = "fake-runtime 1.2.3"
        self.stats = {"buffers_created": 0, "live_buffers": 0, "live_bytes": 0}

    def alloc(self, nbytes: int) -> bytearray:
        self.stats["buffers_created"] += 1
        self.stats["live_buffers"] += 1
        self.stats["live_bytes"] += nbytes
        return bytearray(max(nbytes, 1))

    def release(self, handle: Any, nbytes: int) -> None:
        self.stats["live_buffers"] -= 1
        self.stats["live_bytes"] -= nbytes

    def write(self, handle: bytearray, offset: int, data: memoryview) -> None:
        handle[offset: offset + data.nbytes] = data

    def read(self, handle: bytearray, offset: int, nbytes: int, out: Any = None,
             timeout: float | None = None) -> bytes:
        return bytes(handle[offset: offset + nbytes])

    async def read_async(self, handle: bytearray, offset: int, nbytes: int, out: Any = None) -> bytes:
        return self.read(handle, offset, nbytes)

    def copy(self, src: bytearray, so: int, dst: bytearray, do: int, n: int) -> None:
        dst[do: do + n] = src[so: so + n]

    def synchronize(self, timeout: float | None = None) -> None:
        pass

    async def synchronize_async(self) -> None:
        pass

    def memory_stats(self) -> dict[str, int]:
        return dict(self.stats)

    def info_lines(self) -> list[str]:
        return ["  fake line       : from the impl"]


def desc(uri: str, adapter_type: str, backend: str, *, name: str | None = None) -> DeviceDescriptor:
    api = uri.split(":")[0]
    return DeviceDescriptor(uri=uri, name=name or f"Fake {adapter_type} {uri}", vendor="FakeVendor",
                            api=api, adapter_type=adapter_type, backend=backend, vendor_id=0x1234,
                            device_id=0x5678, driver="fakedrv 9", arch="fakearch")


class FakeBackend:
    """A backend with fixed descriptors; ``opened`` counts open() calls per URI."""

    version = "fake 1.0"

    def __init__(self, name: str, schemes: Sequence[str], descs: Sequence[DeviceDescriptor],
                 capabilities: Capability = Capability.NONE) -> None:
        self.name = name
        self.schemes = tuple(schemes)
        self._descs = list(descs)
        self.capabilities = capabilities
        self.opened: dict[str, int] = {}

    def devices(self) -> list[DeviceDescriptor]:
        return list(self._descs)

    def resolve(self, uri: DeviceURI) -> DeviceDescriptor:
        pool = [d for d in self._descs if d.api == uri.scheme]
        i = uri.ordinal or 0
        if uri.path is not None or i >= len(pool):
            raise DeviceNotFoundError(
                f"no device {str(uri)!r} in fake backend {self.name!r}; it has "
                f"{', '.join(d.uri for d in pool) or 'none'}"
            )
        return pool[i]

    def open(self, d: DeviceDescriptor) -> Device:
        self.opened[d.uri] = self.opened.get(d.uri, 0) + 1
        return Device(d, FakeImpl(self.capabilities))


def entry(name: str, backend_or_factory: Any, *, priority: int = 150, schemes: Sequence[str] = (),
          fix: str = "") -> BackendEntry:
    """A BackendEntry whose factory returns ``backend_or_factory`` (or calls it if it is a function)."""
    if isinstance(backend_or_factory, FakeBackend):
        b = backend_or_factory
        factory = lambda: b  # noqa: E731
        schemes = schemes or b.schemes
    else:
        factory = backend_or_factory
    return BackendEntry(name, factory, priority, tuple(schemes or (name,)), f"fake {name}", fix)


def broken_factory() -> Any:
    raise RuntimeError("driver exploded: fake failure")
