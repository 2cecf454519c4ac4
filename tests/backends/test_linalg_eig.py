"""``linalg.eig`` / ``linalg.eigvals`` (general, non-symmetric matrices; the 2025.12 draft) on
every device, against NumPy on fresh random matrices: eigenvalues compared as multisets
(matched to the float64 reference), the residual ‖A v − v diag(w)‖, unit-norm eigenvectors,
complex results of the input's precision on the input's device, batches, views, empty
stacks, and clear errors for bad input.

Every device computes them with LAPACK ``geev`` through NumPy: cpu:0 directly, WebGPU devices
on the host path (read back, the cpu provider's ``linalg_eig``, upload; counted in
``host_path.HOST_CALLS``), so the values are NumPy's exactly, and this file checks that too.
"""

from __future__ import annotations

import numpy as np
import pytest

import pyaccel
from pyaccel import linalg as la
from pyaccel.ops import host_path
from pyaccel.promotion import device_dtypes

SIZES = [1, 2, 5, 16]
BATCH = 3
COMPLEX_OF = {"float32": "complex64", "complex64": "complex64",
              "float64": "complex128", "complex128": "complex128"}


def eig_dtypes(device) -> list[str]:
    """The float and complex dtypes of linalg the device holds (float16 is refused)."""
    return [d.name for d in device_dtypes(device) if d.kind in "fc" and d.name != "float16"]


def eps(name: str) -> float:
    return float(np.finfo(np.dtype(name)).eps)


def rand(rng, shape, name: str) -> np.ndarray:
    a = rng.standard_normal(shape)
    if name.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(name)


def on(device, a) -> pyaccel.Array:
    return pyaccel.asarray(a, device=device)


def match_multiset(got: np.ndarray, ref: np.ndarray, tol: float) -> float:
    """Largest distance between each reference eigenvalue and a distinct computed one (greedy
    nearest matching; the order of eigenvalues is unspecified)."""
    left = list(got)
    worst = 0.0
    for r in ref:
        k = int(np.argmin([abs(g - r) for g in left]))
        worst = max(worst, abs(left.pop(k) - r))
    assert worst <= tol, f"eigenvalues differ by {worst:.3g} > {tol:.3g}: {np.sort_complex(got)} vs {np.sort_complex(ref)}"
    return worst


@pytest.mark.parametrize("n", SIZES)
def test_eig_against_numpy(device, rng, n) -> None:
    for name in eig_dtypes(device):
        a = rand(rng, (BATCH, n, n), name)
        x = on(device, a)
        before = host_path.HOST_CALLS[("linalg_eig", name)]
        w, v = la.eig(x)
        cdt = COMPLEX_OF[name]
        assert (w.dtype.name, v.dtype.name) == (cdt, cdt)
        assert w.shape == (BATCH, n) and v.shape == (BATCH, n, n)
        assert w.device == device and v.device == device
        # a host computation on GPUs (one host-path call), NumPy's LAPACK directly on cpu:0
        on_host = 0 if device.uri.startswith("cpu:") else 1
        assert host_path.HOST_CALLS[("linalg_eig", name)] - before == on_host
        wh, vh = w.to_numpy(), v.to_numpy()
        # exactly NumPy's geev (complex, as the draft says, where NumPy gives real values)
        rw, rv = np.linalg.eig(a)
        np.testing.assert_array_equal(wh, rw.astype(cdt))
        np.testing.assert_array_equal(vh, rv.astype(cdt))
        # against the float64 / complex128 reference, as multisets
        a64 = a.astype(np.complex128)
        scale = max(1.0, float(np.linalg.norm(a64[0])))
        t = (2e-3 if cdt == "complex64" else 1e-9) * scale
        for k in range(BATCH):
            match_multiset(wh[k], np.linalg.eigvals(a64[k]), t)
            # A v = v diag(w), unit-norm columns
            res = np.linalg.norm(a64[k] @ vh[k] - vh[k] * wh[k][None, :])
            assert res <= 50 * n * eps(cdt) * max(1.0, np.linalg.norm(a64[k])), (name, n, k, res)
            np.testing.assert_allclose(np.linalg.norm(vh[k], axis=0), 1.0, atol=10 * n * eps(cdt))
        ev = la.eigvals(x)
        assert ev.dtype.name == cdt and ev.shape == (BATCH, n) and ev.device == device
        np.testing.assert_array_equal(ev.to_numpy(), np.linalg.eigvals(a).astype(cdt))


def test_eig_complex_eigenvalues_of_real_matrices(device) -> None:
    """A rotation has eigenvalues ±i: real input, complex output (NumPy's own dtype rule would
    give real values for real spectra; the draft always returns complex)."""
    for name in eig_dtypes(device):
        if name.startswith("complex"):
            continue
        r = on(device, np.array([[0.0, -1.0], [1.0, 0.0]], dtype=name))
        w = np.sort_complex(la.eigvals(r).to_numpy())
        np.testing.assert_allclose(w, [-1j, 1j], atol=10 * eps(name))
        d = on(device, np.diag([3.0, -2.0, 0.5]).astype(name))
        w, v = la.eig(d)
        assert w.dtype.kind == "c"
        np.testing.assert_array_equal(np.sort_complex(w.to_numpy()), [-2, 0.5, 3])
        np.testing.assert_allclose(np.abs(v.to_numpy()), np.eye(3), atol=10 * eps(name))


def test_eig_of_views_batches_and_empty_stacks(device, rng) -> None:
    name = eig_dtypes(device)[0]
    a = rand(rng, (2, 3, 4, 4), name)
    x = on(device, a)
    for view, ref in ((x.mT, a.transpose(0, 1, 3, 2)), (x[1, :, 1:, 1:], a[1, :, 1:, 1:]),
                      (x[0, 2], a[0, 2])):
        w, v = la.eig(view)
        rw, rv = np.linalg.eig(ref)
        np.testing.assert_array_equal(w.to_numpy(), rw.astype(w.dtype.name))
        np.testing.assert_array_equal(v.to_numpy(), rv.astype(v.dtype.name))
    for shape in ((0, 0), (0, 3, 3), (2, 0, 0)):
        w, v = la.eig(on(device, np.zeros(shape, dtype=name)))
        assert w.shape == shape[:-1] and v.shape == shape and w.dtype.kind == "c"
        assert la.eigvals(on(device, np.zeros(shape, dtype=name))).shape == shape[:-1]


def test_eig_placement(device, rng) -> None:
    """Results are committed iff the input is (the committed rule, docs/arrays.md)."""
    name = eig_dtypes(device)[0]
    x = on(device, rand(rng, (3, 3), name))
    assert x._committed and la.eig(x).eigenvalues._committed
    with pyaccel.using(device):
        u = pyaccel.asarray(rand(rng, (3, 3), name))
    assert not u._committed
    w, v = la.eig(u)
    assert (w.device, v.device) == (device, device) and not w._committed and not v._committed


def test_eig_bad_input(device) -> None:
    name = eig_dtypes(device)[0]
    with pytest.raises(ValueError, match="square"):
        la.eig(on(device, np.ones((2, 3), dtype=name)))
    with pytest.raises(ValueError, match="square"):
        la.eigvals(on(device, np.ones((4, 2, 3), dtype=name)))
    with pytest.raises(ValueError, match=">= 2 dimensions"):
        la.eig(on(device, np.ones(3, dtype=name)))
    for bad in (np.int32, np.int64, np.bool_):
        with pytest.raises(TypeError, match="floating-point .*astype"):
            la.eig(on(device, np.eye(2, dtype=bad)))
        with pytest.raises(TypeError, match="floating-point"):
            la.eigvals(on(device, np.eye(2, dtype=bad)))
    if "float16" in {d.name for d in device_dtypes(device)}:
        with pytest.raises(TypeError, match="float16"):
            la.eig(on(device, np.eye(2, dtype=np.float16)))
    with pytest.raises(TypeError, match="pyaccel Array"):
        la.eig(np.eye(2))
    a = np.stack([np.eye(3), np.eye(3)]).astype(name)
    a[1, 0, 2] = np.nan
    with pytest.raises(la.LinAlgError, match="matrix 1 of the stack .*inf or NaN"):
        la.eig(on(device, a))
    with pytest.raises(la.LinAlgError, match="inf or NaN"):
        la.eigvals(on(device, np.array([[1.0, np.inf], [0.0, 1.0]], dtype=name)))


def test_eig_in_the_2025_12_namespace(device) -> None:
    x = on(device, np.eye(2, dtype=eig_dtypes(device)[0]))
    ns = x.__array_namespace__(api_version="2025.12")
    assert ns.linalg.eig is la.eig and ns.linalg.eigvals is la.eigvals
    assert ns.linalg.eig(x)._fields == ("eigenvalues", "eigenvectors")
