"""The unavailable-backend text is true where Python runs (issue 20, item 5).

Inside Pyodide (faked here: ``sys.platform = "emscripten"``, a fake ``js`` module whose
``navigator.gpu`` is missing, numpy and wgpu made unimportable) no reason may advise
``pip install`` or promise a fallback that cannot load; the numpy hint says that
``loadPackage('numpy')`` needs the network and what to do offline; ``device_async()`` with
no URI lists every backend's reason, as ``get_device()`` does. Natively the pip fixes stay.
The same text in a real page without WebGPU: tests/browser/test_host_nowebgpu.py.
"""

from __future__ import annotations

import asyncio
import sys
import types

import pytest

import pyaccel
from pyaccel import _hints, registry
from pyaccel.registry import BUILTIN_BACKENDS, BackendRegistry


@pytest.fixture
def fake_pyodide(monkeypatch):
    """A process that looks like Pyodide in a page without WebGPU and without numpy/wgpu."""
    monkeypatch.setattr(sys, "platform", "emscripten")
    js = types.ModuleType("js")
    js.navigator = types.SimpleNamespace(gpu=None)
    monkeypatch.setitem(sys.modules, "js", js)
    lock_pkgs = types.SimpleNamespace(numpy=types.SimpleNamespace(
        file_name="https://cdn.example/full/numpy-2.4.6-cp314-cp314-pyemscripten_2026_0_wasm32.whl"))
    monkeypatch.setitem(sys.modules, "pyodide_js",
                        types.SimpleNamespace(lockfile=types.SimpleNamespace(packages=lock_pkgs)))
    monkeypatch.setitem(sys.modules, "numpy", None)  # `import numpy` raises ImportError
    monkeypatch.setitem(sys.modules, "wgpu", None)
    monkeypatch.delenv("PYACCEL_DEVICE", raising=False)
    reg = BackendRegistry(BUILTIN_BACKENDS, load_plugins=False)
    monkeypatch.setattr(registry, "REGISTRY", reg)
    monkeypatch.setattr(registry, "_global_default", [None])
    return reg


def _reasons(reg: BackendRegistry) -> dict[str, str]:
    return {b.name: b.reason for b in reg.backends()}


def test_pyodide_reasons_advise_no_pip_and_no_false_fallback(fake_pyodide):
    reasons = _reasons(fake_pyodide)
    assert set(reasons) == {"webgpu", "wgpu", "cpu"} and all(reasons.values()), reasons
    for name, text in reasons.items():
        assert "pip install" not in text, (name, text)
        assert "falls back" not in text, (name, text)
    assert "navigator.gpu is undefined" in reasons["webgpu"]
    assert "needs numpy" in reasons["webgpu"]  # conditional, not a promise
    assert "cannot run in Pyodide" in reasons["wgpu"] and "webgpu:0" in reasons["wgpu"]
    wgpu_entry = next(e for e in BUILTIN_BACKENDS if e.name == "wgpu")
    assert "pip install" not in registry._fix(wgpu_entry) and "webgpu:0" in registry._fix(wgpu_entry)


def test_pyodide_numpy_hint_says_network_and_offline(fake_pyodide):
    cpu = _reasons(fake_pyodide)["cpu"]
    assert "await pyodide.loadPackage('numpy')" in cpu
    assert "needs the network" in cpu
    assert "Offline" in cpu and "numpy-2.4.6-cp314-cp314-pyemscripten_2026_0_wasm32.whl" in cpu
    assert "PyPI has none" in cpu
    assert "rescan_backends" in cpu


def test_device_async_without_uri_lists_every_reason(fake_pyodide):
    with pytest.raises(pyaccel.DeviceNotFoundError) as ei:
        asyncio.run(pyaccel.device_async())
    msg = str(ei.value)
    assert "(none found)" not in msg
    for name, reason in _reasons(fake_pyodide).items():
        assert f"  {name}: {reason.splitlines()[0]}" in msg, (name, msg)
    assert "pip install" not in msg and "falls back" not in msg
    assert "In a page" in msg


def test_get_device_and_device_async_give_the_same_text(fake_pyodide):
    with pytest.raises(pyaccel.DeviceNotFoundError) as sync_err:
        pyaccel.get_device()
    with pytest.raises(pyaccel.DeviceNotFoundError) as async_err:
        asyncio.run(pyaccel.device_async())
    assert str(sync_err.value) == str(async_err.value)


def test_array_numpy_hint_in_pyodide(fake_pyodide):
    from pyaccel.array import _no_numpy

    text = str(_no_numpy("x.to_numpy()"))
    assert "loadPackage('numpy')" in text and "needs the network" in text and "pip install" not in text


def test_native_text_keeps_pip(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    assert _hints.numpy_fix() == "pip install numpy"
    assert _hints.wgpu_fix().startswith("pip install wgpu==0.32.0")
    assert "pyaccel doctor" in _hints.no_device_advice()
    entry = next(e for e in BUILTIN_BACKENDS if e.name == "cpu")
    assert registry._fix(entry) == entry.fix == "pip install numpy"


def test_numpy_wheel_name_without_pyodide_js(monkeypatch):
    monkeypatch.setattr(sys, "platform", "emscripten")
    monkeypatch.setitem(sys.modules, "pyodide_js", None)
    assert _hints.PYODIDE_NUMPY_WHEEL in _hints.numpy_fix()
