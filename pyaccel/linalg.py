"""The Array API ``linalg`` extension (2023.12), on every device: cholesky, cross, det,
diagonal, eig and eigvals (the 2025.12 draft), eigh, eigvalsh, inv, matmul, matrix_norm, matrix_power, matrix_rank,
matrix_transpose, outer, pinv, qr, slogdet, solve, svd, svdvals, tensordot, trace, vecdot,
vector_norm (``matmul``, ``tensordot``, ``vecdot``, ``matrix_transpose`` are also in the
main namespace).

The factorizations call one ``linalg_*`` primitive of the device's op provider
(:class:`pyaccel.ops.provider.LinalgProvider`): NumPy's LAPACK on cpu, WGSL kernels on
WebGPU devices (``ops/linalg_wgsl.py``: Cholesky, Gauss-Jordan/LU with partial pivoting,
Householder QR, Jacobi eigh and SVD; dtypes without kernels take the host path listed in
``ops.host_path.HOST_PATH``). Everything else is composed here from array ops and those
primitives, with no device branch. ``eig`` / ``eigvals`` (general, non-symmetric matrices)
call the cpu provider's ``linalg_eig`` (LAPACK ``geev``); WebGPU devices have no kernel for
it yet, so they run that method on the host (``ops.host_path``, as any host-path pair) and
upload the result to the input's device. Failures (a singular matrix in ``solve``/``inv``, a
matrix that is not positive definite in ``cholesky``) raise :class:`LinAlgError` naming the
first failing batch index; on GPUs that check reads back one flag per matrix. See
``docs/linalg.md`` for semantics, NaN/inf handling and measured accuracy.
"""

from __future__ import annotations

import math
import os
from typing import Any, NamedTuple

from . import elementwise as ew
from . import reductions as red
from ._dispatch import register
from ._shapes import broadcast_shapes, normalize_axis, prod
from .array import Array
from .dtypes import COMPLEX_OF, REAL_OF, DType
from .errors import LinAlgError
from .manipulation import matrix_transpose, permute_dims, reshape
from .ops import host_path as _hp
from .placement import place_module
from .promotion import check_dtype, common_device, default_float, promote

__all__ = ["EigResult", "EighResult", "LinAlgError", "QRResult", "SVDResult", "SlogdetResult", "cholesky", "cross",
           "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matmul", "matrix_norm", "matrix_power",
           "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve", "svd",
           "svdvals", "tensordot", "trace", "vecdot", "vector_norm"]


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


def _check(x: Any, what: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{what}: expected a pyaccel Array, got {type(x).__name__}; convert it with "
                        "pyaccel.asarray(x)")
    return x


def matmul(x1: Array, x2: Array, /) -> Array:
    """Matrix product with NumPy's rules for 1-D operands and broadcast batch dimensions."""
    _check(x1, "matmul")
    _check(x2, "matmul")
    dev = common_device(x1.device, x2.device)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError(f"matmul: operands must have at least one dimension, got shapes {x1.shape} "
                         f"and {x2.shape}; use multiply for scalars")
    dt = promote(x1.dtype, x2.dtype)
    if dt.kind == "b":
        raise TypeError("matmul needs numeric arrays, got bool; cast with x.astype(pyaccel.int32)")
    dt = check_dtype(dev, dt, "matmul")
    a_shape = (1,) + x1.shape if x1.ndim == 1 else x1.shape
    b_shape = x2.shape + (1,) if x2.ndim == 1 else x2.shape
    K = a_shape[-1]
    K2 = b_shape[-2]
    if K != K2:
        raise ValueError(f"matmul: shapes {x1.shape} and {x2.shape} are not aligned: {K} (last axis of "
                         f"x1) != {K2} ({'only' if x2.ndim == 1 else 'second-to-last'} axis of x2)")
    broadcast_shapes(a_shape[:-2], b_shape[:-2])
    return dev.ops.matmul(x1, x2, dt)


def tensordot(x1: Array, x2: Array, /, *, axes: Any = 2) -> Array:
    """Sum of products over ``axes`` (an int: the last/first n axes; or two axis sequences)."""
    _check(x1, "tensordot")
    _check(x2, "tensordot")
    if isinstance(axes, int):
        if axes < 0 or axes > min(x1.ndim, x2.ndim):
            raise ValueError(f"tensordot: axes={axes} must be in 0..{min(x1.ndim, x2.ndim)}")
        a_ax = list(range(x1.ndim - axes, x1.ndim))
        b_ax = list(range(axes))
    else:
        a_ax, b_ax = (list(v) if isinstance(v, (list, tuple)) else [v] for v in axes)
        a_ax = [normalize_axis(a, x1.ndim, "tensordot axes") for a in a_ax]
        b_ax = [normalize_axis(a, x2.ndim, "tensordot axes") for a in b_ax]
        if len(a_ax) != len(b_ax):
            raise ValueError(f"tensordot: axes {axes!r} must name the same number of axes on each side")
    for a, b in zip(a_ax, b_ax, strict=True):
        if x1.shape[a] != x2.shape[b]:
            raise ValueError(f"tensordot: axis {a} of x1 (size {x1.shape[a]}) and axis {b} of x2 "
                             f"(size {x2.shape[b]}) differ")
    free_a = [j for j in range(x1.ndim) if j not in a_ax]
    free_b = [j for j in range(x2.ndim) if j not in b_ax]
    K = prod([x1.shape[a] for a in a_ax])
    A = permute_dims(x1, free_a + a_ax) if free_a + a_ax != list(range(x1.ndim)) else x1
    B = permute_dims(x2, b_ax + free_b) if b_ax + free_b != list(range(x2.ndim)) else x2
    A = reshape(A, (prod([x1.shape[j] for j in free_a]), K))
    B = reshape(B, (K, prod([x2.shape[j] for j in free_b])))
    r = matmul(A, B)
    return reshape(r, tuple(x1.shape[j] for j in free_a) + tuple(x2.shape[j] for j in free_b))


def vecdot(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Dot product of vectors along ``axis`` (broadcasting the other axes); complex ``x1`` is
    conjugated (sum of conj(x1) * x2, as the Array API says)."""
    _check(x1, "vecdot")
    _check(x2, "vecdot")
    multiply, _sum = ew.multiply, red.sum
    nd = max(x1.ndim, x2.ndim)
    ax = normalize_axis(axis, nd, "vecdot axis")
    s1 = (1,) * (nd - x1.ndim) + x1.shape
    s2 = (1,) * (nd - x2.ndim) + x2.shape
    if s1[ax] != s2[ax]:
        raise ValueError(f"vecdot: axis {axis} has size {s1[ax]} in x1 (shape {x1.shape}) but "
                         f"{s2[ax]} in x2 (shape {x2.shape})")
    dt = promote(x1.dtype, x2.dtype)
    if dt.name == "float16":  # products and sums in float32, rounded once (as matmul)
        p = multiply(x1.astype("float32"), x2.astype("float32"))
        return _sum(p, axis=ax - nd + p.ndim).astype(dt)
    if x1.dtype.kind == "c":  # the Array API's vecdot conjugates the first argument
        x1 = ew.conj(x1)
    p = multiply(x1, x2)
    return _sum(p, axis=ax - nd + p.ndim, dtype=p.dtype)


def diagonal(x: Array, /, *, offset: int = 0) -> Array:
    """The ``offset``-th diagonal of the last two axes."""
    _check(x, "diagonal")
    if x.ndim < 2:
        raise ValueError(f"diagonal needs an array with >= 2 dimensions, got shape {x.shape}")
    return x.device.ops.diagonal(x, offset)


def trace(x: Array, /, *, offset: int = 0, dtype: Any = None) -> Array:
    """Sum of the ``offset``-th diagonal of the last two axes."""
    return red.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def outer(x1: Array, x2: Array, /) -> Array:
    """Outer product of two 1-D arrays."""
    _check(x1, "outer")
    _check(x2, "outer")
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"outer needs 1-D arrays, got shapes {x1.shape} and {x2.shape}")
    return ew.multiply(reshape(x1, (-1, 1)), reshape(x2, (1, -1)))


def vector_norm(x: Array, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Array:  # noqa: A002
    """Vector p-norm over ``axis`` (all axes when None); ord in {p > 0, 0, inf, -inf}."""
    _check(x, "vector_norm")
    a = ew.abs(x)
    if a.dtype.kind != "f":
        a = a.astype(check_dtype(x.device, _default_float(x), "vector_norm"))
    if ord == 2:
        return ew.sqrt(red.sum(ew.multiply(a, a), axis=axis, keepdims=keepdims))
    if ord == 1:
        return red.sum(a, axis=axis, keepdims=keepdims)
    if ord == math.inf:
        return red.max(a, axis=axis, keepdims=keepdims)
    if ord == -math.inf:
        return red.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return red.sum(ew.not_equal(a, 0.0).astype(a.dtype), axis=axis, keepdims=keepdims)
    p = float(ord)
    return ew.pow(red.sum(ew.pow(a, p), axis=axis, keepdims=keepdims), 1.0 / p)


def _default_float(x: Array) -> Any:
    return default_float(x.device)


def matrix_norm(x: Array, /, *, keepdims: bool = False, ord: Any = "fro") -> Array:  # noqa: A002
    """Matrix norm of the last two axes: 'fro', 'nuc', 1, -1, 2, -2, inf, -inf."""
    _check(x, "matrix_norm")
    if x.ndim < 2:
        raise ValueError(f"matrix_norm needs an array with >= 2 dimensions, got shape {x.shape}")
    if ord == "fro":
        return vector_norm(x, axis=(-2, -1), keepdims=keepdims, ord=2)
    if ord in (1, -1, math.inf, -math.inf):
        a = ew.abs(x)
        if a.dtype.kind != "f":
            a = a.astype(check_dtype(x.device, _default_float(x), "matrix_norm"))
        sum_axis = -2 if ord in (1, -1) else -1
        s = red.sum(a, axis=sum_axis, keepdims=True)
        pick = red.max if ord in (1, math.inf) else red.min
        r = pick(s, axis=-1 if sum_axis == -2 else -2, keepdims=True)
        return r if keepdims else reshape(r, x.shape[:-2])
    if ord in (2, -2, "nuc"):
        s = svdvals(x)
        if s.shape[-1] == 0:
            raise ValueError(f"matrix_norm(ord={ord!r}) of empty matrices (shape {x.shape}) is undefined")
        r = red.max(s, axis=-1) if ord == 2 else red.min(s, axis=-1) if ord == -2 else red.sum(s, axis=-1)
        return reshape(r, x.shape[:-2] + (1, 1)) if keepdims else r
    raise ValueError(f"matrix_norm: ord={ord!r} is not one of 'fro', 'nuc', 1, -1, 2, -2, inf, -inf")


# ---------------------------------------------------------------------------------------------
# factorizations and the functions built on them
# ---------------------------------------------------------------------------------------------
def _real_dtype(dt: DType) -> DType:
    return REAL_OF.get(dt, dt)


def _float_input(x: Any, what: str, square: bool = True) -> Array:
    """``x`` as a stack of matrices of a floating dtype (integers and bool promote to the
    device's default float, as NumPy does; float16 is refused, as NumPy refuses it)."""
    _check(x, what)
    if x.ndim < 2:
        raise ValueError(f"{what} needs an array of matrices (>= 2 dimensions), got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{what} needs square matrices, got shape {x.shape} (last two axes "
                         f"{x.shape[-2]} x {x.shape[-1]})")
    if x.dtype.kind in "biu":
        return x.astype(check_dtype(x.device, _default_float(x), what))
    if x.dtype.name == "float16":
        raise TypeError(f"{what}: float16 is not supported in linalg (as in NumPy); cast with "
                        "x.astype(pyaccel.float32)")
    return x


_CHECKS = [os.environ.get("PYACCEL_LINALG_CHECKS", "1").strip().lower() not in ("0", "false", "no", "off")]


def set_checks(enabled: bool) -> bool:
    """Whether ``solve``, ``inv`` and ``cholesky`` check their result (the default): raise
    :class:`LinAlgError` for a singular / not positive-definite matrix, which on GPUs costs
    one host read (a sync) per call. ``False``: no read; a failing matrix's result is all NaN
    (on every device). Returns the previous setting. (Process-wide; the environment variable
    ``PYACCEL_LINALG_CHECKS=0`` sets the initial value.)"""
    prev = _CHECKS[0]
    _CHECKS[0] = bool(enabled)
    return prev


def _report(result: Array, flags: Array, what: str, reason: str) -> Array:
    """``result``, after raising for a failing matrix (checks on) or with a failing matrix's
    values replaced by NaN (checks off: no host read)."""
    if _CHECKS[0]:
        _raise_failed(flags, what, reason)
        return result
    if flags.size == 0:
        return result
    bad = reshape(flags, flags.shape + (1, 1))
    return ew.where(bad, float("nan"), result)


def _raise_failed(flags: Array, what: str, reason: str) -> None:
    """Raise LinAlgError if any per-matrix flag is set (one small readback), naming the first
    failing batch index."""
    if flags.size == 0 or not bool(red.any(flags)):
        return
    first = int(red.argmax(reshape(flags.astype("int32"), (-1,))))
    idx: list[int] = []
    for d in reversed(flags.shape):
        idx.append(first % d)
        first //= d
    where = f" (batch index {tuple(reversed(idx))})" if flags.ndim else ""
    raise LinAlgError(f"{what}: {reason}{where}")


def _conj_t(x: Array) -> Array:
    t = matrix_transpose(x)
    return ew.conj(t) if x.dtype.kind == "c" else t


def cholesky(x: Array, /, *, upper: bool = False) -> Array:
    """Cholesky factor of symmetric / Hermitian positive-definite matrices (lower unless
    ``upper``: then U with x = U^H U). Only the lower triangle of ``x`` is read. Raises
    :class:`LinAlgError` for a matrix that is not positive definite (or, with
    ``set_checks(False)``, gives NaN for it). Blocked on GPUs: O(n / 32) dispatches."""
    x = _float_input(x, "cholesky")
    low, failed = x.device.ops.linalg_cholesky(x)
    low = _report(low, failed, "cholesky", "matrix is not positive definite")
    return _conj_t(low) if upper else low


def solve(x1: Array, x2: Array, /) -> Array:
    """Solution of ``x1 @ x = x2`` for square ``x1``; ``x2`` is a vector only when 1-D (NumPy 2
    rule), else a stack of (M, K) right-hand sides broadcast against ``x1``'s batch."""
    a = _float_input(x1, "solve")
    _check(x2, "solve")
    dev = common_device(a.device, x2.device)
    dt = check_dtype(dev, promote(a.dtype, x2.dtype if x2.dtype.kind in "fc" else a.dtype), "solve")
    n = a.shape[-1]
    if x2.ndim == 0:
        raise ValueError("solve: x2 must have at least one dimension, got a 0-d array")
    vec = x2.ndim == 1
    if (x2.shape[0] if vec else x2.shape[-2]) != n:
        raise ValueError(f"solve: x1 has shape {x1.shape} but x2 has shape {x2.shape}; x2's "
                         f"{'length' if vec else 'second-to-last axis'} must be {n}")
    b = reshape(x2, (n, 1)) if vec else x2
    if b.dtype.kind not in "fc" or b.dtype is not dt:
        b = b.astype(dt)
    a = a if a.dtype is dt else a.astype(dt)
    broadcast_shapes(a.shape[:-2], b.shape[:-2])
    x, failed = dev.ops.linalg_solve(a, b)
    x = _report(x, failed, "solve", "matrix is singular")
    return reshape(x, x.shape[:-1]) if vec else x


def inv(x: Array, /) -> Array:
    """Inverse of square matrices; raises :class:`LinAlgError` for a singular one."""
    x = _float_input(x, "inv")
    from .creation import eye
    ident = eye(x.shape[-1], dtype=x.dtype, device=x.device)
    r, failed = x.device.ops.linalg_solve(x, ident)
    return _report(r, failed, "inv", "matrix is singular")


def det(x: Array, /) -> Array:
    """Determinant of square matrices (0 for an exactly singular one, as NumPy)."""
    x = _float_input(x, "det")
    return x.device.ops.linalg_det(x)


def slogdet(x: Array, /) -> SlogdetResult:
    """(sign, log|det|) of square matrices; a singular one gives (0, -inf), as NumPy."""
    x = _float_input(x, "slogdet")
    sign, logabs = x.device.ops.linalg_slogdet(x, _real_dtype(x.dtype))
    return SlogdetResult(sign, logabs)


def qr(x: Array, /, *, mode: str = "reduced") -> QRResult:
    """QR factorization (Householder): ``mode`` 'reduced' (Q: (..., M, K), R: (..., K, N),
    K = min(M, N)) or 'complete' (Q: (..., M, M), R: (..., M, N)). Signs follow LAPACK."""
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    x = _float_input(x, "qr", square=False)
    q, r = x.device.ops.linalg_qr(x, mode)
    return QRResult(q, r)


def eigh(x: Array, /) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric / Hermitian matrices
    (only the lower triangle is read, as in NumPy)."""
    x = _float_input(x, "eigh")
    w, v = x.device.ops.linalg_eigh(x, _real_dtype(x.dtype))
    return EighResult(w, v)


def eigvalsh(x: Array, /) -> Array:
    """Eigenvalues (ascending) of symmetric / Hermitian matrices."""
    return eigh(x).eigenvalues


def _eig(x: Any, what: str, compute_v: bool) -> tuple[Array, Array | None]:
    """(eigenvalues, eigenvectors or None) of a general square stack, complex of x's precision."""
    _check(x, what)
    if x.dtype.kind not in "fc":
        raise TypeError(f"{what} needs a floating-point (real or complex) array, got {x.dtype.name} "
                        "(as the 2025.12 draft and array-api-strict say); cast with "
                        "x.astype(pyaccel.float64) or x.astype(pyaccel.float32)")
    x = _float_input(x, what)
    dev = x.device
    cdt = check_dtype(dev, COMPLEX_OF.get(x.dtype, x.dtype), what)
    primitive = getattr(dev.ops, "linalg_eig", None)
    if primitive is not None:  # cpu: NumPy's LAPACK geev
        return primitive(x, cdt, compute_v)
    # no kernel on this device (WebGPU): the host path, cpu's linalg_eig, uploaded to dev
    return _hp.run(dev, "linalg_eig", (x.dtype,), x, cdt, compute_v, method="linalg_eig")


def eig(x: Array, /) -> EigResult:
    """Eigenvalues and right eigenvectors (unit-norm columns, ``x @ v = v * w``) of general
    square matrices, both complex of ``x``'s precision (complex64 for float32 / complex64,
    complex128 for float64 / complex128), as the 2025.12 draft says; in no particular order.
    Computed by LAPACK ``geev`` (NumPy) on the host for every device: on a GPU the matrices
    are read back and the results uploaded to ``x``'s device (docs/linalg.md)."""
    w, v = _eig(x, "eig", True)
    assert v is not None
    return EigResult(w, v)


def eigvals(x: Array, /) -> Array:
    """Eigenvalues of general square matrices (complex; see :func:`eig`)."""
    return _eig(x, "eigvals", False)[0]


def svd(x: Array, /, *, full_matrices: bool = True) -> SVDResult:
    """Singular value decomposition x = U diag(S) Vh, S descending."""
    x = _float_input(x, "svd", square=False)
    u, s, vh = x.device.ops.linalg_svd(x, bool(full_matrices), True, _real_dtype(x.dtype))
    assert u is not None and vh is not None
    return SVDResult(u, s, vh)


def svdvals(x: Array, /) -> Array:
    """Singular values, descending, of a stack of matrices."""
    x = _float_input(x, "svdvals", square=False)
    return x.device.ops.linalg_svd(x, False, False, _real_dtype(x.dtype))[1]


def _rtol(x: Array, s: Array, rtol: Any) -> Array:
    """rtol * largest singular value, shaped (..., 1) against ``s`` (default rtol: max(M, N) * eps)."""
    from .promotion import finfo
    smax = red.max(s, axis=-1, keepdims=True)
    if rtol is None:
        rtol = max(x.shape[-2:]) * finfo(s.dtype).eps
    if isinstance(rtol, Array):
        return ew.multiply(smax, reshape(rtol.astype(s.dtype), rtol.shape + (1,)))
    return ew.multiply(smax, float(rtol))


def matrix_rank(x: Array, /, *, rtol: Any = None) -> Array:
    """Number of singular values above ``rtol`` times the largest (per matrix)."""
    x = _float_input(x, "matrix_rank", square=False)
    s = svdvals(x)
    if s.shape[-1] == 0:
        return red.count_nonzero(s, axis=-1)
    return red.count_nonzero(ew.greater(s, _rtol(x, s, rtol)), axis=-1)


def pinv(x: Array, /, *, rtol: Any = None) -> Array:
    """Moore-Penrose pseudo-inverse through the SVD (singular values at or below ``rtol``
    times the largest count as zero)."""
    x = _float_input(x, "pinv", square=False)
    m, n = x.shape[-2:]
    if m == 0 or n == 0:
        from .creation import zeros
        return zeros(x.shape[:-2] + (n, m), dtype=x.dtype, device=x.device)
    u, s, vh = svd(x, full_matrices=False)
    big = ew.greater(s, _rtol(x, s, rtol))
    one = ew.divide(1.0, ew.where(big, s, 1.0))
    s_inv = ew.where(big, one, 0.0)
    vs = ew.multiply(_conj_t(vh), reshape(s_inv, s_inv.shape[:-1] + (1, s_inv.shape[-1])))
    return matmul(vs, _conj_t(u))


def matrix_power(x: Array, n: int, /) -> Array:
    """``x`` raised to the integer power ``n`` (n < 0: powers of the inverse; 0: identity)."""
    _check(x, "matrix_power")
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"matrix_power: n must be an int, got {type(n).__name__}")
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"matrix_power needs square matrices, got shape {x.shape}")
    if n == 0:
        from .creation import eye
        from .manipulation import broadcast_to
        ident = eye(x.shape[-1], dtype=x.dtype, device=x.device)
        return broadcast_to(ident, x.shape) * 1 if x.ndim > 2 else ident
    if n < 0:
        x = inv(x)
        n = -n
    result: Array | None = None
    base = x
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            break
        base = matmul(base, base)
    assert result is not None
    return result if result is not x else x * 1


def cross(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Cross product of 3-element vectors along ``axis`` (other axes broadcast)."""
    _check(x1, "cross")
    _check(x2, "cross")
    from .manipulation import broadcast_arrays, moveaxis, stack
    dt = promote(x1.dtype, x2.dtype)
    if dt.kind == "b":
        raise TypeError("cross needs numeric arrays, got bool; cast with x.astype(pyaccel.int32)")
    nd = max(x1.ndim, x2.ndim)
    if min(x1.ndim, x2.ndim) == 0:
        raise ValueError(f"cross needs arrays with >= 1 dimension, got shapes {x1.shape} and {x2.shape}")
    if not -min(x1.ndim, x2.ndim) <= axis < min(x1.ndim, x2.ndim):
        raise ValueError(f"cross: axis {axis} is out of range for shapes {x1.shape} and {x2.shape}")
    ax = nd + (axis if axis < 0 else axis - min(x1.ndim, x2.ndim))  # counted from the right
    s1 = x1.shape[axis]
    s2 = x2.shape[axis]
    if s1 != 3 or s2 != 3:
        raise ValueError(f"cross: axis {axis} must have size 3 in both arrays, got {s1} (x1 shape "
                         f"{x1.shape}) and {s2} (x2 shape {x2.shape})")
    a, b = broadcast_arrays(x1.astype(dt) if x1.dtype is not dt else x1,
                            x2.astype(dt) if x2.dtype is not dt else x2)
    a = moveaxis(a, ax, -1)
    b = moveaxis(b, ax, -1)
    a0, a1, a2 = (a[..., i] for i in range(3))
    b0, b1, b2 = (b[..., i] for i in range(3))
    c = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return moveaxis(c, -1, ax)


_ = matrix_transpose  # re-exported

place_module(globals(), __all__)  # the committed device rule (pyaccel/placement.py)
register(matmul=matmul)
