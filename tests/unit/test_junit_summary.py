"""scripts/junit_summary.py adds test times per file and per suite directory."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _module():
    spec = importlib.util.spec_from_file_location("junit_summary", ROOT / "scripts" / "junit_summary.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_sums_per_file_and_suite(tmp_path: Path) -> None:
    xml = tmp_path / "j.xml"
    xml.write_text(
        "<testsuites><testsuite>"
        '<testcase classname="tests.backends.test_a" name="x" time="2.5"/>'
        '<testcase classname="tests.backends.test_a" name="y" time="1.5"/>'
        '<testcase classname="tests.unit.test_b" name="z" time="0.25"/>'
        "</testsuite></testsuites>"
    )
    out = _module().summarize(str(xml), 5)
    assert "4 s in 3 tests" in out
    lines = {ln.split()[0]: ln for ln in out.splitlines()[1:] if ln.strip()}
    assert "4.0 s" in lines["tests/backends"] and "94.1 %" in lines["tests/backends"]
    assert "(2 tests)" in lines["tests/backends/test_a.py"]
    assert "0.2 s" in lines["tests/unit"] or "0.3 s" in lines["tests/unit"]
