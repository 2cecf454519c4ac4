"""Chains of Array ops record cheaply and stay correct.

A chain of elementwise ops (``y = y + x`` repeated) hits the memoised per-signature fast
path and reuses the output buffers the chain itself frees (``alloc_output``), so its bind
groups repeat. Checked with ``device.memory_stats()`` counters, never timings; results
against NumPy.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

import pyaccel

N = 1024
STEPS = 100


@pytest.fixture(autouse=True)
def _eager():
    """These tests pin the eager path (its per-signature memo, output-buffer reuse and bind
    groups): fusion off. The fused path's counters: tests/backends/test_fusion.py."""
    with pyaccel.fusion(False):
        yield


def _delta(s0: dict, s1: dict, *keys: str) -> dict:
    return {k: s1[k] - s0[k] for k in keys}


def test_chain_of_100_ops_creates_few_bind_groups_and_buffers(gpu_device, rng) -> None:
    xh = rng.uniform(-1, 1, N).astype(np.float32)
    x = pyaccel.asarray(xh, device=gpu_device)
    (x + x).to_numpy()  # warm-up: pipeline compiled, plan memoised, uniform cached
    gc.collect()
    s0 = gpu_device.memory_stats()
    y = x
    for _ in range(STEPS):
        y = y + x
    s1 = gpu_device.memory_stats()  # recorded, not yet submitted
    d = _delta(s0, s1, "bind_groups_created", "buffers_created", "dispatches", "pipelines_compiled",
               "flushes_for_write")
    assert d["dispatches"] == STEPS
    assert d["pipelines_compiled"] == 0
    assert d["flushes_for_write"] == 0
    # outputs alternate between the buffers the chain frees: a handful of bind groups and
    # new buffers, not one per op (before: one bind group and one buffer per op)
    assert d["bind_groups_created"] <= 4, d
    assert d["buffers_created"] <= 3, d
    expect = xh.copy()
    for _ in range(STEPS):
        expect = expect + xh  # the same float32 additions, in order
    np.testing.assert_array_equal(y.to_numpy(), expect)

    # a second chain reuses everything: no new buffers and no new bind groups
    del y
    gc.collect()
    s2 = gpu_device.memory_stats()
    y = x
    for _ in range(STEPS):
        y = y + x
    np.testing.assert_array_equal(y.to_numpy(), expect)
    d2 = _delta(s2, gpu_device.memory_stats(), "bind_groups_created", "buffers_created")
    assert d2["buffers_created"] == 0 and d2["bind_groups_created"] <= 2, d2


def test_chain_keeps_live_intermediates_intact(gpu_device, rng) -> None:
    # every intermediate stays alive: reuse may only take buffers whose arrays are gone
    xh = rng.uniform(0.5, 1.5, 777).astype(np.float32)
    x = pyaccel.asarray(xh, device=gpu_device)
    kept = [x]
    for k in range(40):
        y = kept[-1] * 1.5 + x if k % 2 else kept[-1] - x * 0.25
        kept.append(y)
        if k % 3 == 0:
            kept.append(kept[-1] + 0.0)  # (dropped again below)
            kept.pop()
    e = [xh]
    for k in range(40):
        e.append(e[-1] * np.float32(1.5) + xh if k % 2 else e[-1] - xh * np.float32(0.25))
    for a, b in zip(kept, e, strict=True):
        np.testing.assert_allclose(a.to_numpy(), b, rtol=1e-6)


def test_reused_pending_output_then_host_write_flushes(gpu_device, rng) -> None:
    # an op output may reuse a buffer the open encoder still reads; a later host write into
    # that array must still wait for the queued reads (the epoch hazard rule)
    xh = rng.uniform(-2, 2, 512).astype(np.float32)
    x = pyaccel.asarray(xh, device=gpu_device)
    a = x + 1.0
    b = a * 2.0  # reads a (queued)
    ha = a._buf.handle
    del a
    gc.collect()
    c = x - 3.0  # may take a's buffer while b's read of it is still queued
    reused = c._buf.handle is ha
    f0 = gpu_device.memory_stats()["flushes_for_write"]
    newh = rng.uniform(-2, 2, 512).astype(np.float32)
    c._buf.write(newh)  # host write into a buffer queued work uses: flushes first
    assert gpu_device.memory_stats()["flushes_for_write"] == f0 + 1
    assert reused  # (what this test is about: alloc_output took the queued buffer)
    np.testing.assert_array_equal(b.to_numpy(), (xh + np.float32(1)) * np.float32(2))
    np.testing.assert_array_equal(c.to_numpy(), newh)


def test_scalar_values_are_not_memoised(gpu_device, rng) -> None:
    xh = rng.uniform(-2, 2, 300).astype(np.float32)
    ih = rng.integers(-100, 100, 300).astype(np.int32)
    x = pyaccel.asarray(xh, device=gpu_device)
    i = pyaccel.asarray(ih, device=gpu_device)
    for s in (0.5, -3.25, 7.0, 1e-3):
        np.testing.assert_array_equal((x * s).to_numpy(), xh * np.float32(s))
        np.testing.assert_array_equal((s - x).to_numpy(), np.float32(s) - xh)
    for s in (3, -7, 0, 2**31 - 1):
        np.testing.assert_array_equal((i + s).to_numpy(), ih + np.int32(s))
    # the int range check still runs on the memoised path
    with pytest.raises(OverflowError):
        i + 2**40
    # same op, other shapes / dtypes / broadcasting: other plans
    m = pyaccel.asarray(xh[:299].reshape(13, 23), device=gpu_device)
    r = pyaccel.asarray(xh[:23], device=gpu_device)
    np.testing.assert_array_equal((m + r).to_numpy(), xh[:299].reshape(13, 23) + xh[:23])
    np.testing.assert_array_equal((x + x).to_numpy(), xh + xh)
    np.testing.assert_array_equal((i + i).to_numpy(), ih + ih)
