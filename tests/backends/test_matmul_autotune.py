"""matmul autotune (pyaccel/ops/autotune.py): the disk cache, its failure modes, pins.

tests/conftest.py turns tuning off for the suite (``PYACCEL_AUTOTUNE=0``) and points
``PYACCEL_CACHE_DIR`` at a temporary dir; the tests here turn it on where they test it.
Most drive :func:`autotune.choose` with a counting fake timer (no GPU time); the end-to-end
ones tune for real on a small product (the ``small`` class: 64^3 timed products), in-process
and in two fresh processes sharing one cache dir (the second must time nothing).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyaccel
from pyaccel.ops import autotune
from pyaccel.ops import gpu_kernels as gk


class FakeDevice:
    """What autotune reads of a device: the descriptor and the runtime version."""

    def __init__(self, name: str = "Test GPU", driver: str = "drv 1.0") -> None:
        from pyaccel.device import DeviceDescriptor

        self.descriptor = DeviceDescriptor(uri="vulkan:9", name=name, vendor="t", api="vulkan",
                                           adapter_type="discrete", backend="wgpu", driver=driver)
        self.runtime_version = "wgpu-py test"


class CountingTimer:
    """Fake timings: ``times[name]`` seconds, every call counted."""

    def __init__(self, times: dict[str, float]) -> None:
        self.times = times
        self.calls: list[str] = []

    def __call__(self, name: str, shape: tuple[int, int, int]) -> float:
        self.calls.append(name)
        return self.times.get(name, 1.0)


@pytest.fixture
def tuning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Autotune on, a fresh cache dir, empty memory; restored afterwards."""
    monkeypatch.setenv(autotune.CACHE_DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(autotune.AUTOTUNE_ENV, "1")
    monkeypatch.delenv(gk.MATMUL_VARIANT_ENV, raising=False)
    autotune.clear()
    yield tmp_path / "cache"
    autotune.clear()
    pyaccel.set_matmul_variant(None)


def test_choice_is_timed_once_written_and_read_back(tuning: Path) -> None:
    dev = FakeDevice()
    timer = CountingTimer({"u16x8": 0.5, "v8x4": 0.2, "u16x16": 0.9, "u16x4": 0.3, "tiled": 0.4})
    assert autotune.choose(dev, "f32", True, 512, 512, 512, timer) == "v8x4"
    n = len(timer.calls)
    assert set(timer.calls) == set(autotune.V4_CANDIDATES) and n >= 2 * len(autotune.V4_CANDIDATES)
    data = json.loads((tuning / autotune.CACHE_FILE).read_text())
    key = autotune.adapter_key(dev)
    assert "Test GPU" in key and "drv 1.0" in key and "vulkan" in key and pyaccel.__version__ in key
    entry = data["adapters"][key]["choices"]["f32/v4/medium"]
    assert entry["variant"] == "v8x4" and set(entry["ms"]) == set(autotune.V4_CANDIDATES)
    # same process: from memory, no timing
    assert autotune.choose(dev, "f32", True, 300, 400, 500, timer) == "v8x4"
    assert len(timer.calls) == n and autotune.stats()["cache_hits"] == 1
    # "another process": memory cleared, the file read, no timing
    autotune.clear()
    assert autotune.choose(dev, "f32", True, 512, 512, 512, timer) == "v8x4"
    assert len(timer.calls) == n
    st = autotune.stats()
    assert st["tunings"] == 0 and st["timed_calls"] == 0 and st["disk_hits"] == 1, st
    # another size class, dtype or adapter (driver update) tunes again
    autotune.choose(dev, "f32", True, 2048, 2048, 2048, timer)
    autotune.choose(dev, "i32", True, 512, 512, 512, timer)
    autotune.choose(FakeDevice(driver="drv 1.1"), "f32", True, 512, 512, 512, timer)
    assert autotune.stats()["tunings"] == 3
    data = json.loads((tuning / autotune.CACHE_FILE).read_text())
    assert len(data["adapters"]) == 2 and len(data["adapters"][key]["choices"]) == 3


def test_static_default_kept_within_the_margin(tuning: Path) -> None:
    timer = CountingTimer({"tiled": 1.0, "reg8x4": 0.95, "reg4x4": 0.97})
    assert autotune.choose(FakeDevice(), "f32", False, 256, 256, 256, timer) == "tiled"
    timer = CountingTimer({"tiled": 1.0, "reg8x4": 0.85, "reg4x4": 0.97})
    assert autotune.choose(FakeDevice(), "f32", False, 2048, 2048, 2048, timer) == "reg8x4"


def test_budget_bounds_the_candidates(tuning: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(autotune.BUDGET_ENV, "0")
    timer = CountingTimer({})
    assert autotune.choose(FakeDevice(), "f32", False, 256, 256, 256, timer) == "tiled"
    assert set(timer.calls) == {"tiled"}  # the static default only: the budget is spent
    monkeypatch.setenv(autotune.BUDGET_ENV, "soon")
    autotune.clear()
    with pytest.raises(ValueError, match="PYACCEL_AUTOTUNE_BUDGET_MS='soon'"):
        autotune.choose(FakeDevice(), "f32", False, 1024, 1024, 1024, timer)


@pytest.mark.parametrize("content", ["{not json", json.dumps({"format": 999, "adapters": {}}),
                                     json.dumps([1, 2]), json.dumps({"format": 1, "adapters": 3})])
def test_corrupt_cache_is_ignored_with_a_warning(tuning: Path, content: str) -> None:
    tuning.mkdir(parents=True)
    path = tuning / autotune.CACHE_FILE
    path.write_text(content)
    autotune._warned.clear()
    timer = CountingTimer({"tiled": 0.1})
    with pytest.warns(RuntimeWarning, match="not a valid cache file"):
        assert autotune.choose(FakeDevice(), "f32", False, 100, 100, 100, timer) == "tiled"
    assert timer.calls  # tuned again
    data = json.loads(path.read_text())  # and rewritten, valid
    assert data["format"] == autotune.FORMAT and len(data["adapters"]) == 1


def test_cache_entry_naming_an_unknown_variant_is_ignored(tuning: Path) -> None:
    dev = FakeDevice()
    tuning.mkdir(parents=True)
    (tuning / autotune.CACHE_FILE).write_text(json.dumps({"format": 1, "adapters": {
        autotune.adapter_key(dev): {"choices": {"f32/scalar/medium": {"variant": "warp9000"}}}}}))
    timer = CountingTimer({"reg4x4": 0.1})
    assert autotune.choose(dev, "f32", False, 256, 256, 256, timer) == "reg4x4"


@pytest.mark.parametrize("where", ["under_a_file", "empty"])
def test_unwritable_or_disabled_cache_dir_keeps_choices_in_memory(
        tuning: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    if where == "under_a_file":  # mkdir fails even for root
        (tmp_path / "plain-file").write_text("x")
        monkeypatch.setenv(autotune.CACHE_DIR_ENV, str(tmp_path / "plain-file" / "cache"))
    else:
        monkeypatch.setenv(autotune.CACHE_DIR_ENV, "")
        assert autotune.cache_path() is None
    timer = CountingTimer({"reg8x4": 0.1})
    assert autotune.choose(FakeDevice(), "f32", False, 256, 256, 256, timer) == "reg8x4"
    n = len(timer.calls)
    assert autotune.choose(FakeDevice(), "f32", False, 256, 256, 256, timer) == "reg8x4"
    assert len(timer.calls) == n and autotune.stats()["disk_writes"] == 0


def test_failed_tuning_falls_back_to_the_static_default(tuning: Path) -> None:
    def broken(name: str, shape: tuple[int, int, int]) -> float:
        raise RuntimeError("no synchronous wait here")

    assert autotune.choose(FakeDevice(), "f32", True, 256, 256, 256, broken) == "u16x8"
    assert autotune.stats()["failures"] == 1
    assert not (tuning / autotune.CACHE_FILE).exists()  # a failure is not cached on disk
    assert autotune.choose(FakeDevice(), "f32", True, 256, 256, 256, broken) == "u16x8"
    assert autotune.stats()["failures"] == 1  # remembered for the process


def test_default_cache_dir_follows_the_platform(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(autotune.CACHE_DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert autotune.cache_dir() == tmp_path / "xdg" / "pyaccel"
    monkeypatch.setattr(sys, "platform", "emscripten")
    assert autotune.cache_dir() is None  # the browser: memory only


def test_autotune_off_and_pins_win(gpu_device: Any, tuning: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(autotune.AUTOTUNE_ENV, "0")
    assert gk.matmul_variant(gpu_device, 256, 256, 256) == "u16x8"
    assert gk.matmul_variant(gpu_device, 256, 255, 256) == "tiled"
    assert autotune.stats()["tunings"] == 0
    monkeypatch.setenv(autotune.AUTOTUNE_ENV, "1")
    # a cached choice, then pins over it: no timing
    tuning.mkdir(parents=True)
    (tuning / autotune.CACHE_FILE).write_text(json.dumps({"format": 1, "adapters": {
        autotune.adapter_key(gpu_device): {"choices": {"f32/v4/medium": {"variant": "v8x4"}}}}}))
    assert gk.matmul_variant(gpu_device, 256, 256, 256) == "v8x4"
    pyaccel.set_matmul_variant("v4x4")
    assert gk.matmul_variant(gpu_device, 256, 256, 256) == "v4x4"
    pyaccel.set_matmul_variant(None)
    monkeypatch.setenv(gk.MATMUL_VARIANT_ENV, "tiled")
    assert gk.matmul_variant(gpu_device, 256, 256, 256) == "tiled"
    assert autotune.stats()["tunings"] == 0


def test_tuned_matmul_on_the_device_matches_numpy(gpu_device: Any, tuning: Path, rng) -> None:
    a = rng.standard_normal((48, 64)).astype(np.float32)
    b = rng.standard_normal((64, 40)).astype(np.float32)
    got = np.asarray(pyaccel.asarray(a, device=gpu_device) @ pyaccel.asarray(b, device=gpu_device))
    st = autotune.stats()
    assert st["tunings"] == 1 and st["timed_calls"] >= 2 and st["failures"] == 0, st
    choice = autotune.choices(gpu_device)["f32/v4/small"]
    assert choice["ok"] and choice["variant"] in autotune.V4_CANDIDATES
    assert choice["tuning_ms"] < 1000 * (autotune.DEFAULT_BUDGET_MS / 1000 + 5), choice
    want = a.astype(np.float64) @ b
    assert np.allclose(got, want, rtol=1e-4, atol=1e-4)
    assert gk.matmul_variant(gpu_device, 48, 64, 40) == choice["variant"]


_CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import pyaccel
    from pyaccel.ops import autotune, gpu_kernels as gk
    dev = pyaccel.device(sys.argv[1])
    a = pyaccel.asarray(np.ones((32, 32), np.float32), device=dev)
    c = np.asarray(a @ a)
    assert float(c[0, 0]) == 32.0, c[0, 0]
    print(json.dumps({"stats": autotune.stats(), "variant": gk.matmul_variant(dev, 32, 32, 32),
                      "path": str(autotune.cache_path())}))
""")


def test_second_process_reads_the_cache_and_times_nothing(tmp_path: Path) -> None:
    """Two fresh processes, one cache dir, on the first GPU device (it tests the cache, not a
    device: 5-15 s a device on the shared 2-core VM, mostly process start). The first
    process's budget is 0 ms (one candidate timed: the cache is what is tested)."""
    gpus = [d.uri for d in pyaccel.devices() if d.api != "cpu"]
    if not gpus:
        pytest.skip("no GPU device (pyaccel.devices() lists cpu only)")
    uri = gpus[0]
    env = {**os.environ, autotune.CACHE_DIR_ENV: str(tmp_path / "c"), autotune.AUTOTUNE_ENV: "1",
           autotune.BUDGET_ENV: "0"}
    env.pop(gk.MATMUL_VARIANT_ENV, None)
    runs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, "-c", _CHILD, uri], capture_output=True,
                           text=True, env=env, timeout=300)
        assert p.returncode == 0, p.stderr
        runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert first["stats"]["tunings"] == 1 and first["stats"]["timed_calls"] == 2
    assert first["stats"]["disk_writes"] == 1
    assert first["path"] == str(tmp_path / "c" / autotune.CACHE_FILE)
    assert second["stats"]["tunings"] == 0 and second["stats"]["timed_calls"] == 0
    assert second["stats"]["disk_hits"] == 1 and second["stats"]["disk_writes"] == 0
    assert second["variant"] == first["variant"]


def test_candidates_are_variants() -> None:
    cands = autotune.V4_CANDIDATES + autotune.SCALAR_CANDIDATES
    assert set(cands) <= set(gk.MATMUL_VARIANTS)
    # products the vec4 kernels cannot take get none of them
    assert all(gk.MATMUL_VARIANTS[v][0] == "matmul" for v in autotune.SCALAR_CANDIDATES)
    assert "naive" not in cands  # thin products only, never timed
