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
import operator
import re
import struct as _struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .capabilities import Capability
from .device import Buffer, Device, as_bytes_view
from .dtypes import DType, from_wgsl
from .errors import (
    BackendUnavailableError,
    BufferFreedError,
    KernelCompileError,
    UnsupportedDTypeError,
    ValueOutOfRangeError,
)

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
_FN = re.compile(r"\bfn\s+(\w+)")
_IDENT = re.compile(r"(?<![\w.])[A-Za-z_]\w*")  # not a member (p.n)
_PARAM = re.compile(r"(\w+)\s*:")
_LOCAL = re.compile(r"\b(?:let|const|var)\s*(?:<[^>]*>)?\s*(\w+)")
_WGVAR = re.compile(r"var\s*<\s*workgroup\s*>\s*(\w+)\s*:\s*([^;]+);")
_CONST = re.compile(r"\bconst\s+(\w+)\s*(?::\s*[\w<>\s]+?)?\s*=\s*([^;]+);")
_INT_RANGE = {"i32": (-(2**31), 2**31 - 1), "u32": (0, 2**32 - 1)}
_FLOAT_MAX = {"f32": "3.4028235e38", "f16": "65504"}


def _pack_scalar(d: DType, v: Any, where: str) -> bytes:
    """``v`` packed as one WGSL scalar of dtype ``d``; a typed error naming ``where`` (the field
    or binding), its WGSL type, the value and the valid range when it does not fit."""
    t = d.wgsl or d.name
    if t in _INT_RANGE:
        lo, hi = _INT_RANGE[t]
        try:
            if isinstance(v, (str, bytes, float)):
                raise TypeError
            iv = operator.index(v)
        except TypeError:
            hint = "; pass an int (use // for integer division, int(x) to truncate)" if isinstance(
                v, float) or hasattr(v, "__float__") else ""
            raise UnsupportedDTypeError(
                f"{where} has WGSL type {t} and takes an int in [{lo}, {hi}]; got "
                f"{type(v).__name__} {v!r:.40}{hint}"
            ) from None
        if not lo <= iv <= hi:
            raise ValueOutOfRangeError(
                f"{where} has WGSL type {t}: value {iv} is outside its range [{lo}, {hi}]"
                + ("; use an i32 field for negative values" if t == "u32" and iv < 0 else "")
            )
        return _struct.pack("<" + d.char, iv)
    if t in _FLOAT_MAX:
        if isinstance(v, (str, bytes, complex)) or not hasattr(v, "__float__"):
            raise UnsupportedDTypeError(
                f"{where} has WGSL type {t} and takes a number (finite values up to "
                f"+-{_FLOAT_MAX[t]}); got {type(v).__name__} {v!r:.40}"
            )
        try:
            return _struct.pack("<" + d.char, float(v))
        except (OverflowError, _struct.error):
            raise ValueOutOfRangeError(
                f"{where} has WGSL type {t}: value {v!r:.40} is outside its range (finite values up "
                f"to +-{_FLOAT_MAX[t]}; inf and nan are allowed)"
            ) from None
    try:
        return _struct.pack("<" + d.char, v)
    except (_struct.error, TypeError, OverflowError) as exc:
        raise UnsupportedDTypeError(f"{where} has type {t}: value {v!r:.40} does not fit: {exc}") from None


def _wgsl_name(d: DType, components: int) -> str:
    return f"vec{components}<{d.wgsl}>" if components > 1 else str(d.wgsl)


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

    def pack(self, value: Any, what: str = "") -> bytes:
        """The struct's bytes from a dict or tuple of field values (each checked against its
        field's WGSL type: UnsupportedDTypeError / ValueOutOfRangeError name the field)."""
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
        prefix = f"{what}: " if what else ""
        for f, v in zip(self.fields, vals, strict=True):
            where = f"{prefix}uniform struct {self.name} field {f.name!r}"
            if f.components > 1:
                try:
                    items = list(v)
                except TypeError:
                    items = [v]
            else:
                items = [v]
            if len(items) != f.components:
                raise ValueError(
                    f"{where} ({_wgsl_name(f.dtype, f.components)}) needs {f.components} values, "
                    f"got {len(items)}"
                )
            size = f.dtype.storage_itemsize
            for i, item in enumerate(items):
                w = where if f.components == 1 else f"{where} component {i} of {_wgsl_name(f.dtype, f.components)}"
                out[f.offset + i * size: f.offset + (i + 1) * size] = _pack_scalar(f.dtype, item, w)
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
    r = _reflect(source)
    return r.bindings, r.entries, r.overrides


@dataclass
class _Reflection:
    bindings: list[Binding]
    entries: dict[str, tuple[str, ...]]
    overrides: dict[str, str]
    src: str  # the source with comments blanked (same positions as the original)
    structs: dict[str, StructLayout]
    wg_pos: dict[str, int]  # entry -> offset of its @workgroup_size attribute
    other_groups: list[tuple[str, str, str, int]]  # (group, binding, name, offset of @group)
    binding_pos: dict[str, int]  # group-0 binding name -> offset of its declaration


def _blank_comments(source: str) -> str:
    """The source with comments replaced by spaces (newlines kept), so offsets still match."""
    return _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), source)


def _reflect(source: str) -> _Reflection:
    src = _blank_comments(source)
    structs = _parse_structs(src)
    bindings = []
    other: list[tuple[str, str, str, int]] = []
    pos: dict[str, int] = {}
    for m in _VAR.finditer(src):
        attrs, space, access, name, typ = m.groups()
        a = dict(_ATTR.findall(attrs))
        if a.get("group", "0") != "0":
            other.append((a.get("group", "?"), a.get("binding", "?"), name, m.start()))
            continue
        pos[name] = m.start()
        typ = typ.strip()
        count = None
        comps = 1
        struct = None
        inner = typ
        mm = re.fullmatch(r"array\s*<\s*(.+?)\s*(?:,\s*(\w+)\s*)?>", typ)
        if mm:
            inner = mm.group(1)
            count = int(mm.group(2).rstrip("u")) if mm.group(2) and mm.group(2).rstrip("ui").isdigit() else None
        d, comps, _al, _sz, struct = _scalar_layout(inner, structs)
        bindings.append(Binding(int(a["binding"]), name, space,
                                "uniform" if space == "uniform" else (access or "read"),
                                typ, d, comps, count, struct))
    bindings.sort(key=lambda b: b.index)
    entries = {}
    wg_pos = {}
    for m in _ENTRY.finditer(src):
        attrs, fname = m.groups()
        w = _WGSIZE.search(attrs)
        entries[fname] = tuple(p.strip() for p in w.group(1).split(",") if p.strip()) if w else ("1",)
        wg_pos[fname] = m.start(1) + w.start() if w else m.start()
    overrides = {n: (v or "").strip() for n, v in _OVERRIDE.findall(src)}
    return _Reflection(bindings, entries, overrides, src, structs, wg_pos, other, pos)


def _function_bodies(src: str) -> dict[str, tuple[set[str], str]]:
    """fn name -> (names it declares: parameters and let/var/const, its body with braces);
    comments already blanked."""
    out = {}
    for m in _FN.finditer(src):
        i = src.find("{", m.end())
        if i < 0:
            continue
        depth = 0
        j = i
        for j in range(i, len(src)):
            c = src[j]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    break
        body = src[i: j + 1]
        sig = src[m.end(): i]
        params = sig[sig.find("(") + 1: sig.rfind(")")] if "(" in sig else ""
        local = set(_PARAM.findall(re.sub(r"@\w+\s*(\([^)]*\))?", "", params))) | set(_LOCAL.findall(body))
        out[m.group(1)] = (local, body)
    return out


def _used_names(src: str, entry: str) -> set[str] | None:
    """Identifiers the entry point (and the functions it calls) use, less the names each
    function declares itself (a parameter or local shadowing a module-scope variable): the
    module-scope variables among them are the ones WebGPU's automatic layout keeps. None
    when the entry point's body cannot be found (then treat everything as used)."""
    bodies = _function_bodies(src)
    if entry not in bodies:
        return None
    seen: set[str] = set()
    names: set[str] = set()
    todo = [entry]
    while todo:
        f = todo.pop()
        if f in seen or f not in bodies:
            continue
        seen.add(f)
        local, body = bodies[f]
        toks = set(_IDENT.findall(body))
        names |= toks - local
        todo.extend(t for t in toks if t in bodies and t not in seen)
    return names


def _line_col(src: str, pos: int) -> tuple[int, int]:
    line = src.count("\n", 0, pos) + 1
    return line, pos - (src.rfind("\n", 0, pos) + 1) + 1


def _source_error(source: str, pos: int, message: str) -> KernelCompileError:
    """A KernelCompileError pointing at ``pos`` of the user's WGSL (line, column, excerpt)."""
    line, col = _line_col(source, pos)
    text = source.splitlines()[line - 1] if source.splitlines() else ""
    excerpt = f"\n  {line:4d} | {text}\n         {' ' * (col - 1)}^"
    return KernelCompileError(f"{message} (line {line}, column {col}){excerpt}", line=line, column=col,
                              compiler_message=message, source=source)


def _eval_int(expr: str, env: dict[str, str], constants: dict[str, Any], depth: int = 0) -> int | None:
    """Integer value of a WGSL constant expression (literals, named const/override values,
    + - * / % << >>), or None when it cannot be evaluated here."""
    if depth > 20:
        return None
    import ast  # (imported here: only workgroup-memory checks need it)

    text = re.sub(r"\b(\d+)[iu]\b", r"\1", expr.strip())
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.floordiv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.LShift: operator.lshift, ast.RShift: operator.rshift}

    def ev(n: ast.AST) -> int | None:
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
            return n.value
        if isinstance(n, ast.Name):
            if n.id in constants:
                try:
                    return int(constants[n.id])
                except (TypeError, ValueError):
                    return None
            if env.get(n.id):
                return _eval_int(env[n.id], env, constants, depth + 1)
            return None
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            v = ev(n.operand)
            return None if v is None else (-v if isinstance(n.op, ast.USub) else v)
        if isinstance(n, ast.BinOp) and type(n.op) in ops:
            a, b = ev(n.left), ev(n.right)
            if a is None or b is None or (b == 0 and isinstance(n.op, (ast.Div, ast.FloorDiv, ast.Mod))):
                return None
            return ops[type(n.op)](a, b)
        return None

    return ev(tree)


def _type_size(t: str, structs: dict[str, StructLayout], env: dict[str, str],
               constants: dict[str, Any]) -> tuple[int, int] | None:
    """(size, align) in bytes of a WGSL type (WGSL layout rules), None when unknown here."""
    t = t.strip()
    m = re.fullmatch(r"array\s*<\s*(.+)\s*,\s*([^,<>]+?)\s*>", t)
    if m:
        inner = _type_size(m.group(1), structs, env, constants)
        n = _eval_int(m.group(2), env, constants)
        if inner is None or n is None:
            return None
        size, align = inner
        return (size + align - 1) // align * align * n, align
    m = re.fullmatch(r"mat([234])x([234])\s*(?:<\s*(\w+)\s*>|([fh]))", t)
    if m:
        cols, rows = int(m.group(1)), int(m.group(2))
        es = 2 if (m.group(3) or m.group(4)) in ("f16", "h") else 4
        align = es * (2 if rows == 2 else 4)
        return cols * align, align
    d, _n, align, size, struct = _scalar_layout(t, structs)
    if d is None and struct is None:
        return None
    return size, align


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
