"""The NumPy op provider of the ``cpu`` device (also the oracle the GPU results are checked
against): every op of :class:`~pyaccel.ops.provider.OpProvider` as NumPy calls on views of
the device's byte buffers.

The namespace functions have validated the arguments and worked out dtypes and shapes;
results have NumPy's values, converted to the requested dtype. float16 data accumulates in
float32 (sums, means, matmul), as the GPU kernels do.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .._keys import numpy_key
from .._shapes import prod
from ..array import Array
from ..device import Device
from ..dtypes import HOST_LAYOUT, DType, StorageLayout, as_dtype
from ..ops.provider import delegate
from ..ops.table import FLOAT_CATEGORIES, OpDef
from .numpy_fft import NumpyFFT
from .numpy_linalg import NumpyLinalg


def view(x: Array) -> Any:
    """A NumPy view of a cpu array's buffer (shares memory; strided for a pyaccel view)."""
    np = x.device.ops.np
    raw = x._base.handle
    it = x.dtype.itemsize
    if x._strides is None:
        return raw[:x.size * it].view(np.dtype(x.dtype.name)).reshape(x.shape)
    flat = raw[:(raw.nbytes // it) * it].view(np.dtype(x.dtype.name))
    return np.lib.stride_tricks.as_strided(flat[x._offset:], shape=x.shape,
                                           strides=tuple(t * it for t in x._strides))


def _strided(np: Any, x: Array, shape: Sequence[int], offset: int, strides: Sequence[int]) -> Any:
    """NumPy view of ``x.flat[offset + sum(idx * strides)]`` (x C-contiguous)."""
    flat = view(x).reshape(-1)
    it = flat.itemsize
    return np.lib.stride_tricks.as_strided(flat[offset:], shape=tuple(shape),
                                           strides=tuple(t * it for t in strides))


def _acc(dt: DType) -> str:
    """Accumulation dtype: float16 data accumulates in float32 (as the GPU kernels)."""
    return "float32" if dt.name == "float16" else dt.name


def _complex_expm1(np: Any, z: Any) -> Any:
    """expm1 of complex data with the Array API's special cases (NumPy's complex expm1 gives
    NaN for every infinite input and -0 for expm1(-0 + 0j)).

    Finite z: real = expm1(x) cos(y) - 2 sin(y/2)^2 (no cancellation near 0), imag =
    exp(x) sin(y) (= y where y is 0, so exp overflow keeps a zero imaginary part);
    non-finite z: exp(z) - 1, which carries C99's cexp special cases.
    """
    z = np.asarray(z)
    x, y = z.real, z.imag
    re = np.expm1(x) * np.cos(y) - 2 * np.sin(y / 2) ** 2
    re = np.where((x == 0) & (y == 0), np.zeros_like(x), re)  # expm1(+-0 + 0j) = +0 + 0j
    im = np.where(y == 0, y, np.exp(x) * np.sin(y))
    e = np.exp(z) - 1
    fin = np.isfinite(x) & np.isfinite(y)
    out = np.empty_like(z)
    out.real = np.where(fin, re, e.real)
    out.imag = np.where(fin, im, e.imag)
    return out


def _complex_log1p(np: Any, z: Any) -> Any:
    """log1p of complex data, accurate near 0 (NumPy's is log(|1 + z|) + i arg(1 + z), which
    loses every digit of the real part for |z| below the dtype's epsilon).

    Real part: log1p(t) / 2 with t = |1 + z|^2 - 1 = a (2 + a) + b^2 where t is moderate
    (no cancellation), else log|1 + z|; non-finite z: NumPy's log(1 + z) special cases.
    """
    z = np.asarray(z)
    a, b = z.real, z.imag
    r = np.asarray(np.log1p(z))
    t = a * (2 + a) + b * b
    near = np.isfinite(t) & (t > -0.75) & (t < 3)
    out = np.array(r)  # (a writable array, also for 0-d input)
    out.real = np.where(near, 0.5 * np.log1p(np.where(near, t, 0)), r.real)
    return out


def _complex_sign(np: Any, z: Any) -> Any:
    """sign of complex data: NumPy's x / |x|, but NaN + NaN j where either part is NaN (the Array
    API's special case; NumPy gives 1 + 0j for inf + NaN j)."""
    z = np.asarray(z)
    r = np.sign(z)
    bad = np.isnan(z.real) | np.isnan(z.imag)
    return np.where(bad, np.array(complex(np.nan, np.nan), dtype=z.dtype), r)


def _complex_tanh(np: Any, z: Any) -> Any:
    """tanh of complex data: +-1 + 0j with the sign of imag(z) for an infinite real part and a
    finite imaginary one (the Array API; NumPy gives the sign of sin(2 imag(z)))."""
    z = np.asarray(z)
    r = np.array(np.tanh(z))
    fix = np.isinf(z.real) & np.isfinite(z.imag)
    r.real = np.where(fix, np.sign(z.real), r.real)
    r.imag = np.where(fix, np.copysign(np.zeros_like(z.imag), z.imag), r.imag)
    return r


def _real_floor_divide(np: Any, x: Any, y: Any) -> Any:
    """floor_divide with the Array API's results where exactly one operand is infinite:
    floor(x / y), so inf // 5 is inf (NumPy: nan) and 5 // -inf is -0 (NumPy: -1), as the
    WGSL kernels compute it; every other element is NumPy's."""
    r = np.floor_divide(x, y)
    one_inf = np.isinf(x) != np.isinf(y)
    if np.any(one_inf):
        r = np.where(one_inf & ~np.isnan(x) & ~np.isnan(y), np.true_divide(x, y), r)
    return r


# NumPy functions replaced for real floating-point data (the Array API's special cases)
_REAL_FUNCS: dict[str, Callable[..., Any]] = {"floor_divide": _real_floor_divide}


# NumPy functions replaced for complex data (the Array API's special cases where NumPy differs)
_COMPLEX_FUNCS: dict[str, Callable[..., Any]] = {
    "expm1": _complex_expm1, "log1p": _complex_log1p, "sign": _complex_sign,
    "tanh": _complex_tanh}


@delegate("linalg", NumpyLinalg)
@delegate("fft", NumpyFFT)
class NumpyOps:
    """The op provider of the cpu device (see the module docstring). The linalg and fft
    families are components it holds (``self.linalg``, ``self.fft``) and forwards
    (``linalg_solve``, ``fft_c2c``, ...; :func:`pyaccel.ops.provider.delegate`). It has a
    native version of every composite of :mod:`pyaccel.ops.decompositions`."""

    def __init__(self, device: Device, np: Any) -> None:
        self.device = device
        self.np = np
        self.linalg = NumpyLinalg(device, np)
        self.fft = NumpyFFT(device, np)

    def _wrap(self, arr: Any, dtype: DType | None = None) -> Array:
        """A new cpu Array holding a copy of NumPy array ``arr`` (as ``dtype``)."""
        dt = dtype or as_dtype(arr.dtype)
        out = Array._empty(self.device, tuple(arr.shape), dt)
        if out.size:
            view(out)[...] = arr
        return out

    # -- storage -----------------------------------------------------------------------
    def layout(self, dtype: DType) -> StorageLayout:
        """The host layout of ``dtype`` (NumPy's; the dtype table)."""
        return HOST_LAYOUT[dtype]

    def output(self, shape: tuple[int, ...], dtype: DType, nbytes: int = -1) -> Array:
        return Array._empty(self.device, tuple(shape), dtype)

    def to_numpy(self, x: Array) -> Any:
        return view(x).copy()

    async def to_numpy_async(self, x: Array) -> Any:
        return view(x).copy()

    def host_view(self, x: Array) -> Any:
        """A NumPy view sharing the array's memory."""
        return view(x)

    def dlpack_device(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU

    # -- elementwise ---------------------------------------------------------------------
    def elementwise(self, row: OpDef, args: Sequence[Any], shape: tuple[int, ...], compute_dtype: DType,
                    out_dtype: DType) -> tuple[Array, Callable[[Sequence[Any]], Array] | None]:
        np = self.np
        cdt = compute_dtype
        fn: Any = np
        for part in row.numpy.split("."):
            fn = getattr(fn, part)
        if cdt.kind == "c" and row.name in _COMPLEX_FUNCS:
            cfn = _COMPLEX_FUNCS[row.name]
            fn = lambda *v: cfn(np, *v)  # noqa: E731
        elif cdt.kind == "f" and row.name in _REAL_FUNCS:
            rfn = _REAL_FUNCS[row.name]
            fn = lambda *v: rfn(np, *v)  # noqa: E731
        vals = []
        for a in args:
            if isinstance(a, Array):
                v = view(a)
                vals.append(v.astype(np.dtype(cdt.name)) if row.dtypes in FLOAT_CATEGORIES
                            and a.dtype is not cdt else v)
            else:
                vals.append(a)
        if row.name == "where":
            vals[1:] = [np.asarray(v, dtype=np.dtype(cdt.name)) if not isinstance(a, Array) else v
                        for v, a in zip(vals[1:], args[1:], strict=True)]
        with np.errstate(all="ignore"):
            r = fn(*vals)
        r = np.asarray(r)
        want = np.dtype(out_dtype.name)
        if r.dtype != want:
            r = r.astype(want)
        return self._wrap(r, out_dtype), None

    def clip(self, x: Array, lo: Any, hi: Any) -> Array:
        np = self.np
        lo_, hi_ = (view(b) if isinstance(b, Array) else b for b in (lo, hi))
        with np.errstate(all="ignore"):
            r = np.asarray(np.clip(view(x), lo_, hi_)).astype(np.dtype(x.dtype.name), copy=False)
        return self._wrap(r, x.dtype)

    # -- creation ------------------------------------------------------------------------
    def fill(self, out: Array, value: Any) -> Array:
        if out.size:
            view(out)[...] = value
        return out

    def arange(self, start: Any, stop: Any, step: Any, n: int, dtype: DType) -> Array:
        np = self.np
        return self._wrap(np.arange(start, stop, step, dtype=np.dtype(dtype.name)), dtype)

    def linspace(self, start: Any, stop: Any, num: int, endpoint: bool, dtype: DType,
                 float_dtype: DType) -> Array:
        np = self.np
        return self._wrap(np.linspace(start, stop, num, endpoint=endpoint, dtype=np.dtype(dtype.name)), dtype)

    def eye(self, n_rows: int, n_cols: int, k: int, dtype: DType) -> Array:
        np = self.np
        return self._wrap(np.eye(n_rows, n_cols, k=k, dtype=np.dtype(dtype.name)), dtype)

    def tri(self, x: Array, k: int, upper: bool) -> Array:
        np = self.np
        return self._wrap((np.triu if upper else np.tril)(view(x), k=k), x.dtype)

    # -- manipulation --------------------------------------------------------------------
    def astype(self, x: Array, dtype: DType) -> Array:
        np = self.np
        with np.errstate(all="ignore"):
            return self._wrap(view(x).astype(np.dtype(dtype.name)), dtype)

    def permute_dims(self, x: Array, axes: Sequence[int]) -> Array:
        return self._wrap(self.np.asarray(view(x).transpose(axes)))

    def gather(self, x: Array, shape: Sequence[int], offset: int, strides: Sequence[int],
               dtype: DType | None = None) -> Array:
        """New C-contiguous ``out[idx] = x.flat[offset + sum(idx * strides)]`` (x C-contiguous)."""
        np = self.np
        if not prod(shape):
            return Array._empty(self.device, tuple(shape), dtype or x.dtype)
        src = _strided(np, x, shape, offset, strides)
        if dtype is not None and dtype is not x.dtype:
            with np.errstate(all="ignore"):
                src = src.astype(np.dtype(dtype.name))
        return self._wrap(src, dtype or x.dtype)

    def scatter(self, dst: Array, shape: Sequence[int], dst_offset: int, dst_strides: Sequence[int],
                src: Array | bool | int | float, src_strides: Sequence[int] | None = None) -> None:
        """``dst.flat[dst_offset + sum(idx * dst_strides)] = src[idx]`` (src broadcast / scalar)."""
        np = self.np
        if not prod(shape):
            return
        out = _strided(np, dst, shape, dst_offset, dst_strides)
        if isinstance(src, Array):
            v = (view(src) if src_strides is None
                 else _strided(np, src, shape, 0, src_strides))
        else:
            v = src
        with np.errstate(all="ignore"):
            out[...] = v

    def broadcast_to(self, x: Array, shape: tuple[int, ...]) -> Array:
        return self._wrap(self.np.broadcast_to(view(x), shape))

    def concat(self, arrays: Sequence[Array], axis: int, dtype: DType) -> Array:
        np = self.np
        return self._wrap(np.concatenate([view(a) for a in arrays], axis=axis)
                          .astype(np.dtype(dtype.name), copy=False), dtype)

    def flip(self, x: Array, axes: Sequence[int]) -> Array:
        np = self.np
        return self._wrap(np.asarray(np.flip(view(x), tuple(axes))))

    def diagonal(self, x: Array, offset: int) -> Array:
        np = self.np
        return self._wrap(np.asarray(np.diagonal(view(x), offset=offset, axis1=-2, axis2=-1)), x.dtype)

    # -- indexing --------------------------------------------------------------------------
    def getitem(self, x: Array, key: Any) -> Array:
        r = view(x)[numpy_key(x, key, view)]
        return self._wrap(self.np.asarray(r), x.dtype)

    def setitem(self, x: Array, key: Any, value: Any) -> None:
        np = self.np
        with np.errstate(all="ignore"):
            view(x)[numpy_key(x, key, view)] = view(value) if isinstance(value, Array) else value

    # -- reductions ------------------------------------------------------------------------
    def reduce(self, x: Array, axes: tuple[int, ...], shape: tuple[int, ...], op: str,
               dtype: DType) -> Array:
        np = self.np
        v = view(x)
        if op in ("sum", "prod"):
            with np.errstate(all="ignore"):
                r = getattr(np, op)(v, axis=axes, dtype=np.dtype(_acc(dtype)))
            r = np.asarray(r).astype(np.dtype(dtype.name))
        elif op in ("min", "max"):
            r = np.asarray(getattr(np, "amin" if op == "min" else "amax")(v, axis=axes))
        else:
            r = np.asarray(getattr(np, op)(v, axis=axes))
        return self._wrap(r.reshape(shape), dtype)

    def mean(self, x: Array, axes: tuple[int, ...], shape: tuple[int, ...], dtype: DType) -> Array:
        np = self.np
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # empty slices give NaN, quietly
            r = np.mean(view(x), axis=axes, dtype=np.dtype(_acc(dtype)))
        return self._wrap(np.asarray(r).astype(np.dtype(dtype.name)).reshape(shape), dtype)

    def var(self, x: Array, axes: tuple[int, ...], shape: tuple[int, ...], correction: float,
            dtype: DType) -> Array:
        np = self.np
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # empty slices / dof <= 0: NaN, inf
            r = np.var(view(x), axis=axes, dtype=np.dtype(_acc(dtype)), ddof=correction)
        return self._wrap(np.asarray(r).astype(np.dtype(dtype.name)).reshape(shape), dtype)

    def argreduce(self, x: Array, axis: int | None, shape: tuple[int, ...], op: str,
                  dtype: DType) -> Array:
        np = self.np
        r = np.asarray(getattr(np, op)(view(x), axis=axis)).astype(np.dtype(dtype.name))
        return self._wrap(r.reshape(shape), dtype)

    def cumulative_sum(self, x: Array, axis: int, include_initial: bool, dtype: DType) -> Array:
        np = self.np
        r = np.cumulative_sum(view(x), axis=axis, dtype=np.dtype(_acc(dtype)),
                              include_initial=include_initial)
        return self._wrap(np.asarray(r).astype(np.dtype(dtype.name)), dtype)

    def cumulative_prod(self, x: Array, axis: int, include_initial: bool, dtype: DType) -> Array:
        np = self.np
        with np.errstate(all="ignore"):
            r = np.cumulative_prod(view(x), axis=axis, dtype=np.dtype(_acc(dtype)),
                                   include_initial=include_initial)
        return self._wrap(np.asarray(r).astype(np.dtype(dtype.name)), dtype)

    def sort(self, x: Array, axis: int, descending: bool, stable: bool, indices: bool,
             dtype: DType) -> Array:
        np = self.np
        v = view(x)
        if descending:
            r = np.flip(v, axis=axis)
            i = np.argsort(r, axis=axis, kind="stable")
            i = (v.shape[axis] - 1 - i)
            i = np.flip(i, axis=axis)
            r = np.take_along_axis(v, i, axis=axis) if not indices else i
        else:
            r = (np.argsort(v, axis=axis, kind="stable") if indices
                 else np.sort(v, axis=axis, kind="stable"))
        return self._wrap(np.asarray(r).astype(np.dtype(dtype.name)), dtype)

    def searchsorted(self, x1: Array, x2: Array, right: bool, dtype: DType) -> Array:
        np = self.np
        r = np.searchsorted(view(x1), view(x2), side="right" if right else "left")
        return self._wrap(np.asarray(r).astype(np.dtype(dtype.name)), dtype)

    # -- linalg / nn -------------------------------------------------------------------------
    def matmul(self, x1: Array, x2: Array, dtype: DType) -> Array:
        np = self.np
        acc = np.dtype(_acc(dtype))  # as the GPU kernel
        with np.errstate(all="ignore"):
            r = np.matmul(view(x1).astype(acc, copy=False), view(x2).astype(acc, copy=False))
        return self._wrap(np.asarray(r).astype(np.dtype(dtype.name)), dtype)

    def softmax(self, x: Array, axis: int) -> Array:
        np = self.np
        v = view(x)
        if v.shape[axis] == 0:
            return self._wrap(v.copy(), x.dtype)
        with np.errstate(all="ignore"):
            m = np.max(v, axis=axis, keepdims=True)
            e = np.exp(v - m)  # an infinite max gives NaN (as the GPU kernel)
            r = (e / np.sum(e, axis=axis, keepdims=True)).astype(v.dtype)
        return self._wrap(r, x.dtype)

    def logsumexp(self, x: Array, axis: int, keepdims: bool) -> Array:
        np = self.np
        v = view(x)
        if v.shape[axis] == 0:
            r = np.full(v.shape[:axis] + v.shape[axis + 1:], -np.inf, dtype=v.dtype)
        else:
            with np.errstate(all="ignore"):
                m = np.max(v, axis=axis, keepdims=True)
                m = np.where(np.isfinite(m), m, 0)
                s = np.sum(np.exp(v - m), axis=axis, keepdims=True)
                r = (np.log(s) + m).squeeze(axis).astype(v.dtype)
        if keepdims:
            r = np.expand_dims(r, axis)
        return self._wrap(np.asarray(r), x.dtype)

