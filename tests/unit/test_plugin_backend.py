"""A backend is one module plus one record: the test-only ``testgpu`` backend in
tests/plugin_backend is found through the ``pyaccel.backends`` entry-point group."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyaccel.registry import BUILTIN_BACKENDS, BackendRegistry

PLUGIN_DIR = Path(__file__).resolve().parent.parent / "plugin_backend"


def test_discovery_finds_testgpu_entry_point(monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(PLUGIN_DIR))
    r = BackendRegistry(BUILTIN_BACKENDS)
    entries = {e.name: e for e in r.entries()}
    assert "testgpu" in entries, f"entry points found: {sorted(entries)}"
    e = entries["testgpu"]
    assert e.plugin and e.schemes == ("testgpu",)
    assert e.factory == "pyaccel_testgpu:TestGPUBackend"
    info = {b.name: b for b in r.backends()}["testgpu"]
    try:
        import wgpu  # noqa: F401
    except ImportError:
        assert not info.available and "wgpu" in info.reason
        return
    if not info.available:
        pytest.skip(f"testgpu has no device here: {info.reason}")
    assert info.devices[0] == "testgpu:0"
    dev = r.open("testgpu")
    assert dev.uri == "testgpu:0" and dev.backend == "testgpu" and r.open("testgpu:0") is dev
    b = dev.malloc(16)
    b.write(bytes(range(16)))
    assert b.read() == bytes(range(16))


def test_without_the_plugin_the_scheme_is_unknown() -> None:
    from pyaccel.errors import DeviceNotFoundError

    r = BackendRegistry(BUILTIN_BACKENDS, load_plugins=False)
    with pytest.raises(DeviceNotFoundError, match="testgpu"):
        r.resolve("testgpu:0")
