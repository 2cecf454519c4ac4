"""Async twins under asyncio.run: read_async, synchronize_async, device_async, Kernel.call_async."""

from __future__ import annotations

import asyncio
import os

import numpy as np
import pytest

import pyaccel
from pyaccel import Kernel
from pyaccel import registry as reg
from pyaccel.testing import assert_allclose_dtype, poison

SCALE = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> s: f32;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&y)) { y[g.x] = x[g.x] * s; }
}
"""
scale = Kernel(SCALE, reference=lambda x, y, s: np.multiply(x, s, out=y), name="scale")


def test_read_async_and_synchronize_async(device) -> None:
    data = os.urandom(10_001)
    b = device.malloc(len(data))
    b.write(data)

    async def main():
        await device.synchronize_async()
        whole = await b.read_async()
        part = await b.read_async(100, 3)
        empty = await b.read_async(0)
        return whole, part, empty

    whole, part, empty = asyncio.run(main())
    assert whole == data and part == data[3:103] and empty == b""


def test_call_async_writes_back(device, rng) -> None:
    n = 1000
    x = rng.uniform(-2, 2, n).astype(np.float32)
    y = poison(np.empty(n, np.float32))

    async def main():
        await scale.call_async(x, y, 3.0, grid=n, device=device)
        await device.synchronize_async()

    asyncio.run(main())
    assert_allclose_dtype(y, x * np.float32(3))


def test_call_async_then_read_async_on_buffers(device, rng) -> None:
    n = 300
    x = rng.uniform(-2, 2, n).astype(np.float32)
    xb, yb = device.malloc(4 * n), device.malloc(4 * n)
    xb.write(x)
    poison(yb)

    async def main():
        for i in range(5):  # several awaited launches (ping-pong), then one read
            src, dst = (xb, yb) if i % 2 == 0 else (yb, xb)
            await scale.call_async(src, dst, 2.0, grid=n)
        return await yb.read_async()

    got = np.frombuffer(asyncio.run(main()), np.float32)
    assert_allclose_dtype(got, x * np.float32(32))


def test_async_calls_interleave_in_one_loop(device, rng) -> None:
    xs = [rng.uniform(1, 2, 256).astype(np.float32) for _ in range(4)]
    ys = [poison(np.empty(256, np.float32)) for _ in xs]

    async def one(x, y, s):
        await scale.call_async(x, y, s, grid=256, device=device)

    async def main():
        await asyncio.gather(*(one(x, y, float(i + 1)) for i, (x, y) in enumerate(zip(xs, ys, strict=True))))

    asyncio.run(main())
    for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
        assert_allclose_dtype(y, x * np.float32(i + 1))


def test_device_async_returns_the_cached_device(device) -> None:
    async def main():
        return await pyaccel.device_async(device.uri), await pyaccel.device_async(device)

    a, b = asyncio.run(main())
    assert a is device and b is device


@pytest.mark.parametrize("uri", ["vulkan:0", "gl:0", "cpu:0"])
def test_device_async_opens_a_fresh_device(monkeypatch, uri) -> None:
    """With a fresh registry, device_async opens the device (awaiting the adapter/device request)."""
    if uri not in [d.uri for d in pyaccel.devices()]:
        pytest.skip(f"{uri} not available")
    fresh = reg.BackendRegistry(reg.BUILTIN_BACKENDS)
    monkeypatch.setattr(reg, "REGISTRY", fresh)

    async def main():
        d = await pyaccel.device_async(uri)
        b = d.malloc(16)
        b.write(b"0123456789abcdef")
        return d, await b.read_async()

    d, data = asyncio.run(main())
    assert d.uri == uri and data == b"0123456789abcdef"
    assert pyaccel.device(uri) is d  # the sync API sees the same device
    assert d is not reg.BackendRegistry(reg.BUILTIN_BACKENDS).open("cpu:0")


def test_device_async_bad_uris() -> None:
    async def main(u):
        return await pyaccel.device_async(u)

    with pytest.raises(pyaccel.InvalidDeviceURIError, match="'vulkan:-1'"):
        asyncio.run(main("vulkan:-1"))
    with pytest.raises(pyaccel.DeviceNotFoundError, match="'vulkan:99'"):
        asyncio.run(main("vulkan:99"))
