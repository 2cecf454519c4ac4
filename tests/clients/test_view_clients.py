"""The view reproducers of issue 19 as SciPy and scikit-learn call them, on every device:
each writes through a view (a slice, ``moveaxis``, ``x[k, :, :]``) and gave wrong values
without an error while basic indexing returned copies. Compared with the NumPy call on the
same fresh random data."""

from __future__ import annotations

import os

import numpy as np
import pytest

import pyaccel as xp

os.environ.setdefault("SCIPY_ARRAY_API", "1")
scipy = pytest.importorskip("scipy")
from scipy import integrate, ndimage, signal  # noqa: E402


def _host(r):
    return np.asarray(xp.asarray(r, device="cpu")) if isinstance(r, xp.Array) else np.asarray(r)


def test_oaconvolve(device, rng):
    a = rng.standard_normal(300).astype(np.float32)
    b = rng.standard_normal(40).astype(np.float32)
    with xp.using(device):
        got = signal.oaconvolve(xp.asarray(a), xp.asarray(b))
    np.testing.assert_allclose(_host(got), signal.oaconvolve(a, b), rtol=1e-4, atol=1e-4)


def test_vectorized_filter_output(device, rng):
    img = rng.standard_normal((8, 9)).astype(np.float32)
    with xp.using(device):
        out = xp.full((8, 9), np.nan, dtype=xp.float32)
        ndimage.vectorized_filter(xp.asarray(img), np.mean, size=3, output=out)
    np.testing.assert_allclose(_host(out), ndimage.vectorized_filter(img, np.mean, size=3),
                               rtol=1e-5, atol=1e-6)


def test_tanhsinh_gaussian(device):
    with xp.using(device):
        res = integrate.tanhsinh(lambda x: xp.exp(-x * x), xp.asarray(-np.inf, dtype=xp.float32),
                                 xp.asarray(np.inf, dtype=xp.float32))
    np.testing.assert_allclose(_host(res.integral), np.sqrt(np.pi), rtol=1e-5)


def test_gaussian_mixture_reg_covar(device, rng):
    sklearn = pytest.importorskip("sklearn")
    from sklearn.mixture import GaussianMixture

    X = rng.standard_normal((60, 3)).astype(np.float32)
    kw = dict(n_components=2, random_state=0, reg_covar=0.5, init_params="random_from_data")
    ref = GaussianMixture(**kw).fit(X)
    with sklearn.config_context(array_api_dispatch=True), xp.using(device):
        got = GaussianMixture(**kw).fit(xp.asarray(X))
    np.testing.assert_allclose(_host(got.covariances_), ref.covariances_, rtol=1e-3, atol=1e-4)
