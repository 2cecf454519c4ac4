"""The pyaccel exception hierarchy.

Every message says what was wrong, quotes the offending value, and names a fix.
Each class also derives from the builtin exception a caller would naturally
catch (``LookupError`` for a missing device, ``ValueError`` for a bad URI, ...).
"""

from __future__ import annotations


class PyaccelError(Exception):
    """Base class of every error raised by pyaccel."""


class BackendUnavailableError(PyaccelError, RuntimeError):
    """A backend (or a feature of one) cannot be used here; the message says why and how to fix it."""


class DeviceNotFoundError(PyaccelError, LookupError):
    """A well-formed device URI names no device that exists here."""

    def __str__(self) -> str:  # LookupError would repr() a single argument
        return str(self.args[0]) if self.args else ""


class InvalidDeviceURIError(PyaccelError, ValueError):
    """A device URI that does not parse (``scheme``, ``scheme:N`` or ``scheme://path``)."""


class UnsupportedDTypeError(PyaccelError, TypeError):
    """A dtype the device cannot hold (for example float64 on a WebGPU device)."""


class KernelCompileError(PyaccelError, ValueError):
    """WGSL failed to compile; carries the compiler message and the source position."""

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        compiler_message: str = "",
        source: str = "",
    ) -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.compiler_message = compiler_message
        self.source = source


class OutOfDeviceMemoryError(PyaccelError, MemoryError):
    """An allocation above the device limit or beyond its memory."""


class DeviceLostError(PyaccelError, RuntimeError):
    """The device was lost (driver reset, browser tab, ...): open it again."""


class DeviceTimeoutError(PyaccelError, TimeoutError):
    """A blocking wait (``synchronize(timeout=...)``, ``read(timeout=...)``) ran past its timeout.

    The GPU work keeps running; the device stays usable (wait again, or read later).
    """


class BufferFreedError(PyaccelError, RuntimeError):
    """A buffer (or array) was used after ``free()``."""


class AsyncRequiredError(PyaccelError, RuntimeError):
    """A synchronous call had to wait on a browser promise but JSPI is not available."""


class ValueOutOfRangeError(PyaccelError, OverflowError, ValueError):
    """A value outside the range of the type it must fit (a uniform field of WGSL type u32
    given -1 or 2**32, an f32 field given 1e39)."""


class LinAlgError(PyaccelError, ValueError):
    """A matrix the operation cannot handle (singular in ``solve``/``inv``, not positive
    definite in ``cholesky``). A ``ValueError``, as ``numpy.linalg.LinAlgError`` is.
    Public as ``pyaccel.linalg.LinAlgError``; defined here, below the namespace, so the op
    providers raise it without importing :mod:`pyaccel.linalg`."""


class JitError(PyaccelError, RuntimeError):
    """Something inside a function traced by :func:`pyaccel.jit` cannot be recorded (a host
    read, a data-dependent shape, arguments on two devices); the message names the call and
    the fix (docs/jit.md)."""


LinAlgError.__module__ = "pyaccel.linalg"

__all__ = [
    "AsyncRequiredError",
    "BackendUnavailableError",
    "BufferFreedError",
    "DeviceLostError",
    "DeviceNotFoundError",
    "DeviceTimeoutError",
    "InvalidDeviceURIError",
    "JitError",
    "KernelCompileError",
    "OutOfDeviceMemoryError",
    "PyaccelError",
    "UnsupportedDTypeError",
    "ValueOutOfRangeError",
]
