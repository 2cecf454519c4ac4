"""NumPy's dispatch protocols for :class:`pyaccel.Array` (NEP 13 ``__array_ufunc__``,
NEP 18 ``__array_function__``): a NumPy call on pyaccel arrays gives NumPy's answer.

The rule (docs/interop.md, "NumPy's protocols"):

* **A twin runs on the device.** A ufunc or NumPy function with a pyaccel twin (the tables
  below: ``np.exp``, ``np.add.reduce``, ``np.sum(..., keepdims=)``, ``np.concatenate``,
  ``np.where``, ...) called with pyaccel arrays and scalars runs the pyaccel function on the
  arrays' device and returns a pyaccel Array; nothing is read back. The twin is used only
  for calls it computes as NumPy does: NumPy scalars (and 0-d NumPy arrays) are strong
  0-d operands of their own dtype (NEP 50), Python scalars weak; ``np.where`` takes any
  condition as NumPy's truth value.
* **Everything else is NumPy on the host copy.** A function or ufunc method with no twin
  (``np.unique``, ``np.average``, ``np.percentile``, ``np.add.outer``, ...), a call with
  arguments the twin does not take (``where=``, ``order='F'``, ``decimals=2``, ...), and a
  call that mixes pyaccel arrays with NumPy arrays of one or more dimensions behave as
  the same call on ``np.asarray(x)`` (the host copy ``__array__`` gives): the result is
  NumPy's. (The one exception: the sequence given to ``np.concatenate`` / ``np.stack``,
  whose NumPy members are uploaded next to the pyaccel ones: Dask builds such lists.)
* **Writes reach the pyaccel array.** Where NumPy writes into an argument (``out=``; the
  first argument of ``np.copyto``, ``np.put``, ``np.place``, ``np.putmask``,
  ``np.fill_diagonal``, ``np.put_along_axis``; ``ufunc.at``), the result is written back
  into the pyaccel array (on the device: a copy kernel; on the host path: an upload), and
  the call returns that array, as NumPy returns ``out``.

Other duck arrays in the arguments: ``NotImplemented`` (they, or NumPy, decide).

This module imports nothing from pyaccel: the namespace arrives as the ``ns`` argument
(``x.__array_namespace__()``), so ``array.py`` can use it without an import cycle.
"""

from __future__ import annotations

import functools
import inspect
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
# ufuncs whose NumPy loops differ from the Array API function for some input kinds: those
# inputs take the host path (np.reciprocal of integers is integer division; np.fabs refuses
# complex; np.sign of complex is z / |z| in both, kept)
_UFUNC_HOST_KINDS = {"reciprocal": "biu", "fabs": "c", "rint": "biu"}
# ufunc.reduce -> reduction
REDUCE_NAMES = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
                "logical_and": "all", "logical_or": "any"}
# ufunc.accumulate -> scan
ACCUMULATE_NAMES = {"add": "cumulative_sum", "multiply": "cumulative_prod"}
# ufuncs that are not elementwise in the namespace sense but have a namespace twin
SPECIAL_UFUNCS = {"matmul": "matmul"}
# NumPy functions that write into an argument: name -> (position, keyword) of that argument
INPLACE_FUNCTIONS = {"copyto": (0, "dst"), "put": (0, "a"), "place": (0, "arr"),
                     "putmask": (0, "a"), "fill_diagonal": (0, "a"),
                     "put_along_axis": (0, "arr")}

HOST = object()
"""A handler's answer for a call its twin does not compute as NumPy does: NumPy on the host."""


def _np() -> Any:
    import numpy

    return numpy


def _is_np(x: Any) -> bool:
    return type(x).__module__ == "numpy" and hasattr(x, "dtype") and hasattr(x, "shape")


def _scalar(x: Any) -> Any:
    """A Python scalar for NumPy scalars / 0-d arrays; ``x`` unchanged otherwise."""
    if _is_np(x) and getattr(x, "ndim", None) == 0:
        return x.item()
    return x


def _has_nd_numpy(objs: Any) -> bool:
    """True when a NumPy array with dimensions is among ``objs`` (also inside lists/tuples)."""
    for a in objs:
        if _is_np(a) and a.ndim > 0:
            return True
        if type(a) in (list, tuple) and _has_nd_numpy(a):
            return True
    return False


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


def _device_of(array_type: type, seq: Any) -> Any:
    for a in seq:
        if isinstance(a, array_type):
            return a.device
        if type(a) in (list, tuple):
            d = _device_of(array_type, a)
            if d is not None:
                return d
    return None


def _operand(array_type: type, ns: Any, a: Any, dev: Any) -> Any:
    """An elementwise operand for the device twin: pyaccel arrays and Python scalars as they
    are; a NumPy scalar or 0-d array as a strong 0-d array of its dtype on ``dev`` (NEP 50),
    uncommitted (it follows the device of the arrays it meets); ``HOST`` for anything else."""
    if isinstance(a, array_type) or type(a) in (bool, int, float, complex):
        return a
    if _is_np(a) and a.ndim == 0:
        np = _np()
        if a.dtype.kind not in "biufc":
            return HOST
        try:
            return ns.asarray(np.asarray(a), device=dev)._uncommit()
        except (TypeError, ns.UnsupportedDTypeError):
            return a.item()  # a dtype the device does not hold: a weak Python scalar
    return HOST


# ---------------------------------------------------------------------------
# the host path and writes into arguments
# ---------------------------------------------------------------------------
def _to_host(array_type: type, obj: Any, pairs: list) -> Any:
    """``obj`` with its pyaccel arrays (also inside lists / tuples) replaced by NumPy copies
    (``np.asarray``, a view on cpu:0); ``pairs`` collects (pyaccel array, host array)."""
    if isinstance(obj, array_type):
        h = _np().asarray(obj)
        pairs.append((obj, h))
        return h
    if type(obj) in (list, tuple):
        return type(obj)(_to_host(array_type, v, pairs) for v in obj)
    return obj


def _writable_host(array_type: type, obj: Any, pairs: list) -> Any:
    """As :func:`_to_host` for an argument NumPy writes into: a writeable host copy (or the
    cpu:0 view), remembered in ``pairs`` for the write back."""
    if isinstance(obj, array_type):
        h = _np().asarray(obj)
        if not h.flags.writeable:
            h = h.copy()
        pairs.append((obj, h))
        return h
    if type(obj) is tuple:
        return tuple(_writable_host(array_type, v, pairs) for v in obj)
    return obj


def _write_back(ns: Any, target: Any, host: Any) -> None:
    """Store the host array ``host`` (NumPy wrote into it) into the pyaccel array ``target``."""
    np = _np()
    view = target.device.ops.host_view(target)
    if view is not None and np.shares_memory(view, host):
        return  # cpu:0: NumPy wrote into the array's own memory
    target[...] = ns.asarray(np.asarray(host, dtype=target.dtype.numpy), device=target.device)


def _host_call(array_type: type, ns: Any, f: Callable[..., Any], args: tuple, kwargs: dict,
               written: tuple = ()) -> Any:
    """``f(*args, **kwargs)`` on host copies of the pyaccel arrays: NumPy's result. The
    arguments named by ``written`` (positions and keywords) and ``out=`` are written back."""
    pairs: list = []
    wpairs: list = []
    hargs = []
    for j, a in enumerate(args):
        hargs.append(_writable_host(array_type, a, wpairs) if j in written
                     else _to_host(array_type, a, pairs))
    hkw = {}
    for k, v in kwargs.items():
        hkw[k] = (_writable_host(array_type, v, wpairs) if k in written or k == "out"
                  else _to_host(array_type, v, pairs))
    res = f(*hargs, **hkw)
    for target, host in wpairs:
        _write_back(ns, target, host)
    if wpairs:  # NumPy returns out (or a tuple of outs): return the pyaccel arrays instead
        back = {id(h): t for t, h in wpairs}
        if isinstance(res, tuple):
            return type(res)(back.get(id(r), r) for r in res) if type(res) is tuple else res
        return back.get(id(res), res)
    return res


def _assign_out(ns: Any, name: str, out: Any, res: Any) -> Any:
    """NumPy's ``out=`` for a result computed on the device: copied into ``out`` (a pyaccel
    array: a device copy); returns ``out``. NumPy's ``same_kind`` casting and shape rules."""
    np = _np()
    outs = out if isinstance(out, tuple) else (out,)
    ress = res if isinstance(res, tuple) else (res,)
    if len(outs) != len(ress):
        raise ValueError(f"numpy.{name}: {len(outs)} out arrays for {len(ress)} results")
    for o, r in zip(outs, ress, strict=True):
        rd = r.dtype.numpy if hasattr(r, "dtype") else np.asarray(r).dtype
        if not np.can_cast(rd, o.dtype.numpy, "same_kind"):
            raise TypeError(f"numpy.{name}: cannot cast the result ({rd}) to the out array's "
                            f"dtype {o.dtype.name} with casting rule 'same_kind'")
        if tuple(getattr(r, "shape", ())) != o.shape:
            r = ns.broadcast_to(r, o.shape) if isinstance(r, type(o)) else r
        if isinstance(r, type(o)) and r.dtype is not o.dtype:
            r = ns.astype(r, o.dtype)
        o[...] = r
    return out


def _split_out(array_type: type, kwargs: dict) -> tuple[Any, dict]:
    """(the pyaccel ``out=`` argument or None, kwargs without it) — NumPy arrays as ``out``
    stay in kwargs (they send the call to the host)."""
    out = kwargs.get("out")
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    if out is None or (isinstance(out, tuple) and not out):
        return None, {k: v for k, v in kwargs.items() if k != "out"}
    outs = out if isinstance(out, tuple) else (out,)
    if all(isinstance(o, array_type) for o in outs):
        return out, {k: v for k, v in kwargs.items() if k != "out"}
    return None, kwargs


# ---------------------------------------------------------------------------
# __array_ufunc__
# ---------------------------------------------------------------------------
def array_ufunc(array_type: type, ns: Any, ufunc: Any, method: str, inputs: tuple,
                kwargs: dict) -> Any:
    """``Array.__array_ufunc__``: the pyaccel twin on the device, else NumPy on the host."""
    for a in (*inputs, *kwargs.values()):
        for b in (a if type(a) is tuple else (a,)):
            if (hasattr(b, "__array_ufunc__") and not isinstance(b, array_type)
                    and not _is_np(b) and b is not None):
                return NotImplemented  # another duck array: let it (or NumPy) decide
    out, kw = _split_out(array_type, kwargs)
    res = HOST
    if not _has_nd_numpy((*inputs, *kw.values())):
        res = _ufunc_device(array_type, ns, ufunc, method, inputs, dict(kw))
    if res is HOST:
        f = getattr(ufunc, method)
        if method == "at":
            return _host_call(array_type, ns, f, inputs, kwargs, written=(0,))
        return _host_call(array_type, ns, f, inputs, kwargs)
    if out is not None:
        return _assign_out(ns, ufunc.__name__, out, res)
    return res


def _ufunc_device(array_type: type, ns: Any, ufunc: Any, method: str, inputs: tuple,
                  kwargs: dict) -> Any:
    """The device twin's result, or HOST when the call has none that computes as NumPy."""
    name = ufunc.__name__
    if kwargs.pop("where", True) is not True or kwargs.pop("casting", "same_kind") != "same_kind":
        return HOST
    if kwargs.pop("order", "K") not in ("K", "A", "C") or kwargs.pop("subok", True) is not True:
        return HOST
    dtype = _dtype(ns, kwargs.pop("dtype", None)) if kwargs.get("dtype") is not None else None
    kwargs.pop("dtype", None)
    dev = _device_of(array_type, inputs)
    if method == "__call__":
        fname = SPECIAL_UFUNCS.get(name) or UFUNC_NAMES.get(name, name)
        f = getattr(ns, fname, None)
        if kwargs or f is None or (fname not in ns._elementwise_names and name not in SPECIAL_UFUNCS):
            return HOST
        args = [_operand(array_type, ns, a, dev) for a in inputs]
        if any(a is HOST for a in args) or not any(isinstance(a, array_type) for a in args):
            return HOST
        kinds = _UFUNC_HOST_KINDS.get(name, "")
        if any(isinstance(a, array_type) and a.dtype.kind in kinds for a in args):
            return HOST
        if dtype is not None:  # NumPy's loop for that dtype: the operands cast to it
            args = [ns.astype(a, dtype) if isinstance(a, array_type) else a for a in args]
        return f(*args)
    if len(inputs) != 1 or not isinstance(inputs[0], array_type):
        return HOST
    (x,) = inputs
    if method == "reduce" and name in REDUCE_NAMES:
        axis = _axis(kwargs.pop("axis", 0))
        keepdims = bool(kwargs.pop("keepdims", False))
        if kwargs.pop("initial", None) is not None or kwargs:
            return HOST
        red = getattr(ns, REDUCE_NAMES[name])
        if dtype is not None and name in ("add", "multiply"):
            return red(x, axis=axis, keepdims=keepdims, dtype=dtype)
        res = red(x, axis=axis, keepdims=keepdims)
        return ns.astype(res, dtype) if dtype is not None else res
    if method == "accumulate" and name in ACCUMULATE_NAMES:
        axis = kwargs.pop("axis", 0)
        if kwargs or x.ndim == 0 or not isinstance(axis, int):
            return HOST
        return getattr(ns, ACCUMULATE_NAMES[name])(x, axis=axis, dtype=dtype)
    return HOST  # outer, reduceat, at, and the other reductions: NumPy on the host


# ---------------------------------------------------------------------------
# __array_function__
# ---------------------------------------------------------------------------
Handler = Callable[..., Any]
FUNCTIONS: dict[str, Handler] = {}
# handlers that upload the NumPy members of their sequence argument (Dask builds such lists)
_UPLOADS_NUMPY = frozenset(("concatenate", "stack"))


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
    """``Array.__array_function__``: the pyaccel twin of the NumPy function on the device,
    else the NumPy function on host copies (NumPy's result).

    ``receiver``: the array whose method NumPy called; for ``np.empty(..., like=x)`` (NEP 35
    drops ``like`` from ``kwargs``) it is ``x``, so the result goes to ``x``'s device."""
    np = _np()
    for t in types:
        if not (issubclass(t, array_type) or issubclass(t, np.ndarray)):
            return NotImplemented  # another duck array: let it (or NumPy) decide
    name = func.__name__
    h = FUNCTIONS.get(name) if getattr(np, name, None) is func else None
    out, kw = _split_out(array_type, kwargs)
    res = HOST
    if h is not None and (name in _UPLOADS_NUMPY or not _has_nd_numpy((*args, *kw.values()))):
        hkw = {**kw, "like": receiver} if receiver is not None and name in _LIKE_FUNCS else kw
        try:
            _signature(h).bind(array_type, ns, *args, **hkw)
        except TypeError:  # arguments the twin does not take: NumPy on the host
            h = None
        try:
            res = HOST if h is None else h(array_type, ns, *args, **hkw)
        except IndexError as exc:  # a bad axis: NumPy's AxisError (also a ValueError)
            if isinstance(exc, ValueError):
                raise
            raise np.exceptions.AxisError(str(exc)) from exc
    if res is HOST:
        pos, key = INPLACE_FUNCTIONS.get(name, (-1, ""))
        return _host_call(array_type, ns, func, args, kwargs, written=(pos, key))
    if out is not None:
        return _assign_out(ns, name, out, res)
    return res


@functools.cache
def _signature(h: Handler) -> inspect.Signature:
    return inspect.signature(h)


def _upload_members(array_type: type, ns: Any, arrays: Any) -> list:
    arrays = list(arrays)
    dev = _device_of(array_type, arrays)
    return [a if isinstance(a, array_type) else ns.asarray(a, device=dev)._uncommit()
            for a in arrays]


@_handles("concatenate")
def _concatenate(at: type, ns: Any, arrays: Any, axis: Any = 0, out: Any = None, *,
                 dtype: Any = None, casting: Any = None) -> Any:
    if out is not None:
        return HOST
    res = ns.concat(_upload_members(at, ns, arrays), axis=axis)
    return ns.astype(res, _dtype(ns, dtype)) if dtype is not None else res


@_handles("stack")
def _stack(at: type, ns: Any, arrays: Any, axis: int = 0, out: Any = None, *, dtype: Any = None,
           casting: Any = None) -> Any:
    if out is not None:
        return HOST
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
        if out is not None:
            return HOST
        if kw.get("where", True) is not True or kw.get("initial") is not None:
            return HOST
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
        if out is not None:
            return HOST
        if kw.get("where", True) is not True or kw.get("initial") is not None:
            return HOST
        return getattr(ns, name)(a, axis=_axis(axis), keepdims=bool(keepdims))
    return h


for _n, _f in (("max", "max"), ("amax", "max"), ("min", "min"), ("amin", "min"),
               ("any", "any"), ("all", "all")):
    FUNCTIONS[_n] = _minmax(_f)


def _moment(name: str) -> Handler:
    def h(at: type, ns: Any, a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
          ddof: float = 0, keepdims: bool = False, **kw: Any) -> Any:
        if out is not None:
            return HOST
        if kw.get("where", True) is not True:
            return HOST
        res = getattr(ns, name)(a, axis=_axis(axis), correction=ddof, keepdims=bool(keepdims))
        return ns.astype(res, _dtype(ns, dtype)) if dtype is not None else res
    return h


FUNCTIONS["var"] = _moment("var")
FUNCTIONS["std"] = _moment("std")


def _arg(name: str) -> Handler:
    def h(at: type, ns: Any, a: Any, axis: Any = None, out: Any = None, *,
          keepdims: bool = False) -> Any:
        if out is not None:
            return HOST
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
    if out is not None:
        return HOST
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
        return HOST
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
    # NumPy's where: any condition counts by its truth value (nonzero, NaN is True); NumPy
    # scalars are strong operands. One argument (np.where(c) is nonzero): the host.
    if x is None or y is None or not isinstance(cond, at):
        return HOST
    x, y = _operand(at, ns, x, cond.device), _operand(at, ns, y, cond.device)
    if x is HOST or y is HOST:
        return HOST
    if cond.dtype is not ns.bool:
        cond = ns.astype(cond, ns.bool)
    return ns.where(cond, x, y)


@_handles("clip")
def _clip(at: type, ns: Any, a: Any, a_min: Any = None, a_max: Any = None, out: Any = None,
          *, min: Any = None, max: Any = None, **kw: Any) -> Any:  # noqa: A002
    if out is not None:
        return HOST
    lo = _scalar(a_min if a_min is not None else min)
    hi = _scalar(a_max if a_max is not None else max)
    return ns.clip(a, lo, hi)


@_handles("round", "around")
def _round(at: type, ns: Any, a: Any, decimals: int = 0, out: Any = None) -> Any:
    if out is not None:
        return HOST
    if decimals:
        return HOST
    return ns.round(a)


@_handles("cumsum")
def _cumsum(at: type, ns: Any, a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    if out is not None:
        return HOST
    if axis is None:
        a, axis = ns.reshape(a, (-1,)), 0
    return ns.cumulative_sum(a, axis=axis, dtype=_dtype(ns, dtype))


@_handles("cumprod")
def _cumprod(at: type, ns: Any, a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    if out is not None:
        return HOST
    if axis is None:
        a, axis = ns.reshape(a, (-1,)), 0
    return ns.cumulative_prod(a, axis=axis, dtype=_dtype(ns, dtype))


@_handles("diff")
def _diff(at: type, ns: Any, a: Any, n: int = 1, axis: int = -1, prepend: Any = None,
          append: Any = None) -> Any:
    ends = []
    for e in (prepend, append):
        if e is None:
            ends.append(None)
        elif isinstance(e, at):
            ends.append(e)
        else:  # NumPy broadcasts scalar ends along the axis
            e = _operand(at, ns, e, a.device)
            if e is HOST:
                return HOST
            if not isinstance(e, at):
                e = ns.asarray(e, dtype=a.dtype, device=a.device)
            shape = list(a.shape)
            shape[axis] = 1
            ends.append(ns.broadcast_to(e, tuple(shape)))
    return ns.diff(a, axis=axis, n=n, prepend=ends[0], append=ends[1])


@_handles("count_nonzero")
def _count_nonzero(at: type, ns: Any, a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    res = ns.count_nonzero(a, axis=_axis(axis), keepdims=bool(keepdims))
    return int(res) if axis is None and not keepdims else res  # NumPy: a Python int


@_handles("take_along_axis")
def _take_along_axis(at: type, ns: Any, arr: Any, indices: Any, axis: Any = -1) -> Any:
    if axis is None or not isinstance(indices, at):
        return HOST
    return ns.take_along_axis(arr, indices, axis=axis)


@_handles("may_share_memory", "shares_memory")
def _shares_memory(at: type, ns: Any, a: Any, b: Any, max_work: Any = None) -> Any:
    # two pyaccel arrays share memory when they share a buffer (views of one base); on
    # cpu:0 NumPy's exact answer on the host views; a pyaccel array and a NumPy array only on
    # cpu:0, where np.asarray(x) is a view of the buffer
    np = _np()
    if isinstance(a, at) and isinstance(b, at):
        if a._base is not b._base or not a.size or not b.size:
            return False
        va, vb = a.device.ops.host_view(a), b.device.ops.host_view(b)
        if va is not None and vb is not None:
            return bool(np.may_share_memory(va, vb) if max_work is None
                        else np.shares_memory(va, vb, max_work=max_work))
        return True
    views = [x.device.ops.host_view(x) if isinstance(x, at) else x for x in (a, b)]
    if any(v is None for v in views) or not all(_is_np(v) for v in views):
        return False
    return bool(np.may_share_memory(views[0], views[1]))


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
