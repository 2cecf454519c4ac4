"""Threads sharing one device, and threads driving several devices at once (issue 9, item 1).

Each thread computes on fresh random data and checks every result against NumPy; any
mismatch or exception in any thread fails the test with the thread, the iteration and
the values. Bounded by an iteration count and a wall-clock budget per test.
"""

from __future__ import annotations

import numpy as np
import pytest
from _stress_util import budget, count, run_threads, summarize

import pyaccel as xp

pytestmark = pytest.mark.stress


def _cumsum_job(dev, seed: int):
    """The issue's reproducer: cumulative_sum of a random int32 array of 1-3000 elements."""
    def job(t: int, i: int) -> list[str]:
        rng = np.random.default_rng([seed, t, i])
        a = rng.integers(-1000, 1000, int(rng.integers(1, 3001)), dtype=np.int32)
        got = xp.cumulative_sum(xp.asarray(a, device=dev)).to_numpy()
        want = np.cumsum(a, dtype=np.int32)
        if got.shape != want.shape or not np.array_equal(got, want):
            bad = np.flatnonzero(got != want) if got.shape == want.shape else []
            return [f"cumulative_sum of {a.size} int32 on {dev.uri}: {len(bad)} element(s) differ, "
                    f"first at {bad[:1]}: got {got[bad[:1]]}, want {want[bad[:1]]}"
                    if len(bad) else f"shape {got.shape} != {want.shape}"]
        return []
    return job


def test_threads_cumulative_sum_reproducer(gpu_device, rng) -> None:
    """4 threads x cumulative_sum on one GPU device vs np.cumsum (1-4 % wrong on f0dbc06)."""
    seed = int(rng.integers(2**31))
    total, problems = run_threads(_cumsum_job(gpu_device, seed), 4, count(250), budget(12))
    assert not problems, summarize(problems, total)
    assert total >= 4


def _check(what: str, got: np.ndarray, want: np.ndarray, rtol: float = 0.0, atol: float = 0.0) -> list[str]:
    if got.shape != want.shape:
        return [f"{what}: shape {got.shape} != {want.shape}"]
    if got.dtype.kind == "f" or want.dtype.kind == "f":
        ok = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        ok = got == want
    if ok.all():
        return []
    bad = np.argwhere(~ok)
    k = tuple(int(v) for v in bad[0])
    return [f"{what}: {len(bad)} of {got.size} element(s) differ; first at {k}: got {got[k]!r}, want {want[k]!r}"]


def _mixed_job(dev, seed: int):
    """One of five op families per iteration, on fresh random data, checked against NumPy."""
    def job(t: int, i: int) -> list[str]:
        rng = np.random.default_rng([seed, t, i])
        kind = (t + i) % 5
        u = dev.uri
        if kind == 0:
            a = rng.integers(-50, 50, int(rng.integers(1, 3001)), dtype=np.int32)
            return _check(f"cumulative_sum[{a.size}] on {u}",
                          xp.cumulative_sum(xp.asarray(a, device=dev)).to_numpy(), np.cumsum(a, dtype=np.int32))
        if kind == 1:
            a = rng.standard_normal((int(rng.integers(1, 5)), int(rng.integers(1, 1500)))).astype(np.float32)
            return _check(f"sort{a.shape} on {u}", xp.sort(xp.asarray(a, device=dev), axis=-1).to_numpy(),
                          np.sort(a, axis=-1))
        if kind == 2:
            m, k, n = (int(v) for v in rng.integers(1, 70, 3))
            a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
            b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
            got = xp.sum(xp.asarray(a, device=dev) @ xp.asarray(b, device=dev), axis=1).to_numpy()
            want = (a.astype(np.float64) @ b.astype(np.float64)).sum(axis=1)
            return _check(f"sum(matmul {m}x{k}x{n}) on {u}", got, want, rtol=1e-4, atol=1e-4 * k)
        if kind == 3:
            shape = (int(rng.integers(1, 40)), int(rng.integers(1, 40)))
            a = rng.standard_normal(shape).astype(np.float32)
            b = rng.standard_normal(shape).astype(np.float32)
            xa, xb = xp.asarray(a, device=dev), xp.asarray(b, device=dev)
            got = xp.where(xa > xb, xa, xb * 2).to_numpy()
            return _check(f"where{shape} on {u}", got, np.where(a > b, a, b * np.float32(2)))
        a = rng.uniform(-2, 2, int(rng.integers(1, 4000))).astype(np.float32)
        b = rng.uniform(-2, 2, a.size).astype(np.float32)
        xa, xb = xp.asarray(a, device=dev), xp.asarray(b, device=dev)
        got = (xp.exp(xa * 0.5) + xp.sin(xb) - xa * xb).to_numpy()
        want = np.exp(a * np.float32(0.5)) + np.sin(b) - a * b
        return _check(f"exp/sin chain[{a.size}] on {u}", got, want, rtol=1e-4, atol=1e-5)
    return job


@pytest.mark.parametrize("n_threads", [6])
def test_threads_mixed_ops_one_device(gpu_device, rng, n_threads: int) -> None:
    """6 threads mixing cumulative_sum, sort, matmul+sum, where and an elementwise chain."""
    seed = int(rng.integers(2**31))
    total, problems = run_threads(_mixed_job(gpu_device, seed), n_threads, count(120), budget(15))
    assert not problems, summarize(problems, total)
    assert total >= n_threads


def test_threads_across_devices(rng) -> None:
    """Two threads per device on vulkan:0, gl:0 and cpu:0 at the same time (those present)."""
    present = {d.uri for d in xp.devices()}
    uris = [u for u in ("vulkan:0", "gl:0", "cpu:0") if u in present]
    if len(uris) < 2:
        pytest.skip(f"needs at least two of vulkan:0, gl:0, cpu:0; present: {sorted(present)}")
    devs = [xp.device(u) for u in uris]
    seed = int(rng.integers(2**31))
    jobs = [_mixed_job(d, seed + k) for k, d in enumerate(devs)]

    def job(t: int, i: int) -> list[str]:
        return jobs[t % len(jobs)](t, i)

    total, problems = run_threads(job, 2 * len(devs), count(120), budget(15))
    assert not problems, summarize(problems, total)
    assert total >= 2 * len(devs)
