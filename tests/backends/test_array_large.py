"""Arrays that need more than 65535 workgroups of 256 (the grid spreads over y)."""

from __future__ import annotations

import numpy as np

import pyaccel

N = 2**24 + 3  # 65537 workgroups of 256


def test_elementwise_beyond_65535_workgroups(device, rng):
    x = rng.random(N, dtype=np.float32)
    X = pyaccel.asarray(x, device=device)
    y = (X * 2.0).to_numpy()
    np.testing.assert_array_equal(y, x * np.float32(2.0))
    del X


def test_creation_and_gather_beyond_65535_workgroups(device):
    a = pyaccel.arange(N, dtype="int32", device=device)
    tail = a[N - 5:]
    assert tail.tolist() == list(range(N - 5, N))
    r = pyaccel.flip(a)
    assert r[:3].tolist() == [N - 1, N - 2, N - 3] and r[N - 1].tolist() == 0
