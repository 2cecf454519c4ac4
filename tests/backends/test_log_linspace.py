"""log / log2 / log10 of float32 subnormals, and linspace bit-for-bit with NumPy, on every device.

Software GPUs flush subnormal inputs inside their log builtins (lavapipe gave
log(1e-40) = -88.02 instead of -92.10); the WGSL helpers read subnormals from their
bits. linspace follows NumPy's formula (float64 ``start + i * step``, rounded once), so
``linspace(1, 0, 4)[2]`` is 0.33333334 everywhere, not the 0.33333331 of float32 math.
"""

from __future__ import annotations

import numpy as np
import pytest
from _array_util import poisoned  # noqa: F401  (fixture)

import pyaccel
from pyaccel.ops.table import TOLERANCES
from pyaccel.testing import assert_allclose_dtype

pytestmark = pytest.mark.usefixtures("poisoned")


@pytest.mark.parametrize("name", ["log", "log2", "log10"])
def test_log_subnormals(device, rng, name):
    tiny = np.float32(2.0**-126)
    sub = (rng.random(200) * tiny).astype(np.float32)  # random subnormals (and maybe 0)
    sub[:4] = np.array([1e-40, 1.4e-45, 2.0**-127, 1.1754942e-38], np.float32)
    normal = np.exp(rng.uniform(-80, 80, 200)).astype(np.float32)
    special = np.array([0.0, -0.0, -1e-40, -1.0, np.inf, np.nan, tiny, 1.0], np.float32)
    x = np.concatenate([sub, normal, special])
    assert np.count_nonzero((x != 0) & (np.abs(x) < tiny)) > 100  # really subnormals
    got = getattr(pyaccel, name)(pyaccel.asarray(x, device=device)).to_numpy()
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    rtol, atol = TOLERANCES["transcendental"]
    assert_allclose_dtype(got, want, rtol=rtol, atol=atol, what=f"{name} on {device.uri}")


def test_log_issue_value(device):
    r = pyaccel.log(pyaccel.asarray(np.array([1e-40], np.float32), device=device)).to_numpy()
    np.testing.assert_allclose(r, [-92.10340371976183], rtol=1e-6)


CASES = [(1, 0, 4, True), (0, 1, 7, True), (0.1, 0.9, 13, False), (-3.7, 11.2, 1001, True),
         (1e-3, 1e5, 257, True), (5, 5, 3, True), (2, -1, 1, True), (0, 1, 0, True),
         (1, 0, 10, False), (-1e10, 1e10, 99, True)]


@pytest.mark.parametrize("start,stop,num,endpoint", CASES)
def test_linspace_bit_identical(device, start, stop, num, endpoint):
    for name in ("float32", "float16", "int32"):
        if name not in {d.name for d in pyaccel.promotion.device_dtypes(device)}:
            continue
        with np.errstate(over="ignore", invalid="ignore"):  # float16 inf, int32 out of range
            got = pyaccel.linspace(start, stop, num, endpoint=endpoint, dtype=name,
                                   device=device).to_numpy()
            want = np.linspace(start, stop, num, endpoint=endpoint, dtype=name)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"),
                                      err_msg=f"linspace({start}, {stop}, {num}, {endpoint}) {name}")


def test_linspace_issue_value(device):
    r = pyaccel.linspace(1, 0, 4, dtype="float32", device=device).to_numpy()
    assert r[2] == np.float32(0.33333334)


@pytest.mark.parametrize("start,stop,num,endpoint", CASES)
def test_linspace_without_numpy(device, monkeypatch, start, stop, num, endpoint):
    """Pyodide without NumPy: the same float64 formula in pure Python."""
    from pyaccel import _host

    monkeypatch.setattr(_host, "FORCE_NO_NUMPY", True)
    x = pyaccel.linspace(start, stop, num, endpoint=endpoint, dtype="float32", device=device)
    raw = bytes(x)
    monkeypatch.setattr(_host, "FORCE_NO_NUMPY", False)
    with np.errstate(over="ignore"):
        want = np.linspace(start, stop, num, endpoint=endpoint, dtype=np.float32)
    np.testing.assert_array_equal(np.frombuffer(raw, np.uint32), want.view(np.uint32))
