"""pyaccel in a dedicated module worker (web/public/worker/): the pattern of docs/browser.md.

The page ``worker/index.html`` starts ``pyaccel-worker.mjs`` with ``{type: "module"}`` and
exposes ``runInWorker(code, inputs)``; Pyodide boots once for the module. Inputs are made
with NumPy here, sent as typed arrays, and results come back as bytes and are compared with
NumPy here. A classic worker is refused by Pyodide itself (checked, since the docs say so).
"""

from __future__ import annotations

import sys
import time

import pytest
from _hosts import HostPage

np = pytest.importorskip("numpy")
pytestmark = pytest.mark.xdist_group("host-worker")  # one boot per host under --dist loadgroup

BOOT_TIMEOUT_MS = 180_000


@pytest.fixture(scope="module")
def worker_page(chromium_webgpu, site_url, browser_site):
    assert (browser_site / "worker" / "pyaccel-worker.mjs").is_file(), "web/dist/worker/ is missing"
    hp = HostPage(chromium_webgpu, site_url, "module-worker page")
    t0 = time.perf_counter()
    try:
        hp.page.goto(site_url + "worker/index.html", wait_until="load")
        res = hp.evaluate(
            """async (ms) => Promise.race([window.pyaccelWorkerReady,
                 new Promise((r) => setTimeout(() => r({ok: false, error: `not ready after ${ms} ms`}), ms))])""",
            BOOT_TIMEOUT_MS)
    except Exception as e:  # playwright timeout / crash
        res = {"ok": False, "error": str(e)}
    hp.boot_seconds = time.perf_counter() - t0
    if not res.get("ok"):
        hp.fail(f"Pyodide/pyaccel did not boot in the module worker: {res.get('error')}")
    print(f"[browser tests] module worker booted in {hp.boot_seconds:.1f}s: {res['result']}", file=sys.stderr)
    hp.ready = res["result"]
    yield hp
    hp.close()


def run(hp: HostPage, code: str, inputs=None, timeout_ms: int = 120_000):
    res = hp.evaluate(
        """async ([code, inputs, ms]) => Promise.race([window.runInWorker(code, inputs),
             new Promise((r) => setTimeout(() => r({ok: false, error: `timed out after ${ms} ms`}), ms))])""",
        [code, inputs, timeout_ms])
    if not res["ok"]:
        hp.fail(f"Python in the worker failed: {res['error']}")
    return res["result"]


def as_bytes(value) -> bytes:
    """A Uint8Array from the worker arrives as {index: byte} through Playwright."""
    if isinstance(value, dict):
        return bytes(value[str(i)] for i in range(len(value)))
    return bytes(value)


def test_worker_boots_and_reports_the_device(worker_page):
    assert "on webgpu:0" in worker_page.ready and "emscripten" in worker_page.ready
    assert "JSPI: True" in worker_page.ready
    got = run(worker_page, """
import js
(type(js).__name__, hasattr(js, "document"), str(js.self.constructor.name))
""")
    assert got[1] is False and got[2] == "DedicatedWorkerGlobalScope", got


def test_async_api_in_the_worker(worker_page):
    rng = np.random.default_rng()
    x = rng.standard_normal(4099).astype(np.float32)
    out = run(worker_page, """
import pyaccel
dev = await pyaccel.device_async("webgpu:0")
x = pyaccel.asarray(memoryview(inputs.x.to_bytes()).cast("f"), device=dev)
y = pyaccel.exp(x) * 2 + x
await y.tobytes_async()
""", {"x": x.tobytes()})
    got = np.frombuffer(as_bytes(out), dtype=np.float32)
    np.testing.assert_allclose(got, np.exp(x) * 2 + x, rtol=2e-6, atol=1e-6)


def test_sync_api_through_jspi_in_the_worker(worker_page):
    rng = np.random.default_rng()
    x = rng.integers(-1000, 1000, size=777).astype(np.int32)
    got = run(worker_page, """
import pyaccel
from pyodide.ffi import can_run_sync
dev = pyaccel.device("webgpu:0")          # sync: waits through JSPI
x = pyaccel.asarray(memoryview(inputs.x.to_bytes()).cast("i"), device=dev)
[can_run_sync(), (x * 3 - 7).tolist(), int(pyaccel.sum(x).tolist())]
""", {"x": x.tobytes()})
    assert got[0] is True
    assert got[1] == (x * 3 - 7).tolist()
    assert got[2] == int(x.sum())


def test_custom_kernel_in_the_worker(worker_page):
    rng = np.random.default_rng()
    n = 3001
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    a = np.float32(rng.uniform(0.5, 2.0))
    out = run(worker_page, f"""
import struct
import pyaccel
from pyaccel.testing import poison
dev = pyaccel.device("webgpu:0")
saxpy = pyaccel.Kernel('''
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> a: f32;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
    if (gid.x < arrayLength(&out)) {{ out[gid.x] = a * x[gid.x] + y[gid.x]; }}
}}
''')
x = pyaccel.asarray(memoryview(inputs.x.to_bytes()).cast("f"), device=dev)
y = pyaccel.asarray(memoryview(inputs.y.to_bytes()).cast("f"), device=dev)
out = poison(pyaccel.empty(({n},), dtype=pyaccel.float32, device=dev))
saxpy(x, y, out, struct.pack("<f", {float(a)!r}), grid=({n},))
bytes(out)
""", {"x": x.tobytes(), "y": y.tobytes()})
    got = np.frombuffer(as_bytes(out), dtype=np.float32)
    np.testing.assert_allclose(got, a * x + y, rtol=1e-6, atol=1e-6)


def test_matmul_in_the_worker_matches_numpy(worker_page):
    rng = np.random.default_rng()
    m, k, n = 256, 320, 192
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    worker_page.evaluate("() => { window.longestTimerGapMs = 0; }")
    out = run(worker_page, f"""
import pyaccel
dev = await pyaccel.device_async("webgpu:0")
a = pyaccel.reshape(pyaccel.asarray(memoryview(inputs.a.to_bytes()).cast("f"), device=dev), ({m}, {k}))
b = pyaccel.reshape(pyaccel.asarray(memoryview(inputs.b.to_bytes()).cast("f"), device=dev), ({k}, {n}))
c = a @ b
await c.tobytes_async()
""", {"a": a.tobytes(), "b": b.tobytes()})
    gap = worker_page.evaluate("() => window.longestTimerGapMs")
    got = np.frombuffer(as_bytes(out), dtype=np.float32).reshape(m, n)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.sqrt(k))
    # reported, not asserted: the page's main thread kept running its timers
    print(f"matmul {m}x{k}x{n} in the worker: longest main-thread timer gap {gap:.0f} ms")


def test_classic_worker_is_refused_by_pyodide(chromium_webgpu, site_url):
    """docs/browser.md says a classic worker fails inside Pyodide itself: keep that true."""
    hp = HostPage(chromium_webgpu, site_url, "classic-worker page")
    try:
        hp.page.goto(site_url + "pyodide/package.json", wait_until="load")  # same origin, no Pyodide
        msg = hp.evaluate("""async (base) => new Promise((resolve) => {
            const src = `try { importScripts("${base}pyodide/pyodide.js");
                             loadPyodide({indexURL: "${base}pyodide/"}).then(
                               () => postMessage("booted?!"), (e) => postMessage(String(e?.message ?? e)));
                         } catch (e) { postMessage(String(e?.message ?? e)); }`;
            const w = new Worker(URL.createObjectURL(new Blob([src], {type: "text/javascript"})));
            w.onmessage = (e) => { resolve(e.data); w.terminate(); };
            w.onerror = (e) => { resolve("onerror: " + e.message); w.terminate(); };
            setTimeout(() => resolve("no answer after 60 s"), 60000);
        })""", site_url)
    finally:
        hp.close()
    assert "Classic web workers are not supported" in msg, msg


def test_docs_show_the_shipped_worker():
    """docs/browser.md section 2b shows pyaccel-worker.mjs as shipped (from its import on)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    doc = (root / "docs" / "browser.md").read_text()
    shipped = (root / "web" / "public" / "worker" / "pyaccel-worker.mjs").read_text()
    body = shipped[shipped.index('import { loadPyodide }'):]
    assert "```js\n" + body + "```" in doc, "docs/browser.md 2b no longer shows pyaccel-worker.mjs"
