"""The playground page: every example runs from the Run button; screenshots are kept.

Screenshots go to ``artifacts/browser/`` (gitignored; CI can upload the folder).
Examples that use the Array API (vector-add, matmul, softmax) are skipped while
``pyaccel.asarray`` / ``pyaccel.matmul`` / ``pyaccel.nn.softmax`` are missing in the page.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "browser"

# example id -> text its output must contain
EXPECTED = {
    "devices": ["webgpu:0", "default device: <pyaccel.Device webgpu:0"],
    "vector-add": ["z = x + y on webgpu:0", "ok"],
    "matmul": ["c = a @ b on webgpu:0: 96 x 64", "ok"],
    "kernel": ["device: <pyaccel.Device webgpu:0", "ok"],
    "softmax": ["softmax over 128 x 1000 on webgpu:0", "ok"],
    "async": ["webgpu:0 (0.0, 4.0, 8.0", "call_async: (2.0, 4.0, 6.0)", "ok"],
    "device-info": ["Device webgpu:0", "swiftshader", "max storage binding:"],
    "buffer": ["webgpu:0", "(0.0, 0.5, 1.0, 1.5"],
    "webgpu-raw": ["mismatches: 0"],
}
ARRAY_API = {"vector-add": "asarray", "matmul": "matmul", "softmax": "nn.softmax"}

HAS_ARRAY_API_PY = """
import pyaccel
def _has(path):
    obj = pyaccel
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return False
    return callable(obj)
{name: _has(name) for name in ("asarray", "matmul", "nn.softmax")}
"""


def shot(page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def click_run(page, example: str | None = None, timeout_ms: float = 90_000) -> tuple[str, str, bool]:
    """Select ``example`` (if given), click Run, wait for the run to end; (output, elapsed, had_error)."""
    if example is not None:
        page.select_option("#examples", example)
    page.evaluate("() => { document.getElementById('elapsed').textContent = ''; }")
    page.click("#run")
    page.wait_for_function(
        "() => /^[0-9.]+ ms$/.test(document.getElementById('elapsed').textContent)"
        " && !document.getElementById('run').disabled",
        timeout=timeout_ms,
    )
    out = page.inner_text("#output")
    err = page.evaluate("() => !!document.querySelector('#output .err')")
    return out, page.inner_text("#elapsed"), err


def test_every_example_is_listed(pyodide_page):
    ids = pyodide_page.evaluate("() => [...document.querySelectorAll('#examples option')].map((o) => o.value)")
    assert set(EXPECTED) <= set(ids), f"missing examples: {set(EXPECTED) - set(ids)}"
    assert ids[:6] == ["devices", "vector-add", "matmul", "kernel", "softmax", "async"]


@pytest.mark.parametrize("example", list(EXPECTED))
def test_example_runs(pyodide_page, example):
    if example in ARRAY_API:
        have = pyodide_page.run_py(HAS_ARRAY_API_PY)
        if not have[ARRAY_API[example]]:
            pytest.skip(f"pyaccel.{ARRAY_API[example]} is not in this pyaccel yet (Array API)")
    page = pyodide_page.page
    page.uncheck("#numpy-check")
    out, elapsed, err = click_run(page, example)
    path = shot(page, f"playground-{example}")
    assert not err, f"{example} failed:\n{out}"
    for text in EXPECTED[example]:
        assert text in out, f"{example}: {text!r} not in the output:\n{out}"
    if "check_with_numpy" in page.input_value("#code"):
        assert "NumPy check of" in out and "skipped" in out
    assert re.fullmatch(r"[0-9.]+ ms", elapsed)
    print(f"{example}: {elapsed}; screenshot {path}")


def test_numpy_toggle_reports_failure_gracefully(pyodide_page):
    """Offline, loadPackage("numpy") fails: the run says so and goes on without the check."""
    page = pyodide_page.page
    page.check("#numpy-check")
    try:
        out, _, err = click_run(page, "kernel")
        shot(page, "playground-numpy-toggle")
    finally:
        page.uncheck("#numpy-check")
    assert not err, out
    assert "ok" in out
    if "NumPy check of saxpy: ok" in out:  # online: numpy loaded and the check passed
        return
    assert "NumPy could not be loaded" in out and "network" in out, out
    assert "NumPy check of saxpy: skipped (numpy could not be loaded)" in out
    assert "Traceback" not in out.split("\n")[0]  # the note gives the error, not a traceback header


def test_device_report(pyodide_page):
    page = pyodide_page.page
    page.wait_for_function("() => window.pyaccelReported === true", timeout=30_000)
    text = page.inner_text("#devices")
    assert "WebGPU adapter (JS): google / swiftshader" in text
    assert re.search(r"webgpu:0\s+google swiftshader \(webgpu, cpu\)", text), text
    assert "cpu      unavailable:" in text and "loadPackage('numpy')" in text
    assert "default device: webgpu:0" in text


def test_python_error_shows_traceback(pyodide_page):
    page = pyodide_page.page
    page.fill("#code", "import pyaccel\npyaccel.device('webgpu:7')")
    out, _, err = click_run(page)
    assert err
    assert "DeviceNotFoundError" in out and "webgpu:7" in out
    assert "_pyodide/_base.py" not in out  # Pyodide's own frames are trimmed


def test_nogpu_banner_says_why_and_the_fallback(nogpu_page):
    page = nogpu_page.page
    page.wait_for_function("() => window.pyaccelReported === true", timeout=30_000)
    banner = page.inner_text("#banner")
    shot(page, "playground-no-webgpu")
    assert "WebGPU is not available" in banner
    assert "pyaccel: webgpu unavailable (" in banner
    # offline there is no numpy, so there is nothing to fall back to, and the banner says how to fix it
    assert ("pyaccel falls back to cpu:0" in banner
            or ("no device to fall back to" in banner and "loadPackage('numpy')" in banner)), banner
    out, _, err = click_run(page, "devices")
    shot(page, "playground-no-webgpu-devices")
    assert err and "DeviceNotFoundError" in out
    assert "webgpu: " in out and "loadPackage('numpy')" in out  # every backend's reason is listed
