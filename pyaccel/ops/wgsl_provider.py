"""The WGSL op provider: every op of :class:`~pyaccel.ops.provider.OpProvider` as WebGPU
kernels, shared by every WebGPU-shaped device (wgpu-py natively, the browser's WebGPU, and
any backend whose impl is a ``webgpu_common.GPUDeviceImpl``).

The namespace functions have already validated the arguments, promoted the dtypes and
worked out the result shapes; this module turns each op into kernel launches of
:mod:`pyaccel.ops.kernelgen` (the elementwise skeleton: maps, casts, gathers, scatters,
fills) and :mod:`pyaccel.ops.gpu_kernels` (reductions, scans, matmul, softmax, sort).
Each op holds the device lock (:func:`pyaccel.ops.launch.device_lock`) across its whole recording sequence
(parameter block, output allocation, dispatch), so threads sharing a device never
interleave one op's commands.

Storage follows the dtype table (:data:`pyaccel.dtypes.WGSL_LAYOUT`): bool as u32 0/1,
int8/int16/uint8/uint16 widened to 32 bits, float16 as f16.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .. import _host, _keys
from .._shapes import broadcast_shapes, broadcast_strides, contiguous_strides, prod
from ..array import Array
from ..device import Buffer, Device
from ..dtypes import (
    DTYPE_TABLE,
    MULTI_LANE,
    WGSL_LAYOUT,
    WGSL_SCALARS,
    DType,
    StorageLayout,
    bool_,
    int32,
    uint32,
)
from ..errors import UnsupportedDTypeError
from ..promotion import check_scalar_fits
from . import decompositions as _dec
from . import fusion as _fusion
from . import fusion_matmul as _fm
from . import fusion_reduce as _fr
from . import gpu_kernels as _gk
from . import host_path as _hp
from . import kernelgen as _k
from . import table as _table
from .fft_wgsl import WgslFFT
from .launch import device_lock, lock_held
from .linalg_wgsl import WgslLinalg
from .primitives import Strided, moveaxis, reshape, upload
from .provider import delegate
from .table import OpDef

# widened narrow ints -> the 32-bit dtype they compute in (the rows with a ``wrap``)
_NARROW_WIDE = {d: WGSL_SCALARS[r.wgsl_compute] for d, r in DTYPE_TABLE.items() if r.wrap is not None}
_DLPACK_CODES = {"vulkan": 7, "metal": 8, "webgpu": 15}


_F = TypeVar("_F", bound=Callable[..., Any])


# the elementwise / reduction part of the host path (:mod:`.host_path`): op -> dtype names
HOST_PATH: dict[str, frozenset[str]] = {
    op: frozenset(d for o, d in _hp.HOST_PATH if o == op) for op, _ in _hp.HOST_PATH
    if not op.startswith(("linalg_", "fft_"))}
HOST_CALLS = _hp.HOST_CALLS
# reductions a pairwise tree of elementwise passes runs for multi-lane dtypes: op -> row
_TREE_OPS = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum"}


def _row_expr(row: OpDef, dt: DType) -> str | None:
    """The row's WGSL expression computing in ``dt`` (multi-lane dtypes: ``row.wide_expr``)."""
    ml = MULTI_LANE.get(dt)
    if ml is not None:
        return row.wide_expr(ml.prefix or "")
    return row.expr(_k.kind_of(dt))


def _locked(method: _F) -> _F:
    """Run a provider method holding the device lock (one op's recording sequence is atomic)."""

    @functools.wraps(method)
    def wrapper(self: WgslOps, *args: Any, **kwargs: Any) -> Any:
        lock = self._lock
        if lock_held(lock):  # called from another op of this provider: it holds the lock
            return method(self, *args, **kwargs)
        with lock:
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


class _Fast:
    """A memoised elementwise launch for one signature of arguments: a repeat call only
    takes an output buffer and records the planned kernel (see ``elementwise._apply``)."""

    __slots__ = ("dev", "lock", "shape", "dt", "nbytes", "plan")

    def __init__(self, dev: Device, shape: tuple[int, ...], dt: DType, nbytes: int,
                 plan: _k.Plan) -> None:
        self.dev = dev
        self.lock = device_lock(dev)
        self.shape = shape
        self.dt = dt
        self.nbytes = nbytes
        self.plan = plan

    def __call__(self, args: Sequence[Any]) -> Array:
        plan = self.plan
        handles = [args[k]._buf._handle for k in plan.bufs]
        if None in handles:  # a freed buffer: Buffer.handle raises BufferFreedError
            handles = [args[k]._buf.handle for k in plan.bufs]
        values = [args[k] for k, _ in plan.scal] if plan.scal else ()
        with self.lock:
            out = Array._output(self.dev, self.shape, self.dt, self.nbytes)
            plan.record(out._buf._handle, handles, values)
        return out


_LINSPACE_PY_MAX = 1 << 20  # without NumPy: pure Python up to this many values, then a kernel


def _linspace_f64(start: float, stop: float, num: int, endpoint: bool) -> list[float]:
    """NumPy's linspace values in float64 (numpy/_core/function_base.py), as Python floats."""
    div = (num - 1) if endpoint else num
    start, delta = float(start), float(stop) - float(start)
    step = delta / div if div > 0 else math.nan
    if div <= 0:
        ys = [i * delta for i in range(num)]
    elif step == 0:  # step underflows: NumPy divides first
        ys = [i / div * delta for i in range(num)]
    else:
        ys = [i * step for i in range(num)]
    ys = [y + start for y in ys]
    if endpoint and num > 1:
        ys[-1] = float(stop)
    return ys


@delegate("linalg", WgslLinalg)
@delegate("fft", WgslFFT)
class WgslOps:
    """The op provider of a WebGPU device (see the module docstring). It implements the
    primitive set (:class:`pyaccel.ops.primitives.PrimitivesWide`); the composites come from
    :mod:`pyaccel.ops.decompositions`; the linalg and fft families are components it holds
    (``self.linalg``, ``self.fft``), whose public methods (``linalg_solve``, ``fft_c2c``, ...)
    it forwards (:func:`pyaccel.ops.provider.delegate`)."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self._lock = device_lock(device)
        self.linalg = WgslLinalg(self)
        self.fft = WgslFFT(self)

    # -- storage -----------------------------------------------------------------------
    def layout(self, dtype: DType) -> StorageLayout:
        """The WebGPU buffer layout of ``dtype`` (the dtype table)."""
        lay = WGSL_LAYOUT.get(dtype)
        if lay is None:
            raise UnsupportedDTypeError(f"dtype {dtype.name} has no WGSL storage on {self.device.uri}")
        return lay

    def output(self, shape: tuple[int, ...], dtype: DType, nbytes: int = -1) -> Array:
        """A new array that a kernel recorded next writes in full. Its buffer may be one that
        queued work still uses (the kernel writes it in encoder order; see
        ``GPUDeviceImpl.alloc_output``): never write it from the host before that kernel."""
        dev = self.device
        if nbytes < 0:
            nbytes = prod(shape) * self.layout(dtype).itemsize
        lock = self._lock
        if lock_held(lock):  # (inside an op, as a rule: it holds the lock)
            h = dev.impl.alloc_output(nbytes)
        else:
            with lock:
                h = dev.impl.alloc_output(nbytes)
        return Array._new(Buffer(dev, h, nbytes), tuple(shape), dtype, dev)

    def to_numpy(self, x: Array) -> Any:
        return x._host_from_storage(x._storage_bytes())

    async def to_numpy_async(self, x: Array) -> Any:
        return x._host_from_storage(await x._storage_bytes_async())

    def host_view(self, x: Array) -> Any:
        """None: device memory cannot be viewed from the host."""
        return None

    def dlpack_device(self) -> tuple[int, int]:
        uri = self.device.uri
        code = _DLPACK_CODES.get(self.device.api, 12)
        return (code, int(uri.rsplit(":", 1)[-1]) if ":" in uri else 0)

    # -- elementwise ---------------------------------------------------------------------
    def elementwise(self, row: OpDef, args: Sequence[Any], shape: tuple[int, ...], compute_dtype: DType,
                    out_dtype: DType) -> tuple[Array, Callable[[Sequence[Any]], Array] | None]:
        """``row`` applied to arrays / Python scalars ``args`` (broadcast to ``shape``); returns
        the result and, when the launch can be replayed for the same signature, a memo
        ``fast(args) -> Array``."""
        dev = self.device
        cdt = compute_dtype
        name = row.name
        if prod(shape) == 0:
            return Array._empty(dev, shape, out_dtype), None
        if cdt in MULTI_LANE:
            r = _hp.run(dev, name, (cdt,), row, args, shape, cdt, out_dtype, method="elementwise")
            if r is not None:
                return r[0], None
        T = _k.compute_type(cdt) if not row.args or "T" in row.args else "u32"
        if row.args and all(a == "bool" for a in row.args):
            expr = row.expr("b")
        elif cdt in MULTI_LANE:
            expr = _row_expr(row, cdt)
        else:
            kind = _k.kind_of(cdt)
            expr = row.expr("h" if kind == "f" and cdt.name == "float16" else kind)
        if expr is None:
            raise TypeError(f"{name} is not defined for {cdt.name} data")
        lazy = _fusion.defer(self, row, args, shape, cdt, out_dtype, expr, T)  # docs/fusion.md
        if lazy is not None:
            return lazy
        ops = []
        for k, a in enumerate(args):
            conv = row.args[k] if row.args else "T"
            conv = T if conv == "T" else conv
            if isinstance(a, Array):
                ops.append(_k.buf(a._buf, a.dtype, conv, 0, broadcast_strides(a.shape, shape)))
            else:
                sdt = bool_ if conv == "bool" else _k.scalar_t32(cdt)
                ops.append(_k.scalar(a, sdt, conv))
        with device_lock(dev):
            out = Array._output(dev, shape, out_dtype)
            plan = _k.plan(dev, expr, T, out._buf.nbytes, out_dtype, ops, shape, name=name)
            if plan is None:  # more than MAXD dims after merging: run() splits it
                _k.run(dev, expr, T, out._buf, out_dtype, ops, shape, name=name)
                return out, None
            plan.record(out._buf.handle, [ops[k].buf.handle for k in plan.bufs],  # type: ignore[union-attr]
                        [ops[k].value for k, _ in plan.scal])
        return out, _Fast(dev, shape, out_dtype, out._buf.nbytes, plan)

    def clip(self, x: Array, lo: Any, hi: Any) -> Array:
        """``x`` clamped to [lo, hi] (bounds: Python scalars or arrays of x's dtype)."""
        row = _table.get("clip")
        dt = x.dtype
        args = (x, lo, hi)
        shape = broadcast_shapes(*(a.shape for a in args if isinstance(a, Array)))
        if prod(shape) == 0:
            return Array._empty(self.device, shape, dt)
        T = _k.compute_type(dt)
        expr = _row_expr(row, dt)
        ops = []
        for a in args:
            if isinstance(a, Array):
                ops.append(_k.buf(a._buf, a.dtype, T, 0, broadcast_strides(a.shape, shape)))
            else:
                ops.append(_k.scalar(a, _k.scalar_t32(dt), T))
        with device_lock(self.device):
            out = Array._output(self.device, shape, dt)
            _k.run(self.device, expr, T, out._buf, dt, ops, shape, name=row.name)
        return out

    # -- creation ------------------------------------------------------------------------
    @_locked
    def fill(self, out: Array, value: Any) -> Array:
        """Fill ``out`` with a Python scalar (one kernel)."""
        if out.size:
            dt = out.dtype
            expr, T, conv = _k.cast_expr(dt, dt)
            _k.run(out.device, expr, T, out._buf, dt, [_k.scalar(value, _k.scalar_t32(dt), conv)],
                   list(out.shape), name="fill")
        return out

    @_locked
    def arange(self, start: Any, stop: Any, step: Any, n: int, dtype: DType) -> Array:
        dev, dt = self.device, dtype
        if dt.kind == "b":
            raise TypeError("arange: bool dtype is not supported; use a numeric dtype")
        if dt in MULTI_LANE:
            return self._arange_wide(start, stop, step, n, dt)
        out = Array._empty(dev, (n,), dt)
        if n:
            if dt.kind in "iu":
                check_scalar_fits(int(start), dt, "arange")
                check_scalar_fits(int(start + (n - 1) * step), dt, "arange")
            row = _table.get("arange_kernel")
            T = _k.compute_type(dt)
            sdt = _k.scalar_t32(dt)
            cast = float if dt.kind == "f" else int
            _k.run(dev, row.expr(_k.kind_of(dt)), T, out._buf, dt,
                   [_k.scalar(cast(start), sdt, T), _k.scalar(cast(step), sdt, T)], [n], name="arange")
        return out

    def _arange_wide(self, start: Any, stop: Any, step: Any, n: int, dt: DType) -> Array:
        """arange of a multi-lane dtype: NumPy's values, computed on the host and uploaded
        (exact; creation from Python scalars)."""
        if dt.kind in "iu" and n:
            check_scalar_fits(int(start), dt, "arange")
            check_scalar_fits(int(start + (n - 1) * step), dt, "arange")
        np = _host.numpy()
        if np is not None:
            vals = np.arange(start, stop, step, dtype=np.dtype(dt.name))[:n]
            if vals.shape[0] == n:
                return upload(self.device, vals, dt)
        if dt.kind in "iu":
            return upload(self.device, [int(start) + j * int(step) for j in range(n)], dt)
        delta = (start + step) - start  # NumPy fills start + i * (second - first)
        return upload(self.device, [start + j * delta if j else start for j in range(n)], dt)

    @_locked
    def linspace(self, start: Any, stop: Any, num: int, endpoint: bool, dtype: DType,
                 float_dtype: DType) -> Array:
        """``float_dtype``: the float dtype computed in (dtype itself when it is a float)."""
        dev, dt, fdt = self.device, dtype, float_dtype
        # NumPy's formula on the host (float64 start + i * step, rounded once to the dtype):
        # bit-identical with NumPy, which float32 kernel math is not (linspace(1, 0, 4)[2])
        np = _host.numpy()
        if np is not None:
            return upload(dev, np.linspace(start, stop, num, endpoint=endpoint, dtype=np.dtype(dt.name)), dt)
        if dt.kind == "f" and num <= _LINSPACE_PY_MAX:
            return upload(dev, _linspace_f64(start, stop, num, endpoint), dt)
        div = (num - 1) if endpoint else num
        step = (stop - start) / div if div > 0 else 0.0
        last = float(stop) if endpoint and num > 1 else float(start + (num - 1) * step)
        out = Array._empty(dev, (num,), fdt)
        if num:
            row = _table.get("linspace_kernel")
            sdt = _k.scalar_t32(fdt)
            _k.run(dev, row.expr("f"), "f32", out._buf, fdt,
                   [_k.scalar(float(start), sdt, "f32"), _k.scalar(float(step), sdt, "f32"),
                    _k.scalar(last, sdt, "f32")], [num], name="linspace")
        return out if fdt is dt else self.astype(out, dt)

    @_locked
    def eye(self, n_rows: int, n_cols: int, k: int, dtype: DType) -> Array:
        out = Array._empty(self.device, (n_rows, n_cols), dtype)
        if out.size:
            row = _table.get("eye_kernel")
            T = _k.compute_type(dtype)
            ops = [_k.scalar(1, dtype, T)] if dtype in MULTI_LANE else []
            _k.run(self.device, _row_expr(row, dtype), T, out._buf, dtype, ops, [n_rows, n_cols],
                   prm=(n_cols, 0, k, 0), name="eye")
        return out

    @_locked
    def tri(self, x: Array, k: int, upper: bool) -> Array:
        name = "triu" if upper else "tril"
        out = Array._empty(x.device, x.shape, x.dtype)
        if out.size:
            row = _table.get(name)
            T = _k.compute_type(x.dtype)
            rows, cols = x.shape[-2], x.shape[-1]
            _k.run(x.device, _row_expr(row, x.dtype), T, out._buf, x.dtype,
                   [_k.buf(x._buf, x.dtype, T)], list(x.shape), prm=(cols, rows, k, 0), name=name)
        return out

    # -- manipulation --------------------------------------------------------------------
    @_locked
    def gather(self, x: Array, shape: Sequence[int], offset: int, strides: Sequence[int],
               dtype: DType | None = None) -> Array:
        """New C-contiguous array ``out[idx] = x.flat[offset + sum(idx * strides)]`` (cast to dtype)."""
        dt = dtype or x.dtype
        out = Array._empty(x.device, tuple(shape), dt)
        if out.size:
            expr, T, conv = _k.cast_expr(x.dtype, dt)
            _k.run(x.device, expr, T, out._buf, dt, [_k.buf(x._buf, x.dtype, conv, offset, strides)],
                   list(shape), name="gather")
        return out

    @_locked
    def scatter(self, dst: Array, shape: Sequence[int], dst_offset: int, dst_strides: Sequence[int],
                src: Array | bool | int | float, src_strides: Sequence[int] | None = None) -> None:
        """``dst.flat[dst_offset + sum(idx * dst_strides)] = src[idx]`` (src broadcast / scalar)."""
        if prod(list(shape)) == 0:
            return
        dt = dst.dtype
        if isinstance(src, Array):
            expr, T, conv = _k.cast_expr(src.dtype, dt)
            op = _k.buf(src._buf, src.dtype, conv, 0,
                        src_strides if src_strides is not None else broadcast_strides(src.shape, shape))
        else:
            expr, T, conv = _k.cast_expr(dt, dt)
            op = _k.scalar(src, _k.scalar_t32(dt), conv)
        _k.run(dst.device, expr, T, dst._buf, dt, [op], list(shape), out_offset=dst_offset,
               out_strides=list(dst_strides), store="strided", name="scatter")

    def lazy_astype(self, x: Array, dtype: DType) -> Array | None:
        """``pyaccel.astype`` as a lazy cast node (docs/fusion.md), or None (then
        :meth:`astype`): a cast between fusable dtypes, or a same-dtype copy of a lazy array or
        a view (a plain array's copy is one buffer copy, no kernel)."""
        if dtype is x.dtype and x._lazy is None and x._strides is None:
            return None
        return _fusion.defer_cast(self, x, dtype)

    @_locked
    def astype(self, x: Array, dtype: DType) -> Array:
        if dtype is x.dtype:
            return self.copy(x)
        return self.gather(x, x.shape, 0, contiguous_strides(x.shape), dtype)

    @_locked
    def copy(self, x: Array, shape: tuple[int, ...] | None = None) -> Array:
        """A fresh C-contiguous copy of ``x`` (viewed as ``shape``, same size): one buffer copy."""
        out = Array._output(self.device, x.shape if shape is None else tuple(shape), x.dtype)
        if x.size:
            out._buf.copy_from(x._buf, x.size * self.layout(x.dtype).itemsize)
        return out

    @_locked
    def map_strided(self, row: OpDef | None, args: Sequence[Strided], shape: Sequence[int],
                    dtype: DType, out: Strided, name: str = "") -> None:
        """``out[idx] = row(args[k][idx], ...)`` in ``dtype`` over strided windows (one kernel;
        ``row`` None copies ``args[0]``)."""
        if prod(list(shape)) == 0:
            return
        T = _k.compute_type(dtype)
        expr = "x" if row is None else _row_expr(row, dtype)
        if expr is None:
            raise TypeError(f"{row.name if row else 'copy'} is not defined for {dtype.name} data")
        ops = [_k.buf(a.array._buf, a.array.dtype, T, a.offset, a.strides) for a in args]
        _k.run(self.device, expr, T, out.array._buf, out.array.dtype, ops, list(shape),
               out_offset=out.offset, out_strides=list(out.strides), store="strided",
               name=name or (row.name if row else "copy"))

    @_locked
    def take(self, x: Array, shape: Sequence[int], offset: int, strides: Sequence[int], index: Array,
             index_strides: Sequence[int]) -> Array:
        """New ``out[idx] = x.flat[offset + sum(idx * strides) + index.flat[sum(idx * index_strides)]]``
        (``index`` int32): one indexed gather."""
        out = Array._empty(x.device, tuple(shape), x.dtype)
        if out.size:
            T = _k.compute_type(x.dtype)
            _k.run(x.device, "x", T, out._buf, x.dtype,
                   [_k.Operand("gather", x.dtype, T, x._buf, offset, tuple(strides)),
                    _k.Operand("index", int32, "i32", index._buf, 0, tuple(index_strides))],
                   list(shape), name="take")
        return out

    def permute_dims(self, x: Array, axes: Sequence[int]) -> Array:
        st = contiguous_strides(x.shape)
        return self.gather(x, [x.shape[a] for a in axes], 0, [st[a] for a in axes])

    def broadcast_to(self, x: Array, shape: tuple[int, ...]) -> Array:
        return self.gather(x, shape, 0, broadcast_strides(x.shape, shape))

    @_locked
    def concat(self, arrays: Sequence[Array], axis: int, dtype: DType) -> Array:
        shape = list(arrays[0].shape)
        shape[axis] = sum(a.shape[axis] for a in arrays)
        out = Array._empty(self.device, tuple(shape), dtype)
        ost = contiguous_strides(shape)
        start = 0
        for a in arrays:
            if a.size:
                self.scatter(out, a.shape, start * ost[axis], ost, a, contiguous_strides(a.shape))
            start += a.shape[axis]
        return out

    def flip(self, x: Array, axes: Sequence[int]) -> Array:
        st = list(contiguous_strides(x.shape))
        off = 0
        for a in axes:
            if x.shape[a] > 0:
                off += (x.shape[a] - 1) * st[a]
            st[a] = -st[a]
        return self.gather(x, x.shape, off, st)

    def diagonal(self, x: Array, offset: int) -> Array:
        M, N = x.shape[-2], x.shape[-1]
        st = contiguous_strides(x.shape)
        if offset >= 0:
            length = max(0, min(M, N - offset))
            start = offset * st[-1]
        else:
            length = max(0, min(M + offset, N))
            start = -offset * st[-2]
        return self.gather(x, x.shape[:-2] + (length,), start if length else 0,
                           list(st[:-2]) + [st[-2] + st[-1]])

    # -- indexing --------------------------------------------------------------------------
    @_locked
    def getitem(self, x: Array, key: Any) -> Array:
        """``x[key]``: one strided gather (basic keys) or an offset gather (integer arrays)."""
        p = _keys.plan_key(x, key)
        if not p.adv:
            return self.gather(x, [s for s, _ in p.after], p.offset, [t for _, t in p.after])
        offs, bshape = _dec.adv_offsets(self, x, p)
        shape, xs, os_ = _keys.adv_layout(p, bshape)
        return self.take(x, shape, p.offset, xs, offs, os_)

    @_locked
    def setitem(self, x: Array, key: Any, value: Any) -> None:
        """``x[key] = value`` (value: an Array on x's device or a Python scalar of x's kind)."""
        v = value
        if (isinstance(key, Array) and key.dtype.kind == "b" and not isinstance(v, Array)
                and key.shape == x.shape[: key.ndim]):
            _dec.masked_fill(self, x, key, v)
            return
        p = _keys.plan_key(x, key)
        if not p.adv:
            shape = [s for s, _ in p.after]
            if isinstance(v, Array):
                _keys.check_value_shape(v, shape, key, x)
            self.scatter(x, shape, p.offset, [t for _, t in p.after], v)
            return
        offs, bshape = _dec.adv_offsets(self, x, p)
        shape, xs, os_ = _keys.adv_layout(p, bshape)
        if isinstance(v, Array):
            _keys.check_value_shape(v, shape, key, x)  # also when nothing is selected (NumPy)
        if not prod(shape):
            return
        if isinstance(v, Array):
            expr, T, conv = _k.cast_expr(v.dtype, x.dtype)
            src = _k.buf(v._buf, v.dtype, conv, 0, broadcast_strides(v.shape, shape))
        else:
            expr, T, conv = _k.cast_expr(x.dtype, x.dtype)
            src = _k.scalar(v, _k.scalar_t32(x.dtype), conv)
        _k.run(x.device, expr, T, x._buf, x.dtype,
               [src, _k.Operand("index", int32, "i32", offs._buf, 0, tuple(os_))],
               shape, out_offset=p.offset, out_strides=xs, store="index", name="scatter")

    # -- reductions ------------------------------------------------------------------------
    def _layout3(self, x: Array, axes: tuple[int, ...]) -> tuple[Array, int, int, int]:
        """(array, outer, n, inner) viewing x as (outer, n, inner) with ``axes`` as n."""
        kept = tuple(d for j, d in enumerate(x.shape) if j not in axes)
        if not axes:
            return x, prod(kept), 1, 1
        if list(axes) == list(range(axes[0], axes[-1] + 1)):
            outer = prod(x.shape[: axes[0]])
            n = prod(x.shape[axes[0]: axes[-1] + 1])
            inner = prod(x.shape[axes[-1] + 1:])
            return x, outer, n, inner
        order = [j for j in range(x.ndim) if j not in axes] + list(axes)
        return self.permute_dims(x, order), prod(kept), prod([x.shape[a] for a in axes]), 1

    @_locked
    def reduce(self, x: Array, axes: tuple[int, ...], shape: tuple[int, ...], op: str,
               dtype: DType) -> Array:
        """sum / prod (accumulating in ``dtype``), min / max, any / all over ``axes``."""
        r = _hp.run(self.device, op, (x.dtype, dtype), x, axes, shape, op, dtype, method="reduce")
        if r is not None:
            return r
        if op == "sum" and dtype in MULTI_LANE and dtype.kind in "iu" and x.dtype.kind in "biu":
            # integers summed in 64 bits by one kernel family (reduce64.wgsl), not the tree
            xx, outer, n, inner = self._layout3(x, axes)
            buf = _gk.sum64_axis(x.device, _fr.operand(xx, "reduce64"), xx.dtype, outer, n, inner)
            return Array._new(buf, shape, dtype, x.device)
        if op in ("any", "all") and x.dtype in MULTI_LANE:
            x = self.astype(x, bool_)  # truth values (NaN is truthy, -0.0 is not)
        if op in _TREE_OPS and (dtype in MULTI_LANE or x.dtype in MULTI_LANE):
            src = x if x.dtype is dtype else self.astype(x, dtype)
            xx, outer, n, inner = self._layout3(src, axes)
            if op in ("min", "max") and outer * inner == 0:
                return Array._empty(x.device, shape, dtype)
            return reshape(_dec.tree(self, xx, outer, n, inner, _TREE_OPS[op], dtype), shape)
        if op in ("sum", "prod"):
            xx, outer, n, inner = self._layout3(x, axes)
            wide = _NARROW_WIDE.get(dtype, dtype)
            buf = _gk.reduce_axis(x.device, _fr.operand(xx, "reduce"), xx.dtype, outer, n, inner, op, out_dt=wide)
            r = Array._new(buf, shape, wide, x.device)
            return r if wide is dtype else self.astype(r, dtype)
        src = x
        if op in ("any", "all") and x.dtype.kind == "f":
            src = _dec.ew(self, "not_equal", x, 0.0)  # NaN is truthy
        xx, outer, n, inner = self._layout3(src, axes)
        if op in ("min", "max") and outer * inner == 0:
            return Array._empty(x.device, shape, dtype)
        buf = _gk.reduce_axis(x.device, _fr.operand(xx, "reduce"), xx.dtype, outer, n, inner, op)
        return Array._new(buf, shape, dtype, x.device)

    # -- the two kernels of the multi-lane composites (primitives.WideKernels) ------------
    @_locked
    def arg_candidates(self, x: Array, ext: Array, outer: int, n: int, inner: int, op: str) -> Array:
        """int32 (outer, n, inner): each position's index along n where ``x`` equals the
        extreme ``ext`` (outer, inner) (NaN matching NaN), else 2**31 - 1 (one kernel)."""
        dev, dt = self.device, x.dtype
        pfx = MULTI_LANE[dt].prefix
        eq = f"{pfx}equal(x, y)"
        if dt.kind in "fc":
            eq = f"({eq} || ({pfx}isnan(x) && {pfx}isnan(y)))"
        T = _k.compute_type(dt)
        cand = Array._empty(dev, (outer, n, inner), int32)
        _k.run(dev, f"select(2147483647i, i32((i / p.prm.x) % p.prm.y), {eq})", T, cand._buf, int32,
               [_k.buf(x._buf, dt, T, 0, [n * inner, inner, 1]),
                _k.buf(ext._buf, dt, T, 0, [inner, 0, 1])],
               [outer, n, inner], prm=(inner, n, 0, 0), name=f"{op}_candidates")
        return cand

    @_locked
    def sort_pairs(self, keys: Array, rows: int, n: int, P: int, descending: bool) -> Array:
        """Stable bitonic sort of the rows of ``keys`` (rows, P) in place
        (``gpu_kernels.sort_wide``); returns the uint32 (rows, P) source indices."""
        dev = self.device
        idx = Array._empty(dev, (rows, P), uint32)
        _k.run(dev, "i % p.prm.x", "u32", idx._buf, uint32, [], [rows * P], prm=(P, 0, 0, 0),
               name="sort_index")
        _gk.sort_wide(dev, keys._buf, idx._buf, keys.dtype, rows, n, P, descending)
        return idx

    @_locked
    def mean(self, x: Array, axes: tuple[int, ...], shape: tuple[int, ...], dtype: DType) -> Array:
        r = _hp.run(self.device, "mean", (x.dtype, dtype), x, axes, shape, dtype)
        if r is not None:
            return r
        if dtype in MULTI_LANE or x.dtype in MULTI_LANE:  # the tree's sum / n
            src = x if x.dtype is dtype else self.astype(x, dtype)
            xx, outer, n, inner = self._layout3(src, axes)
            return _dec.mean_wide(self, xx, outer, n, inner, shape, dtype)
        xx, outer, n, inner = self._layout3(x, axes)
        buf = _gk.mean_axis(x.device, _fr.operand(xx, "reduce"), xx.dtype, outer, n, inner, out_dt=dtype)
        return Array._new(buf, shape, dtype, x.device)

    @_locked
    def var(self, x: Array, axes: tuple[int, ...], shape: tuple[int, ...], correction: float,
            dtype: DType) -> Array:
        r = _hp.run(self.device, "var", (x.dtype, dtype), x, axes, shape, correction, dtype)
        if r is not None:
            return r
        if dtype in MULTI_LANE or x.dtype in MULTI_LANE:  # NumPy's two passes, as trees
            src = x if x.dtype is dtype else self.astype(x, dtype)
            xx, outer, n, inner = self._layout3(src, axes)
            return _dec.var_wide(self, xx, outer, n, inner, shape, correction, dtype)
        xx, outer, n, inner = self._layout3(x, axes)
        buf = _gk.var_axis(x.device, _fr.operand(xx, "reduce"), xx.dtype, outer, n, inner, correction=float(correction),
                           out_dt=dtype)
        return Array._new(buf, shape, dtype, x.device)

    @_locked
    def argreduce(self, x: Array, axis: int | None, shape: tuple[int, ...], op: str,
                  dtype: DType) -> Array:
        """argmin / argmax along ``axis`` (of the flattened array when None)."""
        r = _hp.run(self.device, op, (x.dtype,), x, axis, shape, op, dtype, method="argreduce")
        if r is not None:
            return r
        if x.dtype in MULTI_LANE:
            return _dec.arg_wide(self, x, axis, shape, op, dtype)
        idt = int32 if dtype in MULTI_LANE else dtype  # the kernel writes int32 indices
        if axis is None:
            buf = _gk.reduce_axis(x.device, _fr.operand(x, "argreduce"), x.dtype, 1, x.size, 1, op)
            r = Array._new(buf, shape, idt, x.device)
            return r if idt is dtype else self.astype(r, dtype)
        outer, n, inner = prod(x.shape[:axis]), x.shape[axis], prod(x.shape[axis + 1:])
        if outer * inner == 0:
            return Array._empty(x.device, shape, dtype)
        buf = _gk.reduce_axis(x.device, _fr.operand(x, "argreduce"), x.dtype, outer, n, inner, op)
        r = Array._new(buf, shape, idt, x.device)
        return r if idt is dtype else self.astype(r, dtype)

    @_locked
    def cumulative_sum(self, x: Array, axis: int, include_initial: bool, dtype: DType) -> Array:
        r = _hp.run(self.device, "cumulative_sum", (x.dtype, dtype), x, axis, include_initial, dtype)
        if r is not None:
            return r
        return self._cumulative(x, axis, include_initial, dtype, "sum")

    @_locked
    def cumulative_prod(self, x: Array, axis: int, include_initial: bool, dtype: DType) -> Array:
        r = _hp.run(self.device, "cumulative_prod", (x.dtype, dtype), x, axis, include_initial,
                    dtype)
        if r is not None:
            return r
        return self._cumulative(x, axis, include_initial, dtype, "prod")

    def _cumulative(self, x: Array, axis: int, include_initial: bool, dtype: DType,
                    op: str) -> Array:
        """The scan family: scan.wgsl (sum / product) for 32-bit data, the elementwise
        Hillis-Steele scan (:meth:`_scan`) for the multi-lane dtypes and complex products."""
        if dtype.kind == "c" and op == "sum":  # per component: the real scan of both parts
            src = x if x.dtype is dtype else self.astype(x, dtype)
            r = self._cumulative(_dec.parts(src), axis, include_initial, _dec.part_dtype(dtype), op)
            return Array._new(r._buf, r.shape[:-1], dtype, self.device)
        shape = list(x.shape)
        shape[axis] += int(bool(include_initial))
        outer, n, inner = prod(x.shape[:axis]), x.shape[axis], prod(x.shape[axis + 1:])
        if dtype in MULTI_LANE or x.dtype in MULTI_LANE:
            src = x if x.dtype is dtype else self.astype(x, dtype)
            r = _dec.scan(self, src, outer, n, inner, bool(include_initial), dtype,
                          "add" if op == "sum" else "multiply")
            return reshape(r, tuple(shape))
        wide = _NARROW_WIDE.get(dtype, dtype)
        buf = _gk.cumsum_axis(x.device, _fr.operand(x, "scan"), x.dtype, outer, n, inner,
                              include_initial=bool(include_initial), out_dt=wide, op=op)
        r = Array._new(buf, tuple(shape), wide, x.device)
        return r if wide is dtype else self.astype(r, dtype)

    @_locked
    def sort(self, x: Array, axis: int, descending: bool, stable: bool, indices: bool,
             dtype: DType) -> Array:
        """Sorted values (``dtype`` = x's) or sorting indices (``dtype`` = the index dtype)."""
        r = _hp.run(self.device, "argsort" if indices else "sort", (x.dtype,), x, axis, descending,
                    stable, indices, dtype, method="sort")
        if r is not None:
            return r
        last = axis == x.ndim - 1
        end = x.ndim - 1
        xx = x if last else moveaxis(x, axis, end)
        outer = prod(xx.shape[:-1])
        if x.dtype in MULTI_LANE:
            r = _dec.sort_wide(self, xx, outer, x.shape[axis], bool(descending), indices, dtype)
            return r if last else moveaxis(r, end, axis)
        buf = _gk.sort_axis(x.device, xx._buf, xx.dtype, outer, x.shape[axis], descending=bool(descending),
                            stable=bool(stable), return_indices=indices)
        idt = int32 if indices and dtype in MULTI_LANE else dtype  # the kernel writes int32 indices
        r = Array._new(buf, xx.shape, idt, x.device)
        if idt is not dtype:
            r = self.astype(r, dtype)
        return r if last else moveaxis(r, end, axis)

    @_locked
    def searchsorted(self, x1: Array, x2: Array, right: bool, dtype: DType) -> Array:
        """One binary-search thread per value (ops/search.wgsl), u32 indices cast to ``dtype``."""
        if x1.size == 0 or x2.size == 0:
            return self.fill(Array._empty(self.device, x2.shape, dtype), 0)
        buf = _gk.searchsorted(self.device, x1._buf, x2._buf, x1.dtype, x1.size, x2.size, right)
        r = Array._new(buf, x2.shape, int32, self.device)
        return r if dtype is int32 else self.astype(r, dtype)

    # -- linalg / nn -------------------------------------------------------------------------
    @_locked
    def matmul(self, x1: Array, x2: Array, dtype: DType) -> Array:
        """NumPy's matmul (1-D operands promoted, batch dims broadcast) in ``dtype``."""
        r = _hp.run(self.device, "matmul", (dtype, x1.dtype, x2.dtype), x1, x2, dtype)
        if r is not None:
            return r
        dev, dt = self.device, dtype
        a_shape = (1,) + x1.shape if x1.ndim == 1 else x1.shape
        b_shape = x2.shape + (1,) if x2.ndim == 1 else x2.shape
        M, K, N = a_shape[-2], a_shape[-1], b_shape[-1]
        batch_shape = broadcast_shapes(a_shape[:-2], b_shape[:-2])
        final = list(batch_shape + (M, N))
        if x1.ndim == 1:
            final.pop(-2)
        if x2.ndim == 1:
            final.pop(-1)
        if dt.kind == "c":
            return _dec.matmul_complex(self, x1, x2, dt, a_shape, b_shape, tuple(final))
        a = x1 if x1.dtype is dt else self.astype(x1, dt)
        b = x2 if x2.dtype is dt else self.astype(x2, dt)
        a = reshape(a, a_shape)
        b = reshape(b, b_shape)
        batch = prod(batch_shape)

        def batched(x: Array, shape: tuple[int, ...]) -> tuple[Array, int]:
            if prod(shape[:-2]) == 1:
                return x, 0
            if shape[:-2] != batch_shape:
                x = self.broadcast_to(x, batch_shape + shape[-2:])
            return x, shape[-2] * shape[-1]

        a, sa = batched(a, a_shape)
        b, sb = batched(b, b_shape)
        if dt in MULTI_LANE:
            buf = _gk.matmul_wide(dev, a._buf, b._buf, dt, batch, M, K, N, sa, sb)
            return Array._new(buf, tuple(final), dt, dev)
        lazy = _fm.defer(self, a, b, dt, batch, M, K, N, sa, sb, tuple(final))
        if lazy is not None:  # (fusion: computed when needed, with its elementwise consumer)
            return lazy
        buf = _gk.matmul(dev, a._buf, b._buf, dt, batch, M, K, N, sa, sb)
        if dt in _NARROW_WIDE:  # the kernel wraps in 32 bits; wrap to the narrow width
            return self.astype(Array._new(buf, tuple(final), _NARROW_WIDE[dt], dev), dt)
        return Array._new(buf, tuple(final), dt, dev)

    @_locked
    def softmax(self, x: Array, axis: int) -> Array:
        r = _hp.run(self.device, "softmax", (x.dtype,), x, axis)
        if r is not None:
            return r
        if x.dtype in MULTI_LANE:
            return _dec.softmax_wide(self, x, axis)
        end = x.ndim - 1
        xx = x if axis == end else moveaxis(x, axis, end)
        buf = _gk.softmax_rows(x.device, _fr.operand(xx, "softmax"), xx.dtype, prod(xx.shape[:-1]), xx.shape[-1])
        r = Array._new(buf, xx.shape, x.dtype, x.device)
        return r if axis == end else moveaxis(r, end, axis)

    @_locked
    def logsumexp(self, x: Array, axis: int, keepdims: bool) -> Array:
        r = _hp.run(self.device, "logsumexp", (x.dtype,), x, axis, keepdims)
        if r is not None:
            return r
        if x.dtype in MULTI_LANE:
            return _dec.logsumexp_wide(self, x, axis, keepdims)
        end = x.ndim - 1
        xx = x if axis == end else moveaxis(x, axis, end)
        buf = _gk.logsumexp_rows(x.device, _fr.operand(xx, "softmax"), xx.dtype, prod(xx.shape[:-1]), xx.shape[-1])
        shape = x.shape[:axis] + ((1,) if keepdims else ()) + x.shape[axis + 1:]
        return reshape(Array._new(buf, xx.shape[:-1], x.dtype, x.device), shape)
