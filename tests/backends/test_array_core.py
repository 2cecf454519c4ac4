"""pyaccel.Array itself: attributes, host conversions, Python protocols, the namespace info,
the data-type functions, and Kernel interop, on every device."""

from __future__ import annotations

import asyncio
import math

import numpy as np
import pytest
from _array_util import check, dtypes_for, rand

import pyaccel
from pyaccel.promotion import default_float, default_int


def test_attributes(device, rng):
    x = rand(rng, pyaccel.float32, (2, 3, 4))
    a = pyaccel.asarray(x, device=device)
    assert a.shape == (2, 3, 4) and a.ndim == 3 and a.size == 24 and a.dtype == pyaccel.float32
    assert a.device is device and a.dtype == "float32"
    assert a.__array_namespace__() is pyaccel
    assert a.nbytes == 96 and a.itemsize == 4
    check(a.mT, np.swapaxes(x, -1, -2), "exact", "mT")
    m = pyaccel.asarray(x[0], device=device)
    check(m.T, x[0].T, "exact", "T")
    with pytest.raises(ValueError, match="2-D"):
        _ = a.T
    assert len(a) == 2
    assert [r.shape for r in a] == [(3, 4), (3, 4)]
    check(list(a)[1], x[1], "exact", "iteration")
    assert isinstance(a.__pyaccel_buffer__(), pyaccel.Buffer)


def test_host_conversions_every_dtype(device, rng):
    for dt in dtypes_for(device):
        x = rand(rng, dt, (3, 2))
        a = pyaccel.asarray(x, device=device)
        np.testing.assert_array_equal(a.to_numpy(), x)
        np.testing.assert_array_equal(np.asarray(a), x)
        assert np.asarray(a).dtype == x.dtype
        assert a.tolist() == x.tolist() or np.allclose(np.array(a.tolist(), dtype=float),
                                                      x.astype(float), equal_nan=True)
        assert bytes(a) == x.tobytes() == a.tobytes()
        mv = a.memoryview()
        assert mv.tobytes() == x.tobytes()
        got = asyncio.run(a.to_numpy_async())
        np.testing.assert_array_equal(got, x)
        assert asyncio.run(a.tobytes_async()) == x.tobytes()
    z = pyaccel.zeros((0, 3), device=device)
    assert z.to_numpy().shape == (0, 3) and z.tolist() == [] and bytes(z) == b""


def test_scalar_protocols(device):
    i = pyaccel.asarray(7, device=device)
    f = pyaccel.asarray(2.5, device=device)
    b = pyaccel.asarray(True, device=device)
    assert int(i) == 7 and float(f) == 2.5 and bool(b) is True and i.__index__() == 7
    assert [10, 20, 30, 40, 50, 60, 70, 80][i] == 80
    assert complex(f) == 2.5 + 0j and f.item() == 2.5
    assert i.tolist() == 7 and i.shape == ()
    with pytest.raises(ValueError, match="ambiguous"):
        bool(pyaccel.ones(2, device=device))
    with pytest.raises(TypeError, match="integer"):
        f.__index__()
    with pytest.raises(TypeError, match="0-d"):
        len(i)
    assert bool(pyaccel.asarray([0.0], device=device)) is False


def test_repr(device):
    a = pyaccel.asarray([[1.5, -2], [math.nan, math.inf]], dtype="float32", device=device)
    r = repr(a)
    assert r.startswith("Array([[1.5, -2.],") and "nan" in r and "inf" in r
    assert f"device='{device.uri}'" in r and "dtype=float32" in r
    assert repr(pyaccel.asarray(True, device=device)) == f"Array(True, dtype=bool, device='{device.uri}')"
    big = repr(pyaccel.arange(5000, device=device))
    assert "..." in big and len(big) < 400
    assert str(pyaccel.asarray([1, 2], device=device)) == "[1, 2]"


def test_namespace_info(device):
    info = pyaccel.__array_namespace_info__()
    caps = info.capabilities()
    assert caps["boolean indexing"] is True and caps["data-dependent shapes"] is True
    d = info.default_dtypes(device=device)
    assert d["real floating"] is default_float(device) and d["integral"] is default_int(device)
    assert d["indexing"] is default_int(device)
    all_dt = info.dtypes(device=device)
    assert "float32" in all_dt and "float64" in all_dt and "int64" in all_dt and "uint64" in all_dt
    assert set(info.dtypes(device=device, kind="integral")) <= {"int8", "int16", "int32", "int64",
                                                                "uint8", "uint16", "uint32", "uint64"}
    assert list(info.dtypes(device=device, kind="bool")) == ["bool"]
    assert info.dtypes(device=device.uri, kind=("real floating", "bool"))
    assert device in info.devices()
    assert info.default_device() is pyaccel.get_device()


def test_dtype_functions():
    assert pyaccel.result_type(pyaccel.int8, pyaccel.uint8) == pyaccel.int16
    assert pyaccel.result_type(pyaccel.int32, pyaccel.float32) == pyaccel.float64
    assert pyaccel.result_type(pyaccel.int16, pyaccel.float32) == pyaccel.float32
    assert pyaccel.result_type(pyaccel.uint8, 1) == pyaccel.uint8
    assert pyaccel.result_type(pyaccel.bool, 1.0) == pyaccel.float64
    for a in ("bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16", "float32"):
        for b in ("bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16", "float32"):
            assert pyaccel.result_type(a, b).name == np.result_type(a, b).name, (a, b)
            assert pyaccel.can_cast(a, b) == np.can_cast(a, b), (a, b)
    assert pyaccel.finfo(pyaccel.float32).eps == np.finfo(np.float32).eps
    assert pyaccel.finfo("float16").max == float(np.finfo(np.float16).max)
    assert pyaccel.finfo(pyaccel.float32).smallest_normal == float(np.finfo(np.float32).smallest_normal)
    assert pyaccel.iinfo(pyaccel.int8).min == -128 and pyaccel.iinfo("uint16").max == 65535
    with pytest.raises(TypeError, match="iinfo"):
        pyaccel.finfo(pyaccel.int32)
    assert pyaccel.isdtype(pyaccel.float32, "real floating")
    assert pyaccel.isdtype(pyaccel.uint8, ("bool", "unsigned integer"))
    assert not pyaccel.isdtype(pyaccel.bool, "numeric")
    assert pyaccel.isdtype(pyaccel.int16, pyaccel.int16)


def test_kernel_accepts_arrays(device):
    src = """
    @group(0) @binding(0) var<storage, read> x: array<f32>;
    @group(0) @binding(1) var<storage, read_write> y: array<f32>;
    @compute @workgroup_size(64)
    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
        if (gid.x < arrayLength(&y)) { y[gid.x] = 2.0 * x[gid.x]; }
    }
    """

    def ref(x, y):
        y[:] = 2 * x

    k = pyaccel.Kernel(src, reference=ref)
    x = pyaccel.arange(10, dtype="float32", device=device)
    y = pyaccel.zeros(10, dtype="float32", device=device)
    k(x, y, grid=10)
    assert y.tolist() == [2.0 * v for v in range(10)]


def test_errors_name_value_and_fix_and_device_stays_usable(device):
    a = pyaccel.ones((2, 3), dtype="float32", device=device)
    with pytest.raises(ValueError, match=r"reshape.*\(4, 2\)"):
        pyaccel.reshape(a, (4, 2))
    with pytest.raises(IndexError, match="out of bounds"):
        a[5]
    with pytest.raises(IndexError, match="too many indices"):
        a[0, 0, 0]
    with pytest.raises(TypeError, match="asarray"):
        pyaccel.sin([1.0, 2.0])
    with pytest.raises(ValueError, match="not aligned"):
        pyaccel.matmul(a, a)
    with pytest.raises(ValueError, match="no identity"):
        pyaccel.max(pyaccel.zeros((0,), device=device))
    assert (a + 1).tolist() == [[2.0] * 3] * 2


def test_zero_size_everywhere(device):
    """Every family accepts empty arrays, with NumPy's shapes and identities."""
    z = pyaccel.zeros((0, 3), dtype="float32", device=device)
    e = pyaccel.ones((2, 0), dtype="float32", device=device)
    f = pyaccel.ones((0, 4), dtype="float32", device=device)
    assert (z @ pyaccel.ones((3, 4), dtype="float32", device=device)).shape == (0, 4)
    assert (e @ f).tolist() == [[0.0] * 4] * 2
    assert pyaccel.sort(z, axis=0).shape == (0, 3) and pyaccel.argsort(z, axis=1).shape == (0, 3)
    assert pyaccel.nn.softmax(z).shape == (0, 3)
    assert pyaccel.nn.logsumexp(e).tolist() == [-math.inf, -math.inf]
    assert pyaccel.cumulative_sum(z, axis=0, include_initial=True).tolist() == [[0.0] * 3]
    assert [a.shape for a in pyaccel.nonzero(z)] == [(0,), (0,)]
    assert pyaccel.unique_values(z).shape == (0,)
    assert pyaccel.concat([z, pyaccel.ones((1, 3), dtype="float32", device=device)]).tolist() == [[1.0] * 3]
    assert all(math.isnan(v) for v in pyaccel.mean(e, axis=1).tolist())
    assert pyaccel.any(z).tolist() is False and pyaccel.prod(z, axis=0).tolist() == [1.0] * 3
    assert pyaccel.sum(z).tolist() == 0.0
    assert z[:, 1].shape == (0,)
    z[:, 1] = 5.0
    assert pyaccel.where(z > 0, z, 1.0).shape == (0, 3)
    assert pyaccel.take(pyaccel.arange(5, device=device), pyaccel.asarray([], dtype="int32", device=device)).tolist() == []
    assert pyaccel.vecdot(e, e).tolist() == [0.0, 0.0]
    assert pyaccel.argmax(pyaccel.ones((0, 3), device=device), axis=1).shape == (0,)
    assert pyaccel.linspace(0, 1, 0, device=device).shape == (0,) and pyaccel.eye(0, device=device).shape == (0, 0)
    assert (z + pyaccel.ones((1, 3), dtype="float32", device=device)).shape == (0, 3)
