"""Kernel calls under pressure and bad input (issue 9 items 1, 4, 6, 8; issue 13 items 4, 5, 7).

* threads (and asyncio with a thread) sharing one device: every result equals NumPy;
* a pyaccel Array whose dtype is not the binding's element type is refused with a typed error
  that names the binding, the dtype, the WGSL type and the fix;
* big-endian NumPy arrays as input and read_write arguments come back right, in their own
  byte order;
* a declared but unused binding still takes an argument and the kernel runs;
* uniform fields out of range or of the wrong type raise typed errors naming the field;
* workgroup size (literal or override) and workgroup memory are checked against the device
  limits, with the line and column of the attribute or declaration;
* a binding of ``@group(1)`` used by the entry point is refused at construction.

After each error the device and the other arrays stay usable (checked on fresh random data).
"""

from __future__ import annotations

import asyncio
import inspect
import sys
import threading

import numpy as np
import pytest

import pyaccel
from pyaccel import Capability, Kernel
from pyaccel.errors import (
    KernelCompileError,
    PyaccelError,
    UnsupportedDTypeError,
    ValueOutOfRangeError,
)
from pyaccel.testing import assert_allclose_dtype, poison

# y[i] = x[i] * p.a + p.b  (exact integer arithmetic: every result must equal NumPy)
AFFINE = """
struct P { a: i32, b: i32, n: u32 }
@group(0) @binding(0) var<storage, read> x: array<i32>;
@group(0) @binding(1) var<storage, read_write> y: array<i32>;
@group(0) @binding(2) var<uniform> p: P;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < p.n) {
        y[g.x] = x[g.x] * p.a + p.b;
    }
}
"""


def affine_ref(x, y, p):
    n = int(p["n"])
    y[:n] = x[:n] * np.int32(p["a"]) + np.int32(p["b"])


affine = Kernel(AFFINE, reference=affine_ref, name="affine")

# y = 2 * x + y over f32
TWICE = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&y)) {
        y[g.x] = 2.0 * x[g.x] + y[g.x];
    }
}
"""


def twice_ref(x, y):
    y[:] = 2 * x + y


twice = Kernel(TWICE, reference=twice_ref, name="twice")


def _usable(device, rng, *arrays) -> None:
    """The device still runs kernels correctly, and ``(array, expected)`` pairs still read back."""
    x = rng.standard_normal(300).astype(np.float32)
    y0 = rng.standard_normal(300).astype(np.float32)
    y = y0.copy()
    twice(x, y, grid=300, device=device)
    assert_allclose_dtype(y, 2 * x + y0)
    for arr, expected in arrays:
        np.testing.assert_array_equal(arr.to_numpy(), expected)


# -- 1. threads ---------------------------------------------------------------------------
# y += x * a + b over the first n elements, with three scalar uniforms (a fresh uniform block
# per call: the uniform cache allocates, writes and evicts while other threads record)
ACCUMULATE = """
@group(0) @binding(0) var<storage, read> x: array<i32>;
@group(0) @binding(1) var<storage, read_write> y: array<i32>;
@group(0) @binding(2) var<uniform> a: i32;
@group(0) @binding(3) var<uniform> b: i32;
@group(0) @binding(4) var<uniform> n: u32;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < n) { y[g.x] = y[g.x] + x[g.x] * a + b; }
}
"""


def accumulate_ref(x, y, a, b, n):
    n = int(n)
    y[:n] = y[:n] + x[:n] * np.int32(a) + np.int32(b)


accumulate = Kernel(ACCUMULATE, reference=accumulate_ref, name="accumulate")


def _thread_worker(device, seed: int, calls: int, errors: list, results: list) -> None:
    rng = np.random.default_rng(seed)
    try:
        for rep in range(3):
            n = int(rng.integers(1, 3000))
            x = rng.integers(-1000, 1000, n, dtype=np.int32)
            y = rng.integers(-1000, 1000, n, dtype=np.int32)
            if rep == 2:  # host arrays: upload, uniforms, dispatch and write-back in one call
                for _ in range(calls // 10):
                    a, b = int(rng.integers(-100, 100)), int(rng.integers(-10**6, 10**6))
                    got = y.copy()
                    accumulate(x, got, a, b, n, grid=n, device=device)
                    y = y + x * np.int32(a) + np.int32(b)
                    results.append(bool(np.array_equal(got, y)))
                continue
            # a chain of dependent calls on device Arrays, read once at the end
            xa = pyaccel.asarray(x, device=device)
            ya = pyaccel.asarray(y, device=device)
            for _ in range(calls):
                a, b = int(rng.integers(-100, 100)), int(rng.integers(-10**6, 10**6))
                accumulate(xa, ya, a, b, n, grid=n)
                y = y + x * np.int32(a) + np.int32(b)
            results.append(bool(np.array_equal(ya.to_numpy(), y)))
    except BaseException as exc:  # reported by the main thread
        errors.append(exc)


def test_threads_share_a_device(device) -> None:
    """Issue 9 item 1: 4 threads each calling a kernel on their own random data. On f0dbc06
    the uniform blocks were created outside the device lock: their writes flushed the
    encoder under another thread's dispatch ("Encoding must not have ended") and results
    differed from NumPy."""
    threads, calls = 4, 250
    errors: list = []
    results: list = []
    seeds = np.random.default_rng().integers(0, 2**32, threads)
    ts = [threading.Thread(target=_thread_worker, args=(device, int(s), calls, errors, results))
          for s in seeds]
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often: races show within a few hundred calls
    try:
        for t in ts:
            t.start()
        for t in ts:
            t.join(timeout=600)
    finally:
        sys.setswitchinterval(old)
    assert not errors, [f"{type(e).__name__}: {e}" for e in errors[:3]]
    assert len(results) == threads * (2 + calls // 10)
    wrong = results.count(False)
    assert wrong == 0, f"{wrong} of {len(results)} kernel results differ from NumPy on {device.uri}"
    _usable(device, np.random.default_rng())


def test_call_async_with_a_thread(device) -> None:
    """Issue 9 item 4: call_async under asyncio while another thread calls kernels. On
    f0dbc06 call_async created its uniforms and started its write-back reads without the
    device lock."""
    rng = np.random.default_rng()
    stop = threading.Event()
    errors: list = []
    results: list = []

    def other() -> None:
        seed = int(rng.integers(2**32))
        while not stop.is_set() and not errors:
            _thread_worker(device, seed, 100, errors, results)
            seed += 1

    async def main() -> list[bool]:
        ok = []
        for _ in range(150):
            n = int(rng.integers(1, 2000))
            x = rng.integers(-1000, 1000, n, dtype=np.int32)
            y = rng.integers(-1000, 1000, n, dtype=np.int32)
            a, b = int(rng.integers(-100, 100)), int(rng.integers(-10**6, 10**6))
            got = y.copy()
            await accumulate.call_async(x, got, a, b, n, grid=n, device=device)
            ok.append(bool(np.array_equal(got, y + x * np.int32(a) + np.int32(b))))
        return ok

    t = threading.Thread(target=other)
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    t.start()
    try:
        ok = asyncio.run(main())
    finally:
        stop.set()
        t.join(timeout=600)
        sys.setswitchinterval(old)
    assert not errors, [f"{type(e).__name__}: {e}" for e in errors[:3]]
    assert ok.count(False) == 0 and len(ok) == 150, f"{ok.count(False)} of 150 async results wrong"
    assert results and all(results)
    _usable(device, rng)


# -- 2. Array dtype against the binding ------------------------------------------------------
def _sample(rng, dt, n):
    if dt == "bool":
        return rng.random(n) < 0.5
    if dt.startswith("float"):
        return rng.standard_normal(n).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), n, dtype=dt)


@pytest.mark.parametrize("dt", ["int32", "uint32", "int8", "int16", "uint8", "uint16", "bool", "float16"])
def test_array_dtype_must_match_the_binding(device, rng, dt) -> None:
    """Issue 9 item 6 / issue 13 item 4: an Array of another dtype bound to array<f32> was
    read as raw bits; now a typed error names the binding, the dtype, the type and the fix."""
    if dt == "float16" and Capability.F16 not in device.capabilities:
        pytest.skip(f"{device.uri} has no float16 arrays")
    n = 64
    data = _sample(rng, dt, n)
    arr = pyaccel.asarray(data, device=device)
    y0 = rng.standard_normal(n).astype(np.float32)
    ya = pyaccel.asarray(y0, device=device)
    with pytest.raises(UnsupportedDTypeError) as ei:
        twice(arr, ya, grid=n)
    msg = str(ei.value)
    assert isinstance(ei.value, TypeError)
    for frag in ("argument 'x' (binding 0", f"dtype {dt}", "array<f32>", "x.astype(pyaccel.float32)"):
        assert frag in msg, (frag, msg)
    # as the read_write argument too
    xa = pyaccel.asarray(rng.standard_normal(n).astype(np.float32), device=device)
    with pytest.raises(UnsupportedDTypeError, match=r"argument 'y' \(binding 1, read_write array<f32>\)"):
        twice(xa, arr, grid=n)
    # nothing ran: the arrays hold what they held, and the device works
    _usable(device, rng, (arr, data), (ya, y0))
    # the fix named in the message works
    twice(arr.astype(pyaccel.float32), ya, grid=n)
    assert_allclose_dtype(ya.to_numpy(), 2 * data.astype(np.float32) + y0)


def test_array_of_the_binding_dtype_binds(device, rng) -> None:
    """int32 Arrays on array<i32> bindings (and a struct uniform) are legitimate."""
    n = 1000
    x = rng.integers(-1000, 1000, n, dtype=np.int32)
    xa = pyaccel.asarray(x, device=device)
    ya = pyaccel.asarray(poison(np.empty(n, np.int32)), device=device)
    affine(xa, ya, {"a": 7, "b": -3, "n": n}, grid=n)
    np.testing.assert_array_equal(ya.to_numpy(), x * 7 - 3)
    # a float32 Array on the i32 binding is refused the same way
    fa = pyaccel.asarray(x.astype(np.float32), device=device)
    with pytest.raises(UnsupportedDTypeError, match=r"x\.astype\(pyaccel\.int32\)"):
        affine(fa, ya, (1, 0, n), grid=n)
    _usable(device, rng, (xa, x))


# -- 2b. big-endian NumPy arguments -----------------------------------------------------------
@pytest.mark.parametrize("which", ["input", "read_write", "both"])
def test_big_endian_numpy_arguments(device, rng, which) -> None:
    """Issue 9 item 6: '>f4' arrays were uploaded and written back as raw bytes."""
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    y0 = rng.standard_normal(n).astype(np.float32)
    xs = x.astype(">f4") if which in ("input", "both") else x.copy()
    ys = y0.astype(">f4") if which in ("read_write", "both") else y0.copy()
    twice(xs, ys, grid=n, device=device)
    assert ys.dtype == (np.dtype(">f4") if which != "input" else np.dtype("float32"))
    assert_allclose_dtype(ys.astype(np.float32), 2 * x + y0)
    np.testing.assert_array_equal(xs.astype(np.float32), x)  # the input is untouched


def test_big_endian_async_and_uniform(device, rng) -> None:
    n = 500
    x = rng.integers(-1000, 1000, n, dtype=np.int32)
    y = poison(np.empty(n, ">i4"))
    p = np.zeros((), dtype=[("a", ">i4"), ("b", ">i4"), ("n", ">u4")])
    p["a"], p["b"], p["n"] = -3, 11, n
    asyncio.run(affine.call_async(x.astype(">i4"), y, p, grid=n, device=device))
    assert y.dtype == np.dtype(">i4")
    np.testing.assert_array_equal(y.astype(np.int32), x * -3 + 11)


# -- 3. unused bindings ---------------------------------------------------------------------
UNUSED = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> spare: array<f32>;   // declared, never used
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

fn scaled(v: f32) -> f32 { return 2.0 * v; }

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&y)) {
        y[g.x] = scaled(x[g.x]) + y[g.x];
    }
}
"""

NOTHING_USED = """
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64) fn main() {}
"""


def test_declared_but_unused_binding(device, rng) -> None:
    """Issue 9 item 8: WebGPU's automatic layout drops an unused binding; binding it raised a
    raw GPUValidationError from CreateBindGroup."""
    k = Kernel(UNUSED, reference=lambda x, spare, y: twice_ref(x, y), name="unused")
    n = 777
    x = rng.standard_normal(n).astype(np.float32)
    y0 = rng.standard_normal(n).astype(np.float32)
    y = y0.copy()
    k(x, np.ones(4, np.float32), y, grid=n, device=device)
    assert_allclose_dtype(y, 2 * x + y0)
    # Buffers too (the repeat-call fast path), twice
    xb, sb, yb = device.malloc(4 * n), device.malloc(16), device.malloc(4 * n)
    xb.write(x)
    yb.write(y0)
    for _ in range(2):
        k(xb, sb, yb, grid=n)
    assert_allclose_dtype(np.frombuffer(yb.read(), np.float32), 4 * x + y0)
    # the spare argument is still checked
    with pytest.raises(TypeError, match="takes 3 argument"):
        k(x, y, grid=n, device=device)
    # an entry point that uses no binding at all
    z = poison(np.empty(64, np.float32))
    Kernel(NOTHING_USED, reference=lambda y: None)(z, grid=64, device=device)
    assert np.isnan(z).all()  # untouched
    _usable(device, rng)


# -- 3b. uniform field values -----------------------------------------------------------------
FIELDS = """
struct P { n: u32, off: i32, scale: f32, shift: vec2<f32> }
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@group(0) @binding(1) var<uniform> p: P;
@group(0) @binding(2) var<uniform> count: u32;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < min(p.n, count)) {
        y[g.x] = y[g.x] * p.scale + f32(p.off) + p.shift.x - p.shift.y;
    }
}
"""


def fields_ref(y, p, count):
    n = min(int(p["n"]), int(count))
    y[:n] = y[:n] * p["scale"] + np.float32(p["off"]) + p["shift"][0] - p["shift"][1]


fields_k = Kernel(FIELDS, reference=fields_ref, name="fields")
GOOD = {"n": 64, "off": -2, "scale": 1.5, "shift": (0.25, 1.0)}

BAD_FIELDS = [
    ({"n": -1}, ValueOutOfRangeError, ["field 'n'", "u32", "-1", "[0, 4294967295]"]),
    ({"n": 2**32}, ValueOutOfRangeError, ["field 'n'", "u32", "4294967296", "[0, 4294967295]"]),
    ({"n": 8.5}, UnsupportedDTypeError, ["field 'n'", "u32", "8.5", "[0, 4294967295]", "pass an int"]),
    ({"n": "x"}, UnsupportedDTypeError, ["field 'n'", "u32", "'x'"]),
    ({"n": None}, UnsupportedDTypeError, ["field 'n'", "u32", "None"]),
    ({"off": 2**31}, ValueOutOfRangeError, ["field 'off'", "i32", "2147483648", "[-2147483648, 2147483647]"]),
    ({"off": -(2**31) - 1}, ValueOutOfRangeError, ["field 'off'", "i32", "-2147483649"]),
    ({"scale": 1e39}, ValueOutOfRangeError, ["field 'scale'", "f32", "1e+39", "3.4028235e38"]),
    ({"scale": "x"}, UnsupportedDTypeError, ["field 'scale'", "f32", "'x'"]),
    ({"shift": (0.0, "y")}, UnsupportedDTypeError, ["field 'shift' component 1 of vec2<f32>", "'y'"]),
    ({"shift": (0.0, 1e40)}, ValueOutOfRangeError, ["field 'shift' component 1", "1e+40"]),
]


@pytest.mark.parametrize("case", range(len(BAD_FIELDS)))
def test_uniform_field_out_of_range_or_wrong_type(device, rng, case) -> None:
    """Issue 9 item 8: these raised a raw struct.error."""
    change, exc, frags = BAD_FIELDS[case]
    y0 = rng.standard_normal(64).astype(np.float32)
    ya = pyaccel.asarray(y0, device=device)
    with pytest.raises(exc) as ei:
        fields_k(ya, {**GOOD, **change}, 64, grid=64)
    assert isinstance(ei.value, PyaccelError)
    if exc is ValueOutOfRangeError:
        assert isinstance(ei.value, OverflowError) and isinstance(ei.value, ValueError)
    else:
        assert isinstance(ei.value, TypeError)
    msg = str(ei.value)
    for frag in ["Kernel 'fields' argument 'p' (binding 1", "uniform struct P", *frags]:
        assert frag in msg, (frag, msg)
    _usable(device, rng, (ya, y0))
    fields_k(ya, GOOD, 64, grid=64)  # the same call with good values works
    exp = y0 * np.float32(1.5) + np.float32(-2) + np.float32(0.25) - np.float32(1.0)
    assert_allclose_dtype(ya.to_numpy(), exp)


@pytest.mark.parametrize("value,exc,frag", [
    (-1, ValueOutOfRangeError, "value -1 is outside its range [0, 4294967295]"),
    (2**32, ValueOutOfRangeError, "value 4294967296 is outside its range"),
    (8.5, UnsupportedDTypeError, "takes an int in [0, 4294967295]; got float 8.5"),
])
def test_scalar_uniform_checked(device, rng, value, exc, frag) -> None:
    y = rng.standard_normal(64).astype(np.float32)
    with pytest.raises(exc) as ei:
        fields_k(y, GOOD, value, grid=64, device=device)
    assert "argument 'count' (binding 2, uniform u32) has WGSL type u32" in str(ei.value)
    assert frag in str(ei.value)
    _usable(device, rng)


# -- 3c. workgroup size and memory against device.limits ------------------------------------------
OVERRIDE_WG = """
override WG: u32 = 64;
@group(0) @binding(0) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&y)) { y[g.x] = y[g.x] + 1.0; }
}
"""


def test_override_workgroup_size_over_the_limit(gpu_device, rng) -> None:
    """Issue 9 item 8: an override workgroup size of 2048 (limit 1024) was not checked."""
    lim = gpu_device.limits
    k = Kernel(OVERRIDE_WG, name="wg")
    big = 2 * lim.max_invocations_per_workgroup
    y0 = rng.standard_normal(4096).astype(np.float32)
    ya = pyaccel.asarray(y0, device=gpu_device)
    with pytest.raises(KernelCompileError) as ei:
        k(ya, grid=4096, constants={"WG": big})
    msg = str(ei.value)
    assert f"WG={big}" in msg and gpu_device.uri in msg
    assert ("max_invocations_per_workgroup" in msg or "max_workgroup_size_x" in msg), msg
    assert (ei.value.line, ei.value.column) == (5, 10)  # the @workgroup_size attribute
    _usable(gpu_device, rng, (ya, y0))
    k(ya, grid=4096, constants={"WG": 128})
    assert_allclose_dtype(ya.to_numpy(), y0 + 1)


def test_literal_workgroup_size_over_the_limit_points_at_the_attribute(gpu_device, rng) -> None:
    """Issue 13 item 7: the compile error had no line and column."""
    lim = gpu_device.limits
    x = lim.max_workgroup_size_x
    src = ("@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n\n"
           f"@compute  @workgroup_size({x}, 2)\n"
           "fn main(@builtin(global_invocation_id) g: vec3<u32>) { y[0] = 1.0; }\n")
    k = Kernel(src, name="toobig")
    with pytest.raises(KernelCompileError) as ei:
        k(np.zeros(4, np.float32), workgroups=1, device=gpu_device)
    assert (ei.value.line, ei.value.column) == (3, 11)
    msg = str(ei.value)
    assert f"above the device limit max_invocations_per_workgroup = {lim.max_invocations_per_workgroup}" in msg
    assert "line 3, column 11" in msg and "@workgroup_size" in msg
    _usable(gpu_device, rng)


WG_MEMORY = """
const TILE = 16384u;
var<workgroup> small: array<u32, 4>;
var<workgroup> tile: array<f32, TILE>;   // 64 KiB
@group(0) @binding(0) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) l: vec3<u32>) {
    tile[l.x] = f32(l.x);
    small[0] = 1u;
    workgroupBarrier();
    y[l.x] = tile[63u - l.x];
}
"""


def test_workgroup_memory_over_the_limit(gpu_device, rng) -> None:
    """Issue 9 item 8: 64 KiB of workgroup memory (limit 32 KiB on lavapipe) was not checked."""
    cap = gpu_device.limits.max_workgroup_storage_size
    assert cap < 65536 + 16
    k = Kernel(WG_MEMORY, name="tiles")
    with pytest.raises(KernelCompileError) as ei:
        k(np.zeros(64, np.float32), workgroups=1, device=gpu_device)
    msg = str(ei.value)
    assert f"uses {65536 + 16} bytes of workgroup memory" in msg
    assert f"max_workgroup_storage_size = {cap}" in msg
    assert (ei.value.line, ei.value.column) == (4, 1)  # the big declaration
    _usable(gpu_device, rng)
    # the same kernel with a tile that fits runs
    ok = Kernel(WG_MEMORY.replace("16384u", "64u"), name="tiles")
    y = poison(np.empty(64, np.float32))
    ok(y, workgroups=1, device=gpu_device)
    np.testing.assert_array_equal(y, np.arange(63, -1, -1, dtype=np.float32))
    # sized by an override expression: checked with the constants of the call
    ov = Kernel(WG_MEMORY.replace("const TILE = 16384u;", "override T: u32 = 16;")
                .replace("array<f32, TILE>", "array<f32, T * 4u>"), name="tiles")
    y = poison(np.empty(64, np.float32))
    ov(y, workgroups=1, device=gpu_device)
    np.testing.assert_array_equal(y, np.arange(63, -1, -1, dtype=np.float32))
    with pytest.raises(KernelCompileError, match=f"uses {4 * 4 * 8192 + 16} bytes of workgroup memory"):
        ov(y, workgroups=1, device=gpu_device, constants={"T": 8192})
    _usable(gpu_device, rng)


# -- 4. bind groups other than 0 --------------------------------------------------------------------
GROUP1 = """
@group(1) @binding(0) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) g: vec3<u32>) { y[g.x] = 1.0; }
"""


def test_group_1_binding_is_refused_at_construction(device, rng) -> None:
    """Issue 13 item 5: a @group(1) binding reflected as nothing; k(grid=(4,)) ran and wrote
    nothing."""
    with pytest.raises(KernelCompileError) as ei:
        Kernel(GROUP1, name="g1")
    msg = str(ei.value)
    assert "'y' is declared in @group(1) @binding(0)" in msg and "@group(0) only" in msg
    assert (ei.value.line, ei.value.column) == (2, 1)
    # declared in another group but unused by this entry point: fine
    src = GROUP1.replace("y[g.x] = 1.0;", "").replace(" y:", " spare:") + TWICE.replace("fn main", "fn other")
    k = Kernel(src, entry="other", reference=twice_ref)
    assert [b.name for b in k.bindings] == ["x", "y"]
    x = rng.standard_normal(100).astype(np.float32)
    y0 = rng.standard_normal(100).astype(np.float32)
    y = y0.copy()
    k(x, y, grid=100, device=device)
    assert_allclose_dtype(y, 2 * x + y0)


# -- 5. no device-kind branches ------------------------------------------------------------------
def test_kernel_module_has_no_device_kind_branches() -> None:
    """Issue 8: the reference path is chosen by Capability.KERNELS_RUN_REFERENCE."""
    src = inspect.getsource(pyaccel.kernel)
    assert "is_cpu" not in src
    assert "KERNELS_RUN_REFERENCE" in src
    assert Capability.KERNELS_RUN_REFERENCE in pyaccel.device("cpu:0").capabilities


MEMBER_NAMED_LIKE_A_BINDING = """
struct P { n: u32, x: f32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> n: array<f32>;    // unused: only p.n is read
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

fn helper(n: f32) -> f32 { let y = n * p.x; return y; }  // names shadowing globals

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < p.n) { y[g.x] = helper(y[g.x]); }
}
"""


def test_unused_binding_named_like_a_struct_member(device, rng) -> None:
    """Usage follows identifiers, not member names (p.n) or names a function declares itself
    (a parameter or a local that shadows a module-scope variable)."""
    def ref(p, n, y):
        k = int(p["n"])
        y[:k] = y[:k] * p["x"]

    k = Kernel(MEMBER_NAMED_LIKE_A_BINDING, reference=ref, name="member")
    y0 = rng.standard_normal(200).astype(np.float32)
    y = y0.copy()
    k({"n": 150, "x": 3.0}, np.ones(4, np.float32), y, grid=200, device=device)
    exp = y0.copy()
    exp[:150] *= np.float32(3)
    assert_allclose_dtype(y, exp)
