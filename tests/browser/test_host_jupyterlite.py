"""JupyterLite (web/dist-jupyterlite, ``npm run build:jupyterlite``): the Pyodide kernel on
pyaccel's Pyodide folder, offline.

The REPL app boots the kernel (a Web Worker) once for the module and runs one cell given in
its URL: ``%pip install pyaccel`` and, in the same cell, ``import pyaccel`` and work on
``webgpu:0`` (a matmul and an elementwise op) on random inputs made here; the cell prints its
results as base64 after a marker, and they are compared with NumPy here. The site is built
first when missing or stale (a build failure fails the test under CI=true).
"""

from __future__ import annotations

import base64
import json
import sys
import time
import urllib.parse

import pytest
from _hosts import HostPage, ensure_jupyterlite, serve

np = pytest.importorskip("numpy")
pytestmark = pytest.mark.xdist_group("host-jupyterlite")  # one boot per host under --dist loadgroup

BOOT_TIMEOUT_MS = 240_000
MARK = "PYACCEL-RESULT "
M, K, N = 48, 40, 56


@pytest.fixture(scope="module")
def lite_cell(chromium_webgpu, browser_site):
    site = ensure_jupyterlite()
    rng = np.random.default_rng()
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    code = f"""%pip install pyaccel
import base64, json, sys
import pyaccel, pyodide
from pyodide.ffi import can_run_sync
dev = pyaccel.device("webgpu:0")
a = pyaccel.reshape(pyaccel.asarray(memoryview(base64.b64decode({base64.b64encode(a.tobytes()).decode()!r})).cast("f"), device=dev), ({M}, {K}))
b = pyaccel.reshape(pyaccel.asarray(memoryview(base64.b64decode({base64.b64encode(b.tobytes()).decode()!r})).cast("f"), device=dev), ({K}, {N}))
c = a @ b
e = pyaccel.tanh(a) * 3 - 1
print({MARK!r} + json.dumps({{"platform": sys.platform, "pyodide": pyodide.__version__, "jspi": can_run_sync(),
    "file": pyaccel.__file__, "device": str(c.device),
    "c": base64.b64encode(bytes(c)).decode(), "e": base64.b64encode(bytes(e)).decode()}}))
"""
    with serve(site) as (url, misses):
        hp = HostPage(chromium_webgpu, url, "JupyterLite REPL")
        t0 = time.perf_counter()
        try:
            hp.page.goto(url + "repl/index.html?kernel=python&toolbar=1&code=" + urllib.parse.quote(code),
                         wait_until="load")
            hp.page.wait_for_function(
                """(mark) => [...document.querySelectorAll('.jp-OutputArea-output')].some(
                     (o) => o.innerText.includes(mark) || /Error|Traceback/.test(o.innerText))""",
                arg=MARK, timeout=BOOT_TIMEOUT_MS)
            outputs = [o.inner_text() for o in hp.page.query_selector_all(".jp-OutputArea-output")]
        except Exception as e:
            hp.fail(f"the kernel did not run the cell ({type(e).__name__}: {e}); server misses: {misses}")
        finally:
            hp.boot_seconds = time.perf_counter() - t0
            hp.close()
    line = next((ln for o in outputs for ln in o.splitlines() if ln.startswith(MARK)), None)
    if line is None:
        pytest.fail("the cell raised:\n" + "\n".join(outputs) + "\n" + hp.log(), pytrace=False)
    print(f"[browser tests] JupyterLite: kernel booted and cell ran in {hp.boot_seconds:.1f}s", file=sys.stderr)
    return json.loads(line[len(MARK):]), a, b, hp, misses


def test_jupyterlite_kernel_pip_installs_and_imports_pyaccel(lite_cell):
    out, _, _, hp, misses = lite_cell
    assert out["platform"] == "emscripten" and out["jspi"] is True
    assert out["pyodide"] == "314.0.7"  # pyaccel's folder, not the kernel's default CDN release
    assert "site-packages/pyaccel" in out["file"]
    assert out["device"].startswith("<pyaccel.Device webgpu:0")
    assert hp.offsite == [], hp.log()  # offline: nothing left this machine
    assert not [m for m in misses if ".whl" in m or "pyodide" in m], misses


def test_jupyterlite_cell_computes_on_webgpu(lite_cell):
    out, a, b, _, _ = lite_cell
    c = np.frombuffer(base64.b64decode(out["c"]), dtype=np.float32).reshape(M, N)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-4 * np.sqrt(K))
    e = np.frombuffer(base64.b64decode(out["e"]), dtype=np.float32).reshape(M, K)
    np.testing.assert_allclose(e, np.tanh(a) * np.float32(3) - np.float32(1), rtol=1e-5, atol=1e-5)
