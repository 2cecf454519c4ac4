"""Registry: discovery never raises, plugins, caching, default order, PYACCEL_DEVICE, current device.

Everything here uses fresh ``BackendRegistry`` objects with fake backends (and the
built-in ``cpu`` backend), never the process registry's state.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from _fakes import FakeBackend, broken_factory, desc, entry

import pyaccel
from pyaccel import registry as reg
from pyaccel.errors import (
    BackendUnavailableError,
    DeviceNotFoundError,
    InvalidDeviceURIError,
)
from pyaccel.registry import BUILTIN_BACKENDS, BackendEntry, BackendRegistry

ROOT = Path(__file__).resolve().parents[2]
CPU_ENTRY = next(e for e in BUILTIN_BACKENDS if e.name == "cpu")


def gpu_backend() -> FakeBackend:
    """A wgpu-like fake: a software Vulkan adapter, an integrated one, a discrete GL and Vulkan."""
    return FakeBackend("fakegpu", ("vulkan", "gl"), [
        desc("vulkan:0", "cpu", "fakegpu", name="lavapipe"),
        desc("vulkan:1", "integrated", "fakegpu"),
        desc("gl:0", "discrete", "fakegpu"),
        desc("vulkan:2", "discrete", "fakegpu"),
    ])


def make(*entries: BackendEntry, cpu: bool = True) -> BackendRegistry:
    return BackendRegistry(((CPU_ENTRY,) if cpu else ()) + entries, load_plugins=False)


# -- backends() never raises -------------------------------------------------------
def test_broken_backend_is_reported_and_others_listed() -> None:
    calls = []

    def counting_broken():
        calls.append(1)
        broken_factory()

    r = BackendRegistry(BUILTIN_BACKENDS + (
        entry("broken", counting_broken, priority=500, fix="reinstall the fake driver"),
        entry("fakegpu", gpu_backend()),
    ), load_plugins=False)
    infos = {b.name: b for b in r.backends()}
    assert set(infos) == {"broken", "fakegpu", "cpu", "wgpu", "webgpu"}
    broken = infos["broken"]
    assert not broken.available
    assert "driver exploded: fake failure" in broken.reason
    assert "RuntimeError" in broken.reason and "reinstall the fake driver" in broken.reason
    assert infos["fakegpu"].available and infos["fakegpu"].devices == ("vulkan:0", "vulkan:1", "gl:0", "vulkan:2")
    assert infos["cpu"].available and infos["cpu"].devices == ("cpu:0",)
    assert not infos["webgpu"].available
    assert "not running in a browser (Pyodide)" in infos["webgpu"].reason
    # the failure is remembered: the factory is not retried on every listing
    r.backends()
    assert len(calls) == 1
    with pytest.raises(BackendUnavailableError, match="driver exploded"):
        r.backend("broken")
    # its devices are simply absent; opening one names the reason
    assert "cpu:0" in [d.uri for d in r.devices()]
    assert "broken" in repr(broken) and "unavailable" in repr(broken)


def test_backend_whose_devices_raise_is_unavailable() -> None:
    class Flaky(FakeBackend):
        def devices(self):
            raise OSError("enumeration failed")

    r = make(entry("flaky", Flaky("flaky", ("flaky",), [])))
    infos = {b.name: b for b in r.backends()}
    assert not infos["flaky"].available and "enumeration failed" in infos["flaky"].reason
    assert infos["cpu"].available
    assert [d.uri for d in r.devices()] == ["cpu:0"]


def test_backend_without_devices_is_unavailable_with_fix() -> None:
    r = make(entry("empty", FakeBackend("empty", ("empty",), []), fix="plug in a card"))
    info = next(b for b in r.backends() if b.name == "empty")
    assert not info.available and "found no devices" in info.reason and "plug in a card" in info.reason


def test_duplicate_registration_needs_replace() -> None:
    r = make()
    with pytest.raises(ValueError, match="already registered"):
        r.register(CPU_ENTRY)
    r.register(CPU_ENTRY, replace=True)


def test_unknown_backend_name() -> None:
    with pytest.raises(BackendUnavailableError, match="no backend named 'nope'.*cpu"):
        make().backend("nope")


# -- plugins ---------------------------------------------------------------------------
PLUGIN_MODULE = """
from pyaccel.registry import BackendEntry
from pyaccel.device import Device, DeviceDescriptor
from pyaccel.errors import DeviceNotFoundError

class PlugBackend:
    name = "plug"
    schemes = ("plug",)
    version = "plug 0.1"
    def __init__(self):
        self.d = DeviceDescriptor("plug:0", "Plug device", "plugvendor", "plug", "virtual", "plug")
    def devices(self):
        return [self.d]
    def resolve(self, uri):
        if (uri.ordinal or 0) != 0:
            raise DeviceNotFoundError(f"no device {str(uri)!r}")
        return self.d
    def open(self, d):
        from pyaccel.runtime.cpu import CpuDeviceImpl
        import numpy
        return Device(d, CpuDeviceImpl(numpy))

def entry():
    return BackendEntry("plug", PlugBackend, 50, ("plug",), "a plugin backend")

NOT_AN_ENTRY = 42
"""


@pytest.fixture
def plugin_module(tmp_path, monkeypatch):
    name = f"pyaccel_fake_plugin_{os.getpid()}"
    (tmp_path / f"{name}.py").write_text(PLUGIN_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_entry_point_plugins_working_and_broken(plugin_module, monkeypatch) -> None:
    eps = [
        importlib.metadata.EntryPoint("plug", f"{plugin_module}:entry", reg.ENTRY_POINT_GROUP),
        importlib.metadata.EntryPoint("missing", "no_such_module_xyz:entry", reg.ENTRY_POINT_GROUP),
        importlib.metadata.EntryPoint("wrongtype", f"{plugin_module}:NOT_AN_ENTRY", reg.ENTRY_POINT_GROUP),
    ]
    seen_groups = []

    def fake_entry_points(**kw):
        seen_groups.append(kw.get("group"))
        return eps if kw.get("group") == reg.ENTRY_POINT_GROUP else []

    monkeypatch.setattr(importlib.metadata, "entry_points", fake_entry_points)
    r = BackendRegistry((CPU_ENTRY,))
    infos = {b.name: b for b in r.backends()}
    assert seen_groups == ["pyaccel.backends"]
    assert infos["plug"].available and infos["plug"].devices == ("plug:0",)
    assert infos["plug"].version == "plug 0.1"
    assert not infos["missing"].available
    assert "no_such_module_xyz" in infos["missing"].reason and "failed to load" in infos["missing"].reason
    assert not infos["wrongtype"].available and "BackendEntry" in infos["wrongtype"].reason
    assert infos["cpu"].available
    dev = r.open("plug:0")
    assert dev.uri == "plug:0" and r.open("plug") is dev
    assert all(e.plugin for e in r.entries() if e.name in ("plug", "missing", "wrongtype"))
    with pytest.raises(DeviceNotFoundError, match="missing"):
        r.open("missing:0")


def test_plugin_does_not_replace_a_registered_backend(plugin_module, monkeypatch) -> None:
    impostor = f"{plugin_module}:entry"
    eps = [importlib.metadata.EntryPoint("cpu", impostor, reg.ENTRY_POINT_GROUP)]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **kw: eps)
    r = BackendRegistry((BackendEntry("plug", "pyaccel.runtime.cpu:CpuBackend", 1, ("plug",)),))
    # the plugin's entry is named "plug", already registered: the first registration wins
    assert [e.factory for e in r.entries()] == ["pyaccel.runtime.cpu:CpuBackend"]


def test_entry_point_plugin_from_installed_distribution(tmp_path) -> None:
    """A real dist-info on sys.path, in a fresh interpreter: both a working and a broken plugin."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "pyaccel_plugdist.py").write_text(PLUGIN_MODULE)
    di = site / "pyaccel_plugdist-1.0.dist-info"
    di.mkdir()
    (di / "METADATA").write_text("Metadata-Version: 2.1\nName: pyaccel-plugdist\nVersion: 1.0\n")
    (di / "entry_points.txt").write_text(
        "[pyaccel.backends]\nplug = pyaccel_plugdist:entry\nbroken = pyaccel_plugdist_missing:entry\n"
    )
    code = textwrap.dedent("""
        import json, pyaccel
        out = {b.name: [b.available, b.reason, list(b.devices)] for b in pyaccel.backends()}
        out["_open"] = pyaccel.device("plug:0").uri
        print(json.dumps(out))
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    env.pop("PYACCEL_DEVICE", None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["plug"] == [True, "", ["plug:0"]]
    assert out["broken"][0] is False and "pyaccel_plugdist_missing" in out["broken"][1]
    assert out["cpu"][0] is True
    assert out["_open"] == "plug:0"


# -- caching and identity --------------------------------------------------------------
def test_backend_objects_and_devices_are_cached() -> None:
    made = []

    def factory():
        made.append(gpu_backend())
        return made[-1]

    r = make(BackendEntry("fakegpu", factory, 150, ("vulkan", "gl")))
    assert r.backend("fakegpu") is r.backend("fakegpu")
    r.backends()
    r.devices()
    assert len(made) == 1
    d = r.open("vulkan:1")
    assert r.open("vulkan:1") is d
    assert r.open("VULKAN:1") is d
    assert r.open(" vulkan:1 ") is d
    assert r.open(d) is d
    assert r.open("vulkan") is r.open("vulkan:0")  # a bare scheme is ordinal 0 of that API
    assert made[0].opened == {"vulkan:1": 1, "vulkan:0": 1}
    assert d == "vulkan:1" and d == "Vulkan:1" and d != "vulkan:0" and d != "not a uri::"


def test_reset_forgets_everything() -> None:
    r = make(entry("fakegpu", gpu_backend()))
    d = r.open("gl:0")
    r.reset()
    assert r.open("gl:0") is not d


# -- default order -----------------------------------------------------------------------
def test_default_order_real_gpus_then_cpu_then_software(monkeypatch) -> None:
    monkeypatch.delenv("PYACCEL_DEVICE", raising=False)
    r = make(entry("fakegpu", gpu_backend()))
    order = [d.uri for d in r.devices()]
    # discrete (Vulkan before GL), integrated, the NumPy cpu, then software adapters
    assert order == ["vulkan:2", "gl:0", "vulkan:1", "cpu:0", "vulkan:0"]
    assert r.default_uri() == "vulkan:2"
    assert r.default_device().uri == "vulkan:2"
    assert r.count_devices() == 5 and r.count_devices("fakegpu") == 4 and r.count_devices("nope") == 0


def test_default_is_cpu_when_only_software_gpus(monkeypatch) -> None:
    monkeypatch.delenv("PYACCEL_DEVICE", raising=False)
    soft = FakeBackend("soft", ("vulkan", "gl"), [desc("vulkan:0", "cpu", "soft"), desc("gl:0", "cpu", "soft")])
    r = make(entry("soft", soft, priority=200))
    assert [d.uri for d in r.devices()] == ["cpu:0", "vulkan:0", "gl:0"]
    assert r.default_device().uri == "cpu:0"
    # software adapters stay selectable by URI
    assert r.open("gl:0").descriptor.is_software


def test_default_within_rank_follows_backend_priority(monkeypatch) -> None:
    monkeypatch.delenv("PYACCEL_DEVICE", raising=False)
    low = FakeBackend("low", ("metal",), [desc("metal:0", "discrete", "low")])
    high = FakeBackend("high", ("dx12",), [desc("dx12:0", "discrete", "high")])
    r = make(entry("low", low, priority=10), entry("high", high, priority=20))
    assert [d.uri for d in r.devices()][:2] == ["dx12:0", "metal:0"]


# -- PYACCEL_DEVICE ---------------------------------------------------------------------------
@pytest.mark.parametrize("pref, expected", [
    ("vulkan:0,cpu", "vulkan:0"),
    ("cuda:0,cpu", "cpu:0"),
    ("cuda:0, vulkan:9 ,gl", "gl:0"),
    ("CPU", "cpu:0"),
    ("vulkan:0", "vulkan:0"),  # a software adapter, chosen because it was asked for
])
def test_env_preference_list(monkeypatch, pref: str, expected: str) -> None:
    monkeypatch.setenv("PYACCEL_DEVICE", pref)
    r = make(entry("fakegpu", gpu_backend()))
    assert r.default_device().uri == expected
    assert r.default_uri() == expected


def test_env_single_missing_device_names_its_reason(monkeypatch) -> None:
    monkeypatch.setenv("PYACCEL_DEVICE", "cuda:0")
    r = make(entry("fakegpu", gpu_backend()))
    with pytest.raises(DeviceNotFoundError) as ei:
        r.default_device()
    msg = str(ei.value)
    # nothing outside the list is used (vulkan:2 and cpu:0 exist but are not taken)
    assert "cuda:0: no backend handles the device scheme 'cuda'" in msg
    assert "PYACCEL_DEVICE='cuda:0'" in msg
    assert r.default_uri() is None


def test_env_only_unavailable_entries_fail_listing_each(monkeypatch) -> None:
    monkeypatch.setenv("PYACCEL_DEVICE", "broken:0,vulkan:7")
    r = make(entry("broken", broken_factory), entry("fakegpu", gpu_backend()))
    with pytest.raises(DeviceNotFoundError) as ei:
        r.default_device()
    msg = str(ei.value)
    assert "broken:0: device 'broken:0': backend 'broken' is unavailable" in msg
    assert "driver exploded" in msg
    assert "vulkan:7: no device 'vulkan:7'" in msg


def test_env_bad_uri_is_an_invalid_uri_error(monkeypatch) -> None:
    monkeypatch.setenv("PYACCEL_DEVICE", "vulkan:x,cpu")
    with pytest.raises(InvalidDeviceURIError, match="'vulkan:x'"):
        make().default_device()


def test_env_blank_means_unset(monkeypatch) -> None:
    monkeypatch.setenv("PYACCEL_DEVICE", "  ")
    assert make().preferences() is None


def test_first_device_error_lists_each_reason() -> None:
    r = make(entry("broken", broken_factory), entry("fakegpu", gpu_backend()))
    assert r.first_device(["cuda:0", "gl:0"]).uri == "gl:0"
    with pytest.raises(DeviceNotFoundError) as ei:
        r.first_device(["cuda:0", "vulkan:9", "broken:0"])
    lines = str(ei.value).splitlines()
    assert lines[0].startswith("none of the devices cuda:0, vulkan:9, broken:0 could be opened")
    assert any(ln.startswith("  cuda:0:") and "known schemes" in ln for ln in lines)
    assert any(ln.startswith("  vulkan:9:") and "no device 'vulkan:9'" in ln for ln in lines)
    assert any(ln.startswith("  broken:0:") and "driver exploded" in ln for ln in lines)
    with pytest.raises(DeviceNotFoundError, match="no device URIs given"):
        r.first_device([])
    assert r.first_device("cpu").uri == "cpu:0"


def test_no_device_at_all(monkeypatch) -> None:
    monkeypatch.delenv("PYACCEL_DEVICE", raising=False)
    r = BackendRegistry((entry("broken", broken_factory),), load_plugins=False)
    with pytest.raises(DeviceNotFoundError, match="no device could be opened(.|\n)*driver exploded"):
        r.default_device()
    assert r.default_uri() is None


# -- current device: set_device / get_device / using ----------------------------------------
@pytest.fixture
def fake_global(monkeypatch):
    """The module-level API over a fresh fake registry."""
    monkeypatch.delenv("PYACCEL_DEVICE", raising=False)
    r = make(entry("fakegpu", gpu_backend()))
    monkeypatch.setattr(reg, "REGISTRY", r)
    monkeypatch.setattr(reg, "_global_default", [None])
    monkeypatch.setattr(reg, "_local", threading.local())
    return r


def test_current_device_defaults_set_and_using(fake_global) -> None:
    assert pyaccel.get_device().uri == "vulkan:2"
    assert pyaccel.device() is pyaccel.get_device()
    assert pyaccel.default_device_uri() == "vulkan:2"
    assert pyaccel.set_device("gl:0").uri == "gl:0"
    assert pyaccel.get_device().uri == "gl:0" and pyaccel.default_device_uri() == "gl:0"
    with pyaccel.using("cpu") as d:
        assert d.uri == "cpu:0" and pyaccel.get_device() is d
        with pyaccel.using("vulkan:1"):
            assert pyaccel.get_device().uri == "vulkan:1"
            assert pyaccel.default_device_uri() == "vulkan:1"
        assert pyaccel.get_device() is d
    assert pyaccel.get_device().uri == "gl:0"
    with pytest.raises(RuntimeError), pyaccel.using("vulkan:1"):
        raise RuntimeError("body failed")
    assert pyaccel.get_device().uri == "gl:0"  # the stack unwinds on errors
    assert pyaccel.set_device(None) is None
    assert pyaccel.get_device().uri == "vulkan:2"


def test_using_bad_uri_leaves_state_alone(fake_global) -> None:
    with pytest.raises(DeviceNotFoundError), pyaccel.using("vulkan:42"):
        pass
    with pytest.raises(InvalidDeviceURIError), pyaccel.using("vulkan:-1"):
        pass
    assert pyaccel.get_device().uri == "vulkan:2"


def test_using_is_thread_local(fake_global) -> None:
    barrier = threading.Barrier(2, timeout=10)
    seen: dict[str, str] = {}
    errors: list[BaseException] = []

    def worker():
        try:
            barrier.wait()  # main thread is inside using("gl:0") now
            seen["worker_before"] = pyaccel.get_device().uri
            with pyaccel.using("vulkan:1"):
                barrier.wait()
                seen["worker_inside"] = pyaccel.get_device().uri
                barrier.wait()  # main checks its own device while we are inside ours
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    t = threading.Thread(target=worker)
    t.start()
    with pyaccel.using("gl:0"):
        barrier.wait()
        barrier.wait()
        seen["main_inside"] = pyaccel.get_device().uri
        barrier.wait()
    t.join(10)
    assert not errors
    assert seen == {"worker_before": "vulkan:2", "worker_inside": "vulkan:1", "main_inside": "gl:0"}


def test_public_device_and_backend_functions(fake_global) -> None:
    assert pyaccel.device("vulkan") is pyaccel.device("vulkan:0")
    assert pyaccel.first_device(["cuda", "gl"]).uri == "gl:0"
    assert pyaccel.count_devices() == 5
    assert pyaccel.backend("fakegpu") is pyaccel.backend("fakegpu")
    assert [d.uri for d in pyaccel.devices()][0] == "vulkan:2"
    pyaccel.register_backend("extra", lambda: FakeBackend("extra", ("extra",), [desc("extra:0", "virtual", "extra")]),
                              priority=1)
    assert pyaccel.device("extra:0").uri == "extra:0"


def test_rescan_probes_a_failed_backend_again() -> None:
    """A failure is remembered until rescan(): e.g. numpy loaded late in Pyodide makes cpu appear."""
    state = {"ready": False, "calls": 0}

    def late_factory():
        state["calls"] += 1
        if not state["ready"]:
            raise BackendUnavailableError("numpy is not importable; fix: load it")
        return gpu_backend()

    r = make(entry("fakegpu", late_factory, priority=50, schemes=("vulkan", "gl")), cpu=False)
    assert not {b.name: b for b in r.backends()}["fakegpu"].available
    state["ready"] = True
    assert not {b.name: b for b in r.backends()}["fakegpu"].available  # remembered, not retried
    assert state["calls"] == 1
    r.rescan()
    late = {b.name: b for b in r.backends()}["fakegpu"]
    assert late.available and "vulkan:0" in late.devices and state["calls"] == 2
    assert r.open("vulkan:2").descriptor.adapter_type == "discrete"


def test_public_rescan_backends_returns_the_listing() -> None:
    infos = pyaccel.rescan_backends()
    assert {b.name for b in infos} >= {"cpu", "wgpu", "webgpu"}
