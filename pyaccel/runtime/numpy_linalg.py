"""The ``linalg`` primitives of the cpu op provider (:class:`NumpyLinalg`, a component
:class:`~pyaccel.runtime.numpy_ops.NumpyOps` holds as ``ops.linalg`` and forwards as
``ops.linalg_solve`` etc.): ``numpy.linalg`` on views of the buffers.

The module-level ``np_*`` functions take and return NumPy arrays. The GPU provider's host
path (:data:`pyaccel.ops.host_path.HOST_PATH`) runs this provider's methods, so a dtype that
has no WGSL kernel yet gets exactly NumPy's values there too.

Failures are not raised here: a matrix NumPy refuses (singular in ``solve``, not positive
definite in ``cholesky``) gives NaN in its slot of the stack and a True flag, and the
namespace (:mod:`pyaccel.linalg`) raises :class:`pyaccel.linalg.LinAlgError` naming the
batch index. So every device reports failures the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..array import Array
from ..dtypes import as_dtype
from ..errors import LinAlgError

if TYPE_CHECKING:
    from ..device import Device
    from ..dtypes import DType


def view(x: Array) -> Any:
    """A NumPy view of a cpu array's buffer (as ``numpy_ops.view``; not imported from there:
    numpy_ops imports this module)."""
    np = x.device.ops.np
    n = x.size * x.dtype.itemsize
    return x._buf.handle[:n].view(np.dtype(x.dtype.name)).reshape(x.shape)


def _per_matrix(np: Any, fn: Any, a: Any, *rest: Any) -> tuple[list[Any], Any]:
    """``fn`` on each matrix of a stack (a failing one gives None); returns (results, failed)."""
    batch = a.shape[:-2]
    out, failed = [], np.zeros(batch, dtype=bool)
    for idx in np.ndindex(*batch):
        try:
            out.append(fn(a[idx], *(r[idx] for r in rest)))
        except np.linalg.LinAlgError:
            out.append(None)
            failed[idx] = True
    return out, failed


def np_cholesky(np: Any, a: Any) -> tuple[Any, Any]:
    """(lower factor L, failed flags per matrix); a failed matrix's L is NaN."""
    try:
        return np.linalg.cholesky(a), np.zeros(a.shape[:-2], dtype=bool)
    except np.linalg.LinAlgError:
        res, failed = _per_matrix(np, np.linalg.cholesky, a)
    out = np.full(a.shape, np.nan, dtype=a.dtype)
    for k, idx in enumerate(np.ndindex(*a.shape[:-2])):
        if res[k] is not None:
            out[idx] = res[k]
    return out, failed


def np_solve(np: Any, a: Any, b: Any) -> tuple[Any, Any]:
    """(x with a @ x = b, singular flags per matrix); ``b`` is (..., n, k) broadcast with a."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    try:
        return np.linalg.solve(a, b), np.zeros(batch, dtype=bool)
    except np.linalg.LinAlgError:
        res, failed = _per_matrix(np, np.linalg.solve, a, b)
    out = np.full(batch + b.shape[-2:], np.nan, dtype=np.result_type(a, b))
    for k, idx in enumerate(np.ndindex(*batch)):
        if res[k] is not None:
            out[idx] = res[k]
    return out, failed


def np_qr(np: Any, a: Any, mode: str) -> tuple[Any, Any]:
    q, r = np.linalg.qr(a, mode=mode)
    return q, r


def _no_convergence(np: Any, a: Any, what: str) -> Exception:
    """pyaccel's LinAlgError for LAPACK's "did not converge" (NaN input), naming the matrix."""
    bad = np.isnan(a).any(axis=(-2, -1)).reshape(-1)
    where = f": matrix {int(np.argmax(bad))} of the stack (flattened batch index) has NaN" if bad.any() else ""
    return LinAlgError(f"{what}: did not converge{where}")


def np_eigh(np: Any, a: Any) -> tuple[Any, Any]:
    try:
        w, v = np.linalg.eigh(a)
    except np.linalg.LinAlgError:
        raise _no_convergence(np, a, "eigh") from None
    return w, v


def np_svd(np: Any, a: Any, full_matrices: bool, compute_uv: bool) -> tuple[Any, Any, Any]:
    try:
        if not compute_uv:
            return None, np.linalg.svd(a, compute_uv=False), None
        u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    except np.linalg.LinAlgError:
        raise _no_convergence(np, a, "svd") from None
    return u, s, vh


def np_slogdet(np: Any, a: Any) -> tuple[Any, Any]:
    sign, logabs = np.linalg.slogdet(a)
    return np.asarray(sign), np.asarray(logabs)


def np_det(np: Any, a: Any) -> Any:
    return np.asarray(np.linalg.det(a))


class NumpyLinalg:
    """``linalg`` methods of the cpu device (see :class:`pyaccel.ops.provider.LinalgProvider`).
    Depends on the device and NumPy only."""

    def __init__(self, device: Device, np: Any) -> None:
        self.device = device
        self.np = np

    def _lwrap(self, arr: Any, dtype: DType | None = None) -> Array:
        """A new cpu Array holding a copy of NumPy data ``arr`` (as ``dtype``)."""
        np = self.np
        dt = dtype or as_dtype(arr.dtype)
        arr = np.asarray(arr).astype(np.dtype(dt.name), copy=False)
        out = Array._empty(self.device, tuple(arr.shape), dt)
        if out.size:
            view(out)[...] = arr
        return out

    def linalg_cholesky(self, x: Array) -> tuple[Array, Array]:
        """Lower Cholesky factors of a stack and a bool flag per matrix (not positive definite)."""
        np = self.np
        with np.errstate(all="ignore"):
            low, failed = np_cholesky(np, view(x))
        return self._lwrap(low, x.dtype), self._lwrap(failed)

    def linalg_solve(self, a: Array, b: Array) -> tuple[Array, Array]:
        """``a^-1 b`` for stacks (..., n, n) and (..., n, k), and a bool flag per matrix (singular)."""
        np = self.np
        with np.errstate(all="ignore"):
            x, failed = np_solve(np, view(a), view(b))
        return self._lwrap(x, a.dtype), self._lwrap(failed)

    def linalg_det(self, x: Array) -> Array:
        with self.np.errstate(all="ignore"):
            return self._lwrap(np_det(self.np, view(x)), x.dtype)

    def linalg_slogdet(self, x: Array, real_dtype: DType) -> tuple[Array, Array]:
        """(sign in x's dtype, log|det| in ``real_dtype``)."""
        with self.np.errstate(all="ignore"):
            sign, logabs = np_slogdet(self.np, view(x))
        return self._lwrap(sign, x.dtype), self._lwrap(logabs, real_dtype)

    def linalg_qr(self, x: Array, mode: str) -> tuple[Array, Array]:
        with self.np.errstate(all="ignore"):
            q, r = np_qr(self.np, view(x), mode)
        return self._lwrap(q, x.dtype), self._lwrap(r, x.dtype)

    def linalg_eigh(self, x: Array, real_dtype: DType) -> tuple[Array, Array]:
        """Eigenvalues (ascending, ``real_dtype``) and eigenvectors (columns) of a Hermitian stack."""
        with self.np.errstate(all="ignore"):
            w, v = np_eigh(self.np, view(x))
        return self._lwrap(w, real_dtype), self._lwrap(v, x.dtype)

    def linalg_eig(self, x: Array, complex_dtype: DType,
                   compute_v: bool) -> tuple[Array, Array | None]:
        """(eigenvalues, right eigenvectors as unit-norm columns or None unless ``compute_v``)
        of a general square stack, both ``complex_dtype`` (LAPACK ``geev`` through
        ``numpy.linalg.eig`` / ``eigvals``; real results made complex, as the 2025.12 draft
        says). Not a ``LinalgProvider`` primitive: WebGPU devices run it on the host
        (``host_path.HOST_PATH``). inf / NaN input raises LinAlgError naming the matrix."""
        np = self.np
        a = view(x)
        try:
            with np.errstate(all="ignore"):
                if compute_v:
                    w, v = np.linalg.eig(a)
                else:
                    w, v = np.linalg.eigvals(a), None
        except np.linalg.LinAlgError as exc:
            from ..linalg import LinAlgError
            bad = (~np.isfinite(a)).any(axis=(-2, -1)).reshape(-1)
            where = (f": matrix {int(np.argmax(bad))} of the stack (flattened batch index) has inf "
                     "or NaN" if a.ndim > 2 else ": the matrix has inf or NaN") if bad.any() else f" ({exc})"
            raise LinAlgError(f"eig: no eigendecomposition{where}") from None
        cdt = np.dtype(complex_dtype.name)
        return (self._lwrap(w.astype(cdt, copy=False), complex_dtype),
                None if v is None else self._lwrap(v.astype(cdt, copy=False), complex_dtype))

    def linalg_svd(self, x: Array, full_matrices: bool, compute_uv: bool,
                   real_dtype: DType) -> tuple[Array | None, Array, Array | None]:
        """(U, S descending in ``real_dtype``, Vh); U and Vh are None unless ``compute_uv``."""
        with self.np.errstate(all="ignore"):
            u, s, vh = np_svd(self.np, view(x), full_matrices, compute_uv)
        s_arr = self._lwrap(s, real_dtype)
        if not compute_uv:
            return None, s_arr, None
        return self._lwrap(u, x.dtype), s_arr, self._lwrap(vh, x.dtype)
