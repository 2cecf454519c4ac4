"""Custom WGSL kernels on every device here (cpu:0 runs the NumPy reference), checked against
the reference with pyaccel.testing on fresh random data and poisoned outputs."""

from __future__ import annotations

import uuid

import numpy as np
import pytest

import pyaccel
from pyaccel import Capability, Kernel
from pyaccel.errors import BackendUnavailableError, BufferFreedError, KernelCompileError
from pyaccel.kernel import reflect
from pyaccel.testing import assert_allclose_dtype, assert_matches_oracle, poison

# -- kernels -------------------------------------------------------------------------------
SAXPY = """
// y = a * x + y over any length; rows of workgroups past 65535 spread over y
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> a: f32;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i < arrayLength(&y)) {
        y[i] = a * x[i] + y[i];
    }
}
"""


def saxpy_ref(x, y, a):
    y[:] = a * x + y


TRANSPOSE = """
struct Params {
    rows: u32,
    cols: u32,
    scale: f32,
    shift: vec2<f32>,  // aligned to 8 bytes: offset 16, struct size 24
}
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let c = g.x;
    let r = g.y;
    if (r < p.rows && c < p.cols) {
        dst[c * p.rows + r] = src[r * p.cols + c] * p.scale + p.shift.x - p.shift.y;
    }
}
"""


def transpose_ref(src, dst, p):
    rows, cols = int(p["rows"]), int(p["cols"])
    m = src[: rows * cols].reshape(rows, cols)
    dst[: rows * cols] = (m.T * p["scale"] + p["shift"][0] - p["shift"][1]).ravel()


MULTI = """
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> total: array<f32>;
@group(0) @binding(3) var<storage, read_write> diff: array<f32>;
@group(0) @binding(4) var<storage, read_write> greater: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i >= arrayLength(&a)) { return; }
    total[i] = a[i] + b[i];
    diff[i] = a[i] - b[i];
    greater[i] = select(0u, 1u, a[i] > b[i]);
}
"""


def multi_ref(a, b, total, diff, greater):
    total[:] = a + b
    diff[:] = a - b
    greater[:] = a > b


INTS = """
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> h: array<u32>;
@group(0) @binding(2) var<storage, read_write> s: array<i32>;

@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i < arrayLength(&x)) {
        h[i] = (x[i] * 2654435761u) ^ (x[i] >> 13u);
        s[i] = i32(x[i] % 1000u) - 500;
    }
}
"""


def ints_ref(x, h, s):
    h[:] = (x * np.uint32(2654435761)) ^ (x >> np.uint32(13))
    s[:] = (x % 1000).astype(np.int32) - 500


ADD_ONE = """
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&dst)) { dst[g.x] = src[g.x] + 1.0; }
}
"""


def add_one_ref(src, dst):
    n = len(dst)  # the kernel guards on arrayLength(&dst)
    dst[:] = src[:n] + 1


OVERRIDES = """
override WG: u32 = 64;
override SCALE: f32 = 2.0;
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&y)) { y[g.x] = y[g.x] * SCALE; }
}
"""

F16 = """
enable f16;
@group(0) @binding(0) var<storage, read> x: array<f16>;
@group(0) @binding(1) var<storage, read_write> y: array<f16>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&x)) { y[g.x] = x[g.x] * 2.5h + 1.0h; }
}
"""


def f16_ref(x, y):
    n = min(len(x), len(y))
    y[:n] = x[:n] * np.float16(2.5) + np.float16(1.0)


FIXED = """
@group(0) @binding(0) var<storage, read_write> v: array<f32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) i: u32) { v[i] = v[i] + 1.0; }
"""

BAD_WGSL = """@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let z = undefined_thing + 1.0;
    y[g.x] = x[g.x] + z;
}
"""


def unique(src: str) -> str:
    """The same kernel with a fresh source hash (forces a compile)."""
    return f"// {uuid.uuid4()}\n{src}"


def f32(rng, n, lo=1.0, hi=2.0):
    return rng.uniform(lo, hi, n).astype(np.float32)


saxpy = Kernel(SAXPY, reference=saxpy_ref, name="saxpy")
transpose = Kernel(TRANSPOSE, reference=transpose_ref, name="transpose")
multi = Kernel(MULTI, reference=multi_ref, name="multi")
ints = Kernel(INTS, reference=ints_ref, name="ints")
add_one = Kernel(ADD_ONE, reference=add_one_ref, name="add_one")


# -- reflection (no device) ------------------------------------------------------------------
def test_reflection_bindings() -> None:
    b = saxpy.bindings
    assert [(x.index, x.name, x.access, x.space, x.dtype) for x in b] == [
        (0, "x", "read", "storage", pyaccel.float32),
        (1, "y", "read_write", "storage", pyaccel.float32),
        (2, "a", "uniform", "uniform", pyaccel.float32),
    ]
    assert [x.writable for x in b] == [False, True, False]
    assert b[0].count is None and b[0].min_bytes == 4 and b[2].min_bytes == 4
    m = multi.bindings
    assert [x.name for x in m] == ["a", "b", "total", "diff", "greater"]
    assert m[4].dtype is pyaccel.uint32 and m[4].access == "read_write"
    assert [x.dtype for x in ints.bindings] == [pyaccel.uint32, pyaccel.uint32, pyaccel.int32]
    fixed = Kernel(FIXED).bindings[0]
    assert fixed.count == 64 and fixed.min_bytes == 256 and fixed.wgsl_type == "array<f32, 64>"


def test_reflection_struct_layout() -> None:
    p = transpose.bindings[2]
    assert p.space == "uniform" and p.struct is not None and p.dtype is None
    assert [(f.name, f.dtype.name, f.components, f.offset) for f in p.struct.fields] == [
        ("rows", "uint32", 1, 0), ("cols", "uint32", 1, 4), ("scale", "float32", 1, 8),
        ("shift", "float32", 2, 16)]
    assert p.struct.size == 24 and p.min_bytes == 24
    packed = p.struct.pack({"rows": 2, "cols": 3, "scale": 1.5, "shift": (0.25, -1.0)})
    assert len(packed) == 24
    assert np.frombuffer(packed, p.struct.numpy_dtype())[0]["shift"].tolist() == [0.25, -1.0]
    assert p.struct.pack((2, 3, 1.5, (0.25, -1.0))) == packed


def test_reflection_workgroup_size_and_overrides() -> None:
    assert saxpy.workgroup_size() == (256, 1, 1)
    assert transpose.workgroup_size() == (8, 8, 1)
    k = Kernel(OVERRIDES)
    assert k.workgroup_size() == (64, 1, 1)
    assert k.workgroup_size({"WG": 128}) == (128, 1, 1)
    assert Kernel(OVERRIDES, constants={"WG": 32}).workgroup_size() == (32, 1, 1)
    no_default = Kernel(OVERRIDES.replace("override WG: u32 = 64;", "override WG: u32;"))
    with pytest.raises(ValueError, match=r"cannot evaluate workgroup size 'WG'; pass constants=\{'WG': N\}"):
        no_default.workgroup_size()
    assert "saxpy" in repr(saxpy) and "1:y<read_write>" in repr(saxpy)


def test_reflection_ignores_comments_and_other_groups() -> None:
    src = """
    // @group(0) @binding(5) var<storage, read_write> ghost: array<f32>;
    /* @group(0) @binding(6) var<storage, read> ghost2: array<f32>; */
    @group(1) @binding(0) var<storage, read> other: array<f32>;
    @group(0) @binding(1) var<storage> ro: array<i32>;
    @group(0)
    @binding(0)
    var<storage, read_write> out: array<vec4<f32>>;
    @compute @workgroup_size(4, 2, 1) fn first() {}
    @compute @workgroup_size(16) fn second() {}
    """
    bindings, entries, _ = reflect(src)
    assert [(b.index, b.name, b.access) for b in bindings] == [(0, "out", "read_write"), (1, "ro", "read")]
    assert bindings[0].components == 4 and bindings[0].element_size == 16
    assert entries == {"first": ("4", "2", "1"), "second": ("16",)}
    assert Kernel(src, entry="second").workgroup_size() == (16, 1, 1)
    with pytest.raises(ValueError, match=r"no @compute entry point 'main' in the source \(found: first, second\)"):
        Kernel(src)
    with pytest.raises(TypeError, match="expected WGSL source text"):
        Kernel("   ")


# -- correctness on every device ---------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 255, 257, 1000, 65_537])
def test_saxpy_1d_sizes(device, rng, n) -> None:
    x = f32(rng, n)
    y = f32(rng, n)
    assert_matches_oracle(saxpy, x, y, np.float32(rng.uniform(0.5, 2)), grid=n, device=device)


def test_saxpy_large(device, rng) -> None:
    n = 4 * 2**20  # 4M elements
    x = f32(rng, n)
    y0 = f32(rng, n)
    y = y0.copy()
    saxpy(x, y, 1.5, grid=n, device=device)
    assert_allclose_dtype(y, np.float32(1.5) * x + y0, np.float32)


def test_saxpy_into_poisoned_buffers(device, rng) -> None:
    n = 3000
    x, y0 = f32(rng, n), f32(rng, n)
    xb, yb = device.malloc(4 * n), device.malloc(4 * n)
    xb.write(x)
    yb.write(y0)
    a = float(np.float32(rng.uniform(0.5, 2)))
    saxpy(xb, yb, a, grid=n)
    got = np.frombuffer(yb.read(), np.float32)
    assert_allclose_dtype(got, np.float32(a) * x + y0)
    if device.is_cpu:
        return  # the NumPy reference always covers the whole array
    # a grid that covers only part of the buffer leaves the rest as it was (poison)
    poison(yb)
    pattern = yb.read()
    yb.write(y0[:512])
    saxpy(xb, yb, a, workgroups=(2,))  # 2 x 256 invocations
    got = yb.read()
    assert got[4 * 512:] == pattern[4 * 512:]
    assert_allclose_dtype(np.frombuffer(got[: 4 * 512], np.float32), np.float32(a) * x[:512] + y0[:512])


@pytest.mark.parametrize("rows, cols", [(1, 1), (37, 53), (64, 8)])
def test_transpose_2d_struct_uniform(device, rng, rows, cols) -> None:
    src = rng.standard_normal(rows * cols).astype(np.float32)
    dst = poison(np.empty(rows * cols, np.float32))
    params = {"rows": rows, "cols": cols, "scale": float(rng.uniform(1, 2)),
              "shift": (float(rng.uniform(-1, 1)), float(rng.uniform(-1, 1)))}
    assert_matches_oracle(transpose, src, dst, params, grid=(cols, rows), device=device)
    # the real result, not only agreement with the reference
    transpose(src, dst, params, grid=(cols, rows), device=device)
    exp = (src.reshape(rows, cols).T * np.float32(params["scale"]) + np.float32(params["shift"][0])
           - np.float32(params["shift"][1])).ravel()
    assert_allclose_dtype(dst, exp.astype(np.float32))


def test_struct_uniform_as_tuple_and_bytes(device, rng) -> None:
    rows, cols = 5, 7
    src = rng.standard_normal(rows * cols).astype(np.float32)
    as_dict = {"rows": rows, "cols": cols, "scale": 2.0, "shift": (0.5, 0.25)}
    raw = transpose.bindings[2].struct.pack(as_dict)
    outs = []
    for p in (as_dict, (rows, cols, 2.0, (0.5, 0.25)), raw):
        dst = poison(np.empty(rows * cols, np.float32))
        transpose(src, dst, p, grid=(cols, rows), device=device)
        outs.append(dst)
    assert_allclose_dtype(outs[0], (src.reshape(rows, cols).T * 2 + 0.25).ravel().astype(np.float32))
    assert np.array_equal(outs[0], outs[1]) and np.array_equal(outs[0], outs[2])


@pytest.mark.parametrize("n", [1, 63, 1000])
def test_several_outputs(device, rng, n) -> None:
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    outs = [poison(np.empty(n, np.float32)), poison(np.empty(n, np.float32)), poison(np.empty(n, np.uint32))]
    assert_matches_oracle(multi, a, b, *outs, grid=n, device=device)
    multi(a, b, *outs, grid=n, device=device)
    assert_allclose_dtype(outs[0], a + b)
    assert_allclose_dtype(outs[1], a - b)
    assert np.array_equal(outs[2], (a > b).astype(np.uint32))


def test_integer_kernel_exact(device, rng) -> None:
    n = 777
    x = rng.integers(0, 2**32, n, dtype=np.uint32)
    h = poison(np.empty(n, np.uint32))
    s = poison(np.empty(n, np.int32))
    assert_matches_oracle(ints, x, h, s, grid=n, device=device)
    ints(x, h, s, grid=n, device=device)
    assert np.array_equal(s, (x % 1000).astype(np.int32) - 500)


def test_bytearray_read_write_argument(device, rng) -> None:
    x = f32(rng, 16)
    y = bytearray(f32(rng, 16).tobytes())
    y0 = np.frombuffer(bytes(y), np.float32).copy()
    saxpy(x, y, 2.0, grid=16, device=device)
    assert_allclose_dtype(np.frombuffer(bytes(y), np.float32), 2 * x + y0)


def test_override_constants(device, rng) -> None:
    for consts, scale in (({}, 2.0), ({"WG": 128, "SCALE": 3.0}, 3.0), ({"WG": 16, "SCALE": 0.5}, 0.5)):
        k = Kernel(OVERRIDES, reference=lambda y, s=scale: np.multiply(y, np.float32(s), out=y), name="ovr")
        y0 = f32(rng, 1001)
        y = y0.copy()
        k(y, grid=1001, device=device, constants=consts)
        assert_allclose_dtype(y, y0 * np.float32(scale))
        assert_matches_oracle(k, y0, grid=1001, device=device, constants=consts)


def test_f16_kernel(device, rng) -> None:
    k = Kernel(F16, reference=f16_ref, name="f16")
    x = rng.uniform(-2, 2, 101).astype(np.float16)  # odd length: the binding rounds up to 4 bytes
    y = poison(np.empty(101, np.float16))
    if Capability.F16 not in device.capabilities:
        with pytest.raises(KernelCompileError) as ei:
            k(x, y, grid=101, device=device)
        assert "f16" in str(ei.value).lower()
        _assert_usable(device)
        return
    assert_matches_oracle(k, x, y, grid=101, device=device)


def test_chain_of_1000_dependent_kernels(device, rng) -> None:
    n = 1024
    x = f32(rng, n)
    a, b = device.malloc(4 * n), device.malloc(4 * n)
    a.write(x)
    poison(b)
    for i in range(1000):
        if i % 2 == 0:
            add_one(a, b, grid=n)
        else:
            add_one(b, a, grid=n)
    got = np.frombuffer(a.read(), np.float32)
    assert_allclose_dtype(got, x + np.float32(1000), rtol=1e-5, atol=1e-4)
    assert_allclose_dtype(np.frombuffer(b.read(), np.float32), x + np.float32(999), atol=1e-4)


def test_oracle_catches_a_wrong_kernel(gpu_device, rng) -> None:
    # the device result is compared for real: a reference that disagrees makes it fail
    wrong = Kernel(SAXPY, reference=lambda x, y, a: np.copyto(y, a * x + y + np.float32(1e-3)), name="wrong")
    with pytest.raises(AssertionError, match=rf"kernel 'wrong' on {gpu_device.uri}, binding 1 'y'"):
        assert_matches_oracle(wrong, f32(rng, 100), f32(rng, 100), 1.0, grid=100, device=gpu_device)


# -- compile errors, caching, batching -----------------------------------------------------------
def _assert_usable(device) -> None:
    rng = np.random.default_rng()
    x, y0 = f32(rng, 300), f32(rng, 300)
    y = y0.copy()
    saxpy(x, y, 2.0, grid=300, device=device)
    assert_allclose_dtype(y, 2 * x + y0)


def test_compile_error_has_position_and_message(gpu_device) -> None:
    k = Kernel(unique(BAD_WGSL), name="bad")
    x = np.ones(64, np.float32)
    for _ in range(2):  # not cached as a success, and raised again
        with pytest.raises(KernelCompileError) as ei:
            k(x, x.copy(), grid=64, device=gpu_device)
        e = ei.value
        assert (e.line, e.column) == (5, 13)  # line 5 of the source given (a comment line was added)
        assert "undefined_thing" in e.compiler_message
        msg = str(e)
        assert "WGSL kernel bad failed to compile at line 5, column 13" in msg
        assert "let z = undefined_thing + 1.0;" in msg and "device is still usable" in msg
        assert e.source.endswith(BAD_WGSL)
    _assert_usable(gpu_device)
    assert isinstance(e, ValueError)


def test_pipeline_cache(gpu_device, rng) -> None:
    src = unique(ADD_ONE)
    k = Kernel(src, reference=add_one_ref)
    x = f32(rng, 100)
    stats = gpu_device.memory_stats
    c0 = stats()["pipelines_compiled"]
    k(x, x.copy(), grid=100, device=gpu_device)
    assert stats()["pipelines_compiled"] == c0 + 1
    for _ in range(3):
        k(x, x.copy(), grid=100, device=gpu_device)
    Kernel(src)(x, x.copy(), grid=100, device=gpu_device)  # same source, new Kernel object
    assert stats()["pipelines_compiled"] == c0 + 1
    ko = Kernel(unique(OVERRIDES))
    ko(x.copy(), grid=100, device=gpu_device)
    ko(x.copy(), grid=100, device=gpu_device, constants={"SCALE": 5.0})  # new constants: new pipeline
    ko(x.copy(), grid=100, device=gpu_device, constants={"SCALE": 5.0})
    assert stats()["pipelines_compiled"] == c0 + 3


def test_kernel_calls_do_not_submit(gpu_device, rng) -> None:
    n = 512
    x = f32(rng, n)
    xb, yb = gpu_device.malloc(4 * n), gpu_device.malloc(4 * n)
    xb.write(x)
    yb.write(np.zeros(n, np.float32))
    saxpy(xb, yb, 1.0, grid=n)  # warm: pipeline, uniform, bind group
    yb.read()
    s0 = gpu_device.memory_stats()
    for _ in range(20):
        saxpy(xb, yb, 1.0, grid=n)
    s1 = gpu_device.memory_stats()
    assert s1["submits"] == s0["submits"]
    assert s1["dispatches"] == s0["dispatches"] + 20
    assert s1["pipelines_compiled"] == s0["pipelines_compiled"]
    assert s1["bind_groups_created"] == s0["bind_groups_created"]
    got = np.frombuffer(yb.read(), np.float32)
    assert gpu_device.memory_stats()["submits"] == s0["submits"] + 1
    assert_allclose_dtype(got, 21 * x, atol=1e-5)


# -- bad inputs: a clear error each, and the device keeps working ----------------------------------
def _bad_cases(device):
    n = 64
    x = np.ones(n, np.float32)
    freed = device.malloc(4 * n)
    freed.free()
    shared = device.malloc(4 * n)
    fixed = Kernel(FIXED, reference=lambda v: np.add(v, 1, out=v))
    return [
        ("wrong arg count", lambda: saxpy(x, x.copy(), grid=n, device=device), TypeError,
         "takes 3 argument(s) in binding order: x (binding 0, read), y (binding 1, read_write), "
         "a (binding 2, uniform); got 2"),
        ("int for storage", lambda: saxpy(5, x.copy(), 1.0, grid=n, device=device), TypeError,
         "argument 'x' (binding 0, read array<f32>): expected a Buffer"),
        ("buffer too small", lambda: fixed(device.malloc(16), grid=64), ValueError,
         "buffer of 16 bytes is smaller than the 256 bytes the binding needs"),
        ("host too small", lambda: fixed(np.ones(8, np.float32), grid=64, device=device), ValueError,
         "32 bytes given, the binding needs at least 256"),
        ("freed buffer", lambda: saxpy(freed, x.copy(), 1.0, grid=n), BufferFreedError,
         "argument 'x' (binding 0) is a freed buffer"),
        ("grid 0", lambda: saxpy(x, x.copy(), 1.0, grid=0, device=device), ValueError,
         "grid must be positive ints, got (0,); every dimension needs >= 1"),
        ("grid negative", lambda: saxpy(x, x.copy(), 1.0, grid=(4, -1), device=device), ValueError,
         "grid must be positive ints, got (4, -1)"),
        ("grid float", lambda: saxpy(x, x.copy(), 1.0, grid=2.5, device=device), ValueError,
         "grid must be an int or a tuple of 1-3 ints, got 2.5"),
        ("grid 4-d", lambda: saxpy(x, x.copy(), 1.0, grid=(1, 1, 1, 1), device=device), ValueError,
         "tuple of 1-3 ints"),
        ("no grid", lambda: saxpy(x, x.copy(), 1.0, device=device), ValueError,
         "pass exactly one of grid="),
        ("grid and workgroups", lambda: saxpy(x, x.copy(), 1.0, grid=1, workgroups=1, device=device),
         ValueError, "pass exactly one of grid="),
        ("uniform bytes wrong size", lambda: saxpy(x, x.copy(), b"\0\0\0", grid=n, device=device),
         ValueError, "uniform data is 3 bytes but f32 is 4 bytes"),
        ("struct uniform missing field",
         lambda: transpose(x, x.copy(), {"rows": 8, "cols": 8, "scale": 1.0}, grid=(8, 8), device=device),
         ValueError, "missing ['shift']"),
        ("struct uniform wrong size", lambda: transpose(x, x.copy(), b"\0" * 16, grid=(8, 8), device=device),
         ValueError, "uniform data is 16 bytes but Params is 24 bytes"),
        ("uniform wrong type", lambda: saxpy(x, x.copy(), "two", grid=n, device=device), TypeError,
         "a uniform takes bytes"),
        ("read_write bound to bytes", lambda: saxpy(x, x.tobytes(), 1.0, grid=n, device=device), TypeError,
         "a read_write binding needs a writable, C-contiguous host object"),
        ("read_write bound to read-only array",
         lambda: saxpy(x, np.frombuffer(x.tobytes(), np.float32), 1.0, grid=n, device=device), TypeError,
         "writable, C-contiguous"),
        ("numpy dtype mismatch", lambda: saxpy(x.astype(np.float64), x.copy(), 1.0, grid=n, device=device),
         TypeError, "NumPy array has dtype float64 but the binding holds float32; convert with arr.astype"),
        ("read_write aliasing another binding", lambda: saxpy(shared, shared, 1.0, grid=n), ValueError,
         "the same buffer is bound to 'x' (binding 0, read) and 'y' (binding 1, read_write)"),
        ("ragged bytes", lambda: saxpy(b"\0" * 10, x.copy(), 1.0, grid=n, device=device), ValueError,
         "10 bytes is not a whole number of 4-byte elements"),
    ]


def test_bad_inputs_each_raise_clearly(device) -> None:
    for label, call, exc, fragment in _bad_cases(device):
        with pytest.raises(exc) as ei:
            call()
        assert fragment in str(ei.value), (label, str(ei.value))
    _assert_usable(device)
    if not device.is_cpu:
        st = device.memory_stats()
        # temporaries of refused calls were freed (cached parameter blocks stay live by design)
        assert st["live_buffers"] - st.get("uniforms_cached", 0) < 64


def test_workgroups_above_device_limit(gpu_device) -> None:
    lim = gpu_device.limits.max_workgroups_per_dimension
    x = np.ones(16, np.float32)
    with pytest.raises(ValueError) as ei:
        saxpy(x, x.copy(), 1.0, workgroups=(lim + 1, 1, 1), device=gpu_device)
    assert f"exceed the device limit of {lim} per dimension on {gpu_device.uri}" in str(ei.value)
    with pytest.raises(ValueError, match="spread the work over the y/z grid"):
        saxpy(x, x.copy(), 1.0, grid=(256 * (lim + 1),), device=gpu_device)
    _assert_usable(gpu_device)


def test_arguments_on_two_devices(rng) -> None:
    have = [d.uri for d in pyaccel.devices()]
    gpu = next((u for u in have if u != "cpu:0"), None)
    if gpu is None:
        pytest.skip("needs a GPU device besides cpu:0")
    cpu_buf = pyaccel.device("cpu:0").malloc(64)
    gpu_buf = pyaccel.device(gpu).malloc(64)
    with pytest.raises(ValueError) as ei:
        add_one(cpu_buf, gpu_buf, grid=16)
    assert f"arguments live on different devices (src on cpu:0, dst on {gpu})" in str(ei.value)
    with pytest.raises(ValueError, match=f"device='cpu:0' but the buffer arguments live on {gpu}"):
        add_one(gpu_buf, pyaccel.device(gpu).malloc(64), grid=16, device="cpu:0")
    _assert_usable(pyaccel.device(gpu))
    _assert_usable(pyaccel.device("cpu:0"))


def test_no_reference_on_cpu_names_the_fix() -> None:
    k = Kernel(ADD_ONE, name="noref")
    x = np.ones(8, np.float32)
    with pytest.raises(BackendUnavailableError) as ei:
        k(x, x.copy(), grid=8, device="cpu:0")
    msg = str(ei.value)
    assert "Kernel 'noref' has no NumPy reference, so it cannot run on cpu:0" in msg
    assert "reference=fn" in msg and "GPU device" in msg
    _assert_usable(pyaccel.device("cpu:0"))


def test_reference_may_take_the_grid() -> None:
    seen = []

    def ref(src, dst, grid):
        seen.append(grid)
        dst[:] = src + 1

    k = Kernel(ADD_ONE, reference=ref)
    x = np.ones(10, np.float32)
    k(x, x.copy(), grid=10, device="cpu:0")
    k(x, x.copy(), workgroups=(2, 1), device="cpu:0")
    assert seen == [(10, 1, 1), (128, 1, 1)]


# -- device selection --------------------------------------------------------------------------------
def _two_gpus():
    have = [d.uri for d in pyaccel.devices()]
    if "vulkan:0" not in have or "gl:0" not in have:
        pytest.skip("needs vulkan:0 and gl:0")
    return pyaccel.device("vulkan:0"), pyaccel.device("gl:0")


def test_buffers_fix_the_device(rng) -> None:
    vk, gl = _two_gpus()
    x = f32(rng, 100)
    a, b = gl.malloc(400), gl.malloc(400)
    a.write(x)
    before = (vk.memory_stats()["dispatches"], gl.memory_stats()["dispatches"])
    with pyaccel.using(vk):
        add_one(a, b, grid=100)  # runs on gl:0, where its buffers are
    after = (vk.memory_stats()["dispatches"], gl.memory_stats()["dispatches"])
    assert after == (before[0], before[1] + 1)
    assert_allclose_dtype(np.frombuffer(b.read(), np.float32), x + 1)


def test_using_and_device_keyword_pick_the_device(rng) -> None:
    vk, gl = _two_gpus()
    x = f32(rng, 100)

    def run(**kw):
        y = poison(np.empty(100, np.float32))
        add_one(x, y, grid=100, **kw)
        assert_allclose_dtype(y, x + 1)

    d0 = (vk.memory_stats()["dispatches"], gl.memory_stats()["dispatches"])
    with pyaccel.using("vulkan:0"):
        run()
        run(device="gl:0")
        with pyaccel.using(gl):
            run()
    d1 = (vk.memory_stats()["dispatches"], gl.memory_stats()["dispatches"])
    assert (d1[0] - d0[0], d1[1] - d0[1]) == (1, 2)


# -- repeat calls (cached launch state) ---------------------------------------------------------------
def test_repeat_calls_notice_freed_and_replaced_buffers(device, rng) -> None:
    n = 256
    x = f32(rng, n)
    a, b = device.malloc(4 * n), device.malloc(4 * n)
    a.write(x)
    add_one(a, b, grid=n)
    add_one(a, b, grid=n)  # served from the cache
    assert_allclose_dtype(np.frombuffer(b.read(), np.float32), x + 1)
    b.free()
    with pytest.raises(BufferFreedError, match="argument 'dst' \\(binding 1\\) is a freed buffer"):
        add_one(a, b, grid=n)
    # new buffers (possibly the same pooled memory, possibly the same id()) are bound afresh
    for size in (n, n // 2):
        c = device.malloc(4 * size)
        poison(c)
        a.write(x)
        add_one(a, c, grid=size)
        assert_allclose_dtype(np.frombuffer(c.read(), np.float32), x[:size] + 1)
        c.free()


def test_repeat_calls_follow_kernel_constants(gpu_device, rng) -> None:
    k = Kernel(OVERRIDES)
    x = f32(rng, 128)
    buf = gpu_device.malloc(4 * 128)
    for scale in (2.0, 3.0, 0.5):
        k.constants["SCALE"] = scale
        buf.write(x)
        k(buf, grid=128)
        k(buf, grid=128)
        assert_allclose_dtype(np.frombuffer(buf.read(), np.float32), x * np.float32(scale) ** 2)


def test_interleaved_kernels_in_one_batch(device, rng) -> None:
    # different pipelines and bind groups alternating inside one compute pass
    n = 500
    x = f32(rng, n)
    a, b, c = (device.malloc(4 * n) for _ in range(3))
    a.write(x)
    for _ in range(10):
        add_one(a, b, grid=n)  # b = a + 1
        saxpy(b, a, 1.0, grid=n)  # a = b + a = 2a + 1
        add_one(a, c, grid=n)
    exp = x.copy()
    for _ in range(10):
        exp = 2 * exp + 1
    assert_allclose_dtype(np.frombuffer(a.read(), np.float32), exp, rtol=1e-5)
    assert_allclose_dtype(np.frombuffer(c.read(), np.float32), exp + 1, rtol=1e-5)


def test_device_recovers_from_a_rejected_batch(gpu_device, rng) -> None:
    """A dispatch WebGPU rejects at submit time (here: a read_write binding aliasing a read one,
    recorded below the Kernel checks) fails that batch; the device keeps working."""
    a = gpu_device.malloc(256)
    a.write(np.ones(64, np.float32))
    impl = gpu_device.impl
    impl.dispatch(impl.pipeline(ADD_ONE, "main"), [(0, a.handle, 0, 256), (1, a.handle, 0, 256)], (1, 1, 1))
    with pytest.raises(Exception, match="conflicting usages"):
        a.read()
    _assert_usable(gpu_device)
    b = gpu_device.malloc(256)
    add_one(a, b, grid=64)
    assert_allclose_dtype(np.frombuffer(b.read(), np.float32), np.frombuffer(a.read(), np.float32) + 1)
