"""Where an op runs when its arrays are on different devices: the *committed* rule
(JAX's; docs/arrays.md, "Devices of arrays made without device=").

An array is **committed** to its device when it was placed there explicitly — created with
``device=``, moved with ``to_device`` / ``asarray(x, device=...)`` — or computed from a
committed array. An array created without ``device=`` (it lands on the current device,
``pyaccel.get_device()``) and everything computed only from such arrays is
**uncommitted**. When an op meets arrays on different devices:

* the committed arrays must all be on one device, and the op runs there: each uncommitted
  array on another device is copied to it first (so SciPy's ``xp.asarray(n, dtype=x.dtype)``
  helpers follow ``x`` to ``vulkan:0``);
* committed arrays on two devices raise ``ValueError`` naming both devices and the fix
  (``x.to_device(...)``); so do uncommitted arrays on two devices with no committed one;
* the result is committed iff an input was (or ``device=`` was given).

The rule is one function, :func:`resolve`, used by every namespace function: the elementwise
functions call it from their slow path, the others through :func:`placed` (applied by
:func:`place_module` at the end of each namespace module). It never looks at the kind of a
device.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .array import Array, asarray
from .device import Device

__all__ = ["mark", "place_module", "placed", "resolve"]


def _arrays(objs: Any, out: list) -> None:
    for a in objs:
        if type(a) is Array:
            out.append(a)
        elif type(a) in (list, tuple):
            _arrays(a, out)


def _error(a: Array, b: Array, what: str) -> ValueError:
    where = f"{what}: " if what else ""
    if a._committed and b._committed:
        return ValueError(
            f"{where}arrays are on different devices ({a.device.uri} and {b.device.uri}), and both "
            f"were placed there explicitly (device= or to_device); move one with "
            f"x.to_device({a.device.uri!r}) before combining them")
    if a._committed or b._committed:  # the committed one meets an array that cannot move
        c, u = (a, b) if a._committed else (b, a)
        return ValueError(
            f"{where}arrays are on different devices ({c.device.uri}, placed explicitly, and "
            f"{u.device.uri}, the array written into); move one with "
            f"x.to_device({u.device.uri!r}) before combining them")
    return ValueError(
        f"{where}arrays are on different devices ({a.device.uri} and {b.device.uri}) and none was "
        "placed explicitly, so none says where to run; create them with device=... (or move one "
        f"with x.to_device({a.device.uri!r})) before combining them")


def target(arrays: list[Array], what: str = "", pinned: Array | None = None) -> Device:
    """The device an op on ``arrays`` runs on (the rule above); raises ValueError when the
    rule gives none. ``pinned``: an array that cannot move (the target of ``x[...] = v``):
    the others go to its device when they are uncommitted."""
    dev = arrays[0].device
    if all(a.device is dev for a in arrays):
        return dev
    if pinned is not None:
        for a in arrays:
            if a.device is not pinned.device and a._committed:
                raise _error(a, pinned, what)
        return pinned.device
    pool = [a for a in arrays if a._committed] or arrays
    dev = pool[0].device
    for a in pool[1:]:
        if a.device is not dev:
            raise _error(pool[0], a, what)
    return dev


def _move(obj: Any, dev: Device) -> Any:
    if type(obj) is Array:
        if obj.device is dev:
            return obj
        moved = asarray(obj, device=dev)
        moved._committed = False  # a copy made by the rule stays uncommitted
        return moved
    if type(obj) in (list, tuple):
        return type(obj)(_move(v, dev) for v in obj)
    return obj


def resolve(args: tuple, kwargs: dict | None = None, what: str = "",
            pinned: int | None = None) -> tuple[tuple, dict | None, bool]:
    """(args, kwargs, committed): the arguments with every uncommitted array on another device
    copied to the op's device (the arguments themselves when nothing moves), and whether the
    result is committed (an input array is, or ``device=`` was given)."""
    found: list[Array] = []
    _arrays(args, found)
    if kwargs:
        _arrays(kwargs.values(), found)
    explicit = bool(kwargs) and kwargs.get("device") is not None
    if not found:
        return args, kwargs, explicit
    committed = explicit or any(a._committed for a in found)
    dev = found[0].device
    if all(a.device is dev for a in found):
        return args, kwargs, committed
    pin = args[pinned] if pinned is not None and type(args[pinned]) is Array else None
    dev = target(found, what, pin)
    args = tuple(_move(a, dev) for a in args)
    if kwargs:
        kwargs = {k: _move(v, dev) for k, v in kwargs.items()}
    return args, kwargs, committed


def mark(res: Any, committed: bool, inputs: tuple, explicit: bool = False) -> Any:
    """Give the op's new result arrays (also inside a returned tuple / list) the committed
    flag; an input returned as the result keeps its own, unless ``device=`` was explicit."""
    if type(res) is Array:
        if any(res is a for a in inputs):
            if explicit:
                res._committed = True
        elif not committed:
            res._committed = False
    elif isinstance(res, (tuple, list)):
        for r in res:
            mark(r, committed, inputs, explicit)
    return res


def placed(f: Callable[..., Any], pinned: int | None = None) -> Callable[..., Any]:
    """``f`` under the rule: arguments resolved by :func:`resolve`, the result marked."""
    name = f.__name__

    @functools.wraps(f)
    def g(*args: Any, **kwargs: Any) -> Any:
        args2, kwargs2, committed = resolve(args, kwargs, name, pinned)
        res = f(*args2, **(kwargs2 or {}))
        flat: list[Array] = []
        _arrays(args2, flat)
        if kwargs2:
            _arrays(kwargs2.values(), flat)
        return mark(res, committed, tuple(flat), bool(kwargs) and kwargs.get("device") is not None)

    g.__pyaccel_placed__ = True  # type: ignore[attr-defined]
    return g


def place_module(g: dict[str, Any], names: Any, pinned: dict[str, int] | None = None) -> None:
    """Put the public functions ``names`` of a namespace module (its ``globals()``) under the
    rule (classes and non-functions are left alone)."""
    pinned = pinned or {}
    for n in names:
        f = g.get(n)
        if callable(f) and not isinstance(f, type) and not getattr(f, "__pyaccel_placed__", False):
            g[n] = placed(f, pinned.get(n))
