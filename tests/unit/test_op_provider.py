"""The op-provider contract (pyaccel/ops/provider.py): both providers implement every
method of ``OpProvider`` with the protocol's signature, and devices make theirs once."""

from __future__ import annotations

import inspect

import pytest

from pyaccel.ops.provider import OpProvider, protocol_methods
from pyaccel.ops.wgsl_provider import WgslOps
from pyaccel.runtime.numpy_ops import NumpyOps

PROVIDERS = [NumpyOps, WgslOps]


def _shape(fn: object) -> tuple:
    sig = inspect.signature(fn)  # follows functools.wraps (the WGSL provider's lock wrapper)
    params = tuple((p.name, p.kind, str(p.annotation), p.default) for p in sig.parameters.values())
    return params, str(sig.return_annotation), inspect.iscoroutinefunction(inspect.unwrap(fn))


def test_protocol_lists_the_ops() -> None:
    names = protocol_methods()
    for op in ("layout", "output", "elementwise", "reduce", "matmul", "getitem", "setitem", "sort"):
        assert op in names
    assert len(names) >= 25


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", protocol_methods())
def test_provider_implements_method_with_protocol_signature(provider: type, name: str) -> None:
    assert hasattr(provider, name), f"{provider.__name__} lacks OpProvider.{name}"
    assert _shape(getattr(provider, name)) == _shape(getattr(OpProvider, name)), (
        f"{provider.__name__}.{name}{inspect.signature(getattr(provider, name))} differs from "
        f"OpProvider.{name}{inspect.signature(getattr(OpProvider, name))}")


def test_signature_check_catches_a_mismatch() -> None:
    class Bad:
        def reduce(self, x, axes, shape, op):  # noqa: ANN001, ANN202 - deliberately wrong
            return None

    assert _shape(Bad.reduce) != _shape(OpProvider.reduce)


def test_cpu_device_ops_is_the_cached_numpy_provider() -> None:
    pytest.importorskip("numpy")
    import pyaccel

    dev = pyaccel.device("cpu")
    assert isinstance(dev.ops, NumpyOps)
    assert dev.ops is dev.ops
    assert isinstance(dev.ops, OpProvider)
    assert dev.ops.layout(pyaccel.bool_).itemsize == 1


def test_wgsl_provider_layout_comes_from_the_dtype_table() -> None:
    import pyaccel

    ops = WgslOps.__new__(WgslOps)
    assert ops.layout(pyaccel.bool_).itemsize == 4 and ops.layout(pyaccel.bool_).char == "I"
    assert ops.layout(pyaccel.int8).numpy == "int32"
    assert ops.layout(pyaccel.float16).itemsize == 2


NAMESPACE_MODULES = ("array", "creation", "elementwise", "indexing", "linalg", "manipulation",
                     "reductions", "nn", "promotion")


@pytest.mark.parametrize("module", NAMESPACE_MODULES)
def test_namespace_module_does_not_branch_on_the_device_kind(module: str) -> None:
    import re
    from pathlib import Path

    src = (Path(__file__).resolve().parents[2] / "pyaccel" / f"{module}.py").read_text()
    for pattern in (r"\bis_cpu\b", r"\.api\s*[!=]=", r"[!=]=\s*[\"']cpu[\"']", r"isinstance\([^)]*Impl\b",
                    r"\._lock\b"):
        assert not re.search(pattern, src), f"pyaccel/{module}.py matches {pattern!r}: use device.ops"


def test_array_cannot_be_constructed_directly() -> None:
    import pyaccel

    with pytest.raises(TypeError, match=r"pyaccel\.asarray"):
        pyaccel.Array(b"\0" * 4, (1,), pyaccel.float32, None)


def test_family_components_are_forwarded_never_shadowed() -> None:
    """The linalg and fft families are components the providers hold (no mixins): each
    public method of a component is a provider method forwarding to it (so a method added
    to a component reaches ``device.ops`` at once), never one the provider defines itself
    (that would silently hide the component's: WgslOps._host once hid WgslLinalg._host)."""
    from pyaccel.ops.fft_wgsl import WgslFFT
    from pyaccel.ops.linalg_wgsl import WgslLinalg
    from pyaccel.ops.provider import delegate
    from pyaccel.ops.wgsl_provider import WgslOps
    from pyaccel.runtime.numpy_fft import NumpyFFT
    from pyaccel.runtime.numpy_linalg import NumpyLinalg
    from pyaccel.runtime.numpy_ops import NumpyOps

    for provider, comps in ((WgslOps, (WgslLinalg, WgslFFT)), (NumpyOps, (NumpyLinalg, NumpyFFT))):
        assert provider.__bases__ == (object,), provider.__bases__  # no mixin
        for comp in comps:
            public = [n for n, v in vars(comp).items() if callable(v) and not n.startswith("_")]
            assert public
            for name in public:
                assert getattr(provider, name).__wrapped__ is vars(comp)[name], (provider, name)

    class Provider:
        def linalg_solve(self) -> None: ...

    with pytest.raises(TypeError, match="would hide"):
        delegate("linalg", WgslLinalg)(Provider)


@pytest.mark.parametrize("name", __import__("pyaccel.ops.primitives", fromlist=["x"]).primitive_methods())
def test_wgsl_provider_implements_the_primitive_set(name: str) -> None:
    """WgslOps implements every primitive of ``primitives.PrimitivesWide`` (what the composites
    of ops/decompositions.py are written against) with the Protocol's signature."""
    from pyaccel.ops.primitives import PrimitivesWide

    assert hasattr(WgslOps, name), f"WgslOps lacks primitive {name}"
    assert _shape(getattr(WgslOps, name)) == _shape(getattr(PrimitivesWide, name)), (
        f"WgslOps.{name}{inspect.signature(getattr(WgslOps, name))} differs from "
        f"PrimitivesWide.{name}{inspect.signature(getattr(PrimitivesWide, name))}")


def test_decompositions_call_only_declared_primitives() -> None:
    """Every ``p.<name>`` the composites call is a primitive of the Protocol (no undeclared
    host method), and the linalg / fft components call only what they declare."""
    import ast
    from pathlib import Path

    from pyaccel.ops.fft_wgsl import FFTPrims
    from pyaccel.ops.linalg_wgsl import LinalgPrims
    from pyaccel.ops.primitives import PrimitivesWide, primitive_methods

    ops_dir = Path(__file__).resolve().parents[2] / "pyaccel" / "ops"
    cases = [("decompositions.py", "p", PrimitivesWide), ("linalg_wgsl.py", "p", LinalgPrims),
             ("fft_wgsl.py", "prims", FFTPrims)]
    for fname, var, proto in cases:
        declared = set(primitive_methods(proto)) | {"device"}
        tree = ast.parse((ops_dir / fname).read_text())
        used = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == var:
                used.add(node.attr)
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
                    and node.value.attr == var and isinstance(node.value.value, ast.Name)
                    and node.value.value.id == "self"):
                used.add(node.attr)
        assert used, fname
        assert used <= declared, (fname, sorted(used - declared))
