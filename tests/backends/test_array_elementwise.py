"""Every elementwise function x every dtype the device supports, against NumPy, on every device.

Shapes are drawn by hypothesis (0-size, one element, non-multiples of 256, broadcasting);
data is fresh random per test with NaN/inf/signed zeros/negatives mixed into floats;
outputs are poisoned before kernels write them.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from _array_util import (
    FEW,
    broadcast_pair,
    check,
    dtypes_for,
    floor_divide_ref,
    np_dtype,
    poisoned,  # noqa: F401  (fixture)
    rand,
    small_shapes,
    tol,
)
from hypothesis import given, settings

import pyaccel
from pyaccel.ops.table import CATEGORIES, elementwise_public
from pyaccel.promotion import default_float
from pyaccel.testing import assert_allclose_dtype

ROWS = [r for r in elementwise_public() if r.name not in ("where", "clip")]
UNARY = [r for r in ROWS if r.arity == 1]
BINARY = [r for r in ROWS if r.arity == 2]

CI = os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def input_dtypes(row, device) -> list:
    if row.dtypes == "floating":
        return dtypes_for(device, "f") + [d for d in dtypes_for(device, "bi")
                                         if d.name in ("bool", "int8", "int32")]
    # (complex dtypes: tests/backends/test_complex.py, with complex data and special cases)
    return dtypes_for(device, CATEGORIES[row.dtypes].replace("c", ""))


def compute_inputs(row, device, vals: list, dt) -> list:
    """NumPy inputs as pyaccel computes: integer inputs of float functions -> default float."""
    if row.dtypes == "floating" and dt.kind != "f":
        f = np_dtype(default_float(device))
        return [v.astype(f) if isinstance(v, np.ndarray) else float(v) for v in vals]
    return vals


def reference(row, device, vals: list, dt) -> np.ndarray:
    """NumPy's result, computed on >= 1-d arrays (pow on GPUs: on materialised arrays).

    NumPy's scalar and broadcast-exponent fast paths differ from its general loop (and
    C99) on a few special values: pow(-inf, 0.5) is nan there (sqrt), +inf in C99, in
    NumPy's general loop and on WebGPU devices. floor_divide: the Array API's results where
    one operand is infinite (``floor_divide_ref``)."""
    fn = floor_divide_ref if row.name == "floor_divide" else getattr(np, row.numpy)
    ins = compute_inputs(row, device, vals, dt)
    shape = np.broadcast_shapes(*(np.shape(v) for v in ins))
    arrays = [v for v in ins if isinstance(v, np.ndarray)]
    if arrays and row.name == "pow" and not device.is_cpu:  # cpu:0 *is* NumPy
        full = np.broadcast_arrays(*[np.atleast_1d(v) for v in arrays])
        it = iter(full)
        ins = [np.array(next(it)) if isinstance(v, np.ndarray) else v for v in ins]
    ins = [np.atleast_1d(v) if isinstance(v, np.ndarray) else v for v in ins]
    with np.errstate(all="ignore"):
        return np.asarray(fn(*ins)).reshape(shape)


def check_divmod(got, want, x, y, row, what) -> None:
    """floor_divide / remainder on floats: differences allowed only where x / y is (nearly) an
    integer (WGSL's float % is x - y * trunc(x / y), not an exact fmod)."""
    g = got.to_numpy()
    assert got.dtype.name == want.dtype.name and g.shape == want.shape, what
    r, a = tol(row.tol, got.dtype)
    with np.errstate(all="ignore"):
        xx, yy = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(y, np.float64))
        q = xx / yy
        near = np.abs(q - np.round(q)) <= 1e-3 * np.maximum(1.0, np.abs(q))
        gf, wf = g.astype(np.float64), want.astype(np.float64)
        ok = (np.isclose(gf, wf, rtol=r, atol=a) | (np.isnan(gf) & np.isnan(wf)) | (gf == wf)
              | (near & np.isfinite(wf)))
    bad = np.flatnonzero(~ok)
    assert not bad.size, (f"{what}: {bad.size} elements differ, first at {bad[0]}: "
                          f"x={xx.reshape(-1)[bad[0]]} y={yy.reshape(-1)[bad[0]]} got "
                          f"{gf.reshape(-1)[bad[0]]} want {wf.reshape(-1)[bad[0]]}")


def run_and_check(row, device, vals: list, dt, what: str) -> None:
    want = reference(row, device, vals, dt)
    args = [pyaccel.asarray(v, device=device) if isinstance(v, np.ndarray) else v for v in vals]
    got = getattr(pyaccel, row.name)(*args)
    if row.name == "pow" and got.dtype.kind == "f":
        # pow(-inf, y) for y > 0 not an odd integer is +inf (Array API special case); NumPy
        # itself gives nan or inf there depending on its SIMD path (0-d vs vector inputs), so the
        # oracle is fixed to the spec and the cpu device (which is NumPy) is held to it only
        # outside that corner.
        x1, x2 = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in vals))
        corner = np.isneginf(x1) & (x2 > 0) & (np.mod(x2, 2) != 1)
        if corner.any():
            want = np.where(corner, np.inf, want).astype(np.asarray(want).dtype)
            if device.is_cpu:
                fixed = np.where(corner, np.inf, got.to_numpy()).astype(np.asarray(want).dtype)
                got = pyaccel.asarray(fixed, device=device)
    if row.name in ("floor_divide", "remainder") and got.dtype.kind == "f":
        check_divmod(got, want, *compute_inputs(row, device, vals, dt), row, what)
    else:
        check(got, want, row.tol, what)


def second_operand(row, rng, dt, shape):
    if row.domain == "pow":
        if dt.kind == "f":
            y = rand(rng, dt, shape, "small", specials=True) / 3
            ints = rng.integers(-3, 4, size=shape).astype(np_dtype(dt))
            return np.where(rng.random(shape) < 0.3, ints, y).astype(np_dtype(dt))
        return rand(rng, dt, shape, "pow")
    if row.domain == "shift":
        return rand(rng, dt, shape, "shift")
    y = rand(rng, dt, shape, "any" if row.domain == "nonzero" else row.domain)
    if row.domain == "nonzero" and dt.kind in "iu" and y.size:
        y.reshape(-1)[:: max(1, y.size // 3)] = 0  # division by zero: 0 (NumPy's result)
    return y


@pytest.mark.parametrize("row", UNARY, ids=lambda r: r.name)
@settings(max_examples=FEW)
@given(shape=small_shapes())
def test_unary_matches_numpy(device, row, rng, poisoned, shape):  # noqa: F811
    for dt in input_dtypes(row, device):
        x = rand(rng, dt, shape, row.domain)
        run_and_check(row, device, [x], dt, f"{row.name}({dt.name}{list(shape)}) on {device.uri}")


@pytest.mark.parametrize("row", BINARY, ids=lambda r: r.name)
@settings(max_examples=FEW)
@given(shapes=broadcast_pair())
def test_binary_matches_numpy(device, row, rng, poisoned, shapes):  # noqa: F811
    s1, s2 = shapes
    for dt in input_dtypes(row, device):
        x = rand(rng, dt, s1, "pow" if row.domain == "pow" else
                 ("any" if row.domain in ("nonzero", "shift") else row.domain))
        y = second_operand(row, rng, dt, s2)
        run_and_check(row, device, [x, y], dt, f"{row.name}({dt.name}{list(s1)}, {list(s2)}) on "
                                               f"{device.uri}")


@pytest.mark.parametrize("row", BINARY, ids=lambda r: r.name)
def test_binary_with_python_scalars(device, row, rng, poisoned):  # noqa: F811
    """Weak scalars: array dtype wins (NEP 50 / Array API), on either side."""
    for dt in input_dtypes(row, device):
        x = rand(rng, dt, (37,), "pow" if row.domain == "pow" else "positive" if row.domain ==
                 "positive" else "small" if dt.kind == "f" else "any")
        if dt.kind == "b":
            s = True
        elif dt.kind in "iu":
            s = 3 if row.domain in ("shift", "pow") else int(rng.integers(1, 100))
        else:
            s = 1.75
        for args in ([x, s], [s, x]):
            if row.domain == "shift" and isinstance(args[1], np.ndarray):
                continue  # a shift by an array of arbitrary ints
            if row.name == "pow" and dt.kind in "iu" and isinstance(args[1], np.ndarray):
                args = [s, rand(rng, dt, (37,), "pow")]
            run_and_check(row, device, args, dt, f"{row.name}({args[0]!r:.20}, {args[1]!r:.20}) "
                                                 f"{dt.name} on {device.uri}")


def test_where_every_dtype(device, rng, poisoned):  # noqa: F811
    for dt in dtypes_for(device):
        for s1, s2, s3 in [((5, 7), (5, 7), (5, 7)), ((3, 1), (1, 4), ()), ((0, 3), (1, 3), (3,)),
                           ((257,), (257,), (1,))]:
            c = rng.random(s1) < 0.5
            a, b = rand(rng, dt, s2), rand(rng, dt, s3)
            got = pyaccel.where(*(pyaccel.asarray(v, device=device) for v in (c, a, b)))
            check(got, np.where(c, a, b), "exact", f"where {dt.name} {s1} {s2} {s3}")
    c = rng.random(10) < 0.5
    x = rand(rng, pyaccel.float32, (10,))
    check(pyaccel.where(pyaccel.asarray(c, device=device), pyaccel.asarray(x, device=device), 0.5),
          np.where(c, x, np.float32(0.5)), "exact", "where with a scalar")
    with pytest.raises(TypeError, match="condition must be a bool array"):
        pyaccel.where(pyaccel.asarray(x, device=device), 1.0, 2.0)


def test_clip_every_real_dtype(device, rng, poisoned):  # noqa: F811
    for dt in dtypes_for(device, "iuf"):
        x = rand(rng, dt, (4, 33))
        if dt.kind == "f":
            lo, hi = -1.5, 2.0
        else:
            info = np.iinfo(np_dtype(dt))
            lo, hi = int(info.min) // 3, int(info.max) // 3
        X = pyaccel.asarray(x, device=device)
        check(pyaccel.clip(X, lo, hi), np.clip(x, np_dtype(dt).type(lo), np_dtype(dt).type(hi)),
              "exact", f"clip scalars {dt.name}")
        check(pyaccel.clip(X, max=hi), np.minimum(x, np_dtype(dt).type(hi)), "exact", "clip max only")
        check(pyaccel.clip(X), x, "exact", "clip no bounds")
        lo_a = rand(rng, dt, (4, 1))
        hi_a = np.maximum(lo_a, rand(rng, dt, (33,)))
        with np.errstate(all="ignore"):
            want = np.minimum(np.maximum(x, lo_a), hi_a)
        check(pyaccel.clip(X, pyaccel.asarray(lo_a, device=device), pyaccel.asarray(hi_a, device=device)),
              want, "exact", f"clip arrays {dt.name}")
    u8 = pyaccel.asarray(np.array([0, 100, 255], np.uint8), device=device)
    check(pyaccel.clip(u8, -5, 300), np.array([0, 100, 255], np.uint8), "exact", "clip out-of-range bounds")


# -- semantics spelled out (what the module docstring promises) -----------------------------------
def test_nan_inf_semantics(device):
    f = pyaccel.asarray(np.array([np.nan, 1.0, -1.0, 0.0, np.inf, -np.inf], np.float32), device=device)
    got = {
        "ne": (f != f).tolist(), "eq": (f == f).tolist(), "lt": (f < 1.0).tolist(),
        "max": pyaccel.maximum(f, 0.0).tolist(), "log": pyaccel.log(f).tolist(),
        "sqrt": pyaccel.sqrt(f).tolist(), "div0": (f / 0.0).tolist(),
    }
    assert got["ne"] == [True, False, False, False, False, False]
    assert got["eq"] == [False, True, True, True, True, True]
    assert got["lt"] == [False, False, True, True, False, True]
    m = got["max"]
    assert math.isnan(m[0]) and m[1:] == [1.0, 0.0, 0.0, math.inf, 0.0]
    lg = got["log"]
    assert math.isnan(lg[0]) and lg[1] == 0.0 and math.isnan(lg[2]) and lg[3] == -math.inf
    assert lg[4] == math.inf and math.isnan(lg[5])
    d = got["div0"]
    assert math.isnan(d[0]) and d[1] == math.inf and d[2] == -math.inf and math.isnan(d[3])


def test_integer_division_by_zero_and_overflow_rules(device):
    i = pyaccel.asarray([7, -7, 0, -2147483648], dtype="int32", device=device)
    assert (i // 0).tolist() == [0, 0, 0, 0]
    assert (i % 0).tolist() == [0, 0, 0, 0]
    assert (i // -1).tolist() == [-7, 7, 0, -2147483648]  # wraps, like NumPy
    assert (i + 2147483647).tolist() == [-2147483642, 2147483640, 2147483647, -1]
    u = pyaccel.asarray([250, 3], dtype="uint8", device=device)
    assert (u + 10).tolist() == [4, 13]
    assert (-u).tolist() == [6, 253]
    i8 = pyaccel.asarray([-128, 127], dtype="int8", device=device)
    assert (i8 * 2).tolist() == [0, -2]
    assert pyaccel.abs(i8).tolist() == [-128, 127]


def test_weak_scalar_result_dtypes(device):
    i8 = pyaccel.asarray([1, 2], dtype="int8", device=device)
    f32 = pyaccel.asarray([1.0, 2.0], dtype="float32", device=device)
    b = pyaccel.asarray([True, False], device=device)
    df = default_float(device).name
    assert (i8 + 1).dtype == pyaccel.int8
    assert (1 + i8).dtype == pyaccel.int8
    assert (i8 * 1.5).dtype.name == df
    assert (f32 + 1).dtype == pyaccel.float32
    assert (f32 * 2.5).dtype == pyaccel.float32
    assert (b & True).dtype == pyaccel.bool
    assert (i8 / 2).dtype.name == df
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        i8 + 300
    with pytest.raises(TypeError, match="bool"):
        b + b
    with pytest.raises(TypeError, match="integer"):
        f32 << 1


def test_broadcasting_corner_cases(device, rng):
    for s1, s2 in [((0, 3), (1, 3)), ((3, 1), (1, 0)), ((1,), ()), ((), ()), ((2, 1, 3), (4, 1)),
                   ((1, 1, 1), (5,)), ((257, 1), (1, 259))]:
        a, b = rand(rng, pyaccel.float32, s1), rand(rng, pyaccel.float32, s2)
        got = pyaccel.asarray(a, device=device) - pyaccel.asarray(b, device=device)
        with np.errstate(all="ignore"):
            want = a - b
        check(got, want, "arith", f"{s1} - {s2}")
    with pytest.raises(ValueError, match=r"cannot be broadcast"):
        pyaccel.ones((2, 3), device=device) + pyaccel.ones((4,), device=device)
    # the device is still usable after the error
    assert (pyaccel.ones((2,), device=device) + 1).tolist() == [2.0, 2.0]


def test_operators_and_inplace(device, rng):
    x = rand(rng, pyaccel.float32, (6,), "positive", specials=False)
    y = rand(rng, pyaccel.float32, (6,), "positive", specials=False)
    X, Y = pyaccel.asarray(x, device=device), pyaccel.asarray(y, device=device)
    ops = [(X + Y, x + y), (X - Y, x - y), (X * Y, x * y), (X / Y, x / y), (X ** Y, x ** y),
           (X // Y, x // y), (X % Y, x % y), (2.0 - X, 2 - x), (2.0 / X, 2 / x), (-X, -x),
           (+X, x), (abs(-X), x), (X < Y, x < y), (X >= 1.0, x >= 1), (X == X, x == x)]
    for got, want in ops:
        check(got, want.astype(want.dtype), "pow", "operator")
    i = pyaccel.asarray([1, 6, 12], dtype="int32", device=device)
    ii = np.array([1, 6, 12], np.int32)
    for got, want in [(i & 3, ii & 3), (i | 3, ii | 3), (i ^ 5, ii ^ 5), (~i, ~ii), (i << 2, ii << 2),
                      (i >> 1, ii >> 1), (3 & i, 3 & ii), (1 << i, 1 << ii)]:
        check(got, want, "exact", "bitwise operator")
    buf = X.__pyaccel_buffer__()
    X += Y
    X *= 2
    assert X.__pyaccel_buffer__() is buf  # in place: same buffer
    assert_allclose_dtype(X.to_numpy(), (x + y) * 2, np.float32)
    with pytest.raises(TypeError, match="in-place"):
        i += 1.5
    with pytest.raises(ValueError, match="in-place"):
        X += pyaccel.ones((2, 6), device=device, dtype="float32")
    # a NumPy array with dimensions sends the operator to NumPy on the host copy (NumPy's
    # result, as for any NumPy call that mixes them; docs/interop.md): no longer a TypeError
    host = X + np.ones(6, np.float32)
    assert type(host) is np.ndarray
    np.testing.assert_array_equal(host, X.to_numpy() + np.ones(6, np.float32))
    with pytest.raises(TypeError):
        X + "1"


def test_mixed_devices_refused(device):
    others = [d.uri for d in pyaccel.devices() if d.uri != device.uri]
    if not others:
        pytest.skip("only one device here")
    a = pyaccel.ones(3, device=device, dtype="float32")
    b = pyaccel.ones(3, device=others[0], dtype="float32")
    with pytest.raises(ValueError, match="different devices"):
        a + b


def test_float16_where_supported(device, rng):
    if pyaccel.float16 not in pyaccel.__array_namespace_info__().dtypes(device=device, kind=pyaccel.float16).values():
        with pytest.raises(pyaccel.UnsupportedDTypeError, match="float16"):
            pyaccel.ones(3, dtype="float16", device=device)
        return
    x = rand(rng, pyaccel.float16, (300,), "small", specials=False)
    X = pyaccel.asarray(x, device=device)
    check(pyaccel.exp(X), np.exp(x), "transcendental", "exp float16")
    check(X * 1000.0, x * np.float16(1000.0), "arith", "float16 overflow to inf")
    check(pyaccel.nextafter(X, pyaccel.asarray(np.full(300, np.inf, np.float16), device=device)),
          np.nextafter(x, np.float16(np.inf)), "exact", "nextafter float16")


@pytest.mark.slow
@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
@settings(max_examples=8 if CI else max(FEW, 25))  # (CI: 25 -> 8 shapes per row; every dtype still)
@given(shape=small_shapes(max_dims=4))
def test_exhaustive_sweep(device, row, rng, shape):
    """Slow: more shapes and every dtype for every row."""
    for dt in input_dtypes(row, device):
        vals = [rand(rng, dt, shape, row.domain if k == 0 else "any") for k in range(row.arity)]
        if row.arity == 2:
            vals[1] = second_operand(row, rng, dt, shape)
        run_and_check(row, device, vals, dt, f"{row.name} {dt.name} {shape}")


def test_float_remainder_and_floor_divide_are_exact_for_large_ratios(device, rng) -> None:
    """``remainder`` / ``floor_divide`` of float32 with |x / y| far past 2^24 match NumPy bit for
    bit (fmod is exact; WGSL's ``%`` is x - y * trunc(x / y): remainder(1e30, -9) gave -0.0
    on vulkan:0 and gl:0, NumPy -6.0; found by the differential fuzzer)."""
    x = np.concatenate([rng.uniform(-1e30, 1e30, 300), rng.uniform(-1e10, 1e10, 300),
                        rng.uniform(-1e3, 1e3, 300), [1e30, -1e30, 3.4e38, 16777217.0, 7.0, -7.0]])
    y = np.concatenate([rng.uniform(-10, 10, 450), rng.uniform(-1e-3, 1e-3, 225),
                        rng.uniform(-1e6, 1e6, 225), [-9.0, 9.0, 3.0, 2.0, 0.5, -3.0]])
    x, y = x.astype(np.float32), y.astype(np.float32)
    with np.errstate(all="ignore"):
        want_r, want_q = np.remainder(x, y), np.floor_divide(x, y)
    xa, ya = pyaccel.asarray(x, device=device), pyaccel.asarray(y, device=device)
    got_r = pyaccel.remainder(xa, ya).to_numpy()
    got_q = pyaccel.floor_divide(xa, ya).to_numpy()
    np.testing.assert_array_equal(got_r, want_r)
    np.testing.assert_array_equal(np.signbit(got_r), np.signbit(want_r))
    np.testing.assert_array_equal(got_q, want_q)
