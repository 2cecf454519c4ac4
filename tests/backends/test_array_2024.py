"""The Array API 2024.12 functions and changes on every device and dtype, against NumPy on
fresh random data with poisoned outputs: ``cumulative_prod`` (the scan family), ``diff``,
``searchsorted`` (a kernel; ``sorter``, scalar ``x2``), ``isin`` and ``broadcast_shapes`` (the
2025.12 draft), ``nextafter`` (bit-exact), ``reciprocal`` special values, ``count_nonzero``,
``take_along_axis``, the inspection API and version handling, ``linspace`` / ``arange`` with
0-d array and NumPy-scalar bounds. (``reciprocal`` and ``nextafter`` are op-table rows: the
sweeps of test_array_elementwise.py / test_complex.py cover them for every dtype too.)
"""

from __future__ import annotations

import numpy as np
import pytest
from _array_util import check, dtypes_for, np_dtype, poisoned, rand  # noqa: F401

import pyaccel
from pyaccel.testing import assert_allclose_dtype


def _numeric(device) -> list:
    return dtypes_for(device, "iufc")


def _data(rng, dt, shape, lo=0.6, hi=1.4):
    """Values whose running products stay in range: floats in [lo, hi] with a few specials
    (NaN, inf, 0; complex: NaN and 0 only, as complex products with inf depend on how they
    associate), complex with small imaginary parts, integers in [-3, 3] (narrow ones wrap)."""
    npdt = np_dtype(dt)
    if dt.kind in "iu":
        lo_i = 0 if dt.kind == "u" else -3
        return rng.integers(lo_i, 4, size=shape).astype(npdt)
    v = rng.uniform(lo, hi, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    if dt.kind == "c":
        v = v + 1j * rng.uniform(-0.3, 0.3, size=shape)
    v = np.asarray(v).astype(npdt)
    if v.size >= 8:
        flat = v.reshape(-1)
        idx = rng.choice(v.size, size=3, replace=False)
        flat[idx] = np.array([np.nan, np.inf if dt.kind == "f" else np.nan, 0.0]).astype(npdt)
    return v


def _close(got, want, dt, what, rtol32=2e-5, rtol64=1e-12):
    g = got.to_numpy()
    assert g.dtype == want.dtype and g.shape == want.shape, (what, g.dtype, want.dtype, g.shape)
    if want.dtype.kind in "fc":
        r = rtol32 if want.dtype.name in ("float32", "complex64", "float16") else rtol64
        np.testing.assert_allclose(g, want, rtol=r, atol=0, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(g, want, err_msg=what)


# ---------------------------------------------------------------------------
# cumulative_prod
# ---------------------------------------------------------------------------
def test_cumulative_prod_every_dtype(device, rng, poisoned):  # noqa: F811
    for dt in _numeric(device) + dtypes_for(device, "b"):
        a = _data(rng, dt, (3, 37, 4)) if dt.kind != "b" else rng.random((3, 37, 4)) < 0.8
        x = pyaccel.asarray(a, device=device)
        for axis in (0, 1, -1):
            for inc in (False, True):
                got = pyaccel.cumulative_prod(x, axis=axis, include_initial=inc)
                acc = np.float32 if dt.name == "float16" else got.dtype.numpy  # f16: f32 sums
                with np.errstate(all="ignore"):
                    want = np.cumulative_prod(a, axis=axis, include_initial=inc,
                                              dtype=acc).astype(got.dtype.numpy)
                assert got.dtype is pyaccel.prod(x, axis=axis).dtype  # the prod dtype rule
                _close(got, want, dt, f"cumulative_prod {dt.name} axis={axis} inc={inc} on "
                                      f"{device.uri}")
    # dtype= casts first; 1-D needs no axis; a 0-length axis gives the identity only
    a = rng.integers(1, 9, size=(50,)).astype(np.int8)
    x = pyaccel.asarray(a, device=device)
    check(pyaccel.cumulative_prod(x, dtype=pyaccel.float32),
          np.cumulative_prod(a.astype(np.float32)).astype(np.float32), "arith",
          "cumulative_prod dtype=float32")
    e = pyaccel.asarray(np.zeros((2, 0), np.float32), device=device)
    check(pyaccel.cumulative_prod(e, axis=1, include_initial=True), np.ones((2, 1), np.float32),
          "exact", "empty axis, include_initial")
    with pytest.raises(ValueError, match="axis is required"):
        pyaccel.cumulative_prod(pyaccel.ones((2, 2), device=device, dtype=pyaccel.float32))
    with pytest.raises(ValueError, match="at least one dimension"):
        pyaccel.cumulative_prod(pyaccel.asarray(2.0, device=device, dtype=pyaccel.float32))


def test_cumulative_prod_long_axis(device, rng, poisoned):  # noqa: F811
    # 70 000 elements: chunked scans with per-chunk totals on GPUs (the loop cap); the
    # values are +-1, 2 and 1/2 so every product is exact (the few 2s and 1/2s keep the
    # exponent far inside float32's range: no underflow, which would depend on association)
    n = 70000
    v = rng.choice(np.array([1.0, -1.0, 2.0, 0.5]), size=(2, n), p=[0.499, 0.499, 0.001, 0.001])
    for name in ("float32", "int32"):
        a = v.astype(name) if name == "float32" else np.where(v > 1, 3, np.sign(v)).astype(np.int32)
        got = pyaccel.cumulative_prod(pyaccel.asarray(a, device=device), axis=1)
        want = np.cumulative_prod(a, axis=1, dtype=got.dtype.numpy)
        _close(got, want, got.dtype, f"cumulative_prod of {n} {name}", rtol32=0)


# ---------------------------------------------------------------------------
# diff
# ---------------------------------------------------------------------------
def test_diff_every_dtype(device, rng, poisoned):  # noqa: F811
    for dt in _numeric(device) + dtypes_for(device, "b"):
        a = rand(rng, dt, (4, 9, 3))
        x = pyaccel.asarray(a, device=device)
        for axis, n in ((0, 1), (1, 0), (1, 2), (-1, 4)):
            with np.errstate(all="ignore"):
                want = np.diff(a, n=n, axis=axis)
            got = pyaccel.diff(x, axis=axis, n=n)
            _close(got, want, dt, f"diff {dt.name} axis={axis} n={n} on {device.uri}",
                   rtol32=1e-6, rtol64=1e-15)
        pre = rand(rng, dt, (4, 2, 3))
        app = rand(rng, dt, (4, 1, 3))
        with np.errstate(all="ignore"):
            want = np.diff(a, axis=1, prepend=pre, append=app)
        got = pyaccel.diff(x, axis=1, prepend=pyaccel.asarray(pre, device=device),
                           append=pyaccel.asarray(app, device=device))
        _close(got, want, dt, f"diff {dt.name} prepend/append")
    a = rand(rng, pyaccel.float32, (6,))
    x = pyaccel.asarray(a, device=device)
    # Python scalar ends take x's dtype (weak scalars; NumPy makes them float64 arrays)
    check(pyaccel.diff(x, prepend=0.5, append=2.0),
          np.diff(a, prepend=np.float32(0.5), append=np.float32(2.0)), "arith", "diff with scalar ends")
    check(pyaccel.diff(x, n=9), np.diff(a, n=9), "exact", "n past the length: empty")
    with pytest.raises(ValueError, match="must match"):
        pyaccel.diff(x, prepend=pyaccel.ones((2, 2), device=device, dtype=pyaccel.float32))
    with pytest.raises(ValueError, match="n must be an int"):
        pyaccel.diff(x, n=-1)


# ---------------------------------------------------------------------------
# searchsorted, isin
# ---------------------------------------------------------------------------
def test_searchsorted_every_real_dtype(device, rng, poisoned):  # noqa: F811
    idt = pyaccel.__array_namespace_info__().default_dtypes(device=device)["indexing"]
    for dt in dtypes_for(device, "biuf"):
        a = np.sort(rand(rng, dt, (257,)))  # NaNs (specials) sort last, as NumPy's sort puts them
        v = rand(rng, dt, (5, 13))
        v.reshape(-1)[:4] = a[[0, 3, 100, -1]]  # ties with the sorted values
        x1, x2 = pyaccel.asarray(a, device=device), pyaccel.asarray(v, device=device)
        for side in ("left", "right"):
            got = pyaccel.searchsorted(x1, x2, side=side)
            assert got.dtype is idt
            check(got, np.searchsorted(a, v, side=side).astype(idt.numpy), "exact",
                  f"searchsorted {dt.name} side={side} on {device.uri}")
        perm = rng.permutation(a.size)
        s = np.argsort(a[perm], kind="stable")
        got = pyaccel.searchsorted(pyaccel.asarray(a[perm], device=device), x2,
                                   sorter=pyaccel.asarray(s, device=device))
        check(got, np.searchsorted(a[perm], v, sorter=s).astype(idt.numpy), "exact",
              f"searchsorted {dt.name} sorter")
    a = np.sort(rng.standard_normal(40)).astype(np.float32)
    x1 = pyaccel.asarray(a, device=device)
    got = pyaccel.searchsorted(x1, 0.25)
    assert got.ndim == 0 and int(got) == np.searchsorted(a, np.float32(0.25))
    # mixed dtypes compare in the promoted dtype; an empty x1 gives zeros
    ints = np.sort(rng.integers(-50, 50, 30)).astype(np.int32)
    check(pyaccel.searchsorted(pyaccel.asarray(ints, device=device), pyaccel.asarray(a * 30, device=device)),
          np.searchsorted(ints, a * 30).astype(idt.numpy), "exact", "int32 x1, float32 x2")
    empty = pyaccel.asarray(np.zeros(0, np.float32), device=device)
    check(pyaccel.searchsorted(empty, x1), np.zeros(40, idt.numpy), "exact", "empty x1")
    with pytest.raises(ValueError, match="sorter must be"):
        pyaccel.searchsorted(x1, x1, sorter=x1)
    with pytest.raises(ValueError, match="1-D"):
        pyaccel.searchsorted(pyaccel.reshape(x1, (4, 10)), x1)


def test_isin(device, rng, poisoned):  # noqa: F811
    for dt in dtypes_for(device, "biufc"):
        a = rand(rng, dt, (6, 7))
        b = rand(rng, dt, (9,))
        b[:3] = a.reshape(-1)[[0, 5, 11]]
        x1, x2 = pyaccel.asarray(a, device=device), pyaccel.asarray(b, device=device)
        for inv in (False, True):
            check(pyaccel.isin(x1, x2, invert=inv), np.isin(a, b, invert=inv), "exact",
                  f"isin {dt.name} invert={inv} on {device.uri}")
    x = pyaccel.asarray(np.arange(10, dtype=np.int32), device=device)
    check(pyaccel.isin(x, 3), np.isin(np.arange(10), 3), "exact", "scalar x2")
    got = pyaccel.isin(4, x)
    assert got.ndim == 0 and bool(got)
    check(pyaccel.isin(x, pyaccel.asarray(np.zeros(0, np.int32), device=device)),
          np.zeros(10, bool), "exact", "empty x2")


def test_broadcast_shapes():
    assert pyaccel.broadcast_shapes((3, 1), (4,), ()) == (3, 4)
    assert pyaccel.broadcast_shapes() == ()
    with pytest.raises(ValueError):
        pyaccel.broadcast_shapes((3,), (4,))


# ---------------------------------------------------------------------------
# nextafter, reciprocal, count_nonzero, take_along_axis
# ---------------------------------------------------------------------------
def test_nextafter_bit_exact(device, rng, poisoned):  # noqa: F811
    for dt, bits in ((pyaccel.float32, np.uint32), (pyaccel.float64, np.uint64)):
        if dt not in dtypes_for(device, "f"):
            continue
        npdt = np_dtype(dt)
        fi = np.finfo(npdt)
        special = np.array([0.0, -0.0, fi.tiny, -fi.tiny, fi.smallest_subnormal,
                            -fi.smallest_subnormal, fi.max, -fi.max, np.inf, -np.inf, np.nan,
                            1.0, -1.0], npdt)
        x = np.concatenate([special, rand(rng, dt, (300,))])
        x = np.repeat(x, 3)
        y = np.tile(np.array([np.inf, -np.inf, 0.0], npdt), x.size // 3)
        y[::7] = np.nan
        y[1::11] = x[1::11]  # x == y gives y
        got = pyaccel.nextafter(pyaccel.asarray(x, device=device), pyaccel.asarray(y, device=device))
        with np.errstate(over="ignore"):
            want = np.nextafter(x, y)
        g = got.to_numpy()
        same = (g.view(bits) == want.view(bits)) | (np.isnan(g) & np.isnan(want))
        bad = np.flatnonzero(~same)
        assert not bad.size, (f"nextafter {dt.name} on {device.uri}: x={x[bad[0]]!r} y={y[bad[0]]!r} "
                              f"got {g[bad[0]]!r} want {want[bad[0]]!r}")
        check(pyaccel.nextafter(pyaccel.asarray(x[:20], device=device), 2.0),
              np.nextafter(x[:20], npdt.type(2.0)), "exact", "nextafter with a Python scalar")


def test_reciprocal_special_values(device, poisoned):  # noqa: F811
    for dt in dtypes_for(device, "fc"):
        npdt = np_dtype(dt)
        v = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 2.0, -4.0, 3.0, 1e-3], npdt)
        if dt.kind == "c":
            v = v + np.array([0, 1, 0, 2j, 0, -1, 0.5, 0, 1e3], npdt) * 1
        got = pyaccel.reciprocal(pyaccel.asarray(v, device=device))
        with np.errstate(all="ignore"):
            want = np.reciprocal(v)
        g = got.to_numpy()
        assert g.dtype == want.dtype
        if dt.kind == "f":
            fin = np.isfinite(want)
            assert np.array_equal(np.signbit(g[~np.isnan(want)]), np.signbit(want[~np.isnan(want)]))
            np.testing.assert_array_equal(np.isnan(g), np.isnan(want))
            np.testing.assert_array_equal(g[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])
            assert_allclose_dtype(g[fin], want[fin], npdt, rtol=1e-6 if dt.itemsize == 4 else 0)
        else:
            fin = np.isfinite(want)
            np.testing.assert_allclose(g[fin], want[fin], rtol=1e-6 if dt.itemsize == 8 else 1e-15)
    ints = pyaccel.asarray(np.array([1, 2, -4], np.int32), device=device)
    got = pyaccel.reciprocal(ints)  # integer input: the default float (Array API)
    assert got.dtype.kind == "f"
    np.testing.assert_allclose(got.to_numpy(), [1.0, 0.5, -0.25])


def test_count_nonzero_every_dtype(device, rng, poisoned):  # noqa: F811
    idt = pyaccel.__array_namespace_info__().default_dtypes(device=device)["indexing"]
    for dt in dtypes_for(device, "biufc"):
        a = rand(rng, dt, (5, 6, 7))
        a.reshape(-1)[::3] = 0  # zeros to skip (NaN counts as nonzero)
        x = pyaccel.asarray(a, device=device)
        for axis, keep in ((None, False), (1, False), ((0, 2), True), (-1, True)):
            got = pyaccel.count_nonzero(x, axis=axis, keepdims=keep)
            want = np.asarray(np.count_nonzero(a, axis=axis, keepdims=keep)).astype(idt.numpy)
            check(got, want, "exact", f"count_nonzero {dt.name} axis={axis} on {device.uri}")


def test_take_along_axis_every_dtype(device, rng, poisoned):  # noqa: F811
    for dt in dtypes_for(device, "biufc"):
        a = rand(rng, dt, (4, 9, 3))
        x = pyaccel.asarray(a, device=device)
        for axis in (0, 1, -1):
            n = a.shape[axis]
            shape = list(a.shape)
            shape[axis] = 5
            idx = rng.integers(-n, n, size=shape)
            got = pyaccel.take_along_axis(x, pyaccel.asarray(idx, device=device), axis=axis)
            check(got, np.take_along_axis(a, idx, axis=axis), "exact",
                  f"take_along_axis {dt.name} axis={axis} on {device.uri}")
        idx = rng.integers(0, 9, size=(1, 4, 3))  # broadcast against x outside the axis
        got = pyaccel.take_along_axis(x, pyaccel.asarray(idx, device=device), axis=1)
        check(got, np.take_along_axis(a, np.broadcast_to(idx, (4, 4, 3)), axis=1), "exact",
              f"take_along_axis broadcast {dt.name}")
    # the sorting idiom: argsort then take_along_axis
    a = rng.standard_normal((6, 11)).astype(np.float32)
    x = pyaccel.asarray(a, device=device)
    check(pyaccel.take_along_axis(x, pyaccel.argsort(x, axis=1), axis=1), np.sort(a, axis=1),
          "exact", "take_along_axis(argsort)")


# ---------------------------------------------------------------------------
# the inspection API, versions, creation bounds
# ---------------------------------------------------------------------------
def test_versions_and_inspection(device):
    x = pyaccel.ones(3, device=device, dtype=pyaccel.float32)
    assert pyaccel.__array_api_version__ == "2024.12"
    for v in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
        assert x.__array_namespace__(api_version=v) is pyaccel
    with pytest.raises(ValueError, match="2024.12"):
        x.__array_namespace__(api_version="2020.10")
    info = pyaccel.__array_namespace_info__()
    caps = info.capabilities()
    assert caps["max dimensions"] == 64 and caps["boolean indexing"] is True
    y = pyaccel.ones((1,) * 64, device=device, dtype=pyaccel.float32)
    assert (y + 1).to_numpy().shape == (1,) * 64
    assert isinstance(info.devices(), list)  # 2024.12: a list; 2025.12: a tuple
    ns = x.__array_namespace__(api_version="2025.12")
    assert ns.__array_api_version__ == "2025.12" and ns.sum is pyaccel.sum
    assert isinstance(ns.__array_namespace_info__().devices(), tuple)
    g = ns.meshgrid(pyaccel.arange(3, device=device), pyaccel.arange(2, device=device))
    assert isinstance(g, tuple) and g[0].shape == (2, 3)
    assert isinstance(pyaccel.meshgrid(pyaccel.arange(3, device=device)), list)
    assert isinstance(ns.broadcast_arrays(x, x), tuple)
    # result_type / can_cast with arrays follow the array's device (2024.12)
    b = pyaccel.asarray([True], device=device)
    want_int = info.default_dtypes(device=device)["integral"]
    assert pyaccel.result_type(b, 1) is want_int
    assert pyaccel.result_type(x, 1.5, 1j) is pyaccel.complex64
    assert pyaccel.can_cast(x, pyaccel.float64) == (pyaccel.float64 in info.dtypes(device=device).values())


def test_linspace_arange_take_0d_arrays_and_numpy_scalars(device, poisoned):  # noqa: F811
    f = pyaccel.float32
    lo = pyaccel.asarray(1.5, device=device, dtype=f)
    hi = pyaccel.asarray(4.0, device=device, dtype=f)
    got = pyaccel.linspace(lo, hi, 6)
    assert got.device == device
    np.testing.assert_allclose(got.to_numpy(), np.linspace(1.5, 4.0, 6), rtol=1e-6)
    got = pyaccel.linspace(np.float32(0), np.int64(2), np.int64(5), dtype=f, device=device)
    check(got, np.linspace(0, 2, 5, dtype=np.float32), "arith", "linspace NumPy scalars")
    n = pyaccel.asarray(7, device=device, dtype=pyaccel.int32)
    got = pyaccel.arange(n)
    assert got.device == device and got.dtype.kind == "i"
    np.testing.assert_array_equal(got.to_numpy(), np.arange(7))
    got = pyaccel.arange(np.int16(2), np.int64(11), np.int8(3), device=device)
    np.testing.assert_array_equal(got.to_numpy(), np.arange(2, 11, 3))
    got = pyaccel.arange(np.float32(0.5), 3, device=device)  # a float bound: the default float
    assert got.dtype.kind == "f"
    np.testing.assert_allclose(got.to_numpy(), np.arange(0.5, 3))
    np.testing.assert_allclose(pyaccel.arange(np.array(4.0), device=device).to_numpy(), np.arange(4.0))
    with pytest.raises(TypeError, match="0-d array"):
        pyaccel.arange(pyaccel.ones(2, device=device, dtype=f))
    with pytest.raises(TypeError, match="start must be"):
        pyaccel.linspace(pyaccel.asarray(True, device=device), 1.0, 3)
    with pytest.raises(TypeError):
        pyaccel.arange(True)
