"""The default dtype policy (issue 21) on every device: float32 / complex64 defaults where
float64 is emulated, float64 / complex128 where it is native or the policy is "exact";
explicit float64 and typed data never narrowed; values checked against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import pyaccel as xp
from pyaccel import promotion
from pyaccel.capabilities import Capability


@pytest.fixture
def policy():
    """Set a policy for one test and restore the exact previous state afterwards."""
    saved = promotion._policy[0]  # (None: the environment's)
    yield xp.set_dtype_policy
    xp.set_dtype_policy(saved)  # (also clears memos that depend on it)


def _emulated(device) -> bool:
    caps = device.capabilities
    return Capability.FLOAT64 in caps and Capability.EMULATED_64 in caps


def _want(device) -> tuple[str, str]:
    """(default float, default complex) the "fast" policy gives on this device."""
    return ("float32", "complex64") if _emulated(device) else ("float64", "complex128")


def test_done_when(device, policy):
    policy("fast")
    f, c = _want(device)
    assert xp.asarray([1.0, 2.0], device=device).dtype == getattr(xp, f)
    big = np.array([1e300, -2.5e-310, np.pi])
    a = xp.asarray(big, device=device)
    assert a.dtype == xp.float64 and a.to_numpy().tobytes() == big.tobytes()
    d = xp.__array_namespace_info__().default_dtypes(device=device)
    assert d["real floating"] == getattr(xp, f) and d["integral"] == xp.int64
    assert d["indexing"] == xp.int64
    if Capability.COMPLEX in device.capabilities:
        assert d["complex floating"] == getattr(xp, c)
    policy("exact")
    d = xp.__array_namespace_info__().default_dtypes(device=device)
    assert d["real floating"] == xp.float64
    assert xp.asarray([1.0, 2.0], device=device).dtype == xp.float64


def test_defaults_cover_creation_and_int_to_float(device, policy, rng):
    policy("fast")
    f, c = _want(device)
    F = getattr(xp, f)
    assert xp.asarray(1.5, device=device).dtype == F
    assert xp.asarray([1 + 2j], device=device).dtype == getattr(xp, c)
    assert xp.asarray([1, 2], device=device).dtype == xp.int64
    for made in (xp.zeros(3, device=device), xp.ones((2, 2), device=device),
                 xp.empty(2, device=device), xp.eye(3, device=device),
                 xp.full(4, 0.25, device=device), xp.linspace(0, 1, 5, device=device),
                 xp.arange(0.0, 2.0, 0.5, device=device)):
        assert made.dtype == F
    assert xp.full(2, 3, device=device).dtype == xp.int64
    assert xp.arange(4, device=device).dtype == xp.int64
    np.testing.assert_array_equal(xp.linspace(0, 1, 5, device=device).to_numpy(),
                                  np.linspace(0, 1, 5).astype(f))
    h = rng.integers(-1000, 1000, 64)
    g = rng.integers(1, 1000, 64)
    a, b = xp.asarray(h, device=device), xp.asarray(g, device=device)
    for got, want in ((a / b, h / g), (xp.sqrt(xp.abs(a)), np.sqrt(np.abs(h))),
                      (a * 0.5, h * 0.5), (xp.mean(a), np.mean(h))):
        assert got.dtype == F, (got.dtype, f)
        np.testing.assert_allclose(got.to_numpy(), want.astype(f), rtol=2e-6 if f == "float32" else 1e-15)


def test_explicit_float64_stays_exact(device, policy, rng):
    policy("fast")
    h = rng.standard_normal(257) * 1e200
    x = xp.asarray(h, device=device)
    assert x.dtype == xp.float64
    # a Python float with a float64 array keeps float64 (the scalar takes the array's dtype)
    for got, want in ((x * 0.5, h * 0.5), (x + 1.25, h + 1.25), (2.0 - x, 2.0 - h)):
        assert got.dtype == xp.float64
        assert got.to_numpy().tobytes() == want.tobytes()
    assert xp.asarray([1.5, 2.5], dtype=xp.float64, device=device).tolist() == [1.5, 2.5]
    assert xp.zeros(2, dtype="float64", device=device).dtype == xp.float64
    # NumPy float64 scalars are typed data too, alone or in a list
    assert xp.asarray(np.float64(1e300), device=device).item() == 1e300
    v = xp.asarray([np.float64(0.1), 0.2], device=device)
    assert v.dtype == xp.float64 and v.to_numpy().tobytes() == np.array([0.1, 0.2]).tobytes()
    # typed promotion follows NumPy on every device: int64 + float32 -> float64
    s = xp.asarray(np.arange(3), device=device) + xp.asarray(np.ones(3, np.float32), device=device)
    assert s.dtype == xp.float64 and s.tolist() == [1.0, 2.0, 3.0]


def test_default_never_overflows_silently(device, policy):
    policy("fast")
    if not _emulated(device):
        assert xp.asarray([1e300], device=device).tolist() == [1e300]
        return
    for call in (lambda: xp.asarray([1.0, 1e300], device=device),
                 lambda: xp.asarray(complex(1, -1e39), device=device),
                 lambda: xp.full(3, -3.5e38, device=device)):
        with pytest.raises(OverflowError, match="float64"):
            call()
    # the largest float32 and values that round to it are fine; inf stays inf
    top = float(np.finfo(np.float32).max)
    assert xp.asarray([top, 3.4028235e38, float("inf")], device=device).tolist() == [top, top, float("inf")]
    assert xp.asarray([2.0], device=device).tolist() == [2.0]  # (the device is still usable)


def test_policy_switch_resets_memoised_result_dtypes(device, policy):
    a = xp.asarray(np.arange(1, 5), device=device)
    policy("fast")
    assert (a / a).dtype == xp.__array_namespace_info__().default_dtypes(device=device)["real floating"]
    policy("exact")
    assert (a / a).dtype == xp.float64
    policy("fast")
    assert (a / a).dtype == getattr(xp, _want(device)[0])


def test_eye_far_diagonal_is_zeros(device):
    """eye with |k| past the matrix (2**32 wrapped to 0 in the GPU kernel's 32-bit parameter;
    found by array-api-tests' test_eye)."""
    for k in (2**32, -(2**32), 2**32 + 1, 3, -2, 2**63 - 1):
        for dt in ("float32", "uint8", "int64"):
            got = xp.eye(2, 3, k=k, dtype=dt, device=device).to_numpy()
            np.testing.assert_array_equal(got, np.eye(2, 3, k=k, dtype=dt))
