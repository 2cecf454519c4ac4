"""``pyaccel.jit``: trace a function's kernel sequence once per signature, replay it (docs/jit.md).

The first call of a jitted function for a *signature* (the array arguments' shapes, dtypes,
devices and layouts, which arguments share a buffer, the values of every other argument, the
fusion switch) runs the function normally with a recorder installed on the device
(``GPUDeviceImpl._rec``; the hooks are in ``runtime/webgpu_common.py``). The recorder sees
every buffer allocation and release, parameter block, host write, device copy and dispatch the
op layer makes, and classifies each buffer a dispatch binds:

* an **argument** (the base buffer of an array argument): rebound to the call's argument;
* a **slot**: a buffer allocated during the trace (an op output, an intermediate); replay
  allocates a fresh one at the same point and releases it where the trace released it;
* a **parameter block** (``impl.uniform``): copied once into a buffer the trace owns;
* a **captured** buffer (an array from a closure or a global, a device-internal buffer):
  bound by identity; the trace keeps its ``Buffer`` alive.

Later calls with the same signature replay the recorded events into the open encoder under the
device lock: no op, fusion tree, kernel lookup or shape computation runs in Python. A host
read inside the traced function (``bool(x)``, ``float(x)``, ``x.item()``, ``to_numpy``, and
every op whose result shape depends on the data: ``nonzero``, ``unique_*``, boolean masks,
the host-path ops) raises :class:`~pyaccel.errors.JitError` naming the call.

On ``cpu:0`` (or with no array argument) the wrapper calls the function directly.
"""

from __future__ import annotations

import functools
import gc
import sys
from collections.abc import Callable
from typing import Any

from ._lru import LRU
from .array import Array
from .device import Buffer
from .errors import JitError

TRACE_CACHE = 64  # traces kept per jitted function (least recently used evicted)

# event kinds of a trace
_ALLOC, _RELEASE, _DISPATCH, _COPY, _WRITE = range(5)
# buffer kinds of the replay table
_ARG, _SLOT, _CONST, _UNI = range(4)

_FRIENDLY = {
    "Array.__bool__": "bool(x)", "Array.__float__": "float(x)", "Array.__int__": "int(x)",
    "Array.__index__": "operator.index(x)", "Array.__complex__": "complex(x)",
    "Array.item": "x.item()", "Array.tolist": "x.tolist()", "Array.to_numpy": "x.to_numpy()",
    "Array.__array__": "numpy.asarray(x)", "Array.__repr__": "repr(x)", "Array.__str__": "str(x)",
    "Array.__getitem__": "x[key] (boolean-mask / data-dependent indexing)",
    "Array.__setitem__": "x[key] = v (boolean-mask assignment)",
    "Array.tobytes": "x.tobytes()", "Array.__iter__": "iter(x)", "Array.__format__": "format(x)",
    "Array.to_numpy_async": "await x.to_numpy_async()", "Array.tolist_async": "x.tolist_async()",
}


def _api_call() -> tuple[str, str]:
    """The pyaccel call the user's code made that led here, and where the user made it."""
    f = sys._getframe(2)
    block: list[tuple[str, Any]] = []  # the pyaccel frames below the first user frame
    while f is not None:
        mod = f.f_globals.get("__name__", "")
        if mod == "pyaccel" or mod.startswith("pyaccel."):
            if mod != __name__:
                block.append((mod, f))
        elif block:
            break
        f = f.f_back
    named = [(m, fr, getattr(fr.f_code, "co_qualname", fr.f_code.co_name)) for m, fr in block]
    named = [t for t in named if "<locals>" not in t[2]]  # (skip decorators' wrappers)
    if not named:
        return "a host read", "?"
    mod, fr, qual = named[-1]
    where = f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else "?"
    if qual.startswith("Array."):
        return _FRIENDLY.get(qual, qual), where
    head = mod if mod in ("pyaccel.linalg", "pyaccel.fft", "pyaccel.nn") else "pyaccel"
    return f"{head}.{qual}", where


class _Recorder:
    """Installed as ``impl._rec`` while a trace runs (the tracing thread holds the device lock)."""

    def __init__(self, impl: Any, fn_name: str, arg_handles: list[Any]) -> None:
        self.impl = impl
        self.fn_name = fn_name
        self.table: list[tuple] = []  # ref -> (kind, ...)
        self.cur: dict[int, int] = {}  # GPUBuffer.id -> ref (what the handle holds now)
        self.events: list[tuple] = []
        self.alive: dict[int, int] = {}  # slot ref -> nbytes, not released yet
        self.groups: dict[int, tuple] = {}  # id(bind group from dispatch) -> binds
        self.keep: list[Any] = []  # bind groups seen (their ids stay valid)
        self.error: JitError | None = None
        self.ndispatches = 0
        self.arg_refs = []
        for i, h in enumerate(arg_handles):
            r = self.cur.get(h.id)
            if r is None:
                r = self.cur[h.id] = self._new((_ARG, i))
            self.arg_refs.append(r)

    def _new(self, entry: tuple) -> int:
        self.table.append(entry)
        return len(self.table) - 1

    def ref(self, h: Any) -> int:
        r = self.cur.get(h.id)
        if r is None:  # captured: find the Buffer that owns it, and keep it alive
            owner = next((o for o in gc.get_referrers(h) if type(o) is Buffer and o._handle is h), None)
            r = self.cur[h.id] = self._new((_CONST, h, owner))
        return r

    def _muted(self, fn: Callable[..., Any], *args: Any) -> Any:
        impl = self.impl
        impl._rec = None
        try:
            return fn(*args)
        finally:
            impl._rec = self

    # -- the hooks -------------------------------------------------------------------
    def alloc(self, nbytes: int, output: bool) -> Any:
        impl = self.impl
        h = self._muted(impl.alloc_output if output else impl.alloc, nbytes)
        r = self.cur[h.id] = self._new((_SLOT, nbytes))
        self.alive[r] = nbytes
        self.events.append((_ALLOC, r, nbytes, output))
        return h

    def released(self, h: Any) -> None:
        r = self.cur.get(h.id)
        if r is not None and r in self.alive:
            del self.alive[r], self.cur[h.id]
            self.events.append((_RELEASE, r))

    def uniform(self, data: bytes) -> Any:
        h = self._muted(self.impl.uniform, data)
        self.cur[h.id] = self._new((_UNI, bytes(data)))
        return h

    def write(self, h: Any, offset: int, data: memoryview) -> None:
        self.events.append((_WRITE, self.ref(h), offset, bytes(data)))
        self._muted(self.impl.write, h, offset, data)

    def copy(self, src: Any, so: int, dst: Any, do: int, n: int) -> None:
        self.events.append((_COPY, self.ref(src), so, self.ref(dst), do, n))
        self._muted(self.impl.copy, src, so, dst, do, n)

    def _record(self, pipeline: Any, binds: tuple, handles: Any, wg: tuple) -> None:
        refs = tuple(self.ref(h) for h in handles)
        self.events.append((_DISPATCH, pipeline, ("jit", id(pipeline), binds), binds, refs, tuple(wg)))
        self.ndispatches += 1

    def dispatch(self, pipeline: Any, entries: Any, wg: tuple) -> Any:
        binds = tuple((b, o, s) for b, _h, o, s in entries)
        self._record(pipeline, binds, [e[1] for e in entries], wg)
        group = self._muted(self.impl.dispatch, pipeline, entries, wg)
        self.groups[id(group)] = binds
        self.keep.append(group)
        return group

    def dispatch_bound(self, pipeline: Any, key: int, binds: Any, handles: Any, wg: tuple) -> None:
        self._record(pipeline, tuple((b, 0, s) for b, s in binds), handles, wg)
        self._muted(self.impl.dispatch_bound, pipeline, key, binds, handles, wg)

    def dispatch_group(self, pipeline: Any, group: Any, handles: Any, wg: tuple) -> None:
        binds = self.groups.get(id(group))
        if binds is None:  # a group made before the trace (pyaccel.Kernel's repeat-call cache)
            for k, (g, _p) in list(self.impl._groups.items()):
                if g is group and len(k) == len(handles) + 1 and all(isinstance(e, tuple) for e in k[1:]):
                    binds = tuple((b, o, s) for b, _i, o, s in k[1:])
                    break
        if binds is None:
            self.fail("a dispatch with a bind group made outside the trace", "?")
        self._record(pipeline, binds, handles, wg)
        self._muted(self.impl.dispatch_group, pipeline, group, handles, wg)

    def read(self) -> None:
        call, where = _api_call()
        self.fail(call, where)

    def fail(self, call: str, where: str) -> None:
        err = JitError(
            f"pyaccel.jit: {call} reads device data on the host inside the traced function "
            f"{self.fn_name!r} (called at {where}). A trace records kernels only, so nothing in it "
            "may depend on the values of one call: host reads (bool(x), float(x), x.item(), "
            "x.to_numpy(), printing an array) and ops whose result shape depends on the data "
            "(nonzero, unique_*, boolean-mask indexing, the host-path ops) cannot be traced. Fix: "
            "move that call out of the jitted function (jit the parts before and after it), or "
            "pass the value in as a Python argument (static: each new value traces again)"
        )
        self.error = err
        raise err


class Trace:
    """One recorded signature of a jitted function: the events to replay and the outputs."""

    def __init__(self, rec: _Recorder, dev: Any, out_spec: Any, out_desc: list[tuple]) -> None:
        impl = dev.impl
        self.device = dev
        self.events = rec.events
        self.ndispatches = rec.ndispatches
        self.arg_refs = rec.arg_refs
        self.out_spec = out_spec
        self.out_desc = out_desc
        self.owned: list[tuple[Any, int]] = []  # the trace's parameter blocks
        self.consts: list[tuple[int, Any, Any]] = []  # (ref, handle, owner Buffer or None)
        self._keep = (rec.keep, [e[1] for e in rec.events if e[0] == _DISPATCH])
        template: list[Any] = [None] * len(rec.table)
        blocks: dict[bytes, Any] = {}
        with impl.lock:
            for r, ent in enumerate(rec.table):
                if ent[0] == _UNI:
                    h = blocks.get(ent[1])
                    if h is None:
                        data = ent[1]
                        h = blocks[data] = impl.alloc(len(data))
                        impl.write(h, 0, memoryview(data + b"\0" * (-len(data) % 4)))
                        self.owned.append((h, len(data)))
                    template[r] = h
                elif ent[0] == _CONST:
                    template[r] = ent[1]
                    self.consts.append((r, ent[1], ent[2]))
        self.template = template
        self.end_release = [r for r in rec.alive if not any(d[0] == _SLOT and d[1] == r for d in out_desc)]
        self.alive = rec.alive
        # (the parameter blocks go back to the pool when the trace is dropped)
        self._fin = _finalizer(self, impl, self.owned)

    def replay(self, leaves: list[Array]) -> Any:
        dev = self.device
        impl = dev.impl
        bufs = self.template.copy()
        for r, a in zip(self.arg_refs, leaves):  # noqa: B905 (the signature fixes the count)
            if bufs[r] is None:
                bufs[r] = a._b.handle  # (BufferFreedError for a freed argument)
        for _r, h, owner in self.consts:
            if owner is not None and owner._handle is not h:
                raise JitError(
                    f"pyaccel.jit: an array the traced function captured (a closure or global, "
                    f"{owner.nbytes} bytes on {dev.uri}) was freed since the trace; its buffer may hold "
                    "other data now. Fix: keep captured arrays alive, or pass them as arguments"
                )
        nbytes: dict[int, int] = {}
        with impl.lock:
            impl._check()
            for ev in self.events:
                k = ev[0]
                if k == _DISPATCH:
                    _, pipe, prefix, binds, refs, wg = ev
                    hs = tuple([bufs[r] for r in refs])
                    group = impl._bind_group(prefix + tuple([h.id for h in hs]), pipe,
                                             lambda binds=binds, hs=hs: [(b, h.buf, o, s) for (b, o, s), h
                                                                         in zip(binds, hs)])  # noqa: B905
                    impl._dispatch_group(pipe, group, hs, wg)
                elif k == _ALLOC:
                    bufs[ev[1]] = impl.alloc_output(ev[2]) if ev[3] else impl.alloc(ev[2])
                    nbytes[ev[1]] = ev[2]
                elif k == _RELEASE:
                    impl.release(bufs[ev[1]], nbytes[ev[1]])
                elif k == _COPY:
                    impl._copy(bufs[ev[1]], ev[2], bufs[ev[3]], ev[4], ev[5])
                else:
                    impl._write(bufs[ev[1]], ev[2], memoryview(ev[3]))
            for r in self.end_release:
                impl.release(bufs[r], nbytes[r])
        made: dict[int, Buffer] = {}
        outs = []
        for d in self.out_desc:
            kind, r = d[0], d[1]
            if kind == _SLOT:
                buf = made.get(r)
                if buf is None:
                    buf = made[r] = Buffer(dev, bufs[r], d[2])
            elif kind == _ARG:
                buf = leaves[r]._b
            else:
                buf = d[2]
            outs.append(_array(buf, d[3]))
        return _unflatten(self.out_spec, iter(outs))


def _finalizer(obj: Any, impl: Any, owned: list[tuple[Any, int]]) -> Any:
    import weakref

    def free(impl: Any = impl, owned: list = owned) -> None:
        for h, n in owned:
            impl.release(h, n)

    return weakref.finalize(obj, free)


def _meta(a: Array) -> tuple:
    return (a._offset, a._strides, a._shape, a._dtype, a._device, a._committed)


def _array(buf: Buffer, meta: tuple) -> Array:
    a = object.__new__(Array)
    a._b = buf
    a._lazy = None
    a._offset, a._strides, a._shape, a._dtype, a._device, a._committed = meta
    return a


# -- argument and result structures ---------------------------------------------------------
def _static_key(v: Any, what: str) -> Any:
    if isinstance(v, float):
        return ("f", v.hex())  # (-0.0 and nan are values of their own)
    try:
        hash(v)
    except TypeError:
        raise TypeError(
            f"pyaccel.jit: {what} is a {type(v).__name__} ({v!r:.60}), which is neither a pyaccel Array "
            "nor hashable. Non-array arguments are static (part of the trace signature: each new value "
            "traces again) and must be hashable. Fix: pass device data as a pyaccel Array "
            "(pyaccel.asarray(x, device=...)), or a tuple instead of a list"
        ) from None
    if type(v).__module__ == "numpy" and hasattr(v, "dtype"):
        return ("np", type(v).__name__, repr(v))
    return (type(v), v)


def _flatten(obj: Any, leaves: list[Array], what: str) -> Any:
    if isinstance(obj, Array):
        leaves.append(obj)
        return "A"
    t = type(obj)
    if t is tuple or t is list:
        return (t, tuple(_flatten(v, leaves, f"{what}[{i}]") for i, v in enumerate(obj)))
    if t is dict:
        return (dict, tuple((k, _flatten(obj[k], leaves, f"{what}[{k!r}]")) for k in obj))
    if type(obj).__module__ == "numpy" and hasattr(obj, "shape") and getattr(obj, "ndim", 0):
        raise TypeError(
            f"pyaccel.jit: {what} is a NumPy array of shape {obj.shape}: a trace would upload its "
            "values once and replay them. Fix: pass pyaccel.asarray(x, device=...) (an argument), "
            "or a tuple of numbers (static)"
        )
    return ("s", _static_key(obj, what))


def _out_flatten(obj: Any, leaves: list[Array]) -> Any:
    if isinstance(obj, Array):
        leaves.append(obj)
        return "A"
    t = type(obj)
    if t is tuple or t is list:
        return (t, tuple(_out_flatten(v, leaves) for v in obj))
    if t is dict:
        return (dict, tuple((k, _out_flatten(v, leaves)) for k, v in obj.items()))
    return ("s", obj)


def _unflatten(spec: Any, it: Any) -> Any:
    if spec == "A":
        return next(it)
    kind, body = spec
    if kind == "s":
        return body
    if kind is dict:
        return {k: _unflatten(s, it) for k, s in body}
    return kind(_unflatten(s, it) for s in body)


class Jitted:
    """The wrapper :func:`jit` returns: call it as the function it wraps (``__wrapped__``)."""

    def __init__(self, fn: Callable[..., Any], static_argnums: tuple[int, ...],
                 static_argnames: tuple[str, ...]) -> None:
        functools.update_wrapper(self, fn)
        self.__wrapped__ = fn
        self.static_argnums = static_argnums
        self.static_argnames = static_argnames
        self.trace_count = 0  # traces made (a new signature, or a trace evicted from the cache)
        self.replay_count = 0
        self._cache: LRU = LRU(TRACE_CACHE)

    def __repr__(self) -> str:
        return f"<pyaccel.jit of {getattr(self.__wrapped__, '__qualname__', self.__wrapped__)!r}>"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def clear(self) -> None:
        """Drop every trace (the next call of each signature traces again)."""
        self._cache.clear()

    def traces(self) -> list[Trace]:
        """The cached traces (most recently used last)."""
        return list(self._cache.values())

    def _signature(self, args: tuple, kwargs: dict, leaves: list[Array]) -> tuple:
        n = len(args)
        snums = {i + n if i < 0 else i for i in self.static_argnums}
        parts = []
        for i, a in enumerate(args):
            if i in snums:
                parts.append(("static", _static_key(a, f"static argument {i}")))
            else:
                parts.append(_flatten(a, leaves, f"argument {i}"))
        for k in sorted(kwargs):
            v = kwargs[k]
            if k in self.static_argnames:
                parts.append((k, "static", _static_key(v, f"static argument {k!r}")))
            else:
                parts.append((k, _flatten(v, leaves, f"argument {k!r}")))
        return tuple(parts)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from .ops import fusion  # (loaded with the GPU op layer; cheap when already imported)

        fn = self.__wrapped__
        leaves: list[Array] = []
        spec = self._signature(args, kwargs, leaves)
        dev = None
        for a in leaves:
            d = a._device
            if dev is None:
                dev = d
            elif d is not dev:
                raise JitError(
                    f"pyaccel.jit: the array arguments of {fn.__name__!r} are on {dev.uri} and {d.uri}; a "
                    "trace records one device's kernels. Fix: move them to one device (x.to_device(...))"
                )
        if dev is None or dev.is_cpu or not hasattr(dev.impl, "_rec"):
            return fn(*args, **kwargs)  # cpu (NumPy, eager) or no device data: nothing to trace
        impl = dev.impl
        if impl._rec is not None:  # called inside another trace: its recorder records the ops
            return fn(*args, **kwargs)
        for a in leaves:
            if a._lazy is not None:
                a._base  # noqa: B018 (materialise a lazy argument: the trace binds buffers)
        first: dict[int, int] = {}
        lay = tuple((a._shape, a._dtype, a._offset, a._strides, a._b.nbytes, a._committed,
                     first.setdefault(id(a._b), i)) for i, a in enumerate(leaves))
        key = (spec, lay, fusion.enabled(), dev)
        readers = fusion._READERS
        for a in leaves:  # lazy arrays reading an argument's buffer: computed before a write
            if readers.get(a._b):
                fusion.before_write(a)
        t = self._cache.get(key)
        if t is None:
            with impl.lock:
                t = self._cache.get(key)
                if t is None:
                    return self._trace(key, dev, leaves, args, kwargs)
        with impl.lock:
            self.replay_count += 1
            return t.replay(leaves)

    def _trace(self, key: tuple, dev: Any, leaves: list[Array], args: tuple, kwargs: dict) -> Any:
        impl = dev.impl
        fn = self.__wrapped__
        rec = _Recorder(impl, getattr(fn, "__qualname__", repr(fn)), [a._b.handle for a in leaves])
        impl._rec = rec
        try:
            out = fn(*args, **kwargs)
            out_leaves: list[Array] = []
            out_spec = _out_flatten(out, out_leaves)
            descs = []
            for o in out_leaves:
                if o._device is not dev:
                    raise JitError(
                        f"pyaccel.jit: {fn.__name__!r} returned an array on {o._device.uri}, not on the "
                        f"device of its arguments ({dev.uri}). Fix: return arrays on that device"
                    )
                buf = o._base  # (a lazy result is computed here, inside the trace)
                r = rec.ref(buf.handle)
                ent = rec.table[r]
                if ent[0] == _SLOT:
                    descs.append((_SLOT, r, buf.nbytes, _meta(o)))
                elif ent[0] == _ARG:
                    descs.append((_ARG, ent[1], None, _meta(o)))
                else:
                    descs.append((_CONST, r, buf, _meta(o)))
            if rec.error is not None:  # the function caught the JitError and went on
                raise rec.error
        finally:
            impl._rec = None
        t = Trace(rec, dev, out_spec, descs)
        self._cache.put(key, t)
        self.trace_count += 1
        return out


def jit(fn: Callable[..., Any] | None = None, *, static_argnums: int | tuple[int, ...] = (),
        static_argnames: str | tuple[str, ...] = ()) -> Any:
    """Trace ``fn`` on its first call per signature and replay the recorded kernels later.

    ``@pyaccel.jit`` or ``pyaccel.jit(fn, static_argnums=..., static_argnames=...)``. The
    signature is the array arguments' (shape, dtype, device, layout, buffer sharing), the
    value of every other argument (non-array arguments are always static; the two options
    mark array-free arguments static by position or name explicitly), and the fusion switch.
    Host reads and data-dependent shapes inside ``fn`` raise :class:`pyaccel.JitError`.
    On ``cpu:0`` the wrapper calls ``fn``. See docs/jit.md."""
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    for v in nums:
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"pyaccel.jit: static_argnums must be ints, got {v!r}")
    for v in names:
        if not isinstance(v, str):
            raise TypeError(f"pyaccel.jit: static_argnames must be strings, got {v!r}")
    if fn is None:
        return functools.partial(jit, static_argnums=nums, static_argnames=names)
    if not callable(fn):
        raise TypeError(f"pyaccel.jit(fn): fn must be callable, got {type(fn).__name__} {fn!r:.60}")
    return Jitted(fn, nums, names)


__all__ = ["TRACE_CACHE", "JitError", "Jitted", "Trace", "jit"]
