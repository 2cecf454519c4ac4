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
    InvalidDeviceURIError,
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
    set_device,
    using,
)
from .uri import DeviceURI, parse_uri

__version__ = "0.1.0"

__all__ = [
    "AsyncRequiredError", "BackendEntry", "BackendInfo", "BackendUnavailableError", "Buffer",
    "BufferFreedError", "Capability", "DType", "Device", "DeviceDescriptor", "DeviceLostError",
    "DeviceNotFoundError", "DeviceURI", "InvalidDeviceURIError", "Kernel", "KernelCompileError",
    "Limits", "OutOfDeviceMemoryError", "PyaccelError", "UnsupportedDTypeError", "backend",
    "backends", "bool_", "count_devices", "default_device_uri", "device", "device_async", "devices",
    "errors", "first_device", "float16", "float32", "float64", "get_device", "int8", "int16",
    "int32", "int64", "parse_uri", "register_backend", "set_device", "uint8", "uint16", "uint32",
    "uint64", "using",
]
