"""The 2025.12 draft of the Array API as a namespace: ``x.__array_namespace__(api_version=
"2025.12")``.

pyaccel's own namespace is the 2024.12 standard. What the 2025.12 draft adds (``isin``,
``broadcast_shapes``, a Python scalar ``x2`` in ``searchsorted``, a tuple ``axis`` in
``expand_dims``, negative axes in ``permute_dims``) pyaccel has everywhere: extra names and
arguments are allowed by 2024.12. What it *changes* lives here: ``broadcast_arrays``,
``meshgrid`` and ``__array_namespace_info__().devices()`` return tuples instead of lists,
and ``__array_api_version__`` is ``"2025.12"``. Every other name is pyaccel's own.
"""

from __future__ import annotations

import sys
import types
from typing import Any

__all__ = ["namespace"]

_NS: list[types.ModuleType] = []


class _Info2025:
    """``__array_namespace_info__()`` of the 2025.12 draft: ``devices()`` is a tuple."""

    def __init__(self, info: Any) -> None:
        self._info = info

    def __getattr__(self, name: str) -> Any:
        return getattr(self._info, name)

    def devices(self) -> tuple:
        return tuple(self._info.devices())


class _Namespace2025(types.ModuleType):
    """pyaccel with the 2025.12 draft's changes (see the module docstring)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(sys.modules[__package__], name)

    def __dir__(self) -> list[str]:
        return sorted(set(dir(sys.modules[__package__])) | set(vars(self)))


def namespace() -> types.ModuleType:
    """The 2025.12 namespace object (made once)."""
    if _NS:
        return _NS[0]
    xp = sys.modules[__package__]
    ns = _Namespace2025("pyaccel (Array API 2025.12 draft)")
    ns.__array_api_version__ = "2025.12"  # type: ignore[attr-defined]

    def broadcast_arrays(*arrays: Any) -> tuple:
        """Every array broadcast to their common shape, as a tuple (2025.12)."""
        return tuple(xp.broadcast_arrays(*arrays))

    def meshgrid(*arrays: Any, indexing: str = "xy") -> tuple:
        """Coordinate grids from 1-D arrays, as a tuple (2025.12)."""
        return tuple(xp.meshgrid(*arrays, indexing=indexing))

    def __array_namespace_info__() -> _Info2025:
        """The inspection object of the 2025.12 draft (``devices()`` is a tuple)."""
        return _Info2025(xp.__array_namespace_info__())

    ns.broadcast_arrays = broadcast_arrays  # type: ignore[attr-defined]
    ns.meshgrid = meshgrid  # type: ignore[attr-defined]
    ns.__array_namespace_info__ = __array_namespace_info__  # type: ignore[attr-defined]
    _NS.append(ns)
    return ns
