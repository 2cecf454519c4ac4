"""pyaccel.fft (the Array API fft extension) against NumPy on every device.

Inputs are fresh random data; results come through poisoned outputs (``poisoned``), so an
element a kernel fails to write shows. complex arrays are made and read through their raw
storage (complex64 is interleaved float32 on every device, bit-identical to NumPy), so
these tests do not depend on complex support in asarray / to_numpy. Where a device does
not list ``Capability.COMPLEX`` yet, the ``cdev`` fixture grants it for the test only (the
complex dtypes' capability lands with the complex / wide work; the fft kernels do not need
anything from it).

Error measure: max |result - NumPy's complex128 result| / max |NumPy's result|. complex64
kernels stay within ``TOL`` (measured figures per size: docs/fft.md).
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from _array_util import poisoned  # noqa: F401  (fixture)

import pyaccel
import pyaccel.fft as pf
from pyaccel import Capability
from pyaccel.array import Array
from pyaccel.dtypes import as_dtype
from pyaccel.ops import fft_wgsl

TOL = {"complex64": 2e-6, "float32": 2e-6, "complex128": 1e-12, "float64": 1e-12}
NORMS = ("backward", "ortho", "forward")


@pytest.fixture
def cdev(device, monkeypatch):
    """``device``, holding complex64 for the test (see the module docstring)."""
    if Capability.COMPLEX not in device.capabilities:
        monkeypatch.setattr(device.impl, "capabilities", device.capabilities | Capability.COMPLEX)
    return device


def put(dev, a) -> Array:
    """An Array on ``dev`` holding NumPy array ``a`` (raw storage bytes)."""
    a = np.ascontiguousarray(a)
    x = Array._empty(dev, a.shape, as_dtype(a.dtype.name))
    if a.size:
        x._buf.write(a)
    return x


def get(x: Array):
    """A NumPy copy of ``x`` from its raw storage bytes."""
    return np.frombuffer(x._storage_bytes(), dtype=np.dtype(x.dtype.name)).reshape(x.shape).copy()


def crandn(rng, shape, dtype="complex64"):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def check(got: Array, ref, dtype: str) -> float:
    """Assert dtype, shape and relative error against the float64 reference; returns the error."""
    assert got.dtype == as_dtype(dtype), (got.dtype, dtype)
    g = get(got)
    assert g.shape == ref.shape, (g.shape, ref.shape)
    assert np.all(np.isfinite(g)), "non-finite values (unwritten output?)"
    scale = max(float(np.abs(ref).max()) if ref.size else 0.0, 1e-30)
    err = float(np.abs(g.astype(np.complex128) - ref).max()) / scale if ref.size else 0.0
    assert err <= TOL[dtype], f"relative error {err:.3g} > {TOL[dtype]:.1g}"
    return err


def c128(a):
    return a.astype(np.complex128)


# -- one-dimensional complex transforms -------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 4, 8, 16, 32, 64, 128, 256, 4096, 3, 6, 100, 1000])
def test_fft_ifft_match_numpy(cdev, poisoned, rng, n):  # noqa: F811
    a = crandn(rng, (3, n))
    x = put(cdev, a)
    for norm in NORMS:
        check(pf.fft(x, norm=norm), np.fft.fft(c128(a), norm=norm), "complex64")
        check(pf.ifft(x, norm=norm), np.fft.ifft(c128(a), norm=norm), "complex64")


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_fft_along_each_axis_with_padding_and_trimming(cdev, poisoned, rng, axis):  # noqa: F811
    a = crandn(rng, (6, 5, 8))
    x = put(cdev, a)
    m = a.shape[axis]
    for n in (m, m + 3, max(1, m - 2), 16):
        check(pf.fft(x, n=n, axis=axis), np.fft.fft(c128(a), n=n, axis=axis), "complex64")
        check(pf.ifft(x, n=n, axis=axis, norm="ortho"),
              np.fft.ifft(c128(a), n=n, axis=axis, norm="ortho"), "complex64")


def test_fftn_ifftn(cdev, poisoned, rng):  # noqa: F811
    a = crandn(rng, (4, 6, 8))
    x = put(cdev, a)
    check(pf.fftn(x), np.fft.fftn(c128(a)), "complex64")
    check(pf.ifftn(x, norm="forward"), np.fft.ifftn(c128(a), norm="forward"), "complex64")
    check(pf.fftn(x, s=(5, 16), axes=(2, 0), norm="ortho"),
          np.fft.fftn(c128(a), s=(5, 16), axes=(2, 0), norm="ortho"), "complex64")
    check(pf.ifftn(x, s=(-1, 3), axes=(1, 2)), np.fft.ifftn(c128(a), s=(6, 3), axes=(1, 2)),
          "complex64")
    e = put(cdev, np.zeros((2, 0), np.complex64))  # all padding: zeros; an empty batch
    check(pf.fft(e, n=4), np.zeros((2, 4)), "complex64")
    assert pf.fft(put(cdev, np.zeros((0, 8), np.complex64))).shape == (0, 8)
    y = pf.fftn(x, axes=())
    assert y is not x
    check(y, c128(a), "complex64")


def test_round_trips(cdev, poisoned, rng):  # noqa: F811
    a = crandn(rng, (2, 3, 60))
    x = put(cdev, a)
    for norm in NORMS:
        check(pf.ifft(pf.fft(x, norm=norm), norm=norm), c128(a), "complex64")
        check(pf.ifftn(pf.fftn(x, norm=norm), norm=norm), c128(a), "complex64")
    r = rng.standard_normal((4, 33)).astype(np.float32)
    xr = put(cdev, r)
    check(pf.irfft(pf.rfft(xr), n=33), r.astype(np.complex128), "float32")
    check(pf.irfftn(pf.rfftn(xr, norm="ortho"), s=(4, 33), axes=(0, 1), norm="ortho"),
          r.astype(np.complex128), "float32")


# -- real transforms ----------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 8, 64, 5, 12, 99])
def test_rfft_irfft_hfft_ihfft(cdev, poisoned, rng, n):  # noqa: F811
    r = rng.standard_normal((n, 3)).astype(np.float32)
    xr = put(cdev, r)
    h = crandn(rng, (n // 2 + 1, 3))
    xh = put(cdev, h)
    for norm in NORMS:
        check(pf.rfft(xr, axis=0, norm=norm), np.fft.rfft(r.astype(np.float64), axis=0, norm=norm),
              "complex64")
        check(pf.ihfft(xr, axis=0, norm=norm), np.fft.ihfft(r.astype(np.float64), axis=0, norm=norm),
              "complex64")
        check(pf.irfft(xh, n=n, axis=0, norm=norm), np.fft.irfft(c128(h), n=n, axis=0, norm=norm)
              .astype(np.complex128), "float32")
        check(pf.hfft(xh, n=n, axis=0, norm=norm), np.fft.hfft(c128(h), n=n, axis=0, norm=norm)
              .astype(np.complex128), "float32")
    # default n (2 * (M - 1)) and padding / trimming of the half spectrum
    if n > 1:
        check(pf.irfft(xh, axis=0), np.fft.irfft(c128(h), axis=0).astype(np.complex128), "float32")
    check(pf.irfft(xh, n=2 * n + 1, axis=0),
          np.fft.irfft(c128(h), n=2 * n + 1, axis=0).astype(np.complex128), "float32")
    check(pf.rfft(xr, n=n + 7, axis=0), np.fft.rfft(r.astype(np.float64), n=n + 7, axis=0), "complex64")


def test_rfftn_irfftn(cdev, poisoned, rng):  # noqa: F811
    r = rng.standard_normal((6, 5, 8)).astype(np.float32)
    xr = put(cdev, r)
    r64 = r.astype(np.float64)
    check(pf.rfftn(xr), np.fft.rfftn(r64), "complex64")
    check(pf.rfftn(xr, s=(8, 7), axes=(0, 1), norm="forward"),
          np.fft.rfftn(r64, s=(8, 7), axes=(0, 1), norm="forward"), "complex64")
    h = crandn(rng, (6, 5, 5))
    xh = put(cdev, h)
    check(pf.irfftn(xh), np.fft.irfftn(c128(h)).astype(np.complex128), "float32")
    check(pf.irfftn(xh, s=(4, 9), axes=(1, 2), norm="ortho"),
          np.fft.irfftn(c128(h), s=(4, 9), axes=(1, 2), norm="ortho").astype(np.complex128), "float32")


# -- frequencies and shifts -----------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 7, 8])
def test_fftfreq_rfftfreq(device, n):
    dt = pyaccel.promotion.default_float(device)
    f = pf.fftfreq(n, d=0.25, device=device)
    assert f.device is device and f.dtype == dt
    np.testing.assert_allclose(f.to_numpy(), np.fft.fftfreq(n, d=0.25), rtol=1e-6, atol=0)
    g = pf.rfftfreq(n, device=device)
    assert g.device is device and g.dtype == dt
    np.testing.assert_allclose(g.to_numpy(), np.fft.rfftfreq(n), rtol=1e-6, atol=0)
    h = pf.rfftfreq(n, d=2.0, dtype=pyaccel.float32, device=device)  # the 2024.12 keyword
    assert h.dtype == pyaccel.float32
    np.testing.assert_allclose(h.to_numpy(), np.fft.rfftfreq(n, 2.0), rtol=1e-6, atol=0)
    assert pf.fftfreq(n, dtype=pyaccel.float32, device=device).dtype == pyaccel.float32
    with pytest.raises(TypeError, match="real floating-point"):
        pf.fftfreq(n, dtype=pyaccel.int32, device=device)


def test_fftshift_ifftshift(device, rng):
    a = rng.standard_normal((5, 6, 3)).astype(np.float32)
    x = pyaccel.asarray(a, device=device)
    for axes in (None, 0, (1, 2), [-1]):
        np.testing.assert_array_equal(pf.fftshift(x, axes=axes).to_numpy(), np.fft.fftshift(a, axes=axes))
        np.testing.assert_array_equal(pf.ifftshift(x, axes=axes).to_numpy(), np.fft.ifftshift(a, axes=axes))


# -- errors ---------------------------------------------------------------------------------------
def test_bad_input_raises_clear_errors_and_device_stays_usable(cdev, rng):
    r = put(cdev, rng.standard_normal(8).astype(np.float32))
    c = put(cdev, crandn(rng, (8,)))
    for f in (pf.fft, pf.ifft, pf.irfft, pf.hfft, pf.fftn, pf.ifftn, pf.irfftn):
        with pytest.raises(TypeError, match=r"complex floating-point dtype.*astype\(pyaccel.complex64\)"):
            f(r)
    for f in (pf.rfft, pf.ihfft, pf.rfftn):
        with pytest.raises(TypeError, match="real floating-point dtype"):
            f(c)
    with pytest.raises(TypeError, match="real floating-point dtype"):
        pf.rfft(put(cdev, np.arange(8, dtype=np.int32)))
    with pytest.raises(TypeError, match="pyaccel Array"):
        pf.fft(np.zeros(4, np.complex64))
    with pytest.raises(ValueError, match="n=0"):
        pf.fft(c, n=0)
    with pytest.raises(ValueError, match="n=0"):
        pf.irfft(put(cdev, crandn(rng, (1,))))  # default n = 2 * (1 - 1)
    with pytest.raises(ValueError, match="norm='both'"):
        pf.fft(c, norm="both")
    with pytest.raises(ValueError, match="without axes"):
        pf.fftn(c, s=(4,))
    with pytest.raises(ValueError, match="same length"):
        pf.fftn(c, s=(4, 4), axes=(0,))
    with pytest.raises(IndexError, match="out of bounds"):
        pf.fft(c, axis=1)
    with pytest.raises(ValueError, match="d=0"):
        pf.fftfreq(4, d=0, device=cdev)
    check(pf.fft(c), np.fft.fft(c128(get(c))), "complex64")  # still usable


def test_rfft_output_dtype_needs_complex_support(device, rng):
    if Capability.COMPLEX in device.capabilities:
        pytest.skip(f"{device.uri} holds complex64")  # the error path only exists without it
    x = pyaccel.asarray(rng.standard_normal(8).astype(np.float32), device=device)
    with pytest.raises(pyaccel.UnsupportedDTypeError, match="complex64"):
        pf.rfft(x)


# -- double precision: host path on WebGPU devices (contract 3), NumPy on cpu --------------------
def test_host_path_table_is_exactly_the_double_precision_kernels():
    """The (op, input dtype) pairs computed on the host on GPUs: shrink it knowingly."""
    assert fft_wgsl.FFT_HOST_PATH == frozenset({
        ("fft_c2c", "complex128"), ("fft_r2c", "float64"), ("fft_c2r", "complex128")})


def test_double_precision_matches_numpy(device, poisoned, rng):  # noqa: F811
    """complex128 / float64 through the provider (host path on GPUs): NumPy's values."""
    ops = device.ops
    a = crandn(rng, (3, 10), "complex128")
    x = put(device, a)
    check(ops.fft_c2c(x, (12,), (1,), True, "ortho"), np.fft.fft(a, n=12, norm="ortho"), "complex128")
    r = rng.standard_normal((3, 10))
    check(ops.fft_r2c(put(device, r), (10,), (1,), True, "backward"), np.fft.rfft(r), "complex128")
    check(ops.fft_c2r(x, (9,), (1,), False, "backward"),
          np.fft.irfft(a, n=9).astype(np.complex128), "float64")


# -- the kernels' host tables ----------------------------------------------------------------------
def test_twiddles_and_chirp_are_float64_values_rounded_once():
    n = 4096
    tw = np.frombuffer(fft_wgsl.twiddle_table(n), np.float32).reshape(-1, 2)
    ref = np.exp(-2j * np.pi * np.arange(n) / n)
    np.testing.assert_array_equal(tw[:, 0], ref.real.astype(np.float32))
    np.testing.assert_array_equal(tw[:, 1], ref.imag.astype(np.float32))
    n = 1_000_003  # k^2 overflows float64's exact integers: the angle is reduced mod 2n first
    w, _ = fft_wgsl.chirp_tables(n, fft_wgsl.bluestein_size(n))
    w = np.frombuffer(w, np.float32).reshape(-1, 2)
    for k in (0, 1, 999_999, n - 1):
        ang = -math.pi * ((k * k) % (2 * n)) / n
        assert (w[k, 0], w[k, 1]) == (np.float32(math.cos(ang)), np.float32(math.sin(ang)))


def test_plan_helpers():
    assert fft_wgsl.radices(1) == [1]
    assert fft_wgsl.radices(2) == [2]
    assert fft_wgsl.radices(4) == [4]
    assert fft_wgsl.radices(64) == [16, 4]
    assert fft_wgsl.radices(128) == [16, 4, 2]
    assert fft_wgsl.radices(1 << 20) == [16] * 5
    assert [fft_wgsl.bluestein_size(n) for n in (3, 5, 1000, 4097)] == [8, 16, 2048, 16384]
    assert fft_wgsl.norm_scale(16, True, "backward") == 1.0
    assert fft_wgsl.norm_scale(16, False, "backward") == 1 / 16
    assert fft_wgsl.norm_scale(16, True, "forward") == 1 / 16
    assert fft_wgsl.norm_scale(16, False, "ortho") == 0.25


# -- big sizes (slow) -----------------------------------------------------------------------------
CI = os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")
BIG = [1 << 16, 3 * 5 * 7 * 11] if CI else [1 << 14, 1 << 17, 1 << 20, 4097, 3 * 5 * 7 * 11, 65537]


@pytest.mark.slow
@pytest.mark.parametrize("n", BIG)
def test_big_sizes(cdev, poisoned, rng, n):  # noqa: F811
    a = crandn(rng, (n,))
    x = put(cdev, a)
    check(pf.fft(x), np.fft.fft(c128(a)), "complex64")
    check(pf.ifft(x), np.fft.ifft(c128(a)), "complex64")


# -- the public path: asarray / to_numpy of complex data (multi-lane storage) ---------------------
@pytest.fixture
def wdev(device, monkeypatch):
    """``device`` holding complex64, and complex128 / float64 (emulated storage on GPUs)."""
    from pyaccel.dtypes import WIDE_CAPABILITIES

    monkeypatch.setattr(device.impl, "capabilities", device.capabilities | WIDE_CAPABILITIES)
    return device


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_public_api_end_to_end(wdev, poisoned, rng, dtype):  # noqa: F811
    a = crandn(rng, (4, 24), dtype)
    x = pyaccel.asarray(a, device=wdev)
    assert x.dtype == as_dtype(dtype)
    y = pf.fft(x, axis=0, norm="ortho")
    assert y.dtype == x.dtype and y.device is wdev
    tol = TOL[dtype]
    ref = np.fft.fft(c128(a), axis=0, norm="ortho")
    assert np.abs(y.to_numpy() - ref).max() <= tol * np.abs(ref).max()
    r = a.real.astype(np.float32 if dtype == "complex64" else np.float64)
    xr = pyaccel.asarray(r, device=wdev)
    h = pf.rfft(xr)
    assert h.dtype == as_dtype(dtype)
    ref = np.fft.rfft(r.astype(np.float64))
    assert np.abs(h.to_numpy() - ref).max() <= tol * np.abs(ref).max()
    back = pf.irfft(h, n=24)
    assert back.dtype == xr.dtype
    assert np.abs(back.to_numpy() - r).max() <= 10 * tol * np.abs(r).max()
    np.testing.assert_array_equal(pf.fftshift(x, axes=1).to_numpy(), np.fft.fftshift(a, axes=1))
    np.testing.assert_array_equal(pf.ifftshift(x).to_numpy(), np.fft.ifftshift(a))


def test_host_tables_without_numpy_match(monkeypatch):
    """The pure-Python tables (a page without NumPy) equal the NumPy-computed ones."""
    from pyaccel import _host

    n, m = 1000, fft_wgsl.bluestein_size(1000)
    with_np = fft_wgsl.twiddle_table(64), fft_wgsl.chirp_tables(n, m)
    monkeypatch.setattr(_host, "numpy", lambda: None)
    without = fft_wgsl.twiddle_table(64), fft_wgsl.chirp_tables(n, m)
    for a, b in ((with_np[0], without[0]), (with_np[1][0], without[1][0]), (with_np[1][1], without[1][1])):
        np.testing.assert_allclose(np.frombuffer(a, np.float32), np.frombuffer(b, np.float32),
                                   rtol=0, atol=1e-7)
