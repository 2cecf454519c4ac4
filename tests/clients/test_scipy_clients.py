"""SciPy as a real client (``SCIPY_ARRAY_API=1``): functions of ``special``, ``stats``,
``signal``, ``fft`` and ``cluster`` called on pyaccel arrays on every device, compared with the
same call on NumPy arrays (fresh random data) and checked to return pyaccel arrays on that device.

Two ways of calling, both without ``pyaccel.using`` around the calls:

* ``test_scipy_function``: as SciPy's own CI runs a GPU backend. Its conftest makes the device
  under test the library's *default* device (``SCIPY_DEVICE`` -> ``torch.set_default_device``,
  ``jax.config.update("jax_default_device", ...)``; CuPy has only the current device), so
  arrays SciPy makes without ``device=`` land there. pyaccel's default device is the same
  thing (``PYACCEL_DEVICE`` for a process, ``pyaccel.set_device`` here, once per test).
* ``test_scipy_function_off_default_device``: inputs on a GPU while the default device stays
  ``cpu:0`` (SciPy's ``devices``-fixture tests do this). Helpers SciPy makes without
  ``device=`` (``stats.pearsonr``'s ``n = xp.asarray(length, dtype=x.dtype)``) follow the
  committed inputs (pyaccel's committed rule, docs/arrays.md). Eight functions still return
  their result on ``cpu:0``: SciPy computes them on the host (``np.asarray(x)``, NumPy,
  ``xp.asarray(result)`` with no ``device=``), so the result can only go to the default device;
  array-api-strict's second device proves that this is SciPy's CPU-only path
  (``test_host_round_trip_is_scipys``), and they stay strict xfails naming the SciPy line.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import pyaccel as xp

scipy = pytest.importorskip("scipy")
from scipy import cluster, fft, signal, special, stats  # noqa: E402
from scipy.cluster import vq  # noqa: E402,F401

# name -> (function of a converter X, input shapes); X turns a NumPy array into the namespace's
CASES = {
    "special.erf": lambda X, a, b, m: special.erf(X(a)),
    "special.expit": lambda X, a, b, m: special.expit(X(a)),
    "special.logsumexp": lambda X, a, b, m: special.logsumexp(X(m), axis=1),
    "special.log_softmax": lambda X, a, b, m: special.log_softmax(X(a)),
    "special.ndtr": lambda X, a, b, m: special.ndtr(X(a)),
    "special.xlogy": lambda X, a, b, m: special.xlogy(X(np.abs(a)), X(np.abs(b))),
    "stats.pearsonr": lambda X, a, b, m: stats.pearsonr(X(a), X(b)).statistic,
    "stats.ttest_1samp": lambda X, a, b, m: stats.ttest_1samp(X(a), 0.0).statistic,
    "stats.zscore": lambda X, a, b, m: stats.zscore(X(m), axis=0),
    "stats.moment": lambda X, a, b, m: stats.moment(X(a), order=3),
    "stats.skew": lambda X, a, b, m: stats.skew(X(m), axis=0),
    "stats.kurtosis": lambda X, a, b, m: stats.kurtosis(X(a)),
    "stats.variation": lambda X, a, b, m: stats.variation(X(np.abs(a) + 1)),
    "stats.sem": lambda X, a, b, m: stats.sem(X(a)),
    "stats.gmean": lambda X, a, b, m: stats.gmean(X(np.abs(a) + 0.1)),
    "stats.hmean": lambda X, a, b, m: stats.hmean(X(np.abs(a) + 0.1)),
    "stats.entropy": lambda X, a, b, m: stats.entropy(X(np.abs(a))),
    "signal.convolve": lambda X, a, b, m: signal.convolve(X(a), X(b[:8])),
    "signal.correlate": lambda X, a, b, m: signal.correlate(X(a), X(b[:8])),
    "signal.fftconvolve": lambda X, a, b, m: signal.fftconvolve(X(a), X(b[:8])),
    "signal.detrend": lambda X, a, b, m: signal.detrend(X(a)),
    "fft.fft": lambda X, a, b, m: fft.fft(X(a)),
    "fft.rfft": lambda X, a, b, m: fft.rfft(X(a)),
    "fft.irfft": lambda X, a, b, m: fft.irfft(X(a)),
    "fft.fftshift": lambda X, a, b, m: fft.fftshift(X(a)),
    "cluster.vq.whiten": lambda X, a, b, m: cluster.vq.whiten(X(m)),
    "cluster.vq.vq": lambda X, a, b, m: cluster.vq.vq(X(m), X(m[:3]))[0],
}


def _host(r):
    if isinstance(r, xp.Array):
        return np.asarray(xp.asarray(r, device="cpu"))
    return np.asarray(r)


# SciPy (1.17.1) computes these on the host and hands the NumPy result back with
# xp.asarray(result) and no device=: the result goes to the default device, whatever device the
# input was on. name -> (SciPy file, the line returning the host result). convolve, correlate,
# detrend and vq are declared cpu_only=True in SciPy's xp_capabilities (its own suite skips them
# on GPU backends; CuPy and JAX are delegated to cupyx / jax.scipy). erf, expit, ndtr and entr
# (under stats.entropy) take this path for every namespace without a native special module
# (torch, CuPy and JAX have one); SciPy's own test_entropy skips array-api-strict for it
# ("special functions don't work with 'device1'", stats/tests/test_device_dtype.py).
HOST_ROUND_TRIP = {
    "special.erf": ("scipy/special/_support_alternative_backends.py", "return xp.asarray(out)"),
    "special.expit": ("scipy/special/_support_alternative_backends.py", "return xp.asarray(out)"),
    "special.ndtr": ("scipy/special/_support_alternative_backends.py", "return xp.asarray(out)"),
    "stats.entropy": ("scipy/special/_support_alternative_backends.py", "return xp.asarray(out)"),
    "signal.convolve": ("scipy/signal/_signaltools.py", "return xp.asarray(out)"),
    "signal.correlate": ("scipy/signal/_signaltools.py", "return xp.asarray(out)"),
    "signal.detrend": ("scipy/signal/_signaltools.py", "return xp.asarray(ret)"),
    "cluster.vq.vq": ("scipy/cluster/vq.py", "return xp.asarray(result[0]), xp.asarray(result[1])"),
}


@pytest.fixture
def as_default(device):
    """``device`` as the process default for the test, as SciPy's conftest sets torch's / JAX's
    default device to ``SCIPY_DEVICE`` (``PYACCEL_DEVICE`` does this for a whole process)."""
    from pyaccel import registry

    before = registry._global_default[0]
    xp.set_device(device)
    try:
        yield device
    finally:
        registry._global_default[0] = before


def _check(name: str, dtype: str, device, rng) -> None:
    assert os.environ.get("SCIPY_ARRAY_API") == "1"
    if dtype not in {d.name for d in xp.__array_namespace_info__().dtypes(device=device).values()}:
        pytest.fail(f"{device.uri} does not hold {dtype}")
    a = rng.standard_normal(64).astype(dtype)
    b = rng.standard_normal(64).astype(dtype)
    m = rng.standard_normal((20, 4)).astype(dtype)
    f = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = np.asarray(f(lambda v: np.asarray(v), a, b, m))
        out = f(lambda v: xp.asarray(v, device=device), a, b, m)
    assert isinstance(out, xp.Array), f"{name} returned {type(out).__name__}, not a pyaccel Array"
    assert out.device == device, f"{name} result is on {out.device.uri}, not {device.uri}"
    got = _host(out)
    assert got.shape == ref.shape
    assert got.dtype == ref.dtype, f"{name}: {got.dtype} vs NumPy's {ref.dtype}"
    rtol, atol = (2e-4, 2e-5) if dtype == "float32" else (1e-9, 1e-12)
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol * max(1.0, float(np.max(np.abs(ref)))))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_scipy_function(name: str, dtype: str, device, as_default, rng) -> None:
    """As SciPy's CI calls a GPU backend: the device under test is the default device."""
    assert xp.get_device() is device
    _check(name, dtype, device, rng)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_scipy_function_off_default_device(name: str, dtype: str, device, rng, request) -> None:
    """Inputs on ``device`` while the default device is another one (``cpu:0``)."""
    from pyaccel import registry

    before = registry._global_default[0]
    xp.set_device("cpu:0")
    try:
        if device.uri.startswith("cpu:"):
            pytest.skip("the inputs are on the default device")
        if name in HOST_ROUND_TRIP:
            where, line = HOST_ROUND_TRIP[name]
            request.applymarker(pytest.mark.xfail(strict=True, reason=(
                f"SciPy's host round trip: {where} `{line}` (no device=) puts the result on the "
                "default device; array-api-strict cannot run it off its default device at all "
                "(test_host_round_trip_is_scipys)")))
        _check(name, dtype, device, rng)
    finally:
        registry._global_default[0] = before


@pytest.mark.parametrize("name", sorted(HOST_ROUND_TRIP))
def test_host_round_trip_is_scipys(name: str, rng) -> None:
    """Under array-api-strict's device semantics (a second device, ``Device("device1")``, whose
    arrays refuse ``np.asarray``) the functions of HOST_ROUND_TRIP cannot keep a non-default
    device either: SciPy converts the input to NumPy on the way to the line named there."""
    strict = pytest.importorskip("array_api_strict")
    import traceback

    d1 = strict.Device("device1")
    a = rng.standard_normal(64)
    b = rng.standard_normal(64)
    m = rng.standard_normal((20, 4))
    with pytest.raises(RuntimeError, match="Can't convert array on the .*device1.* to a NumPy array") as ei:
        CASES[name](lambda v: strict.asarray(v, device=d1), a, b, m)
    where = HOST_ROUND_TRIP[name][0]
    files = [fs.filename.replace("\\", "/") for fs in traceback.extract_tb(ei.tb)]
    assert any(f.endswith(where) for f in files), f"{name}: the conversion is not in {where}: {files}"
    # on its default device array-api-strict runs it, and the result is on that device
    out = CASES[name](lambda v: strict.asarray(v), a, b, m)
    assert out.device == strict.Device("CPU_DEVICE")
