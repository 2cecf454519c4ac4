"""Custom WGSL kernels with optional NumPy references.

``Kernel(source, entry="main", reference=None, name=None)`` reflects the
bindings of ``@group(0)`` from the source; calling it binds the arguments in
binding order and records a dispatch on the device (no wait).

Argument rules:

* a ``Buffer`` (or a pyaccel ``Array``) binds in place; it fixes the device;
* a host object (NumPy array, bytes-like) is uploaded to a temporary buffer. For a
  ``read_write`` binding the result is written back into it after the call
  (NumPy arrays in place; a writable bytearray/memoryview too); an immutable host
  object (``bytes``) on a read_write binding is refused;
* a uniform takes bytes, a NumPy scalar/structured scalar, a Python number (scalar
  uniform), or a dict / tuple of field values (struct uniform, packed with WGSL
  layout rules).

On the cpu device the kernel runs ``reference(*views)`` on NumPy views typed by
the reflected dtypes (outputs are written in place); without a reference it
raises :class:`BackendUnavailableError`.
"""

from __future__ import annotations

import hashlib
import math
import re
import struct as _struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .device import Buffer, Device, as_bytes_view
from .dtypes import DType, from_wgsl
from .errors import BackendUnavailableError, BufferFreedError

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_VAR = re.compile(
    r"((?:@\s*(?:group|binding)\s*\(\s*\w+\s*\)\s*){2})var\s*<\s*(storage|uniform)\s*(?:,\s*(read_write|read|write)\s*)?>"
    r"\s*(\w+)\s*:\s*([^;]+);"
)
_ATTR = re.compile(r"@\s*(group|binding)\s*\(\s*(\w+)\s*\)")
_STRUCT = re.compile(r"struct\s+(\w+)\s*\{([^}]*)\}", re.S)
_ENTRY = re.compile(r"@\s*compute\s*((?:@\s*\w+\s*(?:\([^)]*\))?\s*)*)fn\s+(\w+)")
_WGSIZE = re.compile(r"@\s*workgroup_size\s*\(([^)]*)\)")
_OVERRIDE = re.compile(r"override\s+(\w+)\s*(?::\s*\w+)?\s*(?:=\s*([^;]+))?;")
_VEC = re.compile(r"vec([234])\s*<\s*(\w+)\s*>|vec([234])([fiuh])$")
_SUFFIX = {"f": "f32", "i": "i32", "u": "u32", "h": "f16"}


@dataclass(frozen=True)
class Field:
    name: str
    dtype: DType
    components: int
    offset: int


@dataclass(frozen=True)
class StructLayout:
    """Host layout of a WGSL struct (WGSL alignment rules)."""

    name: str
    fields: tuple[Field, ...]
    size: int

    def pack(self, value: Any) -> bytes:
        if isinstance(value, dict):
            unknown = set(value) - {f.name for f in self.fields}
            missing = [f.name for f in self.fields if f.name not in value]
            if unknown or missing:
                raise ValueError(
                    f"uniform struct {self.name}: fields {[f.name for f in self.fields]}; "
                    f"missing {missing}, unknown {sorted(unknown)}"
                )
            vals = [value[f.name] for f in self.fields]
        elif isinstance(value, (tuple, list)):
            if len(value) != len(self.fields):
                raise ValueError(
                    f"uniform struct {self.name} has {len(self.fields)} fields "
                    f"({', '.join(f.name for f in self.fields)}), got {len(value)} values"
                )
            vals = list(value)
        else:
            raise TypeError(f"uniform struct {self.name}: pass a dict, tuple, bytes or NumPy record")
        out = bytearray(self.size)
        for f, v in zip(self.fields, vals, strict=True):
            items = list(v) if f.components > 1 else [v]
            if len(items) != f.components:
                raise ValueError(f"field {f.name} needs {f.components} values, got {len(items)}")
            fmt = "<" + f.dtype.char * f.components
            _struct.pack_into(fmt, out, f.offset, *items)
        return bytes(out)

    def numpy_dtype(self) -> Any:
        import numpy as np

        return np.dtype({
            "names": [f.name for f in self.fields],
            "formats": [(f.dtype.name, (f.components,)) if f.components > 1 else f.dtype.name
                        for f in self.fields],
            "offsets": [f.offset for f in self.fields],
            "itemsize": self.size,
        })


@dataclass(frozen=True)
class Binding:
    """One reflected ``@group(0) @binding(N)`` variable."""

    index: int
    name: str
    space: str  # "storage" | "uniform"
    access: str  # "read" | "read_write" | "uniform"
    wgsl_type: str
    dtype: DType | None  # element dtype (scalar of a vec), None for structs / unknown
    components: int = 1  # vecN elements
    count: int | None = None  # fixed array length, None = runtime-sized
    struct: StructLayout | None = None

    @property
    def writable(self) -> bool:
        return self.access == "read_write"

    @property
    def element_size(self) -> int:
        if self.struct is not None:
            return self.struct.size
        if self.dtype is None:
            return 1
        return self.dtype.storage_itemsize * (4 if self.components == 3 else self.components)

    @property
    def min_bytes(self) -> int:
        """Smallest buffer that satisfies the binding."""
        if self.space == "uniform" or self.count is not None:
            return self.element_size * (self.count or 1)
        return self.element_size


def _scalar_layout(t: str, structs: dict[str, StructLayout]) -> tuple[DType | None, int, int, int, StructLayout | None]:
    """(dtype, components, align, size, struct) of a WGSL type used in a struct or binding."""
    t = t.strip()
    d = from_wgsl(t)
    if d is not None:
        s = 2 if t == "f16" else 4
        return d, 1, s, s, None
    m = _VEC.fullmatch(t)
    if m:
        n = int(m.group(1) or m.group(3))
        st = m.group(2) or _SUFFIX[m.group(4)]
        d = from_wgsl(st)
        es = 2 if st == "f16" else 4
        align = es * (2 if n == 2 else 4)
        return d, n, align, es * n, None
    if t.startswith("atomic"):
        inner = t[t.index("<") + 1: t.rindex(">")].strip()
        return from_wgsl(inner), 1, 4, 4, None
    if t in structs:
        s = structs[t]
        align = max((_scalar_layout_align(f) for f in s.fields), default=4)
        return None, 1, align, s.size, s
    return None, 1, 4, 4, None


def _scalar_layout_align(f: Field) -> int:
    es = f.dtype.storage_itemsize if f.dtype is not None else 4
    return es if f.components == 1 else es * (2 if f.components == 2 else 4)


def _parse_structs(src: str) -> dict[str, StructLayout]:
    structs: dict[str, StructLayout] = {}
    for name, body in _STRUCT.findall(src):
        fields = []
        off = 0
        max_align = 4
        ok = True
        for member in body.split(","):
            member = re.sub(r"@\w+\s*(\([^)]*\))?", "", member).strip()
            if not member:
                continue
            if ":" not in member:
                ok = False
                break
            fname, ftype = (p.strip() for p in member.split(":", 1))
            d, n, align, size, _sub = _scalar_layout(ftype, structs)
            if d is None:
                ok = False
                break
            off = (off + align - 1) // align * align
            fields.append(Field(fname, d, n, off))
            off += size
            max_align = max(max_align, align)
        if ok and fields:
            structs[name] = StructLayout(name, tuple(fields), (off + max_align - 1) // max_align * max_align)
    return structs


def reflect(source: str) -> tuple[list[Binding], dict[str, tuple[str, ...]], dict[str, str]]:
    """(bindings, entry -> workgroup_size expressions, override name -> default) of WGSL source."""
    src = _COMMENT.sub("", source)
    structs = _parse_structs(src)
    bindings = []
    for attrs, space, access, name, typ in _VAR.findall(src):
        a = dict(_ATTR.findall(attrs))
        if a.get("group", "0") != "0":
            continue
        typ = typ.strip()
        count = None
        comps = 1
        struct = None
        inner = typ
        m = re.fullmatch(r"array\s*<\s*(.+?)\s*(?:,\s*(\w+)\s*)?>", typ)
        if m:
            inner = m.group(1)
            count = int(m.group(2).rstrip("u")) if m.group(2) and m.group(2).rstrip("ui").isdigit() else None
        d, comps, _al, _sz, struct = _scalar_layout(inner, structs)
        bindings.append(Binding(int(a["binding"]), name, space,
                                "uniform" if space == "uniform" else (access or "read"),
                                typ, d, comps, count, struct))
    bindings.sort(key=lambda b: b.index)
    entries = {}
    for attrs, fname in _ENTRY.findall(src):
        w = _WGSIZE.search(attrs)
        entries[fname] = tuple(p.strip() for p in w.group(1).split(",") if p.strip()) if w else ("1",)
    overrides = {n: (v or "").strip() for n, v in _OVERRIDE.findall(src)}
    return bindings, entries, overrides


def _int_expr(expr: str, constants: dict[str, Any], overrides: dict[str, str], what: str) -> int:
    e = expr.strip()
    if e in constants:
        return int(constants[e])
    if e in overrides and overrides[e]:
        return _int_expr(overrides[e], constants, overrides, what)
    m = re.fullmatch(r"(\d+)[iu]?", e)
    if m:
        return int(m.group(1))
    raise ValueError(
        f"{what}: cannot evaluate workgroup size {expr!r}; pass constants={{{e!r}: N}} or use workgroups=(x, y, z)"
    )


def _pos_int_tuple(v: Any, what: str) -> tuple[int, int, int]:
    if isinstance(v, int) and not isinstance(v, bool):
        v = (v,)
    if not isinstance(v, (tuple, list)) or not 1 <= len(v) <= 3:
        raise ValueError(f"{what} must be an int or a tuple of 1-3 ints, got {v!r}")
    out = []
    for x in v:
        if isinstance(x, bool) or not isinstance(x, int) or x <= 0:
            raise ValueError(f"{what} must be positive ints, got {v!r}; every dimension needs >= 1")
        out.append(x)
    return tuple(out + [1] * (3 - len(out)))  # type: ignore[return-value]


@dataclass
class _Arg:
    binding: Binding
    buffer: Buffer
    offset: int
    size: int
    host: Any = None  # host object to write back into
    temp: bool = False


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
        self.bindings, self._entries, self._overrides = reflect(source)
        if entry not in self._entries:
            found = ", ".join(self._entries) or "none"
            raise ValueError(
                f"Kernel {self.name!r}: no @compute entry point {entry!r} in the source (found: {found}); "
                "pass entry='name'"
            )
        self.hash = hashlib.sha1(source.encode()).hexdigest()[:12]
        # repeat calls on the same Buffers: (grid, workgroups, *id(arg)) -> (device lock,
        # pipeline, bind group, handles, nbytes, constants, workgroups, impl.dispatch_group)
        self._fast: dict[tuple, tuple] = {}
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
        """Bind ``args`` in binding order and record the dispatch; write back host read_write args."""
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
        dev, prepared, wg, consts = self._prepare(args, grid, workgroups, device, constants)
        with dev._lock:
            launched = self._launch(dev, prepared, wg, consts, grid)
            for a in prepared:
                if a.host is not None:
                    out = memoryview(a.host).cast("B") if not _is_numpy(a.host) else _np_bytes_view(a.host)
                    dev.impl.read(a.buffer.handle, 0, a.buffer.nbytes, out)
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
        """Async twin of ``__call__`` (awaits the write-back of host read_write args)."""
        dev, prepared, wg, consts = self._prepare(args, grid, workgroups, device, constants)
        with dev._lock:
            self._launch(dev, prepared, wg, consts, grid)
        for a in prepared:
            if a.host is not None:
                out = memoryview(a.host).cast("B") if not _is_numpy(a.host) else _np_bytes_view(a.host)
                await dev.impl.read_async(a.buffer.handle, 0, a.buffer.nbytes, out)
        _free_temps(prepared)

    def _launch(self, dev: Device, prepared: list[_Arg], wg: tuple[int, int, int],
                consts: dict[str, Any], grid: Any) -> tuple[Any, Any] | None:
        """Record the dispatch; returns (pipeline, bind group) on GPU devices."""
        if dev.is_cpu:
            self._run_reference(dev, prepared, grid, wg, consts)
            return None
        impl = dev.impl
        pipe = impl.pipeline(self.source, self.entry, consts, self.name)
        entries = [(a.binding.index, a.buffer.handle, a.offset, a.size) for a in prepared]
        return pipe, impl.dispatch(pipe, entries, wg)

    def _prepare(self, args: Sequence[Any], grid: Any, workgroups: Any, device: Any,
                 constants: dict[str, Any] | None) -> tuple[Device, list[_Arg], tuple[int, int, int], dict]:
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
        prepared: list[_Arg] = []
        try:
            for b, a in zip(self.bindings, args, strict=True):
                prepared.append(self._bind(dev, b, a))
        except BaseException:
            _free_temps(prepared)
            raise
        return dev, prepared, wg, consts  # type: ignore[return-value]

    def _bind(self, dev: Device, b: Binding, a: Any) -> _Arg:
        buf = _as_buffer(a)
        what = f"Kernel {self.name!r} argument {b.name!r} (binding {b.index}, {b.access} {b.wgsl_type})"
        if buf is not None:
            if buf.nbytes < b.min_bytes:
                raise ValueError(
                    f"{what}: buffer of {buf.nbytes} bytes is smaller than the {b.min_bytes} bytes the "
                    "binding needs; allocate a larger buffer"
                )
            size = buf.nbytes if dev.is_cpu else max(4, (buf.nbytes + 3) & ~3)
            if b.space == "uniform":
                size = b.min_bytes if b.min_bytes > 1 else size
            return _Arg(b, buf, 0, size)
        if b.space == "uniform":
            data = self._pack_uniform(b, a, what)
            if dev.is_cpu:
                tmp = dev.malloc(len(data))
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
                raise TypeError(
                    f"{what}: NumPy array has dtype {a.dtype.name} but the binding holds {want}; "
                    f"convert with arr.astype(np.{want})"
                )
        mv = as_bytes_view(a, what)
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
        tmp.write(mv)
        return _Arg(b, tmp, 0, tmp.nbytes if dev.is_cpu else max(4, (tmp.nbytes + 3) & ~3), host, True)

    def _pack_uniform(self, b: Binding, a: Any, what: str) -> bytes:
        need = b.min_bytes
        if b.struct is not None and isinstance(a, (dict, tuple, list)):
            data = b.struct.pack(a)
        elif b.struct is None and b.dtype is not None and isinstance(a, (int, float, bool, list, tuple)):
            vals = list(a) if isinstance(a, (list, tuple)) else [a]
            if len(vals) != b.components:
                raise ValueError(f"{what}: needs {b.components} value(s), got {len(vals)}")
            try:
                data = _struct.pack("<" + b.dtype.char * b.components, *vals)
            except _struct.error as exc:
                raise ValueError(f"{what}: value {a!r} does not fit {b.wgsl_type}: {exc}") from None
            data += b"\0" * (need - len(data))
        else:
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
