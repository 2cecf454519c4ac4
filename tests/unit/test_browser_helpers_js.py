"""The page's WebGPU helpers are package data (pyaccel/runtime/browser_helpers.js), not a
string inside browser.py: the file exists where browser.py loads it from, parses as
JavaScript, and yields the helper object browser.py calls."""

from __future__ import annotations

import re
import shutil
import subprocess
from importlib import resources

import pytest

from pyaccel.runtime import browser


def _source() -> str:
    return resources.files("pyaccel.runtime").joinpath(browser.JS_HELPERS_FILE).read_text()


def test_helpers_file_is_package_data() -> None:
    src = _source()
    assert src.lstrip().splitlines()[-1].strip() == "})()" or src.rstrip().endswith("})()")
    # every helper browser.py calls on the object is defined in the file
    called = set(re.findall(r"\bh\.(\w+)\(", open(browser.__file__).read()))
    defined = set(re.findall(r"^\s{4}(?:async\s+)?(\w+)\s*\(", src, re.M))
    assert called and called <= defined, f"browser.py calls helpers the JS does not define: {called - defined}"


@pytest.mark.skipif(shutil.which("node") is None, reason="node (from scripts/setup.sh) is not on PATH")
def test_helpers_parse_and_evaluate_in_node(tmp_path) -> None:
    path = tmp_path / "h.js"
    path.write_text("const h = " + _source() + ";\nconsole.log(Object.keys(h).sort().join(','));\n")
    out = subprocess.run(["node", str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    keys = set(out.stdout.strip().split(","))
    assert {"readBytes"} <= keys and len(keys) > 5
