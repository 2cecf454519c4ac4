"""NumPy's dispatch protocols for :class:`pyaccel.Array` (NEP 13 ``__array_ufunc__``,
NEP 18 ``__array_function__``), as far as duck-array libraries such as Dask need them.

``np.exp(x)``, ``np.add.reduce(x, axis=0)``, ``np.concatenate([x, y])``,
``np.sum(x, axis=1, keepdims=True)``, ``np.tensordot(x, y, axes=...)`` on pyaccel arrays run
the pyaccel namespace function on the arrays' device and return pyaccel arrays (nothing is
read back). Anything not in the tables below returns ``NotImplemented``, so NumPy raises its
usual ``TypeError`` naming the function ("no implementation found for 'numpy.xxx'"); no
silent host fallback ever happens.

Mixing: Python and NumPy *scalars* (and 0-d NumPy arrays) are accepted as scalars; NumPy
arrays with dimensions are refused (``np.ones(3) + x`` raises TypeError, as before the
protocol existed): move them first with ``pyaccel.asarray(a, device=x.device)``. The one
exception is the list argument of ``np.concatenate``/``np.stack``, whose NumPy members are
uploaded to the device of the pyaccel members (Dask builds such lists).

This module imports nothing from pyaccel: the namespace arrives as the ``ns`` argument
(``x.__array_namespace__()``), so ``array.py`` can use it without an import cycle.
"""

from __future__ import annotations

import uuid
import weakref
from collections.abc import Callable
from typing import Any

# NumPy ufunc name -> pyaccel (Array API) function name, where they differ
UFUNC_NAMES = {
    "absolute": "abs", "fabs": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin",
    "arcsinh": "asinh", "arctan": "atan", "arctan2": "atan2", "arctanh": "atanh",
    "power": "pow", "true_divide": "divide", "invert": "bitwise_invert",
    "bitwise_not": "bitwise_invert", "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift", "conjugate": "conj", "mod": "remainder",
    "rint": "round",
}
# ufunc.reduce -> reduction
REDUCE_NAMES = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
                "logical_and": "all", "logical_or": "any"}
# ufuncs that are not elementwise in the namespace sense but have a namespace twin
SPECIAL_UFUNCS = {"matmul": "matmul"}


def _np() -> Any:
    import numpy

    return numpy


def _scalar(x: Any) -> Any:
    """A Python scalar for NumPy scalars / 0-d arrays; ``x`` unchanged otherwise."""
    if type(x).__module__ == "numpy" and getattr(x, "ndim", None) == 0:
        return x.item()
    return x


def _dtype(ns: Any, dtype: Any) -> Any:
    """A pyaccel dtype from anything NumPy accepts as a dtype (``'f8'``, ``np.float32``, ...)."""
    if dtype is None:
        return None
    as_dtype = ns.dtypes.as_dtype
    try:
        return as_dtype(dtype)
    except TypeError:
        return as_dtype(_np().dtype(dtype).name)


def _axis(axis: Any) -> Any:
    if isinstance(axis, list):
        return tuple(axis)
    return axis


def _no_out(name: str, out: Any) -> None:
    if out is not None and out != (None,):
        raise TypeError(f"numpy.{name}(..., out=...) on a pyaccel array: out= is not supported; "
                        "use the returned array (pyaccel ops never write into a given array)")


# ---------------------------------------------------------------------------
# __array_ufunc__
# ---------------------------------------------------------------------------
def array_ufunc(array_type: type, ns: Any, ufunc: Any, method: str, inputs: tuple,
                kwargs: dict) -> Any:
    """``Array.__array_ufunc__``: run ``ufunc`` through the pyaccel namespace."""
    _no_out(ufunc.__name__, kwargs.pop("out", None))
    where = kwargs.pop("where", True)
    if where is not True:
        return NotImplemented
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("casting", None)
    kwargs.pop("order", None)
    kwargs.pop("subok", None)
    if method == "__call__":
        if kwargs:
            return NotImplemented
        name = ufunc.__name__
        fname = SPECIAL_UFUNCS.get(name) or UFUNC_NAMES.get(name, name)
        f = getattr(ns, fname, None)
        if f is None or (fname not in ns._elementwise_names and name not in SPECIAL_UFUNCS):
            return NotImplemented
        args = []
        for a in inputs:
            a = _scalar(a)
            if type(a).__module__ == "numpy" and hasattr(a, "shape"):
                dev = _device_of(array_type, inputs)
                raise TypeError(
                    f"numpy.{name}: cannot mix a NumPy array of shape {a.shape} with a pyaccel "
                    f"array on {dev.uri}; move it first with pyaccel.asarray(a, device=x.device) "
                    "(or read the pyaccel array with x.to_numpy())")
            if not isinstance(a, (array_type, bool, int, float, complex)):
                return NotImplemented  # other duck arrays
            args.append(a)
        res = f(*args)
        if dtype is not None:
            res = ns.astype(res, _dtype(ns, dtype))
        return res
    if method == "reduce" and ufunc.__name__ in REDUCE_NAMES and len(inputs) == 1:
        (x,) = inputs
        if not isinstance(x, array_type):
            return NotImplemented
        red = getattr(ns, REDUCE_NAMES[ufunc.__name__])
        axis = _axis(kwargs.pop("axis", 0))
        keepdims = kwargs.pop("keepdims", False)
        if kwargs.pop("initial", None) is not None or kwargs:
            return NotImplemented
        if dtype is not None and ufunc.__name__ in ("add", "multiply"):
            return red(x, axis=axis, keepdims=keepdims, dtype=_dtype(ns, dtype))
        res = red(x, axis=axis, keepdims=keepdims)
        return ns.astype(res, _dtype(ns, dtype)) if dtype is not None else res
    return NotImplemented


# ---------------------------------------------------------------------------
# __array_function__
# ---------------------------------------------------------------------------
Handler = Callable[..., Any]
FUNCTIONS: dict[str, Handler] = {}


def _handles(*names: str) -> Callable[[Handler], Handler]:
    def deco(f: Handler) -> Handler:
        for n in names:
            FUNCTIONS[n] = f
        return f
    return deco


_LIKE_FUNCS = frozenset(("empty", "zeros", "ones", "full", "array", "asarray", "asanyarray",
                         "ascontiguousarray"))


def array_function(array_type: type, ns: Any, func: Any, types: tuple, args: tuple,
                   kwargs: dict, receiver: Any = None) -> Any:
    """``Array.__array_function__``: the pyaccel twin of the NumPy function, or NotImplemented.

    ``receiver``: the array whose method NumPy called; for ``np.empty(..., like=x)`` (NEP 35
    drops ``like`` from ``kwargs``) it is ``x``, so the result goes to ``x``'s device."""
    np = _np()
    if receiver is not None and func.__name__ in _LIKE_FUNCS:
        kwargs = {**kwargs, "like": receiver}
    for t in types:
        if not (issubclass(t, array_type) or issubclass(t, np.ndarray)):
            return NotImplemented  # another duck array: let it (or NumPy) decide
    h = FUNCTIONS.get(func.__name__)
    if h is None or getattr(np, func.__name__, None) is not func:
        return NotImplemented
    try:
        return h(array_type, ns, *args, **kwargs)
    except IndexError as exc:  # a bad axis: NumPy's AxisError (also a ValueError), as callers expect
        if isinstance(exc, ValueError):
            raise
        raise np.exceptions.AxisError(str(exc)) from exc


def _device_of(array_type: type, seq: Any) -> Any:
    for a in seq:
        if isinstance(a, array_type):
            return a.device
    return None


def _upload_members(array_type: type, ns: Any, arrays: Any) -> list:
    arrays = list(arrays)
    dev = _device_of(array_type, arrays)
    return [a if isinstance(a, array_type) else ns.asarray(a, device=dev) for a in arrays]


@_handles("concatenate")
def _concatenate(at: type, ns: Any, arrays: Any, axis: Any = 0, out: Any = None, *,
                 dtype: Any = None, casting: Any = None) -> Any:
    _no_out("concatenate", out)
    res = ns.concat(_upload_members(at, ns, arrays), axis=axis)
    return ns.astype(res, _dtype(ns, dtype)) if dtype is not None else res


@_handles("stack")
def _stack(at: type, ns: Any, arrays: Any, axis: int = 0, out: Any = None, *, dtype: Any = None,
           casting: Any = None) -> Any:
    _no_out("stack", out)
    res = ns.stack(_upload_members(at, ns, arrays), axis=axis)
    return ns.astype(res, _dtype(ns, dtype)) if dtype is not None else res


def _empty_reduction(ns: Any, name: str, a: Any, axis: Any, keepdims: bool, dtype: Any) -> Any:
    """A reduction of a 0-size array (Dask's metadata arrays) without a kernel: the identity,
    uploaded (a host write; NumPy's value and dtype rules)."""
    np = _np()
    want = getattr(np, name)(np.empty(a.shape, a.dtype.numpy), axis=_axis(axis),
                             keepdims=keepdims, **({"dtype": dtype} if dtype is not None else {}))
    want = np.asarray(want)
    dt = a.dtype if name in ("sum", "prod") and dtype is None and want.dtype.kind == a.dtype.kind \
        else None
    return ns.asarray(want, dtype=dt, device=a.device)


def _reduction(name: str, takes_dtype: bool) -> Handler:
    def h(at: type, ns: Any, a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
          keepdims: bool = False, **kw: Any) -> Any:
        _no_out(name, out)
        if kw.get("where", True) is not True or kw.get("initial") is not None:
            return NotImplemented
        if isinstance(a, at) and a.size == 0:
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # mean of empty: NaN
                return _empty_reduction(ns, name, a, axis, bool(keepdims), dtype)
        f = getattr(ns, name)
        if takes_dtype:
            return f(a, axis=_axis(axis), keepdims=bool(keepdims), dtype=_dtype(ns, dtype))
        res = f(a, axis=_axis(axis), keepdims=bool(keepdims))
        return ns.astype(res, _dtype(ns, dtype)) if dtype is not None else res
    return h


FUNCTIONS["sum"] = _reduction("sum", True)
FUNCTIONS["prod"] = _reduction("prod", True)
FUNCTIONS["mean"] = _reduction("mean", False)


def _minmax(name: str) -> Handler:
    def h(at: type, ns: Any, a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
          **kw: Any) -> Any:
        _no_out(name, out)
        if kw.get("where", True) is not True or kw.get("initial") is not None:
            return NotImplemented
        return getattr(ns, name)(a, axis=_axis(axis), keepdims=bool(keepdims))
    return h


for _n, _f in (("max", "max"), ("amax", "max"), ("min", "min"), ("amin", "min"),
               ("any", "any"), ("all", "all")):
    FUNCTIONS[_n] = _minmax(_f)


def _moment(name: str) -> Handler:
    def h(at: type, ns: Any, a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
          ddof: float = 0, keepdims: bool = False, **kw: Any) -> Any:
        _no_out(name, out)
        if kw.get("where", True) is not True:
            return NotImplemented
        res = getattr(ns, name)(a, axis=_axis(axis), correction=ddof, keepdims=bool(keepdims))
        return ns.astype(res, _dtype(ns, dtype)) if dtype is not None else res
    return h


FUNCTIONS["var"] = _moment("var")
FUNCTIONS["std"] = _moment("std")


def _arg(name: str) -> Handler:
    def h(at: type, ns: Any, a: Any, axis: Any = None, out: Any = None, *,
          keepdims: bool = False) -> Any:
        _no_out(name, out)
        return getattr(ns, name)(a, axis=axis, keepdims=bool(keepdims))
    return h


FUNCTIONS["argmax"] = _arg("argmax")
FUNCTIONS["argmin"] = _arg("argmin")


@_handles("tensordot")
def _tensordot(at: type, ns: Any, a: Any, b: Any, axes: Any = 2) -> Any:
    if not isinstance(axes, int):
        axes = tuple(tuple(ax) if isinstance(ax, (list, tuple)) else (ax,) for ax in axes)
    return ns.tensordot(a, b, axes=axes)


@_handles("dot")
def _dot(at: type, ns: Any, a: Any, b: Any, out: Any = None) -> Any:
    _no_out("dot", out)
    if a.ndim == 0 or b.ndim == 0:
        return ns.multiply(a, b)
    if b.ndim == 1 or a.ndim == 1 or (a.ndim == 2 and b.ndim == 2):
        return ns.matmul(a, b)
    return ns.tensordot(a, b, axes=((a.ndim - 1,), (b.ndim - 2,)))


@_handles("transpose")
def _transpose(at: type, ns: Any, a: Any, axes: Any = None) -> Any:
    return ns.permute_dims(a, tuple(range(a.ndim))[::-1] if axes is None else tuple(axes))


@_handles("reshape")
def _reshape(at: type, ns: Any, a: Any, shape: Any = None, order: str = "C", *,
             newshape: Any = None, copy: Any = None) -> Any:
    if order != "C":
        return NotImplemented
    shape = newshape if shape is None else shape
    return ns.reshape(a, (shape,) if isinstance(shape, int) else tuple(shape))


@_handles("squeeze")
def _squeeze(at: type, ns: Any, a: Any, axis: Any = None) -> Any:
    if axis is None:
        axis = tuple(i for i, n in enumerate(a.shape) if n == 1)
    return ns.squeeze(a, axis=axis)


@_handles("expand_dims")
def _expand_dims(at: type, ns: Any, a: Any, axis: Any) -> Any:
    if isinstance(axis, int):
        return ns.expand_dims(a, axis=axis)
    res = a
    for ax in sorted(ax % (a.ndim + len(axis)) for ax in axis):
        res = ns.expand_dims(res, axis=ax)
    return res


@_handles("broadcast_to")
def _broadcast_to(at: type, ns: Any, a: Any, shape: Any, subok: bool = False) -> Any:
    return ns.broadcast_to(a, (shape,) if isinstance(shape, int) else tuple(shape))


@_handles("where")
def _where(at: type, ns: Any, cond: Any, x: Any = None, y: Any = None) -> Any:
    if x is None or y is None:
        return NotImplemented
    return ns.where(cond, _scalar(x), _scalar(y))


@_handles("clip")
def _clip(at: type, ns: Any, a: Any, a_min: Any = None, a_max: Any = None, out: Any = None,
          *, min: Any = None, max: Any = None, **kw: Any) -> Any:  # noqa: A002
    _no_out("clip", out)
    lo = _scalar(a_min if a_min is not None else min)
    hi = _scalar(a_max if a_max is not None else max)
    return ns.clip(a, lo, hi)


@_handles("round", "around")
def _round(at: type, ns: Any, a: Any, decimals: int = 0, out: Any = None) -> Any:
    _no_out("round", out)
    if decimals:
        return NotImplemented
    return ns.round(a)


@_handles("cumsum")
def _cumsum(at: type, ns: Any, a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    _no_out("cumsum", out)
    if axis is None:
        a, axis = ns.reshape(a, (-1,)), 0
    return ns.cumulative_sum(a, axis=axis, dtype=_dtype(ns, dtype))


@_handles("moveaxis")
def _moveaxis(at: type, ns: Any, a: Any, source: Any, destination: Any) -> Any:
    return ns.moveaxis(a, source, destination)


@_handles("copy")
def _copy(at: type, ns: Any, a: Any, order: str = "K", subok: bool = False) -> Any:
    return ns.asarray(a, copy=True)


@_handles("astype")
def _astype_fn(at: type, ns: Any, a: Any, dtype: Any, /, *, copy: bool = True,
               device: Any = None) -> Any:
    return ns.astype(a, _dtype(ns, dtype), copy=copy)


def _like(name: str) -> Handler:
    def h(at: type, ns: Any, a: Any, *args: Any, dtype: Any = None, order: str = "K",
          subok: bool = True, shape: Any = None, device: Any = None, **kw: Any) -> Any:
        dt = _dtype(ns, dtype) if dtype is not None else a.dtype
        if shape is None:
            shape = a.shape
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if name == "full_like":
            return ns.full(shape, _scalar(args[0] if args else kw["fill_value"]), dtype=dt,
                           device=a.device)
        return getattr(ns, name[:-5])(shape, dtype=dt, device=a.device)
    return h


for _n in ("empty_like", "zeros_like", "ones_like", "full_like"):
    FUNCTIONS[_n] = _like(_n)


def _creation(name: str) -> Handler:
    # np.empty(shape, dtype=..., like=x) dispatches to x.__array_function__ (NEP 35)
    def h(at: type, ns: Any, shape: Any, *args: Any, dtype: Any = None, like: Any = None,
          **kw: Any) -> Any:
        if name == "full":
            fill, args = (args[0], args[1:]) if args else (kw.pop("fill_value"), args)
        if args:
            dtype = args[0]
        dt = _dtype(ns, dtype) if dtype is not None else _dtype(ns, "float64")
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        dev = like.device if isinstance(like, at) else None
        if name == "full":
            return ns.full(shape, _scalar(fill), dtype=dt, device=dev)
        return getattr(ns, name)(shape, dtype=dt, device=dev)
    return h


for _n in ("empty", "zeros", "ones", "full"):
    FUNCTIONS[_n] = _creation(_n)


@_handles("array", "asarray", "asanyarray", "ascontiguousarray")
def _asarray(at: type, ns: Any, a: Any, dtype: Any = None, *args: Any, like: Any = None,
             ndmin: int = 0, copy: Any = None, **kw: Any) -> Any:
    dev = like.device if isinstance(like, at) else None
    res = ns.asarray(a, dtype=_dtype(ns, dtype), device=dev, copy=True if copy else None)
    if res.ndim < ndmin:
        res = ns.reshape(res, (1,) * (ndmin - res.ndim) + res.shape)
    return res


@_handles("ndim")
def _ndim(at: type, ns: Any, a: Any) -> int:
    return a.ndim


@_handles("shape")
def _shape(at: type, ns: Any, a: Any) -> tuple:
    return a.shape


@_handles("size")
def _size(at: type, ns: Any, a: Any, axis: Any = None) -> int:
    return a.size if axis is None else a.shape[axis]


@_handles("result_type")
def _result_type(at: type, ns: Any, *arrays_and_dtypes: Any) -> Any:
    np = _np()
    return np.result_type(*(a.dtype.numpy if isinstance(a, at) else a for a in arrays_and_dtypes))


# ---------------------------------------------------------------------------
# Dask tokens
# ---------------------------------------------------------------------------
_TOKENS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def buffer_token(buf: Any) -> str:
    """A token for a device buffer: the same for the same buffer, never reused by another.

    (``Array.__dask_tokenize__``: without it Dask would pickle *and unpickle* the array to
    hash it, reading it back and uploading it again; like Dask's own token for ``object()``
    it is idempotent, not content-based.)"""
    tok = _TOKENS.get(buf)
    if tok is None:
        tok = _TOKENS.setdefault(buf, uuid.uuid4().hex)
    return tok
