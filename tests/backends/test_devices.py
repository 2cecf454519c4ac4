"""Real devices here (cpu:0, vulkan:0, gl:0): identity, URI errors, info(), memory round trips."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pyaccel
from pyaccel import Capability
from pyaccel.errors import (
    BufferFreedError,
    DeviceNotFoundError,
    InvalidDeviceURIError,
    OutOfDeviceMemoryError,
)


def _uris() -> list[str]:
    return [d.uri for d in pyaccel.devices()]


def needs(uri: str):
    return pytest.mark.skipif(uri not in _uris(), reason=f"{uri} is not available here")


def test_backends_listing_never_raises_and_names_reasons() -> None:
    infos = {b.name: b for b in pyaccel.backends()}
    assert {"webgpu", "wgpu", "cpu"} <= set(infos)
    web = infos["webgpu"]
    assert not web.available and web.devices == ()
    assert "not running in a browser (Pyodide)" in web.reason
    assert infos["cpu"].available and infos["cpu"].devices == ("cpu:0",)
    assert infos["cpu"].version.startswith("numpy ")
    for b in infos.values():
        assert b.available == (b.reason == "")


def test_webgpu_device_is_not_found_with_the_reason() -> None:
    with pytest.raises(DeviceNotFoundError) as ei:
        pyaccel.device("webgpu:0")
    assert "'webgpu:0'" in str(ei.value) and "not running in a browser (Pyodide)" in str(ei.value)


@needs("vulkan:0")
def test_same_uri_same_device_object() -> None:
    d = pyaccel.device("vulkan:0")
    assert pyaccel.device("vulkan") is d
    assert pyaccel.device("VULKAN:0") is d
    assert pyaccel.device(" Vulkan:0 ") is d
    assert pyaccel.device(pyaccel.DeviceURI("vulkan", 0)) is d
    assert pyaccel.device(d) is d
    assert pyaccel.backend("wgpu") is pyaccel.backend("wgpu")
    assert pyaccel.device("cpu") is pyaccel.device("cpu:0") is pyaccel.device("numpy:0")
    # "wgpu" is the best native adapter (here a software one, so it is not the default)
    assert pyaccel.device("wgpu:0").uri in ("vulkan:0", "gl:0")


@pytest.mark.parametrize("bad, exc, fragments", [
    ("", InvalidDeviceURIError, ["''"]),
    ("  ", InvalidDeviceURIError, ["'  '"]),
    ("vulkan:-1", InvalidDeviceURIError, ["'vulkan:-1'"]),
    ("vulkan:abc", InvalidDeviceURIError, ["'vulkan:abc'"]),
    ("vulkan:0:1", InvalidDeviceURIError, ["'vulkan:0:1'"]),
    (3, InvalidDeviceURIError, ["int 3"]),
    (b"cpu", InvalidDeviceURIError, ["b'cpu'"]),
    ("vulkan:99", DeviceNotFoundError, ["'vulkan:99'", "vulkan:0", "pyaccel devices"]),
    ("gl:5", DeviceNotFoundError, ["'gl:5'", "gl:0"]),
    ("cpu://nope", DeviceNotFoundError, ["'cpu://nope'", "exactly one device, 'cpu:0'"]),
    ("cpu:1", DeviceNotFoundError, ["'cpu:1'"]),
    ("vulkan://fast", DeviceNotFoundError, ["'vulkan://fast'", "takes an ordinal"]),
    ("cuda:0", DeviceNotFoundError, ["'cuda'", "known schemes", "available devices here", "cpu:0"]),
])
def test_bad_device_uris(bad: object, exc: type, fragments: list[str]) -> None:
    with pytest.raises(exc) as ei:
        pyaccel.device(bad)
    msg = str(ei.value)
    for f in fragments:
        assert f in msg, (f, msg)
    # both error types are also the builtin a caller would catch
    assert isinstance(ei.value, ValueError if exc is InvalidDeviceURIError else LookupError)
    # the registry still works afterwards
    assert pyaccel.device("cpu:0").uri == "cpu:0"


def test_cuda_error_lists_available_devices() -> None:
    with pytest.raises(DeviceNotFoundError) as ei:
        pyaccel.device("cuda:0")
    for uri in _uris():
        assert uri in str(ei.value)


def test_none_means_current_device_not_an_error() -> None:
    assert pyaccel.device(None) is pyaccel.get_device()
    with pytest.raises(InvalidDeviceURIError, match="NoneType None"):
        pyaccel.parse_uri(None)


def test_default_prefers_cpu_over_software_adapters() -> None:
    if os.environ.get("PYACCEL_DEVICE"):
        pytest.skip("PYACCEL_DEVICE is set")
    descs = pyaccel.devices()
    if any(not d.is_software and d.api != "cpu" for d in descs):
        pytest.skip("a real GPU is present: it is the default")
    assert descs[0].uri == "cpu:0"
    assert all(d.is_software for d in descs[1:])
    assert pyaccel.default_device_uri() in ("cpu:0", pyaccel.get_device().uri)


@needs("vulkan:0")
def test_vulkan_info_content() -> None:
    d = pyaccel.device("vulkan:0")
    text = d.info()
    assert text.splitlines()[0] == "Device vulkan:0"
    assert f"name            : {d.name}" in text and d.name
    assert "api             : vulkan" in text
    assert "backend         : wgpu" in text
    assert "runtime         : wgpu-py 0.32.0" in text
    assert "limits:" in text and "max_storage_binding_size" in text
    assert "max_workgroups_per_dimension" in text and "memory (pyaccel allocator):" in text
    assert "features        :" in text
    if d.descriptor.is_software:
        assert "adapter type    : cpu (software)" in text
        assert Capability.SOFTWARE in d.capabilities and Capability.UNIFIED_MEMORY in d.capabilities
    # no f64 in WGSL: float64/int64 are emulated over u32 words (step 7), and say so
    assert Capability.FLOAT64 in d.capabilities and Capability.EMULATED_64 in d.capabilities
    assert "emulated_64" in text
    assert d.limits.max_workgroups_per_dimension >= 65535


def test_cpu_info_and_capabilities() -> None:
    d = pyaccel.device("cpu:0")
    assert d.is_cpu and d.api == "cpu"
    caps = d.capabilities
    for c in (Capability.FLOAT64, Capability.INT64, Capability.KERNELS_RUN_REFERENCE):
        assert c in caps
    assert "numpy" in d.info() and "api             : cpu" in d.info()


def test_each_device_info_names_its_adapter(device) -> None:
    text = device.info()
    assert device.uri in text and device.name in text and f"api             : {device.api}" in text


# -- memory -----------------------------------------------------------------------------
def test_malloc_round_trip_random_bytes(device) -> None:
    for n in (1, 3, 4, 255, 4096, 100_003):
        data = os.urandom(n)
        b = device.malloc(n)
        b.write(data)
        assert b.read() == data, n
        b.free()


@given(data=st.data())
def test_partial_writes_and_reads(device, data) -> None:
    n = data.draw(st.integers(1, 600), label="nbytes")
    off = data.draw(st.integers(0, n - 1), label="offset")
    k = data.draw(st.integers(0, n - off), label="length")
    base = os.urandom(n)
    patch = os.urandom(k)
    b = device.malloc(n)
    b.write(base)
    b.write(patch, off)
    expect = base[:off] + patch + base[off + k:]
    assert b.read() == expect
    r_off = data.draw(st.integers(0, n), label="read offset")
    assert b.read(n - r_off, r_off) == expect[r_off:]
    b.free()


def test_write_numpy_and_non_contiguous(device, rng) -> None:
    a = rng.standard_normal((8, 6)).astype(np.float32)
    b = device.malloc(a[:, ::2].nbytes)
    b.write(a[:, ::2])  # strided: copied to contiguous first
    assert np.array_equal(np.frombuffer(b.read(), np.float32).reshape(8, 3), a[:, ::2])


def test_copy_from_same_device(device) -> None:
    src, dst = device.malloc(64), device.malloc(64)
    data = os.urandom(64)
    src.write(data)
    dst.write(b"\0" * 64)
    dst.copy_from(src, 30, 2, 5)  # unaligned: goes through the host on GPUs
    assert dst.read() == b"\0" * 5 + data[2:32] + b"\0" * 29
    dst.copy_from(src)
    assert dst.read() == data


def test_use_after_free_and_device_still_usable(device) -> None:
    b = device.malloc(32)
    b.write(os.urandom(32))
    b.free()
    for op in (b.read, lambda: b.write(b"1234")):
        with pytest.raises(BufferFreedError, match=f"on {device.uri} was freed"):
            op()
    ok = device.malloc(32)
    data = os.urandom(32)
    ok.write(data)
    assert ok.read() == data


def test_bad_sizes_and_device_still_usable(device) -> None:
    lim = device.limits
    limit = min(lim.max_buffer_size, lim.max_storage_binding_size)
    with pytest.raises(OutOfDeviceMemoryError) as ei:
        device.malloc(limit + 1)
    assert f"malloc({limit + 1}) on {device.uri}: above the device limit of {limit} bytes" in str(ei.value)
    with pytest.raises(ValueError, match="got -5"):
        device.malloc(-5)
    with pytest.raises(TypeError, match="float 2.0"):
        device.malloc(2.0)
    with pytest.raises(TypeError, match="NoneType"):
        device.malloc(None)
    data = os.urandom(100)
    b = device.malloc(100)
    b.write(data)
    assert b.read() == data


def test_free_returns_memory_to_pool(device) -> None:
    import gc

    gc.collect()  # buffers of earlier tests must not be finalized in the middle of the counts
    s0 = device.memory_stats()
    bufs = [device.malloc(1000) for _ in range(5)]
    assert device.memory_stats()["live_buffers"] == s0["live_buffers"] + 5
    for b in bufs:
        b.free()
    assert device.memory_stats()["live_buffers"] == s0["live_buffers"]
    created = device.memory_stats()["buffers_created"]
    for _ in range(5):
        device.malloc(1000).free()
    if not device.is_cpu:  # the GPU pool reuses buffers
        assert device.memory_stats()["buffers_created"] == created


@needs("vulkan:0")
@needs("gl:0")
def test_copy_between_devices_is_refused() -> None:
    a, b = pyaccel.device("vulkan:0").malloc(8), pyaccel.device("gl:0").malloc(8)
    with pytest.raises(ValueError, match="source buffer is on gl:0, destination on vulkan:0"):
        a.copy_from(b)


def test_synchronize(device) -> None:
    b = device.malloc(16)
    b.write(b"x" * 16)
    device.synchronize()
    device.synchronize()
    assert b.read() == b"x" * 16


@pytest.mark.parametrize("pref, expected", [
    ("vulkan:0,cpu", "vulkan:0"),
    ("cuda:0,cpu", "cpu:0"),
    ("gl,vulkan", "gl:0"),
    ("cuda:0", None),
])
def test_env_preference_with_real_backends(monkeypatch, pref, expected) -> None:
    from pyaccel import registry as reg

    if expected is not None and expected not in _uris():
        pytest.skip(f"{expected} not available")
    monkeypatch.setenv("PYACCEL_DEVICE", pref)
    monkeypatch.setattr(reg, "_global_default", [None])
    if expected is None:
        with pytest.raises(DeviceNotFoundError) as ei:
            pyaccel.get_device()
        msg = str(ei.value)
        assert "cuda:0: no backend handles the device scheme 'cuda'" in msg and "PYACCEL_DEVICE='cuda:0'" in msg
        assert pyaccel.default_device_uri() is None
    else:
        assert pyaccel.get_device().uri == expected
        assert pyaccel.default_device_uri() == expected
