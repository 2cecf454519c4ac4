"""Creation functions and asarray on every device, against NumPy."""

from __future__ import annotations

import array
import math

import numpy as np
import pytest
from _array_util import FEW, check, dtypes_for, np_dtype, poisoned, rand, small_shapes  # noqa: F401
from hypothesis import given, settings
from hypothesis import strategies as st

import pyaccel
from pyaccel.promotion import default_float, default_int
from pyaccel.testing import assert_allclose_dtype


def test_asarray_sources(device, rng):
    df, di = default_float(device).name, default_int(device).name
    cases = [
        ([1, 2, 3], np.array([1, 2, 3], di)),
        ([[1.5, 2], [3, 4]], np.array([[1.5, 2], [3, 4]], df)),
        ([True, False], np.array([True, False])),
        (7, np.array(7, di)),
        (2.5, np.array(2.5, df)),
        (False, np.array(False)),
        ((1, 2.0), np.array([1, 2], df)),
        ([], np.array([], df)),
        ([[], []], np.zeros((2, 0), df)),
        (array.array("h", [1, -2, 3]), np.array([1, -2, 3], np.int16)),
        (array.array("f", [0.5, 1.5]), np.array([0.5, 1.5], np.float32)),
        (b"\x01\x02\xff", np.array([1, 2, 255], np.uint8)),
        (bytearray(b"\x05"), np.array([5], np.uint8)),
        (memoryview(np.arange(6, dtype=np.int32).reshape(2, 3)), np.arange(6, dtype=np.int32).reshape(2, 3)),
    ]
    for obj, want in cases:
        check(pyaccel.asarray(obj, device=device), want, "exact", f"asarray({obj!r:.40})")
    for dt in dtypes_for(device):
        x = rand(rng, dt, (3, 5))
        a = pyaccel.asarray(x, device=device)
        check(a, x, "exact", f"asarray(numpy {dt.name})")
        check(pyaccel.asarray(x.tolist(), dtype=dt, device=device), x, "exact", f"asarray(list, {dt.name})")
        check(pyaccel.asarray(a), x, "exact", "asarray(Array)")
        assert pyaccel.asarray(a) is a
        assert pyaccel.asarray(a, copy=True) is not a
        check(pyaccel.asarray(x.T), np.ascontiguousarray(x.T), "exact", "non-contiguous numpy")
    with pytest.raises(ValueError, match="ragged"):
        pyaccel.asarray([[1, 2], [3]], device=device)
    if pyaccel.Capability.COMPLEX in device.capabilities:
        z = pyaccel.asarray([1j], device=device)
        assert z.dtype == pyaccel.promotion.default_complex(device) and z.tolist() == [1j]
    else:
        with pytest.raises(TypeError, match="complex"):
            pyaccel.asarray([1j], device=device)
    with pytest.raises(ValueError, match="copy=False"):
        pyaccel.asarray([1, 2], device=device, copy=False)


def test_asarray_copies_across_devices(device, rng):
    for other in pyaccel.devices():
        for dt in dtypes_for(device):
            if dt not in dtypes_for(pyaccel.device(other.uri)):
                continue
            x = rand(rng, dt, (4, 3))
            a = pyaccel.asarray(x, device=device)
            b = pyaccel.asarray(a, device=other.uri)
            assert b.device.uri == other.uri
            check(b, x, "exact", f"{device.uri} -> {other.uri} {dt.name}")
            check(a.to_device(other.uri), x, "exact", "to_device")


def test_float64_on_webgpu_devices(device, rng, monkeypatch):
    x = rng.random(4)
    if device.is_cpu:
        assert pyaccel.asarray(x, device=device).dtype == pyaccel.float64
        return
    # step 7 contract: WebGPU devices hold float64/int64 (emulated, exact) and default to them
    assert pyaccel.Capability.EMULATED_64 in device.capabilities
    a = pyaccel.asarray(x, device=device)
    assert a.dtype == pyaccel.float64 and a.to_numpy().tobytes() == x.tobytes()
    assert pyaccel.zeros(3, dtype="int64", device=device).dtype == pyaccel.int64
    assert pyaccel.asarray([1.5], device=device).dtype == pyaccel.float64  # Python floats: default
    old = pyaccel.set_dtype_policy("downcast")
    try:
        a = pyaccel.asarray(x, device=device)
        assert a.dtype == pyaccel.float32
        np.testing.assert_allclose(a.to_numpy(), x.astype(np.float32))
        assert pyaccel.zeros(2, dtype="int64", device=device).dtype == pyaccel.int32
        assert pyaccel.asarray([1.5], device=device).dtype == pyaccel.float32
        i = pyaccel.asarray(np.array([1, 2], np.int32), device=device)
        u = pyaccel.asarray(np.array([1, 2], np.uint32), device=device)
        assert (i + u).dtype == pyaccel.int32  # int64 downcast
    finally:
        pyaccel.set_dtype_policy(old)
    i = pyaccel.asarray(np.array([1, -2], np.int32), device=device)
    u = pyaccel.asarray(np.array([2**32 - 1, 2], np.uint32), device=device)
    s = i + u
    assert s.dtype == pyaccel.int64 and s.tolist() == [2**32, 0]
    # a device without 64-bit types (none ships now): a typed error that names the fix
    no64 = device.impl.capabilities & ~(pyaccel.Capability.FLOAT64 | pyaccel.Capability.INT64
                                        | pyaccel.Capability.EMULATED_64)
    monkeypatch.setattr(device.impl, "capabilities", no64)
    with pytest.raises(pyaccel.UnsupportedDTypeError) as err:
        pyaccel.asarray(x, device=device)
    msg = str(err.value)
    assert "float64" in msg and device.uri in msg and "float32" in msg and "downcast" in msg
    with pytest.raises(pyaccel.UnsupportedDTypeError, match="int64"):
        pyaccel.zeros(3, dtype="int64", device=device)
    assert pyaccel.asarray([1.5], device=device).dtype == pyaccel.float32  # Python floats: default
    i3 = pyaccel.asarray(np.array([1, 2, 3], np.int32), device=device)  # a new signature: not
    u3 = pyaccel.asarray(np.array([1, 2, 3], np.uint32), device=device)  # memoised with int64
    with pytest.raises(pyaccel.UnsupportedDTypeError, match="int64"):
        i3 + u3


def test_dtype_policy_env(monkeypatch):
    from pyaccel import promotion

    # (restore the policy as it was: set_dtype_policy(None) returns the *effective* policy,
    # "downcast" from the variable set here, and restoring that leaked the downcast policy
    # into every later test of the process)
    saved = promotion._policy[0]
    monkeypatch.setenv("PYACCEL_DTYPE_POLICY", "downcast")
    pyaccel.set_dtype_policy(None)
    try:
        assert pyaccel.get_dtype_policy() == "downcast"
        monkeypatch.setenv("PYACCEL_DTYPE_POLICY", "bogus")
        with pytest.raises(ValueError, match="PYACCEL_DTYPE_POLICY"):
            pyaccel.get_dtype_policy()
    finally:
        promotion._policy[0] = saved
    with pytest.raises(ValueError, match="strict"):
        pyaccel.set_dtype_policy("lossy")


@settings(max_examples=FEW)
@given(shape=small_shapes())
def test_fills(device, rng, poisoned, shape):  # noqa: F811
    for dt in dtypes_for(device):
        npdt = np_dtype(dt)
        check(pyaccel.zeros(shape, dtype=dt, device=device), np.zeros(shape, npdt), "exact", "zeros")
        check(pyaccel.ones(shape, dtype=dt, device=device), np.ones(shape, npdt), "exact", "ones")
        v = True if dt.kind == "b" else (-3 if dt.kind == "i" else (7 if dt.kind == "u" else -2.5))
        check(pyaccel.full(shape, v, dtype=dt, device=device), np.full(shape, v, npdt), "exact", "full")
        x = pyaccel.asarray(rand(rng, dt, shape), device=device)
        check(pyaccel.zeros_like(x), np.zeros(shape, npdt), "exact", "zeros_like")
        check(pyaccel.ones_like(x), np.ones(shape, npdt), "exact", "ones_like")
        check(pyaccel.full_like(x, v), np.full(shape, v, npdt), "exact", "full_like")
        e = pyaccel.empty_like(x)
        assert e.shape == shape and e.dtype == dt
        assert pyaccel.empty(shape, dtype=dt, device=device).shape == shape
    df = default_float(device).name
    check(pyaccel.full((2,), 1.5, device=device), np.full(2, 1.5, df), "exact", "full default float")
    check(pyaccel.full((2,), 3, device=device), np.full(2, 3, default_int(device).name), "exact",
          "full default int")
    check(pyaccel.full((2,), True, device=device), np.full(2, True), "exact", "full bool")
    check(pyaccel.zeros(3, device=device), np.zeros(3, df), "exact", "zeros default")
    with pytest.raises(OverflowError, match="uint8"):
        pyaccel.full(3, 300, dtype="uint8", device=device)
    with pytest.raises(ValueError, match="negative"):
        pyaccel.zeros((2, -1), device=device)


def test_arange_linspace_eye(device, poisoned):  # noqa: F811
    di, df = default_int(device).name, default_float(device).name
    for args, kw, want in [
        ((5,), {}, np.arange(5, dtype=di)),
        ((2, 11, 3), {}, np.arange(2, 11, 3, dtype=di)),
        ((10, 0, -3), {}, np.arange(10, 0, -3, dtype=di)),
        ((0.5, 3.0, 0.25), {}, np.arange(0.5, 3.0, 0.25, dtype=df)),
        ((5, 1), {}, np.arange(5, 1, dtype=di)),
        ((3,), {"dtype": "uint8"}, np.arange(3, dtype=np.uint8)),
        ((-4, 4), {"dtype": "float32"}, np.arange(-4, 4, dtype=np.float32)),
        ((70000,), {"dtype": "int32"}, np.arange(70000, dtype=np.int32)),
    ]:
        check(pyaccel.arange(*args, device=device, **kw), want, "arith", f"arange{args}")
    for args, kw in [((0, 1, 5), {}), ((-2.5, 7, 300), {}), ((1, 2, 1), {}), ((0, 1, 0), {}),
                     ((0, 10, 5), {"endpoint": False}), ((3, -3, 7), {"dtype": "float32"}),
                     ((0, 10, 6), {"dtype": "int32"})]:
        want = np.linspace(*args, dtype=kw.get("dtype", df), endpoint=kw.get("endpoint", True))
        got = pyaccel.linspace(*args, device=device, **kw)
        assert got.dtype.name == want.dtype.name and got.shape == want.shape
        # float32 start + i * step: absolute error of a few ULP of the endpoints
        scale = max(abs(args[0]), abs(args[1])) * 4 * np.finfo(np.float32).eps
        assert_allclose_dtype(got.to_numpy(), want, want.dtype, rtol=0, atol=scale if
                              want.dtype.kind == "f" else 0, what=f"linspace{args}{kw}")
    for dt in dtypes_for(device):
        for n, m, k in [(3, None, 0), (4, 6, 1), (5, 3, -2), (0, 2, 0), (300, 2, 0), (3, 3, 5)]:
            want = np.eye(n, m, k=k, dtype=np_dtype(dt))
            check(pyaccel.eye(n, m, k=k, dtype=dt, device=device), want, "exact", f"eye({n},{m},{k})")
    with pytest.raises(ValueError, match="step"):
        pyaccel.arange(0, 5, 0, device=device)


def test_tril_triu_meshgrid(device, rng, poisoned):  # noqa: F811
    for dt in dtypes_for(device):
        for shape in [(4, 5), (2, 3, 3), (0, 3), (7, 1)]:
            x = rand(rng, dt, shape)
            X = pyaccel.asarray(x, device=device)
            for k in (-1, 0, 2):
                check(pyaccel.tril(X, k=k), np.tril(x, k=k), "exact", f"tril {dt.name} {shape} {k}")
                check(pyaccel.triu(X, k=k), np.triu(x, k=k), "exact", f"triu {dt.name} {shape} {k}")
    with pytest.raises(ValueError, match="2 dimensions"):
        pyaccel.tril(pyaccel.ones(3, device=device))
    a, b, c = (rand(rng, pyaccel.float32, (n,)) for n in (3, 4, 2))
    A, B, C = (pyaccel.asarray(v, device=device) for v in (a, b, c))
    for indexing in ("xy", "ij"):
        got = pyaccel.meshgrid(A, B, C, indexing=indexing)
        want = np.meshgrid(a, b, c, indexing=indexing)
        for g, w in zip(got, want, strict=True):
            check(g, w, "exact", f"meshgrid {indexing}")


def test_from_dlpack(device):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    a = pyaccel.from_dlpack(x, device=device)
    check(a, x, "exact", "from_dlpack")
    if device.is_cpu:
        np.testing.assert_array_equal(np.from_dlpack(a), x)
        assert a.__dlpack_device__() == (1, 0)
    else:
        with pytest.raises(BufferError, match="to_device"):
            a.__dlpack__()


def test_no_numpy_paths(device, monkeypatch, rng):
    """The browser path: lists / bytes / array.array in, lists / bytes out, without NumPy."""
    if device.is_cpu:
        pytest.skip("the cpu device is NumPy")
    from pyaccel import _host

    data = {dt: rand(rng, dt, (3, 4)) for dt in dtypes_for(device)}
    monkeypatch.setattr(_host, "FORCE_NO_NUMPY", True)
    for dt, x in data.items():
        a = pyaccel.asarray(x.tolist(), dtype=dt, device=device)
        assert a.tolist() == x.tolist() or dt.kind == "f" and np.allclose(
            np.array(a.tolist(), dtype=np.float64), x, equal_nan=True)
        assert bytes(a) == x.tobytes()
        b = pyaccel.asarray(memoryview(x.tobytes()).cast(x.dtype.char, x.shape) if dt.name != "float16"
                            else x.tolist(), dtype=dt, device=device)
        assert bytes(b) == x.tobytes()
        y = (a + a) if dt.kind != "b" else (a & a)
        assert y.shape == (3, 4)
        with pytest.raises(pyaccel.BackendUnavailableError, match="tolist"):
            a.to_numpy()
    a = pyaccel.asarray(array.array("i", [5, -6]), device=device)
    assert a.tolist() == [5, -6] and a.dtype == pyaccel.int32
    assert pyaccel.asarray(b"\x01\x02", device=device).tolist() == [1, 2]
    assert repr(pyaccel.asarray([1.5, 2], device=device)).startswith("Array([1.5, 2.]")
    r = pyaccel.sum(pyaccel.asarray([1, 2, 3], device=device))
    assert int(r) == 6
    u = pyaccel.unique_values(pyaccel.asarray([3, 1, 3, math.nan, 1], dtype="float32", device=device))
    vals = u.tolist()
    assert vals[:2] == [1.0, 3.0] and math.isnan(vals[2])
    nz = pyaccel.nonzero(pyaccel.asarray([[0, 1], [2, 0]], device=device))
    assert [v.tolist() for v in nz] == [[0, 1], [1, 0]]
    m = pyaccel.asarray([[1, 2], [3, 4]], device=device)
    assert m[pyaccel.asarray([[True, False], [False, True]], device=device)].tolist() == [1, 4]


@pytest.mark.parametrize("n", [0, 1, 2, 17])
def test_asarray_scalars_and_sizes(device, n):
    x = list(range(n))
    a = pyaccel.asarray(x, device=device)
    assert a.shape == (n,) and a.tolist() == x
    big = pyaccel.asarray([2**31, -(2**63)], device=device)  # int64 default on every device
    assert big.dtype == pyaccel.int64 and big.tolist() == [2**31, -(2**63)]
    with pytest.raises(OverflowError, match="int64"):
        pyaccel.asarray([2**63], device=device)


@pytest.mark.slow
@settings(max_examples=max(FEW, 25))
@given(shape=small_shapes(max_dims=4), start=st.integers(-50, 50), step=st.integers(1, 7))
def test_creation_sweep(device, rng, shape, start, step):
    for dt in dtypes_for(device, "iuf"):
        if dt.kind in "iu":
            info = np.iinfo(np_dtype(dt))
            if start < info.min or start + 40 * step > info.max:
                continue  # out of the dtype's range: pyaccel raises OverflowError, NumPy wraps
        check(pyaccel.arange(start, start + 40 * step, step, dtype=dt, device=device),
              np.arange(start, start + 40 * step, step, dtype=np_dtype(dt)), "arith", "arange sweep")
        check(pyaccel.full(shape, 1, dtype=dt, device=device), np.full(shape, 1, np_dtype(dt)), "exact", "full")
