"""Reductions that compute their lazy elementwise input in place (ops/fusion_reduce.py).

Every case runs three ways on fresh random data: fused (``pyaccel.fusion(True)``: the
reduction kernel computes the tree), eager (``pyaccel.fusion(False)``: every op its own
kernel) and NumPy. Fused and eager must agree bit for bit (the reduction kernel, plan and
order are the eager ones; only the load is replaced), NumPy within a tolerance. New device
buffers are poisoned first. Counters, never timings: ``device.memory_stats()["dispatches"]``
and ``fusion.STATS``. Under ``CI=true`` each (kind, dtype) runs two of the axis forms
(drawn by the seed); the full sweep runs them all.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from _array_util import poisoned_malloc  # noqa: F401 (a fixture)

import pyaccel
from pyaccel.ops import fusion as F
from pyaccel.ops import gpu_kernels as GK

CI = os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")
SHAPE = (5, 37, 12)  # rows mode (inner == 1), cols4 (inner % 4 == 0) and cols (inner == 37)
AXES = [None, 0, 1, 2, -1, (1, 2), (0, 1), (0, 2)]  # (0, 2): not contiguous (materialises)


def _disp(dev) -> int:
    return dev.memory_stats()["dispatches"]


def _up(dev, a):
    return pyaccel.asarray(a, device=dev)


def _data(rng, dt, shape):
    if dt == "float32":
        return rng.standard_normal(shape).astype(np.float32)
    if dt == "int32":
        return rng.integers(-1000, 1000, shape).astype(np.int32)
    if dt == "uint32":
        return rng.integers(0, 2**32, shape, dtype=np.uint32)
    return rng.random(shape) < 0.5


def _expr(xp, dt, kind, x, y):
    """An elementwise tree over x and the view y (y is (..., 2 * last)[..., 1::2])."""
    if dt == "float32":
        if kind.endswith("prod"):
            return 1 + x * y * 0.01
        return (x - 0.5) * y  # a product at the root (an FMA with the accumulator if contracted)
    if dt == "int32":
        if kind == "prod":
            return 1 - 2 * (x & 1)  # +-1: no overflow
        return (x * y) ^ 3
    if dt == "uint32":
        if kind == "prod":
            return (x & 1) + 1
        return x + y * 3
    return x ^ (~y)


# kind -> (function of (xp, t, axis, keepdims), dtypes it takes, axis forms)
def _red(name):
    return lambda xp, t, axis, kd: getattr(xp, name)(t, axis=axis, keepdims=kd)


def _sm(name):
    def f(xp, t, axis, kd):
        ax = -1 if axis is None or not isinstance(axis, int) else axis
        if xp is np:
            m = np.max(t, axis=ax, keepdims=True)
            e = np.exp((t - m).astype(np.float64))
            if name == "softmax":
                return (e / e.sum(axis=ax, keepdims=True)).astype(np.float32)
            return (np.log(e.sum(axis=ax, keepdims=kd)) + (m if kd else np.squeeze(m, ax))).astype(np.float32)
        if name == "softmax":
            return pyaccel.nn.softmax(t, axis=ax)
        return pyaccel.nn.logsumexp(t, axis=ax, keepdims=kd)
    return f


def _arg(name):
    def f(xp, t, axis, kd):
        ax = axis if axis is None or isinstance(axis, int) else axis[0]
        return getattr(xp, name)(t, axis=ax, keepdims=kd)
    return f


def _scan(name):
    def f(xp, t, axis, kd):
        ax = axis if isinstance(axis, int) else 1
        return getattr(xp, name)(t, axis=ax, dtype=t.dtype, include_initial=kd)
    return f


ALL = ("float32", "int32", "uint32", "bool")
NUM = ("float32", "int32", "uint32")
KINDS = {
    "sum": (_red("sum"), ALL),
    "sum_same": (lambda xp, t, axis, kd: xp.sum(t, axis=axis, keepdims=kd, dtype=t.dtype), NUM),
    "prod": (_red("prod"), NUM),
    "min": (_red("min"), ALL),
    "max": (_red("max"), ALL),
    "any": (_red("any"), ALL),
    "all": (_red("all"), ALL),
    "mean": (_red("mean"), ("float32", "int32")),
    "var": (_red("var"), ("float32",)),
    "std": (_red("std"), ("float32",)),
    "argmin": (_arg("argmin"), NUM),
    "argmax": (_arg("argmax"), ALL),
    "softmax": (_sm("softmax"), ("float32",)),
    "logsumexp": (_sm("logsumexp"), ("float32",)),
    "cumulative_sum": (_scan("cumulative_sum"), NUM),
    "cumulative_prod": (_scan("cumulative_prod"), NUM),
}
CASES = [(k, dt) for k, (_, dts) in KINDS.items() for dt in dts]


def _expect_fused(kind, dt, axis) -> int:
    """Reduction kernels that compute the tree: 0 where the input is materialised first (a
    64-bit product runs as a tree of elementwise passes; axes that are not contiguous and
    a softmax over another axis than the last are permuted views)."""
    if kind == "prod" and dt != "float32":
        return 0
    if kind in ("softmax", "logsumexp"):
        return int(axis is None or not isinstance(axis, int) or axis in (2, -1))
    if kind in ("argmin", "argmax"):
        return 1
    if kind.startswith("cumulative"):
        return -1  # the scan, and the tile totals' reduce pass when the axis is split
    if axis == (0, 2):
        return 0
    return 2 if kind in ("var", "std") else 1


def _check(got, eager, want, dt, kind):
    np.testing.assert_array_equal(got, eager)  # bit for bit (NaN == NaN)
    assert got.dtype == eager.dtype and got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype.kind == want.dtype.kind or kind.startswith("mean"), (got.dtype, want.dtype)
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=2e-4 if kind in ("var", "std") else 2e-5, atol=2e-4)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kind,dt", CASES, ids=[f"{k}-{d}" for k, d in CASES])
def test_fused_reduction_matches_eager_and_numpy(gpu_device, rng, poisoned_malloc, kind, dt) -> None:  # noqa: F811
    dev = gpu_device
    fn = KINDS[kind][0]
    forms = AXES if not CI else [AXES[j] for j in rng.choice(len(AXES), 2, replace=False)]
    for j, axis in enumerate(forms):
        kd = bool(rng.integers(2))
        view = j % 2 == 0  # y a strided view at an offset (read in place), else contiguous (vec4)
        xh = _data(rng, dt, SHAPE)
        yfull = _data(rng, dt, SHAPE[:-1] + (2 * SHAPE[-1],))
        yh = yfull[..., 1::2] if view else np.ascontiguousarray(yfull[..., 1::2])
        want = np.asarray(fn(np, _expr(np, dt, kind, xh, yh), axis, kd))
        res = {}
        for on in (True, False):
            with pyaccel.fusion(on):
                x, y = _up(dev, xh), (_up(dev, yfull)[..., 1::2] if view else _up(dev, yh))
                t = _expr(pyaccel, dt, kind, x, y)
                assert (t._lazy is not None) == on
                f0 = F.STATS.get("fused_reductions", 0)
                res[on] = fn(pyaccel, t, axis, kd).to_numpy()
                fused = F.STATS.get("fused_reductions", 0) - f0
            exp = _expect_fused(kind, dt, axis) if on else 0
            assert fused >= 1 if exp < 0 else fused == exp, (kind, dt, axis, fused)
        _check(res[True], res[False], want, dt, f"{kind} axis={axis} keepdims={kd} view={view}")


def test_sum_x_times_y_is_one_kernel_per_pass(gpu_device, rng) -> None:
    """sum(x * y): the first pass computes x * y; no elementwise kernel is recorded."""
    dev = gpu_device
    for n in (1000, 1 << 16):
        xh, yh = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        mode, nchunks, _ = GK._plan(dev, 1, n, 1)
        passes = 1 if nchunks == 1 else 2
        got = {}
        for on in (True, False):
            with pyaccel.fusion(on):
                x, y = _up(dev, xh), _up(dev, yh)
                d0, l0, f0 = _disp(dev), F.STATS["launches"], F.STATS.get("fused_reductions", 0)
                s = pyaccel.sum(x * y)
                d = _disp(dev) - d0
                if on:
                    assert F.STATS["launches"] == l0  # x * y never materialised
                    assert F.STATS.get("fused_reductions", 0) == f0 + 1  # one kernel: the first pass
                    assert d == passes, (mode, nchunks, d)
                else:
                    assert d == passes + 1
                got[on] = s.to_numpy()
        assert got[True] == got[False]
        np.testing.assert_allclose(got[True], np.sum(xh.astype(np.float64) * yh), rtol=1e-4, atol=1e-3)


def test_cached_by_structure_not_values(gpu_device, rng) -> None:
    dev = gpu_device
    with pyaccel.fusion(True):
        x = _up(dev, rng.standard_normal((8, 300)).astype(np.float32))
        y = _up(dev, rng.standard_normal((8, 300)).astype(np.float32))
        pyaccel.sum(x * y + 0.5, axis=1).to_numpy()
        k0 = F.STATS["kernels_compiled"]
        for c in (1.5, -2.0):
            xh = rng.standard_normal((8, 300)).astype(np.float32)
            got = pyaccel.sum(_up(dev, xh) * y + c, axis=1).to_numpy()
            np.testing.assert_allclose(got, (xh * y.to_numpy() + np.float32(c)).sum(axis=1), rtol=1e-4, atol=1e-3)
        assert F.STATS["kernels_compiled"] == k0


def test_switch_off_and_too_many_leaves_materialise(gpu_device, rng) -> None:
    dev = gpu_device
    lim = dev.limits.max_storage_buffers_per_stage
    hs = [rng.standard_normal(256).astype(np.float32) for _ in range(lim - 1)]
    with pyaccel.fusion(True):
        arrs = [_up(dev, h) for h in hs]
        s = arrs[0]
        for a in arrs[1:]:
            s = s + a
        assert s._lazy is not None and len(s._lazy.leaves) == lim - 1  # more than reduce has free
        l0, f0 = F.STATS["launches"], F.STATS.get("fused_reductions", 0)
        got = pyaccel.max(s).to_numpy()
        assert F.STATS["launches"] == l0 + 1 and F.STATS.get("fused_reductions", 0) == f0
    ref = hs[0]
    for h in hs[1:]:
        ref = ref + h
    assert got == ref.max()
    with pyaccel.fusion(True):
        t = arrs[0] * arrs[1]
    with pyaccel.fusion(False):  # a lazy array reduced with fusion off: materialised first
        f0 = F.STATS.get("fused_reductions", 0)
        got = pyaccel.sum(t).to_numpy()
        assert F.STATS.get("fused_reductions", 0) == f0 and t._lazy is None
    np.testing.assert_allclose(got, (hs[0] * hs[1]).sum(), rtol=1e-4, atol=1e-4)


def test_lazy_input_shared_and_written_after(gpu_device, rng) -> None:
    """The reduction reads the tree's leaves when recorded: a later in-place write does not
    change it, and the lazy input stays usable by other consumers."""
    dev = gpu_device
    xh, yh = rng.standard_normal(999).astype(np.float32), rng.standard_normal(999).astype(np.float32)
    with pyaccel.fusion(True):
        x, y = _up(dev, xh), _up(dev, yh)
        t = x * y
        s = pyaccel.sum(t)
        m = pyaccel.max(t)
        assert t._lazy is not None
        x[...] = 0.0
        u = (t + 1).to_numpy()
    np.testing.assert_allclose(s.to_numpy(), np.sum(xh * yh), rtol=1e-4, atol=1e-4)
    assert m.to_numpy() == np.max(xh * yh)
    np.testing.assert_allclose(u, xh * yh + 1, rtol=1e-6)


@pytest.mark.parametrize("layout", ["gpu", "software"])
def test_both_kernel_layouts(gpu_device, rng, poisoned_malloc, monkeypatch, layout) -> None:  # noqa: F811
    """The workgroup-tree layouts real GPUs run (``rows``, the 64-bit sum's ``rows``) and the
    software ones (``seg``), forced on whatever device is here (gpu_kernels.LAYOUT)."""
    dev = gpu_device
    monkeypatch.setattr(GK, "LAYOUT", layout)
    for kind, dt, axis in [("sum", "float32", None), ("sum", "float32", -1), ("max", "float32", -1),
                           ("mean", "float32", (1, 2)), ("var", "float32", -1), ("sum", "int32", -1),
                           ("sum", "bool", None), ("any", "float32", -1), ("argmax", "float32", -1),
                           ("softmax", "float32", -1), ("min", "uint32", (1, 2))]:
        fn = KINDS[kind][0]
        shape = (3, 7, 1500)  # rows of 1500 (and 10500): the rows / seg layouts with a tail
        xh, yfull = _data(rng, dt, shape), _data(rng, dt, shape[:-1] + (2 * shape[-1],))
        for view in (True, False):  # y a view (scalar loads) or contiguous (vec4 loads)
            yh = yfull[..., 1::2] if view else np.ascontiguousarray(yfull[..., 1::2])
            want = np.asarray(fn(np, _expr(np, dt, kind, xh, yh), axis, False))
            res = {}
            for on in (True, False):
                with pyaccel.fusion(on):
                    x, y = _up(dev, xh), (_up(dev, yfull)[..., 1::2] if view else _up(dev, yh))
                    f0 = F.STATS.get("fused_reductions", 0)
                    res[on] = fn(pyaccel, _expr(pyaccel, dt, kind, x, y), axis, False).to_numpy()
                    assert (F.STATS.get("fused_reductions", 0) > f0) == on
            _check(res[True], res[False], want, dt, f"{kind} {dt} axis={axis} layout={layout} view={view}")
