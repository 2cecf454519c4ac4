"""How many Python files under pyaccel/ name each dtype (issue 22 item 5): a ceiling per dtype,
so knowledge of one dtype scattered into another module again fails here.

Rule (what "names" means, exactly): the file is tokenized (``tokenize``); comments and
docstrings (the first statement of a module, class or function) are skipped. The file names
dtype D when

* a NAME token equals D's Python name (``float16``, ``bool_``), or
* a string literal contains D's name or one of its WGSL aliases as a whole word (not
  preceded or followed by a letter or digit: ``"float16"``, ``"f16"``, ``"shader-f16"``,
  ``"f64_add(a, b)"``), where the aliases are the WGSL names only that dtype has: ``f16``
  for float16 and the multi-lane library prefixes (``i64``, ``u64``, ``f64``, ``c64``,
  ``c128``). The 32-bit WGSL types (``f32``, ``i32``, ``u32``) are shared by several
  dtypes and are not aliases.

Run ``python tests/unit/test_dtype_touch.py`` to print the counts and the files.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from functools import cache
from pathlib import Path

import pytest

import pyaccel
from pyaccel.dtypes import ALL_DTYPES, MULTI_LANE, DType

PKG = Path(pyaccel.__file__).parent
ALIASES: dict[str, tuple[str, ...]] = {"float16": ("f16",)} | {
    d.name: (r.prefix.rstrip("_"),) for d, r in MULTI_LANE.items() if r.prefix}

# files naming each dtype (the rule above); measured on this commit. Before issue 22 item 5's
# reductions (main at 2d049eb): bool 20, int8 8, int16 7, int32 13, int64 10, uint8 10,
# uint16 7, uint32 12, uint64 8, float16 20, float32 21, float64 17, complex64 13,
# complex128 11. Lower a ceiling when a change brings a count down; raise one only with a
# reason in the commit message. bool 19 -> 20: _flags.py (the on/off switches) accepts NumPy's
# ``bool`` scalar type by name, which the rule cannot tell from the dtype.
CEILING = {
    "bool": 20, "int8": 4, "int16": 3, "int32": 11, "int64": 6, "uint8": 7, "uint16": 3,
    "uint32": 10, "uint64": 4, "float16": 18, "float32": 18, "float64": 13, "complex64": 7,
    "complex128": 5,
}


def _py_name(dt: DType) -> str:
    return "bool_" if dt.name == "bool" else dt.name


def _docstrings(tree: ast.AST) -> set[tuple[int, int]]:
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body:
            b = n.body[0]
            if isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant) and isinstance(b.value.value, str):
                out.add((b.lineno, b.col_offset))
    return out


@cache
def _tokens(path: Path) -> tuple[frozenset[str], tuple[str, ...]]:
    """(NAME tokens, string literals that are not docstrings) of one file."""
    src = path.read_text()
    docs = _docstrings(ast.parse(src))
    names, strings = set(), []
    for t in tokenize.generate_tokens(io.StringIO(src).readline):
        if t.type == tokenize.NAME:
            names.add(t.string)
        elif t.type == tokenize.STRING and (t.start[0], t.start[1]) not in docs:
            strings.append(t.string)
    return frozenset(names), tuple(strings)


def names_dtype(path: Path, dt: DType) -> bool:
    names, strings = _tokens(path)
    if _py_name(dt) in names:
        return True
    words = (dt.name, *ALIASES.get(dt.name, ()))
    # (``bool(x)`` in a message is Python's builtin called on an array, not the dtype)
    tail = r"(?![A-Za-z0-9(])" if dt.name == "bool" else r"(?![A-Za-z0-9])"
    pat = re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(map(re.escape, words)) + r")" + tail)
    return any(pat.search(s) for s in strings)


def files_naming(dt: DType) -> list[str]:
    return sorted(str(p.relative_to(PKG)) for p in PKG.rglob("*.py") if names_dtype(p, dt))


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=str)
def test_files_naming_a_dtype_stay_under_the_ceiling(dt: DType) -> None:
    files = files_naming(dt)
    assert len(files) <= CEILING[dt.name], (
        f"{dt.name} is named in {len(files)} files under pyaccel/ (ceiling {CEILING[dt.name]}): "
        f"{', '.join(files)}. Per-dtype knowledge belongs in pyaccel/dtypes.py (DTYPE_TABLE) or "
        "ops/table.py; read it from there (docs/architecture.md, 'a dtype')")


def test_the_rule_finds_names_and_skips_prose(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text('"""float16 in a docstring."""\n# complex64 in a comment\n'
                 'def g():\n    """uint64 too."""\n    return 1\n')
    assert not any(names_dtype(f, d) for d in ALL_DTYPES)
    f.write_text('x = "shader-f16"\ny = int8\nz = "f64_add(a, b)"\nw = "f32 i32"\n')
    _tokens.cache_clear()
    got = {d.name for d in ALL_DTYPES if names_dtype(f, d)}
    assert got == {"float16", "int8", "float64"}


def test_every_dtype_has_a_ceiling() -> None:
    assert set(CEILING) == {d.name for d in ALL_DTYPES}


if __name__ == "__main__":
    for d in ALL_DTYPES:
        fs = files_naming(d)
        print(f"{d.name:<11} {len(fs):>3}  {' '.join(fs)}")
