"""benchmarks/common.py: ABAB interleaving, ratios and targets, strict JSON rows."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

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
