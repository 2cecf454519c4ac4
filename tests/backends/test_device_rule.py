"""The committed device rule (pyaccel/placement.py, docs/arrays.md): arrays made without
``device=`` follow the committed arrays they meet; committed arrays on two devices raise a
clear error; SciPy's stats functions then work on a GPU without ``pyaccel.using``.

Every test pairs the device under test with a second device (cpu:0, or for cpu:0 the first
other device here); arrays "made without device=" are made on that second device through
``pyaccel.using``, as SciPy's helpers land on the default device.
"""

from __future__ import annotations

import numpy as np
import pytest

import pyaccel as xp

F32 = xp.float32


@pytest.fixture
def other(device):
    """A second device: cpu:0, or for cpu:0 another one (skipped where there is none)."""
    if device.uri != "cpu:0":
        return xp.device("cpu:0")
    rest = [d.uri for d in xp.devices() if d.uri != "cpu:0"]
    if not rest:
        pytest.skip("only cpu:0 here: the rule needs two devices")
    return xp.device(rest[0])


def _free(other, value, dtype=F32):
    """An array made without device= (it lands on ``other``, the current device there)."""
    with xp.using(other):
        return xp.asarray(value, dtype=dtype)


def test_uncommitted_follows_committed(device, other, rng):
    a = rng.standard_normal(12).astype(np.float32)
    x = xp.asarray(a, device=device)
    n = _free(other, 3.0)
    assert n.device == other and not n._committed and x._committed
    for got, want in [(x * n, a * 3), (n - x, 3 - a), (xp.divide(x, n), a / 3),
                      (xp.where(_free(other, a > 0, xp.bool), x, n), np.where(a > 0, a, 3)),
                      (xp.concat([x, _free(other, [1.0, 2.0])]), np.concatenate([a, [1, 2]])),
                      (xp.clip(x, _free(other, -0.5), 0.5), np.clip(a, -0.5, 0.5)),
                      (xp.stack([x, _free(other, a)]), np.stack([a, a]))]:
        assert got.device == device and got._committed
        np.testing.assert_allclose(got.to_numpy(), want.astype(np.float32), rtol=1e-6)
    m = xp.reshape(x, (3, 4))
    v = _free(other, rng.standard_normal(4).astype(np.float32))
    got = xp.matmul(m, v)
    assert got.device == device
    vv = v.to_numpy()
    scale = np.abs(a.reshape(3, 4)) @ np.abs(vv)  # a dot product's error scales with its terms
    np.testing.assert_allclose(got.to_numpy(), a.reshape(3, 4) @ vv, rtol=0, atol=float(scale.max()) * 1e-6)
    s = xp.sort(x)
    got = xp.searchsorted(s, _free(other, [0.0, 1.0]))
    assert got.device == device
    np.testing.assert_array_equal(got.to_numpy(), np.searchsorted(np.sort(a), [0.0, 1.0]))


def test_results_of_uncommitted_arrays_stay_uncommitted(device, other, rng):
    a = rng.standard_normal(8).astype(np.float32)
    x = xp.asarray(a, device=device)
    n = _free(other, 8.0)
    half = n / 2 - 1  # SciPy: ab = n / 2 - 1
    total = xp.sum(_free(other, [1.0, 2.0, 3.0]))
    assert not half._committed and not total._committed and half.device == other
    got = x * half + total
    assert got.device == device and got._committed
    np.testing.assert_allclose(got.to_numpy(), a * 3 + 6, rtol=1e-6)
    made = xp.zeros(3, dtype=F32)
    assert not made._committed
    assert xp.zeros(3, dtype=F32, device=device)._committed
    assert xp.zeros_like(x)._committed  # derived from a committed array


def test_committed_arrays_on_two_devices_raise(device, other, rng):
    a = xp.asarray(rng.standard_normal(5).astype(np.float32), device=device)
    b = xp.asarray(rng.standard_normal(5).astype(np.float32), device=other)
    for f in (lambda: a + b, lambda: xp.concat([a, b]), lambda: xp.where(a > 0, a, b),
              lambda: xp.linalg.vecdot(a, b)):
        with pytest.raises(ValueError, match="different devices") as ei:
            f()
        msg = str(ei.value)
        assert "placed there explicitly" in msg and "to_device(" in msg, msg
        assert device.uri in msg and other.uri in msg
    np.testing.assert_allclose((a + a.to_device(device)).to_numpy(), 2 * a.to_numpy())  # usable
    got = a + b.to_device(device)  # the fix the message names
    assert got.device == device


def test_uncommitted_arrays_on_two_devices_raise(device, other):
    with xp.using(device):
        u1 = xp.asarray([1.0, 2.0], dtype=F32)
    u2 = _free(other, [3.0, 4.0])
    with pytest.raises(ValueError, match="none was placed explicitly"):
        u1 + u2
    # an explicit placement commits the array: then the other follows it
    assert (u1.to_device(device) + u2).device == device
    assert u1._committed


def test_writes_into_arrays(device, other, rng):
    a = rng.standard_normal(6).astype(np.float32)
    x = xp.asarray(a, device=device)
    x[1:3] = _free(other, [10.0, 20.0])  # the value follows x
    a[1:3] = [10, 20]
    np.testing.assert_allclose(x.to_numpy(), a)
    with pytest.raises(ValueError, match="different devices"):
        x[...] = xp.ones(6, dtype=F32, device=other)
    u = _free(other, np.ones(6, np.float32))
    u += x  # computed where x is, written back into u (on its own device)
    assert u.device == other
    np.testing.assert_allclose(u.to_numpy(), a + 1)


def _stats_match(x, y, a, b, device, dtype):
    scipy_stats = pytest.importorskip("scipy.stats")
    r = scipy_stats.pearsonr(x, y)  # makes n = xp.asarray(length, dtype=x.dtype): no device
    t = scipy_stats.ttest_1samp(x, 0.0)
    rtol = 2e-4 if dtype == "float32" else 1e-9
    for got, want, on_device in [(r.statistic, scipy_stats.pearsonr(a, b).statistic, True),
                                 (r.pvalue, scipy_stats.pearsonr(a, b).pvalue, False),
                                 (t.statistic, scipy_stats.ttest_1samp(a, 0.0).statistic, True),
                                 (t.pvalue, scipy_stats.ttest_1samp(a, 0.0).pvalue, False)]:
        assert isinstance(got, xp.Array) and got.dtype.name == dtype
        # the statistics are computed on the device; SciPy's p-values come from its NumPy
        # fallback for special functions (xp.asarray(result), no device=): they land on the
        # current device, uncommitted, and follow the next committed array they meet
        if on_device:
            assert got.device == device and got._committed
        np.testing.assert_allclose(xp.asarray(got, device="cpu").to_numpy(), want, rtol=rtol)


def test_scipy_stats_on_the_device_without_using(device, rng):
    a = rng.standard_normal(64).astype(np.float32)
    b = (0.5 * a + rng.standard_normal(64)).astype(np.float32)
    _stats_match(xp.asarray(a, device=device), xp.asarray(b, device=device), a, b, device,
                 "float32")


def test_scipy_stats_float64_helpers_from_another_device(rng):
    # float64 once (on a GPU it compiles SciPy's special functions in emulated float64, ~15 s
    # per device; tests/clients covers that): data committed to cpu:0 while the current device
    # is a GPU, so every helper SciPy makes without device= starts there and must follow
    gpus = [d.uri for d in xp.devices() if d.uri != "cpu:0"]
    if not gpus:
        pytest.skip("only cpu:0 here: the rule needs two devices")
    cpu = xp.device("cpu:0")
    a = rng.standard_normal(64)
    b = 0.5 * a + rng.standard_normal(64)
    with xp.using(gpus[0]):
        _stats_match(xp.asarray(a, device=cpu), xp.asarray(b, device=cpu), a, b, cpu, "float64")
