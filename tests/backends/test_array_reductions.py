"""Statistical, searching, sorting, set, linear-algebra and nn functions through the Array API on
every device, against NumPy (the GPU kernels themselves are tested in their own files; this
checks the wiring: axes, keepdims, dtypes, empty inputs, layouts)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from _array_util import FEW, check, check_scaled, dtypes_for, np_dtype, poisoned, rand, small_shapes  # noqa: F401
from hypothesis import given, settings
from hypothesis import strategies as st

import pyaccel
from pyaccel.ops import gpu_kernels as gk
from pyaccel.promotion import default_float, default_int, default_uint, index_dtype
from pyaccel.testing import poison

RED_TOL = "transcendental"  # float32 accumulation order differs from NumPy's pairwise sums


def sum_dtype(device, dt):
    if dt.kind in "bi":
        di = default_int(device)
        return di if dt.kind == "b" or di.bits >= dt.bits else dt
    if dt.kind == "u":
        du = default_uint(device)
        return du if du.bits >= dt.bits else dt
    return dt


def f32_ref(x):
    """float16 data: NumPy accumulates in float16, the GPU kernels in float32."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


def small_ints(rng, dt, shape):
    """Integer data whose sums / products do not overflow 32 bits (NumPy sums in 64 on cpu)."""
    lo = 0 if dt.kind == "u" else -3
    return rng.integers(lo, 4, size=shape).astype(np_dtype(dt))


@settings(max_examples=FEW)
@given(shape=small_shapes(max_dims=3, max_size=2000), data=st.data())
def test_reductions_match_numpy(device, rng, shape, data):
    nd = len(shape)
    axes = data.draw(st.one_of(st.none(), st.lists(st.integers(0, nd - 1), unique=True, max_size=nd)
                               .map(tuple) if nd else st.none()))
    keepdims = data.draw(st.booleans())
    for dt in dtypes_for(device):
        x = rand(rng, dt, shape, specials=False) if dt.kind in "bf" else small_ints(rng, dt, shape)
        X = pyaccel.asarray(x, device=device)
        what = f"{dt.name}{list(shape)} axis={axes} keepdims={keepdims}"
        sdt = np_dtype(sum_dtype(device, dt))
        with np.errstate(all="ignore"):
            check_scaled(pyaccel.sum(X, axis=axes, keepdims=keepdims),
                         np.sum(f32_ref(x), axis=axes, keepdims=keepdims).astype(sdt),
                         np.sum(np.abs(f32_ref(x)).astype(np.float64), axis=axes, keepdims=keepdims),
                         f"sum {what}")
            if dt.kind != "f" or x.size < 50:
                px = x if dt.kind == "f" else np.clip(x, -1, 2).astype(x.dtype)
                check(pyaccel.prod(pyaccel.asarray(px, device=device), axis=axes, keepdims=keepdims),
                      np.prod(px, axis=axes, dtype=sdt, keepdims=keepdims), RED_TOL, f"prod {what}")
            check(pyaccel.any(X, axis=axes, keepdims=keepdims), np.any(x, axis=axes, keepdims=keepdims),
                  "exact", f"any {what}")
            check(pyaccel.all(X, axis=axes, keepdims=keepdims), np.all(x, axis=axes, keepdims=keepdims),
                  "exact", f"all {what}")
        reduced = math.prod(shape[a] for a in (range(nd) if axes is None else axes))
        if reduced and dt.kind != "b":
            check(pyaccel.min(X, axis=axes, keepdims=keepdims), np.min(x, axis=axes, keepdims=keepdims),
                  "exact", f"min {what}")
            check(pyaccel.max(X, axis=axes, keepdims=keepdims), np.max(x, axis=axes, keepdims=keepdims),
                  "exact", f"max {what}")
        if dt.kind == "f" or dt.name == "int32":
            fdt = np_dtype(dt if dt.kind == "f" else default_float(device))
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                want_mean = np.mean(x.astype(fdt), axis=axes, keepdims=keepdims)
                want_var = np.var(x.astype(fdt), axis=axes, keepdims=keepdims, ddof=1)
            n_red = max(1, math.prod(shape[a] for a in (range(nd) if axes is None else axes)))
            check_scaled(pyaccel.mean(X, axis=axes, keepdims=keepdims), want_mean.astype(fdt),
                         np.sum(np.abs(x.astype(np.float64)), axis=axes, keepdims=keepdims) / n_red,
                         f"mean {what}")
            check(pyaccel.var(X, axis=axes, keepdims=keepdims, correction=1), want_var.astype(fdt), "pow",
                  f"var {what}")
            check(pyaccel.std(X, axis=axes, keepdims=keepdims, correction=1),
                  np.sqrt(want_var).astype(fdt), "pow", f"std {what}")


def test_arg_reductions_and_nan(device, rng):
    idt = np_dtype(index_dtype(device))
    for dt in dtypes_for(device, "iuf"):
        x = rand(rng, dt, (7, 33), specials=False)
        X = pyaccel.asarray(x, device=device)
        for axis in (None, 0, 1, -1):
            for keepdims in (False, True):
                check(pyaccel.argmax(X, axis=axis, keepdims=keepdims),
                      np.argmax(x, axis=axis, keepdims=keepdims).astype(idt), "exact", f"argmax {dt.name} {axis}")
                check(pyaccel.argmin(X, axis=axis, keepdims=keepdims),
                      np.argmin(x, axis=axis, keepdims=keepdims).astype(idt), "exact", f"argmin {dt.name} {axis}")
    f = np.array([[1.0, np.nan, 3.0], [2.0, 0.0, -1.0]], np.float32)
    F = pyaccel.asarray(f, device=device)
    check(pyaccel.max(F, axis=1), np.max(f, axis=1), "exact", "max with NaN")
    check(pyaccel.argmin(F, axis=1), np.argmin(f, axis=1).astype(idt), "exact", "argmin with NaN")
    check(pyaccel.any(pyaccel.asarray(np.array([0.0, np.nan], np.float32), device=device)), np.True_,
          "exact", "NaN is truthy")
    for fn in (pyaccel.min, pyaccel.max, pyaccel.argmax):
        with pytest.raises(ValueError):
            fn(pyaccel.zeros((0, 3), device=device))
    check(pyaccel.sum(pyaccel.zeros((0, 3), dtype="float32", device=device), axis=0),
          np.zeros(3, np.float32), "exact", "empty sum")
    check(pyaccel.count_nonzero(F, axis=1), np.count_nonzero(f, axis=1).astype(np_dtype(default_int(device))),
          "exact", "count_nonzero")
    check(pyaccel.sum(pyaccel.asarray(np.array([100, 100], np.int8), device=device), dtype="int8"),
          np.array(-56, np.int8), "exact", "sum with a narrow dtype wraps")


INT_SUM_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def _full_range(rng, name, shape):
    """Random values over the whole range of integer dtype ``name`` (0 / 1 for bool)."""
    if name == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    info = np.iinfo(name)
    return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=name)


def _same_sum(got, want, what):
    """Exact comparison (dtype, shape, every value) of a pyaccel sum with NumPy's."""
    g = got.to_numpy()
    assert g.dtype == want.dtype, f"{what}: dtype {g.dtype} != NumPy's {want.dtype}"
    assert g.shape == want.shape, f"{what}: shape {g.shape} != {want.shape}"
    bad = np.flatnonzero(g.ravel() != want.ravel())
    assert not bad.size, (f"{what}: {bad.size} of {want.size} differ, first at {bad[:3]}: "
                          f"got {g.ravel()[bad[:3]]}, want {want.ravel()[bad[:3]]}")


def _sum_cases(device, rng, name, cases):
    for shape, axis in cases:
        x = _full_range(rng, name, shape)
        X = pyaccel.asarray(x, device=device)
        sdt = np_dtype(sum_dtype(device, getattr(pyaccel, name)))
        for keepdims in (False, True):
            with np.errstate(all="ignore"):
                want = np.sum(x, axis=axis, dtype=sdt, keepdims=keepdims)
            _same_sum(pyaccel.sum(X, axis=axis, keepdims=keepdims), np.asarray(want),
                      f"sum {name}{list(shape)} axis={axis} keepdims={keepdims}")


@pytest.mark.parametrize("layout", ["auto", "gpu", "software"])
@pytest.mark.parametrize("name", INT_SUM_DTYPES)
def test_int_sums_exact(device, rng, poisoned, monkeypatch, layout, name):  # noqa: F811
    """Integer sums accumulate in 64 bits (the Array API's default integer; reduce64.wgsl on
    GPUs) and match NumPy's wrap-around int64 / uint64 sums exactly: full-range random data,
    full and axis reductions, keepdims, permuted axes, empty inputs, both kernel layouts."""
    if layout != "auto" and device.uri.startswith("cpu"):
        pytest.skip("kernel layouts are a GPU matter")
    monkeypatch.setattr(gk, "LAYOUT", layout)
    malloc = device.malloc

    def poisoned_malloc(nbytes):  # the kernels' outputs and partials start as garbage
        buf = malloc(nbytes)
        return poison(buf) if nbytes else buf

    monkeypatch.setattr(device, "malloc", poisoned_malloc)
    _sum_cases(device, rng, name, [
        ((0,), None), ((1,), None), ((7,), None), ((1001,), None), ((4099,), None),
        ((3, 5), None), ((3, 5), 0), ((3, 5), 1), ((2, 70001), 1), ((70001, 4), 0), ((9001, 3), 0),
        ((9, 8, 7), (0, 2)), ((9, 8, 7), (1,)), ((6, 0), 1), ((6, 0), 0), ((0, 5), None),
    ])
    # a transposed (permuted) input
    x = _full_range(rng, name, (300, 7))
    XT = pyaccel.permute_dims(pyaccel.asarray(x, device=device), (1, 0))
    sdt = np.uint64 if name.startswith("u") else np.int64
    for axis in (None, 0, 1):
        _same_sum(pyaccel.sum(XT, axis=axis), np.asarray(np.sum(x.T, axis=axis, dtype=sdt)),
                  f"sum {name} transposed axis={axis}")


@pytest.mark.parametrize("name", INT_SUM_DTYPES)
def test_int_sums_long_rows_and_wrap(device, rng, monkeypatch, name):
    """Rows of 300,001 (far past what one invocation may loop over) summed exactly with the
    planner forced to its longest chunks (one invocation per row up to the loop bound), and
    values whose int32 sum would overflow (2**31 - 1 repeated) or whose 64-bit sum wraps."""
    monkeypatch.setattr(gk, "_SEG_THREADS", 1)
    monkeypatch.setattr(gk, "_TARGET_GROUPS", 1)
    monkeypatch.setattr(gk, "_TARGET_THREADS", 1)
    _sum_cases(device, rng, name, [((300001,), None), ((2, 300001), 1), ((300001, 2), 0)])
    if name == "bool":
        return
    sdt = np.uint64 if name.startswith("u") else np.int64
    info = np.iinfo(name)
    n = 300001
    for v in (info.max, info.min):
        x = np.full(n, v, dtype=name)
        _same_sum(pyaccel.sum(pyaccel.asarray(x, device=device)), np.asarray(np.sum(x, dtype=sdt)),
                  f"sum of {n} x {v} ({name})")
    if info.bits == 64:  # wraps modulo 2**64 like NumPy
        x = np.concatenate([np.full(1000, info.max, dtype=name), np.arange(1, 501, dtype=name)])
        X = pyaccel.asarray(x.reshape(2, -1), device=device)
        with np.errstate(all="ignore"):
            for axis in (None, 0, 1):
                _same_sum(pyaccel.sum(X, axis=axis), np.asarray(np.sum(x.reshape(2, -1), axis=axis)),
                          f"{name} wrap axis={axis}")


def test_int_sum_planner_within_bound():
    """Every pass reduce64.wgsl's planner makes stays within MAX_LOOP (no device needed)."""
    for layout in ("gpu", "software"):
        gk.LAYOUT, old = layout, gk.LAYOUT
        try:
            for wide in (False, True):
                for outer in (1, 3, 100, 5000):
                    for n in (0, 1, 100, 65535, 300001, 2**22, 2**25):
                        for inner in (1, 3, 4, 1000):
                            if outer * n * inner > 2**25:
                                continue
                            m, w, passes = n, wide, 0
                            while True:
                                mode, nchunks, chunk = gk._plan64(None, outer, m, inner, w)
                                assert mode in ("rows", "seg", "cols")
                                assert nchunks * chunk >= m and (nchunks - 1) * chunk < max(m, 1)
                                per4 = 2 if w else 4
                                if mode == "rows":
                                    wg = gk._rows_wg(m)
                                    loops = -(-(chunk // per4 + 1) // (2 * wg)) + 1 + wg.bit_length()
                                elif mode == "seg":
                                    loops = chunk // (4 * per4) + 1 + 4 + 2 * per4
                                else:
                                    loops = chunk + 1
                                assert loops <= gk.MAX_LOOP, (layout, wide, outer, n, inner, mode, chunk)
                                passes += 1
                                assert passes < 8
                                if nchunks == 1:
                                    break
                                m, w = nchunks, True
        finally:
            gk.LAYOUT = old


def test_cumulative_sum(device, rng):
    for dt in dtypes_for(device):
        x = rand(rng, dt, (5, 70), specials=False) if dt.kind in "bf" else small_ints(rng, dt, (5, 70))
        X = pyaccel.asarray(x, device=device)
        sdt = np_dtype(sum_dtype(device, dt))
        for axis in (0, 1):
            for inc in (False, True):
                want = np.cumulative_sum(f32_ref(x), axis=axis, include_initial=inc).astype(sdt)
                scale = np.cumulative_sum(np.abs(f32_ref(x)).astype(np.float64), axis=axis,
                                          include_initial=inc)
                check_scaled(pyaccel.cumulative_sum(X, axis=axis, include_initial=inc), want, scale,
                             f"cumulative_sum {dt.name} {axis} {inc}")
    v = pyaccel.asarray(np.arange(300, dtype=np.int32), device=device)
    check(pyaccel.cumulative_sum(v), np.cumsum(np.arange(300), dtype=np_dtype(sum_dtype(device, pyaccel.int32))),
          "exact", "1-d")
    with pytest.raises(ValueError, match="axis is required"):
        pyaccel.cumulative_sum(pyaccel.ones((2, 2), device=device))


def test_sort_argsort(device, rng):
    idt = np_dtype(index_dtype(device))
    for dt in dtypes_for(device, "iuf"):
        x = rand(rng, dt, (6, 41), specials=False)
        x[:, ::5] = x[:, :1]  # ties
        X = pyaccel.asarray(x, device=device)
        for axis in (0, -1):
            check(pyaccel.sort(X, axis=axis), np.sort(x, axis=axis, kind="stable"), "exact", f"sort {dt.name}")
            check(pyaccel.argsort(X, axis=axis), np.argsort(x, axis=axis, kind="stable").astype(idt), "exact",
                  f"argsort {dt.name} {axis}")
            check(pyaccel.sort(X, axis=axis, descending=True), np.flip(np.sort(x, axis=axis), axis), "exact",
                  f"sort descending {dt.name}")
            r = np.flip(x, axis)
            i = x.shape[axis] - 1 - np.argsort(r, axis=axis, kind="stable")
            check(pyaccel.argsort(X, axis=axis, descending=True), np.flip(i, axis).astype(idt), "exact",
                  f"argsort descending stable {dt.name} {axis}")
    f = np.array([3.0, np.nan, -1.0, 2.0], np.float32)
    check(pyaccel.sort(pyaccel.asarray(f, device=device)), np.sort(f), "exact", "NaN sorts last")


def test_searching_and_sets(device, rng):
    idt = np_dtype(index_dtype(device))
    x = rng.integers(0, 5, size=(4, 6)).astype(np.int32)
    X = pyaccel.asarray(x, device=device)
    for g, w in zip(pyaccel.nonzero(X), np.nonzero(x), strict=True):
        check(g, w.astype(idt), "exact", "nonzero")
    s = np.sort(rng.uniform(0, 10, 20).astype(np.float32))
    q = rng.uniform(-1, 11, (3, 4)).astype(np.float32)
    for side in ("left", "right"):
        check(pyaccel.searchsorted(pyaccel.asarray(s, device=device), pyaccel.asarray(q, device=device),
                                   side=side), np.searchsorted(s, q, side=side).astype(idt), "exact",
              f"searchsorted {side}")
    # the Array API leaves the order of unique values unspecified (NumPy >= 2.3 may not sort):
    # compare (value, index, count) triples sorted by value, and the inverse through the values
    u = pyaccel.unique_all(X)
    w = np.unique_all(x)
    order = np.argsort(w.values)
    check(u.values, w.values[order], "exact", "unique values")
    check(u.indices, w.indices[order].astype(idt), "exact", "unique indices")
    check(u.counts, w.counts[order].astype(idt), "exact", "unique counts")
    assert u.inverse_indices.shape == x.shape
    np.testing.assert_array_equal(u.values.to_numpy()[u.inverse_indices.to_numpy()], x)
    check(pyaccel.unique_values(X), np.sort(np.unique_values(x)), "exact", "unique_values")
    c = pyaccel.unique_counts(X)
    wc = np.unique_counts(x)
    check(c.counts, wc.counts[np.argsort(wc.values)].astype(idt), "exact", "unique_counts")
    iv = pyaccel.unique_inverse(X)
    np.testing.assert_array_equal(iv.values.to_numpy()[iv.inverse_indices.to_numpy()], x)
    f = pyaccel.asarray(np.array([1.0, np.nan, 1.0, np.nan], np.float32), device=device)
    assert pyaccel.unique_values(f).shape == (3,)  # NaNs are distinct (Array API)


def test_linalg(device, rng):
    for dt in dtypes_for(device, "iuf"):
        if dt.kind == "f":
            a, b = rand(rng, dt, (3, 20, 17), specials=False), rand(rng, dt, (17, 9), specials=False)
        else:
            a, b = small_ints(rng, dt, (3, 20, 17)), small_ints(rng, dt, (17, 9))
        A, B = pyaccel.asarray(a, device=device), pyaccel.asarray(b, device=device)
        aa, ab = np.abs(f32_ref(a)), np.abs(f32_ref(b))
        with np.errstate(all="ignore"):
            fa, fb = f32_ref(a), f32_ref(b)
            check_scaled(A @ B, np.matmul(fa, fb).astype(a.dtype), aa @ ab, f"matmul {dt.name}")
            check_scaled(pyaccel.matmul(A[0], B[:, 0]), np.matmul(fa[0], fb[:, 0]).astype(a.dtype),
                         aa[0] @ ab[:, 0], "matrix @ vector")
            check_scaled(pyaccel.matmul(B[:, 0], B), np.matmul(fb[:, 0], fb).astype(a.dtype),
                         ab[:, 0] @ ab, "vector @ matrix")
            check_scaled(pyaccel.tensordot(A, B, axes=1), np.tensordot(fa, fb, axes=1).astype(a.dtype),
                         np.tensordot(aa, ab, axes=1), "tensordot")
            check_scaled(pyaccel.tensordot(A, A, axes=([0, 1], [0, 1])),
                         np.tensordot(fa, fa, axes=([0, 1], [0, 1])).astype(a.dtype),
                         np.tensordot(aa, aa, axes=([0, 1], [0, 1])), "tensordot pairs")
            check_scaled(pyaccel.vecdot(A, A[0]), np.vecdot(fa, fa[0]).astype(a.dtype),
                         np.vecdot(aa, aa[0]), "vecdot")
            check(pyaccel.linalg.diagonal(A, offset=1), np.linalg.diagonal(a, offset=1), "exact", "diagonal")
            check(pyaccel.linalg.outer(B[0], B[1]), np.outer(b[0], b[1]), "arith", "outer")
    a = rand(rng, pyaccel.float32, (2, 1, 5, 4), specials=False)
    b = rand(rng, pyaccel.float32, (3, 4, 6), specials=False)
    check_scaled(pyaccel.asarray(a, device=device) @ pyaccel.asarray(b, device=device), a @ b,
                 np.abs(a) @ np.abs(b), "batch broadcast")
    m = rand(rng, pyaccel.float32, (4, 5), specials=False)
    M = pyaccel.asarray(m, device=device)
    for ord_ in (2, 1, math.inf, -math.inf, 3):
        check(pyaccel.linalg.vector_norm(M, axis=1, ord=ord_), np.linalg.vector_norm(m, axis=1, ord=ord_),
              "pow", f"vector_norm {ord_}")
    for ord_ in ("fro", 1, -1, math.inf, -math.inf):
        check(pyaccel.linalg.matrix_norm(M, ord=ord_), np.linalg.matrix_norm(m, ord=ord_), "pow",
              f"matrix_norm {ord_}")
    check(pyaccel.linalg.trace(M), np.trace(m), "pow", "trace")
    with pytest.raises(ValueError, match="not aligned"):
        pyaccel.matmul(M, M)


def test_nn(device, rng):
    x = rand(rng, pyaccel.float32, (5, 40), "small", specials=False)
    x[0, :] = -np.inf
    x[1, 3] = np.inf
    X = pyaccel.asarray(x, device=device)
    for axis in (-1, 0):
        with np.errstate(all="ignore"):
            m = np.max(x, axis=axis, keepdims=True)
            e = np.exp(x - m)
            sm = e / e.sum(axis=axis, keepdims=True)  # a row with +-inf max: NaN (x - max)
            m = np.where(np.isfinite(m), m, 0)
            lse = (np.log(np.exp(x - m).sum(axis=axis, keepdims=True)) + m)
        check(pyaccel.nn.softmax(X, axis=axis), sm.astype(np.float32), RED_TOL, f"softmax axis {axis}")
        check(pyaccel.nn.logsumexp(X, axis=axis, keepdims=True), lse.astype(np.float32), RED_TOL,
              f"logsumexp axis {axis}")
        check(pyaccel.nn.log_softmax(X[2:], axis=axis), (x[2:] - lse[2:] if axis == -1 else x[2:] - (
            np.log(np.exp(x[2:] - x[2:].max(0)).sum(0)) + x[2:].max(0))).astype(np.float32), "pow", "log_softmax")
