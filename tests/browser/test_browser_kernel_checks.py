"""Kernel argument and source checks in the browser (issue 13 items 4, 5, 7), on webgpu:0.

* an int32 (or int8, bool) Array bound to ``array<f32>`` raises ``UnsupportedDTypeError``
  naming the binding and the fix, instead of reading raw bits;
* a ``@group(1)`` binding used by the entry point is refused at construction with a
  ``KernelCompileError`` that names the group and points at the declaration;
* a ``@workgroup_size`` over the device limit raises ``KernelCompileError`` with the line and
  column of the attribute.

After each error the page's device and arrays stay usable: results are computed on fresh
random data in the page and compared with NumPy here.
"""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")

from pyaccel.testing import assert_allclose_dtype  # noqa: E402

TWICE = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&y)) { y[g.x] = 2.0 * x[g.x] + y[g.x]; }
}
"""


def test_array_dtype_checked_against_the_binding(run_py, rng) -> None:
    """Issue 13 item 4: [1065353216, 3, 7, 1073741824] * 2.0 gave [2.0, 0.0, 0.0, 4.0]."""
    n = 100
    ints = rng.integers(-1000, 1000, n).tolist()
    y0 = rng.standard_normal(n).astype(np.float32)
    got = run_py(f"""
import pyaccel
xp = pyaccel
k = pyaccel.Kernel({TWICE!r})
out = {{}}
a = xp.asarray({ints!r}, dtype=xp.int32, device='webgpu')
y = xp.asarray({y0.tolist()!r}, dtype=xp.float32, device='webgpu')
for name, arr, args in [("int32", a, lambda v: (v, y)),
                        ("int8", xp.asarray([1, -2, 3], dtype=xp.int8, device='webgpu'), lambda v: (v, y)),
                        ("bool", xp.asarray([True, False], device='webgpu'), lambda v: (v, y)),
                        ("rw-int32", a, lambda v: (y, v))]:
    try:
        k(*args(arr), grid=({n},))
        out[name] = "no error"
    except Exception as e:
        out[name] = [type(e).__name__, isinstance(e, TypeError), str(e)]
out["a_after"] = a.tolist()
out["y_after"] = y.tolist()
k(a.astype(xp.float32), y, grid=({n},))   # the fix the message names
out["y_fixed"] = y.tolist()
out
""")
    for name in ("int32", "int8", "bool"):
        kind, is_type_error, msg = got[name]
        assert (kind, is_type_error) == ("UnsupportedDTypeError", True), got[name]
        dt = name
        for frag in ("argument 'x' (binding 0", f"dtype {dt}", "array<f32>", "x.astype(pyaccel.float32)"):
            assert frag in msg, (frag, msg)
    assert got["rw-int32"][0] == "UnsupportedDTypeError"
    assert "argument 'y' (binding 1, read_write array<f32>)" in got["rw-int32"][2]
    assert got["a_after"] == ints  # nothing ran, nothing lost
    np.testing.assert_array_equal(np.asarray(got["y_after"], np.float32), y0)
    assert_allclose_dtype(np.asarray(got["y_fixed"], np.float32),
                          2 * np.asarray(ints, np.float32) + y0, "float32")


GROUP1 = """
@group(1) @binding(0) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) g: vec3<u32>) { y[g.x] = 1.0; }
"""


def test_group_1_binding_refused_at_construction(run_py, rng) -> None:
    """Issue 13 item 5: reflected as 0 bindings; k(grid=(4,)) ran and wrote nothing."""
    n = 64
    x = rng.standard_normal(n).astype(np.float32)
    y0 = rng.standard_normal(n).astype(np.float32)
    got = run_py(f"""
import pyaccel
out = []
try:
    pyaccel.Kernel({GROUP1!r})
    out.append("constructed")
except pyaccel.KernelCompileError as e:
    out.append([e.line, e.column, str(e)])
y = pyaccel.asarray({y0.tolist()!r}, dtype=pyaccel.float32, device='webgpu')
pyaccel.Kernel({TWICE!r})(pyaccel.asarray({x.tolist()!r}, dtype=pyaccel.float32, device='webgpu'), y,
                          grid=({n},))
out.append(y.tolist())
out
""")
    line, col, msg = got[0]
    assert (line, col) == (2, 1)
    assert "'y' is declared in @group(1) @binding(0)" in msg and "@group(0) only" in msg
    assert_allclose_dtype(np.asarray(got[1], np.float32), 2 * x + y0, "float32")


def test_workgroup_size_over_the_limit_points_at_the_attribute(run_py, rng) -> None:
    """Issue 13 item 7: the KernelCompileError had no line and column."""
    n = 64
    y0 = rng.standard_normal(n).astype(np.float32)
    got = run_py(f"""
import pyaccel
dev = pyaccel.device('webgpu')
lim = dev.limits
size = 1024 if lim.max_invocations_per_workgroup < 1024 else 2 * lim.max_invocations_per_workgroup
src = ("@group(0) @binding(0) var<storage, read_write> y: array<f32>;\\n"
       "@compute @workgroup_size(" + str(size) + ")\\n"
       "fn main(@builtin(global_invocation_id) g: vec3<u32>) {{ y[0] = 1.0; }}\\n")
out = [size, lim.max_invocations_per_workgroup, lim.max_workgroup_size_x]
try:
    pyaccel.Kernel(src)(dev.malloc(256), workgroups=1)
    out.append("no error")
except pyaccel.KernelCompileError as e:
    out.append([e.line, e.column, str(e)])
y = pyaccel.asarray({y0.tolist()!r}, dtype=pyaccel.float32, device=dev)
pyaccel.Kernel({TWICE!r})(y * 0.5, y, grid=({n},))
out.append(y.tolist())
out
""")
    size, max_inv, max_x = got[:3]
    line, col, msg = got[3]
    assert (line, col) == (2, 10), msg
    assert "line 2, column 10" in msg and f"@workgroup_size({size}, 1, 1)" in msg
    assert (f"max_invocations_per_workgroup = {max_inv}" in msg
            or f"max_workgroup_size_x = {max_x}" in msg), msg
    assert_allclose_dtype(np.asarray(got[4], np.float32), 2 * y0, "float32")


UNUSED = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> spare: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&y)) { y[g.x] = 2.0 * x[g.x] + y[g.x]; }
}
"""


def test_declared_but_unused_binding(run_py, rng) -> None:
    """WebGPU's automatic layout drops an unused binding: it is checked but not bound."""
    n = 300
    x = rng.standard_normal(n).astype(np.float32)
    y0 = rng.standard_normal(n).astype(np.float32)
    got = run_py(f"""
import pyaccel
dev = pyaccel.device('webgpu')
y = pyaccel.asarray({y0.tolist()!r}, dtype=pyaccel.float32, device=dev)
x = pyaccel.asarray({x.tolist()!r}, dtype=pyaccel.float32, device=dev)
pyaccel.Kernel({UNUSED!r})(x, dev.malloc(16), y, grid=({n},))
nothing = pyaccel.Kernel("@group(0) @binding(0) var<storage, read_write> z: array<f32>;\\n"
                         "@compute @workgroup_size(64) fn main() {{}}")
nothing(dev.malloc(256), grid=(64,))
y.tolist()
""")
    assert_allclose_dtype(np.asarray(got, np.float32), 2 * x + y0, "float32")
