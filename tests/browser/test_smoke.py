"""Smoke tests: the playground boots Pyodide + pyaccel, and Python reaches WebGPU."""

from __future__ import annotations

import struct

import pytest


def test_boots_in_emscripten(pyodide_page):
    assert pyodide_page.run_py("import sys; sys.platform") == "emscripten"
    # reported, not asserted: how long Pyodide + loadPackage("pyaccel") took
    print(f"boot + loadPackage: {pyodide_page.boot_seconds:.1f}s")


def test_pyaccel_wheel_loaded(pyodide_page):
    info = pyodide_page.run_py(
        "import pyaccel, sys\n"
        "(pyaccel.__version__, pyaccel.__file__, 'numpy' in sys.modules, 'wgpu' in sys.modules)"
    )
    version, path, has_numpy, has_wgpu = info
    assert isinstance(version, str) and version
    assert "site-packages" in path  # installed from the wheel, not a stray copy
    assert not has_wgpu  # native-only dependency must never come along
    assert not has_numpy  # offline Pyodide has no numpy; importing pyaccel must not need it


def test_page_elements_present(pyodide_page):
    ids = ["code", "examples", "run", "output", "devices", "elapsed", "banner"]
    missing = pyodide_page.evaluate("(ids) => ids.filter((i) => !document.getElementById(i))", ids)
    assert missing == []
    assert pyodide_page.evaluate("() => document.getElementById('banner').hidden") is True
    assert pyodide_page.evaluate("() => window.isSecureContext") is True


def test_navigator_gpu_and_adapter_from_python(pyodide_page):
    gpu = pyodide_page.webgpu()
    assert gpu["available"], gpu["reason"]
    assert gpu["adapter"]["architecture"] == "swiftshader"
    info = pyodide_page.run_py(
        "from pyodide.ffi import run_sync, can_run_sync\n"
        "import js\n"
        "a = run_sync(js.navigator.gpu.requestAdapter())\n"
        "(can_run_sync(), a.info.vendor, a.info.architecture)"
    )
    assert info == [True, "google", "swiftshader"]


def test_bytes_round_trip(pyodide_page):
    payload = bytes(range(256)) * 64 + b"\x00\xff"
    got = pyodide_page.run_py_bytes(
        "import base64\n"
        f"data = base64.b64decode({__import__('base64').b64encode(payload).decode()!r})\n"
        "memoryview(data)"
    )
    assert got == payload
    # non-byte memoryview formats come back as their raw bytes
    got = pyodide_page.run_py_bytes("import array; memoryview(array.array('f', [1.5, -2.0, 3.25]))")
    assert struct.unpack("<3f", got) == (1.5, -2.0, 3.25)
    # JSON conversion of mixed results
    assert pyodide_page.run_py("(1, 2.5, None, {'a': [True]}, b'\\x01', float('inf'))") == [
        1, 2.5, None, {"a": [True]}, b"\x01", float("inf")
    ]


def test_python_errors_raise(pyodide_page):
    with pytest.raises(pyodide_page.Error, match="ZeroDivisionError"):
        pyodide_page.run_py("1 / 0")


def test_raw_webgpu_example_matches_numpy(pyodide_page):
    np = pytest.importorskip("numpy")
    code = pyodide_page.evaluate(
        "() => window.pyaccelPlayground.examples.find((e) => e.id === 'webgpu-raw').code"
    )
    out = pyodide_page.run_py_bytes(code + "\nout\n", timeout=60)
    y = np.frombuffer(out, dtype=np.float32)
    x = np.arange(y.size, dtype=np.float32)
    np.testing.assert_array_equal(y, 2 * x + 1)


def test_playground_run_button(pyodide_page):
    page = pyodide_page.page
    page.fill("#code", "print('hello', 6 * 7)")
    page.click("#run")
    page.wait_for_function("() => document.getElementById('elapsed').textContent.endsWith(' ms')")
    assert "hello 42" in page.inner_text("#output")


def test_nogpu_page_reports_no_adapter(nogpu_page):
    gpu = nogpu_page.webgpu()
    assert gpu["available"] is False
    assert gpu["reason"]
    # record which way WebGPU is unavailable in plain headless Chromium
    print(f"no-WebGPU page: navigator.gpu present={gpu['navigatorGpu']}; reason: {gpu['reason']}")
    assert nogpu_page.evaluate("() => document.getElementById('banner').hidden") is False
    # Python sees the same thing
    seen = nogpu_page.run_py(
        "import js\n"
        "from pyodide.ffi import run_sync\n"
        "gpu = getattr(js.navigator, 'gpu', None)\n"
        "'no navigator.gpu' if gpu is None else run_sync(gpu.requestAdapter())"
    )
    assert seen in ("no navigator.gpu", None)
    # pyaccel itself still imports
    assert nogpu_page.run_py("import pyaccel; pyaccel.__version__")
