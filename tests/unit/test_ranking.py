"""pyaccel.ranking: the public default-device order (moved out of registry privates)."""

from __future__ import annotations

from pyaccel.device import DeviceDescriptor
from pyaccel.ranking import adapter_rank, api_rank, device_rank, rank_devices


def d(uri: str, adapter: str, api: str | None = None, backend: str = "b") -> DeviceDescriptor:
    api = api or uri.split(":")[0]
    return DeviceDescriptor(uri=uri, name=uri, vendor="v", api=api, adapter_type=adapter, backend=backend)


def test_adapter_rank_order() -> None:
    ranks = [adapter_rank(d("vulkan:0", "discrete")), adapter_rank(d("vulkan:1", "integrated")),
             adapter_rank(d("vulkan:2", "virtual")), adapter_rank(d("cpu:0", "cpu")),
             adapter_rank(d("vulkan:3", "cpu"))]
    assert ranks == [0, 1, 2, 3, 4]


def test_api_rank_gl_after_native_apis_unknown_last() -> None:
    assert [api_rank(d(f"{a}:0", "discrete")) for a in ("vulkan", "metal", "dx12", "webgpu", "gl", "zzz")] \
        == [0, 0, 0, 0, 1, 2]


def test_rank_devices_stable_and_uses_priority() -> None:
    devs = [d("vulkan:0", "cpu"), d("gl:0", "discrete"), d("cpu:0", "cpu"), d("vulkan:1", "discrete"),
            d("metal:0", "discrete", backend="hi")]
    order = [x.uri for x in rank_devices(devs, {"hi": 5})]
    # discrete first (higher backend priority, then Vulkan before GL), then NumPy, then software
    assert order == ["metal:0", "vulkan:1", "gl:0", "cpu:0", "vulkan:0"]
    assert device_rank(devs[1]) == (0, 0, 1)


def test_registry_uses_public_ranking() -> None:
    import pyaccel.registry as reg

    assert reg.device_rank is device_rank
    assert not hasattr(reg, "_adapter_rank") and not hasattr(reg, "_API_RANK")
