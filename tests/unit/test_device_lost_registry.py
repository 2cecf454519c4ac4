"""Contract 3: a lost device is dropped from the registry cache; device(uri) opens a fresh one.
Also: Device._lock is the impl's lock (contract 1)."""

from __future__ import annotations

import threading

from _fakes import FakeBackend, desc, entry

from pyaccel.registry import BackendRegistry


def make_registry() -> tuple[BackendRegistry, FakeBackend]:
    b = FakeBackend("fakegpu", ("vulkan",), [desc("vulkan:0", "discrete", "fakegpu")])
    return BackendRegistry([entry("fakegpu", b)], load_plugins=False), b


def test_lost_cached_device_is_replaced() -> None:
    r, b = make_registry()
    d = r.open("vulkan:0")
    assert r.open("vulkan:0") is d and not d.is_lost
    d.impl.is_lost = True  # what GPUDeviceImpl reports once its facade sets lost_reason
    assert d.is_lost
    d2 = r.open("vulkan:0")
    assert d2 is not d and not d2.is_lost and b.opened["vulkan:0"] == 2
    assert r.open("vulkan:0") is d2


def test_device_lock_is_impl_lock() -> None:
    r, _ = make_registry()
    d = r.open("vulkan:0")
    assert d._lock is d.impl.lock
    assert isinstance(d._lock, type(threading.RLock()))
