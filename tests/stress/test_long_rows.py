"""Long rows and long K on every GPU device (issue 9, item 2).

Mesa's software GPUs end a shader invocation after 65,535 loop iterations and silently
return wrong values, so every built-in kernel must bound the work per invocation. Each
case is past that cap and is compared with NumPy (float64 reference) on random data.
"""

from __future__ import annotations

import numpy as np
import pytest

import pyaccel as xp
from pyaccel.testing import assert_allclose_dtype

pytestmark = pytest.mark.stress


def test_matmul_long_k(gpu_device, rng) -> None:
    """(4, 70000) @ (70000, 3): one dot product of 70,000 terms per output."""
    k = 70_000
    a = rng.uniform(-1, 1, (4, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, 3)).astype(np.float32)
    got = (xp.asarray(a, device=gpu_device) @ xp.asarray(b, device=gpu_device)).to_numpy()
    want = a.astype(np.float64) @ b.astype(np.float64)
    # float32 accumulation of 70,000 terms of size ~1: absolute error grows like sqrt(k) ulps
    assert_allclose_dtype(got, want, rtol=1e-4, atol=2e-2, what=f"matmul K={k} on {gpu_device.uri}")


def test_matmul_long_k_of_ones(gpu_device) -> None:
    """The issue's reproducer: ones((1, 65536)) @ ones((65536, 1)) is 65536 (65535 on f0dbc06)."""
    k = 65_536
    o = xp.ones((1, k), device=gpu_device)
    got = (o @ xp.ones((k, 1), device=gpu_device)).to_numpy()
    assert got.shape == (1, 1) and float(got[0, 0]) == float(k), got


def test_softmax_long_row(gpu_device, rng) -> None:
    """softmax over a 300,000-element row sums to 1 and matches NumPy (0.747 on f0dbc06)."""
    n = 300_000
    a = rng.uniform(-4, 4, (2, n)).astype(np.float32)
    got = xp.nn.softmax(xp.asarray(a, device=gpu_device), axis=-1).to_numpy()
    a64 = a.astype(np.float64)
    e = np.exp(a64 - a64.max(axis=-1, keepdims=True))
    want = e / e.sum(axis=-1, keepdims=True)
    assert_allclose_dtype(got, want, rtol=1e-4, atol=1e-9, what=f"softmax n={n} on {gpu_device.uri}")
    np.testing.assert_allclose(got.astype(np.float64).sum(axis=-1), 1.0, rtol=1e-4)


def test_logsumexp_long_row_with_one_peak(gpu_device, rng) -> None:
    """logsumexp of 600,000 values in [-1, 0] with one 100 near the end is ~100 (11.78 on f0dbc06)."""
    n = 600_000
    a = rng.uniform(-1, 0, n).astype(np.float32)
    a[n - 1 - int(rng.integers(1000))] = 100.0  # near the end: past the first 65,535 of a row
    got = xp.nn.logsumexp(xp.asarray(a, device=gpu_device), axis=-1).to_numpy()
    a64 = a.astype(np.float64)
    want = a64.max() + np.log(np.exp(a64 - a64.max()).sum())
    assert_allclose_dtype(got, np.asarray(want), rtol=1e-5, atol=1e-4,
                          what=f"logsumexp n={n} on {gpu_device.uri}")


def test_cumulative_sum_long_row(gpu_device, rng) -> None:
    """cumulative_sum of 200,000 int32 (exact) and float32 (tolerance) values."""
    n = 200_000
    ai = rng.integers(-100, 100, n, dtype=np.int32)
    got = xp.cumulative_sum(xp.asarray(ai, device=gpu_device)).to_numpy()
    assert_allclose_dtype(got, np.cumsum(ai, dtype=np.int32), what=f"cumulative_sum int32 n={n}")
    af = rng.uniform(0, 1, n).astype(np.float32)
    got = xp.cumulative_sum(xp.asarray(af, device=gpu_device)).to_numpy()
    want = np.cumsum(af.astype(np.float64))
    assert_allclose_dtype(got, want, rtol=1e-4, atol=1e-3, what=f"cumulative_sum float32 n={n}")


def test_sum_and_max_long_row(gpu_device, rng) -> None:
    """Reductions over a 300,000-element row (2 rows, axis=-1)."""
    n = 300_000
    a = rng.integers(-100, 100, (2, n), dtype=np.int32)
    x = xp.asarray(a, device=gpu_device)
    assert_allclose_dtype(xp.sum(x, axis=-1).to_numpy(), a.sum(axis=-1, dtype=np.int32), what="sum int32")
    assert_allclose_dtype(xp.max(x, axis=-1).to_numpy(), a.max(axis=-1), what="max int32")


def test_sort_long_row(gpu_device, rng) -> None:
    """sort of a 100,000-element row."""
    n = 100_000
    a = rng.standard_normal(n).astype(np.float32)
    got = xp.sort(xp.asarray(a, device=gpu_device)).to_numpy()
    assert_allclose_dtype(got, np.sort(a), what=f"sort n={n} on {gpu_device.uri}")
