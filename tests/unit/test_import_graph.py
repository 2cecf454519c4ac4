"""pyaccel's modules form no import cycle, counting every import statement anywhere in a
module (function-level imports included): the layers import downwards only. The op layer
(``pyaccel/ops``) imports nothing of the namespace above it (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "pyaccel"
PKG = "pyaccel"


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(mod: str, is_pkg: bool, level: int, target: str | None) -> str:
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _is_type_checking(node: ast.AST) -> bool:
    """An ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``) block."""
    if not isinstance(node, ast.If):
        return False
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def import_graph() -> dict[str, set[str]]:
    """module -> the pyaccel modules it imports (anywhere in its body)."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        is_pkg = path.name == "__init__.py"
        tree = ast.parse(path.read_text(), str(path))
        typing_only = {id(n) for block in ast.walk(tree) if _is_type_checking(block)
                       for stmt in block.body for n in ast.walk(stmt)}
        for node in ast.walk(tree):
            if id(node) in typing_only:  # `if TYPE_CHECKING:` imports never run
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(mod, is_pkg, node.level, node.module) if node.level else (node.module or "")
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    targets.append(sub if sub in mods else base)  # `from . import x`: the submodule
            for t in targets:
                # importing a.b.c runs a and a.b too; the cycle that matters is to the deepest module
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t.startswith(PKG) and t != mod:
                    graph[mod].add(t)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle (as a module path that returns to its start), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_graph_sees_function_level_and_relative_imports() -> None:
    g = import_graph()
    assert "pyaccel.ops.wgsl_provider" in g["pyaccel.runtime.webgpu_common"]  # inside make_ops
    assert "pyaccel.runtime.numpy_ops" in g["pyaccel.runtime.cpu"]
    assert "pyaccel.ops.kernelgen" in g["pyaccel.ops.wgsl_provider"]  # `from . import kernelgen`
    assert "pyaccel.elementwise" in g["pyaccel.indexing"] or "pyaccel.elementwise" in g["pyaccel.linalg"]
    assert "pyaccel.creation" in g["pyaccel.linalg"]  # `from .creation import eye` inside inv()


def test_type_checking_imports_are_not_edges() -> None:
    g = import_graph()
    assert "pyaccel.ops.provider" not in g["pyaccel.device"]  # Device.ops's annotation only
    src = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import x\nimport y\n"
    tree = ast.parse(src)
    assert [_is_type_checking(n) for n in tree.body] == [False, True, False]


def test_find_cycle_reports_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


# -- the op layer never imports the namespace -------------------------------------------------
OP_LAYER = "pyaccel.ops"
BELOW = frozenset({  # what the op layer may import besides itself (docs/architecture.md)
    "pyaccel.array",  # Array (the class and its private constructors; not asarray)
    "pyaccel._keys",  # index-key plans (shared with pyaccel.indexing, which re-exports them)
    "pyaccel._shapes", "pyaccel._host", "pyaccel._lru", "pyaccel._flags", "pyaccel.dtypes", "pyaccel.device",
    "pyaccel.errors", "pyaccel.promotion", "pyaccel.capabilities",
    "pyaccel.registry",  # the host path opens cpu:0 (inside host_path.run)
})
ARRAY_PUBLIC_OK = frozenset({"Array"})  # from pyaccel.array: Array and private names only


def imports_of(mod: str, src: str, is_pkg: bool = False) -> list[tuple[str, str, int]]:
    """(imported pyaccel module, imported name or '', line) for every import statement in
    ``src`` (module ``mod``) outside ``if TYPE_CHECKING:``, function-level ones included."""
    mods = _modules()
    tree = ast.parse(src)
    typing_only = {id(n) for block in ast.walk(tree) if _is_type_checking(block)
                   for stmt in block.body for n in ast.walk(stmt)}
    out = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            out += [(a.name, "", node.lineno) for a in node.names if a.name.startswith(PKG)]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(mod, is_pkg, node.level, node.module) if node.level else (node.module or "")
            if not base.startswith(PKG):
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.append((sub, "", node.lineno) if sub in mods else (base, a.name, node.lineno))
    return out


def climbs(mod: str, src: str, is_pkg: bool = False) -> list[str]:
    """The imports of op-layer module ``mod`` that reach above it (a namespace module, the
    package itself, or a public function of pyaccel.array such as asarray)."""
    bad = []
    for target, name, line in imports_of(mod, src, is_pkg):
        if target == OP_LAYER or target.startswith(OP_LAYER + "."):
            continue
        if target not in BELOW:
            bad.append(f"{mod}:{line} imports {target}" + (f".{name}" if name else ""))
        elif target == "pyaccel.array" and name and not name.startswith("_") and name not in ARRAY_PUBLIC_OK:
            bad.append(f"{mod}:{line} imports {target}.{name} (a namespace function)")
    return bad


def test_op_layer_imports_nothing_of_the_namespace() -> None:
    bad = []
    for mod, path in sorted(_modules().items()):
        if mod == OP_LAYER or mod.startswith(OP_LAYER + "."):
            bad += climbs(mod, path.read_text(), path.name == "__init__.py")
    assert not bad, "the op layer imports the namespace:\n" + "\n".join(bad)


def test_climb_check_catches_every_import_form() -> None:
    src = ("from .. import elementwise as _ew\n"
           "import pyaccel.reductions\n"
           "from ..array import Array, asarray, _write_view\n"
           "from .. import _host\n"
           "from . import table\n"
           "from typing import TYPE_CHECKING\n"
           "if TYPE_CHECKING:\n    from ..linalg import LinAlgError\n"
           "def f():\n    from ..linalg import LinAlgError\n    from pyaccel import fft\n")
    got = climbs("pyaccel.ops.x", src)
    assert got == ["pyaccel.ops.x:1 imports pyaccel.elementwise", "pyaccel.ops.x:2 imports pyaccel.reductions",
                   "pyaccel.ops.x:3 imports pyaccel.array.asarray (a namespace function)",
                   "pyaccel.ops.x:10 imports pyaccel.linalg.LinAlgError", "pyaccel.ops.x:11 imports pyaccel.fft"], got
