"""The ``linalg`` primitives of the WebGPU op provider: :class:`WgslLinalg`, a component
:class:`~pyaccel.ops.wgsl_provider.WgslOps` holds (``ops.linalg``; its public methods are
forwarded as ``ops.linalg_solve`` etc.), depending only on the primitives it declares
(:class:`LinalgPrims`): WGSL kernels for float32, the host path for the other dtypes. The
post-processing (failure flags, det / slogdet from the pivots, sorting eigen- and singular
values, non-finite inputs) is in :mod:`pyaccel.ops.decompositions`.

Kernels (one ``.wgsl`` per family, launched through :func:`pyaccel.ops.gpu_kernels._dispatch`;
every op holds the device lock across its whole multi-dispatch recording):

* ``linalg_blocked.wgsl`` — blocked Cholesky, blocked Gauss-Jordan with partial pivoting
  (``solve``, ``inv``), the same machinery as a blocked LU (``det``, ``slogdet``: the pivots
  and the interchange parity stay on the device) and blocked Householder QR (compact WY), in
  blocks of :data:`BLOCK` columns: a panel kernel per block, the trailing update as
  ``matmul`` calls and a subtraction (cholesky 3, solve / det 4, qr 6 + 5 for Q dispatches
  per block, the matmuls counted);
* ``linalg_lu.wgsl`` — unblocked Gauss-Jordan elimination with partial pivoting on [A | B]
  (an LU factorization with LAPACK's pivot choice, fused with the solves; 2 dispatches per
  column): ``solve`` / ``inv`` / ``det`` / ``slogdet`` past :data:`BLOCKED_MAX_N`;
* ``linalg_qr.wgsl`` — Householder QR one reflector at a time, LAPACK's sign conventions; Q
  accumulated backwards (5 min(m, n) dispatches): matrices taller than
  :data:`QR_BLOCKED_MAX_M`;
* ``linalg_jacobi.wgsl`` — cyclic Jacobi with the parallel round-robin ordering:
  two-sided for ``eigh`` (2 (n - 1) dispatches per sweep; several rounds per dispatch up to
  :data:`FUSED_MAX_N`), one-sided (Hestenes) for the SVD (n - 1 dispatches per sweep;
  several rounds per dispatch up to :data:`SVD_FUSED_MAX_N`). The sweeps stop when a convergence measure read back
  once per sweep is small (at most :data:`MAX_SWEEPS`). The SVD's U is re-orthogonalised
  by a QR (which also completes it for ``full_matrices`` and covers zero singular values).

A stack of matrices runs in the same dispatches (a workgroup per matrix, per (matrix,
column) or per (matrix, column pair)). No invocation loops more than Mesa's loop cap
(``gpu_kernels.MAX_LOOP``) summed (see the loop counts in each ``.wgsl``).

Host path (contract 3, :mod:`pyaccel.ops.host_path`): dtypes without kernels (see
:data:`HOST_PATH`) read the input back, run the cpu device's ``linalg_*`` method
(``numpy.linalg``) and upload the results. That is exact NumPy behaviour and never
downcasts; it needs NumPy in the process.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from .._shapes import broadcast_shapes, prod
from ..array import Array
from ..dtypes import DType
from . import decompositions as _dec
from . import gpu_kernels as _gk
from . import host_path as _hp
from .decompositions import ew
from .launch import device_lock, grid_1d, pack
from .primitives import matrix_transpose, reshape, window

if TYPE_CHECKING:
    from ..device import Device
    from ..dtypes import StorageLayout
    from .table import OpDef

KERNEL_DTYPES = frozenset({"float32"})
"""Dtypes the WGSL linalg kernels compute in."""

LINALG_OPS = ("cholesky", "solve", "det", "slogdet", "qr", "eigh", "svd")
"""The provider primitives (``linalg_<op>``); every other linalg function is composed from them."""

HOST_PATH = frozenset((op[7:], dt) for op, dt in _hp.HOST_PATH if op.startswith("linalg_"))
"""(primitive, dtype) pairs that run on the host (NumPy) on WebGPU devices (the linalg part
of :data:`pyaccel.ops.host_path.HOST_PATH`): every dtype the device may hold but
:data:`KERNEL_DTYPES` lacks. tests/backends/test_linalg_ext.py asserts this exact set."""

MAX_SWEEPS = 30
"""Most Jacobi sweeps (float32 converges in about 6-10 for n <= 1024)."""

FUSED_MAX_N = 128
"""eigh on matrices up to this order runs several Jacobi rounds per dispatch, one workgroup
per matrix (``eig_fused``); larger ones one dispatch per round with a workgroup per
(matrix, pair). Measured in one run on lavapipe (load 0.3-1.0): eigh 128 0.40 s fused
against 0.69 s per round, 256 4.7 s against 3.3 s (the one workgroup runs on one core).
The fused kernels take any n <= 256."""

SVD_FUSED_MAX_N = 256
"""The same for the SVD (``svd_fused``): svd 128 0.52 s fused against 1.30 s per round,
256 3.3 s against 7.9 s (211 dispatches against 3,187), same run."""

BLOCK = 32
"""Block size of the blocked Cholesky and Gauss-Jordan (``NB`` in ``linalg_blocked.wgsl``)."""

BLOCKED_MAX_N = 4096
"""Largest order the blocked Gauss-Jordan takes: its panel kernel (64 threads) loops about
(n / 64) BLOCK (BLOCK / 2 + 2) + BLOCK (64 + 4 BLOCK) times per invocation (about 43,000 at
n = 4,096, within ``gpu_kernels.MAX_LOOP``; 8,192 would pass it); larger matrices take the
unblocked Gauss-Jordan."""

QR_BLOCKED_MAX_M = 1536
"""Most rows the blocked QR takes: its panel kernel loops about BLOCK (m / 4 + 3 m / 256 + 40)
times per invocation (about 14,000 at 1,536, within ``gpu_kernels.MAX_LOOP``); taller
matrices take the one-reflector-at-a-time kernels."""

_WG_PANEL = 64
_EPS32 = 1.1920929e-07
_WGF = 256


def _fused_plan(n: int, m: int) -> tuple[int, int]:
    """(threads per pair, rounds per dispatch) of the fused Jacobi kernels for order n, m rows,
    keeping one invocation's loop iterations within ``gpu_kernels.MAX_LOOP``."""
    half = (n + n % 2) // 2
    tpp = 1
    while tpp * 2 * half <= _WGF:
        tpp *= 2
    per_round = 2 * -(-m // tpp) + -(-n // tpp) + tpp.bit_length() + 4
    return tpp, max(1, (_gk.MAX_LOOP - 64) // per_round)


_T = {"T": "f32"}


def takes_host_path(op: str, dtype: DType) -> bool:
    """Whether primitive ``op`` on ``dtype`` runs through the host path on WebGPU devices."""
    return (op, dtype.name) in HOST_PATH


class LinalgPrims(Protocol):
    """The primitives :class:`WgslLinalg` uses (a subset of
    :class:`pyaccel.ops.primitives.Primitives`)."""

    device: Device

    def layout(self, dtype: DType) -> StorageLayout: ...
    def output(self, shape: tuple[int, ...], dtype: DType, nbytes: int = -1) -> Array: ...
    def elementwise(self, row: OpDef, args: Sequence[Any], shape: tuple[int, ...], compute_dtype: DType,
                    out_dtype: DType) -> tuple[Array, Callable[[Sequence[Any]], Array] | None]: ...
    def copy(self, x: Array, shape: tuple[int, ...] | None = None) -> Array: ...
    def astype(self, x: Array, dtype: DType) -> Array: ...
    def fill(self, out: Array, value: Any) -> Array: ...
    def eye(self, n_rows: int, n_cols: int, k: int, dtype: DType) -> Array: ...
    def tri(self, x: Array, k: int, upper: bool) -> Array: ...
    def broadcast_to(self, x: Array, shape: tuple[int, ...]) -> Array: ...
    def concat(self, arrays: Sequence[Array], axis: int, dtype: DType) -> Array: ...
    def diagonal(self, x: Array, offset: int) -> Array: ...
    def take(self, x: Array, shape: Sequence[int], offset: int, strides: Sequence[int], index: Array,
             index_strides: Sequence[int]) -> Array: ...
    def reduce(self, x: Array, axes: tuple[int, ...], shape: tuple[int, ...], op: str,
               dtype: DType) -> Array: ...
    def argreduce(self, x: Array, axis: int | None, shape: tuple[int, ...], op: str,
                  dtype: DType) -> Array: ...
    def sort(self, x: Array, axis: int, descending: bool, stable: bool, indices: bool,
             dtype: DType) -> Array: ...
    def matmul(self, x1: Array, x2: Array, dtype: DType) -> Array: ...


class WgslLinalg:
    """``linalg`` methods of WebGPU devices (see the module docstring)."""

    def __init__(self, prims: LinalgPrims) -> None:
        self.p = prims
        self.device = prims.device

    # -- helpers ---------------------------------------------------------------------------
    def _copy(self, x: Array, shape: tuple[int, ...]) -> Array:
        """A fresh C-contiguous copy of ``x`` with ``shape`` (kernels write it in place)."""
        return self.p.copy(x, shape)

    def _eye_stack(self, batch: int, n_rows: int, n_cols: int, dt: DType) -> Array:
        ident = self.p.eye(n_rows, n_cols, 0, dt)
        return self.p.broadcast_to(ident, (batch, n_rows, n_cols))

    def _run(self, family: str, entry: str, bufs: list[Array | None], params: bytes,
             grid: tuple[int, int, int], after: Array | None = None,
             constants: dict[str, float] | None = None) -> None:
        """One dispatch; ``bufs`` bind at 0..k-1 (None: a binding the entry point does not use,
        left out of its auto layout), the parameter block at k, ``after`` at k + 1."""
        binds = [(i, a._buf) for i, a in enumerate(bufs) if a is not None]
        if after is not None:
            binds.append((len(bufs) + 1, after._buf))
        _gk._dispatch(self.device, family, _T, entry, binds, params, len(bufs), grid, constants)

    # -- Cholesky (blocked) ---------------------------------------------------------------
    def _blk(self, entry: str, bufs: list[Array | None], params: bytes, grid: tuple[int, int, int],
             constants: dict[str, float] | None = None) -> None:
        """One dispatch of ``linalg_blocked.wgsl`` (five storage bindings, the parameters at 5)."""
        self._run("linalg_blocked", entry, bufs + [None] * (5 - len(bufs)), params, grid,
                  constants=constants)

    def _scratch(self, shape: tuple[int, ...], dt: DType) -> Array:
        """An uninitialised work array (at least one element: every binding needs a buffer)."""
        return Array._output(self.device, shape if prod(shape) else (1,), dt)

    def linalg_cholesky(self, x: Array) -> tuple[Array, Array]:
        r = _hp.run(self.device, "linalg_cholesky", (x.dtype,), x)
        if r is not None:
            return r
        dev, dt = self.device, x.dtype
        n = x.shape[-1]
        batch = prod(x.shape[:-2])
        with device_lock(dev):
            low = self.p.fill(Array._output(dev, x.shape, dt), 0.0)
            fail = self.p.fill(Array._output(dev, x.shape[:-2], dt), 0.0)
            if batch and n:
                w = self._copy(x, x.shape)
                for k0 in range(0, n, BLOCK):
                    nb = min(BLOCK, n - k0)
                    m = n - k0 - nb
                    chunks = max(1, -(-m // _WG_PANEL))
                    pan = self._scratch((batch, m, BLOCK), dt)
                    pant = self._scratch((batch, BLOCK, m), dt)
                    p = pack("8I", n, n, k0, nb, batch, 0, m, chunks)
                    self._blk("chol_panel", [w, low, pan, pant, fail], p,
                              grid_1d(dev, batch * chunks, 1))
                    if m:
                        y = self.p.matmul(pan, pant, dt)
                        total = batch * m * ((m + 3) // 4)
                        p = pack("8I", n, n, k0, nb, batch, total, m, 0)
                        self._blk("chol_sub", [w, y], p, grid_1d(dev, total, _WG_PANEL))
        return low, ew(self.p, "not_equal", fail, 0.0)

    # -- Gauss-Jordan / LU -------------------------------------------------------------------
    def _augment(self, a: Array, b: Array | None) -> tuple[Array, tuple[int, ...]]:
        """[A | B] as one fresh (..., n, n + k) stack (a copy of A without B), and the batch shape."""
        bshape = a.shape[:-2] if b is None else broadcast_shapes(a.shape[:-2], b.shape[:-2])
        if a.shape[:-2] != bshape:
            a = self.p.broadcast_to(a, bshape + a.shape[-2:])
        if b is None:
            return self._copy(a, a.shape), bshape
        if b.shape[:-2] != bshape:
            b = self.p.broadcast_to(b, bshape + b.shape[-2:])
        return self.p.concat([a, b], len(bshape) + 1, a.dtype), bshape

    def _gauss_jordan_blocked(self, a: Array, b: Array | None,
                              lu: bool = False) -> tuple[Array, Array, Array]:
        """Blocked Gauss-Jordan with partial pivoting on [A | B]: (the augmented stack, whose B
        part is A^-1 B, pivots (..., n), interchange parity (...)). Four dispatches (one a
        matmul) per block of :data:`BLOCK` columns. ``lu``: a blocked LU of A alone instead
        (``b`` None; only the rows below each block are updated, the last block's trailing
        dispatches left out), for the pivots and parity of ``det`` / ``slogdet``."""
        dev, dt = self.device, a.dtype
        n = a.shape[-1]
        aug, bshape = self._augment(a, b)
        batch = prod(bshape)
        W = aug.shape[-1]
        mode = int(lu)
        with device_lock(dev):
            piv = Array._output(dev, bshape + (n,), dt)
            sgn = Array._output(dev, bshape, dt)
            if not (batch and n):
                return aug, piv, self.p.fill(sgn, 1.0)
            perm = Array._output(dev, (batch, n), dt)
            s = Array._output(dev, (batch, n, BLOCK), dt)
            for k0 in range(0, n, BLOCK):
                nb = min(BLOCK, n - k0)
                nc = W - k0 - nb
                self._blk("lu_panel", [aug, s, perm, piv, sgn],
                          pack("8I", n, W, k0, nb, batch, 0, nc, mode), grid_1d(dev, batch, 1))
                if lu and not nc:
                    break
                rows = n - k0 - nb if lu else n
                mcol = self._scratch((batch, rows, nb), dt)
                xrow = self._scratch((batch, nb, nc), dt)
                total = batch * (W - k0)
                self._blk("lu_swap_trsm", [aug, s, perm, xrow, mcol],
                          pack("8I", n, W, k0, nb, batch, total, nc, mode), grid_1d(dev, total, _WG_PANEL))
                if not nc:
                    continue
                y = self.p.matmul(mcol, xrow, dt)
                total = batch * rows * ((nc + 3) // 4)
                self._blk("lu_sub", [aug, y],
                          pack("8I", n, W, k0, nb, batch, total, nc, mode), grid_1d(dev, total, _WG_PANEL))
        return aug, piv, sgn

    def _gauss_jordan(self, a: Array, b: Array | None, below: bool) -> tuple[Array, Array, Array]:
        """(augmented [U-ish | A^-1 B] stack, pivots (..., n), interchange parity (...)):
        unblocked, two dispatches per column (``det`` / ``slogdet``)."""
        dev, dt = self.device, a.dtype
        n = a.shape[-1]
        aug, bshape = self._augment(a, b)
        batch = prod(bshape)
        W = aug.shape[-1]
        with device_lock(dev):
            piv = Array._output(dev, bshape + (n,), dt)
            sgn = self.p.fill(Array._output(dev, bshape, dt), 1.0)
            if batch and n:
                mult = Array._output(dev, (batch * n,), dt)
                for k in range(n):
                    self._run("linalg_lu", "pivot", [aug, piv, sgn, mult],
                              pack("8I", n, W, k, batch, 0, int(below), 0, 0), grid_1d(dev, batch, 1))
                    total = batch * n * ((W - k - 1 + 3) // 4)
                    if total:
                        self._run("linalg_lu", "elim", [aug, None, None, mult],
                                  pack("8I", n, W, k, batch, total, int(below), 0, 0),
                                  grid_1d(dev, total, 64))
        return aug, piv, sgn

    def _lu(self, x: Array) -> tuple[Array, Array, Array]:
        """(work, pivots (..., n), parity (...)) of an LU with partial pivoting: blocked up to
        :data:`BLOCKED_MAX_N`, the unblocked elimination (2 dispatches per column) past it."""
        if x.shape[-1] <= BLOCKED_MAX_N:
            return self._gauss_jordan_blocked(x, None, lu=True)
        return self._gauss_jordan(x, None, True)

    def linalg_solve(self, a: Array, b: Array) -> tuple[Array, Array]:
        r = _hp.run(self.device, "linalg_solve", (a.dtype,), a, b)
        if r is not None:
            return r
        n = a.shape[-1]
        if n <= BLOCKED_MAX_N:
            aug, piv, _ = self._gauss_jordan_blocked(a, b)
        else:  # past the panel kernel's loop budget
            aug, piv, _ = self._gauss_jordan(a, b, False)
        W = aug.shape[-1]
        bshape = aug.shape[:-2]
        x = window(aug, n, bshape + (n, W - n), [*(s * n * W for s in _strides(bshape)), W, 1])
        return x, _dec.zero_pivot_flags(self.p, piv)

    def linalg_det(self, x: Array) -> Array:
        r = _hp.run(self.device, "linalg_det", (x.dtype,), x)
        if r is not None:
            return r
        _, piv, sgn = self._lu(x)
        return _dec.det_from_pivots(self.p, piv, sgn)

    def linalg_slogdet(self, x: Array, real_dtype: DType) -> tuple[Array, Array]:
        r = _hp.run(self.device, "linalg_slogdet", (x.dtype,), x, real_dtype)
        if r is not None:
            return r
        _, piv, sgn = self._lu(x)
        return _dec.slogdet_from_pivots(self.p, piv, sgn)

    # -- QR ------------------------------------------------------------------------------------
    def _wy(self, x: Array, r0: int, c0: int, v: Array, vt: Array, tm: Array) -> None:
        """x[:, r0:, c0:] -= V (T (Vᵀ x[:, r0:, c0:])) (``tm`` = T or Tᵀ) for x (batch, m, ld):
        a gather into a contiguous block, three ``matmul`` calls and a subtraction."""
        dev, dt = self.device, x.dtype
        batch, m, ld = x.shape
        rows, cols = m - r0, ld - c0
        quads = (cols + 3) // 4
        total = batch * rows * quads
        p = pack("8I", m, ld, r0, c0, batch, total, rows, cols)
        blk = self._scratch((batch, rows, cols), dt)
        self._blk("qr_gather", [x, blk], p, grid_1d(dev, total, _WG_PANEL))
        y = self.p.matmul(v, self.p.matmul(tm, self.p.matmul(vt, blk, dt), dt), dt)
        self._blk("qr_sub", [x, y], p, grid_1d(dev, total, _WG_PANEL))

    def _householder_blocked(self, x: Array, qcols: int) -> tuple[Array, Array]:
        """:meth:`_householder` in blocks of :data:`BLOCK` columns (compact WY): per block a
        panel kernel (V, T), the trailing update A2 -= V Tᵀ Vᵀ A2, then Q backwards blockwise,
        Q2 -= V T Vᵀ Q2 (as LAPACK's geqrf / orgqr)."""
        dev, dt = self.device, x.dtype
        m, n = x.shape[-2:]
        K = min(m, n)
        batch = prod(x.shape[:-2])
        with device_lock(dev):
            a = self._copy(x, (batch, m, n))
            q = self._copy(self._eye_stack(batch, m, qcols, dt), (batch, m, qcols))
            if not (batch and K):
                return a, q
            blocks = []
            for k0 in range(0, K, BLOCK):
                nb = min(BLOCK, K - k0)
                mp = m - k0
                v = self._scratch((batch, mp, BLOCK), dt)
                vt = self._scratch((batch, BLOCK, mp), dt)
                tm = self._scratch((batch, BLOCK, BLOCK), dt)
                tt = self._scratch((batch, BLOCK, BLOCK), dt)
                self._blk("qr_panel", [a, v, vt, tm, tt], pack("8I", m, n, k0, nb, batch, 0, mp, 0),
                          grid_1d(dev, batch, 1))
                if k0 + nb < n:
                    self._wy(a, k0, k0 + nb, v, vt, tt)
                blocks.append((k0, v, vt, tm))
            for k0, v, vt, tm in reversed(blocks):
                if k0 < qcols:
                    self._wy(q, k0, k0, v, vt, tm)
        return a, q

    def _householder(self, x: Array, qcols: int) -> tuple[Array, Array]:
        """(R-shaped working array (batch, m, n), Q (batch, m, qcols)) of a flattened stack:
        blocked up to :data:`QR_BLOCKED_MAX_M` rows, else one reflector at a time (3 or 5
        dispatches per column)."""
        m = x.shape[-2]
        if m <= QR_BLOCKED_MAX_M:
            return self._householder_blocked(x, qcols)
        dev, dt = self.device, x.dtype
        m, n = x.shape[-2:]
        K = min(m, n)
        batch = prod(x.shape[:-2])
        with device_lock(dev):
            a = self._copy(x, (batch, m, n))
            q = self._eye_stack(batch, m, qcols, dt)
            if batch and K:
                v = Array._output(dev, (batch, K, m), dt)
                tau = Array._output(dev, (batch, K), dt)

                def params(ncols: int, k: int, j0: int) -> bytes:
                    return pack("8I", m, ncols, k, j0, batch, K, batch * (ncols - j0), 0)
                wv = Array._output(dev, (batch * max(n, qcols),), dt)

                def apply(target: Array, ncols: int, k: int, j0: int) -> None:
                    """target[k:, j0:] = H_k target[k:, j0:]"""
                    p = params(ncols, k, j0)
                    if m - k <= _gk.MAX_LOOP - 64:  # barrier-free: a dot per thread, then an update
                        self._run("linalg_qr", "dots", [target, v, tau], p,
                                  grid_1d(dev, batch * (ncols - j0), 64), after=wv)
                        quads = (ncols - j0 + 3) // 4
                        self._run("linalg_qr", "update", [target, v, tau], p,
                                  grid_1d(dev, batch * (m - k) * quads, 64), after=wv)
                    else:  # a workgroup per column (tree reductions)
                        self._run("linalg_qr", "apply", [target, v, tau], p,
                                  grid_1d(dev, batch * (ncols - j0), 1))
                for k in range(K):
                    self._run("linalg_qr", "house", [a, v, tau], params(n, k, 0), grid_1d(dev, batch, 1))
                    if k + 1 < n:
                        apply(a, n, k, k + 1)
                for k in reversed(range(min(K, qcols))):
                    apply(q, qcols, k, k)
        return a, q

    def linalg_qr(self, x: Array, mode: str) -> tuple[Array, Array]:
        r = _hp.run(self.device, "linalg_qr", (x.dtype,), x, mode)
        if r is not None:
            return r
        m, n = x.shape[-2:]
        K = min(m, n)
        bs = x.shape[:-2]
        qcols = m if mode == "complete" else K
        a, q = self._householder(x, qcols)
        r = reshape(a, bs + (m, n))
        if mode != "complete" and K < m:  # the first K rows: a view
            r = window(r, 0, bs + (K, n), [*(s * m * n for s in _strides(bs)), n, 1])
        return reshape(q, bs + (m, qcols)), r

    # -- Jacobi: eigh -------------------------------------------------------------------------
    def linalg_eigh(self, x: Array, real_dtype: DType) -> tuple[Array, Array]:
        r = _hp.run(self.device, "linalg_eigh", (x.dtype,), x, real_dtype)
        if r is not None:
            return r
        dev, dt = self.device, x.dtype
        n = x.shape[-1]
        bs = x.shape[:-2]
        batch = prod(bs)
        npad = n + n % 2
        groups = batch * npad // 2
        with device_lock(dev):
            # only the lower triangle counts, as in LAPACK: a = tril(x) + tril(x, -1)^T
            low = self.p.tri(x, 0, False)
            a0 = reshape(ew(self.p, "add", low, matrix_transpose(self.p.tri(x, -1, False))), (batch, n, n))
            a = self._copy(a0, (batch, n, n))
            vec = self._eye_stack(batch, n, n, dt)
        if batch and n > 1:
            rot = Array._output(dev, (2 * groups,), dt)
            off_mask = ew(self.p, "subtract", 1.0, self.p.eye(n, n, 0, dt))
            prev = None
            fused = n <= FUSED_MAX_N
            tpp, per = _fused_plan(n, n)
            for sweep in range(MAX_SWEEPS):
                with device_lock(dev):
                    if fused:
                        for r in range(0, npad - 1, per):
                            p = pack("6If4I", n, n, npad, r, batch, groups, 0.0, min(per, npad - 1 - r),
                                     tpp, 0, 0)
                            self._run("linalg_jacobi", "eig_fused", [a, vec, None], p, grid_1d(dev, batch, 1))
                    for r in range(0 if not fused else npad - 1, npad - 1):
                        p = pack("6If4I", n, n, npad, r, batch, groups, 0.0, 1, 1, 0, 0)
                        self._run("linalg_jacobi", "eig_rows", [a, None, rot], p, grid_1d(dev, groups, 1))
                        self._run("linalg_jacobi", "eig_cols", [a, vec, rot], p, grid_1d(dev, groups, 1))
                # convergence: off-diagonal norm relative to the whole (one readback per sweep)
                p = self.p
                sq = ew(p, "multiply", a, a)
                off = _dec.reduce_axes(p, ew(p, "multiply", sq, off_mask), (1, 2), "sum")
                tot = _dec.reduce_axes(p, sq, (1, 2), "sum")
                ratio = float(_dec.reduce_all(p, ew(p, "sqrt", ew(p, "divide", off, ew(p, "maximum", tot, 1e-37))),
                                              "max"))
                if ratio != ratio:  # NaN or inf in the input
                    a, vec = _dec.nonfinite(p, x, "eigh", a, vec)
                    break
                if not ratio > 4 * _EPS32:
                    break
                if sweep >= 3 and prev is not None and ratio > 0.25 * prev and ratio < 1e-5:
                    break  # at the rounding floor
                prev = ratio
        # eigenvalues as Rayleigh quotients v^T A v of the original matrix: their error is
        # second order in the eigenvectors' (the rotated diagonal carries ~10 sweeps of rounding)
        p = self.p
        if n > 1:
            w = _dec.reduce_axes(p, ew(p, "multiply", vec, p.matmul(a0, vec, dt)), (1,), "sum")
        else:
            w = p.diagonal(a, 0)
        if n > 1:
            order = _dec.argsort_last(p, w)
            w = _dec.take_last(p, w, order)
            vec = _dec.take_last(p, vec, order)
        return reshape(w, bs + (n,)), reshape(vec, bs + (n, n))

    # -- Jacobi: SVD --------------------------------------------------------------------------
    def linalg_svd(self, x: Array, full_matrices: bool, compute_uv: bool,
                   real_dtype: DType) -> tuple[Array | None, Array, Array | None]:
        r = _hp.run(self.device, "linalg_svd", (x.dtype,), x, full_matrices, compute_uv,
                    real_dtype)
        if r is not None:
            return r
        dev, dt = self.device, x.dtype
        bs = x.shape[:-2]
        m0, n0 = x.shape[-2:]
        trans = m0 < n0
        if trans:
            x = matrix_transpose(x)
        m, n = x.shape[-2:]  # m >= n
        batch = prod(bs)
        npad = n + n % 2
        groups = batch * npad // 2
        with device_lock(dev):
            u = self._copy(x, (batch, m, n))
            vec = self._eye_stack(batch, n, n, dt)
        tol = _EPS32 * max(2.0, math.sqrt(m))  # as LAPACK's gesvj: sqrt(m) * eps
        if batch and n > 1:
            conv = Array._output(dev, ((npad - 1) * groups,), dt)
            fused = n <= SVD_FUSED_MAX_N
            tpp, per = _fused_plan(n, m)
            for _sweep in range(MAX_SWEEPS):
                with device_lock(dev):
                    if fused:
                        for r in range(0, npad - 1, per):
                            p = pack("6If4I", n, m, npad, r, batch, groups, tol, min(per, npad - 1 - r),
                                     tpp, 0, 0)
                            self._run("linalg_jacobi", "svd_fused", [u, vec, conv], p, grid_1d(dev, batch, 1))
                    else:
                        for r in range(npad - 1):
                            p = pack("6If4I", n, m, npad, r, batch, groups, tol, 1, 1, 0, 0)
                            self._run("linalg_jacobi", "svd_round", [u, vec, conv], p,
                                      grid_1d(dev, groups, 1))
                worst = float(_dec.reduce_all(self.p, conv, "max"))
                if worst != worst:  # NaN or inf in the input
                    u, vec = _dec.nonfinite(self.p, x, "svd", u, vec)
                    break
                if not worst > tol:  # no rotation in this sweep
                    break
        p = self.p
        s = ew(p, "sqrt", _dec.reduce_axes(p, ew(p, "multiply", u, u), (1,), "sum"))  # column norms: (batch, n)
        if n > 1:
            order = _dec.argsort_last(p, s, descending=True)
            s = _dec.take_last(p, s, order)
        if not compute_uv:
            return None, reshape(s, bs + (n,)), None
        if n > 1:
            u = _dec.take_last(p, u, order)
            vec = _dec.take_last(p, vec, order)
        u = ew(p, "divide", u, reshape(ew(p, "where", ew(p, "greater", s, 0.0), s, 1.0), (batch, 1, n)))
        # re-orthogonalise (and complete) U by a QR: U = Q diag(sign(diag R)) up to rounding;
        # a zero singular value's column gets an orthonormal completion from Q
        qcols = m if full_matrices else n
        r_, q = self._householder(u, qcols)
        d = p.diagonal(r_, 0)
        sg = ew(p, "where", ew(p, "less", d, 0.0), -1.0, p.fill(p.output(d.shape, dt), 1.0))
        if qcols > n:
            sg = p.concat([sg, p.fill(p.output((batch, qcols - n), dt), 1.0)], 1, dt)
        u = ew(p, "multiply", q, reshape(sg, (batch, 1, qcols)))
        vh = matrix_transpose(vec)
        s = reshape(s, bs + (n,))
        u = reshape(u, bs + (m, qcols))
        vh = reshape(vh, bs + (n, n))
        if trans:  # x^T = U S Vh  ->  x = Vh^T S U^T
            return matrix_transpose(vh), s, matrix_transpose(u)
        return u, s, vh


def _strides(shape: tuple[int, ...]) -> list[int]:
    """C-contiguous strides of ``shape`` in units of one trailing matrix (batch strides)."""
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return out[::-1]
