"""pyaccel.extras.webgpu in the page: the JS GPUBuffer / GPUDevice behind arrays, zero-copy.

Data are random (NumPy in the test process), results are compared with NumPy here. Raw
reads of a GPUBuffer go through plain WebGPU calls (copy into a MAP_READ buffer, map), so
they see what is really in the buffer, independently of pyaccel's read path.
"""

from __future__ import annotations

import base64

import numpy as np
import pytest

import pyaccel

# Plain-WebGPU helpers, defined in each run_py namespace.
RAW = """
import base64, js
from pyodide.ffi import run_sync, to_js
import pyaccel
from pyaccel.extras.webgpu import as_gpu_buffer, from_gpu_buffer, gpu_device

def obj(**kw):
    return to_js(kw, dict_converter=js.Object.fromEntries)

U = js.GPUBufferUsage
dev = pyaccel.device("webgpu")
gdev = gpu_device(dev)

def raw_read(buf, n):
    st = gdev.createBuffer(obj(size=n, usage=U.MAP_READ | U.COPY_DST))
    enc = gdev.createCommandEncoder()
    enc.copyBufferToBuffer(buf, 0, st, 0, n)
    gdev.queue.submit(to_js([enc.finish()]))
    run_sync(st.mapAsync(js.GPUMapMode.READ))
    data = js.Uint8Array.new(st.getMappedRange()).to_bytes()
    st.unmap(); st.destroy()
    return data

def raw_write(buf, data):
    arr = js.Uint8Array.new(len(data)); arr.assign(data)
    gdev.queue.writeBuffer(buf, 0, arr)

def b64(s):
    return base64.b64decode(s)
"""


def enc(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()


def test_as_gpu_buffer_is_the_storage_no_copy(run_py):
    rng = np.random.default_rng(11)
    a = rng.standard_normal((37, 29)).astype(np.float32)
    b = rng.standard_normal((37, 29)).astype(np.float32)
    out = run_py(RAW + f"""
import array
x = pyaccel.asarray(memoryview(b64({enc(a)!r})).cast("f", (37, 29)), device=dev)
y = x * 2.0 + 1.0                     # recorded, not submitted
buf = as_gpu_buffer(y)                # submits pyaccel's work: a raw read sees y
seen_y = raw_read(buf, 37 * 29 * 4)
# zero copy: a raw write to x's buffer is what pyaccel reads afterwards
xb = as_gpu_buffer(x)
raw_write(xb, b64({enc(b)!r}))
after = bytes(x)
z = bytes(x - 1.0)                    # ops see the raw write too
(seen_y, after, z, int(buf.size), int(buf.usage), as_gpu_buffer(y) == buf,
 gpu_device(dev) == gdev, bool(js.Object.prototype.toString.call(buf) == "[object GPUBuffer]"))
""")
    seen_y, after, z, size, usage, same, same_dev, is_buf = out
    np.testing.assert_array_equal(np.frombuffer(seen_y, np.float32).reshape(a.shape), a * np.float32(2) + np.float32(1))
    np.testing.assert_array_equal(np.frombuffer(after, np.float32).reshape(a.shape), b)
    np.testing.assert_array_equal(np.frombuffer(z, np.float32).reshape(a.shape), b - np.float32(1))
    assert size >= a.nbytes
    assert usage & 128 and usage & 4 and usage & 8  # STORAGE | COPY_SRC | COPY_DST
    assert same and same_dev and is_buf


def test_from_gpu_buffer_wraps_without_copy(run_py):
    rng = np.random.default_rng(12)
    a = rng.standard_normal((16, 24)).astype(np.float32)
    b = rng.integers(-1000, 1000, size=384).astype(np.int32)
    out = run_py(RAW + f"""
import gc
n = 16 * 24 * 4
mine = gdev.createBuffer(obj(size=n + 64, usage=U.STORAGE | U.COPY_SRC | U.COPY_DST))
raw_write(mine, b64({enc(a)!r}))
w = from_gpu_buffer(mine, (16, 24), pyaccel.float32, dev)
s = bytes(pyaccel.sum(w, axis=1))
s_bytes = s               # pyaccel reads the caller's data
w[3:5, :] = -7.5                                # an in-place update lands in the buffer
w2 = from_gpu_buffer(mine, 384, "int32")        # same bytes, another dtype; default device
assert as_gpu_buffer(w) == mine                 # and it submits the update (sync rule)
del s
gc.collect()
stats0 = dev.memory_stats()
del w; gc.collect()
seen = raw_read(mine, n)                        # the buffer survives the array
stats1 = dev.memory_stats()
raw_write(mine, b64({enc(b)!r}))
i = bytes(w2 + 1)
pooled = any(h.buf == mine for lst in dev.impl._pool.values() for h in lst)
(s_bytes, seen, i, w2.device.uri, pooled, stats1["live_bytes"] - stats0["live_bytes"])
""")
    s, seen, i, devname, pooled, live_delta = out
    np.testing.assert_allclose(np.frombuffer(s, np.float32), a.sum(axis=1), rtol=1e-5, atol=1e-5)
    want = a.copy()
    want[3:5, :] = -7.5
    np.testing.assert_array_equal(np.frombuffer(seen, np.float32).reshape(a.shape), want)
    np.testing.assert_array_equal(np.frombuffer(i, np.int32), b + 1)
    assert devname == "webgpu:0"
    assert not pooled  # the caller's buffer never enters pyaccel's pool (and survived: `seen`)
    assert live_delta == 0  # freeing the wrapper released nothing of pyaccel's


@pytest.mark.parametrize("case, error, words", [
    ("usage=U.STORAGE | U.COPY_DST", "ValueError", ["COPY_SRC", "GPUBufferUsage.STORAGE"]),
    ("usage=U.MAP_READ | U.COPY_DST", "ValueError", ["STORAGE | COPY_SRC", "usage is MAP_READ | COPY_DST"]),
    ("size=64", "ValueError", ["64 bytes", "needs 400"]),
    ("dtype=pyaccel.float16", "UnsupportedDTypeError", ["float16", "not supported on webgpu:0"]),
    ("mapped", "ValueError", ["mapped", "unmap()"]),
    ("not-a-buffer", "TypeError", ["must be a JS GPUBuffer"]),
    ("shape=(-1, 10)", "TypeError", ["non-negative ints"]),
])
def test_from_gpu_buffer_refuses_bad_input(run_py, case, error, words):
    out = run_py(RAW + f"""
case = {case!r}
kw = dict(size=400, usage=U.STORAGE | U.COPY_SRC | U.COPY_DST)
shape, dtype = (10, 10), pyaccel.float32
if case.startswith(("usage", "size")):
    kw.update(eval("dict(" + case + ")"))
elif case.startswith(("dtype", "shape")):
    exec(case)
if case == "mapped":
    kw["mappedAtCreation"] = True
buf = gdev.createBuffer(obj(**kw)) if case != "not-a-buffer" else js.Object.new()
try:
    from_gpu_buffer(buf, shape, dtype, dev)
    res = ("no error", "")
except Exception as e:
    res = (type(e).__name__, str(e))
ok = (pyaccel.asarray([1.0, 2.0], dtype=pyaccel.float32, device=dev) * 3).tolist()  # still usable
[*res, ok]
""")
    etype, msg, ok = out
    assert etype == error, (etype, msg)
    for w in words:
        assert w in msg, (w, msg)
    assert ok == [3.0, 6.0]


def test_buffer_of_another_device_fails_at_the_sync_point(run_py):
    """WebGPU cannot tell early that a GPUBuffer belongs to another GPUDevice: the first read
    raises a WebGPUError, and the device stays usable."""
    out = run_py(RAW + """
other = run_sync(run_sync(js.navigator.gpu.requestAdapter()).requestDevice())
theirs = other.createBuffer(obj(size=64, usage=U.STORAGE | U.COPY_SRC | U.COPY_DST))
w = from_gpu_buffer(theirs, (16,), pyaccel.float32, dev)
try:
    (w + 1).tolist(); res = ("no error", "")
except Exception as e:
    res = (type(e).__name__, str(e))
ok = (pyaccel.asarray([1.0, 2.0], dtype=pyaccel.float32, device=dev) + 1).tolist()
other.destroy()
[*res, ok]
""")
    etype, msg, ok = out
    assert etype == "WebGPUError", (etype, msg)
    assert ok == [2.0, 3.0]


def test_as_gpu_buffer_refuses_non_arrays_and_freed(run_py):
    out = run_py(RAW + """
res = []
for bad in ([1.0, 2.0], dev.malloc(16)):
    try:
        as_gpu_buffer(bad); res.append("no error")
    except TypeError as e:
        res.append(str(e))
x = pyaccel.ones((4,), dtype=pyaccel.float32, device=dev)
x._buf.free()
try:
    as_gpu_buffer(x); res.append("no error")
except pyaccel.BufferFreedError as e:
    res.append("freed: " + str(e))
res
""")
    assert all("must be a pyaccel.Array" in m for m in out[:2]), out
    assert out[2].startswith("freed: "), out


def test_native_device_is_refused_with_the_native_twin():
    """Outside the page (cpu here) the functions say to use pyaccel.extras.wgpu."""
    from pyaccel.extras import webgpu

    x = pyaccel.asarray([1.0, 2.0], device="cpu")
    for call in (lambda: webgpu.as_gpu_buffer(x), lambda: webgpu.gpu_device("cpu"),
                 lambda: webgpu.from_gpu_buffer(object(), (2,), "float32", "cpu")):
        with pytest.raises(TypeError, match=r"not a browser WebGPU device.*pyaccel\.extras\.wgpu"):
            call()
