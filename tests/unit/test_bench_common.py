"""benchmarks/common.py: ABAB interleaving, ratios and targets, strict JSON rows, result files."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import common  # noqa: E402
from common import Row, interleaved, median, table  # noqa: E402


def test_interleaved_alternates_order_and_counts() -> None:
    calls: list[str] = []
    t = interleaved({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, 4, inner=2, warmup=1)
    assert calls[:2] == ["a", "b"]  # warm-up
    assert "".join(calls[2:]) == "aabb" "bbaa" "aabb" "bbaa"
    assert {k: len(v) for k, v in t.items()} == {"a": 4, "b": 4}
    assert all(x >= 0 for v in t.values() for x in v)
    assert median([3.0, 1.0, 2.0]) == 2.0


def test_row_targets_and_json() -> None:
    slow = Row("x", 1.2, "raw", 1.0, "<= 1.10", 1.10)
    assert round(slow.ratio, 3) == 1.2 and not slow.met
    fast = Row("x", 0.05, "cwb", 1.0, ">= 10x faster", 10.0, mode="min")
    assert fast.met and round(fast.speedup) == 20
    info = Row("x", 1.0, "y", 2.0, "(reported)", float("inf"))
    assert info.met
    d = json.loads(json.dumps([r.as_dict() for r in (slow, fast, info)], allow_nan=False))
    assert d[2]["limit"] is None and d[0]["met"] is False and d[1]["ratio"] == 0.05
    text = table([slow, fast])
    assert "NO " in text and "yes" in text and "1.200" in text


KEYS = ["benchmark", "quick", "device", "machine", "seconds", "rows", "all_targets_met"]


def test_result_builds_and_writes_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(common, "RESULTS_DIR", tmp_path / "results")
    rows = [Row("x", 1.0, "raw", 1.0, "<= 1.10", 1.10), Row("y", 2.0, "raw", 1.0, "<= 1.10", 1.10)]
    res = common.result("core", rows, quick=True, device="cpu:0", t0=time.perf_counter())
    assert list(res) == [*KEYS, "written_to"]
    assert res["benchmark"] == "core" and res["quick"] is True and res["device"] == "cpu:0"
    assert res["all_targets_met"] is False and res["rows"][0]["met"] is True and res["seconds"] >= 0
    assert {"cpu", "cpu_count", "python", "wgpu", "numpy"} <= set(res["machine"])
    path = tmp_path / "results" / "core-quick.json"
    assert res["written_to"] == str(path)
    assert json.loads(path.read_text()) == {k: v for k, v in res.items() if k != "written_to"}
    assert common.report(res) == 0 and common.report(res, strict=True) == 1
    out = capsys.readouterr().out
    assert f"results: {path}" in out and "cores), Python" in out


def test_result_targets_extras_and_no_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "RESULTS_DIR", tmp_path)
    load = {"start": common.load_average(), "end": None}
    res = common.result("ops", [{"case": "a"}], quick=False, device="vulkan:0", t0=time.perf_counter(),
                        targets=[{"target": "t", "met": True}], write=False, load_average=load, copy_gbs=1.5)
    assert list(res) == KEYS[:4] + ["load_average", "copy_gbs"] + KEYS[4:6] + ["targets", KEYS[6]]
    assert res["all_targets_met"] is True and res["rows"] == [{"case": "a"}]
    assert list(tmp_path.iterdir()) == []
    res = common.result("ops", [], quick=False, device="vulkan:0", t0=time.perf_counter(),
                        targets=[{"target": "t", "met": False}])
    assert res["written_to"] == str(tmp_path / "ops.json") and not res["all_targets_met"]


def test_arg_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYACCEL_BENCH_DEVICE", raising=False)
    p = common.arg_parser("First paragraph\nstill.\n\nSecond.", "fewer rounds")
    assert p.description == "First paragraph\nstill."
    a = p.parse_args([])
    assert a.quick is False and a.device == "vulkan:0"
    assert p.parse_args(["--quick", "--device", "cpu:0"]).device == "cpu:0"
    monkeypatch.setenv("PYACCEL_BENCH_DEVICE", "gl:0")
    assert common.arg_parser(None, "").parse_args([]).device == "gl:0"


def test_ready_computes_every_lazy_result(gpu_device) -> None:
    """``common.ready``, how the benchmarks end a timed op: every lazy Array of a result
    (nested tuples and lists too) is computed, then the device waited for; a lazy result is
    no recorded work, so ``device.synchronize()`` alone would leave it out (docs/fusion.md)."""
    import numpy as np

    import pyaccel

    dev = gpu_device
    xh = np.arange(64, dtype=np.float32)
    x = pyaccel.asarray(xh, device=dev)
    with pyaccel.fusion(True):
        out = (x + 1, [x * 2, "not an array"], x)
        assert out[0]._lazy is not None and out[1][0]._lazy is not None
        dev.synchronize()
        assert out[0]._lazy is not None  # (what the benchmarks timed before)
        assert common.ready(out, dev) is out
    assert out[0]._lazy is None and out[1][0]._lazy is None
    np.testing.assert_array_equal(out[0].to_numpy(), xh + 1)
    np.testing.assert_array_equal(out[1][0].to_numpy(), xh * 2)
