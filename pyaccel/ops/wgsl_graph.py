"""WGSL module-scope declarations, the graph of which uses which, and pruning by it.

Built-in kernels are assembled from whole WGSL files (a family's file, the shared prelude,
the per-dtype function libraries ``ew_*.wgsl``, whose ``// requires:`` lines pull in more
libraries: a complex64 ``add`` kernel carries all of ``ew_f64``). The compiler
(wgpu's naga, then the driver) parses, validates and translates every declaration of a
module, so a kernel pays for thousands of lines it never calls. :func:`prune` keeps only the
declarations an entry point reaches (functions, constants, overrides, module-scope
variables, structs and aliases, through any chain of uses, signatures and attributes
included) and every directive (``enable``, ``requires``, ``diagnostic``); everything else is
dropped. It is generic: nothing here names a function, so new library functions and rows are
pruned like the old ones.

The analysis is conservative: an identifier that names a module-scope declaration anywhere in
a declaration's text (a local that shadows a module-scope name included) keeps it; member
names (``p.n``) are not uses. WGSL has no string literals, so braces and semicolons outside
comments delimit declarations exactly; comments (``//`` and nested ``/* */``) are skipped.
The output lists the kept declarations in source order (WGSL resolves module-scope names in
any order), so it is deterministic.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

__all__ = ["Decl", "blank_comments", "declarations", "prune", "reached"]

_IDENT = re.compile(r"(?<![\w.])[A-Za-z_]\w*")  # not a member access (p.n)
_WS = re.compile(r"\s*")
_ATTR = re.compile(r"@\s*([A-Za-z_]\w*)\s*")
_WORD = re.compile(r"[A-Za-z_]\w*")
_NAME_AFTER = re.compile(r"\s*(?:<[^>]*>)?\s*([A-Za-z_]\w*)")  # (var<private>) NAME
_ENTRY_ATTRS = frozenset({"compute", "vertex", "fragment"})
_DIRECTIVES = frozenset({"enable", "requires", "diagnostic"})
_TERMINATED = frozenset({"const", "override", "var", "alias", "const_assert"})


@dataclass(frozen=True)
class Decl:
    """One module-scope declaration: ``kind`` (fn, struct, const, override, var, alias,
    const_assert or a directive), its ``name`` (None for directives and const_assert), its
    span ``[start, end)`` in the source, whether it is an entry point (``@compute`` /
    ``@vertex`` / ``@fragment``), and (:attr:`uses`) the identifiers its text uses besides its
    own name, attributes and signature included."""

    kind: str
    name: str | None
    start: int
    end: int
    entry: bool = False
    text: str = field(default="", repr=False, compare=False)  # the comment-blanked source

    @functools.cached_property
    def uses(self) -> frozenset[str]:
        """Identifiers in the declaration (computed on first use: pruning reads only the
        declarations it reaches)."""
        u = frozenset(_IDENT.findall(self.text, self.start, self.end))
        return u - {self.name} if self.name is not None else u


_COMMENT = re.compile(r"//[^\n]*|/\*(?:(?!/\*|\*/).)*\*/", re.S)  # a line or innermost block comment


def _blank(m: re.Match[str]) -> str:
    g = m.group()
    return " " * len(g) if "\n" not in g else re.sub(r"[^\n]", " ", g)


def blank_comments(src: str) -> str:
    """``src`` with every comment (``//`` to the end of the line, nested ``/* */``) replaced by
    spaces, newlines kept, so offsets and line numbers stay those of ``src``."""
    if "/" not in src:
        return src
    out = _COMMENT.sub(_blank, src)
    if "/*" in out or "*/" in out:  # nested (or unterminated) block comments: scan exactly
        return _blank_exact(src)
    return out


def _blank_exact(src: str) -> str:
    out = []
    i = 0
    n = len(src)
    while True:
        j = src.find("/", i)
        if j < 0 or j + 1 >= n:
            out.append(src[i:])
            break
        nxt = src[j + 1]
        if nxt == "/":
            k = src.find("\n", j)
            k = n if k < 0 else k
        elif nxt == "*":
            depth = 0
            k = j
            while k < n:
                if src.startswith("/*", k):
                    depth += 1
                    k += 2
                elif src.startswith("*/", k):
                    depth -= 1
                    k += 2
                    if depth == 0:
                        break
                else:
                    k += 1
        else:
            out.append(src[i: j + 1])
            i = j + 1
            continue
        out.append(src[i:j])
        out.append(re.sub(r"[^\n]", " ", src[j:k]))
        i = k
    return "".join(out)


def _line(src: str, pos: int) -> int:
    return src.count("\n", 0, pos) + 1


def _match_paren(text: str, i: int) -> int:
    """Index just past the ``)`` closing the ``(`` at ``i``."""
    depth = 0
    for k in range(i, len(text)):
        c = text[k]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return k + 1
    raise ValueError(f"WGSL: unbalanced '(' at line {_line(text, i)}")


def _close_brace(text: str, ob: int) -> int:
    """Index just past the ``}`` matching the ``{`` at ``ob`` (-1 if none): the first ``}``
    after which as many ``}`` as ``{`` were seen (str.find / str.count run in C)."""
    c = ob
    closes = 0
    while True:
        c = text.find("}", c + 1)
        if c < 0:
            return -1
        closes += 1
        if text.count("{", ob, c) == closes:
            return c + 1


def declarations(src: str) -> tuple[Decl, ...]:
    """The module-scope declarations of WGSL source ``src``, in source order.

    Raises ValueError naming the line when the text is not a sequence of WGSL module-scope
    declarations (a syntax the compiler would reject too)."""
    text = blank_comments(src)
    out: list[Decl] = []
    n = len(text)
    i = _WS.match(text, 0).end()
    while i < n:
        start = i
        attrs = []
        while text.startswith("@", i):
            m = _ATTR.match(text, i)
            if m is None:
                raise ValueError(f"WGSL: malformed attribute at line {_line(text, i)}")
            attrs.append(m.group(1))
            i = m.end()
            if text.startswith("(", i):
                i = _WS.match(text, _match_paren(text, i)).end()
        if text.startswith(";", i):  # an empty declaration
            i = _WS.match(text, i + 1).end()
            continue
        m = _WORD.match(text, i)
        if m is None:
            raise ValueError(f"WGSL: expected a declaration at line {_line(text, i)}: "
                             f"{text[i: i + 40].strip()!r}")
        kw = m.group()
        name: str | None = None
        if kw in ("fn", "struct"):
            nm = _NAME_AFTER.match(text, m.end())
            if nm is None:
                raise ValueError(f"WGSL: {kw} without a name at line {_line(text, i)}")
            name = nm.group(1)
            ob = text.find("{", nm.end())
            if ob < 0:
                raise ValueError(f"WGSL: {kw} {name} has no body (line {_line(text, i)})")
            end = _close_brace(text, ob)
            if end < 0:
                raise ValueError(f"WGSL: unbalanced '{{' in {kw} {name} (line {_line(text, i)})")
            if kw == "struct":  # an optional ';' after a struct
                w = _WS.match(text, end).end()
                if text.startswith(";", w):
                    end = w + 1
        elif kw in _TERMINATED or kw in _DIRECTIVES:
            semi = text.find(";", m.end())
            if semi < 0:
                raise ValueError(f"WGSL: {kw} without ';' at line {_line(text, i)}")
            end = semi + 1
            if kw in _TERMINATED and kw != "const_assert":
                nm = _NAME_AFTER.match(text, m.end())
                name = nm.group(1) if nm is not None else None
        else:
            raise ValueError(f"WGSL: unexpected {kw!r} at module scope (line {_line(text, i)})")
        out.append(Decl(kw, name, start, end, bool(_ENTRY_ATTRS.intersection(attrs)), text))
        i = _WS.match(text, end).end()
    return tuple(out)


def reached(decls: tuple[Decl, ...], roots: set[str] | frozenset[str]) -> set[str]:
    """Names of the declarations reachable from ``roots`` (the roots that exist included)."""
    by_name = {d.name: d for d in decls if d.name is not None}
    seen: set[str] = set()
    todo = [r for r in roots if r in by_name]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(u for u in by_name[name].uses if u in by_name and u not in seen)
    return seen


def prune(src: str, entries: tuple[str, ...] | None = None, keep: tuple[str, ...] = ()) -> str:
    """``src`` with only the declarations that ``entries`` reach (default: every entry point
    of the module), the names in ``keep`` (e.g. overrides a pipeline sets) and what they
    reach, every directive and every ``const_assert`` with what it uses. The source comes back
    unchanged when an entry point is missing from it (the compiler then names the error)."""
    decls = declarations(src)
    names = {d.name for d in decls if d.name is not None}
    if entries is None:
        roots = {d.name for d in decls if d.entry and d.name is not None}
    else:
        if not all(e in names for e in entries):
            return src
        roots = set(entries)
    roots |= {k for k in keep if k in names}
    for d in decls:
        if d.kind == "const_assert":
            roots |= d.uses & names
    live = reached(decls, roots)
    parts = [src[d.start: d.end] for d in decls
             if d.name is None or d.name in live]
    return "\n".join(parts) + "\n"
