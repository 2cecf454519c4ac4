"""Sync vs async in the browser: JSPI, AsyncRequiredError and the async twins.

Two ways to lose JSPI are tested:

* ``pyodide.runPython`` (not ``runPythonAsync``): ``can_run_sync()`` is False there for
  real; called through ``page.evaluate``;
* code run with ``runPythonAsync`` while ``pyodide.ffi.can_run_sync`` is patched to
  return False: the sync API must refuse to wait, and code that only awaits (what a
  browser without JSPI runs) must work end to end.

These run in a page of their own (booted once for the module), so the device is opened
here for the first time, whatever ran before.
"""

from __future__ import annotations

import base64

import pytest
from _page_js import RUN_SYNC_JS

np = pytest.importorskip("numpy")

from pyaccel.testing import POISON_F32, assert_allclose_dtype  # noqa: E402

SAXPY = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i < arrayLength(&y)) { y[i] = 2.0 * x[i] + y[i]; }
}
"""
BAD = """
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    y[i] = undefined_function(y[i]);
}
"""



def b64(a) -> str:
    return f"__import__('base64').b64decode({base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()!r})"


@pytest.fixture(scope="module")
def fresh_page(pyodide_page, chromium_webgpu, site_url):
    """The playground in a new tab of the WebGPU browser: nothing opened yet."""
    bp = type(pyodide_page)(chromium_webgpu, site_url, "fresh webgpu page (async tests)")
    yield bp
    bp.page.close()


def run_python(bp, code: str) -> dict:
    return bp.evaluate(RUN_SYNC_JS, code)


def test_runpython_has_no_jspi_and_sync_open_names_the_twin(fresh_page):
    res = run_python(fresh_page, "from pyodide.ffi import can_run_sync; can_run_sync()")
    assert res == {"ok": True, "value": False}
    # discovery needs no wait (the page requested the adapter up front)...
    res = run_python(fresh_page, "import pyaccel; [d.uri for d in pyaccel.devices()]")
    assert res["ok"] and res["value"] == ["webgpu:0"], res
    # ... but opening the device does
    res = run_python(fresh_page, "import pyaccel; pyaccel.device('webgpu:0')")
    assert not res["ok"]
    assert res["type"] == "AsyncRequiredError", res
    assert "await pyaccel.device_async('webgpu:0')" in res["message"]
    assert "JSPI" in res["message"] and "runPythonAsync" in res["message"]
    # a path that resolves a new adapter names that URI
    res = run_python(fresh_page, "import pyaccel; pyaccel.device('webgpu://low-power')")
    assert res["type"] == "AsyncRequiredError", res
    assert "await pyaccel.device_async('webgpu://low-power')" in res["message"]


def test_runpython_sync_read_names_the_twin_and_device_stays_usable(fresh_page, rng):
    x = rng.standard_normal(100).astype(np.float32)
    fresh_page.run_py("import pyaccel\nawait pyaccel.device_async('webgpu:0')")
    res = run_python(fresh_page, f"""
import pyaccel
dev = pyaccel.device('webgpu:0')   # already open: no wait
b = dev.malloc(400)
b.write({b64(x)})                  # writes never wait
import __main__; __main__._async_buf = b
b.read()
""")
    assert res["type"] == "AsyncRequiredError", res
    assert "await buf.read_async()" in res["message"]
    res = run_python(fresh_page, "import pyaccel; pyaccel.device('webgpu:0').synchronize()")
    assert res["type"] == "AsyncRequiredError"
    assert "synchronize_async()" in res["message"]
    # the refused read left nothing half-done: both the async and the JSPI read work
    got = fresh_page.run_py("import __main__\nb = __main__._async_buf\n[await b.read_async(), b.read()]",
                            shared=False)
    assert got[0] == got[1] == x.tobytes()


def test_runpython_kernel_with_host_output_names_call_async(fresh_page, rng):
    n = 64
    # the device is open (as after `await pyaccel.device_async(...)`): the refusal is the call's
    fresh_page.run_py("import pyaccel\n(await pyaccel.device_async('webgpu:0')).uri", shared=False)
    res = run_python(fresh_page, f"""
import pyaccel
k = pyaccel.Kernel({SAXPY!r})
y = bytearray({4 * n})
k(bytes({4 * n}), y, grid=({n},), device='webgpu:0')
""")
    assert res["type"] == "AsyncRequiredError", res
    assert "kernel.call_async(" in res["message"]


def test_async_twins_work_without_jspi(fresh_page, rng):
    """Only awaits, with can_run_sync() False: open, upload, kernels, reads, synchronize."""
    n = 1000
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    got = fresh_page.run_py(f"""
import pyaccel, pyodide.ffi as ffi
orig = ffi.can_run_sync
ffi.can_run_sync = lambda: False
try:
    dev = await pyaccel.device_async('webgpu://high-performance')
    k = pyaccel.Kernel({SAXPY!r})
    xb, yb = dev.malloc({4 * n}), dev.malloc({4 * n})
    xb.write({b64(x)})
    yb.write({b64(y)})
    k(xb, yb, grid=({n},))                 # records only: fine without JSPI
    errors = []
    for call in (yb.read, dev.synchronize):
        try:
            call()
        except pyaccel.AsyncRequiredError as e:
            errors.append(str(e))
    on_device = await yb.read_async()
    await dev.synchronize_async()
    host = bytearray({b64(y)})
    await k.call_async({b64(x)}, host, grid=({n},), device=dev)   # host read_write write-back
    default = await pyaccel.device_async()
    result = (dev.uri, on_device, bytes(host), errors, default.uri, ffi.can_run_sync())
finally:
    ffi.can_run_sync = orig
result
""")
    uri, on_device, host, errors, default_uri, jspi = got
    assert jspi is False
    assert uri == "webgpu://high-performance"
    expect = np.float32(2) * x + y
    assert_allclose_dtype(np.frombuffer(on_device, np.float32), expect, "float32", what="read_async")
    assert_allclose_dtype(np.frombuffer(host, np.float32), expect, "float32", what="call_async")
    assert len(errors) == 2 and all("AsyncRequiredError" not in e and "_async" in e for e in errors)
    assert default_uri.startswith("webgpu")


def test_compile_error_without_jspi_surfaces_at_the_next_await(fresh_page):
    got = fresh_page.run_py(f"""
import pyaccel, struct, pyodide.ffi as ffi
orig = ffi.can_run_sync
ffi.can_run_sync = lambda: False
out = []
try:
    dev = await pyaccel.device_async('webgpu:0')
    b = dev.malloc(256)
    b.write(struct.pack('<I', {POISON_F32}) * 64)
    bad = pyaccel.Kernel({BAD!r})
    bad(b, grid=(64,))                      # no JSPI: compiled unchecked, no error yet
    out.append('recorded')
    try:
        await b.read_async()
        out.append('no error at the await')
    except pyaccel.KernelCompileError as e:
        out.append(('await', e.line, e.column, str(e)))
    try:
        bad(b, grid=(64,))
        out.append('bad kernel ran again')
    except pyaccel.KernelCompileError as e:
        out.append(('again', e.line, e.column))
    good = pyaccel.Kernel({SAXPY!r})
    y = bytearray(struct.pack('<4f', 1, 2, 3, 4))
    await good.call_async(struct.pack('<4f', 1, 1, 1, 1), y, grid=(4,), device=dev)
    out.append(struct.unpack('<4f', y))
finally:
    ffi.can_run_sync = orig
out
""")
    assert got[0] == "recorded"
    kind, line, col, msg = got[1]
    assert (kind, line) == ("await", 6), got[1]
    assert col and col > 1
    assert "undefined_function" in msg and "line 6" in msg
    assert got[2] == ["again", 6, col]
    assert got[3] == [3.0, 4.0, 5.0, 6.0]  # the device is still usable
