"""pyaccel Arrays as Dask chunks: the registrations Dask's chunk-type protocol needs.

:func:`register` (idempotent) tells Dask that :class:`pyaccel.Array` is a chunk type
(``dask.array.chunk_types.register_chunk_type``: Dask then wraps it instead of deferring to
it) and fills the ``dask.array.dispatch`` lookups Dask calls on chunks:

* ``concatenate_lookup`` / ``tensordot_lookup`` / ``take_lookup`` / ``divide_lookup``:
  ``pyaccel.concat`` / ``tensordot`` / ``take`` / ``divide`` on the chunks' device;
* ``numel_lookup`` / ``nannumel_lookup`` (``mean``, ``var``, ``std``): element counts as
  pyaccel arrays on the chunk's device (NumPy's would refuse to mix);
* ``to_numpy_dispatch``: ``x.to_numpy()``.

(``percentile_lookup`` and ``einsum_lookup`` are not registered: pyaccel has no percentile
or einsum; ``da.percentile`` / ``da.einsum`` on pyaccel chunks raise NumPy's TypeError.
``empty_lookup`` is never called by Dask on chunks.) Everything else Dask does to a chunk
goes through NumPy's protocols (``Array.__array_function__`` / ``__array_ufunc__``,
:mod:`pyaccel._numpy_protocol`) and a few NumPy-style methods (``x.sum(...)``).

**Registration is automatic**: ``import pyaccel`` registers at once when ``dask.array`` is
already imported, and otherwise installs a one-shot import hook (a ``sys.meta_path``
finder) that registers right after ``dask.array`` is first imported, in any order. The hook
imports nothing itself and removes itself once it fired. ``PYACCEL_DASK_HOOK=0`` disables
it; then call ``pyaccel.extras.dask.register()`` yourself (also fine to call anyway).
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from typing import Any

HOOK_ENV = "PYACCEL_DASK_HOOK"
_lock = threading.Lock()
_registered = False


def is_registered() -> bool:
    """Whether :func:`register` ran in this process."""
    return _registered


def register() -> None:
    """Register pyaccel Arrays as a Dask chunk type (idempotent; needs ``dask[array]``)."""
    global _registered
    with _lock:
        if _registered:
            return
        from dask.array import dispatch
        from dask.array.chunk_types import register_chunk_type

        from .array import Array

        register_chunk_type(Array)
        dispatch.concatenate_lookup.register(Array, _concatenate)
        dispatch.tensordot_lookup.register(Array, _tensordot)
        dispatch.take_lookup.register(Array, _take)
        dispatch.divide_lookup.register(Array, _divide)
        dispatch.numel_lookup.register(Array, _numel)
        dispatch.nannumel_lookup.register(Array, _nannumel)
        dispatch.to_numpy_dispatch.register(Array, _to_numpy)
        _registered = True


def _ns() -> Any:
    return sys.modules[__package__]


def _concatenate(arrays: Any, axis: int = 0) -> Any:
    import numpy as np

    return np.concatenate(list(arrays), axis=axis)  # -> __array_function__ (uploads NumPy members)


def _tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    import numpy as np

    return np.tensordot(a, b, axes=axes)


def _take(a: Any, indices: Any, axis: int = 0) -> Any:
    ns = _ns()
    if not isinstance(indices, ns.Array):
        indices = ns.asarray(indices, device=a.device)
    return ns.take(a, indices, axis=axis)


def _divide(a: Any, b: Any, dtype: Any = None) -> Any:
    from ._numpy_protocol import _dtype, _scalar

    ns = _ns()
    res = ns.divide(_scalar(a), _scalar(b))
    return ns.astype(res, _dtype(ns, dtype)) if dtype is not None else res


def _count_shape(x: Any, axis: Any, keepdims: bool) -> tuple[tuple[int, ...], int]:
    if axis is None:
        axes = tuple(range(x.ndim))
    else:
        axes = tuple(a % x.ndim for a in ((axis,) if isinstance(axis, int) else axis))
    n = 1
    for a in axes:
        n *= x.shape[a]
    if keepdims:
        shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    else:
        shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
    return shape, n


def _count_dtype(ns: Any, x: Any, dtype: Any) -> Any:
    from ._numpy_protocol import _dtype

    if dtype is not None:
        return _dtype(ns, dtype)
    return ns.__array_namespace_info__().default_dtypes(device=x.device)["real floating"]


def _numel(x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None, **kw: Any) -> Any:
    """Element counts of ``x`` over ``axis`` (Dask's mean/var), on ``x``'s device."""
    ns = _ns()
    shape, n = _count_shape(x, axis, keepdims)
    return ns.full(shape, n, dtype=_count_dtype(ns, x, dtype), device=x.device)


def _nannumel(x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None,
              **kw: Any) -> Any:
    """Counts of the non-NaN elements (Dask's nanmean/nanvar), on ``x``'s device."""
    ns = _ns()
    dt = _count_dtype(ns, x, dtype)
    ok = ns.logical_not(ns.isnan(x)) if ns.isdtype(x.dtype, ("real floating", "complex floating")) \
        else ns.ones(x.shape, dtype=ns.bool, device=x.device)
    return ns.sum(ns.astype(ok, dt), axis=axis, keepdims=keepdims)


def _to_numpy(x: Any, **kwargs: Any) -> Any:
    return x.to_numpy()


# ---------------------------------------------------------------------------
# the one-shot import hook
# ---------------------------------------------------------------------------
class _DaskArrayHook:
    """Registers pyaccel with Dask right after ``dask.array`` is first imported.

    A meta path finder by protocol (``find_spec``), not by subclassing ``importlib.abc``:
    importing that module costs ~10 ms at ``import pyaccel``."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "dask.array":
            return None
        spec = None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _RegisteringLoader(spec.loader)
        return spec


class _RegisteringLoader:
    """The real loader of ``dask.array``, registering pyaccel once it has run."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, is_package, ...
        return getattr(self._loader, name)

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        uninstall_hook()
        _register_quietly()


_HOOK = _DaskArrayHook()


def _register_quietly() -> None:
    try:
        register()
    except Exception as exc:  # never break the user's `import dask.array`
        warnings.warn(f"pyaccel could not register its Array as a Dask chunk type ({exc!r}); "
                      "call pyaccel.extras.dask.register() to see the error", RuntimeWarning,
                      stacklevel=2)


def install_hook() -> None:
    """Register now if ``dask.array`` is imported, else arm the one-shot import hook
    (called by ``import pyaccel``; ``PYACCEL_DASK_HOOK=0`` turns the hook off)."""
    if _registered:
        return
    if "dask.array" in sys.modules:
        _register_quietly()
        return
    if os.environ.get(HOOK_ENV, "1").strip() == "0":
        return
    if _HOOK not in sys.meta_path:
        sys.meta_path.insert(0, _HOOK)


def uninstall_hook() -> None:
    try:
        sys.meta_path.remove(_HOOK)
    except ValueError:
        pass
