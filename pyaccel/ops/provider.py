"""The op-provider contract: what the namespace functions ask of a device.

Every :class:`~pyaccel.Device` has ``device.ops``, made once by its backend impl's
``make_ops(device)``: :class:`pyaccel.runtime.numpy_ops.NumpyOps` on ``cpu``, and
:class:`pyaccel.ops.wgsl_provider.WgslOps` on every WebGPU-shaped device. The namespace
modules (creation, elementwise, manipulation, indexing, reductions, linalg, nn, array)
validate arguments, promote dtypes, broadcast and compute result shapes once, then call
one method here; a provider only executes. Arguments arrive validated: axes normalised
and sorted, dtypes supported by the device, shapes consistent.

A new backend either reuses one of the two providers (a WebGPU-shaped impl reuses
``WgslOps``) or implements this protocol. ``tests/unit/test_op_provider.py`` checks that
both providers implement every method with the same signature.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from ..array import Array
    from ..device import Device
    from ..dtypes import DType, StorageLayout
    from .table import OpDef


class LinalgProvider(Protocol):
    """The ``linalg`` primitives (components ``runtime/numpy_linalg.NumpyLinalg`` and
    ``ops/linalg_wgsl.WgslLinalg``, held by the providers as ``ops.linalg``). Inputs arrive as stacks (..., m, n) of a floating dtype
    the device holds; failures come back as per-matrix bool flags (the namespace raises
    ``pyaccel.linalg.LinAlgError`` naming the batch index), never as exceptions."""

    def linalg_cholesky(self, x: Array) -> tuple[Array, Array]:
        """(lower factors, not-positive-definite flag per matrix)."""
    def linalg_solve(self, a: Array, b: Array) -> tuple[Array, Array]:
        """(a^-1 b for (..., n, n) and (..., n, k) stacks broadcast together, singular flag per matrix)."""
    def linalg_det(self, x: Array) -> Array: ...
    def linalg_slogdet(self, x: Array, real_dtype: DType) -> tuple[Array, Array]:
        """(sign in x's dtype, log|det| in ``real_dtype``)."""
    def linalg_qr(self, x: Array, mode: str) -> tuple[Array, Array]:
        """(Q, R), ``mode`` 'reduced' or 'complete'."""
    def linalg_eigh(self, x: Array, real_dtype: DType) -> tuple[Array, Array]:
        """(eigenvalues ascending, eigenvectors as columns) of symmetric / Hermitian stacks."""
    def linalg_svd(self, x: Array, full_matrices: bool, compute_uv: bool,
                   real_dtype: DType) -> tuple[Array | None, Array, Array | None]:
        """(U, S descending, Vh); U and Vh are None unless ``compute_uv``."""


class FFTProvider(Protocol):
    """The ``fft`` primitives (components ``runtime/numpy_fft.NumpyFFT`` and
    ``ops/fft_wgsl.WgslFFT``, held by the providers as ``ops.fft``). ``axes`` are normalised, ``s`` the transform length per axis
    (input padded with zeros or trimmed to it; for ``fft_c2r`` the output length of the last
    axis); ``norm`` is 'backward', 'ortho' or 'forward'. Inputs: complex for c2c and c2r,
    float32 / float64 for r2c; the result has the matching precision."""

    def fft_c2c(self, x: Array, s: tuple[int, ...], axes: tuple[int, ...], forward: bool,
                norm: str) -> Array:
        """Complex-to-complex transform over ``axes`` (lengths ``s``): fftn / ifftn."""
    def fft_r2c(self, x: Array, s: tuple[int, ...], axes: tuple[int, ...], forward: bool,
                norm: str) -> Array:
        """Real-to-complex transform, the last axis halved to ``s[-1] // 2 + 1``: rfftn
        (``forward``) or the inverse direction with the inverse norm (ihfft)."""
    def fft_c2r(self, x: Array, s: tuple[int, ...], axes: tuple[int, ...], forward: bool,
                norm: str) -> Array:
        """Complex (Hermitian half spectrum on the last axis) to real of length ``s[-1]``:
        irfftn (not ``forward``) or the forward direction with the forward norm (hfft)."""


@runtime_checkable
class OpProvider(LinalgProvider, FFTProvider, Protocol):
    """The ops a device executes (see the module docstring)."""

    device: Device

    # -- storage and host transfers
    def layout(self, dtype: DType) -> StorageLayout:
        """How ``dtype`` is stored in this device's buffers (from the dtype table)."""
    def output(self, shape: tuple[int, ...], dtype: DType, nbytes: int = -1) -> Array:
        """A new array that the op recorded next writes in full (an op's result; ``nbytes``:
        its storage size when the caller knows it). Providers call it through
        ``Array._output`` (one hook for every op result)."""
    def to_numpy(self, x: Array) -> Any:
        """A NumPy copy of ``x`` (waits for the device)."""
    async def to_numpy_async(self, x: Array) -> Any:
        """Async twin of :meth:`to_numpy`."""
    def host_view(self, x: Array) -> Any:
        """A NumPy view sharing ``x``'s memory, or None where the memory is not host memory."""
    def dlpack_device(self) -> tuple[int, int]:
        """The DLPack ``(device type, id)`` of this device."""

    # -- elementwise (ops/table.py rows)
    def elementwise(self, row: OpDef, args: Sequence[Any], shape: tuple[int, ...], compute_dtype: DType,
                    out_dtype: DType) -> tuple[Array, Callable[[Sequence[Any]], Array] | None]:
        """``row`` over arrays / Python scalars broadcast to ``shape``; returns the result and
        an optional memo that repeats the op for arguments of the same signature."""
    def clip(self, x: Array, lo: Any, hi: Any) -> Array:
        """``x`` clamped to [lo, hi] (scalars or arrays of x's dtype)."""

    # -- creation
    def fill(self, out: Array, value: Any) -> Array:
        """Fill ``out`` with a Python scalar of its dtype's kind; returns ``out``."""
    def arange(self, start: Any, stop: Any, step: Any, n: int, dtype: DType) -> Array: ...
    def linspace(self, start: Any, stop: Any, num: int, endpoint: bool, dtype: DType,
                 float_dtype: DType) -> Array: ...
    def eye(self, n_rows: int, n_cols: int, k: int, dtype: DType) -> Array: ...
    def tri(self, x: Array, k: int, upper: bool) -> Array:
        """``triu`` (upper) or ``tril`` of the last two axes."""

    # -- manipulation (each returns a new C-contiguous array)
    def astype(self, x: Array, dtype: DType) -> Array: ...
    def permute_dims(self, x: Array, axes: Sequence[int]) -> Array: ...
    def broadcast_to(self, x: Array, shape: tuple[int, ...]) -> Array: ...
    def concat(self, arrays: Sequence[Array], axis: int, dtype: DType) -> Array: ...
    def flip(self, x: Array, axes: Sequence[int]) -> Array: ...
    def diagonal(self, x: Array, offset: int) -> Array: ...

    # -- the two strided primitives of views (offsets and strides in elements of x / dst,
    # which are C-contiguous; the base buffers of views): gather copies the strided
    # elements into a new C-contiguous array, scatter writes them in place
    def gather(self, x: Array, shape: Sequence[int], offset: int, strides: Sequence[int],
               dtype: DType | None = None) -> Array:
        """New C-contiguous ``out[idx] = x.flat[offset + sum(idx * strides)]`` (cast to dtype)."""
    def scatter(self, dst: Array, shape: Sequence[int], dst_offset: int, dst_strides: Sequence[int],
                src: Array | bool | int | float, src_strides: Sequence[int] | None = None) -> None:
        """``dst.flat[dst_offset + sum(idx * dst_strides)] = src[idx]`` (src broadcast / scalar)."""

    # -- indexing (``key`` as the user wrote it; ``value`` an Array on the device or a scalar)
    def getitem(self, x: Array, key: Any) -> Array: ...
    def setitem(self, x: Array, key: Any, value: Any) -> None: ...

    # -- reductions (``shape``: the result shape, keepdims applied)
    def reduce(self, x: Array, axes: tuple[int, ...], shape: tuple[int, ...], op: str,
               dtype: DType) -> Array:
        """``op`` in sum, prod (accumulating in ``dtype``), min, max, any, all."""
    def mean(self, x: Array, axes: tuple[int, ...], shape: tuple[int, ...], dtype: DType) -> Array: ...
    def var(self, x: Array, axes: tuple[int, ...], shape: tuple[int, ...], correction: float,
            dtype: DType) -> Array: ...
    def argreduce(self, x: Array, axis: int | None, shape: tuple[int, ...], op: str,
                  dtype: DType) -> Array:
        """``op`` in argmin, argmax (flattened when ``axis`` is None); ``dtype``: the index dtype."""
    def cumulative_sum(self, x: Array, axis: int, include_initial: bool, dtype: DType) -> Array: ...
    def cumulative_prod(self, x: Array, axis: int, include_initial: bool, dtype: DType) -> Array:
        """Running product along ``axis`` computed in ``dtype`` (an initial 1 when asked)."""
    def sort(self, x: Array, axis: int, descending: bool, stable: bool, indices: bool,
             dtype: DType) -> Array:
        """Stable sort (values) or argsort (``indices``) along ``axis``."""
    def searchsorted(self, x1: Array, x2: Array, right: bool, dtype: DType) -> Array:
        """Insertion indices (``dtype``, x2's shape) of x2 into the sorted 1-D x1 (same real
        dtype; NaN sorts last); ``right``: side='right'."""

    # -- linalg / nn
    def matmul(self, x1: Array, x2: Array, dtype: DType) -> Array:
        """NumPy matmul (1-D operands, broadcast batch dims) computed in ``dtype``."""
    def softmax(self, x: Array, axis: int) -> Array: ...
    def logsumexp(self, x: Array, axis: int, keepdims: bool) -> Array: ...


_C = TypeVar("_C", bound=type)


def delegate(attr: str, component: type) -> Callable[[_C], _C]:
    """Class decorator: every public method of ``component`` (a family's component class)
    becomes a method of the decorated provider that forwards to ``self.<attr>.<name>``, with
    the component method's signature and docstring. So ``device.ops.linalg_solve(...)``
    works while the family lives in its own object (no mixin), and a method added to the
    component is a provider method at once. A provider that defines one of these names
    itself is an error (its method would silently hide the component's)."""

    def deco(cls: _C) -> _C:
        for name, fn in vars(component).items():
            if name.startswith("_") or not callable(fn):
                continue
            if name in vars(cls):
                raise TypeError(f"{cls.__name__}.{name} would hide {component.__name__}.{name}: "
                                "rename one, or drop the provider's")

            def forward(self: Any, *args: Any, _name: str = name, **kwargs: Any) -> Any:
                return getattr(getattr(self, attr), _name)(*args, **kwargs)

            functools.update_wrapper(forward, fn)
            forward.__qualname__ = f"{cls.__qualname__}.{name}"
            setattr(cls, name, forward)
        return cls

    return deco


def protocol_methods() -> list[str]:
    """Names of the methods of :class:`OpProvider` (for conformance tests)."""
    names: set[str] = set()
    for cls in OpProvider.__mro__:  # the protocol and the family protocols it includes
        if cls is object or cls.__module__ == "typing":
            continue
        names |= {n for n, v in vars(cls).items() if callable(v) and not n.startswith("_")}
    return sorted(names)
