"""Device and Buffer over a fake impl: capabilities as data, info(), malloc/free contracts."""

from __future__ import annotations

import asyncio
import os

import pytest
from _fakes import FAKE_LIMITS, FakeImpl, desc

from pyaccel import Capability, Device, Limits
from pyaccel.errors import BufferFreedError, OutOfDeviceMemoryError


def fake_device(caps: Capability = Capability.SUBGROUPS, adapter_type: str = "discrete") -> Device:
    return Device(desc("fake:0", adapter_type, "fake", name="Fake GPU 9000"), FakeImpl(caps))


def test_device_without_f16() -> None:
    # like array-api-strict's device without float64: the flag is simply absent
    d = fake_device(Capability.SUBGROUPS)
    assert Capability.F16 not in d.capabilities
    assert Capability.SUBGROUPS in d.capabilities
    assert d.capabilities.names() == ["subgroups"]
    assert "capabilities    : subgroups" in d.info()
    none = fake_device(Capability.NONE)
    assert "capabilities    : none" in none.info()


def test_capability_aliases_and_names() -> None:
    assert Capability.f16 is Capability.F16 and Capability.float64 is Capability.FLOAT64
    caps = Capability.F16 | Capability.FLOAT64 | Capability.SOFTWARE
    assert caps.names() == ["f16", "float64", "software"]


def test_identity_properties() -> None:
    d = fake_device()
    assert (d.uri, d.backend, d.api, d.name, d.arch) == ("fake:0", "fake", "fake", "Fake GPU 9000", "fakearch")
    assert d.runtime_version == "fake-runtime 1.2.3"
    assert d.limits is FAKE_LIMITS and not d.is_cpu
    assert repr(d) == "<pyaccel.Device fake:0 'Fake GPU 9000'>"
    assert d == "FAKE:0" and d != "fake:1" and d != 3


def test_info_content() -> None:
    d = fake_device()
    text = d.info()
    lines = text.splitlines()
    assert lines[0] == "Device fake:0"
    for needle in ("name            : Fake GPU 9000",
                   "vendor          : FakeVendor (vendor_id=0x1234, device_id=0x5678)",
                   "api             : fake", "adapter type    : discrete", "driver          : fakedrv 9",
                   "runtime         : fake-runtime 1.2.3", "fake line       : from the impl",
                   "limits:", "memory (pyaccel allocator):"):
        assert any(needle in ln for ln in lines), needle
    assert any(ln.split(":")[0].strip() == "max_buffer_size" and "1048576 (1 MiB)" in ln for ln in lines)
    for name in Limits().as_dict():
        assert any(ln.strip().startswith(name) for ln in lines), name
    soft = fake_device(adapter_type="cpu")
    assert "adapter type    : cpu (software)" in soft.info()


def test_limits_from_webgpu_keys() -> None:
    lim = Limits.from_webgpu({"max-buffer-size": 123, "maxStorageBufferBindingSize": 45,
                              "max_compute_workgroups_per_dimension": 6})
    assert (lim.max_buffer_size, lim.max_storage_binding_size, lim.max_workgroups_per_dimension) == (123, 45, 6)
    assert lim.max_uniform_binding_size == Limits().max_uniform_binding_size


def test_malloc_round_trip_and_partial_io() -> None:
    d = fake_device()
    data = os.urandom(1000)
    b = d.malloc(1000)
    assert b.nbytes == 1000 and not b.freed and "1000 bytes on fake:0" in repr(b)
    b.write(data)
    assert b.read() == data
    assert b.read(10, 990) == data[990:]
    b.write(b"\x01\x02\x03", 5)
    assert b.read(4, 4) == data[4:5] + b"\x01\x02\x03"
    assert b.read(0) == b""
    c = d.malloc(1000)
    c.copy_from(b)
    assert c.read() == b.read()


def test_malloc_errors_leave_device_usable() -> None:
    d = fake_device()
    limit = min(FAKE_LIMITS.max_buffer_size, FAKE_LIMITS.max_storage_binding_size)
    bad = [
        (-1, ValueError, "nbytes must be >= 0, got -1"),
        (1.5, TypeError, "nbytes must be an int, got float 1.5"),
        ("8", TypeError, "got str '8'"),
        (True, TypeError, "got bool True"),
        (None, TypeError, "got NoneType None"),
        (limit + 1, OutOfDeviceMemoryError, f"above the device limit of {limit} bytes"),
    ]
    for nbytes, exc, fragment in bad:
        with pytest.raises(exc) as ei:
            d.malloc(nbytes)
        assert fragment in str(ei.value)
        ok = d.malloc(8)
        ok.write(b"12345678")
        assert ok.read() == b"12345678"
        ok.free()
    assert isinstance(OutOfDeviceMemoryError("x"), MemoryError)
    assert d.malloc(limit).nbytes == limit  # exactly the limit is fine
    assert d.malloc(0).read() == b""


def test_use_after_free() -> None:
    d = fake_device()
    before = d.memory_stats()["live_buffers"]
    b = d.malloc(64)
    b.free()
    b.free()  # idempotent
    assert b.freed and "freed" in repr(b)
    assert d.memory_stats()["live_buffers"] == before
    for op in (lambda: b.read(), lambda: b.write(b"x"), lambda: b.handle,
               lambda: d.malloc(64).copy_from(b), lambda: asyncio.run(b.read_async())):
        with pytest.raises(BufferFreedError, match="buffer of 64 bytes on fake:0 was freed"):
            op()
    assert d.malloc(4).read(4) == b"\0\0\0\0"


def test_range_and_type_errors() -> None:
    d = fake_device()
    b = d.malloc(16)
    with pytest.raises(ValueError, match=r"range \[10, 20\) is outside the buffer of 16 bytes"):
        b.write(b"x" * 10, 10)
    with pytest.raises(ValueError, match="offset must be an int >= 0, got -1"):
        b.read(1, -1)
    with pytest.raises(ValueError, match="nbytes must be an int >= 0, got 2.0"):
        b.read(2.0)
    with pytest.raises(TypeError, match="expected a bytes-like object.*got int"):
        b.write(5)
    with pytest.raises(TypeError, match="copy_from"):
        b.write(d.malloc(4))
    other = fake_device().malloc(16)
    with pytest.raises(ValueError, match="read it to the host first"):
        b.copy_from(other)


def test_gc_releases_buffers() -> None:
    import gc

    d = fake_device()
    for _ in range(100):
        d.malloc(128)
    gc.collect()
    assert d.memory_stats()["live_buffers"] == 0
    assert d.memory_stats()["buffers_created"] == 100


def test_async_twins() -> None:
    d = fake_device()
    b = d.malloc(4)
    b.write(b"abcd")

    async def main():
        await d.synchronize_async()
        return await b.read_async(2, 1)

    assert asyncio.run(main()) == b"bc"
