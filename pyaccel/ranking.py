"""Device ranking: which device ``pyaccel.device()`` picks when no URI is given.

Devices sort by :func:`device_rank` (lower is better):

1. the adapter rank (:func:`adapter_rank`): discrete GPU 0, integrated 1, virtual or
   unknown GPU 2, the NumPy ``cpu`` device 3, software GPU adapters (lavapipe, llvmpipe,
   SwiftShader) 4, so a software rasterizer is never picked over NumPy by default but
   stays selectable by URI;
2. (in the registry) the backend priority, higher first;
3. the API rank (:data:`API_RANK`): Vulkan / Metal / DX12 / WebGPU 0 before GL 1, any
   other API 2;
4. enumeration order.

The ``wgpu`` URI scheme (``wgpu:N`` = the N-th best native adapter) uses the same order.
"""

from __future__ import annotations

from .device import DeviceDescriptor

API_RANK: dict[str, int] = {"vulkan": 0, "metal": 0, "dx12": 0, "webgpu": 0, "gl": 1}
ADAPTER_RANK: dict[str, int] = {"discrete": 0, "integrated": 1}


def adapter_rank(desc: DeviceDescriptor) -> int:
    """0 discrete, 1 integrated, 2 other GPU, 3 NumPy cpu, 4 software GPU adapter."""
    if desc.api == "cpu":
        return 3
    if desc.is_software:
        return 4
    return ADAPTER_RANK.get(desc.adapter_type, 2)


def api_rank(desc: DeviceDescriptor) -> int:
    """0 for Vulkan/Metal/DX12/WebGPU, 1 for GL, 2 for any other API."""
    return API_RANK.get(desc.api, 2)


def device_rank(desc: DeviceDescriptor, backend_priority: int = 0) -> tuple[int, int, int]:
    """Sort key of one device (lower is better): (adapter rank, -backend priority, API rank)."""
    return (adapter_rank(desc), -backend_priority, api_rank(desc))


def rank_devices(descs: list[DeviceDescriptor], priorities: dict[str, int] | None = None) -> list[DeviceDescriptor]:
    """``descs`` best first; ``priorities`` maps a backend name to its priority (default 0).
    The sort is stable: equal devices keep their enumeration order."""
    prio = priorities or {}
    return sorted(descs, key=lambda d: device_rank(d, prio.get(d.backend, 0)))


__all__ = ["ADAPTER_RANK", "API_RANK", "adapter_rank", "api_rank", "device_rank", "rank_devices"]
