"""The blocked factorizations (docs/linalg.md): cholesky, solve, inv, det, slogdet and qr at orders across the
block boundaries (block size b = 32 on GPUs: 1, 7, b - 1, b, b + 1, 2b + 3), batched, against
NumPy in float64 on fresh random data with outputs poisoned first; dispatch counts O(n / b)
and no host read with the checks off; failing matrices as documented (LinAlgError, or NaN
with ``set_checks(False)``); matrices positive definite but tight in float32."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _array_util import poisoned  # noqa: F401  (fixture)

import pyaccel
from pyaccel import linalg as la
from pyaccel.ops.linalg_wgsl import BLOCK
from pyaccel.promotion import device_dtypes

SIZES = [1, 7, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK + 3]
BATCH = (2,)


def tol(dt: np.dtype, n: int) -> float:
    """docs/linalg.md: residuals and errors within 40 n eps."""
    return 40 * max(n, 4) * float(np.finfo(dt).eps)


def rel(x, y) -> float:
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    return float(np.linalg.norm((x - y).ravel()) / max(np.linalg.norm(y.ravel()), 1e-300))


def spd(rng, shape: tuple[int, ...], n: int, dt) -> np.ndarray:
    b = rng.standard_normal(shape + (n, n))
    return (b @ np.swapaxes(b, -1, -2) / n + np.eye(n)).astype(dt)


def well_conditioned(rng, shape: tuple[int, ...], n: int, dt) -> np.ndarray:
    return (rng.standard_normal(shape + (n, n)) / math.sqrt(n) + 2 * np.eye(n)).astype(dt)


def on(device, x) -> pyaccel.Array:
    return pyaccel.asarray(x, device=device)


def counters(device) -> dict[str, int]:
    return dict(getattr(device.impl, "stats", {}))


@pytest.fixture
def no_checks():
    prev = la.set_checks(False)
    yield
    la.set_checks(prev)


@pytest.mark.parametrize("n", SIZES)
def test_blocked_float32(device, rng, poisoned, n):  # noqa: F811
    dt = np.float32
    a = spd(rng, BATCH, n, dt)
    low = la.cholesky(on(device, a)).to_numpy()
    assert low.shape == a.shape and low.dtype == dt
    assert np.all(np.triu(low, 1) == 0), "upper triangle of L not zero"
    assert rel(low @ np.swapaxes(low, -1, -2), a) < tol(dt, n), "‖LLᵀ − A‖"
    assert rel(low, np.linalg.cholesky(a.astype(np.float64))) < tol(dt, n)
    g = well_conditioned(rng, BATCH, n, dt)
    rhs = rng.standard_normal(BATCH + (n, 3)).astype(dt)
    x = la.solve(on(device, g), on(device, rhs)).to_numpy()
    assert x.shape == rhs.shape
    assert rel(x, np.linalg.solve(g.astype(np.float64), rhs)) < tol(dt, n)
    v = rng.standard_normal(n).astype(dt)  # a vector, broadcast over the batch (NumPy 2 rule)
    xv = la.solve(on(device, g[0]), on(device, v)).to_numpy()
    assert rel(xv, np.linalg.solve(g[0].astype(np.float64), v)) < tol(dt, n)
    gi = la.inv(on(device, g)).to_numpy()
    assert rel(g.astype(np.float64) @ gi, np.broadcast_to(np.eye(n), g.shape)) < tol(dt, n), "‖AX − I‖"
    assert rel(gi, np.linalg.inv(g.astype(np.float64))) < tol(dt, n)


@pytest.mark.parametrize("n", SIZES + [3 * BLOCK + 1])
def test_blocked_det_slogdet(device, rng, poisoned, n):  # noqa: F811
    """The blocked LU's pivots and interchange parity: det and slogdet against NumPy float64,
    with rows permuted (an odd and a random permutation) so the sign comes from the parity."""
    dts = [np.float32] + ([np.float64] if "float64" in {d.name for d in device_dtypes(device)} else [])
    for dt in dts:
        a = well_conditioned(rng, (3,), n, dt)
        if n > 1:
            a[1, [0, n - 1]] = a[1, [n - 1, 0]]  # one interchange
            a[2] = a[2][rng.permutation(n)]
        else:
            a[1] = -a[1]
        want_s, want_l = np.linalg.slogdet(a.astype(np.float64))
        s, lg = la.slogdet(on(device, a))
        assert s.dtype == lg.dtype == pyaccel.asarray(a).dtype
        np.testing.assert_array_equal(s.to_numpy(), want_s)
        np.testing.assert_allclose(lg.to_numpy(), want_l, atol=tol(dt, n), rtol=0)
        half = (a * 0.5).astype(dt)  # det of G/sqrt(n)/2 + I stays within the float32 range
        d = la.det(on(device, half)).to_numpy()
        np.testing.assert_allclose(d, np.linalg.det(half.astype(np.float64)), rtol=tol(dt, n))


def test_blocked_det_singular_and_nan(device, rng):
    """An exactly singular matrix (its zero columns in the second block): det 0, slogdet
    (0, -inf), and the other matrices of the stack right; NaN input gives NaN."""
    dt = np.float32
    n = 2 * BLOCK + 3
    a = well_conditioned(rng, (3,), n, dt)
    a[1, :, BLOCK + 2] = a[1, :, BLOCK + 5] = 0.0
    a[2, 3, 7] = np.nan
    d = la.det(on(device, a)).to_numpy()
    s, lg = (t.to_numpy() for t in la.slogdet(on(device, a)))
    want_s, want_l = np.linalg.slogdet(a[0].astype(np.float64))
    assert s[0] == want_s and abs(lg[0] - want_l) < tol(dt, n)
    assert rel(d[0], np.linalg.det(a[0].astype(np.float64))) < tol(dt, n)
    assert d[1] == 0 and s[1] == 0 and lg[1] == -math.inf
    assert np.isnan(d[2]) and np.isnan(lg[2])


QR_SHAPES = [(BLOCK + 1, BLOCK + 1), (2 * BLOCK + 3, BLOCK - 1), (BLOCK - 1, 2 * BLOCK + 3),
             (3 * BLOCK + 1, 2 * BLOCK + 5), (2 * BLOCK + 5, 3 * BLOCK + 1)]


@pytest.mark.parametrize("shape", QR_SHAPES)
def test_blocked_qr(device, rng, poisoned, shape):  # noqa: F811
    """The blocked Householder QR: Q and R against NumPy float64 (LAPACK's signs), ‖A − QR‖,
    ‖QᵀQ − I‖, R upper triangular, both modes, tall and wide, a batch of 2."""
    m, n = shape
    k = min(m, n)
    dt = np.float32
    a = rng.standard_normal(BATCH + shape).astype(dt)
    for mode, qs in (("reduced", (m, k)), ("complete", (m, m))):
        q, r = (t.to_numpy() for t in la.qr(on(device, a), mode=mode))
        wq, wr = np.linalg.qr(a.astype(np.float64), mode=mode)
        assert q.shape == wq.shape and r.shape == wr.shape
        assert np.all(np.tril(r, -1) == 0), f"R not upper triangular ({mode})"
        assert rel(q @ r, a) < tol(dt, max(m, n)), f"‖A − QR‖ {mode}"
        eye = np.broadcast_to(np.eye(qs[1]), BATCH + (qs[1], qs[1]))
        assert rel(np.swapaxes(q, -1, -2) @ q, eye) < tol(dt, m), f"‖QᵀQ − I‖ {mode}"
        assert rel(r, wr) < tol(dt, max(m, n)), f"R differs from NumPy's ({mode})"
        # Q's columns past the rank of A (complete, m > n) are any orthonormal completion
        assert rel(q[..., :k], wq[..., :k]) < 10 * tol(dt, max(m, n)), f"Q differs from NumPy's ({mode})"


def test_blocked_qr_zero_column_and_unblocked_path(device, rng, monkeypatch):
    """A zero column in the second block (tau = 0, H = I, as geqrf) and the
    one-reflector-at-a-time kernels taller matrices take (forced here) agree with NumPy."""
    from pyaccel.ops import linalg_wgsl
    dt = np.float32
    m, n = 2 * BLOCK + 7, BLOCK + 9
    a = rng.standard_normal((m, n)).astype(dt)
    a[:, BLOCK + 3] = 0.0
    wq, wr = np.linalg.qr(a.astype(np.float64))
    q, r = (t.to_numpy() for t in la.qr(on(device, a)))
    assert rel(q @ r, a) < tol(dt, m) and rel(q.T @ q, np.eye(n)) < tol(dt, m)
    assert rel(r, wr) < tol(dt, m)
    bad = a.copy()
    bad[5, BLOCK + 3] = np.nan  # docs/linalg.md: NaN in R from the first non-finite column on
    rn = la.qr(on(device, bad))[1].to_numpy()
    assert np.all(np.isfinite(rn[:, :BLOCK + 3])) and np.isnan(rn[:, BLOCK + 3:]).any()
    monkeypatch.setattr(linalg_wgsl, "QR_BLOCKED_MAX_M", 0)
    monkeypatch.setattr(linalg_wgsl, "BLOCKED_MAX_N", 0)  # det: the unblocked elimination
    q0, r0 = (t.to_numpy() for t in la.qr(on(device, a)))
    assert rel(r0, wr) < tol(dt, m) and rel(q0 @ r0, a) < tol(dt, m)
    g = well_conditioned(rng, (2,), BLOCK + 2, dt)
    s, lg = (t.to_numpy() for t in la.slogdet(on(device, g)))
    ws, wl = np.linalg.slogdet(g.astype(np.float64))
    np.testing.assert_array_equal(s, ws)
    np.testing.assert_allclose(lg, wl, atol=tol(dt, BLOCK + 2), rtol=0)


def test_blocked_float64_and_broadcast(device, rng, poisoned):  # noqa: F811
    n = BLOCK + 1
    if "float64" in {d.name for d in device_dtypes(device)}:
        a = spd(rng, (), n, np.float64)
        low = la.cholesky(on(device, a)).to_numpy()
        assert low.dtype == np.float64
        assert rel(low, np.linalg.cholesky(a)) < tol(np.float64, n)
        g = well_conditioned(rng, (), n, np.float64)
        assert rel(la.inv(on(device, g)).to_numpy(), np.linalg.inv(g)) < tol(np.float64, n)
    # one matrix, a stack of right-hand sides (the batch comes from b)
    g = well_conditioned(rng, (), n, np.float32)
    rhs = rng.standard_normal((3, n, 2)).astype(np.float32)
    x = la.solve(on(device, g), on(device, rhs)).to_numpy()
    assert x.shape == (3, n, 2)
    assert rel(x, np.linalg.solve(g.astype(np.float64), rhs)) < tol(np.float32, n)


def test_dispatches_per_block(device, rng):
    """O(n / b) dispatches per call on devices that count them (one host read at most)."""
    if "dispatches" not in counters(device):
        pytest.skip("this device keeps no dispatch counters (cpu runs LAPACK)")
    n = 4 * BLOCK + 5
    blocks = -(-n // BLOCK)
    a = on(device, spd(rng, (), n, np.float32))
    g = on(device, well_conditioned(rng, (), n, np.float32))
    r = on(device, rng.standard_normal((n, 1)).astype(np.float32))
    for name, call, per_block in (("cholesky", lambda: la.cholesky(a), 4),
                                  ("solve", lambda: la.solve(g, r), 6),
                                  ("det", lambda: la.det(g), 6),
                                  ("slogdet", lambda: la.slogdet(g), 6),
                                  ("qr", lambda: la.qr(g), 11)):
        call()  # pipelines
        before = counters(device)
        call()
        after = counters(device)
        used = after["dispatches"] - before["dispatches"]
        assert used <= per_block * blocks + 8, f"{name} {n}: {used} dispatches"
        assert after["reads"] - before["reads"] <= (1 if name in ("cholesky", "solve") else 0), \
            f"{name}: more than the check's one read"


def test_failures_raise_or_give_nan(device, rng, no_checks):
    dt = np.float32
    n = BLOCK + 3
    p = spd(rng, (3,), n, dt)
    p[1, BLOCK + 1, BLOCK + 1] = -1.0  # not positive definite, in the second block
    # checks off: no host read, the failing matrix all NaN, the others right
    x = on(device, p)
    before = counters(device)
    low = la.cholesky(x)
    if "reads" in before:
        assert counters(device)["reads"] == before["reads"], "cholesky read back with checks off"
    low = low.to_numpy()
    assert np.all(np.isnan(low[1]))
    for k in (0, 2):
        assert rel(low[k], np.linalg.cholesky(p[k].astype(np.float64))) < tol(dt, n)
    g = well_conditioned(rng, (3,), n, dt)
    g[2, :, 5] = g[2, :, 40 % n] = 0.0  # exactly singular
    xs = la.solve(on(device, g), on(device, np.ones((3, n, 1), dt))).to_numpy()
    assert np.all(np.isnan(xs[2])) and np.all(np.isfinite(xs[:2]))
    assert np.all(np.isnan(la.inv(on(device, g)).to_numpy()[2]))
    # checks on (the default): LinAlgError naming the batch index
    la.set_checks(True)
    with pytest.raises(la.LinAlgError, match=r"positive definite.*batch index \(1,\)"):
        la.cholesky(on(device, p))
    with pytest.raises(la.LinAlgError, match=r"singular.*batch index \(2,\)"):
        la.solve(on(device, g), on(device, np.ones((3, n, 1), dt)))


def test_tight_positive_definite_float32(device, rng):
    """Gram matrices of low rank plus a small ridge (as scikit-learn factors): PD in float64,
    smallest eigenvalue / largest >= n eps32. They factor, and match NumPy's float32 result.
    (NumPy computes float32 linalg in float64 and rounds, so it also factors matrices tighter
    than this, which a float32 factorization may report not positive definite:
    docs/linalg.md.)"""
    eps = float(np.finfo(np.float32).eps)
    for _ in range(6):
        n = int(rng.integers(5, 3 * BLOCK))
        r = int(rng.integers(1, n))
        x = rng.standard_normal((n, r))
        g = x @ x.T
        lam = np.linalg.eigvalsh(g)[-1]
        a = (g + 2 * n * eps * lam * np.eye(n)).astype(np.float32)
        w = np.linalg.eigvalsh(a.astype(np.float64))
        assert w[0] / w[-1] >= n * eps
        want = np.linalg.cholesky(a)
        low = la.cholesky(on(device, a)).to_numpy()
        assert np.all(np.isfinite(low))
        assert rel(low @ low.T, a) < tol(np.float32, n)
        assert rel(low, want) < 1e-2  # the factor of a nearly singular matrix is ill-conditioned
