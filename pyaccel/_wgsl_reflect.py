"""WGSL source reflection for :class:`pyaccel.Kernel`: bindings, struct layouts, entry
points, workgroup sizes, override constants and the functions an entry point reaches
(regular expressions over comment-blanked source; no compiler needed, so it runs on cpu too)."""
from __future__ import annotations

import operator
import re
import struct as _struct
from dataclasses import dataclass
from typing import Any

from .dtypes import DType, from_wgsl
from .errors import (
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
