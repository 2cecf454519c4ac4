"""pyaccel's modules form no import cycle, counting every import statement anywhere in a
module (function-level imports included): the layers import downwards only."""

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
    assert "pyaccel.ops.elementwise" in g["pyaccel.ops.wgsl_provider"]  # `from . import elementwise`
    assert "pyaccel.elementwise" in g["pyaccel.ops.wgsl_provider"]  # `from .. import elementwise`


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
