"""pyaccel.extras.wgpu: zero-copy buffers in and out of wgpu-py, on vulkan:0 and gl:0."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import pyaccel
from pyaccel.extras import wgpu as xw

wgpu = pytest.importorskip("wgpu")

URIS = ["vulkan:0", "gl:0"]


@pytest.fixture(params=URIS)
def dev(request: pytest.FixtureRequest) -> pyaccel.Device:
    if request.param not in [d.uri for d in pyaccel.devices()]:
        pytest.skip(f"{request.param} is not available here")
    return pyaccel.device(request.param)


def _read(dev: pyaccel.Device, buf: object, n: int, dtype: object) -> np.ndarray:
    return np.frombuffer(xw.wgpu_device(dev).queue.read_buffer(buf, 0, n), dtype=dtype)


def test_round_trip_without_copies(dev: pyaccel.Device, rng: np.random.Generator) -> None:
    g = xw.wgpu_device(dev)
    assert isinstance(g, wgpu.GPUDevice)
    buf = g.create_buffer(size=4 * 60, usage=xw.required_usage() | wgpu.BufferUsage.VERTEX)
    z = xw.from_wgpu_buffer(buf, (6, 10), pyaccel.float32, dev)
    assert z.shape == (6, 10) and z.dtype is pyaccel.float32 and z.device is dev
    assert xw.as_wgpu_buffer(z) is buf  # the very same buffer: no copy was made
    a = rng.standard_normal((6, 10)).astype(np.float32)
    g.queue.write_buffer(buf, 0, a.tobytes())  # a raw queue write ...
    np.testing.assert_array_equal(z.to_numpy(), a)  # ... is what the Array holds
    # compute through pyaccel; read the result's own buffer with wgpu
    y = pyaccel.exp(z) * 2 + z
    yb = xw.as_wgpu_buffer(y)
    assert isinstance(yb, wgpu.GPUBuffer) and yb.size >= xw.storage_nbytes(y) == 240
    np.testing.assert_allclose(_read(dev, yb, 240, np.float32).reshape(6, 10), np.exp(a) * 2 + a,
                               rtol=1e-5, atol=1e-6)
    # pyaccel writing into the wrapped buffer shows up in the user's buffer
    z += 1.0
    xw.submit(dev)
    np.testing.assert_allclose(_read(dev, buf, 240, np.float32).reshape(6, 10), a + 1, rtol=1e-6)
    # a reshape shares the storage, so it exports the same buffer
    assert xw.as_wgpu_buffer(pyaccel.reshape(y, (60,))) is yb


def test_submit_orders_pyaccel_work_before_user_queue_work(dev: pyaccel.Device,
                                                           rng: np.random.Generator) -> None:
    a = rng.standard_normal(256).astype(np.float32)
    c = rng.standard_normal(256).astype(np.float32)
    x = pyaccel.asarray(a, device=dev)
    b = xw.as_wgpu_buffer(x)
    x += 5.0  # recorded into pyaccel's open encoder
    xw.submit(dev)  # ... submitted: the user's write below lands after it
    xw.wgpu_device(dev).queue.write_buffer(b, 0, c.tobytes())
    np.testing.assert_array_equal(x.to_numpy(), c)


def test_exported_buffers_are_not_recycled(dev: pyaccel.Device, rng: np.random.Generator) -> None:
    a = rng.standard_normal(1000).astype(np.float32)
    x = pyaccel.asarray(a, device=dev)
    b = xw.as_wgpu_buffer(x)
    del x
    gc.collect()
    others = [pyaccel.full((1000,), 7.0, dtype=pyaccel.float32, device=dev) for _ in range(4)]
    assert all(xw.as_wgpu_buffer(o) is not b for o in others)
    np.testing.assert_array_equal(_read(dev, b, 4000, np.float32), a)  # still the user's data


def test_storage_layout_of_narrow_dtypes(dev: pyaccel.Device, rng: np.random.Generator) -> None:
    lay = xw.storage_layout(pyaccel.asarray([1], dtype=pyaccel.int8, device=dev))
    g = xw.wgpu_device(dev)
    v = rng.integers(-128, 128, size=32).astype(np.int8)
    buf = g.create_buffer(size=32 * lay.itemsize, usage=xw.required_usage())
    g.queue.write_buffer(buf, 0, v.astype(np.dtype(lay.numpy)).tobytes())
    z = xw.from_wgpu_buffer(buf, 32, "int8", dev)
    np.testing.assert_array_equal(z.to_numpy(), v)


def test_bad_buffers_are_refused_clearly(dev: pyaccel.Device) -> None:
    g = xw.wgpu_device(dev)
    U = wgpu.BufferUsage
    staging = g.create_buffer(size=64, usage=U.MAP_READ | U.COPY_DST)
    with pytest.raises(ValueError, match="usage lacks STORAGE | COPY_SRC"):
        xw.from_wgpu_buffer(staging, (16,), pyaccel.float32, dev)
    small = g.create_buffer(size=64, usage=xw.required_usage())
    with pytest.raises(ValueError, match=r"needs 68 bytes .* the buffer has 64"):
        xw.from_wgpu_buffer(small, (17,), pyaccel.float32, dev)
    with pytest.raises(ValueError, match="shape must be a tuple of ints"):
        xw.from_wgpu_buffer(small, (-1,), pyaccel.float32, dev)
    with pytest.raises(TypeError, match="must be a wgpu.GPUBuffer"):
        xw.from_wgpu_buffer(b"1234", (1,), pyaccel.float32, dev)
    if pyaccel.Capability.FLOAT64 not in dev.capabilities:
        with pytest.raises(pyaccel.UnsupportedDTypeError):
            xw.from_wgpu_buffer(small, (8,), pyaccel.float64, dev)
    with pytest.raises(TypeError, match="not a native wgpu-py device"):
        xw.as_wgpu_buffer(pyaccel.asarray([1.0], device="cpu"))
    with pytest.raises(TypeError, match="not a native wgpu-py device"):
        xw.wgpu_device("cpu")
    other = g.adapter.request_device_sync() if hasattr(g, "adapter") else None
    if other is not None:
        foreign = other.create_buffer(size=64, usage=xw.required_usage())
        with pytest.raises(ValueError, match="belongs to another GPUDevice"):
            xw.from_wgpu_buffer(foreign, (16,), pyaccel.float32, dev)
    # the device is unaffected
    ok = xw.from_wgpu_buffer(small, (16,), pyaccel.float32, dev)
    ok[...] = 3.0
    assert ok.tolist() == [3.0] * 16
