"""NumPy on the host: the fallback device ``cpu:0`` and the oracle.

Buffers are NumPy byte arrays; custom kernels run their NumPy ``reference``.
"""

from __future__ import annotations

import platform
from typing import Any

from .._hints import numpy_fix
from ..capabilities import CPU_LIMITS, Capability
from ..device import Device, DeviceDescriptor
from ..errors import BackendUnavailableError, DeviceLostError, DeviceNotFoundError
from ..uri import DeviceURI


class CpuDeviceImpl:
    """DeviceImpl over NumPy arrays (host memory; nothing is queued)."""

    capabilities = (Capability.FLOAT64 | Capability.INT64 | Capability.F16 | Capability.COMPLEX
                    | Capability.UNIFIED_MEMORY | Capability.DATA_DEPENDENT_SHAPES
                    | Capability.KERNELS_RUN_REFERENCE)
    limits = CPU_LIMITS

    def __init__(self, np: Any) -> None:
        self.np = np
        self.runtime_version = f"numpy {np.__version__}"
        self.stats = {"buffers_created": 0, "live_buffers": 0, "live_bytes": 0}
        self.is_lost = False  # True once closed (Device.close())

    def close(self) -> None:
        """Device.close(): later allocations raise DeviceLostError (host data stays readable
        until collected: NumPy memory needs no release)."""
        self.is_lost = True

    def alloc(self, nbytes: int) -> Any:
        if self.is_lost:
            raise DeviceLostError("the cpu device was closed (Device.close()); open it again "
                                  "with pyaccel.device('cpu') and create the data there")
        self.stats["buffers_created"] += 1
        self.stats["live_buffers"] += 1
        self.stats["live_bytes"] += nbytes
        return self.np.empty(max(nbytes, 1), dtype=self.np.uint8)

    def release(self, handle: Any, nbytes: int) -> None:
        self.stats["live_buffers"] -= 1
        self.stats["live_bytes"] -= nbytes

    def write(self, handle: Any, offset: int, data: memoryview) -> None:
        handle[offset: offset + data.nbytes] = self.np.frombuffer(data, dtype=self.np.uint8)

    def read(self, handle: Any, offset: int, nbytes: int, out: memoryview | None = None,
             timeout: float | None = None) -> Any:
        # (``timeout``: NumPy ops finish before they return, so a read never waits)
        if out is not None:
            self.np.frombuffer(out, dtype=self.np.uint8)[:] = handle[offset: offset + nbytes]
            return out
        return handle[offset: offset + nbytes].tobytes()

    async def read_async(self, handle: Any, offset: int, nbytes: int, out: memoryview | None = None) -> Any:
        return self.read(handle, offset, nbytes, out)

    def copy(self, src: Any, src_offset: int, dst: Any, dst_offset: int, nbytes: int) -> None:
        dst[dst_offset: dst_offset + nbytes] = src[src_offset: src_offset + nbytes]

    def synchronize(self, timeout: float | None = None) -> None:
        pass  # nothing is ever queued on the cpu device

    async def synchronize_async(self) -> None:
        pass

    def memory_stats(self) -> dict[str, int]:
        return dict(self.stats)

    def make_ops(self, device: Device) -> Any:
        """The NumPy op provider of ``device`` (``pyaccel.ops.provider.OpProvider``)."""
        from .numpy_ops import NumpyOps

        return NumpyOps(device, self.np)

    def info_lines(self) -> list[str]:
        try:
            cfg = self.np.show_config(mode="dicts")
            blas = cfg.get("Build Dependencies", {}).get("blas", {})
            return [f"  blas            : {blas.get('name', '?')} {blas.get('version', '')}".rstrip()]
        except Exception:
            return []


class CpuBackend:
    """Registry backend for NumPy (one device, ``cpu:0``)."""

    name = "cpu"
    schemes = ("cpu", "numpy")

    def __init__(self) -> None:
        try:
            import numpy as np
        except ImportError as exc:
            raise BackendUnavailableError(
                f"numpy is not importable ({exc}); fix: {numpy_fix()}") from exc
        self.np = np
        self.version = f"numpy {np.__version__}"
        machine = platform.machine() or "unknown"
        self._desc = DeviceDescriptor(
            uri="cpu:0", name=f"NumPy on {platform.processor() or machine}", vendor="numpy",
            api="cpu", adapter_type="cpu", backend=self.name, driver=self.version, arch=machine,
        )

    def devices(self) -> list[DeviceDescriptor]:
        return [self._desc]

    def resolve(self, uri: DeviceURI) -> DeviceDescriptor:
        if uri.path is not None or (uri.ordinal or 0) != 0:
            raise DeviceNotFoundError(
                f"no device {str(uri)!r}: the cpu backend has exactly one device, 'cpu:0' "
                "(also 'cpu'); it takes no path or other ordinal"
            )
        return self._desc

    def open(self, desc: DeviceDescriptor) -> Device:
        return Device(desc, CpuDeviceImpl(self.np))
