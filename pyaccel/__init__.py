"""pyaccel: portable accelerator compute from Python.

One registry, one device-URI grammar, one kernel API on native GPUs (wgpu-py),
the browser's WebGPU (Pyodide) and NumPy. Importing pyaccel starts nothing: no
GPU runtime is loaded until a backend is asked for.
"""

from __future__ import annotations

from . import errors
from .capabilities import Capability, Limits
from .device import Buffer, Device, DeviceDescriptor
from .dtypes import (
    DType,
    bool_,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .errors import (
    AsyncRequiredError,
    BackendUnavailableError,
    BufferFreedError,
    DeviceLostError,
    DeviceNotFoundError,
    DeviceTimeoutError,
    InvalidDeviceURIError,
    JitError,
    KernelCompileError,
    OutOfDeviceMemoryError,
    PyaccelError,
    UnsupportedDTypeError,
)
from .kernel import Kernel
from .registry import (
    BackendEntry,
    BackendInfo,
    backend,
    backends,
    count_devices,
    default_device_uri,
    device,
    device_async,
    devices,
    first_device,
    get_device,
    register_backend,
    rescan_backends,
    set_device,
    using,
)
from .uri import DeviceURI, parse_uri

__version__ = "0.1.0"

__all__ = [
    "AsyncRequiredError", "BackendEntry", "BackendInfo", "BackendUnavailableError", "Buffer",
    "BufferFreedError", "Capability", "DType", "Device", "DeviceDescriptor", "DeviceLostError",
    "DeviceNotFoundError", "DeviceTimeoutError", "DeviceURI", "InvalidDeviceURIError", "JitError", "Kernel", "KernelCompileError",
    "Limits", "OutOfDeviceMemoryError", "PyaccelError", "UnsupportedDTypeError", "backend",
    "backends", "bool_", "count_devices", "default_device_uri", "device", "device_async", "devices",
    "complex64", "complex128", "errors", "first_device", "float16", "float32", "float64", "get_device", "int8", "int16",
    "int32", "int64", "parse_uri", "register_backend", "rescan_backends", "set_device", "uint8", "uint16", "uint32",
    "uint64", "using",
]

# ---------------------------------------------------------------------------
# Array API namespace (pyaccel.Array and its functions; see pyaccel/array.py).
# ---------------------------------------------------------------------------
from . import fft as fft  # noqa: E402  (the fft extension)
from . import indexing, linalg, nn  # noqa: E402,F401  (indexing: registers x[key], x[key] = v)
from .array import Array  # noqa: E402
from .creation import (  # noqa: E402
    arange,
    asarray,
    empty,
    empty_like,
    eye,
    from_dlpack,
    full,
    full_like,
    linspace,
    meshgrid,
    ones,
    ones_like,
    tril,
    triu,
    zeros,
    zeros_like,
)
from .elementwise import *  # noqa: E402,F403  (one function per op-table row)
from .elementwise import __all__ as _elementwise_names  # noqa: E402
from .info import __array_namespace_info__  # noqa: E402
from .jit import jit  # noqa: E402  (trace and replay: docs/jit.md)
from .linalg import matmul, tensordot, vecdot  # noqa: E402
from .manipulation import (  # noqa: E402
    astype,
    broadcast_arrays,
    broadcast_shapes,
    broadcast_to,
    concat,
    expand_dims,
    flip,
    matrix_transpose,
    moveaxis,
    permute_dims,
    repeat,
    reshape,
    roll,
    squeeze,
    stack,
    take,
    take_along_axis,
    tile,
    unstack,
)
from .ops.fusion import fusion, set_fusion  # noqa: E402  (lazy elementwise fusion: docs/fusion.md)
from .promotion import (  # noqa: E402
    can_cast,
    finfo,
    get_dtype_policy,
    iinfo,
    isdtype,
    result_type,
    set_dtype_policy,
)
from .reductions import (  # noqa: E402
    all,
    any,
    argmax,
    argmin,
    argsort,
    count_nonzero,
    cumulative_prod,
    cumulative_sum,
    diff,
    isin,
    max,
    mean,
    min,
    nonzero,
    prod,
    searchsorted,
    sort,
    std,
    sum,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
    var,
)

__array_api_version__ = "2024.12"  # (2025.12 draft: x.__array_namespace__(api_version="2025.12"))
bool = bool_  # noqa: A001  (the Array API spells the dtype pyaccel.bool)
e = 2.718281828459045
pi = 3.141592653589793
inf = float("inf")
nan = float("nan")
newaxis = None

__all__ += [  # noqa: PLE0605
    "Array", "__array_api_version__", "__array_namespace_info__", "all", "any", "arange", "argmax",
    "argmin", "argsort", "asarray", "astype", "bool", "broadcast_arrays", "broadcast_shapes", "broadcast_to",
    "can_cast", "concat", "count_nonzero", "cumulative_prod", "cumulative_sum", "diff", "e", "empty", "empty_like",
    "expand_dims", "eye", "finfo", "flip", "from_dlpack", "full", "full_like", "fusion", "get_dtype_policy",
    "iinfo", "inf", "isdtype", "isin", "jit", "linalg", "linspace", "matmul", "matrix_transpose", "max", "mean",
    "meshgrid", "min", "moveaxis", "nan", "newaxis", "nn", "nonzero", "ones", "ones_like",
    "permute_dims", "pi", "prod", "repeat", "reshape", "result_type", "roll", "searchsorted",
    "set_dtype_policy", "set_fusion", "sort", "squeeze", "stack", "std", "sum", "take", "take_along_axis",
    "tensordot", "tile", "tril", "triu", "unique_all", "unique_counts", "unique_inverse",
    "unique_values", "unstack", "var", "vecdot", "zeros", "zeros_like", *_elementwise_names,
]

# Submodules loaded on first attribute access, so ``import pyaccel`` stays light (no NumPy,
# no pytest, no wgpu): ``pyaccel.testing.assert_matches_oracle`` works after a plain import,
# like ``numpy.testing``; ``pyaccel.extras`` holds the backend-specific extras.
_LAZY_SUBMODULES = ("testing", "extras")


def set_matmul_variant(name: str | None) -> None:
    """Pin the GPU float32/int32 matmul kernel (``"u16x8"``, ``"u16x16"``,
    ``"v8x4"``, ``"v4x4"``, ``"u16x4"``,
    ``"tiled"``, ``"reg8x4"``, ``"reg4x4"``, ``"naive"``) for every later product, or go back
    to the default choice with ``None`` (``$PYACCEL_MATMUL_VARIANT`` pins one too); an
    unknown name raises ValueError listing the names. docs/performance.md compares them."""
    from .ops import gpu_kernels

    gpu_kernels.set_matmul_variant(name)


def set_matmul_autotune(on: bool | None) -> None:
    """Turn the per-adapter timing of the matmul variants on first use (on by default; its
    choices are cached under ``$PYACCEL_CACHE_DIR``) on or off for this process; ``None``
    goes back to ``$PYACCEL_AUTOTUNE`` (``0`` turns it off). docs/performance.md."""
    from .ops import autotune

    autotune.set_autotune(on)


def __getattr__(name: str) -> object:
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))

# Dask: register pyaccel.Array as a chunk type now if dask.array is loaded, else when it is
# (a one-shot import hook; pyaccel/_dask.py). Imports nothing from Dask here.
from ._dask import install_hook as _install_dask_hook  # noqa: E402

_install_dask_hook()
