"""The Array API linalg extension on every device: residual checks (‖A − QR‖, ‖QᵀQ − I‖,
‖AV − VΛ‖, ‖A − UΣVᵀ‖, ‖LLᵀ − A‖, ‖Ax − b‖) and value comparison with NumPy on fresh random
data, outputs poisoned first; failures (LinAlgError naming the batch index), NaN handling,
and the exact host-path table of the WebGPU provider. Sizes n <= 64 with a batch of 3
by default; n = 256 under ``-m slow``."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from _array_util import poisoned  # noqa: F401  (fixture)

import pyaccel
from pyaccel import linalg as la
from pyaccel.errors import PyaccelError
from pyaccel.promotion import device_dtypes

SIZES = [1, 5, 33, 64]
BATCH = 3


def float_dtypes(device) -> list:
    """Every real float dtype of linalg the device holds (float16 is refused, as in NumPy)."""
    return [d for d in device_dtypes(device) if d.kind == "f" and d.name != "float16"]


def eps(dt) -> float:
    return float(np.finfo(np.dtype(dt.name)).eps)


def rel(x, y) -> float:
    """‖x − y‖_F / max(‖y‖_F, tiny), over the whole stack."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    return float(np.linalg.norm((x - y).ravel()) / max(np.linalg.norm(y.ravel()), 1e-300))


def tol(dt, n: int) -> float:
    """Residual bound: a generous multiple of n * eps (backward-stable algorithms)."""
    return 40 * max(n, 4) * eps(dt)


def spd(rng, batch: int, n: int, dt) -> np.ndarray:
    b = rng.standard_normal((batch, n, n))
    return (b @ b.transpose(0, 2, 1) / n + np.eye(n)).astype(np.dtype(dt.name))


def gen(rng, shape, dt) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.dtype(dt.name))


def sym(rng, batch: int, n: int, dt) -> np.ndarray:
    a = rng.standard_normal((batch, n, n))
    return ((a + a.transpose(0, 2, 1)) / 2).astype(np.dtype(dt.name))


def well_conditioned(rng, batch: int, n: int, dt) -> np.ndarray:
    return (rng.standard_normal((batch, n, n)) / math.sqrt(n) + 2 * np.eye(n)).astype(np.dtype(dt.name))


def on(device, x) -> pyaccel.Array:
    return pyaccel.asarray(x, device=device)


# ------------------------------------------------------------------------------------------
# factorizations: residuals and values
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", SIZES)
def test_cholesky(device, rng, poisoned, n):  # noqa: F811
    for dt in float_dtypes(device):
        a = spd(rng, BATCH, n, dt)
        low = la.cholesky(on(device, a)).to_numpy()
        assert low.dtype == a.dtype and low.shape == a.shape
        assert np.all(np.triu(low, 1) == 0), "upper triangle of L not zero"
        assert rel(low @ low.transpose(0, 2, 1), a) < tol(dt, n), f"‖LLᵀ − A‖ {dt.name} n={n}"
        assert rel(low, np.linalg.cholesky(a.astype(np.float64))) < tol(dt, n)
        up = la.cholesky(on(device, a), upper=True).to_numpy()
        np.testing.assert_array_equal(up, low.transpose(0, 2, 1))


@pytest.mark.parametrize("n", SIZES)
def test_solve_and_inv(device, rng, poisoned, n):  # noqa: F811
    for dt in float_dtypes(device):
        a = well_conditioned(rng, BATCH, n, dt)
        b = gen(rng, (BATCH, n, 3), dt)
        x = la.solve(on(device, a), on(device, b)).to_numpy()
        assert x.shape == (BATCH, n, 3) and x.dtype == a.dtype
        assert rel(a.astype(np.float64) @ x, b) < tol(dt, n), f"‖Ax − b‖ {dt.name} n={n}"
        assert rel(x, np.linalg.solve(a.astype(np.float64), b)) < 10 * tol(dt, n)
        # a 1-D right-hand side is one vector for every matrix of the stack (NumPy 2 rule)
        v = gen(rng, (n,), dt)
        xv = la.solve(on(device, a), on(device, v)).to_numpy()
        assert xv.shape == (BATCH, n)
        assert rel(np.einsum("bij,bj->bi", a.astype(np.float64), xv), np.broadcast_to(v, (BATCH, n))) < tol(dt, n)
        # batch broadcasting: one matrix, a stack of right-hand sides
        x1 = la.solve(on(device, a[0]), on(device, b)).to_numpy()
        assert x1.shape == (BATCH, n, 3)
        assert rel(a[0].astype(np.float64) @ x1, b) < tol(dt, n)
        ai = la.inv(on(device, a)).to_numpy()
        assert rel(a.astype(np.float64) @ ai, np.broadcast_to(np.eye(n), a.shape)) < tol(dt, n)


@pytest.mark.parametrize("n", SIZES)
def test_det_slogdet(device, rng, poisoned, n):  # noqa: F811
    for dt in float_dtypes(device):
        a = well_conditioned(rng, BATCH, n, dt)
        a[1, [0, -1]] = a[1, [-1, 0]] if n > 1 else -a[1, [0]]  # one interchange: the sign flips
        want_s, want_l = np.linalg.slogdet(a.astype(np.float64))
        s, lg = la.slogdet(on(device, a))
        np.testing.assert_array_equal(s.to_numpy(), want_s)
        np.testing.assert_allclose(lg.to_numpy(), want_l, atol=tol(dt, n), rtol=0)
        d = la.det(on(device, a)).to_numpy()
        np.testing.assert_allclose(d, np.linalg.det(a.astype(np.float64)), rtol=tol(dt, n))


@pytest.mark.parametrize("shape", [(5, 5), (33, 7), (7, 33), (64, 64), (1, 4), (4, 1)])
def test_qr(device, rng, poisoned, shape):  # noqa: F811
    m, n = shape
    k = min(m, n)
    for dt in float_dtypes(device):
        a = gen(rng, (BATCH, m, n), dt)
        for mode, qs, rs in (("reduced", (m, k), (k, n)), ("complete", (m, m), (m, n))):
            q, r = la.qr(on(device, a), mode=mode)
            q, r = q.to_numpy(), r.to_numpy()
            assert q.shape == (BATCH,) + qs and r.shape == (BATCH,) + rs
            assert np.all(np.tril(r, -1) == 0), f"R not upper triangular ({mode})"
            assert rel(q @ r, a) < tol(dt, max(m, n)), f"‖A − QR‖ {mode} {dt.name} {shape}"
            eye = np.broadcast_to(np.eye(qs[1]), (BATCH,) + (qs[1], qs[1]))
            assert rel(q.transpose(0, 2, 1) @ q, eye) < tol(dt, m), f"‖QᵀQ − I‖ {mode}"
            wq, wr = np.linalg.qr(a.astype(np.float64), mode=mode)  # same signs as LAPACK
            assert rel(r, wr) < 10 * tol(dt, max(m, n)), f"R differs from NumPy's ({mode})"


def test_qr_long_columns_path(device, rng, poisoned, monkeypatch):  # noqa: F811
    """Columns longer than one invocation may loop over take the workgroup-per-column
    kernel (forced here by lowering the loop bound, on the one-reflector-at-a-time path)."""
    from pyaccel.ops import gpu_kernels, linalg_wgsl
    monkeypatch.setattr(gpu_kernels, "MAX_LOOP", 64 + 8)
    monkeypatch.setattr(linalg_wgsl, "QR_BLOCKED_MAX_M", 0)
    dt = float_dtypes(device)[0]
    a = gen(rng, (2, 20, 6), dt)
    q, r = (t.to_numpy() for t in la.qr(on(device, a), mode="complete"))
    assert rel(q @ r, a) < tol(dt, 20)
    assert rel(q.transpose(0, 2, 1) @ q, np.broadcast_to(np.eye(20), (2, 20, 20))) < tol(dt, 20)


@pytest.mark.parametrize("n", SIZES)
def test_eigh(device, rng, poisoned, n):  # noqa: F811
    for dt in float_dtypes(device):
        a = sym(rng, BATCH, n, dt)
        w, v = la.eigh(on(device, a))
        w, v = w.to_numpy(), v.to_numpy()
        assert w.shape == (BATCH, n) and v.shape == (BATCH, n, n)
        assert np.all(np.diff(w, axis=-1) >= 0), "eigenvalues not ascending"
        a64 = a.astype(np.float64)
        scale = np.linalg.norm(a64.ravel())
        assert np.linalg.norm((a64 @ v - v * w[:, None, :]).ravel()) / scale < tol(dt, n), "‖AV − VΛ‖"
        assert rel(v.transpose(0, 2, 1) @ v, np.broadcast_to(np.eye(n), a.shape)) < tol(dt, n), "‖VᵀV − I‖"
        want = np.linalg.eigvalsh(a64)
        assert np.max(np.abs(w - want)) / np.max(np.abs(want)) < tol(dt, n)
        np.testing.assert_array_equal(la.eigvalsh(on(device, a)).to_numpy(), w)
        junk = a + np.triu(gen(rng, a.shape, dt), 1)  # only the lower triangle is read
        np.testing.assert_array_equal(la.eigvalsh(on(device, junk)).to_numpy(), w)


@pytest.mark.parametrize("shape", [(5, 5), (33, 7), (7, 33), (24, 24), (1, 3)])
def test_svd(device, rng, poisoned, shape):  # noqa: F811
    m, n = shape
    k = min(m, n)
    for dt in float_dtypes(device):
        a = gen(rng, (BATCH, m, n), dt)
        want = np.linalg.svd(a.astype(np.float64), compute_uv=False)
        for full in (True, False):
            res = la.svd(on(device, a), full_matrices=full)
            assert res._fields == ("U", "S", "Vh")
            u, s, vh = (t.to_numpy() for t in res)
            us, vs = ((m, m), (n, n)) if full else ((m, k), (k, n))
            assert u.shape == (BATCH,) + us and s.shape == (BATCH, k) and vh.shape == (BATCH,) + vs
            assert np.all(np.diff(s, axis=-1) <= 0), "singular values not descending"
            recon = (u[..., :, :k] * s[:, None, :]) @ vh[..., :k, :]
            assert rel(recon, a) < tol(dt, max(m, n)), f"‖A − UΣVᵀ‖ full={full} {shape}"
            assert rel(u.transpose(0, 2, 1) @ u, np.broadcast_to(np.eye(us[1]), (BATCH,) + (us[1],) * 2)) < tol(dt, m)
            assert rel(vh @ vh.transpose(0, 2, 1), np.broadcast_to(np.eye(vs[0]), (BATCH,) + (vs[0],) * 2)) < tol(dt, n)
            assert np.max(np.abs(s - want)) / np.max(want) < tol(dt, max(m, n))
        np.testing.assert_allclose(la.svdvals(on(device, a)).to_numpy(), want, rtol=0,
                                   atol=tol(dt, max(m, n)) * float(np.max(want)))


def test_svd_rank_deficient_keeps_orthonormal_u(device, rng, poisoned):  # noqa: F811
    """Zero singular values: U still has orthonormal columns (the QR completion)."""
    for dt in float_dtypes(device):
        b = rng.standard_normal((BATCH, 12, 3)) @ rng.standard_normal((BATCH, 3, 6))
        a = b.astype(np.dtype(dt.name))  # rank 3, 6 columns
        u, s, vh = (t.to_numpy() for t in la.svd(on(device, a)))
        assert rel(u.transpose(0, 2, 1) @ u, np.broadcast_to(np.eye(12), (BATCH, 12, 12))) < tol(dt, 12)
        assert rel((u[..., :6] * s[:, None, :]) @ vh, a) < tol(dt, 12)
        assert np.all(s[:, 3:] < 1e-3 * s[:, :1])
        r = la.matrix_rank(on(device, a)).to_numpy()
        np.testing.assert_array_equal(r, [3] * BATCH)


def test_repeated_eigenvalues_and_singular_values(device, rng, poisoned):  # noqa: F811
    """Clusters (exactly repeated values) and a zero column: residuals stay small."""
    for dt in float_dtypes(device):
        q, _ = np.linalg.qr(rng.standard_normal((BATCH, 6, 6)))
        lam = np.array([1.0, 1.0, 2.0, 2.0, -3.0, 0.0])
        a = ((q * lam[None, None, :]) @ q.transpose(0, 2, 1)).astype(np.dtype(dt.name))
        a = (a + a.transpose(0, 2, 1)) / 2
        w, v = (t.to_numpy() for t in la.eigh(on(device, a)))
        np.testing.assert_allclose(w, np.broadcast_to(np.sort(lam), w.shape), atol=tol(dt, 6) * 3)
        assert np.linalg.norm((a.astype(np.float64) @ v - v * w[:, None, :]).ravel()) / np.linalg.norm(a) < tol(dt, 6)
        assert rel(v.transpose(0, 2, 1) @ v, np.broadcast_to(np.eye(6), a.shape)) < tol(dt, 6)
        g = a.copy()
        g[:, :, 2] = 0.0  # a zero column
        u, s, vh = (t.to_numpy() for t in la.svd(on(device, g)))
        assert rel((u * s[:, None, :]) @ vh, g) < tol(dt, 6)
        assert rel(u.transpose(0, 2, 1) @ u, np.broadcast_to(np.eye(6), g.shape)) < tol(dt, 6)
        assert rel(vh @ vh.transpose(0, 2, 1), np.broadcast_to(np.eye(6), g.shape)) < tol(dt, 6)


# ------------------------------------------------------------------------------------------
# composite functions
# ------------------------------------------------------------------------------------------
def test_composites_match_numpy(device, rng, poisoned):  # noqa: F811
    for dt in float_dtypes(device):
        t = 10 * tol(dt, 16)
        a = gen(rng, (BATCH, 9, 6), dt)
        a64 = a.astype(np.float64)
        A = on(device, a)
        for o in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
            for kd in (False, True):
                got = la.matrix_norm(A, ord=o, keepdims=kd).to_numpy()
                np.testing.assert_allclose(got, np.linalg.matrix_norm(a64, ord=o, keepdims=kd), rtol=t,
                                           err_msg=f"matrix_norm ord={o}")
        for o in (2, 1, 0, math.inf, -math.inf, 3):
            np.testing.assert_allclose(la.vector_norm(A, ord=o, axis=-1).to_numpy(),
                                       np.linalg.vector_norm(a64, ord=o, axis=-1), rtol=t)
        np.testing.assert_allclose(la.pinv(A).to_numpy(), np.linalg.pinv(a64), rtol=0,
                                   atol=t * float(np.max(np.abs(np.linalg.pinv(a64)))))
        np.testing.assert_array_equal(la.matrix_rank(A).to_numpy(), np.linalg.matrix_rank(a64))
        sq = well_conditioned(rng, BATCH, 6, dt)
        S = on(device, sq)
        for p in (0, 1, 2, 5, -1, -3):
            want = np.linalg.matrix_power(sq.astype(np.float64), p)
            got = la.matrix_power(S, p).to_numpy()
            assert got.shape == sq.shape
            assert rel(got, want) < t, f"matrix_power {p}"
        x1, x2 = gen(rng, (BATCH, 3, 4), dt), gen(rng, (3, 4), dt)
        np.testing.assert_allclose(la.cross(on(device, x1), on(device, x2), axis=-2).to_numpy(),
                                   np.cross(x1, x2, axis=-2), rtol=t, atol=t)
        y1, y2 = gen(rng, (BATCH, 3), dt), gen(rng, (3,), dt)
        np.testing.assert_allclose(la.cross(on(device, y1), on(device, y2)).to_numpy(), np.cross(y1, y2),
                                   rtol=t, atol=t)
        np.testing.assert_allclose(la.trace(S, offset=1).to_numpy(),
                                   np.trace(sq, offset=1, axis1=-2, axis2=-1), rtol=t)
        np.testing.assert_array_equal(la.diagonal(S, offset=-2).to_numpy(),
                                      np.diagonal(sq, offset=-2, axis1=-2, axis2=-1))
        v1, v2 = gen(rng, (5,), dt), gen(rng, (4,), dt)
        np.testing.assert_allclose(la.outer(on(device, v1), on(device, v2)).to_numpy(), np.outer(v1, v2), rtol=t)


def test_named_tuples_and_empty(device):
    dt = float_dtypes(device)[0]
    x = on(device, np.eye(3, dtype=np.dtype(dt.name)))
    assert la.eigh(x)._fields == ("eigenvalues", "eigenvectors")
    assert la.qr(x)._fields == ("Q", "R")
    assert la.slogdet(x)._fields == ("sign", "logabsdet")
    e = on(device, np.zeros((2, 0, 0), dtype=np.dtype(dt.name)))
    assert la.det(e).to_numpy().tolist() == [1.0, 1.0]
    assert la.inv(e).shape == (2, 0, 0)
    assert la.cholesky(e).shape == (2, 0, 0)


# ------------------------------------------------------------------------------------------
# failures, bad input, NaN
# ------------------------------------------------------------------------------------------
def test_singular_and_not_positive_definite_raise(device, rng):
    dt = float_dtypes(device)[0]
    a = well_conditioned(rng, BATCH, 4, dt)
    a[2, :, 1] = a[2, :, 0] = 0.0  # exactly singular (two zero columns)
    with pytest.raises(la.LinAlgError, match=r"singular.*batch index \(2,\)"):
        la.inv(on(device, a))
    with pytest.raises(la.LinAlgError, match="singular"):
        la.solve(on(device, a), on(device, gen(rng, (4,), dt)))
    assert issubclass(la.LinAlgError, PyaccelError) and issubclass(la.LinAlgError, ValueError)
    np.testing.assert_array_equal(la.det(on(device, a[2:])).to_numpy(), [0.0])
    s, lg = la.slogdet(on(device, a[2:]))
    assert s.to_numpy().tolist() == [0.0] and lg.to_numpy().tolist() == [-math.inf]
    p = spd(rng, BATCH, 5, dt)
    p[1] = -p[1]
    with pytest.raises(la.LinAlgError, match=r"positive definite.*batch index \(1,\)"):
        la.cholesky(on(device, p))
    # the device stays usable
    good = spd(rng, 1, 5, dt)
    low = la.cholesky(on(device, good)).to_numpy()
    assert rel(low @ low.transpose(0, 2, 1), good) < tol(dt, 5)


def test_nan_input(device, rng):
    """NaN follows NumPy: solve/det give NaN, cholesky gives NaN (no error: OpenBLAS's potrf
    does not check for NaN) while a negative pivot raises; eigh/svd raise for NaN and give
    NaN for inf."""
    dt = float_dtypes(device)[0]
    a = well_conditioned(rng, 1, 4, dt)
    a[0, 1, 2] = np.nan
    assert np.isnan(la.solve(on(device, a), on(device, gen(rng, (4,), dt))).to_numpy()).any()
    assert np.isnan(la.det(on(device, a)).to_numpy()).all()
    p = spd(rng, 1, 4, dt)
    p[0, 2, 1] = np.nan
    low = la.cholesky(on(device, p)).to_numpy()
    want = np.linalg.cholesky(p)
    np.testing.assert_array_equal(np.isnan(low), np.isnan(want))
    # eigh / svd: NaN raises (LAPACK does not converge), inf gives NaN values, as in NumPy
    s = sym(rng, BATCH, 4, dt)
    s[1, 2, 3] = s[1, 3, 2] = np.nan
    with pytest.raises(la.LinAlgError, match="converge"):
        la.eigh(on(device, s))
    with pytest.raises(la.LinAlgError, match="converge"):
        la.svdvals(on(device, s))
    s[1, 2, 3] = s[1, 3, 2] = np.inf
    w = la.eigvalsh(on(device, s)).to_numpy()
    assert np.isnan(w[1]).all() and np.isfinite(w[[0, 2]]).all()
    sv = la.svdvals(on(device, s)).to_numpy()
    assert np.isnan(sv[1]).all() and np.isfinite(sv[[0, 2]]).all()


def test_bad_input(device):
    dt = float_dtypes(device)[0]
    sq = on(device, np.eye(3, dtype=np.dtype(dt.name)))
    with pytest.raises(ValueError, match="square"):
        la.inv(on(device, np.ones((2, 3), dtype=np.dtype(dt.name))))
    with pytest.raises(ValueError, match=">= 2 dimensions"):
        la.det(on(device, np.ones(3, dtype=np.dtype(dt.name))))
    with pytest.raises(ValueError, match="mode"):
        la.qr(sq, mode="r")
    with pytest.raises(ValueError, match="size 3"):
        la.cross(on(device, np.ones((2, 4), dtype=np.dtype(dt.name))), on(device, np.ones(4, dtype=np.dtype(dt.name))))
    with pytest.raises(ValueError, match="must be 3"):
        la.solve(sq, on(device, np.ones(4, dtype=np.dtype(dt.name))))
    with pytest.raises(TypeError, match="int"):
        la.matrix_power(sq, 1.5)
    with pytest.raises(ValueError, match="ord"):
        la.matrix_norm(sq, ord=3)
    # integers promote to the default float, as in NumPy
    r = la.inv(on(device, np.array([[2, 0], [0, 4]], dtype=np.int32)))
    assert r.dtype.kind == "f" and r.to_numpy().tolist() == [[0.5, 0.0], [0.0, 0.25]]


def test_host_path_table_is_exact():
    """Contract 3: exactly these (primitive, dtype) pairs take the host path on WebGPU devices."""
    from pyaccel.ops import linalg_wgsl
    prims = ("cholesky", "solve", "det", "slogdet", "qr", "eigh", "svd")
    assert linalg_wgsl.LINALG_OPS == prims
    assert linalg_wgsl.KERNEL_DTYPES == {"float32"}
    assert linalg_wgsl.HOST_PATH == ({(p, d) for p in prims for d in ("float64", "complex64", "complex128")}
                                     # eig / eigvals (no kernel for any dtype: test_linalg_eig.py)
                                     | {("eig", d) for d in ("float32", "float64", "complex64", "complex128")})


def test_host_path_runs_numpy(gpu_device, rng, poisoned):  # noqa: F811
    """Dtypes on the host path give exactly NumPy's values (runs once a GPU holds float64)."""
    from pyaccel.dtypes import float64
    from pyaccel.ops import linalg_wgsl
    if float64 not in device_dtypes(gpu_device):
        pytest.skip(f"{gpu_device.uri} holds no float64 yet (step 7 adds it)")
    assert linalg_wgsl.takes_host_path("eigh", float64)
    a = spd(rng, 2, 5, float64)
    w, v = la.eigh(on(gpu_device, a))
    ww, wv = np.linalg.eigh(a)
    np.testing.assert_array_equal(w.to_numpy(), ww)
    np.testing.assert_array_equal(v.to_numpy(), wv)
    x = la.solve(on(gpu_device, a), on(gpu_device, a[:, :, :2]))
    np.testing.assert_array_equal(x.to_numpy(), np.linalg.solve(a, a[:, :, :2]))


# ------------------------------------------------------------------------------------------
# larger sizes
# ------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_large_factorizations(device, rng):
    """n = 256 with PYACCEL_LINALG_LARGE=1; the default (CI) form runs n = 80."""
    n = 256 if os.environ.get("PYACCEL_LINALG_LARGE") else 80
    for dt in float_dtypes(device):
        t = tol(dt, n)
        a = well_conditioned(rng, 1, n, dt)
        b = gen(rng, (1, n, 2), dt)
        x = la.solve(on(device, a), on(device, b)).to_numpy()
        assert rel(a.astype(np.float64) @ x, b) < t
        p = spd(rng, 1, n, dt)
        low = la.cholesky(on(device, p)).to_numpy()
        assert rel(low @ low.transpose(0, 2, 1), p) < t
        q, r = (z.to_numpy() for z in la.qr(on(device, a)))
        assert rel(q @ r, a) < t
        s = sym(rng, 1, n, dt)
        w, v = (z.to_numpy() for z in la.eigh(on(device, s)))
        assert np.linalg.norm(s @ v - v * w[:, None, :]) / np.linalg.norm(s) < t
        u, sv, vh = (z.to_numpy() for z in la.svd(on(device, a)))
        assert rel((u * sv[:, None, :]) @ vh, a) < t


def test_float32_in_float32_out(device, rng) -> None:
    """Every factorisation keeps float32 (a sign built from two Python scalars once made svd's U
    and slogdet's sign float64 on GPUs, whose default float is float64)."""
    a = pyaccel.asarray(rng.standard_normal((2, 5, 4)).astype(np.float32), device=device)
    sq = pyaccel.asarray((rng.standard_normal((2, 4, 4)) + 4 * np.eye(4)).astype(np.float32),
                         device=device)
    spd = sq @ pyaccel.matrix_transpose(sq)
    outs = [*la.svd(a, full_matrices=False), *la.svd(a), *la.qr(a), *la.eigh(spd), *la.slogdet(sq),
            la.det(sq), la.inv(sq), la.solve(sq, a[:, :4, :]), la.cholesky(spd), la.svdvals(a),
            la.pinv(a), la.matrix_norm(a, ord=2)]
    assert [o.dtype.name for o in outs] == ["float32"] * len(outs)
