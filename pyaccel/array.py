"""``pyaccel.Array``: an n-dimensional array over one device Buffer.

An Array is (buffer, offset, shape, strides), offset and strides in elements. Most
arrays are C-contiguous at offset 0 (``_strides is None``) and op results always are.
Views (basic indexing, ``reshape`` where memory can be shared, ``permute_dims`` /
``matrix_transpose`` / ``moveaxis`` / ``.mT`` / ``.T``, ``expand_dims``, ``squeeze``)
share their base's Buffer, keep it alive, and write through to it (docs/arrays.md).
Ops read a strided view through one gather into a contiguous temporary
(``Array._buf``); writes into a view are one strided scatter (``_write_view``).

On WebGPU devices ops *record* kernels and return at once; reading values
(``to_numpy()``, ``tolist()``, ``bytes(x)``, ``repr``, ``bool(x)``) is the only point
that waits for the device. Every op runs through the device's op
provider (``device.ops``: NumPy on ``cpu:0``, the WGSL provider on WebGPU devices).

Storage: the provider's :class:`~pyaccel.dtypes.StorageLayout` of the dtype (the dtype
table): on ``cpu:0`` NumPy's layout; on WebGPU devices bool is stored as u32 0/1 and
int8/int16/uint8/uint16 widened to 32 bits; host conversions translate both ways. The
multi-lane dtypes (int64, uint64, float64, complex64, complex128 on WebGPU devices) are
stored as NumPy's own little-endian bytes, so their transfers are raw copies.

Arrays are made by the namespace functions (``pyaccel.asarray``, ``zeros``, ...);
``Array(...)`` raises TypeError, and internal code uses :meth:`Array._new`.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Iterator
from typing import Any

from . import _host
from ._dispatch import OPS as _OPS
from ._shapes import contiguous_strides, prod
from .capabilities import Capability
from .device import Buffer, Device
from .dtypes import ALL_DTYPES, DType, as_dtype, bool_
from .errors import BufferFreedError
from .promotion import (
    check_default_float_fits,
    check_dtype,
    default_complex,
    default_float,
    default_int,
    int_range,
    supports,
)
from .registry import as_device

__all__ = ["Array", "asarray"]


class Array:
    """An n-dimensional array on a pyaccel device (see the module docstring)."""

    # _committed: placed on its device explicitly (device=, to_device) or computed from such
    # an array; uncommitted arrays follow committed ones to their device (pyaccel/placement.py)
    # _base: the Buffer; _strides None: C-contiguous from element 0, else (offset, strides)
    # in elements of the dtype's storage layout place the elements in _base (a view)
    # _b: the Buffer (None while the array is lazy); _lazy: the fusion node of a lazy array
    # (pyaccel/ops/fusion.py), None once materialised; ``_base`` materialises first
    __slots__ = ("_b", "_lazy", "_offset", "_strides", "_shape", "_dtype", "_device", "_committed",
                 "__weakref__")
    __array_priority__ = 100.0
    __hash__ = None  # type: ignore[assignment]  # __eq__ is elementwise

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(
            "pyaccel.Array cannot be constructed directly; create arrays with pyaccel.asarray(obj), "
            "pyaccel.zeros / ones / empty / full / arange / linspace (or any pyaccel function)"
        )

    # -- construction helpers ----------------------------------------------------
    @classmethod
    def _new(cls, buf: Buffer, shape: tuple[int, ...], dtype: DType, device: Device) -> Array:
        """The private constructor: an Array over ``buf`` (nothing is checked or copied)."""
        self = object.__new__(cls)
        self._b = buf
        self._lazy = None
        self._offset = 0
        self._strides = None
        self._shape = shape
        self._dtype = dtype
        self._device = device
        self._committed = True
        return self

    @classmethod
    def _view(cls, x: Array, offset: int, shape: Any, strides: Any) -> Array:
        """A view of ``x``'s buffer: element ``idx`` at ``offset + sum(idx * strides)``
        (elements of the storage layout). C-contiguous views at offset 0 (and empty ones)
        are plain arrays over the same buffer."""
        self = object.__new__(cls)
        self._b = x._base
        self._lazy = None
        shape = tuple(int(d) for d in shape)
        strides = tuple(int(t) for t in strides)
        if prod(shape) == 0 or (offset == 0 and _c_contiguous(shape, strides)):
            self._offset, self._strides = 0, None
        else:
            self._offset, self._strides = int(offset), strides
        self._shape = shape
        self._dtype = x._dtype
        self._device = x._device
        self._committed = x._committed
        return self

    @property
    def _base(self) -> Buffer:
        """The Buffer (a lazy array of fusion is computed into one first)."""
        if self._lazy is not None:  # (only pyaccel.ops.fusion makes lazy arrays: it is loaded)
            sys.modules["pyaccel.ops.fusion"].materialize(self)
        return self._b

    @_base.setter
    def _base(self, buf: Buffer) -> None:
        self._b = buf
        self._lazy = None

    def _phys_strides(self) -> tuple[int, ...]:
        """The element strides into ``_base`` (C-contiguous ones for a plain array)."""
        return self._strides if self._strides is not None else contiguous_strides(self._shape)

    @property
    def _buf(self) -> Buffer:
        """A Buffer holding the elements C-contiguously from element 0: the array's own for a
        plain array; for a strided view a new one (one gather, recorded in stream order), so
        every kernel reads views correctly. Writes go through ``_write_view``, never here."""
        if self._strides is None:
            return self._b if self._lazy is None else self._base
        return self._materialize()._base

    def _materialize(self) -> Array:
        """A new C-contiguous copy of a view (the device provider's strided gather)."""
        ops = self._device.ops
        n = self._base.nbytes // ops.layout(self._dtype).itemsize
        flat = Array._new(self._base, (n,), self._dtype, self._device)
        return ops.gather(flat, self._shape, self._offset, self._phys_strides())

    def _uncommit(self) -> Array:
        """Mark the array uncommitted (made without ``device=``; see pyaccel/placement.py)."""
        self._committed = False
        return self

    @classmethod
    def _empty(cls, device: Device, shape: tuple[int, ...], dtype: DType) -> Array:
        return cls._new(device.malloc(prod(shape) * device.ops.layout(dtype).itemsize), tuple(shape),
                        dtype, device)

    @classmethod
    def _output(cls, device: Device, shape: tuple[int, ...], dtype: DType, nbytes: int = -1) -> Array:
        """A new array that the op recorded next writes in full (an op's result; see
        ``OpProvider.output``). The elementwise, fused, creation, gather / scatter and linalg
        results are allocated here (the tests' ``poisoned`` fixture patches it); the reduction,
        scan, sort and matmul kernels of ``ops/gpu_kernels.py`` allocate theirs with
        ``Device.malloc``. ``nbytes``: the storage size, if known."""
        return device.ops.output(shape, dtype, nbytes)

    def __pyaccel_buffer__(self) -> Buffer:
        """The device Buffer (so ``pyaccel.Kernel`` accepts arrays). A strided view gives a
        contiguous copy of its elements (a kernel's writes into it do not reach the base:
        pass a plain array, e.g. ``pyaccel.asarray(view, copy=True)``, as an output)."""
        _before_write(self)  # a kernel may write it: lazy arrays reading it are computed first
        return self._buf

    # -- attributes ----------------------------------------------------------------
    @property
    def dtype(self) -> DType:
        return self._dtype

    @property
    def device(self) -> Device:
        return self._device

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        return prod(self._shape)

    @property
    def nbytes(self) -> int:
        """Bytes of the data in the host layout (``size * dtype.itemsize``)."""
        return self.size * self._dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def T(self) -> Array:  # noqa: N802 - Array API name
        if self.ndim != 2:
            raise ValueError(f"x.T needs a 2-D array, got {self.ndim}-D shape {self._shape}; use "
                             "x.mT (matrix transpose of the last two axes) or permute_dims")
        return _OPS["permute_dims"](self, (1, 0))

    @property
    def mT(self) -> Array:  # noqa: N802 - Array API name
        return _OPS["matrix_transpose"](self)

    # -- device / namespace ------------------------------------------------------
    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
        """The pyaccel namespace: the 2024.12 standard (earlier versions are subsets); with
        ``api_version="2025.12"`` a namespace that follows the 2025.12 draft where it differs
        (tuples from ``broadcast_arrays`` / ``meshgrid`` / ``devices()``)."""
        if api_version == "2025.12":
            from ._api2025 import namespace

            return namespace()
        if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
            raise ValueError(f"unsupported Array API version {api_version!r}; pyaccel implements "
                             "2024.12 (and 2021.12 to 2023.12, its subsets) and the 2025.12 draft")
        return sys.modules[__package__]  # the pyaccel package (imported before any submodule)

    def to_device(self, device: Any, /, *, stream: Any = None) -> Array:
        """A copy on another device (the same array when ``device`` is this device)."""
        if stream is not None:
            raise ValueError("to_device(stream=...): pyaccel devices have one queue; pass stream=None")
        dev = as_device(device)
        if dev is self._device:
            self._committed = True  # an explicit placement commits the array to its device
            return self
        return asarray(self, device=dev)

    def astype(self, dtype: Any, /, *, copy: bool = True) -> Array:
        return _OPS["astype"](self, dtype, copy=copy)

    # -- host transfers ------------------------------------------------------------
    def _layout(self) -> Any:
        return self._device.ops.layout(self._dtype)

    def _storage_bytes(self) -> bytes:
        it = self._layout().itemsize
        n = self.size * it
        if not n:
            return b""
        if self._strides is not None and _c_contiguous(self._shape, self._strides):
            return self._base.read(n, self._offset * it)  # a contiguous run: no gather
        return self._buf.read(n)

    async def _storage_bytes_async(self) -> bytes:
        it = self._layout().itemsize
        n = self.size * it
        if not n:
            return b""
        if self._strides is not None and _c_contiguous(self._shape, self._strides):
            return await self._base.read_async(n, self._offset * it)
        return await self._buf.read_async(n)

    def _host_from_storage(self, data: bytes) -> Any:
        """A NumPy array of the dtype from the storage bytes (any provider's layout)."""
        np = _host.numpy()
        if np is None:
            raise _no_numpy("to_numpy()")
        want = np.dtype(self._dtype.name)
        lay = self._layout()
        if lay.lanes > 1:  # multi-lane storage: NumPy's little-endian bytes
            return np.frombuffer(data, dtype=want.newbyteorder("<")).astype(want).reshape(self._shape)
        st = np.frombuffer(data, dtype=np.dtype(lay.numpy))
        a = st.astype(want) if st.dtype != want else st.copy()
        return a.reshape(self._shape)

    def block_until_ready(self) -> Array:
        """Compute this array and wait until the device has written it; returns ``self``
        (JAX's name). A lazy array (fusion, docs/fusion.md) is no recorded work until
        something needs its value, so ``device.synchronize()`` alone does not compute it:
        time GPU work with ``y.block_until_ready()``. No host read."""
        if self._lazy is not None:
            sys.modules["pyaccel.ops.fusion"].materialize(self)
        self._device.synchronize()
        return self

    def to_numpy(self) -> Any:
        """A NumPy copy of the data (waits for the device)."""
        return self._device.ops.to_numpy(self)

    async def to_numpy_async(self) -> Any:
        """Async twin of :meth:`to_numpy` (awaits the readback; needed in browsers without JSPI)."""
        return await self._device.ops.to_numpy_async(self)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> Any:
        view = None if copy else self._device.ops.host_view(self)
        if copy is False and view is None:
            raise ValueError(f"np.asarray(x, copy=False): x is on {self._device.uri}; reading it "
                             "to the host copies (use copy=None)")
        a = self.to_numpy() if view is None else view
        return a if dtype is None else a.astype(dtype, copy=False)

    def _flat_values(self, data: bytes) -> list:
        lay = self._layout()
        # multi-lane storage holds the host bytes: unpack with the dtype's own format
        vals = _host.unpack(data, self._dtype.char if lay.lanes > 1 else lay.char, self.size)
        if self._dtype.kind == "b":
            return [v != 0 for v in vals]
        return vals

    def tolist(self) -> Any:
        """Nested Python lists (a Python scalar for a 0-d array); works without NumPy."""
        np = _host.numpy()
        if np is not None:
            return self.to_numpy().tolist()
        return _host.shape_list(self._flat_values(self._storage_bytes()), self._shape)

    async def tolist_async(self) -> Any:
        np = _host.numpy()
        if np is not None:
            return (await self.to_numpy_async()).tolist()
        return _host.shape_list(self._flat_values(await self._storage_bytes_async()), self._shape)

    def _host_bytes(self, data: bytes) -> bytes:
        dt = self._dtype
        lay = self._layout()
        if lay.numpy == dt.name or (lay.lanes > 1 and sys.byteorder == "little"):
            return data  # stored in the host layout
        np = _host.numpy()
        if np is not None:
            return np.frombuffer(data, dtype=np.dtype(lay.numpy)).astype(np.dtype(dt.name)).tobytes()
        return _host.pack(self._flat_values(data), dt.char)

    def tobytes(self) -> bytes:
        """The data in C order and the host layout of the dtype (bool 1 byte, int8 1 byte, ...)."""
        return self._host_bytes(self._storage_bytes())

    async def tobytes_async(self) -> bytes:
        return self._host_bytes(await self._storage_bytes_async())

    def __bytes__(self) -> bytes:
        return self.tobytes()

    def memoryview(self) -> memoryview:
        """A read-only memoryview of a host copy, typed and shaped like the array."""
        mv = memoryview(self.tobytes())
        fmt = self._dtype.char
        if self.ndim == 0:
            return mv.cast(fmt) if fmt != "e" else mv
        if fmt in ("e", "F", "D"):
            return mv  # memoryview cannot cast to half floats or complex: raw bytes
        return mv.cast(fmt, self._shape) if self.size else mv.cast(fmt)

    def __buffer__(self, flags: int, /) -> memoryview:  # PEP 688 (Python >= 3.12)
        return self.memoryview()

    def item(self) -> Any:
        """The value of a one-element array as a Python scalar."""
        if self.size != 1:
            raise ValueError(f"item(): the array has {self.size} elements (shape {self._shape}); "
                             "only one-element arrays convert to a scalar")
        return self._flat_values(self._storage_bytes())[0]

    # -- DLPack ----------------------------------------------------------------------
    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: bool | None = None) -> Any:
        view = self._device.ops.host_view(self)
        if view is None:
            raise BufferError(
                f"__dlpack__: the array is on {self._device.uri}, whose memory DLPack cannot share; "
                "use x.to_device('cpu') or x.to_numpy() first"
            )
        kw: dict[str, Any] = {}
        if max_version is not None:
            kw["max_version"] = max_version
        if dl_device is not None:
            kw["dl_device"] = dl_device
        if copy is not None:
            kw["copy"] = copy
        return view.__dlpack__(stream=stream, **kw)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._device.ops.dlpack_device()

    # -- Python scalars ------------------------------------------------------------------
    def _scalar(self, what: str) -> Any:
        if self.size != 1:
            raise TypeError(f"{what}: only one-element arrays convert to Python scalars; this array has "
                            f"shape {self._shape}")
        return self.item()

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(
                f"the truth value of an array with {self.size} elements (shape {self._shape}) is "
                "ambiguous; use pyaccel.any(x) or pyaccel.all(x)"
            )
        return bool(self.item())

    def _real_scalar(self, what: str) -> Any:
        if self._dtype.kind == "c":
            raise TypeError(f"{what}: the array is {self._dtype.name}; complex values do not convert to "
                            "real Python numbers (the Array API): use complex(x), or "
                            f"{what[:-3]}(pyaccel.real(x))")
        return self._scalar(what)

    def __int__(self) -> int:
        return int(self._real_scalar("int(x)"))

    def __float__(self) -> float:
        return float(self._real_scalar("float(x)"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex(x)"))

    def __index__(self) -> int:
        if self._dtype.kind not in "iu":
            raise TypeError(f"only integer arrays can be used as an index; this array is {self._dtype.name}")
        if self.ndim != 0:
            raise TypeError(f"only 0-d integer arrays can be used as an index; shape is {self._shape}")
        return int(self.item())

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d array")
        return self._shape[0]

    def __iter__(self) -> Iterator[Array]:
        """Views along axis 0 (``iter()`` of a 0-d array raises TypeError, as NumPy's)."""
        if not self._shape:
            raise TypeError("iteration over a 0-d array")
        return (self[j] for j in range(self._shape[0]))

    # -- repr ------------------------------------------------------------------------------
    def __repr__(self) -> str:
        try:
            body = _format(self)
        except BufferFreedError:
            body = "<freed>"
        return f"Array({body}, dtype={self._dtype.name}, device={self._device.uri!r})"

    def __str__(self) -> str:
        return _format(self)

    def __format__(self, spec: str) -> str:
        """``format(x, spec)``: a 0-d array formats as its Python scalar (``f"{x:.3g}"``), as a
        NumPy scalar / 0-d array does; other arrays take only the empty spec (``str(x)``)."""
        if self.ndim == 0:
            return format(self.item(), spec)
        if spec:
            raise TypeError(f"unsupported format string {spec!r} for a pyaccel array of shape "
                            f"{self._shape}; format its elements (x[i].item()) or a 0-d array")
        return str(self)

    # -- indexing -------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Array:
        return _OPS["getitem"](self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        _before_write(self)
        _OPS["setitem"](self, key, value)

    # -- operators ---------------------------------------------------------------------------
    def _bin(self, name: str, other: Any, reflected: bool = False) -> Any:
        if not _is_operand(other):
            return NotImplemented
        f = _OPS[name]
        return f(other, self) if reflected else f(self, other)

    def _inplace(self, name: str, other: Any) -> Array:
        if _host.is_numpy_array(other) and getattr(other, "ndim", 1) == 0:
            other = other.item()  # NumPy casts an in-place result to x's dtype: a weak scalar
        if not _is_operand(other):
            return NotImplemented
        res = _OPS[name](self, other)
        _assign_inplace(self, res, name)
        return self

    def __add__(self, o: Any) -> Array: return self._bin("add", o)
    def __radd__(self, o: Any) -> Array: return self._bin("add", o, True)
    def __iadd__(self, o: Any) -> Array: return self._inplace("add", o)
    def __sub__(self, o: Any) -> Array: return self._bin("subtract", o)
    def __rsub__(self, o: Any) -> Array: return self._bin("subtract", o, True)
    def __isub__(self, o: Any) -> Array: return self._inplace("subtract", o)
    def __mul__(self, o: Any) -> Array: return self._bin("multiply", o)
    def __rmul__(self, o: Any) -> Array: return self._bin("multiply", o, True)
    def __imul__(self, o: Any) -> Array: return self._inplace("multiply", o)
    def __truediv__(self, o: Any) -> Array: return self._bin("divide", o)
    def __rtruediv__(self, o: Any) -> Array: return self._bin("divide", o, True)
    def __itruediv__(self, o: Any) -> Array: return self._inplace("divide", o)
    def __floordiv__(self, o: Any) -> Array: return self._bin("floor_divide", o)
    def __rfloordiv__(self, o: Any) -> Array: return self._bin("floor_divide", o, True)
    def __ifloordiv__(self, o: Any) -> Array: return self._inplace("floor_divide", o)
    def __mod__(self, o: Any) -> Array: return self._bin("remainder", o)
    def __rmod__(self, o: Any) -> Array: return self._bin("remainder", o, True)
    def __imod__(self, o: Any) -> Array: return self._inplace("remainder", o)
    def __pow__(self, o: Any) -> Array: return self._bin("pow", o)
    def __rpow__(self, o: Any) -> Array: return self._bin("pow", o, True)
    def __ipow__(self, o: Any) -> Array: return self._inplace("pow", o)
    def __and__(self, o: Any) -> Array: return self._bin("bitwise_and", o)
    def __rand__(self, o: Any) -> Array: return self._bin("bitwise_and", o, True)
    def __iand__(self, o: Any) -> Array: return self._inplace("bitwise_and", o)
    def __or__(self, o: Any) -> Array: return self._bin("bitwise_or", o)
    def __ror__(self, o: Any) -> Array: return self._bin("bitwise_or", o, True)
    def __ior__(self, o: Any) -> Array: return self._inplace("bitwise_or", o)
    def __xor__(self, o: Any) -> Array: return self._bin("bitwise_xor", o)
    def __rxor__(self, o: Any) -> Array: return self._bin("bitwise_xor", o, True)
    def __ixor__(self, o: Any) -> Array: return self._inplace("bitwise_xor", o)
    def __lshift__(self, o: Any) -> Array: return self._bin("bitwise_left_shift", o)
    def __rlshift__(self, o: Any) -> Array: return self._bin("bitwise_left_shift", o, True)
    def __ilshift__(self, o: Any) -> Array: return self._inplace("bitwise_left_shift", o)
    def __rshift__(self, o: Any) -> Array: return self._bin("bitwise_right_shift", o)
    def __rrshift__(self, o: Any) -> Array: return self._bin("bitwise_right_shift", o, True)
    def __irshift__(self, o: Any) -> Array: return self._inplace("bitwise_right_shift", o)
    def __lt__(self, o: Any) -> Array: return self._bin("less", o)
    def __le__(self, o: Any) -> Array: return self._bin("less_equal", o)
    def __gt__(self, o: Any) -> Array: return self._bin("greater", o)
    def __ge__(self, o: Any) -> Array: return self._bin("greater_equal", o)
    def __eq__(self, o: Any) -> Array: return self._bin("equal", o)  # type: ignore[override]
    def __ne__(self, o: Any) -> Array: return self._bin("not_equal", o)  # type: ignore[override]
    def __neg__(self) -> Array: return _OPS["negative"](self)
    def __pos__(self) -> Array: return _OPS["positive"](self)
    def __abs__(self) -> Array: return _OPS["abs"](self)
    def __invert__(self) -> Array: return _OPS["bitwise_invert"](self)

    def __matmul__(self, o: Any) -> Array:
        if not isinstance(o, Array):
            return NotImplemented
        return _OPS["matmul"](self, o)

    def __rmatmul__(self, o: Any) -> Array:
        if not isinstance(o, Array):
            return NotImplemented
        return _OPS["matmul"](o, self)

    def __imatmul__(self, o: Any) -> Array:
        if not isinstance(o, Array):
            return NotImplemented
        _assign_inplace(self, _OPS["matmul"](self, o), "matmul")
        return self

    # -- interop: pickling, copying, NumPy's protocols (Dask chunks) -------------------
    # (docs/interop.md; helpers in _pickle.py and _numpy_protocol.py)
    def __reduce_ex__(self, protocol: Any) -> tuple:
        """Pickle as (device URI, dtype, shape, host bytes); see :mod:`pyaccel._pickle` for
        where it is unpickled (the same URI, else the receiving process's current device).
        Reads the data back (waits for the device); protocol 5 sends it out of band."""
        from . import _pickle

        try:
            data: Any = self.tobytes()
        except Exception as exc:  # freed buffer, lost device: say what was being pickled
            raise type(exc)(f"pickling a pyaccel array of shape {self._shape} on "
                            f"{self._device.uri}: {exc}") from exc
        if isinstance(protocol, int) and protocol >= 5:
            import pickle

            data = pickle.PickleBuffer(data)
        return (_pickle.rebuild_array, (self._device.uri, self._dtype.name, self._shape, data))

    def __reduce__(self) -> tuple:
        return self.__reduce_ex__(2)

    def __copy__(self) -> Array:
        """A new array with a copy of the data on the same device (like ``ndarray.__copy__``)."""
        return _OPS["astype"](self, self._dtype, copy=True)

    def __deepcopy__(self, memo: dict) -> Array:
        """A device-side copy (no host round trip), on the same device."""
        return self.__copy__()

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """NEP 13: ``np.exp(x)``, ``np.add.reduce(x, axis=0)`` run on the device (see
        :mod:`pyaccel._numpy_protocol`); NumPy arrays with dimensions are refused."""
        from . import _numpy_protocol

        return _numpy_protocol.array_ufunc(Array, self.__array_namespace__(), ufunc, method,
                                           inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        """NEP 18: ``np.concatenate``, ``np.sum(..., keepdims=)``, ``np.tensordot`` ... on
        pyaccel arrays run the pyaccel function (the table in :mod:`pyaccel._numpy_protocol`)."""
        from . import _numpy_protocol

        return _numpy_protocol.array_function(Array, self.__array_namespace__(), func, types,
                                              args, kwargs, self)

    def __dask_tokenize__(self) -> tuple:
        """Dask's token: device, dtype, shape and a per-buffer id (no readback; see
        docs/interop.md on in-place changes)."""
        from ._numpy_protocol import buffer_token

        return ("pyaccel.Array", self._device.uri, self._dtype.name, self._shape,
                buffer_token(self._base), self._offset, self._strides)

    # NumPy-style methods that Dask calls on its chunks (``chunk.sum(axis=...)``,
    # ``out.squeeze(axis)``): each is the NumPy function, so it dispatches back to pyaccel
    # through __array_function__ and runs on the device. (Not part of the Array API.)
    def sum(self, *args: Any, **kwargs: Any) -> Array: return _np_call("sum", self, args, kwargs)
    def prod(self, *args: Any, **kwargs: Any) -> Array: return _np_call("prod", self, args, kwargs)
    def mean(self, *args: Any, **kwargs: Any) -> Array: return _np_call("mean", self, args, kwargs)
    def max(self, *args: Any, **kwargs: Any) -> Array: return _np_call("max", self, args, kwargs)
    def min(self, *args: Any, **kwargs: Any) -> Array: return _np_call("min", self, args, kwargs)
    def any(self, *args: Any, **kwargs: Any) -> Array: return _np_call("any", self, args, kwargs)
    def all(self, *args: Any, **kwargs: Any) -> Array: return _np_call("all", self, args, kwargs)
    def squeeze(self, *args: Any, **kwargs: Any) -> Array: return _np_call("squeeze", self, args, kwargs)

    def reshape(self, *shape: Any, **kwargs: Any) -> Array:
        return _np_call("reshape", self, (shape[0] if len(shape) == 1 else shape,), kwargs)

    def transpose(self, *axes: Any) -> Array:
        return _np_call("transpose", self, (axes[0] if len(axes) == 1 else (axes or None),), {})

    def copy(self) -> Array:
        return self.__copy__()


def _np_call(name: str, x: Array, args: tuple, kwargs: dict) -> Any:
    """``numpy.<name>(x, *args, **kwargs)`` (dispatches to pyaccel through __array_function__)."""
    np = _host.numpy()
    if np is None:
        raise _no_numpy(f"x.{name}(...)")
    return getattr(np, name)(x, *args, **kwargs)


def _is_operand(x: Any) -> bool:
    # Python scalars by exact type: NumPy scalars (np.float64 is a float subclass) go to
    # NumPy's protocol, which treats them as strong 0-d operands as NumPy 2 does
    return isinstance(x, Array) or type(x) in (bool, int, float, complex)


_KIND_RANK = {"b": 0, "u": 1, "i": 2, "f": 3, "c": 4}


def _same_kind(src: DType, dst: DType) -> bool:
    """NumPy's ``same_kind`` casting: bool < unsigned < signed < float < complex."""
    return _KIND_RANK[src.kind] <= _KIND_RANK[dst.kind]


def _c_contiguous(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    expect = 1
    for d, t in zip(reversed(shape), reversed(strides), strict=True):
        if d != 1 and t != expect:
            return False
        expect *= d
    return True


def _write_view(dst: Array, src: Any) -> None:
    """Store ``src`` (an Array broadcastable to ``dst.shape`` on dst's device, or a Python
    scalar) into the elements of ``dst`` (any view): one strided scatter into its base."""
    if not dst.size:
        return
    _before_write(dst)
    if isinstance(src, Array) and src._strides is None and src._base is dst._base:
        src = _OPS["astype"](src, src.dtype, copy=True)  # the source overlaps the destination
    ops = dst._device.ops
    n = dst._base.nbytes // ops.layout(dst._dtype).itemsize
    flat = Array._new(dst._base, (n,), dst._dtype, dst._device)
    ops.scatter(flat, dst._shape, dst._offset, dst._phys_strides(), src)


def _before_write(x: Array) -> None:
    """Compute the lazy arrays (fusion) that read ``x``'s buffer before it is written in place."""
    f = sys.modules.get("pyaccel.ops.fusion")
    if f is not None:
        f.before_write(x)


def _assign_inplace(self: Array, res: Array, name: str) -> None:
    if res.dtype is not self.dtype:
        if not _same_kind(res.dtype, self.dtype):
            raise TypeError(
                f"in-place {name}: cannot cast the result dtype {res.dtype.name} to the array's "
                f"{self.dtype.name} (NumPy's same_kind rule); write x = {name}(x, y) instead"
            )
        res = _OPS["astype"](res, self.dtype)
    if res.shape != self.shape:
        raise ValueError(
            f"in-place {name}: the result shape {res.shape} differs from the array's {self.shape} "
            "(broadcasting may not grow the left operand); write x = x op y instead"
        )
    if not res.size:
        return
    if res.device is not self.device:  # computed where a committed operand is: write back here
        res = asarray(res, device=self.device)
    if self._strides is not None:
        _write_view(self, res)  # a view: only its elements, in its base
        return
    _before_write(self)
    self._buf.copy_from(res._buf, res.size * res._layout().itemsize)


def _no_numpy(what: str) -> Exception:
    from ._hints import in_pyodide, numpy_fix
    from .errors import BackendUnavailableError

    return BackendUnavailableError(
        f"{what} needs NumPy, which is not importable here; use x.tolist(), bytes(x) or "
        "x.memoryview() instead" + (f" (or get numpy: {numpy_fix()})" if in_pyodide() else
                                    " (or pip install numpy)")
    )


# ---------------------------------------------------------------------------
# repr
# ---------------------------------------------------------------------------
_EDGE = 3
_SUMMARY = 1000


def _fmt_scalar(v: Any, dt: DType) -> str:
    if dt.kind == "b":
        return "True" if v else "False"
    if dt.kind == "c":
        comp = as_dtype("float32" if dt.itemsize == 8 else "float64")
        im = _fmt_scalar(v.imag, comp)
        return f"{_fmt_scalar(v.real, comp)}{'' if im[0] == '-' else '+'}{im}j"
    if dt.kind == "f":
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        digits = {2: 4, 4: 8, 8: 16}[dt.itemsize]
        s = format(v, f".{digits}g")
        if "e" not in s and "." not in s:
            s += "."
        return s
    return str(v)


def _format(a: Array) -> str:
    vals = a.tolist()
    dt = a.dtype
    if a.ndim == 0:
        return _fmt_scalar(vals, dt)
    summarize = a.size > _SUMMARY

    def rec(x: Any, depth: int) -> str:
        if depth == a.ndim - 1:
            items = [_fmt_scalar(v, dt) for v in x]
            if summarize and len(items) > 2 * _EDGE:
                items = items[:_EDGE] + ["..."] + items[-_EDGE:]
            return "[" + ", ".join(items) + "]"
        parts = [rec(v, depth + 1) for v in x]
        if summarize and len(parts) > 2 * _EDGE:
            parts = parts[:_EDGE] + ["..."] + parts[-_EDGE:]
        sep = "," + "\n" * (a.ndim - depth - 1) + " " * (7 + depth)
        return "[" + sep.join(parts) + "]"

    return rec(vals, 0)


# ---------------------------------------------------------------------------
# asarray
# ---------------------------------------------------------------------------
def _device_of_obj(obj: Any) -> Device | None:
    return obj.device if isinstance(obj, Array) else None


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None) -> Array:
    """An Array from an Array, NumPy array, nested list/tuple, Python scalar or bytes-like object.

    ``dtype`` defaults to the data's own dtype (NumPy arrays, array.array, memoryview formats;
    bytes/bytearray are uint8) or, for Python data, bool / the device's default int / default
    float. ``device`` defaults to the array's own device, else the current device;
    a different device copies. ``copy=False`` raises where a copy would be needed.
    """
    dev = as_device(device) if device is not None else (_device_of_obj(obj) or as_device(None))
    want = as_dtype(dtype) if dtype is not None else None
    if isinstance(obj, Array):
        return _from_array(obj, dev, want, copy)
    if copy is False:
        raise ValueError(
            f"asarray(copy=False): a {type(obj).__name__} must be copied into device memory; "
            "pass copy=None (or True)"
        )
    np = _host.numpy()
    # (NumPy's float64 / complex128 scalars are Python floats / complexes too: typed data,
    # so they keep their dtype like NumPy arrays; the dtype policy's defaults are for Python data)
    if np is not None and (_host.is_numpy_array(obj) or type(obj).__module__ == "numpy"
                           or not isinstance(obj, (list, tuple, bool, int, float, complex))):
        try:
            arr = _numpy_input(np, obj)
        except TypeError:
            arr = None
        if arr is not None:
            return _from_numpy_input(np, arr, dev, want)
    return _from_python(obj, dev, want)


def _from_array(x: Array, dev: Device, want: DType | None, copy: bool | None) -> Array:
    dt = want or x.dtype
    if dev is x.device:
        if dt is x.dtype:
            if copy:
                return _OPS["astype"](x, dt, copy=True)
            return x
        if copy is False:
            raise ValueError(f"asarray(copy=False): converting {x.dtype.name} to {dt.name} needs a copy")
        return _OPS["astype"](x, dt)
    if copy is False:
        raise ValueError(f"asarray(copy=False): moving from {x.device.uri} to {dev.uri} needs a copy")
    src_dt = x.dtype
    dt = check_dtype(dev, dt, "asarray")
    if supports(dev, src_dt) and dev.ops.layout(src_dt) == x._layout():
        # same storage layout (e.g. GPU -> GPU): copy the raw bytes, then convert on the target
        out = Array._empty(dev, x.shape, src_dt)
        data = x._storage_bytes()
        if data:
            out._buf.write(data)
        return out if src_dt is dt else _OPS["astype"](out, dt)
    np = _host.numpy()
    if np is not None:
        return _from_numpy_input(np, x.to_numpy(), dev, dt)
    flat = _host.convert_values(x._flat_values(x._storage_bytes()), src_dt, dt)
    return _upload_flat(flat, x.shape, dt, dev)


def _numpy_input(np: Any, obj: Any) -> Any:
    if _host.is_numpy_array(obj):
        return np.asarray(obj)
    if isinstance(obj, (bytes, bytearray)):
        return np.frombuffer(obj, dtype=np.uint8)
    if hasattr(obj, "__array_interface__") or hasattr(obj, "__array__") or hasattr(obj, "__dlpack__"):
        return np.asarray(obj)
    mv = _host.memoryview_of(obj)
    if mv is not None:
        return np.asarray(mv)
    raise TypeError


def _from_numpy_input(np: Any, arr: Any, dev: Device, want: DType | None) -> Array:
    if arr.dtype.kind not in "biufc" or arr.dtype.name not in _NUMPY_NAMES:
        raise TypeError(
            f"asarray: NumPy dtype {arr.dtype} is not supported; pyaccel arrays hold bool, ints, "
            "floats and complex numbers (convert with arr.astype(...))"
        )
    src = as_dtype(arr.dtype.name)
    dt = want or src
    dt = check_dtype(dev, dt, "asarray")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", getattr(np.exceptions, "ComplexWarning", Warning))
        host = np.ascontiguousarray(arr.astype(np.dtype(dt.name), copy=False))
        lay = dev.ops.layout(dt)
        if lay.lanes > 1:  # multi-lane storage is NumPy's little-endian bytes
            st = host.astype(host.dtype.newbyteorder("<"), copy=False)
        else:
            st = host.astype(np.dtype(lay.numpy), copy=False)
    out = Array._empty(dev, tuple(arr.shape), dt)
    if st.size:
        out._buf.write(np.ascontiguousarray(st))
    return out




_NUMPY_NAMES = frozenset(d.name for d in ALL_DTYPES)


def _python_dtype(kind: str, dev: Device) -> DType:
    if kind == "b":
        return bool_
    if kind == "i":
        return default_int(dev)
    if kind == "c":
        return default_complex(dev)
    return default_float(dev)


def _from_python(obj: Any, dev: Device, want: DType | None) -> Array:
    if isinstance(obj, (list, tuple, bool, int, float, complex)) or _is_py_scalar_like(obj):
        flat, shape = _host.nested(obj)
        src_kind = _host.scalar_kind(flat)
        if want is None:
            np = _host.numpy()
            if np is not None and any(type(v).__module__ == "numpy" or (type(v) is Array and not v.ndim)
                                      for v in flat):
                # NumPy scalars and 0-d Arrays in a list are typed data: NumPy's own inference
                # (float64 keeps float64, int32 stays int32), never the policy's default
                return _from_numpy_input(np, np.asarray(flat).reshape(shape), dev, None)
        dt = want or _python_dtype(src_kind, dev)
        dt = check_dtype(dev, dt, "asarray")
        if want is None and src_kind == "i" and Capability.INT64 not in dev.capabilities:
            _check_default_int_range(flat, dt, dev)
        if want is None and src_kind in "fc":
            check_default_float_fits(flat, dt, dev, "asarray")
        flat = _host.coerce(flat, dt)
        return _upload_flat(flat, shape, dt, dev)
    mv = _host.memoryview_of(obj)
    if mv is not None:
        return _from_memoryview(mv, dev, want, type(obj).__name__)
    raise TypeError(
        f"asarray: cannot convert {type(obj).__name__} to an array; pass an Array, a NumPy array, "
        "a (nested) list/tuple of numbers, a Python scalar or a bytes-like object"
    )


def _is_py_scalar_like(obj: Any) -> bool:
    return type(obj).__module__ == "numpy" and hasattr(obj, "item") and getattr(obj, "ndim", 1) == 0


def _check_default_int_range(flat: list, dt: DType, dev: Device) -> None:
    lo, hi = int_range(dt)
    for v in flat:
        if not isinstance(v, bool) and isinstance(v, int) and not lo <= v <= hi:
            raise OverflowError(
                f"asarray: Python int {v} does not fit {dt.name}, the default integer dtype on "
                f"{dev.uri} (no 64-bit integers on WebGPU devices); pass dtype=pyaccel.uint32 if it "
                "fits, use float32, or run on device='cpu'"
            )


def _from_memoryview(mv: memoryview, dev: Device, want: DType | None, tname: str) -> Array:
    if mv.ndim == 0 and mv.format in ("B", "b", "c") and mv.nbytes != mv.itemsize:
        mv = mv.cast("B")
    src = _host.dtype_of_format(mv.format, mv.itemsize)
    if src is None:
        raise TypeError(
            f"asarray: {tname} has buffer format {mv.format!r} (itemsize {mv.itemsize}), which has no "
            "pyaccel dtype; pass data of bool, (u)int8/16/32/64, float16/32/64 items"
        )
    shape = tuple(mv.shape) if mv.shape is not None else (mv.nbytes // mv.itemsize,)
    raw = mv.tobytes()
    flat = _host.unpack(raw, src.char, prod(shape))
    dt = check_dtype(dev, want or src, "asarray")
    flat = _host.convert_values(flat, src, dt) if dt is not src else flat
    return _upload_flat(flat, shape, dt, dev)


def _upload_flat(flat: list, shape: tuple[int, ...], dt: DType, dev: Device) -> Array:
    out = Array._empty(dev, shape, dt)
    if flat:
        lay = dev.ops.layout(dt)
        if dt.kind == "b" and lay.char != "?":
            flat = [1 if v else 0 for v in flat]
        # multi-lane storage holds the host bytes: pack with the dtype's own format
        out._buf.write(_host.pack(flat, dt.char if lay.lanes > 1 else lay.char))
    return out
