"""Matmul epilogues (ops/fusion_matmul.py): an elementwise consumer of ``a @ w`` is computed
at the matmul kernel's store.

Every case runs fused (``pyaccel.fusion(True)``), eager (``pyaccel.fusion(False)``: the
matmul kernel, then each elementwise op) and in NumPy, on fresh random data with every new
device buffer poisoned first. Fused and eager must agree bit for bit (the same matmul
kernel and variant; the tree is fusion's, with the product's value as one leaf); NumPy
within a tolerance that scales with ``|a| @ |w|``. Counters, never timings:
``device.memory_stats()["dispatches"]`` and ``fusion.STATS``. Under ``CI=true`` each
epilogue runs on two of the kernel variants (:data:`CI_PLAN`, every variant at least once);
the full sweep runs all nine.
"""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest
from _array_util import poisoned_malloc  # noqa: F401 (a fixture)

import pyaccel
from pyaccel.ops import fusion as F
from pyaccel.ops import fusion_matmul as FM
from pyaccel.ops import gpu_kernels as GK

CI = os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")
# (M, K, N): vec4-able (matmul_v4 family) and odd (matmul.wgsl: tiled / reg / naive)
SIZES = [(40, 32, 48), (33, 20, 17)]


@pytest.fixture
def pinned():
    """Pin a matmul variant for one test (no autotuning timings in the counters)."""
    def pin(name):
        GK.set_matmul_variant(name)
    yield pin
    GK.set_matmul_variant(None)


def _disp(dev) -> int:
    return dev.memory_stats()["dispatches"]


def _f32(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


# name -> (epilogue over (xp, m = a @ w, extra operands), extra operand shapes given (M, N))
EPILOGUES = {
    "relu_bias": (lambda xp, m, b: xp.maximum(m + b, 0.0), lambda M, N: [(N,)]),
    "residual": (lambda xp, m, c: m * 0.5 + c, lambda M, N: [(M, N)]),
    "gelu_tanh": (lambda xp, m, b: 0.5 * (m + b) * (1.0 + xp.tanh(0.79788456 * ((m + b) + 0.044715 * (m + b) ** 3))),
                  lambda M, N: [(N,)]),
    "column_scale": (lambda xp, m, s: xp.exp(m * s * 0.1), lambda M, N: [(M, 1)]),
    "compare": (lambda xp, m, b: m > b, lambda M, N: [(N,)]),
    "where": (lambda xp, m, b: xp.where(m > 0, m, 0.01 * m) - b, lambda M, N: [(1, N)]),
}
HEAVY = {"gelu_tanh", "column_scale"}  # (tanh / exp: not inlined into the unrolled u16 stores)
VARIANTS = list(GK.MATMUL_VARIANTS)
# CI: two variants per epilogue, every variant at least once over the six; the long trees
# (tanh-GELU, exp) on kernels that store one value per thread (the u16 kernels inline a tree
# 128 / 256 times per invocation: about 20 s of first compile on lavapipe for tanh-GELU)
CI_PLAN = {"relu_bias": ("u16x16", "u16x4"), "residual": ("u16x8", "v8x4"), "gelu_tanh": ("tiled", "naive"),
           "column_scale": ("v4x4", "reg8x4"), "compare": ("reg4x4", "u16x16"), "where": ("u16x8", "naive")}
assert set(VARIANTS) == {v for vs in CI_PLAN.values() for v in vs}, "CI_PLAN must cover every variant"


def _variants(name):
    return VARIANTS if not CI else list(CI_PLAN[name])


def _run(dev, fn, ah, wh, extra, on):
    with pyaccel.fusion(on):
        a, w = pyaccel.asarray(ah, device=dev), pyaccel.asarray(wh, device=dev)
        ex = [pyaccel.asarray(e, device=dev) for e in extra]
        m = a @ w
        assert (m._lazy is not None) == on
        y = fn(pyaccel, m, *ex)
        f0, l0 = F.STATS.get("fused_matmuls", 0), F.STATS["launches"]
        got = y.to_numpy()
        return got, F.STATS.get("fused_matmuls", 0) - f0, F.STATS["launches"] - l0


@pytest.mark.parametrize("name", list(EPILOGUES))
def test_epilogue_matches_eager_and_numpy(gpu_device, rng, poisoned_malloc, pinned, name) -> None:  # noqa: F811
    dev = gpu_device
    fn, shapes = EPILOGUES[name]
    for variant in _variants(name):
        pinned(variant)
        for M, K, N in SIZES:
            ah, wh = _f32(rng, (M, K)), _f32(rng, (K, N))
            extra = [_f32(rng, s) for s in shapes(M, N)]
            fused, nf, nl = _run(dev, fn, ah, wh, extra, True)
            # one matmul kernel and no other; a heavy tree on the unrolled kernels: the product,
            # then the tree as one fused kernel (fusion_matmul._heavy)
            unrolled = GK.matmul_variant(dev, M, K, N) in FM._UNROLLED
            assert (nf, nl) == ((0, 1) if name in HEAVY and unrolled else (1, 0)), (variant, M, K, N, nf, nl)
            eager, nf0, _ = _run(dev, fn, ah, wh, extra, False)
            assert nf0 == 0
            np.testing.assert_array_equal(fused, eager, err_msg=f"{name} {variant} {(M, K, N)}")
            m64 = ah.astype(np.float64) @ wh
            want = fn(np, m64, *[e.astype(np.float64) for e in extra])
            if want.dtype == bool:  # a comparison: only where the product is not within rounding
                scale = np.abs(ah.astype(np.float64)) @ np.abs(wh)
                clear = np.abs(m64 - np.broadcast_to(extra[0], m64.shape)) > 1e-5 * (scale + 1)
                np.testing.assert_array_equal(fused[clear], want[clear])
            else:
                scale = np.abs(ah.astype(np.float64)) @ np.abs(wh) + 1
                err = np.abs(fused - want) / scale
                assert err.max() < 5e-5, (name, variant, (M, K, N), err.max())


def test_heavy_tree_on_unrolled_kernel_runs_after_the_product(gpu_device, rng, pinned) -> None:
    """tanh-GELU over a u16x16 product: not inlined into its 256 unrolled stores (a compile of
    tens of seconds on lavapipe); the product alone, then one fused kernel, equal to eager."""
    dev = gpu_device
    pinned("u16x16")
    fn = EPILOGUES["gelu_tanh"][0]
    ah, wh, bh = _f32(rng, (32, 16)), _f32(rng, (16, 64)), _f32(rng, 64)
    fused, nf, nl = _run(dev, fn, ah, wh, [bh], True)
    assert (nf, nl) == (0, 1)
    eager, _, _ = _run(dev, fn, ah, wh, [bh], False)
    np.testing.assert_array_equal(fused, eager)
    light, nf, nl = _run(dev, EPILOGUES["relu_bias"][0], ah, wh, [bh], True)  # a light tree is inlined
    assert (nf, nl) == (1, 0)
    np.testing.assert_allclose(light, np.maximum(ah @ wh + bh, 0), rtol=2e-5, atol=2e-5)


def test_relu_bias_is_one_dispatch(gpu_device, rng, pinned) -> None:
    """relu(a @ w + b): one matmul kernel plus nothing; eager records 3 dispatches (fusion on
    without an epilogue would record 2)."""
    dev = gpu_device
    pinned("u16x8")
    ah, wh, bh = _f32(rng, (64, 64)), _f32(rng, (64, 128)), _f32(rng, 128)
    counts = {}
    for on in (True, False):
        with pyaccel.fusion(on):
            a, w, b = (pyaccel.asarray(t, device=dev) for t in (ah, wh, bh))
            dev.synchronize()
            d0 = _disp(dev)
            y = pyaccel.maximum(a @ w + b, 0.0)
            y.to_numpy()
            counts[on] = _disp(dev) - d0
    assert counts == {True: 1, False: 3}, counts


def test_batched_and_vector_operands(gpu_device, rng, poisoned_malloc, pinned) -> None:  # noqa: F811
    dev = gpu_device
    pinned("v4x4")
    cases = [((3, 20, 16), (16, 24), (24,)), ((2, 1, 8, 12), (3, 12, 8), (8,)),
             ((12,), (12, 20), (20,)), ((7, 12), (12,), (7,))]
    for sa, sw, sb in cases:
        ah, wh, bh = _f32(rng, sa), _f32(rng, sw), _f32(rng, sb)
        res = {}
        for on in (True, False):
            res[on], nf, _ = _run(dev, lambda xp, m, b: xp.abs(m - b), ah, wh, [bh], on)
            assert nf == (1 if on else 0), (sa, sw, nf)
        np.testing.assert_array_equal(res[True], res[False])
        np.testing.assert_allclose(res[True], np.abs(np.matmul(ah, wh) - bh), rtol=2e-5, atol=2e-5)


def test_integer_matmul_epilogue(gpu_device, rng, pinned) -> None:
    dev = gpu_device
    pinned("naive")
    for dt in (np.int32, np.uint32):
        ah = rng.integers(0, 50, (9, 13)).astype(dt)
        wh = rng.integers(0, 50, (13, 6)).astype(dt)
        res = {}
        for on in (True, False):
            res[on], nf, _ = _run(dev, lambda xp, m: (m * 3) ^ 5, ah, wh, [], on)
            assert nf == (1 if on else 0)
        np.testing.assert_array_equal(res[True], res[False])
        np.testing.assert_array_equal(res[True], ((ah @ wh) * dt(3)) ^ dt(5))


def test_product_needed_alone_or_twice(gpu_device, rng, pinned) -> None:
    """A read of the product, a second consumer, a non-elementwise op or a reduction of the
    epilogue: each is right, and the product is never computed by two consumers."""
    dev = gpu_device
    pinned("tiled")
    ah, wh, bh = _f32(rng, (24, 16)), _f32(rng, (16, 20)), _f32(rng, 20)
    m_ref = ah @ wh
    with pyaccel.fusion(True):
        a, w, b = (pyaccel.asarray(t, device=dev) for t in (ah, wh, bh))
        m = a @ w
        np.testing.assert_allclose(m.to_numpy(), m_ref, rtol=2e-5, atol=2e-5)  # plain kernel
        assert m._lazy is None
        m = a @ w
        f0 = F.STATS.get("fused_matmuls", 0)
        y, z = m + b, m * 2.0  # two consumers, two kernels: the product is computed once, alone
        assert m._lazy is not None
        np.testing.assert_allclose(y.to_numpy(), m_ref + bh, rtol=2e-5, atol=2e-5)
        assert m._lazy is None and F.STATS.get("fused_matmuls", 0) == f0
        np.testing.assert_allclose(z.to_numpy(), m_ref * 2, rtol=2e-5, atol=2e-5)
        m = a @ w
        y = pyaccel.where(m > 0, m, 0.01 * m) + b  # three consumers, all in one kernel
        l0 = F.STATS["launches"]
        np.testing.assert_allclose(y.to_numpy(), np.where(m_ref > 0, m_ref, 0.01 * m_ref) + bh, rtol=2e-5,
                                   atol=2e-5)
        assert F.STATS.get("fused_matmuls", 0) == f0 + 1 and F.STATS["launches"] == l0
        t = (a @ w)[1:3, ::2]  # a view: the product first
        np.testing.assert_allclose(t.to_numpy(), m_ref[1:3, ::2], rtol=2e-5, atol=2e-5)
        s = pyaccel.sum(pyaccel.maximum(a @ w + b, 0.0), axis=1)  # epilogue, then the sum
        np.testing.assert_allclose(s.to_numpy(), np.maximum(m_ref + bh, 0).sum(axis=1), rtol=1e-4, atol=1e-4)
        two = (a @ w) + (a @ w) * 0.5  # two products in one tree: one is computed first
        np.testing.assert_allclose(two.to_numpy(), 1.5 * m_ref, rtol=2e-5, atol=2e-5)
        chain = (pyaccel.maximum(a @ w + b, 0.0)) @ pyaccel.asarray(wh.T, device=dev)  # MLP: lazy input
        np.testing.assert_allclose(chain.to_numpy(), np.maximum(m_ref + bh, 0) @ wh.T, rtol=1e-4, atol=1e-4)


def test_operand_written_after_deferral(gpu_device, rng, pinned) -> None:
    """The product is of the operands' values when ``@`` ran: an in-place write into an
    operand computes it first (and its lazy consumers then read it)."""
    dev = gpu_device
    pinned("u16x4")
    ah, wh = _f32(rng, (16, 8)), _f32(rng, (8, 12))
    with pyaccel.fusion(True):
        a, w = pyaccel.asarray(ah, device=dev), pyaccel.asarray(wh, device=dev)
        m = a @ w
        y = m + 1.0
        a[0, 0] = 100.0
        w += 1.0
        assert m._lazy is None
        np.testing.assert_allclose(y.to_numpy(), ah @ wh + 1, rtol=2e-5, atol=2e-5)
        ah2 = ah.copy()
        ah2[0, 0] = 100.0
        np.testing.assert_allclose((a @ w).to_numpy(), ah2 @ (wh + 1), rtol=2e-5, atol=1e-4)


def test_not_deferred(gpu_device, rng, monkeypatch, pinned) -> None:
    """Fusion off, K split into partial products, float16 / 64-bit dtypes: the eager path."""
    dev = gpu_device
    pinned("naive")
    ah, wh = _f32(rng, (8, 40)), _f32(rng, (40, 6))
    with pyaccel.fusion(False):
        a, w = pyaccel.asarray(ah, device=dev), pyaccel.asarray(wh, device=dev)
        assert (a @ w)._lazy is None
    monkeypatch.setattr(GK, "_MM_KC", {k: 16 for k in GK._MM_KC})  # K = 40 > 16: split
    with pyaccel.fusion(True):
        m = a @ w
        assert m._lazy is None
        np.testing.assert_allclose((m + 1).to_numpy(), ah @ wh + 1, rtol=2e-5, atol=2e-5)
    monkeypatch.undo()
    with pyaccel.fusion(True):
        f16 = pyaccel.Capability.F16 in dev.capabilities
        for dt in ("float16", "int64", "float64") if f16 else ("int64", "float64"):
            x = pyaccel.asarray(ah, device=dev).astype(getattr(pyaccel, dt))
            y = pyaccel.asarray(wh, device=dev).astype(getattr(pyaccel, dt))
            assert (x @ y)._lazy is None


def test_cached_by_structure_not_values(gpu_device, rng, pinned) -> None:
    dev = gpu_device
    pinned("v8x4")
    with pyaccel.fusion(True):
        a, w = pyaccel.asarray(_f32(rng, (64, 16)), device=dev), pyaccel.asarray(_f32(rng, (16, 32)), device=dev)
        pyaccel.maximum(a @ w + 0.5, 0.0).to_numpy()
        k0 = F.STATS["kernels_compiled"]
        for c in (1.5, -2.0, 3.25):
            ah = _f32(rng, (64, 16))
            got = pyaccel.maximum(pyaccel.asarray(ah, device=dev) @ w + c, 0.0).to_numpy()
            np.testing.assert_allclose(got, np.maximum(ah @ w.to_numpy() + np.float32(c), 0), rtol=2e-5, atol=2e-5)
        assert F.STATS["kernels_compiled"] == k0


def test_threads_share_a_deferred_product(gpu_device, rng, pinned) -> None:
    """Four threads consuming one lazy product: each result right (the first to compute its
    consumer finds the product shared with the others and computes it alone, once)."""
    dev = gpu_device
    pinned("naive")
    ah, wh = _f32(rng, (20, 12)), _f32(rng, (12, 10))
    with pyaccel.fusion(True):
        a, w = pyaccel.asarray(ah, device=dev), pyaccel.asarray(wh, device=dev)
        m = a @ w
    out: dict[int, np.ndarray] = {}

    def work(k: int) -> None:
        with pyaccel.fusion(True):
            out[k] = (m * float(k + 1)).to_numpy()

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for k in range(4):
        np.testing.assert_allclose(out[k], (ah @ wh) * (k + 1), rtol=2e-5, atol=2e-5)


def test_jit_replays_the_epilogue(gpu_device, rng, pinned) -> None:
    """A traced MLP layer records the matmul kernel with its epilogue once and replays it
    with new arguments (no fusion planning on later calls)."""
    dev = gpu_device
    pinned("u16x4")
    layer = pyaccel.jit(lambda x, w, b: pyaccel.sum(pyaccel.maximum(x @ w + b, 0.0) @ w.T, axis=0))
    for i in range(3):
        xh, wh, bh = _f32(rng, (32, 16)), _f32(rng, (16, 24)), _f32(rng, 24)
        f0 = F.STATS.get("fused_matmuls", 0)
        got = layer(*(pyaccel.asarray(t, device=dev) for t in (xh, wh, bh))).to_numpy()
        assert F.STATS.get("fused_matmuls", 0) - f0 == (1 if i == 0 else 0)  # traced once
        want = (np.maximum(xh.astype(np.float64) @ wh + bh, 0) @ wh.T).sum(axis=0)
        scale = (np.abs(np.maximum(xh @ wh + bh, 0)) @ np.abs(wh.T)).sum(axis=0) + 1
        assert (np.abs(got - want) / scale).max() < 5e-5
