"""Custom WGSL kernels with optional NumPy references.

``Kernel(source, entry="main", reference=None, name=None)`` reflects the
bindings of ``@group(0)`` from the source; calling it binds the arguments in
binding order and records a dispatch on the device (no wait).

Argument rules:

* a ``Buffer`` binds in place (its bytes are the kernel's to interpret); it fixes the device;
* a pyaccel ``Array`` binds in place too, but only when its dtype is the binding's element
  type: float32 for ``array<f32>``, int32 for ``array<i32>`` / ``atomic<i32>``, uint32 for
  ``u32``, float16 for ``f16`` (for a struct element type: the dtype of one of its fields).
  Any other dtype raises :class:`~pyaccel.errors.UnsupportedDTypeError` naming the binding
  and the fix (``x.astype(pyaccel.float32)``): a kernel reads raw bytes and would
  reinterpret them. bool, int8, int16, uint8 and uint16 are stored widened to 32 bits on
  WebGPU devices but not on cpu, so they too must be converted (``astype(pyaccel.int32)``
  / ``uint32``): the rule is the same on every device;
* a host object (NumPy array, bytes-like) is uploaded to a temporary buffer. For a
  ``read_write`` binding the result is written back into it after the call
  (NumPy arrays in place; a writable bytearray/memoryview too); an immutable host
  object (``bytes``) on a read_write binding is refused. A NumPy array must have the
  binding's element dtype; non-native byte order (``'>f4'``) is converted on upload and
  written back in the caller's byte order;
* a uniform takes bytes, a NumPy scalar/structured scalar, a Python number (scalar
  uniform), or a dict / tuple of field values (struct uniform, packed with WGSL
  layout rules). Each value is checked against its field's WGSL type: an int field
  (i32/u32) takes an int in its range, a float field (f32/f16) a finite-range number; a
  wrong type raises ``UnsupportedDTypeError`` (a TypeError), an out-of-range value
  :class:`~pyaccel.errors.ValueOutOfRangeError` (an OverflowError and ValueError), each
  naming the field, its type, the value and the valid range.

Bindings and limits:

* a binding the entry point never uses (WebGPU's automatic layout drops it) still takes an
  argument, which is checked, but is not bound on GPU devices;
* only ``@group(0)`` is bound: a kernel whose entry point uses a binding of another group
  is refused at construction with a :class:`~pyaccel.errors.KernelCompileError` that names
  the group and points at the declaration (move it to ``@group(0)``). Declarations of other
  groups that the entry point does not use are ignored;
* before each dispatch the evaluated ``@workgroup_size`` (after ``override`` constants) is
  checked against ``device.limits`` (``max_workgroup_size_x/y/z``,
  ``max_invocations_per_workgroup``) and the ``var<workgroup>`` memory the entry point uses
  against ``max_workgroup_storage_size``; a violation raises ``KernelCompileError`` with the
  line and column of the attribute or declaration.

Threads: a call runs its whole device sequence (uploads of host arguments, uniform blocks,
bind group, dispatch, write-back) under the device lock, so any number of threads may call
kernels on one device. ``call_async`` holds the lock for its synchronous parts only, never
across an ``await``.

On a device with ``Capability.KERNELS_RUN_REFERENCE`` (cpu) the kernel runs
``reference(*views)`` on NumPy views typed by the reflected dtypes (outputs are written in
place); without a reference it raises :class:`BackendUnavailableError`.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ._wgsl_reflect import (  # noqa: F401  (re-exported: tests and ops use kernel.<name>)
    _ATTR,
    _COMMENT,
    _CONST,
    _ENTRY,
    _FLOAT_MAX,
    _FN,
    _IDENT,
    _INT_RANGE,
    _LOCAL,
    _OVERRIDE,
    _PARAM,
    _STRUCT,
    _SUFFIX,
    _VAR,
    _VEC,
    _WGSIZE,
    _WGVAR,
    Binding,
    Field,
    StructLayout,
    _blank_comments,
    _eval_int,
    _function_bodies,
    _int_expr,
    _line_col,
    _pack_scalar,
    _parse_structs,
    _pos_int_tuple,
    _reflect,
    _Reflection,
    _scalar_layout,
    _scalar_layout_align,
    _source_error,
    _type_size,
    _used_names,
    _wgsl_name,
    reflect,
)
from .capabilities import Capability
from .device import Buffer, Device, as_bytes_view
from .dtypes import DType
from .errors import (
    BackendUnavailableError,
    BufferFreedError,
    UnsupportedDTypeError,
)


@dataclass
class _Arg:
    binding: Binding
    buffer: Buffer
    offset: int
    size: int
    host: Any = None  # host object to write back into
    temp: bool = False
    native: Any = None  # native-byte-order NumPy copy of a non-native host array (write-back)


class Kernel:
    """A user WGSL compute kernel (see module docstring)."""

    def __init__(self, source: str, entry: str = "main", reference: Callable[..., Any] | None = None,
                 name: str | None = None, *, constants: dict[str, float] | None = None) -> None:
        if not isinstance(source, str) or not source.strip():
            raise TypeError(f"Kernel(source): expected WGSL source text, got {source!r:.60}")
        self.source = source
        self.entry = entry
        self.reference = reference
        self.name = name or entry
        self.constants = dict(constants or {})
        r = _reflect(source)
        self.bindings, self._entries, self._overrides = r.bindings, r.entries, r.overrides
        if entry not in self._entries:
            found = ", ".join(self._entries) or "none"
            raise ValueError(
                f"Kernel {self.name!r}: no @compute entry point {entry!r} in the source (found: {found}); "
                "pass entry='name'"
            )
        used = _used_names(r.src, entry)
        for group, binding, vname, pos in r.other_groups:
            if used is None or vname in used:
                free = max((b.index for b in self.bindings), default=-1) + 1
                raise _source_error(
                    source, pos,
                    f"Kernel {self.name!r}: {vname!r} is declared in @group({group}) @binding({binding}) "
                    f"and used by entry point {entry!r}, but pyaccel kernels bind @group(0) only "
                    f"(arguments follow @group(0) binding order); declare it as @group(0) "
                    f"@binding({free}) (a free binding number) and pass it as an argument",
                )
        # the bindings the entry point uses: WebGPU's automatic layout has only these
        self._used = frozenset(b.index for b in self.bindings if used is None or b.name in used)
        self._wg_pos = r.wg_pos[entry]
        env = {n: v for n, v in _CONST.findall(r.src)}
        env.update({n: v for n, v in self._overrides.items() if v})
        self._env = env
        self._wg_vars = [(m.group(1), m.group(2), m.start()) for m in _WGVAR.finditer(r.src)
                         if used is None or m.group(1) in used]
        self._structs = r.structs
        self.hash = hashlib.sha1(source.encode()).hexdigest()[:12]
        # repeat calls on the same Buffers: (grid, workgroups, *id(arg)) -> (device lock,
        # pipeline, bind group, handles, nbytes, constants, workgroups, impl.dispatch_group)
        self._fast: dict[tuple, tuple] = {}
        self._limits_ok: set[tuple] = set()  # (device limits, *constants) that passed
        self._ref_takes_grid = False
        if reference is not None:
            try:
                import inspect  # (imported here: it costs ~10 ms at `import pyaccel`)

                self._ref_takes_grid = "grid" in inspect.signature(reference).parameters
            except (TypeError, ValueError):
                pass

    def __repr__(self) -> str:
        bs = ", ".join(f"{b.index}:{b.name}<{b.access}>" for b in self.bindings)
        try:
            wg: Any = self.workgroup_size()
        except ValueError:  # an override without a default: show the expressions
            wg = ", ".join(self._entries[self.entry])
        return f"<pyaccel.Kernel {self.name!r} [{bs}] workgroup_size={wg}>"

    def workgroup_size(self, constants: dict[str, Any] | None = None) -> tuple[int, int, int]:
        c = {**self.constants, **(constants or {})}
        exprs = self._entries[self.entry]
        vals = [_int_expr(e, c, self._overrides, f"Kernel {self.name!r}") for e in exprs]
        return tuple(vals + [1] * (3 - len(vals)))  # type: ignore[return-value]

    # -- call -----------------------------------------------------------------
    def __call__(self, *args: Any, grid: Any = None, workgroups: Any = None, device: Any = None,
                 constants: dict[str, Any] | None = None) -> None:
        """Bind ``args`` in binding order and record the dispatch; write back host read_write args.

        The whole device sequence runs under the device lock (threads may share a device)."""
        if device is None and not constants and self._fast:
            # repeat call on the same Buffers: skip validation and binding (checked when cached)
            try:
                hit = self._fast.get((grid, workgroups, *map(id, args)))
            except TypeError:  # unhashable grid
                hit = None
            if hit is not None and (not self.constants or hit[5] == self.constants):
                handles = hit[3]
                for a, h, n in zip(args, handles, hit[4]):  # noqa: B905 (same length by key)
                    if a._handle is not h or a.nbytes != n:
                        break
                else:
                    with hit[0]:
                        hit[7](hit[1], hit[2], handles, hit[6])
                    return
        dev, wg, consts = self._resolve(args, grid, workgroups, device, constants)
        with dev._lock:
            prepared = self._bind_all(dev, args)
            try:
                launched = self._launch(dev, prepared, wg, consts, grid)
                for a in prepared:
                    if a.host is not None:
                        _write_back(dev, a)
            finally:
                _free_temps(prepared)
        if launched is not None and device is None and not constants and all(type(a) is Buffer for a in args):
            try:
                key = (grid, workgroups, *map(id, args))
            except TypeError:
                return
            if len(self._fast) >= 64:
                self._fast.clear()
            pipe, group = launched
            self._fast[key] = (dev._lock, pipe, group, tuple(a._handle for a in args),
                               tuple(a.nbytes for a in args), dict(self.constants), wg,
                               dev.impl.dispatch_group)

    async def call_async(self, *args: Any, grid: Any = None, workgroups: Any = None, device: Any = None,
                         constants: dict[str, Any] | None = None) -> None:
        """Async twin of ``__call__`` (awaits the write-back of host read_write args).

        Uploads, binding and the dispatch run under the device lock; the lock is released
        before the write-back reads are awaited."""
        dev, wg, consts = self._resolve(args, grid, workgroups, device, constants)
        with dev._lock:
            prepared = self._bind_all(dev, args)
            try:
                self._launch(dev, prepared, wg, consts, grid)
            except BaseException:
                _free_temps(prepared)
                raise
        try:
            for a in prepared:
                if a.host is not None:
                    await _write_back_async(dev, a)
        finally:
            _free_temps(prepared)

    def _launch(self, dev: Device, prepared: list[_Arg], wg: tuple[int, int, int],
                consts: dict[str, Any], grid: Any) -> tuple[Any, Any] | None:
        """Record the dispatch (caller holds the device lock); returns (pipeline, bind group)
        when the device ran the WGSL (None when it ran the reference)."""
        if Capability.KERNELS_RUN_REFERENCE in dev.capabilities:
            self._run_reference(dev, prepared, grid, wg, consts)
            return None
        impl = dev.impl
        pipe = impl.pipeline(self.source, self.entry, consts, self.name)
        used = self._used
        entries = [(a.binding.index, a.buffer.handle, a.offset, a.size) for a in prepared
                   if a.binding.index in used]
        return pipe, impl.dispatch(pipe, entries, wg)

    def _resolve(self, args: Sequence[Any], grid: Any, workgroups: Any, device: Any,
                 constants: dict[str, Any] | None) -> tuple[Device, tuple[int, int, int], dict]:
        """Check the call (no device state touched): (device, workgroups, constants)."""
        from .registry import as_device

        if len(args) != len(self.bindings):
            names = ", ".join(f"{b.name} (binding {b.index}, {b.access})" for b in self.bindings)
            raise TypeError(
                f"Kernel {self.name!r} takes {len(self.bindings)} argument(s) in binding order: {names}; "
                f"got {len(args)}"
            )
        if (grid is None) == (workgroups is None):
            raise ValueError(
                f"Kernel {self.name!r}: pass exactly one of grid=(x[, y[, z]]) (invocations) or "
                f"workgroups=(x[, y[, z]]); got grid={grid!r}, workgroups={workgroups!r}"
            )
        consts = {**self.constants, **(constants or {})}
        # the device: from Buffer/Array args, else device=, else the current device
        arg_devs = []
        seen: dict[int, Binding] = {}
        for b, a in zip(self.bindings, args, strict=True):
            if b.writable and getattr(a, "_strides", None) is not None:
                raise ValueError(
                    f"Kernel {self.name!r}: argument {b.name!r} (binding {b.index}, {b.access}) is a "
                    f"strided view (shape {a.shape}) into another array's buffer, which a kernel "
                    "cannot write through; pass a plain array (pyaccel.asarray(v, copy=True)) and "
                    "store it back with v[...] = out"
                )
            buf = _as_buffer(a)
            if buf is not None:
                if buf.freed:
                    raise BufferFreedError(
                        f"Kernel {self.name!r}: argument {b.name!r} (binding {b.index}) is a freed buffer; "
                        "allocate a new one"
                    )
                other = seen.setdefault(id(buf.handle), b)
                if other is not b and (b.writable or other.writable):
                    # WebGPU refuses a writable binding that aliases another one (at submit time,
                    # taking the other batched work down with it): refuse it here, on every device.
                    raise ValueError(
                        f"Kernel {self.name!r}: the same buffer is bound to {other.name!r} (binding "
                        f"{other.index}, {other.access}) and {b.name!r} (binding {b.index}, {b.access}); "
                        "a read_write binding may not alias another binding: pass a copy "
                        "(dst.copy_from(src)) or a separate output buffer"
                    )
                arg_devs.append((b.name, buf.device))
        uniq = {id(d): d for _, d in arg_devs}
        if len(uniq) > 1:
            where = ", ".join(f"{n} on {d.uri}" for n, d in arg_devs)
            raise ValueError(
                f"Kernel {self.name!r}: arguments live on different devices ({where}); "
                "move them to one device first (array.to_device(...) / read and re-upload)"
            )
        if uniq:
            dev = next(iter(uniq.values()))
            if device is not None and as_device(device) is not dev:
                raise ValueError(
                    f"Kernel {self.name!r}: device={device!r} but the buffer arguments live on {dev.uri}"
                )
        else:
            dev = as_device(device)
        if workgroups is not None:
            wg = _pos_int_tuple(workgroups, "workgroups")
        else:
            g = _pos_int_tuple(grid, "grid")
            wsz = self.workgroup_size(consts)
            wg = tuple(math.ceil(g[i] / wsz[i]) for i in range(3))  # type: ignore[assignment]
        lim = dev.limits.max_workgroups_per_dimension
        if max(wg) > lim:
            raise ValueError(
                f"Kernel {self.name!r}: {wg} workgroups exceed the device limit of {lim} per dimension "
                f"on {dev.uri} (grid={grid!r}); spread the work over the y/z grid dimensions "
                "(index = gid.x + gid.y * num_workgroups.x * workgroup_size.x) or loop inside the kernel"
            )
        for b, a in zip(self.bindings, args, strict=True):
            if _as_buffer(a) is not None and not isinstance(a, Buffer):
                self._check_array_dtype(b, a)
        self._check_limits(dev, consts)
        return dev, wg, consts  # type: ignore[return-value]

    def _check_array_dtype(self, b: Binding, a: Any) -> None:
        """Refuse a pyaccel Array whose dtype is not the binding's element type (see module doc)."""
        dt = getattr(a, "dtype", None)
        if not isinstance(dt, DType):
            return
        if b.struct is not None:
            ok = [f.dtype for f in b.struct.fields]
        elif b.dtype is not None:
            ok = [b.dtype]
        else:
            return  # a type the reflection does not know (matrices, ...): bytes as they are
        if any(dt is d for d in ok):
            return
        elem = b.struct.name if b.struct is not None else _wgsl_name(b.dtype, 1)  # type: ignore[arg-type]
        names = " or ".join(sorted({d.name for d in ok}))
        widened = (f" ({dt.name} is stored widened to 32 bits on WebGPU devices but not on cpu, so "
                   "kernels take only 32-bit (or float16) arrays)" if dt.itemsize < 4 and dt.wgsl != "f16" else "")
        keep = " and pass the converted array (the kernel writes into it)" if b.writable else ""
        raise UnsupportedDTypeError(
            f"Kernel {self.name!r} argument {b.name!r} (binding {b.index}, {b.access} {b.wgsl_type}): "
            f"a pyaccel Array of dtype {dt.name} cannot bind to {b.wgsl_type}: the kernel would read "
            f"its bytes as {elem} without converting them{widened}; convert it first with "
            f"x.astype(pyaccel.{sorted({d.name for d in ok})[0]}){keep} (the binding takes {names})"
        )

    def _check_limits(self, dev: Device, consts: dict[str, Any]) -> None:
        """Workgroup size and workgroup memory against ``dev.limits`` (KernelCompileError that
        points at the attribute or declaration)."""
        lim = dev.limits
        try:
            key = (lim, *sorted(consts.items()))
            if key in self._limits_ok:
                return
        except TypeError:  # unorderable constants: check every time
            key = None
        self._check_limits_uncached(dev, consts)
        if key is not None:
            if len(self._limits_ok) >= 64:
                self._limits_ok.clear()
            self._limits_ok.add(key)

    def _check_limits_uncached(self, dev: Device, consts: dict[str, Any]) -> None:
        lim = dev.limits
        try:
            wsz = self.workgroup_size(consts)
        except ValueError:
            wsz = None  # an override without a value: the compiler reports it
        if wsz is not None:
            exprs = self._entries[self.entry]
            ov = [e for e in exprs if e in self._overrides or e in consts]
            via = f" (from override {', '.join(f'{e}={consts.get(e, self._overrides.get(e))}' for e in ov)})" if ov else ""
            fix = ("; use a smaller workgroup (grid= counts invocations, so the number of workgroups "
                   "grows to match) or run it on a device with a larger limit")
            for axis, n, cap in zip("xyz", wsz, (lim.max_workgroup_size_x, lim.max_workgroup_size_y,
                                                 lim.max_workgroup_size_z), strict=True):
                if n > cap:
                    raise _source_error(
                        self.source, self._wg_pos,
                        f"Kernel {self.name!r}: @workgroup_size{wsz}{via} is {n} in {axis}, above the "
                        f"device limit max_workgroup_size_{axis} = {cap} on {dev.uri}{fix}")
            total = wsz[0] * wsz[1] * wsz[2]
            if total > lim.max_invocations_per_workgroup:
                raise _source_error(
                    self.source, self._wg_pos,
                    f"Kernel {self.name!r}: @workgroup_size{wsz}{via} is {total} invocations per "
                    f"workgroup, above the device limit max_invocations_per_workgroup = "
                    f"{lim.max_invocations_per_workgroup} on {dev.uri}{fix}")
        if self._wg_vars:
            total = 0
            sizes = []
            for vname, typ, pos in self._wg_vars:
                st = _type_size(typ, self._structs, self._env, consts)
                if st is None:
                    return  # a size we cannot evaluate here: the compiler checks it
                size = (st[0] + 15) // 16 * 16
                total += size
                sizes.append((vname, size, pos))
            cap = lim.max_workgroup_storage_size
            if total > cap:
                biggest = max(sizes, key=lambda t: t[1])
                parts = ", ".join(f"{n} {s} bytes" for n, s, _ in sizes)
                raise _source_error(
                    self.source, biggest[2],
                    f"Kernel {self.name!r}: entry point {self.entry!r} uses {total} bytes of workgroup "
                    f"memory (var<workgroup>: {parts}), above the device limit "
                    f"max_workgroup_storage_size = {cap} on {dev.uri}; use smaller tiles")

    def _bind_all(self, dev: Device, args: Sequence[Any]) -> list[_Arg]:
        """Bind every argument (caller holds the device lock); temporaries are freed on error."""
        prepared: list[_Arg] = []
        try:
            for b, a in zip(self.bindings, args, strict=True):
                prepared.append(self._bind(dev, b, a))
        except BaseException:
            _free_temps(prepared)
            raise
        return prepared

    def _bind(self, dev: Device, b: Binding, a: Any) -> _Arg:
        buf = _as_buffer(a)
        what = f"Kernel {self.name!r} argument {b.name!r} (binding {b.index}, {b.access} {b.wgsl_type})"
        if buf is not None:
            if buf.nbytes < b.min_bytes:
                raise ValueError(
                    f"{what}: buffer of {buf.nbytes} bytes is smaller than the {b.min_bytes} bytes the "
                    "binding needs; allocate a larger buffer"
                )
            size = max(4, (buf.nbytes + 3) & ~3)
            if b.space == "uniform":
                size = b.min_bytes if b.min_bytes > 1 else size
            return _Arg(b, buf, 0, size)
        if b.space == "uniform":
            data = self._pack_uniform(b, a, what)
            if Capability.KERNELS_RUN_REFERENCE in dev.capabilities:
                tmp = dev.malloc(len(data))  # the reference reads a NumPy view of it
                tmp.write(data)
                return _Arg(b, tmp, 0, len(data), temp=True)
            h = dev.impl.uniform(data)
            return _Arg(b, _UniformRef(dev, h, len(data)), 0, (len(data) + 3) & ~3)
        # host storage argument: upload (and write back if read_write)
        if isinstance(a, (int, float, complex)) or a is None:
            raise TypeError(
                f"{what}: expected a Buffer, a pyaccel Array, a NumPy array or a bytes-like object, "
                f"got {type(a).__name__} {a!r:.40}"
            )
        if _is_numpy(a) and b.dtype is not None:
            want = b.dtype.name
            if a.dtype.name != want:
                raise UnsupportedDTypeError(
                    f"{what}: NumPy array has dtype {a.dtype.name} but the binding holds {want}; "
                    f"convert with arr.astype(np.{want})"
                )
        native = None
        src = a
        if _is_numpy(a) and not a.dtype.isnative:
            # '>f4' on a little-endian host: upload native bytes, write back in the caller's order
            src = native = a.astype(a.dtype.newbyteorder("="))
        mv = as_bytes_view(src, what)
        if mv.nbytes < b.min_bytes:
            raise ValueError(f"{what}: {mv.nbytes} bytes given, the binding needs at least {b.min_bytes}")
        if b.element_size > 1 and mv.nbytes % b.element_size and b.struct is None:
            raise ValueError(
                f"{what}: {mv.nbytes} bytes is not a whole number of {b.element_size}-byte elements"
            )
        host = None
        if b.writable:
            if isinstance(a, bytes) or (isinstance(a, memoryview) and a.readonly) or (
                _is_numpy(a) and (not a.flags.writeable or not a.flags.c_contiguous)
            ):
                raise TypeError(
                    f"{what}: a read_write binding needs a writable, C-contiguous host object to write "
                    "the result back into (bytearray, NumPy array) or a Buffer; got "
                    f"{type(a).__name__}"
                )
            host = a
        tmp = dev.malloc(mv.nbytes)
        try:
            tmp.write(mv)
        except BaseException:
            tmp.free()
            raise
        return _Arg(b, tmp, 0, max(4, (tmp.nbytes + 3) & ~3), host, True, native)

    def _pack_uniform(self, b: Binding, a: Any, what: str) -> bytes:
        need = b.min_bytes
        if b.struct is not None and isinstance(a, (dict, tuple, list)):
            data = b.struct.pack(a, what)
        elif b.struct is None and b.dtype is not None and isinstance(a, (int, float, bool, list, tuple)):
            vals = list(a) if isinstance(a, (list, tuple)) else [a]
            if len(vals) != b.components:
                raise ValueError(f"{what}: needs {b.components} value(s), got {len(vals)}")
            data = b"".join(_pack_scalar(b.dtype, v, what if b.components == 1 else f"{what} component {i}")
                            for i, v in enumerate(vals))
            data += b"\0" * (need - len(data))
        else:
            if _is_numpy(a) and not a.dtype.isnative:
                import numpy as np

                a = np.asarray(a).astype(a.dtype.newbyteorder("="))
            try:
                data = bytes(as_bytes_view(a, what))
            except TypeError:
                raise TypeError(
                    f"{what}: a uniform takes bytes, a NumPy scalar/record, a number, or a dict/tuple "
                    f"of the struct fields; got {type(a).__name__}"
                ) from None
        if len(data) != need:
            raise ValueError(
                f"{what}: uniform data is {len(data)} bytes but {b.wgsl_type} is {need} bytes; "
                "pack every field (WGSL alignment rules apply: vec3 aligns to 16 bytes)"
            )
        return data

    # -- cpu ------------------------------------------------------------------
    def _run_reference(self, dev: Device, prepared: list[_Arg], grid: Any, wg: Any, consts: dict) -> None:
        if self.reference is None:
            raise BackendUnavailableError(
                f"Kernel {self.name!r} has no NumPy reference, so it cannot run on {dev.uri}: pass "
                "reference=fn (same argument order, writes outputs in place) to pyaccel.Kernel, or run "
                "it on a GPU device"
            )
        views = [_numpy_view(a) for a in prepared]
        kw = {}
        if self._ref_takes_grid:
            kw["grid"] = _pos_int_tuple(grid, "grid") if grid is not None else tuple(
                w * s for w, s in zip(wg, self.workgroup_size(consts), strict=True))
        self.reference(*views, **kw)


class _UniformRef:
    """A Buffer-like view of a cached uniform block (never freed by the call)."""

    def __init__(self, device: Device, handle: Any, nbytes: int) -> None:
        self.device = device
        self.handle = handle
        self.nbytes = nbytes
        self.freed = False

    def free(self) -> None:
        pass


def _as_buffer(a: Any) -> Buffer | None:
    if isinstance(a, Buffer):
        return a
    get = getattr(a, "__pyaccel_buffer__", None)
    return get() if get is not None else None


def _is_numpy(a: Any) -> bool:
    return type(a).__module__ == "numpy" and hasattr(a, "dtype") and hasattr(a, "flags")


def _np_bytes_view(a: Any) -> memoryview:
    return memoryview(a.reshape(-1).view("uint8"))


def _host_out(a: _Arg) -> memoryview:
    """The bytes a read_write result is read into: the host object, or its native-order copy."""
    dst = a.native if a.native is not None else a.host
    return _np_bytes_view(dst) if _is_numpy(dst) else memoryview(dst).cast("B")


def _write_back(dev: Device, a: _Arg) -> None:
    dev.impl.read(a.buffer.handle, 0, a.buffer.nbytes, _host_out(a))
    if a.native is not None:
        a.host[...] = a.native  # back to the caller's byte order


class _PrefixLocked:
    """Await ``coro`` running only its synchronous prefix (up to its first suspension) under
    ``lock``: a device read's copy + submit is then atomic with respect to other threads,
    and the lock is never held across the wait for the GPU."""

    def __init__(self, coro: Any, lock: Any) -> None:
        self.coro = coro
        self.lock = lock

    def __await__(self) -> Any:
        coro = self.coro
        with self.lock:
            try:
                pending = coro.send(None)
            except StopIteration as stop:
                return stop.value
        while True:
            try:
                sent = yield pending
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # cancellation: pass it in
                try:
                    pending = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    pending = coro.send(sent)
                except StopIteration as stop:
                    return stop.value


async def _write_back_async(dev: Device, a: _Arg) -> None:
    await _PrefixLocked(dev.impl.read_async(a.buffer.handle, 0, a.buffer.nbytes, _host_out(a)), dev._lock)
    if a.native is not None:
        a.host[...] = a.native


def _free_temps(prepared: list[_Arg]) -> None:
    for a in prepared:
        if a.temp:
            a.buffer.free()


def _numpy_view(a: _Arg) -> Any:
    import numpy as np

    raw = a.buffer.handle[: a.buffer.nbytes]
    b = a.binding
    if b.struct is not None:
        dt = b.struct.numpy_dtype()
        n = len(raw) // dt.itemsize
        arr = raw[: n * dt.itemsize].view(dt)
        return arr[0] if b.space == "uniform" else arr
    if b.dtype is None:
        return raw
    dt = np.dtype(b.dtype.name if b.dtype.wgsl != "u32" or b.dtype.name == "uint32" else "uint32")
    if b.dtype.name == "bool":
        dt = np.dtype("uint32")
    n = len(raw) // dt.itemsize
    arr = raw[: n * dt.itemsize].view(dt)
    if b.components > 1:
        per = 4 if b.components == 3 else b.components
        arr = arr[: len(arr) // per * per].reshape(-1, per)[:, : b.components]
    if b.space == "uniform" and b.components == 1:
        return arr[0]
    return arr


__all__ = ["Binding", "Kernel", "StructLayout", "reflect"]
