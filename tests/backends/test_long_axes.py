"""Long axes past Mesa's loop cap, on every GPU device, against NumPy.

lavapipe (vulkan:0) and llvmpipe (gl:0) end a shader invocation after 65,535 loop
iterations (counted over all loops of the invocation, shared by a SIMD batch of 8
invocations) and return garbage without an error; real drivers have watchdogs. The
built-in kernels bound the loop iterations per invocation
(``pyaccel.ops.gpu_kernels.MAX_LOOP``) by splitting long axes into chunks. These tests
use sizes past the cap, fresh random data and poisoned output buffers (``poisoned``).
"""

from __future__ import annotations

import numpy as np
import pytest
from _array_util import poisoned  # noqa: F401  (fixture)

import pyaccel
from pyaccel.ops import gpu_kernels as gk
from pyaccel.testing import assert_allclose_dtype

pytestmark = pytest.mark.usefixtures("poisoned")


def put(dev, a):
    return pyaccel.asarray(np.ascontiguousarray(a), device=dev)


def close_scaled(actual, expected, scale, what: str, rel: float = 1e-5) -> None:
    """|actual - expected| <= rel * scale elementwise (scale: sum of |terms|, float64)."""
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    err = np.abs(a - e)
    tol = rel * np.asarray(scale, dtype=np.float64) + 1e-30
    bad = ~(err <= tol)
    if bad.any():
        i = np.unravel_index(int(np.argmax(np.where(bad, err - tol, -np.inf))), a.shape)
        raise AssertionError(f"{what}: {int(bad.sum())} of {a.size} wrong; at {i}: actual {a[i]!r}, "
                             f"expected {e[i]!r}, tolerance {tol[i] if tol.ndim else tol!r}")


def test_max_loop_constant():
    """The bound is well below the cap, so per-invocation overheads (trees, tails) fit."""
    assert 1024 <= gk.MAX_LOOP <= 65535 // 2
    # matmul K chunks: tiled = 3 loops of 16 + 1 per 16-wide slice, ~100 in the stores
    assert gk._MM_KC["tiled"] // 16 * 52 + 100 <= gk.MAX_LOOP
    assert gk._MM_KC["naive"] + 1 <= gk.MAX_LOOP


def _loops(mode: str, n: int, chunk: int) -> int:
    """Loop iterations of one invocation of reduce.wgsl's entry ``mode`` (from its loops)."""
    if mode == "rows":
        wg = gk._rows_wg(n)
        return -(-(chunk // 4 + 1) // (2 * wg)) + 1 + wg.bit_length() + 8
    if mode == "seg":
        return chunk // 16 + 1 + 4 + 4 + 4
    return chunk + 1  # cols, cols4


@pytest.mark.parametrize("layout", ["gpu", "software"])
def test_reduce_plans_within_bound(monkeypatch, layout):
    """Every pass the reduction planner makes stays within MAX_LOOP (no device needed)."""
    monkeypatch.setattr(gk, "LAYOUT", layout)
    for outer in (1, 3, 100, 5000):
        for n in (0, 1, 100, 65535, 65536, 300001, 2**22, 2**25):
            for inner in (1, 3, 4, 1000):
                if outer * n * inner > 2**25:
                    continue
                m, passes = n, 0
                while True:
                    mode, nchunks, chunk = gk._plan(None, outer, m, inner)
                    assert nchunks * chunk >= m and (nchunks - 1) * chunk < max(m, 1)
                    loops = _loops(mode, m, chunk)
                    assert loops <= gk.MAX_LOOP, (outer, n, inner, mode, chunk, loops)
                    passes += 1
                    assert passes < 8
                    if nchunks == 1:
                        break
                    m = nchunks


# ---------------------------------------------------------------------------
# matmul, tensordot, vecdot
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(1, 65536, 1), (3, 70000, 5), (16, 66000, 17)],
                         ids=["1x65536x1", "naive-3x70000x5", "tiled-16x66000x17"])
def test_matmul_long_k_float32(gpu_device, rng, shape):
    M, K, N = shape
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    r = pyaccel.matmul(put(gpu_device, a), put(gpu_device, b)).to_numpy()
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    close_scaled(r, a64 @ b64, np.abs(a64) @ np.abs(b64), f"matmul {shape}", 1e-4)


def test_matmul_issue_reproducers(gpu_device):
    one = pyaccel.ones((1, 65536), device=gpu_device)
    r = pyaccel.matmul(one, pyaccel.ones((65536, 1), device=gpu_device)).to_numpy()
    np.testing.assert_array_equal(r, [[65536.0]])
    r = pyaccel.matmul(pyaccel.ones((64, 70000), device=gpu_device),
                       pyaccel.ones((70000, 64), device=gpu_device)).to_numpy()
    np.testing.assert_array_equal(r, np.full((64, 64), 70000.0, np.float32))


def test_matmul_long_k_int32_wraps(gpu_device, rng):
    a = rng.integers(-50000, 50000, (4, 70001)).astype(np.int32)
    b = rng.integers(-50000, 50000, (70001, 17)).astype(np.int32)
    r = pyaccel.matmul(put(gpu_device, a), put(gpu_device, b)).to_numpy()
    with np.errstate(over="ignore"):
        want = a @ b  # int32 matmul wraps in NumPy too
    np.testing.assert_array_equal(r, want)


def test_matmul_batched_long_k(gpu_device, rng):
    a = rng.standard_normal((2, 3, 70000)).astype(np.float32)
    b = rng.standard_normal((2, 70000, 18)).astype(np.float32)
    r = pyaccel.matmul(put(gpu_device, a), put(gpu_device, b)).to_numpy()
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    close_scaled(r, a64 @ b64, np.abs(a64) @ np.abs(b64), "batched matmul", 1e-4)


@pytest.mark.parametrize("dtype", ["float32", "int32", "float16"])
def test_matmul_k_chunk_rounds(gpu_device, rng, monkeypatch, dtype):
    """Many K chunks, and partial products past the (patched) binding limit: the chunks
    are summed in rounds that carry the previous rounds' sum."""
    if dtype not in {d.name for d in pyaccel.promotion.device_dtypes(gpu_device)}:
        pytest.skip(f"{gpu_device.uri} has no {dtype}")
    real_limit = gk._binding_limit
    monkeypatch.setattr(gk, "_MM_KC", {"tiled": 32, "naive": 24})
    for M, K, N in ((3, 1000, 5), (20, 999, 70)):  # naive (13 and 42 chunks), tiled (32 chunks)
        slice_bytes = M * N * 4
        monkeypatch.setattr(gk, "_binding_limit", lambda dev, s=slice_bytes: 5 * s)
        if dtype == "int32":
            a = rng.integers(-1000, 1000, (M, K)).astype(np.int32)
            b = rng.integers(-1000, 1000, (K, N)).astype(np.int32)
        else:
            a = rng.standard_normal((M, K)).astype(dtype)
            b = rng.standard_normal((K, N)).astype(dtype)
        r = pyaccel.matmul(put(gpu_device, a), put(gpu_device, b)).to_numpy()
        assert r.dtype == np.dtype(dtype)
        if dtype == "int32":
            np.testing.assert_array_equal(r, a @ b)
        else:
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            want = (a64 @ b64).astype(dtype).astype(np.float64)  # one rounding to the dtype
            close_scaled(r, want, np.abs(a64) @ np.abs(b64), f"matmul {dtype} {(M, K, N)}",
                         1e-5 if dtype == "float32" else 2e-3)
    monkeypatch.setattr(gk, "_binding_limit", lambda dev: 1)
    with pytest.raises(pyaccel.errors.OutOfDeviceMemoryError, match="max_storage_binding_size"):
        pyaccel.matmul(put(gpu_device, a), put(gpu_device, b))
    monkeypatch.setattr(gk, "_binding_limit", real_limit)
    small = pyaccel.matmul(put(gpu_device, a[:, :10]), put(gpu_device, b[:10])).to_numpy()
    assert small.shape == (M, N)  # the device is still usable


def test_tensordot_long_contraction(gpu_device, rng):
    a = rng.standard_normal((3, 300, 250)).astype(np.float32)
    b = rng.standard_normal((300, 250, 4)).astype(np.float32)
    r = pyaccel.tensordot(put(gpu_device, a), put(gpu_device, b), axes=2).to_numpy()
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    close_scaled(r, np.tensordot(a64, b64, axes=2), np.tensordot(np.abs(a64), np.abs(b64), axes=2),
                 "tensordot K=75000", 1e-4)


def test_vecdot_long_axis(gpu_device, rng):
    x = rng.standard_normal((2, 150000)).astype(np.float32)
    y = rng.standard_normal((2, 150000)).astype(np.float32)
    r = pyaccel.vecdot(put(gpu_device, x), put(gpu_device, y)).to_numpy()
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    close_scaled(r, (x64 * y64).sum(-1), np.abs(x64 * y64).sum(-1), "vecdot", 1e-4)


# ---------------------------------------------------------------------------
# softmax / logsumexp
# ---------------------------------------------------------------------------
def _softmax64(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("n", [300000, 70001])
def test_softmax_long_rows(gpu_device, rng, n):
    x = (rng.standard_normal((2, n)) * 3).astype(np.float32)
    x[1, rng.integers(n)] = 40.0  # a dominant element somewhere in the row
    r = pyaccel.nn.softmax(put(gpu_device, x), axis=-1).to_numpy()
    want = _softmax64(x.astype(np.float64))
    assert_allclose_dtype(r, want.astype(np.float32), rtol=1e-4, atol=1e-12, what=f"softmax n={n}")
    np.testing.assert_allclose(r.astype(np.float64).sum(-1), 1.0, rtol=1e-4)


def test_softmax_logsumexp_long_rows_gpu_layout_and_f16(gpu_device, rng, monkeypatch):
    """The chunked path with 256-thread workgroups (rows past ~2M elements) and float16."""
    monkeypatch.setattr(gk, "LAYOUT", "gpu")
    x = rng.standard_normal((1, 2_200_001)).astype(np.float32)
    X = put(gpu_device, x)
    x64 = x.astype(np.float64)
    assert_allclose_dtype(pyaccel.nn.softmax(X, axis=-1).to_numpy(),
                          _softmax64(x64).astype(np.float32), rtol=1e-4, atol=1e-14,
                          what="softmax, gpu layout")
    m = x64.max()
    np.testing.assert_allclose(pyaccel.nn.logsumexp(X, axis=-1).to_numpy(),
                               [m + np.log(np.exp(x64 - m).sum())], rtol=1e-5)
    if "float16" in {d.name for d in pyaccel.promotion.device_dtypes(gpu_device)}:
        monkeypatch.setattr(gk, "LAYOUT", "auto")
        h = rng.standard_normal((2, 300000)).astype(np.float16)
        r = pyaccel.nn.softmax(put(gpu_device, h), axis=-1).to_numpy()
        assert r.dtype == np.float16
        want = _softmax64(h.astype(np.float64))
        np.testing.assert_allclose(r.astype(np.float64), want, rtol=2e-3, atol=1e-7)


def test_softmax_zeros_row(gpu_device):
    """The issue's reproducer: a row of 300,000 zeros."""
    r = pyaccel.nn.softmax(pyaccel.zeros((1, 300000), device=gpu_device), axis=-1).to_numpy()
    np.testing.assert_allclose(r, 1.0 / 300000, rtol=1e-5)


def test_logsumexp_long_rows(gpu_device, rng):
    x = rng.standard_normal((2, 600000)).astype(np.float32)
    x[0, rng.integers(600000)] = 100.0
    x[1, -1] = 30.0
    r = pyaccel.nn.logsumexp(put(gpu_device, x), axis=-1).to_numpy()
    x64 = x.astype(np.float64)
    m = x64.max(-1, keepdims=True)
    want = (m + np.log(np.exp(x64 - m).sum(-1, keepdims=True)))[:, 0]
    np.testing.assert_allclose(r, want, rtol=1e-5)


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------
LONG_ROW = (2, 300001)
LONG_COL = (300001, 3)


@pytest.mark.parametrize("layout", ["auto", "gpu", "software"])
@pytest.mark.parametrize("shape,axis", [(LONG_ROW, 1), (LONG_COL, 0), ((300001,), None)],
                         ids=["rows", "cols", "1d"])
def test_reductions_long(gpu_device, rng, monkeypatch, layout, shape, axis):
    monkeypatch.setattr(gk, "LAYOUT", layout)
    x = rng.standard_normal(shape).astype(np.float32)
    X = put(gpu_device, x)
    x64 = x.astype(np.float64)
    what = f"{shape} axis={axis} layout={layout}"
    close_scaled(pyaccel.sum(X, axis=axis).to_numpy(), x64.sum(axis=axis),
                 np.abs(x64).sum(axis=axis), f"sum {what}")
    close_scaled(pyaccel.mean(X, axis=axis).to_numpy(), x64.mean(axis=axis),
                 np.abs(x64).mean(axis=axis), f"mean {what}")
    v = pyaccel.var(X, axis=axis).to_numpy()
    np.testing.assert_allclose(v, x64.var(axis=axis), rtol=1e-4, err_msg=f"var {what}")
    np.testing.assert_array_equal(pyaccel.max(X, axis=axis).to_numpy(), x.max(axis=axis))
    np.testing.assert_array_equal(pyaccel.min(X, axis=axis).to_numpy(), x.min(axis=axis))
    np.testing.assert_array_equal(pyaccel.argmax(X, axis=axis).to_numpy(), x.argmax(axis=axis))
    np.testing.assert_array_equal(pyaccel.argmin(X, axis=axis).to_numpy(), x.argmin(axis=axis))
    p = np.exp(rng.standard_normal(shape) * 1e-3).astype(np.float32)
    np.testing.assert_allclose(pyaccel.prod(put(gpu_device, p), axis=axis).to_numpy(),
                               p.astype(np.float64).prod(axis=axis), rtol=1e-3, err_msg=f"prod {what}")
    b = x > 3.5  # rare True values
    np.testing.assert_array_equal(pyaccel.any(put(gpu_device, b), axis=axis).to_numpy(),
                                  b.any(axis=axis))
    np.testing.assert_array_equal(pyaccel.all(put(gpu_device, ~b), axis=axis).to_numpy(),
                                  (~b).all(axis=axis))


def test_argmax_late_max(gpu_device, rng):
    """The extreme sits past element 65,535 (a truncated loop would miss it)."""
    x = rng.standard_normal((3, 200000)).astype(np.float32)
    x[0, 199999] = 10.0
    x[1, 70000] = 10.0
    x[2, 150000] = -10.0
    X = put(gpu_device, x)
    np.testing.assert_array_equal(pyaccel.argmax(X, axis=1).to_numpy(), x.argmax(axis=1))
    np.testing.assert_array_equal(pyaccel.argmin(X, axis=1).to_numpy(), x.argmin(axis=1))
    np.testing.assert_array_equal(pyaccel.max(X, axis=1).to_numpy(), x.max(axis=1))


@pytest.mark.parametrize("layout", ["auto", "gpu", "software"])
def test_int_sum_long(gpu_device, rng, monkeypatch, layout):
    monkeypatch.setattr(gk, "LAYOUT", layout)
    x = rng.integers(-1000, 1000, (2, 300001)).astype(np.int32)
    np.testing.assert_array_equal(pyaccel.sum(put(gpu_device, x), axis=1).to_numpy(), x.sum(axis=1))
    np.testing.assert_array_equal(pyaccel.sum(put(gpu_device, x.T.copy()), axis=0).to_numpy(),
                                  x.sum(axis=1))


# ---------------------------------------------------------------------------
# cumulative sum, sort
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["auto", "gpu", "software"])
def test_cumulative_sum_long(gpu_device, rng, monkeypatch, layout):
    monkeypatch.setattr(gk, "LAYOUT", layout)
    x = rng.integers(-1000, 1000, 200000).astype(np.int32)
    np.testing.assert_array_equal(pyaccel.cumulative_sum(put(gpu_device, x)).to_numpy(), np.cumsum(x))
    y = rng.integers(-1000, 1000, (200000, 3)).astype(np.int32)
    np.testing.assert_array_equal(pyaccel.cumulative_sum(put(gpu_device, y), axis=0).to_numpy(),
                                  np.cumsum(y, axis=0))
    f = rng.standard_normal(200000).astype(np.float32)
    close_scaled(pyaccel.cumulative_sum(put(gpu_device, f), include_initial=True).to_numpy(),
                 np.concatenate([[0.0], np.cumsum(f.astype(np.float64))]),
                 np.concatenate([[0.0], np.cumsum(np.abs(f.astype(np.float64)))]) + 1.0,
                 "cumulative_sum float32", 1e-5)


def test_sort_long(gpu_device, rng):
    n = 100003  # not a power of two: padded to 2**17
    x = rng.standard_normal(n).astype(np.float32)
    x[rng.integers(n, size=50)] = x[:50]  # ties (stability)
    X = put(gpu_device, x)
    np.testing.assert_array_equal(pyaccel.sort(X).to_numpy(), np.sort(x))
    np.testing.assert_array_equal(pyaccel.argsort(X).to_numpy(), np.argsort(x, kind="stable"))
    d = pyaccel.sort(X, descending=True).to_numpy()
    np.testing.assert_array_equal(d, np.sort(x)[::-1])
