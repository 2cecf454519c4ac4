"""SciPy as a real client (``SCIPY_ARRAY_API=1``): functions of ``special``, ``stats``,
``signal``, ``fft`` and ``cluster`` called on pyaccel arrays on every device, compared with the
same call on NumPy arrays (fresh random data) and checked to return pyaccel arrays on that device.

SciPy creates some intermediate arrays without ``device=`` (e.g. ``stats.pearsonr`` makes
``n = xp.asarray(length, dtype=x.dtype)``); pyaccel's uncommitted-device rule (docs/arrays.md)
moves them to the device of the arrays they meet, so the calls run as SciPy makes them, with
no default device set around them.
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


# Called without a default device, these return their result on cpu:0 for GPU inputs (SciPy's
# path for namespaces it does not special-case makes the result with xp.asarray and no device=,
# and an uncommitted array that meets no committed one stays on the default device): known,
# reported here (strict: a fix shows as XPASS), not hidden behind pyaccel.using.
RESULT_ON_DEFAULT_DEVICE = {"cluster.vq.vq", "signal.convolve", "signal.correlate", "signal.detrend",
                            "special.erf", "special.expit", "special.ndtr", "stats.entropy"}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_scipy_function(name: str, dtype: str, device, rng, request) -> None:
    assert os.environ.get("SCIPY_ARRAY_API") == "1"
    if name in RESULT_ON_DEFAULT_DEVICE and not device.uri.startswith("cpu:"):
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            f"{name}: the result lands on the default device cpu:0 when called without pyaccel.using")))
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
