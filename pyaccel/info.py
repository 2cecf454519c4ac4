"""``pyaccel.__array_namespace_info__()``: the Array API inspection object.

Capabilities: ``"boolean indexing"`` and ``"data-dependent shapes"`` are True: on
``cpu:0`` natively (NumPy); on WebGPU devices ``x[mask]``, ``nonzero`` and
``unique_*`` work by reading the data back to the host (one device sync each), which
is correct but not asynchronous. ``"max dimensions"`` (2024.12) is 64: NumPy's limit,
which bounds ``cpu:0`` arrays and every host transfer (GPU kernels handle up to 8
non-mergeable axes per dispatch and split beyond that).
"""

from __future__ import annotations

from typing import Any

from .device import Device
from .dtypes import DTYPE_TABLE, DType
from .promotion import default_dtypes as _default_dtypes
from .promotion import device_dtypes
from .registry import as_device, devices, get_device

__all__ = ["Info", "__array_namespace_info__"]

_KINDS = {
    "bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
    "real floating": "f", "complex floating": "c", "numeric": "iufc",
}


class Info:
    """Inspection namespace (Array API 2024.12)."""

    def capabilities(self) -> dict[str, Any]:
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self) -> Device:
        return get_device()

    def devices(self) -> list[Device]:
        from .errors import PyaccelError
        from .registry import device

        out = []
        for d in devices():
            try:
                out.append(device(d.uri))
            except PyaccelError:
                continue
        return out

    def default_dtypes(self, *, device: Any = None) -> dict[str, DType | None]:
        """The default dtypes on ``device`` (default: the current device) under the dtype
        policy: float32 / complex64 floats where float64 is emulated (WebGPU devices, policy
        ``"fast"``), float64 / complex128 where it is native or the policy is ``"exact"``."""
        return _default_dtypes(as_device(device))

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, DType]:
        """The Array API dtypes the device holds. float16 is a pyaccel extension (not an Array API
        dtype): it is listed only when asked for by name, ``kind=pyaccel.float16``, and exists where
        ``Capability.F16`` is set."""
        dts = [d for d in device_dtypes(as_device(device)) if not DTYPE_TABLE[d].extension]
        if kind is not None:
            extra = kind if isinstance(kind, tuple) else (kind,)
            dts += [d for d in device_dtypes(as_device(device)) if DTYPE_TABLE[d].extension and d in extra]
        if kind is None:
            return {d.name: d for d in dts}
        kinds = kind if isinstance(kind, tuple) else (kind,)
        letters = ""
        for k in kinds:
            if isinstance(k, DType):
                letters += ""
                continue
            if k not in _KINDS:
                raise ValueError(f"dtypes(kind={k!r}): unknown kind; use one of {', '.join(_KINDS)}")
            letters += _KINDS[k]
        named = {k for k in kinds if isinstance(k, DType)}
        return {d.name: d for d in dts if d.kind in letters or d in named}


def __array_namespace_info__() -> Info:
    """The Array API inspection object (devices, default dtypes, capabilities)."""
    return Info()
