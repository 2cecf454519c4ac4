"""The GPU device-impl contract (``pyaccel.device.GPUImpl``) is declared and checked.

Every GPU impl class provides each member with a compatible signature; the op layer
(``pyaccel.ops``) and ``pyaccel.Kernel`` call nothing on an impl outside the contract; an
open GPU device's impl passes ``isinstance(impl, GPUImpl)``.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import pyaccel
from pyaccel.device import DeviceImpl, GPUImpl
from pyaccel.runtime.browser import BrowserDeviceImpl
from pyaccel.runtime.webgpu_common import GPUDeviceImpl

PKG = Path(pyaccel.__file__).parent
DATA = {"capabilities", "limits", "runtime_version", "lock"}  # attributes, set in __init__


def _members(proto: type) -> set[str]:
    names: set[str] = set()
    for klass in proto.__mro__:
        if klass in (object,) or klass.__name__ in ("Protocol", "Generic"):
            continue
        names |= {n for n in vars(klass) if not n.startswith("_")}
        names |= set(getattr(klass, "__annotations__", {}))
    return names


def _params(fn) -> list[tuple[str, object]]:  # noqa: ANN001
    """The call shape: required positional parameters by position (callers pass them so),
    optional and keyword-only ones by name (callers may pass them by keyword)."""
    out = []
    for i, p in enumerate(inspect.signature(fn).parameters.values()):
        required = p.default is inspect.Parameter.empty and p.kind is p.POSITIONAL_OR_KEYWORD
        out.append((f"#{i}" if required else p.name, p.kind))
    return out


def test_cpu_impl_provides_the_device_protocol() -> None:
    from pyaccel.runtime.cpu import CpuDeviceImpl

    for name in sorted(_members(DeviceImpl) - DATA):
        got, want = getattr(CpuDeviceImpl, name), getattr(DeviceImpl, name)
        extra = list(inspect.signature(got).parameters.values())[len(_params(want)):]
        assert _params(got)[: len(_params(want))] == _params(want), name
        assert all(p.default is not inspect.Parameter.empty for p in extra), name


@pytest.mark.parametrize("impl_class", [GPUDeviceImpl, BrowserDeviceImpl], ids=lambda c: c.__name__)
def test_impl_classes_provide_the_contract(impl_class: type) -> None:
    for name in sorted(_members(GPUImpl) - DATA):
        assert hasattr(impl_class, name), f"{impl_class.__name__} lacks GPUImpl.{name}"
        want, got = getattr(GPUImpl, name), getattr(impl_class, name)
        assert inspect.iscoroutinefunction(want) == inspect.iscoroutinefunction(got), name
        g, w = _params(got), _params(want)
        extra = list(inspect.signature(got).parameters.values())[len(w):]
        assert g[: len(w)] == w and all(p.default is not inspect.Parameter.empty for p in extra), (
            f"{impl_class.__name__}.{name}{inspect.signature(got)} differs from the contract "
            f"{inspect.signature(want)}")


def test_contract_extends_the_device_impl_protocol() -> None:
    assert _members(DeviceImpl) <= _members(GPUImpl)
    assert {"pipeline", "uniform", "dispatch", "dispatch_bound", "dispatch_group", "alloc_output"} <= _members(GPUImpl)


def _impl_calls(text: str) -> set[str]:
    return set(re.findall(r"\bimpl\.([a-z_]\w*)", text))


def test_op_layer_uses_only_the_contract() -> None:
    used: dict[str, set[str]] = {}
    for path in [*sorted((PKG / "ops").glob("*.py")), PKG / "kernel.py"]:
        for name in _impl_calls(path.read_text()):
            used.setdefault(name, set()).add(path.name)
    outside = {n: f for n, f in used.items() if n not in _members(GPUImpl)}
    assert not outside, f"the op layer calls impl members outside GPUImpl: {outside}"
    assert {"uniform", "dispatch", "pipeline"} <= set(used)  # the scan sees the real calls


def test_scan_finds_a_call_outside_the_contract() -> None:
    assert _impl_calls("x = dev.impl._encoder; impl.flush()") == {"_encoder", "flush"}
    assert "_encoder" not in _members(GPUImpl)


def test_open_gpu_devices_satisfy_the_contract() -> None:
    gpus = [d for d in pyaccel.devices() if d.api != "cpu"]
    if not gpus:
        pytest.skip("no GPU device here (the class-level checks above still ran)")
    for desc in gpus[:2]:
        dev = pyaccel.device(desc.uri)
        assert isinstance(dev.impl, GPUImpl), desc.uri
        assert not isinstance(pyaccel.device("cpu").impl, GPUImpl)
        ops = dev.ops
        for name in ("elementwise", "output", "to_numpy", "linalg_solve", "fft_c2c"):
            assert callable(getattr(ops, name, None)), f"{desc.uri}: ops.{name}"
