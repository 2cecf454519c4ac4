"""Views that write through (basic indexing, reshape, permute_dims / moveaxis / .mT,
expand_dims / squeeze) on every device, against NumPy doing the same operations.

Each test runs the same steps on a NumPy array and on a pyaccel array made from it and
compares the base (and the views) after every write: a write through a view must reach
its base, and a write to the base must show in the view.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
from _array_util import check, check_scaled, dtypes_for, poisoned, rand  # noqa: F401

import pyaccel
from pyaccel.errors import BufferFreedError


def _pair(rng, device, shape, dt=pyaccel.float32):
    a = rand(rng, dt, shape, specials=False)
    return a, pyaccel.asarray(a, device=device)


def _same(x, a, what=""):
    check(x, np.asarray(a), "exact", what)


def test_write_through_basic_index_reaches_base(device, rng, poisoned):  # noqa: F811
    a, x = _pair(rng, device, (2, 3, 4))
    v, w = x[0, :, :], a[0, :, :]
    v[0, 0] = 1.5
    w[0, 0] = 1.5
    _same(x, a, "c[0, :, :][0, 0] = 1.5")
    x[0, 1, 2] = -4.0  # a write to the base shows in the view
    a[0, 1, 2] = -4.0
    _same(v, w, "view after a base write")
    v += 2.0
    w += 2.0
    _same(x, a, "in-place add on a view")
    _same(v, w)


@pytest.mark.parametrize("key", [
    1, -1, (slice(None), 0), (Ellipsis, -2), (slice(None, None, -1),), (slice(3, 0, -2), 1),
    (None, slice(1, 3), None, Ellipsis), (slice(None), slice(None, None, -3), slice(1, None, 2)),
    (np.int64(2), Ellipsis),
])
def test_view_keys_every_dtype(device, rng, poisoned, key):  # noqa: F811
    for dt in dtypes_for(device):
        a, x = _pair(rng, device, (4, 5, 6), dt)
        v = x[key]
        w = a[key]
        _same(v, w, f"{dt.name}[{key!r}] read")
        val = rand(rng, dt, w.shape, specials=False)
        v[...] = pyaccel.asarray(val, device=device)
        w[...] = val
        _same(x, a, f"{dt.name}[{key!r}] = ...")


def test_negative_steps_and_views_of_views(device, rng, poisoned):  # noqa: F811
    a, x = _pair(rng, device, (6, 7, 5))
    v1, w1 = x[::-1, 1:], a[::-1, 1:]
    v2, w2 = v1[1:5:2, ::-2], w1[1:5:2, ::-2]
    v3, w3 = v2[:, 1, ::-1], w2[:, 1, ::-1]
    _same(v3, w3, "view of a view of a view")
    v3[0] = 100.0
    w3[0] = 100.0
    _same(x, a, "write through a chain of views")
    _same(v1, w1)
    v2[1, 0, 2] = -7.0
    w2[1, 0, 2] = -7.0
    _same(x, a)
    _same(v3, w3)


def test_view_of_view_with_offset(device, rng, poisoned):  # noqa: F811
    a, x = _pair(rng, device, (10,))
    v, w = x[3:], a[3:]
    u, y = v[2:6], w[2:6]
    _same(u, y, "offset view of an offset view")
    u[1:3] = pyaccel.asarray([9.0, 8.0], dtype=pyaccel.float32, device=device)
    y[1:3] = [9.0, 8.0]
    _same(x, a)
    x[6] = 0.5
    a[6] = 0.5
    _same(u, y)


def test_diagonal_add_gaussian_mixture(device, rng, poisoned):  # noqa: F811
    # sklearn GaussianMixture: cov[k].flat[:: n + 1] += reg (here the same diagonal through a
    # reshape of the view and a strided slice, the Array API spelling of _add_to_diagonal)
    n, k = 4, 3
    a, x = _pair(rng, device, (k, n, n))
    for j in range(k):
        c = x[j, :, :]
        flat = pyaccel.reshape(c, (n * n,))
        flat[:: n + 1] += 0.25
        a[j].flat[:: n + 1] += 0.25
    _same(x, a, "cov[k].flat[::n+1] += reg")
    # and as sklearn's _add_to_diagonal with an explicit diagonal slice of a view
    c = x[1]
    d = pyaccel.reshape(c, (-1,))[:: n + 1]
    d[...] = d + 1.0
    a[1].flat[:: n + 1] += 1.0
    _same(x, a, "diagonal through reshape(view)[::n+1]")


def test_oaconvolve_like_block_writes(device, rng, poisoned):  # noqa: F811
    # SciPy's oaconvolve: blocks added into overlapping slices of the output
    blocks = rand(rng, pyaccel.float32, (5, 8), specials=False)
    step = 6
    out = np.zeros(step * 4 + 8, np.float32)
    X = pyaccel.zeros(out.shape, dtype=pyaccel.float32, device=device)
    B = pyaccel.asarray(blocks, device=device)
    for j in range(5):
        out[j * step: j * step + 8] += blocks[j]
        X[j * step: j * step + 8] += B[j]
    _same(X, out, "overlap-add into slices")
    # and a 2-D output written through a slice of a transposed view
    a, x = _pair(rng, device, (6, 4))
    x.mT[1:3, ::2] = 5.0
    a.T[1:3, ::2] = 5.0
    _same(x, a)


def test_moveaxis_then_write(device, rng, poisoned):  # noqa: F811
    a, x = _pair(rng, device, (3, 4, 5))
    v, w = pyaccel.moveaxis(x, 0, -1), np.moveaxis(a, 0, -1)
    val = rand(rng, pyaccel.float32, (4, 3), specials=False)
    v[:, 2, :] = pyaccel.asarray(val, device=device)
    w[:, 2, :] = val
    _same(x, a, "moveaxis(o)[...] = ...")
    y, z = x.mT, np.swapaxes(a, -1, -2)
    y[...] = y * 2.0
    z[...] = z * 2.0
    _same(x, a, "y = x.mT; y[...] = ...")
    p, q = pyaccel.permute_dims(x, (2, 0, 1)), a.transpose(2, 0, 1)
    p[1] -= 1.0
    q[1] -= 1.0
    _same(x, a, "permute_dims then in-place")
    e, f = pyaccel.expand_dims(x[:, 1], axis=1), a[:, 1][:, None]
    e[...] = 3.0
    f[...] = 3.0
    _same(x, a, "expand_dims of a view")
    s, t = pyaccel.squeeze(x[:, 2:3, :], axis=1), a[:, 2:3, :].squeeze(1)
    s[0] = -1.0
    t[0] = -1.0
    _same(x, a, "squeeze of a view")


def test_mask_write_on_sliced_array_tanhsinh(device, rng, poisoned):  # noqa: F811
    # SciPy's tanhsinh: x[mask] = ... on a sliced array
    a, x = _pair(rng, device, (5, 8))
    v, w = x[1:4, ::2], a[1:4, ::2]
    m = w > 0.0
    M = pyaccel.asarray(m, device=device)
    v[M] = 42.0
    w[m] = 42.0
    _same(x, a, "view[mask] = scalar")
    vals = rand(rng, pyaccel.float32, (int(m.sum()),), specials=False)
    v[M] = pyaccel.asarray(vals, device=device)
    w[m] = vals
    _same(x, a, "view[mask] = array")
    idx = np.array([2, 0])
    v[pyaccel.asarray(idx, device=device), 1] = -3.0
    w[idx, 1] = -3.0
    _same(x, a, "view[int array, 1] = scalar")


def test_view_as_kernel_input(device, rng, poisoned):  # noqa: F811
    a, x = _pair(rng, device, (6, 5))
    b, y = _pair(rng, device, (5, 6))
    v, w = x[::-2, 1:], a[::-2, 1:]
    check(pyaccel.exp(v) + 1.0, np.exp(w) + 1.0, "transcendental", "elementwise of a view")
    check(pyaccel.sum(v, axis=0), w.sum(axis=0), "float32", "reduction of a view")
    check(pyaccel.max(x.mT), a.T.max(), "exact", "max of .mT")
    check_scaled(x.mT @ y.mT, a.T @ b.T, np.abs(a.T) @ np.abs(b.T), "matmul of two .mT views")
    check(v @ y[1:, :3], w @ b[1:, :3], "float32", "matmul of sliced views")
    check(pyaccel.concat([v, v[::-1]]), np.concatenate([w, w[::-1]]), "exact", "concat")


def test_reshape_shares_where_numpy_does(device, rng, poisoned):  # noqa: F811
    a, x = _pair(rng, device, (4, 6))
    v = pyaccel.reshape(x[1:3], (3, 4))  # contiguous rows: a view
    v[0, 0] = 11.0
    a[1:3].reshape(3, 4)[0, 0] = 11.0
    _same(x, a, "reshape of a row slice is a view")
    t = pyaccel.reshape(x.mT, (24,))  # not expressible: a copy, as NumPy
    assert not np.shares_memory(a.T.reshape(24), a)
    t[0] = 99.0
    _same(x, a, "reshape of .mT copied")
    check(t, np.concatenate([[99.0], a.T.reshape(24)[1:]]).astype(np.float32), "exact")
    with pytest.raises(ValueError, match="without a copy"):
        pyaccel.reshape(x.mT, (24,), copy=False)
    u = pyaccel.reshape(x[:, ::2], (2, 2, 3))  # split one strided axis: a view
    u[1, 1] = -5.0
    a[:, ::2].reshape(2, 2, 3)[1, 1] = -5.0
    _same(x, a, "reshape splitting a strided axis")


def test_iteration_yields_views_and_0d_raises(device, rng, poisoned):  # noqa: F811
    a, x = _pair(rng, device, (3, 4))
    for row, r in zip(x, a, strict=True):
        row[1] = 0.5
        r[1] = 0.5
    _same(x, a, "rows of iter(x) are views")
    z = pyaccel.asarray(1.0, device=device)
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        iter(z)
    with pytest.raises(TypeError, match="0-d"):
        p, q = z
    with pytest.raises(TypeError):
        iter(np.asarray(1.0))  # the same as NumPy


def test_numpy_int_array_with_ellipsis(device, rng, poisoned):  # noqa: F811
    # sklearn's _safe_indexing: X[np_int_array, ...]
    a, x = _pair(rng, device, (6, 3))
    idx = rng.permutation(6)[:4]
    check(x[idx, ...], a[idx, ...], "exact", "x[np int array, ...]")
    check(x[..., np.array([2, 0])], a[..., np.array([2, 0])], "exact", "x[..., np int array]")
    x[idx, ...] = 0.0
    a[idx, ...] = 0.0
    _same(x, a)


def test_inplace_mask_add_int64_into_int32(device, rng):
    a = rng.integers(-100, 100, (10,)).astype(np.int32)
    m = rng.random(10) < 0.5
    b = rng.integers(-5, 5, (int(m.sum()),)).astype(np.int64)
    x = pyaccel.asarray(a, device=device)
    if pyaccel.int64 not in [d for d in dtypes_for(device, "i")]:
        pytest.skip(f"no int64 on {device}")
    x[pyaccel.asarray(m, device=device)] += pyaccel.asarray(b, device=device)
    a[m] += b
    assert x.dtype == pyaccel.int32
    _same(x, a, "int32[mask] += int64")
    y = pyaccel.asarray(a, device=device)
    with pytest.raises(TypeError, match="same_kind"):
        y += pyaccel.asarray(np.ones(10, np.float32), device=device)


def test_base_kept_alive_and_freed_base_safe(device, rng):
    a, x = _pair(rng, device, (64,))
    v = x[8:40:3]
    w = a[8:40:3].copy()
    del x
    gc.collect()
    _same(v, w, "a view keeps its base alive")
    y = pyaccel.asarray(a, device=device)
    u = y[::2]
    y._buf.free()  # freeing the base while a view lives: the view raises, nothing crashes
    with pytest.raises(BufferFreedError):
        u.to_numpy()


def test_shares_memory(device, rng):
    a, x = _pair(rng, device, (4, 4))
    assert np.shares_memory(x, x[1:, ::2])
    assert np.may_share_memory(x.mT, x)
    assert not np.may_share_memory(x, x + 0.0)
    if device.is_cpu:
        assert not np.shares_memory(x[0], x[1])  # exact on cpu:0 (host views)
        assert np.shares_memory(np.asarray(x[1:]), np.asarray(x))


def test_host_read_of_views(device, rng):
    a, x = _pair(rng, device, (3, 5))
    v, w = x[1:, ::-2], a[1:, ::-2]
    np.testing.assert_array_equal(np.asarray(v), w)
    np.testing.assert_array_equal(v.to_numpy(), w)
    assert v.tolist() == w.tolist()
    assert bytes(x[2]) == a[2].tobytes()
    assert float(x[1, 3]) == float(a[1, 3])
    assert x[2, 1:4].tobytes() == a[2, 1:4].tobytes()


_SAXPY = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> a: f32;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < arrayLength(&y)) { y[gid.x] = a * x[gid.x] + y[gid.x]; }
}
"""


def _saxpy_ref(x, y, a):
    y[:] = a * x + y


def test_view_in_user_kernel(device, rng):
    k = pyaccel.Kernel(_SAXPY, reference=_saxpy_ref, name="views_saxpy")
    a, x = _pair(rng, device, (8, 6))
    out = pyaccel.zeros((8,), dtype=pyaccel.float32, device=device)
    k(x[:, 1], out, 2.0, grid=8)  # a strided view as a read binding: its elements
    check(out, 2.0 * a[:, 1], "float32", "kernel reading a column view")
    with pytest.raises(ValueError, match="strided view"):
        k(out, x[:, 1], 2.0, grid=8)


@pytest.mark.parametrize("dt", ["int64", "float64", "uint64", "complex64", "int32", "float32"])
def test_scan_of_one_element_axis_is_not_an_alias(device, rng, dt):
    """A cumulative sum / product along an axis of length 1 is a new array: writing it
    leaves the input alone (the emulated-dtype scan returned its input when no pass ran;
    found by the fuzzer on gl:0: ``cumulative_sum(v3)[...] = 0`` zeroed ``v3``)."""
    if dt not in [str(d) for d in dtypes_for(device, "biufc")]:
        pytest.skip(f"{dt} is not on {device.uri}")
    for shape, axis in (((1,), 0), ((3, 1, 2), 1), ((1, 4), 0)):
        h = rand(rng, getattr(pyaccel, dt), shape)
        x = pyaccel.asarray(h, device=device)
        for fn in (pyaccel.cumulative_sum, pyaccel.cumulative_prod):
            r = fn(x, axis=axis)
            np.testing.assert_array_equal(r.to_numpy(), getattr(np, fn.__name__)(h, axis=axis))
            r[...] = 0
            np.testing.assert_array_equal(x.to_numpy(), h, err_msg=f"{fn.__name__} {dt} {shape}")
