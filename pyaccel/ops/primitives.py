"""The primitive set of the op layer, and the view helpers every layer below the namespace
shares.

:class:`Primitives` is what the composites of :mod:`pyaccel.ops.decompositions` (and the
linalg / fft components) are written against: the kernels a provider really has. A
provider implements the primitives; a composite (a multi-lane reduction tree, wide argmax,
wide sort, a scan by doubling, mean / var / softmax / logsumexp of wide dtypes, complex
matmul, the linalg post-processing) is written once, against this Protocol, and a provider
overrides it only where it has a native version (NumPy has one for every composite).
``tests/unit/test_op_provider.py`` checks that ``WgslOps`` implements every primitive with
its signature.

The seam of step 14 (fusion, ``pyaccel.jit``): every elementwise step of every composite
goes through :meth:`Primitives.elementwise` (one table row over arrays and scalars) or
:meth:`Primitives.map_strided` (a row over strided windows, into a strided window), so a
lazy graph that intercepts ``elementwise`` sees every expression the op layer computes.

Views: an :class:`~pyaccel.Array` is (buffer, offset, shape, strides); the helpers here
(:func:`reshape`, :func:`permute`, :func:`matrix_transpose`, :func:`window`) make views
without a kernel, as the namespace's ``reshape`` / ``permute_dims`` do; a kernel reads a
view through one gather (``Array._buf``), a write into a view is one strided scatter.
This module imports nothing above :mod:`pyaccel.array` (tests/unit/test_import_graph.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

from .. import _host
from .._shapes import contiguous_strides, prod
from ..array import Array

if TYPE_CHECKING:
    from ..device import Device
    from ..dtypes import DType, StorageLayout
    from .table import OpDef


class Strided(NamedTuple):
    """A strided window into the elements of a C-contiguous array ``array``: element
    ``idx`` is ``array.flat[offset + sum(idx * strides)]`` (strides in elements)."""

    array: Array
    offset: int
    strides: tuple[int, ...]


@runtime_checkable
class Primitives(Protocol):
    """The kernels a provider has; composites are written against these (module docstring).
    Arguments arrive validated (as for :class:`~pyaccel.ops.provider.OpProvider`)."""

    device: Device

    def layout(self, dtype: DType) -> StorageLayout:
        """How ``dtype`` is stored in this device's buffers."""
    def output(self, shape: tuple[int, ...], dtype: DType, nbytes: int = -1) -> Array:
        """A new array the op recorded next writes in full."""

    # -- elementwise over an expression (a table row): the fusion seam
    def elementwise(self, row: OpDef, args: Sequence[Any], shape: tuple[int, ...], compute_dtype: DType,
                    out_dtype: DType) -> tuple[Array, Callable[[Sequence[Any]], Array] | None]:
        """``row`` over arrays / Python scalars broadcast to ``shape``."""
    def map_strided(self, row: OpDef | None, args: Sequence[Strided], shape: Sequence[int],
                    dtype: DType, out: Strided, name: str = "") -> None:
        """``out[idx] = row(args[k][idx], ...)`` computed in ``dtype`` (the arrays' dtype), the
        operands and the destination strided windows; ``row`` None copies ``args[0]``
        (``name``: a label for the kernel)."""

    # -- copy / cast / fill
    def copy(self, x: Array, shape: tuple[int, ...] | None = None) -> Array:
        """A fresh C-contiguous copy of ``x`` (viewed as ``shape``, same size)."""
    def astype(self, x: Array, dtype: DType) -> Array: ...
    def fill(self, out: Array, value: Any) -> Array: ...
    def eye(self, n_rows: int, n_cols: int, k: int, dtype: DType) -> Array: ...
    def tri(self, x: Array, k: int, upper: bool) -> Array: ...

    # -- strided data movement: the views' gather and scatter, and an indexed gather
    def gather(self, x: Array, shape: Sequence[int], offset: int, strides: Sequence[int],
               dtype: DType | None = None) -> Array: ...
    def scatter(self, dst: Array, shape: Sequence[int], dst_offset: int, dst_strides: Sequence[int],
                src: Array | bool | int | float, src_strides: Sequence[int] | None = None) -> None: ...
    def take(self, x: Array, shape: Sequence[int], offset: int, strides: Sequence[int], index: Array,
             index_strides: Sequence[int]) -> Array:
        """New ``out[idx] = x.flat[offset + sum(idx * strides) + index.flat[sum(idx * index_strides)]]``
        (``index`` int32)."""
    def broadcast_to(self, x: Array, shape: tuple[int, ...]) -> Array: ...
    def concat(self, arrays: Sequence[Array], axis: int, dtype: DType) -> Array: ...
    def diagonal(self, x: Array, offset: int) -> Array: ...

    # -- reductions, scans, sorting, matmul (the 32-bit kernels; wide dtypes compose)
    def reduce(self, x: Array, axes: tuple[int, ...], shape: tuple[int, ...], op: str,
               dtype: DType) -> Array: ...
    def argreduce(self, x: Array, axis: int | None, shape: tuple[int, ...], op: str,
                  dtype: DType) -> Array: ...
    def sort(self, x: Array, axis: int, descending: bool, stable: bool, indices: bool,
             dtype: DType) -> Array: ...
    def matmul(self, x1: Array, x2: Array, dtype: DType) -> Array: ...


class WideKernels(Protocol):
    """The two kernels only the multi-lane composites need (WGSL; NumPy has the composites
    natively): the argmin / argmax candidates and the bitonic sort of (value, index) pairs."""

    def arg_candidates(self, x: Array, ext: Array, outer: int, n: int, inner: int, op: str) -> Array:
        """int32 (outer, n, inner): each position's index along n where ``x`` equals the
        extreme ``ext`` (outer, inner) (NaN matching NaN), else 2**31 - 1."""
    def sort_pairs(self, keys: Array, rows: int, n: int, P: int, descending: bool) -> Array:
        """Stable bitonic sort of each row of ``keys`` (rows, P) (its first n elements; P a
        power of two) in place; returns the uint32 (rows, P) source indices."""


class PrimitivesWide(Primitives, WideKernels, Protocol):
    """The primitive set of a provider that runs the multi-lane composites."""


# -- views (no kernel) ----------------------------------------------------------------------
def reshape(x: Array, shape: tuple[int, ...]) -> Array:
    """``x`` in a new shape of the same size: the same buffer for a C-contiguous array,
    else (a strided view) a C-contiguous copy first."""
    shape = tuple(shape)
    if x._strides is not None:
        x = x._materialize()
    if shape == x.shape:
        return x
    r = Array._new(x._base, shape, x.dtype, x.device)
    r._committed = x._committed
    return r


def permute(x: Array, axes: Sequence[int]) -> Array:
    """The axes of ``x`` permuted: a view (as ``pyaccel.permute_dims``)."""
    st = x._phys_strides()
    return Array._view(x, x._offset, [x.shape[a] for a in axes], [st[a] for a in axes])


def moveaxis(x: Array, source: int, destination: int) -> Array:
    """Axis ``source`` (normalised) moved to ``destination`` (normalised): a view."""
    order = [a for a in range(x.ndim) if a != source]
    order.insert(destination, source)
    return permute(x, order)


def matrix_transpose(x: Array) -> Array:
    """The last two axes swapped: a view."""
    axes = list(range(x.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return permute(x, axes)


def window(x: Array, offset: int, shape: Sequence[int], strides: Sequence[int]) -> Array:
    """The view ``v[idx] = x.flat[offset + sum(idx * strides)]`` of a C-contiguous ``x``."""
    return Array._view(x, offset, shape, strides)


def strided(x: Array) -> Strided:
    """``x`` (C-contiguous) as a :class:`Strided` window over its own shape."""
    return Strided(x, 0, contiguous_strides(x.shape))


# -- uploads (host data to the device, no namespace call) ------------------------------------
def upload(device: Device, values: Any, dtype: DType, shape: tuple[int, ...] | None = None) -> Array:
    """A new array of ``dtype`` on ``device`` holding ``values``: a NumPy array (converted
    to ``dtype`` as ``astype`` does) or a flat list of Python numbers (with ``shape``;
    default: its length)."""
    np = _host.numpy()
    lay = device.ops.layout(dtype)
    if np is not None and _host.is_numpy_array(values):
        shape = tuple(values.shape) if shape is None else shape
        with np.errstate(all="ignore"):
            host = np.ascontiguousarray(values.astype(np.dtype(dtype.name), copy=False))
            if lay.lanes > 1:  # multi-lane storage is NumPy's little-endian bytes
                st = host.astype(host.dtype.newbyteorder("<"), copy=False)
            else:
                st = host.astype(np.dtype(lay.numpy), copy=False)
        out = Array._empty(device, shape, dtype)
        if st.size:
            out._buf.write(np.ascontiguousarray(st))
        return out
    flat = _host.coerce(list(values), dtype)
    shape = (len(flat),) if shape is None else shape
    out = Array._empty(device, shape, dtype)
    if flat and prod(shape):
        if dtype.kind == "b" and lay.char != "?":
            flat = [1 if v else 0 for v in flat]
        out._buf.write(_host.pack(flat, dtype.char if lay.lanes > 1 else lay.char))
    return out


def primitive_methods(proto: type = PrimitivesWide) -> list[str]:
    """Names of the methods of a primitive Protocol (for conformance tests)."""
    names: set[str] = set()
    for cls in proto.__mro__:
        if cls is object or cls.__module__ == "typing":
            continue
        names |= {n for n, v in vars(cls).items() if callable(v) and not n.startswith("_")}
    return sorted(names)


__all__ = ["Primitives", "PrimitivesWide", "Strided", "WideKernels", "matrix_transpose", "moveaxis",
           "permute", "primitive_methods", "reshape", "strided", "upload", "window"]
