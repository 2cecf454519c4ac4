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


def test_family_mixins_do_not_shadow_provider_methods() -> None:
    """A family mixin (linalg, fft) must not define a name its provider also defines: the
    provider's method would silently win (WgslOps._host once hid WgslLinalg._host)."""
    from pyaccel.ops.fft_wgsl import WgslFFT
    from pyaccel.ops.linalg_wgsl import WgslLinalg
    from pyaccel.ops.wgsl_provider import WgslOps
    from pyaccel.runtime.numpy_fft import NumpyFFT
    from pyaccel.runtime.numpy_linalg import NumpyLinalg
    from pyaccel.runtime.numpy_ops import NumpyOps

    dunder = {n for n in vars(object)} | {"__module__", "__dict__", "__weakref__", "__annotations__",
                                           "__qualname__", "__firstlineno__", "__static_attributes__"}
    for provider, mixins in ((WgslOps, (WgslLinalg, WgslFFT)), (NumpyOps, (NumpyLinalg, NumpyFFT))):
        names = [set(vars(c)) - dunder for c in (provider, *mixins)]
        for i in range(len(names)):
            for j in range(i + 1, len(names)):
                assert not names[i] & names[j], (provider, names[i] & names[j])
