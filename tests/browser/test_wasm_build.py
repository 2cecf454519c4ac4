"""The browser distribution is built with the field's tools (issue 20, item 1).

* The shipped pyaccel wheel is identical in content (and byte for byte) to a fresh
  ``pip wheel .`` and ``python -m build --wheel`` with the same pinned hatchling
  (``python wasm/build.py --check-wheel``, in .venv-wasm: no network).
* The lock is ``pyodide lockfile add-wheels``'s: Pyodide's own entries unchanged except
  that the wheels the folder does not ship point at the Pyodide CDN of the same release;
  pyaccel's entry without the native-only dependencies; micropip's entry names the PyPI
  wheel pinned in wasm/pyodide-wheels.lock, shipped beside it with a matching sha256.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NPM_LOCK = ROOT / "node_modules" / "pyodide" / "pyodide-lock.json"


def test_shipped_wheel_is_identical_to_pip_wheel(browser_site):
    proc = subprocess.run([sys.executable, str(ROOT / "wasm" / "build.py"), "--check-wheel"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if "check-wheel:" in ln]
    assert len(lines) == 2, proc.stdout
    for ln in lines:
        assert "identical" in ln and "byte-identical file" in ln, ln
    # and the wheel web/dist serves is that one
    lock = json.loads((browser_site / "pyodide" / "pyodide-lock.json").read_text())
    entry = lock["packages"]["pyaccel"]
    served = browser_site / "pyodide" / entry["file_name"]
    assert hashlib.sha256(served.read_bytes()).hexdigest() == entry["sha256"]
    with zipfile.ZipFile(served) as zf:
        wheel_meta = zf.read("pyaccel-0.1.0.dist-info/WHEEL").decode()
    assert "Generator: hatchling" in wheel_meta, wheel_meta


def test_lock_is_add_wheels_output(browser_site):
    folder = browser_site / "pyodide"
    lock = json.loads((folder / "pyodide-lock.json").read_text())
    npm = json.loads(NPM_LOCK.read_text())
    assert lock["info"] == npm["info"]
    ours = {"pyaccel", "micropip"}
    cdn = f"https://cdn.jsdelivr.net/pyodide/v{json.loads((NPM_LOCK.parent / 'package.json').read_text())['version']}/full/"
    for name, entry in npm["packages"].items():
        if name in ours:
            continue
        got = dict(lock["packages"][name])
        assert got.pop("file_name") == cdn + entry["file_name"], name
        assert got == {k: v for k, v in entry.items() if k != "file_name"}, name
    pa = lock["packages"]["pyaccel"]
    assert pa["depends"] == [] and pa["imports"] == ["pyaccel"] and pa["package_type"] == "package"
    (pin,) = re.findall(r"^micropip==(\S+) --hash=sha256:([0-9a-f]{64})", (ROOT / "wasm" / "pyodide-wheels.lock").read_text(), re.M)
    mp = lock["packages"]["micropip"]
    assert mp["version"] == pin[0] == npm["packages"]["micropip"]["version"]
    assert mp["sha256"] == pin[1] != npm["packages"]["micropip"]["sha256"]  # PyPI's wheel, not Pyodide's build
    wheel = folder / mp["file_name"]
    assert "://" not in mp["file_name"] and wheel.is_file()
    assert hashlib.sha256(wheel.read_bytes()).hexdigest() == mp["sha256"]


def test_build_tools_are_pinned_exactly():
    lines = [ln.strip() for ln in (ROOT / "wasm" / "requirements-build.lock").read_text().splitlines()
             if ln.strip() and not ln.startswith("#")]
    assert lines and all(re.fullmatch(r"[A-Za-z0-9._-]+==[^\s=<>~!]+", ln) for ln in lines), lines
    pins = {ln.split("==")[0].lower().replace("_", "-"): ln.split("==")[1] for ln in lines}
    assert pins["pyodide-build"] == "0.39.2"
    assert pins["jupyterlite-core"] == pins["jupyterlite-pyodide-kernel"] == "0.8.6"
    assert "hatchling" in pins and "pkginfo" in pins
