"""The host path of multi-lane dtypes on WebGPU devices (COMMON contract 3): exactly the
(op, dtype) pairs of ``wgsl_provider.HOST_PATH`` read back and compute with NumPy, every other
multi-lane op runs a WGSL kernel, and host-path results are exact (NumPy's own values)."""

from __future__ import annotations

import numpy as np
import pytest

import pyaccel as xp
from pyaccel import promotion
from pyaccel.ops import wgsl_provider as wp

# The pinned table: shrink it (and this) when a kernel lands; never grow it silently.
# (complex64 / complex128 cumulative_sum and matmul left it: real kernels on the parts)
EXPECTED: dict[str, frozenset[str]] = {}


def test_host_path_table_is_pinned():
    assert wp.HOST_PATH == EXPECTED


def _calls(op, dt):
    return wp.HOST_CALLS[(op, dt)]


def _run(op, a):
    """Run namespace op ``op`` on array ``a``; returns (result, NumPy's result)."""
    h = a.to_numpy()
    with np.errstate(all="ignore"):
        if op in ("sum", "prod", "mean", "var", "argmin", "argmax", "min", "max"):
            return getattr(xp, op)(a, axis=0), getattr(np, op)(h, axis=0)
        if op == "cumulative_sum":
            return xp.cumulative_sum(a, axis=0), np.cumulative_sum(h, axis=0)
        if op == "sort":
            return xp.sort(a, axis=0), np.sort(h, axis=0, kind="stable")
        if op == "argsort":
            return xp.argsort(a, axis=0, stable=True), np.argsort(h, axis=0, kind="stable")
        if op == "matmul":
            return a @ a.T, h @ h.T
        if op == "softmax":
            e = np.exp(h - h.max(axis=-1, keepdims=True))
            return xp.nn.softmax(a, axis=-1), e / e.sum(axis=-1, keepdims=True)
        if op == "logsumexp":
            m = h.max(axis=-1)
            return xp.nn.logsumexp(a, axis=-1), m + np.log(np.exp(h - m[:, None]).sum(axis=-1))
        if op in ("atan2", "logaddexp", "hypot", "pow"):
            return getattr(xp, op)(a, a[::-1]), getattr(np, op)(h, h[::-1])
        return getattr(xp, op)(a), getattr(np, op)(h)


@pytest.mark.parametrize("op", sorted(set(EXPECTED) | {"cumulative_sum", "matmul", "min", "max", "argmin",
                                                       "argmax", "sort", "argsort", "var", "softmax",
                                                       "logsumexp", "exp", "sin", "pow", "add"}))
def test_host_path_taken_exactly(gpu_device, rng, op):
    """Each multi-lane (op, dtype) pair takes the host path iff the table lists it, and its
    result is NumPy's (bit for bit where NumPy is the computation).

    Runs under the "exact" dtype policy: there ``exp(int64)`` is float64, NumPy's dtype, so the
    int -> float functions go through the float64 kernels this test is about (under the
    default policy they give float32 on a GPU: tests/backends/test_dtype_policy.py)."""
    saved = promotion._policy[0]  # (None: the environment's)
    xp.set_dtype_policy("exact")
    try:
        _host_path_taken_exactly(gpu_device, rng, op)
    finally:
        xp.set_dtype_policy(saved)


def _host_path_taken_exactly(gpu_device, rng, op):
    for dt in ("int64", "uint64", "float64"):
        if dt != "float64" and op in ("mean", "var", "softmax", "logsumexp"):
            continue  # float-only functions (checked as float64)
        h = (rng.normal(0, 2, size=(6, 5)) if dt == "float64"
             else rng.integers(0, 50, size=(6, 5))).astype(dt)
        if op in ("log", "log2", "log10", "sqrt", "acosh"):
            h = np.abs(h) + 1.5
        if op in ("asin", "acos", "atanh"):
            h = np.tanh(h) * 0.9
        a = xp.asarray(h, device=gpu_device)
        if op == "add":
            before = sum(wp.HOST_CALLS.values())
            assert _bits(xp.add(a, a).to_numpy()) == _bits(h + h)
            assert sum(wp.HOST_CALLS.values()) == before
            continue
        key_dt = dt
        before = _calls(op, key_dt)
        got, want = _run(op, a)
        taken = _calls(op, key_dt) - before
        listed = key_dt in EXPECTED.get(op, frozenset())
        assert taken == (1 if listed else 0), f"{op}({dt}): host path taken {taken}x, table says {listed}"
        g = got.to_numpy()
        assert g.dtype == want.dtype, f"{op}({dt}): {g.dtype} != {want.dtype}"
        if listed or g.dtype.kind in "iub":
            assert _bits(g) == _bits(want), f"{op}({dt}): not NumPy's values"
        else:
            np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-300)


def _bits(a):
    return np.ascontiguousarray(a).tobytes()
