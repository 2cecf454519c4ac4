"""Dask integration: pyaccel Arrays as Dask chunks (see :mod:`pyaccel._dask` and
docs/interop.md).

Registration is automatic (``import pyaccel`` registers, or arms a one-shot hook that
registers when ``dask.array`` is imported); :func:`register` does it explicitly.
"""

from __future__ import annotations

from .._dask import is_registered, register

__all__ = ["is_registered", "register"]
