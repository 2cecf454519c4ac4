"""Custom WGSL kernels on webgpu:0 in the browser, checked against NumPy in this process.

The same shapes as the native kernel tests: 1-D with an override constant, a 2-D grid with
a uniform struct, a uniform struct with a vec field, several outputs, sizes that are not a
multiple of the workgroup, one element, ~1M elements, chains on device buffers; f32, i32,
u32 (f16 only when the adapter offers shader-f16). Inputs are fresh NumPy random data sent
as base64; outputs are poisoned in the page first (NaN / 0xDEADBEEF, so unwritten elements
show), come back as raw bytes (``run_py_bytes``) and are compared with the tolerances of
``pyaccel.testing``.
"""

from __future__ import annotations

import base64

import pytest

np = pytest.importorskip("numpy")

from pyaccel.testing import POISON_F32, POISON_U32, assert_allclose_dtype  # noqa: E402

DEVICE = "webgpu:0"
WGSL_T = {"float32": "f32", "int32": "i32", "uint32": "u32"}
POISON = {"float32": POISON_F32, "int32": POISON_U32, "uint32": POISON_U32}


def b64(a) -> str:
    """A Python expression (for the page) that evaluates to the bytes of ``a``."""
    raw = a if isinstance(a, (bytes, bytearray)) else np.ascontiguousarray(a).tobytes()
    return f"_b64({base64.b64encode(raw).decode()!r})"


PRELUDE = f"""
import base64, struct
import pyaccel
_b64 = base64.b64decode
dev = pyaccel.device({DEVICE!r})

def poisoned(nbytes, word={POISON_U32}):
    buf = dev.malloc(nbytes)
    buf.write((struct.pack("<I", word) * (nbytes // 4 + 1))[:nbytes])
    return buf
"""


def random(rng, dtype: str, shape) -> np.ndarray:
    if dtype == "float32":
        return rng.standard_normal(shape).astype(np.float32)
    if dtype == "int32":
        return rng.integers(-(2**20), 2**20, size=shape, dtype=np.int32)
    return rng.integers(0, 2**32, size=shape, dtype=np.uint32)  # wraps on purpose


# ------------------------------------------------------------------------ 1-D
AXPY = """
alias T = {t};
@group(0) @binding(0) var<storage, read> x: array<T>;
@group(0) @binding(1) var<storage, read> y: array<T>;
@group(0) @binding(2) var<storage, read_write> out: array<T>;
override k: f32 = 2.0;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {{
    let i = id.x;
    if (i < arrayLength(&out)) {{ out[i] = T(k) * x[i] + y[i]; }}
}}
"""


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32"])
@pytest.mark.parametrize("n", [1, 63, 64, 65, 1000, 4097, 100_003])
def test_axpy_1d(run_py_bytes, rng, dtype, n):
    x, y = random(rng, dtype, n), random(rng, dtype, n)
    src = AXPY.format(t=WGSL_T[dtype])
    got = run_py_bytes(PRELUDE + f"""
k = pyaccel.Kernel({src!r})
out = poisoned({4 * n}, {POISON[dtype]})
k({b64(x)}, {b64(y)}, out, grid=({n},), constants={{"k": 3.0}})
out.read()
""")
    np_dt = np.dtype(dtype)
    with np.errstate(over="ignore"):
        expect = (np_dt.type(3) * x + y).astype(np_dt)
    assert_allclose_dtype(np.frombuffer(got, np_dt), expect, dtype, what=f"axpy {dtype} n={n}")


def test_host_read_write_argument_written_back(run_py, rng):
    """A bytearray on a read_write binding is uploaded, computed on and written back."""
    n = 777
    x = random(rng, "float32", n)
    src = """
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i < arrayLength(&y)) { y[i] = y[i] * y[i] - 1.0; }
}
"""
    got = run_py(PRELUDE + f"""
y = bytearray({b64(x)})
pyaccel.Kernel({src!r})(y, grid=({n},))
bytes(y)
""")
    assert_allclose_dtype(np.frombuffer(got, np.float32), x * x - np.float32(1), "float32")


# ----------------------------------------------------------- 2-D + uniform struct
TRANSPOSE = """
struct Dims { rows: u32, cols: u32, scale: f32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> t: array<f32>;
@group(0) @binding(2) var<uniform> d: Dims;
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let c = id.x;
    let r = id.y;
    if (r < d.rows && c < d.cols) { t[c * d.rows + r] = a[r * d.cols + c] * d.scale; }
}
"""


@pytest.mark.parametrize("shape", [(1, 1), (37, 53), (64, 64), (129, 7)])
def test_transpose_2d_grid_uniform_struct(run_py_bytes, rng, shape):
    rows, cols = shape
    a = random(rng, "float32", shape)
    scale = float(rng.uniform(0.5, 2.0))
    got = run_py_bytes(PRELUDE + f"""
k = pyaccel.Kernel({TRANSPOSE!r})
t = poisoned({4 * rows * cols}, {POISON_F32})
k({b64(a)}, t, {{"rows": {rows}, "cols": {cols}, "scale": {scale!r}}}, grid=({cols}, {rows}))
t.read()
""")
    expect = (a * np.float32(scale)).T
    assert_allclose_dtype(np.frombuffer(got, np.float32).reshape(cols, rows), expect, "float32")


PARTIAL = """
struct P { scale: f32, n: u32, shift: vec2<f32> }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i < p.n) { out[i] = x[i] * p.scale + p.shift.x - p.shift.y; }
}
"""


def test_uniform_struct_with_vec_and_partial_write(run_py_bytes, rng):
    """Only the first p.n elements are written: the rest must still hold the poison."""
    size, n = 300, 211
    x = random(rng, "float32", size)
    scale, sx, sy = (float(v) for v in rng.uniform(-2, 2, 3))
    got = run_py_bytes(PRELUDE + f"""
k = pyaccel.Kernel({PARTIAL!r})
out = poisoned({4 * size}, {POISON_F32})
k((({scale!r}), {n}, ({sx!r}, {sy!r})), {b64(x)}, out, grid=({size},))
out.read()
""")
    res = np.frombuffer(got, np.float32)
    expect = x[:n] * np.float32(scale) + np.float32(sx) - np.float32(sy)
    assert_allclose_dtype(res[:n], expect, "float32")
    assert (np.frombuffer(got, np.uint32)[n:] == POISON_F32).all(), "elements past p.n were written"


# ------------------------------------------------------------- several outputs
MULTI = """
alias T = {t};
@group(0) @binding(0) var<storage, read> a: array<T>;
@group(0) @binding(1) var<storage, read> b: array<T>;
@group(0) @binding(2) var<storage, read_write> lo: array<T>;
@group(0) @binding(3) var<storage, read_write> hi: array<T>;
@group(0) @binding(4) var<storage, read_write> diff: array<T>;
@compute @workgroup_size(128)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {{
    let i = id.x;
    if (i >= arrayLength(&a)) {{ return; }}
    lo[i] = min(a[i], b[i]);
    hi[i] = max(a[i], b[i]);
    diff[i] = a[i] - b[i];
}}
"""


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32"])
def test_several_outputs(run_py, rng, dtype):
    n = 1029
    a, b = random(rng, dtype, n), random(rng, dtype, n)
    p = POISON[dtype]
    got = run_py(PRELUDE + f"""
k = pyaccel.Kernel({MULTI.format(t=WGSL_T[dtype])!r})
outs = [poisoned({4 * n}, {p}) for _ in range(3)]
k({b64(a)}, {b64(b)}, *outs, grid=({n},))
[o.read() for o in outs]
""")
    dt = np.dtype(dtype)
    lo, hi, diff = (np.frombuffer(g, dt) for g in got)
    with np.errstate(over="ignore"):
        assert_allclose_dtype(lo, np.minimum(a, b), dtype, what="lo")
        assert_allclose_dtype(hi, np.maximum(a, b), dtype, what="hi")
        assert_allclose_dtype(diff, (a - b).astype(dt), dtype, what="diff")


# ------------------------------------------------------------------- large
def test_one_million_elements(run_py_bytes, rng):
    n = 1 << 20
    x, y = random(rng, "float32", n), random(rng, "float32", n)
    src = AXPY.format(t="f32")
    got = run_py_bytes(PRELUDE + f"""
k = pyaccel.Kernel({src!r})
out = poisoned({4 * n}, {POISON_F32})
k({b64(x)}, {b64(y)}, out, grid=({n},), constants={{"k": -0.5}})
out.read()
""", timeout=120)
    assert_allclose_dtype(np.frombuffer(got, np.float32), np.float32(-0.5) * x + y, "float32")


# ------------------------------------------------------------ device chains
def test_chain_on_device_buffers_reads_once(run_py, rng):
    """Kernel calls on Buffers only record; the one read submits them all, in order."""
    n, steps = 5000, 25
    x, y = random(rng, "float32", n), random(rng, "float32", n)
    src = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i < arrayLength(&y)) { y[i] = 0.5 * y[i] + x[i]; }
}
"""
    got, submits, ffi = run_py(PRELUDE + f"""
k = pyaccel.Kernel({src!r})
xb, yb = dev.malloc({4 * n}), dev.malloc({4 * n})
xb.write({b64(x)})
yb.write({b64(y)})
k(xb, yb, grid=({n},))  # first call: pipeline + bind group
dev.synchronize()
s0 = dev.memory_stats()
for _ in range({steps} - 1):
    k(xb, yb, grid=({n},))
s1 = dev.memory_stats()
out = yb.read()
s2 = dev.memory_stats()
(out, [s1["submits"] - s0["submits"], s2["submits"] - s1["submits"]],
 s1["ffi_calls"] - s0["ffi_calls"])
""")
    expect = y.copy()
    for _ in range(steps):
        expect = np.float32(0.5) * expect + x
    assert_allclose_dtype(np.frombuffer(got, np.float32), expect, "float32")
    assert submits == [0, 1], "calls on device buffers must not submit; the read submits once"
    # one JS call per chained dispatch, plus opening the command encoder and the compute pass
    assert ffi == (steps - 1) + 2, f"{steps - 1} chained calls made {ffi} JS calls"


# -------------------------------------------------------------------- f16
def test_f16_when_offered(pyodide_page, run_py_bytes, rng):
    feats = pyodide_page.run_py(PRELUDE + "sorted(str(f) for f in dev.impl.f.device.features)")
    if "shader-f16" not in feats:
        pytest.skip(f"the adapter offers no shader-f16 (device features: {', '.join(feats)})")
    n = 999
    x = rng.standard_normal(n).astype(np.float16)
    src = """
enable f16;
@group(0) @binding(0) var<storage, read> x: array<f16>;
@group(0) @binding(1) var<storage, read_write> y: array<f16>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i < arrayLength(&y)) { y[i] = x[i] * 2.0h + 1.0h; }
}
"""
    got = run_py_bytes(PRELUDE + f"""
out = poisoned({2 * n + 2}, 0x7E007E00)
pyaccel.Kernel({src!r})({b64(x)}, out, grid=({n},))
out.read({2 * n})
""")
    assert_allclose_dtype(np.frombuffer(got, np.float16), x * np.float16(2) + np.float16(1), "float16")


# ------------------------------------------------------------------ buffers
def test_buffer_odd_sizes_and_offsets(run_py, rng):
    """Unaligned writes/reads (WebGPU needs 4-byte multiples) keep the neighbouring bytes."""
    base = rng.integers(0, 256, 103, dtype=np.uint8)
    patch = rng.integers(0, 256, 13, dtype=np.uint8)
    got = run_py(PRELUDE + f"""
b = dev.malloc(103)
b.write({b64(base)})
b.write({b64(patch)}, offset=5)
(b.read(), b.read(7, offset=3), b.read(1, offset=102))
""")
    expect = base.copy()
    expect[5:18] = patch
    assert got[0] == expect.tobytes()
    assert got[1] == expect[3:10].tobytes()
    assert got[2] == expect[102:].tobytes()


@pytest.mark.parametrize("nbytes", [4, 1000, 16384, 1 << 20])
def test_buffer_round_trip_sizes(run_py_bytes, rng, nbytes):
    """Small blocks go through to_js, large ones through a heap view; both are exact."""
    data = rng.integers(0, 256, nbytes, dtype=np.uint8)
    got = run_py_bytes(PRELUDE + f"""
b = dev.malloc({nbytes})
b.write({b64(data)})
c = dev.malloc({nbytes})
c.copy_from(b)
out = bytearray({nbytes})
dev.impl.read(c.handle, 0, {nbytes}, memoryview(out))  # read into caller memory
assert bytes(out) == b.read()
out
""")
    assert got == data.tobytes()


def test_transfers_cross_the_boundary_once(run_py, rng):
    """Large writes/reads go through a heap view (one copy each way); JS calls per transfer."""
    data = rng.integers(0, 256, 1 << 20, dtype=np.uint8)
    got = run_py(PRELUDE + f"""
f = dev.impl.f
seen = {{"to_js": 0, "write_from": 0, "read_into": 0, "read_bytes": 0}}

def spy(name, fn):
    def wrapped(*a):
        seen[name] += 1
        return fn(*a)
    return wrapped

orig = f._to_js, f._h_write_from, f._h_read_into, f._h_read_bytes
f._to_js, f._h_write_from = spy("to_js", f._to_js), spy("write_from", f._h_write_from)
f._h_read_into, f._h_read_bytes = spy("read_into", f._h_read_into), spy("read_bytes", f._h_read_bytes)
try:
    b = dev.malloc({data.size})
    b.read()  # warm-up: a staging buffer of this size class exists from here on
    seen["read_bytes"] = 0
    dev.synchronize()
    c0 = dev.memory_stats()["ffi_calls"]
    b.write({b64(data)})
    c1 = dev.memory_stats()["ffi_calls"]
    back = b.read()
    c2 = dev.memory_stats()["ffi_calls"]
    into = bytearray({data.size})
    dev.impl.read(b.handle, 0, {data.size}, memoryview(into))
    c3 = dev.memory_stats()["ffi_calls"]
finally:
    f._to_js, f._h_write_from, f._h_read_into, f._h_read_bytes = orig
(seen, [c1 - c0, c2 - c1, c3 - c2], back == bytes(into))
""")
    seen, (write_calls, read_calls, read_into_calls), same = got
    assert seen == {"to_js": 0, "write_from": 1, "read_into": 1, "read_bytes": 1}
    assert same
    print(f"JS calls: write {write_calls}, read {read_calls}, read into {read_into_calls}")
    assert write_calls == 1
    assert read_calls <= 6 and read_into_calls <= 5
