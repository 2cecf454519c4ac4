"""NumPy's protocols on pyaccel arrays (docs/interop.md, "NumPy's protocols"): a NumPy call
gives NumPy's answer. Twins run on the device; everything else is NumPy on the host copy
(NumPy's result); writes NumPy makes into an argument reach the pyaccel array. Every device,
fresh random data, compared with the same call on NumPy arrays.
"""

from __future__ import annotations

import numpy as np
import pytest

import pyaccel as xp


def _x(device, a):
    return xp.asarray(a, device=device)


def test_functions_without_a_twin_give_numpys_result(device, rng):
    a = rng.standard_normal((5, 4))
    w = rng.random(4)
    ints = rng.integers(0, 5, 30)
    x, wx, ix = _x(device, a), _x(device, w), _x(device, ints)
    cases = [
        (np.average(x, axis=1, weights=wx), np.average(a, axis=1, weights=w)),
        (np.unique(ix), np.unique(ints)),
        (np.unique(ix, return_counts=True)[1], np.unique(ints, return_counts=True)[1]),
        (np.atleast_1d(_x(device, 3.5)), np.atleast_1d(3.5)),
        (np.atleast_2d(x[0]), np.atleast_2d(a[0])),
        (np.tile(x[0], 3), np.tile(a[0], 3)),
        (np.percentile(x, [10, 90], axis=0), np.percentile(a, [10, 90], axis=0)),
        (np.median(x), np.median(a)),
        (np.cov(x), np.cov(a)),
        (np.argwhere(x > 0), np.argwhere(a > 0)),
        (np.bincount(ix), np.bincount(ints)),
        (np.linalg.norm(x, axis=1), np.linalg.norm(a, axis=1)),
        (np.round(x, 2), np.round(a, 2)),  # decimals: no device twin
        (np.add.outer(x[0], x[1]), np.add.outer(a[0], a[1])),
        (np.add.reduceat(x[0], [0, 2]), np.add.reduceat(a[0], [0, 2])),
        (np.sum(x, where=x > 0), np.sum(a, where=a > 0)),
    ]
    for got, want in cases:
        assert not isinstance(got, xp.Array), type(got)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.allclose(x, a) and np.array_equal(ix, ints) and not np.array_equal(x, a + 1)
    assert np.isclose(x, a).all()
    np.testing.assert_allclose(x, a)  # numpy.testing formats pyaccel values
    with pytest.raises(AssertionError, match="Mismatched elements"):
        np.testing.assert_allclose(x, a + 1)
    with pytest.raises(AssertionError):
        np.testing.assert_array_almost_equal(_x(device, 0.5), 0.25)


def test_twins_stay_on_the_device(device, rng):
    a = rng.standard_normal((4, 6)).astype(np.float32)
    x = _x(device, a)
    for got, want in [(np.exp(x), np.exp(a)), (np.sum(x, axis=0), a.sum(0)),
                      (np.concatenate([x, x]), np.concatenate([a, a])),
                      (np.add.accumulate(x, axis=1), np.add.accumulate(a, axis=1)),
                      (np.cumprod(x, axis=0), np.cumprod(a, axis=0)),
                      (np.diff(x, axis=1), np.diff(a, axis=1)),
                      (np.maximum(x, np.float32(0.5)), np.maximum(a, np.float32(0.5)))]:
        assert isinstance(got, xp.Array) and got.device == device
        np.testing.assert_allclose(got.to_numpy(), want, rtol=2e-6, atol=1e-6)
    assert np.count_nonzero(x > 0) == np.count_nonzero(a > 0)
    assert np.may_share_memory(x, xp.reshape(x, (6, 4)))
    assert not np.may_share_memory(x, xp.asarray(x, copy=True))
    assert np.may_share_memory(x, np.asarray(x)) == (device.uri == "cpu:0")  # cpu:0: a view


def test_where_takes_numpys_truth_values(device, rng):
    a = rng.standard_normal(20)
    a[::4] = 0.0
    a[1] = np.nan
    x = _x(device, a)
    got = np.where(x, 1, 0)  # a float condition: nonzero (and NaN) is True, as in NumPy
    want = np.where(a, 1, 0)
    assert isinstance(got, xp.Array) and got.dtype.name == want.dtype.name
    np.testing.assert_array_equal(got.to_numpy(), want)
    got = np.where(x > 0, x, np.float64(-1.0))
    np.testing.assert_array_equal(got.to_numpy(), np.where(a > 0, a, -1.0))


def test_numpy_scalars_and_format(device):
    x = xp.asarray(0.1, dtype=xp.float32, device=device)
    r = np.float64(2.5) * x  # NEP 50: the NumPy scalar is a strong float64 operand
    want = np.float64(2.5) * np.float32(0.1)
    assert isinstance(r, xp.Array) and r.dtype.name == want.dtype.name == "float64"
    assert float(r) == float(want)
    assert format(r, "g") == format(want, "g") and f"{r:.3e}" == f"{want:.3e}"
    assert format(xp.asarray(7, device=device), "04d") == "0007"
    assert format(xp.asarray([1.0, 2.0], device=device), "") == str(xp.asarray([1.0, 2.0], device=device))
    with pytest.raises(TypeError, match="format string"):
        format(xp.asarray([1.0, 2.0], device=device), ".2f")
    assert (x * np.float64(2.5)).dtype is xp.float64  # the same on either side (a float subclass)
    assert (x * 2.5).dtype is xp.float32  # a Python float stays weak
    z = xp.asarray([1.0, 2.0], dtype=xp.float32, device=device)
    buf = z.__pyaccel_buffer__()
    z += np.float64(0.5)  # in place, NumPy casts to z's dtype: z stays float32, same buffer
    assert z.dtype is xp.float32 and z.__pyaccel_buffer__() is buf
    np.testing.assert_array_equal(z.to_numpy(), [1.5, 2.5])
    y = np.int8(3) + xp.asarray([1, 2], dtype=xp.int8, device=device)
    assert y.dtype is xp.int8
    np.testing.assert_array_equal(y.to_numpy(), [4, 5])


def test_mixing_numpy_arrays_gives_numpys_result(device, rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal(4)
    x = _x(device, a)
    for got, want in [(x + b, a + b), (b * x, b * a), (np.maximum(x, b), np.maximum(a, b)),
                      (np.matmul(x, b), a @ b)]:
        assert type(got) is np.ndarray and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_writes_reach_the_pyaccel_array(device, rng):
    a = rng.standard_normal((4, 4))
    y = _x(device, a.copy())
    assert np.exp(y, out=y) is y  # a twin with out=: computed on the device, copied in
    np.testing.assert_allclose(y.to_numpy(), np.exp(a))
    z = xp.zeros(4, dtype=xp.float64, device=device)
    assert np.sum(_x(device, a), axis=0, out=z) is z
    np.testing.assert_allclose(z.to_numpy(), a.sum(0))
    with pytest.raises(TypeError, match="same_kind"):
        np.exp(_x(device, a), out=xp.zeros((4, 4), dtype=xp.int32, device=device))
    for f in (lambda t, h: np.copyto(t, 7.0, where=h > 0),
              lambda t, h: np.put(t, [0, 5, 15], [-1.0, -2.0, -3.0]),
              lambda t, h: np.place(t, h < 0, [9.0]),
              lambda t, h: np.putmask(t, h > 1, 0.5),
              lambda t, h: np.fill_diagonal(t, 4.0),
              lambda t, h: np.put_along_axis(t, np.array([[1], [0], [3], [2]]), 8.0, axis=1),
              lambda t, h: np.add.at(t, (np.array([0, 0, 2]), np.array([1, 1, 3])), 1.0),
              lambda t, h: np.negative(t, out=t, where=h > 0)):  # where=: the host path
        t, h = _x(device, a.copy()), a.copy()
        f(t, a)
        f(h, a)
        np.testing.assert_array_equal(t.to_numpy(), h)
