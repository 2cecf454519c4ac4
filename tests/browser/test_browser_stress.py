"""The browser path under pressure (issue 13): failed allocations, GPU errors, device loss,
concurrency and pages without JSPI.

* allocations at and over ``max_buffer_size`` / ``max_storage_binding_size`` (SwiftShader
  here cannot back 1 GiB = max_buffer_size): a typed error or correct values, never the
  bytes of an earlier read, and the device usable afterwards; the same without JSPI, where
  the failure is reported at the next ``await``;
* forced failures: a buffer creation that the browser rejects (the JS ``createBuffer``
  patched to ask for more than the limit, so the error arrives through an error scope), and
  a copy out of a buffer destroyed behind pyaccel's back (a failed submit) must raise
  instead of returning a reused staging buffer's old contents; the failed buffers must not
  come back from the pools (a new array of that size, the same op again, work);
* ``GPUDevice.destroy()`` from JS: the first read raises ``DeviceLostError``, allocations on
  the lost device too (not ``OutOfDeviceMemoryError``), and ``pyaccel.device('webgpu')`` /
  ``await pyaccel.device_async('webgpu')`` open a fresh, working device;
* 50 concurrent asyncio tasks, each uploading, computing and reading its own data;
* ``pyodide.runPython`` (no JSPI): ``get_device()`` / ``device()`` without a URI raise
  ``AsyncRequiredError`` naming ``await pyaccel.device_async()``.

The shared page (``pyodide_page``) runs the tests that leave its device usable; device
loss and the no-JSPI default device run in a tab of their own (``own_page``), where the
registry starts empty. Inputs are fresh NumPy random data; results are compared here.
"""

from __future__ import annotations

import base64

import pytest
from _page_js import RUN_SYNC_JS

np = pytest.importorskip("numpy")

from pyaccel.testing import assert_allclose_dtype  # noqa: E402

GIB_F32 = 268435456  # float32 elements in 1 GiB (max_buffer_size on SwiftShader)
STALE = 4321.0 * 8  # what the earlier read below leaves in the staging pool


NO_JSPI = """
import pyodide.ffi as _ffi
_orig_can_run_sync = _ffi.can_run_sync
_ffi.can_run_sync = lambda: False
"""
RESTORE_JSPI = "_ffi.can_run_sync = _orig_can_run_sync\n"


def b64(a) -> str:
    return f"__import__('base64').b64decode({base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()!r})"


def f32(a) -> str:
    """Python source of a float32 pyaccel array on the page's device ``dev``."""
    return f"pyaccel.asarray(memoryview({b64(a)}).cast('f'), dtype=pyaccel.float32, device=dev)"


def usable(run_py, rng, device: str = "webgpu") -> None:
    """The device computes right on fresh data (after an error)."""
    x = rng.standard_normal(1000).astype(np.float32)
    got = run_py(f"""
import pyaccel
dev = pyaccel.device({device!r})
x = {f32(x)}
bytes(x * 3.0 + 1.0)
""")
    assert_allclose_dtype(np.frombuffer(got, np.float32), x * np.float32(3) + np.float32(1), "float32",
                          what="after the error")


@pytest.fixture(scope="module")
def own_page(pyodide_page, chromium_webgpu, site_url):
    """The playground in a new tab of the WebGPU browser: its own registry and device."""
    bp = type(pyodide_page)(chromium_webgpu, site_url, "webgpu page (stress: loss, no JSPI)")
    yield bp
    bp.page.close()


# ----------------------------------------------------------------- allocations
def test_1gib_allocation_never_returns_stale_data(pyodide_page, rng):
    """Issue 13 item 1: 1 GiB of ones read back as an earlier read's 34568.0, no error."""
    got = pyodide_page.run_py(f"""
import pyaccel as xp
s = xp.sum(xp.asarray([4321.0] * 8, device='webgpu')).tolist()
try:
    x = xp.ones(({GIB_F32},), dtype=xp.float32, device='webgpu')
    res = ['ok', xp.sum(x).tolist(), x[0].tolist(), x[-1].tolist()]
    del x
except xp.OutOfDeviceMemoryError as e:
    res = ['oom', str(e)]
[s, res]
""", timeout=120)
    s, res = got
    assert s == STALE
    if res[0] == "ok":  # a browser that can back 1 GiB: the values must be right
        assert res[1:] == [float(GIB_F32), 1.0, 1.0], res
    else:
        assert "1073741824" in res[1] and "free arrays" in res[1].lower(), res[1]
    usable(pyodide_page.run_py, rng)


def test_1gib_allocation_without_jspi_raises_at_the_next_await(pyodide_page, rng):
    """Without JSPI the allocation cannot be waited for: its failure surfaces at the next
    await (the read), and every later read of the array raises too, never stale bytes."""
    got = pyodide_page.run_py(NO_JSPI + f"""
import pyaccel as xp
out = []
try:
    dev = await xp.device_async('webgpu')
    out.append(await xp.sum(xp.asarray([4321.0] * 8, device=dev)).tolist_async())
    x = xp.ones(({GIB_F32},), dtype=xp.float32, device=dev)   # records only
    for what in ('sum', 'first', 'last'):
        y = xp.sum(x) if what == 'sum' else (x[0] if what == 'first' else x[-1])
        try:
            out.append([what, 'ok', await y.tolist_async()])
        except xp.PyaccelError as e:
            out.append([what, type(e).__name__, str(e)])
    del x, y
finally:
    {RESTORE_JSPI.strip()}
out
""", timeout=120)
    assert got[0] == STALE
    results = got[1:]
    if results[0][1] == "ok":
        assert [r[2] for r in results] == [float(GIB_F32), 1.0, 1.0], results
    else:
        assert results[0][1] == "OutOfDeviceMemoryError", results[0]
        assert "1073741824" in results[0][2]
        for what, kind, value in results[1:]:  # the invalid buffer keeps failing, typed
            assert kind != "ok", f"{what}: read {value} from an array whose allocation failed"
    usable(pyodide_page.run_py, rng)


@pytest.mark.parametrize("limit", ["max_buffer_size", "max_storage_binding_size"])
def test_allocation_over_the_limits_is_typed_and_harmless(pyodide_page, rng, limit):
    got = pyodide_page.run_py(f"""
import pyaccel as xp
dev = xp.device('webgpu')
n = dev.limits.{limit} + 4
out = []
for make in (lambda: dev.malloc(n), lambda: xp.ones((n // 4,), dtype=xp.float32, device=dev)):
    try:
        make()
        out.append('allocated')
    except xp.OutOfDeviceMemoryError as e:
        out.append(str(e))
[n, out]
""")
    n, out = got
    assert len(out) == 2
    for msg in out:
        assert msg != "allocated" and str(n) in msg, msg
    usable(pyodide_page.run_py, rng)


def test_rejected_buffer_creation_raises_instead_of_returning_data(pyodide_page, rng):
    """createBuffer patched (in JS) to ask for more than max_buffer_size for one size: the
    browser answers with an invalid buffer and a validation error in the error scope. A
    small allocation is checked at the next sync point: the read raises, typed."""
    x = rng.standard_normal(3001).astype(np.float32)  # 12004 bytes: the 12288-byte class
    good = rng.standard_normal(100).astype(np.float32)
    x2 = rng.standard_normal(3001).astype(np.float32)
    got = pyodide_page.run_py(f"""
import pyaccel, js
from pyodide.code import run_js
dev = pyaccel.device('webgpu')
dev.impl.trim()                      # no pooled 12288-byte buffer to reuse
jsdev = dev.impl.f.device
patch = run_js('''(dev) => {{
  const orig = dev.createBuffer;
  const st = {{hits: 0, orig}};
  dev.createBuffer = function (d) {{
    if (d.size === 12288 && (d.usage & 128)) {{
      st.hits += 1;
      d = {{size: dev.limits.maxBufferSize + 4, usage: d.usage}};
    }}
    return orig.call(this, d);
  }};
  return st;
}}''')(jsdev)
out = []
try:
    g = {f32(good)}
    y = {f32(x)}
    for what in ('read', 'read again'):
        try:
            out.append([what, 'ok', bytes(y)])
        except pyaccel.PyaccelError as e:
            out.append([what, type(e).__name__, str(e)])
finally:
    del jsdev.createBuffer            # back to the prototype's method
out.append(patch.hits)
out.append(bytes(g * 2.0))             # the other array and the device are fine
del y                                  # its invalid buffer goes back to the pool...
z = {f32(x2)}                          # ... which must not hand it out again
out.append(bytes(z + 0.0))
out.append(bytes(z))
out
""")
    *reads, hits, other, z_op, z_raw = got
    assert hits >= 1, "the patched createBuffer was never called: the test did not test anything"
    what, kind, msg = reads[0]
    assert kind == "OutOfDeviceMemoryError", f"read returned data ({len(msg)} bytes) instead of raising"
    assert "12288" in msg and "validation" in msg, msg
    assert reads[1][1] != "ok", "a read of the invalid buffer returned data"
    assert reads[1][1] in ("WebGPUError", "OutOfDeviceMemoryError"), reads[1]
    assert_allclose_dtype(np.frombuffer(other, np.float32), good * np.float32(2), "float32")
    assert z_raw == x2.tobytes(), "a new array of the failed size class read wrong bytes"
    assert_allclose_dtype(np.frombuffer(z_op, np.float32), x2, "float32", what="op on the same size class")
    usable(pyodide_page.run_py, rng)


def test_failed_small_allocation_inside_an_op_does_not_break_that_op(pyodide_page, rng):
    """The first small buffer an op creates (its parameter block) is rejected by the
    browser: the read raises, and the same op with the same parameters works afterwards
    (a cached parameter block whose creation failed must not be reused)."""
    x = rng.standard_normal(1000).astype(np.float32)
    a, b = float(rng.uniform(2, 3)), float(rng.uniform(-1, 1))
    got = pyodide_page.run_py(f"""
import pyaccel
from pyodide.code import run_js
dev = pyaccel.device('webgpu')
x = {f32(x)}
bytes(x)
dev.impl.trim()                      # nothing pooled: the op creates its small buffers
patch = run_js('''(dev) => {{
  const orig = dev.createBuffer;
  const st = {{hits: 0}};
  dev.createBuffer = function (d) {{
    if (d.size < 4096 && st.hits === 0) {{
      st.hits += 1;
      d = {{size: dev.limits.maxBufferSize + 4, usage: d.usage}};
    }}
    return orig.call(this, d);
  }};
  return st;
}}''')(dev.impl.f.device)
out = []
try:
    for attempt in range(3):
        try:
            out.append(['ok', bytes(x * {a!r} + {b!r})])
        except pyaccel.PyaccelError as e:
            out.append([type(e).__name__, str(e)])
finally:
    del dev.impl.f.device.createBuffer
[patch.hits, out]
""")
    hits, out = got
    assert hits == 1
    assert out[0][0] == "OutOfDeviceMemoryError", out[0]
    expect = x * np.float32(a) + np.float32(b)
    for kind, value in out[1:]:
        assert kind == "ok", f"the op keeps failing after one failed allocation: {value}"
        assert_allclose_dtype(np.frombuffer(value, np.float32), expect, "float32", what="the op again")


def test_failed_copy_never_returns_the_staging_buffers_old_bytes(pyodide_page, rng):
    """A read whose copy fails (its source buffer was destroyed in JS) must raise: the
    pooled staging buffer it would map still holds the previous read's bytes."""
    a = rng.standard_normal(777).astype(np.float32)
    b = rng.standard_normal(777).astype(np.float32)
    for mode in ("sync", "async"):
        got = pyodide_page.run_py(f"""
import pyaccel
dev = pyaccel.device('webgpu')
ba, bb = dev.malloc({a.nbytes}), dev.malloc({b.nbytes})
ba.write({b64(a)})
bb.write({b64(b)})
first = ba.read()                  # leaves a's bytes in a pooled staging buffer
# bb's JS buffer swapped for a destroyed one behind pyaccel's back: the copy out of it fails
import js
from pyodide.ffi import to_js
real = bb.handle.buf
dead = dev.impl.f.device.createBuffer(to_js({{'size': bb.handle.size, 'usage': 4 | 8 | 128}},
                                            dict_converter=js.Object.fromEntries))
dead.destroy()
bb.handle.buf = dead
try:
    second = ['ok', (await bb.read_async()) if {mode == 'async'} else bb.read()]
except pyaccel.PyaccelError as e:
    second = [type(e).__name__, str(e)]
finally:
    bb.handle.buf = real           # the pooled handle gets its live buffer back
again = ba.read()
[first, second, again]
""")
        first, second, again = got
        assert first == a.tobytes()
        assert second[0] != "ok", (f"{mode}: the read returned "
                                   f"{'the previous read' if second[1] == a.tobytes() else 'data'} "
                                   "instead of raising")
        assert second[0] == "WebGPUError" and "validation" in second[1], second
        assert again == a.tobytes()
    usable(pyodide_page.run_py, rng)


# ----------------------------------------------------------------- concurrency
def test_50_concurrent_async_tasks(pyodide_page, rng):
    data = [rng.standard_normal(int(n)).astype(np.float32) for n in rng.integers(1, 5000, 50)]
    sources = ",\n    ".join(b64(d) for d in data)
    got = pyodide_page.run_py(f"""
import asyncio
import pyaccel
dev = await pyaccel.device_async('webgpu')
blobs = [
    {sources}
]

async def task(i, raw):
    x = pyaccel.asarray(memoryview(raw).cast('f'), dtype=pyaccel.float32, device=dev)
    y = x * float(i) + 1.0
    await asyncio.sleep(0)
    s = pyaccel.sum(y)
    return [await y.tobytes_async(), await s.tolist_async()]

await asyncio.gather(*(task(i, raw) for i, raw in enumerate(blobs)))
""", timeout=90)
    assert len(got) == 50
    for i, (d, (ybytes, s)) in enumerate(zip(data, got, strict=True)):
        expect = d * np.float32(i) + np.float32(1)
        assert_allclose_dtype(np.frombuffer(ybytes, np.float32), expect, "float32", what=f"task {i}")
        tol = 1e-4 * (np.abs(expect).sum() + 1)
        assert abs(s - float(expect.astype(np.float64).sum())) <= tol, (i, s)


# ------------------------------------------------------------- no JSPI (item 6)
def test_runpython_default_device_names_device_async(own_page):
    """Issue 13 item 6: without JSPI, get_device() / device() with no URI raised
    DeviceNotFoundError; they must raise AsyncRequiredError naming the async twin."""
    # a registry with nothing open yet (whatever ran in this tab before)
    own_page.run_py("import pyaccel, pyaccel.registry as r\nr.REGISTRY.reset()\npyaccel.set_device(None)")
    for call in ("pyaccel.get_device()", "pyaccel.device()"):
        res = own_page.evaluate(RUN_SYNC_JS, f"import pyaccel; {call}")
        assert not res["ok"], res
        assert res["type"] == "AsyncRequiredError", (call, res)
        assert "await pyaccel.device_async()" in res["message"], res["message"]
    # the async twin opens it; then the sync forms need no wait
    assert own_page.run_py("import pyaccel\n(await pyaccel.device_async()).uri").startswith("webgpu")
    res = own_page.evaluate(RUN_SYNC_JS, "import pyaccel; pyaccel.get_device().uri")
    assert res["ok"] and res["value"].startswith("webgpu"), res


# ----------------------------------------------------------------- device loss
def test_device_destroy_first_read_raises_device_lost_and_recovery_works(own_page, rng):
    """Issue 13 items 2 and 3: after GPUDevice.destroy() the first read raised a raw
    JsException (AbortError), allocations raised OutOfDeviceMemoryError."""
    x = rng.standard_normal(500).astype(np.float32)
    got = own_page.run_py(f"""
import pyaccel
dev = pyaccel.device('webgpu')
pyaccel.set_device(dev)
x = {f32(x)}
before = bytes(x)
y = x + 1.0
dev.impl.f.device.destroy()                 # from JS, behind pyaccel's back
out = [before]
for what, call in (('first read', lambda: y.tolist()), ('second read', lambda: x.tolist()),
                   ('allocation', lambda: dev.malloc(4096)),
                   ('op', lambda: (x * 2.0).tolist()), ('synchronize', dev.synchronize)):
    try:
        call()
        out.append([what, 'ok', ''])
    except Exception as e:
        out.append([what, type(e).__module__ + '.' + type(e).__name__, str(e)])
out.append([getattr(dev.impl, 'is_lost', None), getattr(dev.impl.f, 'lost_reason', None)])
import __main__
__main__._stress_lost_device = dev
out
""")
    assert got[0] == x.tobytes()
    for what, kind, msg in got[1:6]:
        assert kind == "pyaccel.errors.DeviceLostError", (what, kind, msg)
        assert "lost" in msg and "pyaccel.device" in msg, (what, msg)
    lost, reason = got[6]
    assert lost is True and reason
    # recovery: the registry opens a fresh device for the URI and for the current device
    got = own_page.run_py(f"""
import pyaccel, __main__
old = __main__._stress_lost_device
del __main__._stress_lost_device
dev = pyaccel.device('webgpu')
x2 = {f32(x)}
[[dev is not old, getattr(dev.impl, 'is_lost', None), pyaccel.get_device() is dev],
 bytes(x2 * 2.0 + 1.0)]
""")
    assert got[0] == [True, False, True]
    assert_allclose_dtype(np.frombuffer(got[1], np.float32), x * np.float32(2) + np.float32(1), "float32",
                          what="fresh device after the loss")


def test_device_destroy_without_jspi_recovers_with_device_async(own_page, rng):
    x = rng.standard_normal(300).astype(np.float32)
    got = own_page.run_py(NO_JSPI + f"""
import pyaccel
out = []
try:
    dev = await pyaccel.device_async('webgpu')
    x = {f32(x)}
    out.append(await x.tobytes_async())
    dev.impl.f.device.destroy()
    for what in ('read', 'synchronize'):
        try:
            await (x.tolist_async() if what == 'read' else dev.synchronize_async())
            out.append([what, 'ok'])
        except Exception as e:
            out.append([what, type(e).__name__])
    try:
        dev.malloc(256)
        out.append(['allocation', 'ok'])
    except Exception as e:
        out.append(['allocation', type(e).__name__])
    fresh = await pyaccel.device_async('webgpu')
    default = await pyaccel.device_async()
    old, dev = dev, fresh
    x2 = {f32(x)}
    out.append([fresh is not old, default is fresh, await (x2 - 0.5).tobytes_async()])
finally:
    {RESTORE_JSPI.strip()}
out
""")
    assert got[0] == x.tobytes()
    assert got[1:4] == [["read", "DeviceLostError"], ["synchronize", "DeviceLostError"],
                        ["allocation", "DeviceLostError"]]
    is_new, default_is_fresh, data = got[4]
    assert is_new and default_is_fresh
    assert_allclose_dtype(np.frombuffer(data, np.float32), x - np.float32(0.5), "float32")


# ------------------------------------------------------------------------ timeouts
def test_synchronize_and_read_timeouts_in_the_page(pyodide_page, rng):
    """``device.synchronize(timeout=...)`` / ``Buffer.read(..., timeout=...)`` on a long job
    raise DeviceTimeoutError (a TimeoutError) instead of ignoring the timeout; the job then
    completes with the right values and the device stays usable."""
    n = 512
    a = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)
    got = pyodide_page.run_py(f"""
import time
import pyaccel
dev = pyaccel.device('webgpu')
a = pyaccel.reshape({f32(a)}, ({n}, {n}))
y = a
for _ in range(12):
    y = y @ a
out = []
t0 = time.monotonic()
try:
    dev.synchronize(timeout=0.0)
    out.append('no-timeout')
except pyaccel.DeviceTimeoutError as e:
    out.append(['timeout', isinstance(e, TimeoutError), round(time.monotonic() - t0, 3)])
z = y @ a
try:
    z.__pyaccel_buffer__().read(16, timeout=0.0)
    out.append('no-timeout')
except TimeoutError:
    out.append('read-timeout')
dev.synchronize()
[out, bytes(z)]
""", timeout=180)
    out, zb = got
    assert out[0][0] == "timeout" and out[0][1] is True, out
    assert out[1] == "read-timeout", out
    want = a.astype(np.float64)
    for _ in range(13):
        want = want @ a.astype(np.float64)
    assert_allclose_dtype(np.frombuffer(zb, np.float32).reshape(n, n), want.astype(np.float32), "float32",
                          what="the job that timed out, read afterwards", rtol=1e-3, atol=1e-3)
    usable(pyodide_page.run_py, rng)
