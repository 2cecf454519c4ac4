"""The built-in GPU kernel families (pyaccel.ops.gpu_kernels) against NumPy.

Every test runs on every GPU device (``gpu_device`` fixture: vulkan:0 and gl:0 on CI,
both software rasterisers). Kernels have two layouts — the GPU one (workgroup trees,
tiled scans) and the barrier-free one software devices get by default — so the
``layout`` fixture runs the main cases under both (``gpu_kernels.LAYOUT``).

Outputs are checked in full against NumPy on fresh random data. Before each call the
device's buffer pool is seeded with poisoned buffers of the output's size class, so
the function's output (and its temporaries) come back filled with garbage (NaN /
0xDEADBEEF) and any element a kernel forgets to write shows up.
"""

from __future__ import annotations

import numpy as np
import pytest

from pyaccel import dtypes
from pyaccel.capabilities import Capability
from pyaccel.errors import UnsupportedDTypeError
from pyaccel.ops import gpu_kernels as gk
from pyaccel.testing import POISON_F16, POISON_F32, POISON_U32

DT = {"float32": dtypes.float32, "float16": dtypes.float16, "int32": dtypes.int32,
      "uint32": dtypes.uint32, "bool": dtypes.bool_}
NP_STORAGE = {"float32": np.float32, "float16": np.float16, "int32": np.int32,
              "uint32": np.uint32, "bool": np.uint32}


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
@pytest.fixture(params=["gpu", "software"])
def layout(request, monkeypatch):
    """Run a test with the GPU kernel layouts and with the software-device layouts."""
    monkeypatch.setattr(gk, "LAYOUT", request.param)
    return request.param


def need(dev, name: str) -> None:
    if name == "float16" and Capability.F16 not in dev.capabilities:
        pytest.skip(f"{dev.uri} has no shader-f16 (float16 storage)")


def up(dev, a: np.ndarray):
    a = np.ascontiguousarray(a)
    if a.dtype == np.bool_:
        a = a.astype(np.uint32)
    b = dev.malloc(a.nbytes)
    if a.nbytes:
        b.write(a)
    return b


def poison_pool(dev, nbytes: int, pattern: int = POISON_U32, unit: int = 4, count: int = 4) -> None:
    """Put ``count`` poisoned buffers of ``nbytes`` in the pool: the next mallocs of that
    size class get them back."""
    data = (pattern.to_bytes(unit, "little") * (nbytes // unit + 1))[:nbytes]
    bufs = [dev.malloc(nbytes) for _ in range(count)]
    for b in bufs:
        if nbytes:
            b.write(data)
    for b in bufs:
        b.free()


def poison_for(dev, count: int, np_dtype, buffers: int = 4) -> None:
    """Poison the pool for an output of ``count`` elements of ``np_dtype``."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype == np.float32:
        poison_pool(dev, count * 4, POISON_F32, count=buffers)
    elif np_dtype == np.float16:
        poison_pool(dev, count * 2, POISON_F16, unit=2, count=buffers)
    else:
        poison_pool(dev, count * 4, POISON_U32, count=buffers)


def down(buf, np_dtype, shape) -> np.ndarray:
    np_dtype = np.dtype(np_dtype)
    count = int(np.prod(shape))
    raw = buf.read(count * np_dtype.itemsize) if count else b""
    return np.frombuffer(raw, dtype=np_dtype).reshape(shape).copy()


def rand(rng, shape, name: str, lo: int = -1000, hi: int = 1000) -> np.ndarray:
    if name in ("float32", "float16"):
        return rng.standard_normal(shape).astype(name)
    if name == "int32":
        return rng.integers(lo, hi, shape, dtype=np.int32)
    if name == "uint32":
        return rng.integers(0, hi, shape, dtype=np.uint32)
    return rng.integers(0, 2, shape).astype(np.uint32)


def check_float(got, want, rtol, atol, what=""):
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    with np.errstate(invalid="ignore"):
        ok = same | (np.abs(got - want) <= atol + rtol * np.abs(want))
    if not ok.all():
        i = np.unravel_index(np.argmin(ok), ok.shape)
        atol_i = atol[i] if np.ndim(atol) else atol
        raise AssertionError(f"{what}: {np.count_nonzero(~ok)} of {ok.size} differ; first at {i}: "
                             f"got {got[i]!r}, want {want[i]!r} (atol {atol_i!r}, rtol {rtol})")


def check_exact(got, want, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if got.dtype.kind == "f":  # bitwise (NaN, -0.0)
        bad = got.view(f"u{got.itemsize}") != want.astype(got.dtype).view(f"u{got.itemsize}")
    else:
        bad = got != want
    if bad.any():
        i = np.unravel_index(np.argmax(bad), bad.shape)
        raise AssertionError(f"{what}: {np.count_nonzero(bad)} of {bad.size} differ; first at {i}: "
                             f"got {got[i]!r}, want {want[i]!r}")


def test_poison_pool_reaches_outputs(gpu_device):
    """The poisoning these tests rely on: a malloc after poison_for returns poison."""
    dev = gpu_device
    for count in (3, 1000, 70001):
        poison_for(dev, count, np.float32)
        b = dev.malloc(count * 4)
        assert np.isnan(down(b, np.float32, (count,))).all()
        b.free()


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------
RED_SHAPES = [(1, 1, 1), (3, 255, 1), (2, 257, 1), (1, 65537, 1), (5, 1000, 3), (2, 5, 257),
              (3, 300, 8), (1, 9, 1), (7, 70, 1)]


def reduce_ref(x3: np.ndarray, op: str, name: str) -> np.ndarray:
    if op in ("argmin", "argmax"):
        return getattr(np, op)(x3, axis=1).astype(np.int32)
    if op in ("min", "max"):
        return getattr(np, op)(x3, axis=1)
    if name in ("int32", "uint32"):  # wrap-around arithmetic in the storage type
        return getattr(np, op)(x3, axis=1, dtype=x3.dtype)
    return getattr(np, op)(x3.astype(np.float64), axis=1)


@pytest.mark.parametrize("name", ["float32", "int32", "uint32", "float16"])
def test_reduce_ops(gpu_device, layout, rng, name):
    dev = gpu_device
    need(dev, name)
    dt = DT[name]
    for shape in RED_SHAPES:
        outer, n, inner = shape
        x = rand(rng, shape, name)
        xp = x.copy()
        if name.startswith("float"):  # products near 1 stay finite
            xp = (1 + rng.uniform(-0.01, 0.01, shape)).astype(name)
        elif name == "int32":
            xp = rng.choice(np.array([-3, -1, 1, 1, 1, 3], np.int32), shape)  # wraps for long rows
        else:
            xp = rng.choice(np.array([1, 1, 1, 3, 5], np.uint32), shape)
        for op in ("sum", "prod", "min", "max", "argmin", "argmax"):
            src = xp if op == "prod" else x
            res_np = np.int32 if op.startswith("arg") else NP_STORAGE[name]
            poison_for(dev, outer * inner, res_np)
            out = gk.reduce_axis(dev, up(dev, src), dt, outer, n, inner, op)
            got = down(out, res_np, (outer, inner))
            want = reduce_ref(src, op, name)
            what = f"{op} {name} {shape} on {dev.uri} ({layout})"
            if op == "sum" and name.startswith("float"):
                mag = np.abs(src.astype(np.float64)).sum(axis=1)
                rtol, atol = (2e-3, 2e-3 * mag) if name == "float16" else (1e-5, 2e-6 * mag)
                check_float(got, want, rtol, atol, what)
            elif op == "prod" and name.startswith("float"):
                # each of the n - 1 f32 multiplies rounds (relative error <= 6e-8)
                rtol = (2e-3 if name == "float16" else 1e-5) + 1.2e-7 * n
                check_float(got, want, rtol, 0.0, what)
            else:
                check_exact(got, want, what)


def test_reduce_int_wraps_and_out_dtype(gpu_device, rng):
    dev = gpu_device
    x = rng.integers(2**30, 2**31 - 1, (2, 1000, 1), dtype=np.int32)
    out = gk.reduce_axis(dev, up(dev, x), dtypes.int32, 2, 1000, 1, "sum")
    check_exact(down(out, np.int32, (2, 1)), x.sum(axis=1, dtype=np.int32), "int32 sum wraps")
    # bool sum counts (default out dtype int32); float32 sum of int32 data
    b = rng.integers(0, 2, (3, 500, 1)).astype(bool)
    out = gk.reduce_axis(dev, up(dev, b), dtypes.bool_, 3, 500, 1, "sum")
    check_exact(down(out, np.int32, (3, 1)), b.sum(axis=1).astype(np.int32), "bool sum")
    y = rng.integers(-50, 50, (2, 300, 1), dtype=np.int32)
    out = gk.reduce_axis(dev, up(dev, y), dtypes.int32, 2, 300, 1, "sum", out_dt=dtypes.float32)
    check_exact(down(out, np.float32, (2, 1)), y.sum(axis=1).astype(np.float32), "int32 -> f32 sum")


def test_reduce_any_all(gpu_device, layout, rng):
    dev = gpu_device
    for shape in [(4, 300, 1), (2, 7, 5), (1, 70000, 1), (3, 1, 4)]:
        outer, n, inner = shape
        for p in (0.002, 0.5, 0.998):
            b = rng.random(shape) < p
            for op in ("any", "all"):
                poison_for(dev, outer * inner, np.uint32)
                out = gk.reduce_axis(dev, up(dev, b), dtypes.bool_, outer, n, inner, op)
                want = getattr(np, op)(b, axis=1).astype(np.uint32)
                check_exact(down(out, np.uint32, (outer, inner)), want, f"{op} {shape} p={p}")
    # float input: nonzero and NaN count as True (NumPy)
    x = np.array([[0.0, np.nan, 0.0], [0.0, 0.0, 0.0], [1.0, 2.0, -0.0]], np.float32)
    for op in ("any", "all"):
        out = gk.reduce_axis(dev, up(dev, x), dtypes.float32, 3, 3, 1, op)
        check_exact(down(out, np.uint32, (3,)), getattr(np, op)(x, axis=1).astype(np.uint32), op)


def test_reduce_nan_inf(gpu_device, layout, rng):
    dev = gpu_device
    n = 1000
    x = rng.standard_normal((6, n)).astype(np.float32)
    x[0, [17, 400, 901]] = np.nan           # first NaN wins (min, max, argmin, argmax)
    x[1, 999] = np.nan                       # NaN last
    x[2, :] = -np.inf                        # all -inf: argmax 0, max -inf
    x[3, 5] = np.inf
    x[3, 600] = -np.inf
    x[4, [3, 800]] = np.inf                  # ties: first occurrence
    x[4, [2, 700]] = -np.inf
    x[5, :] = 1.5                            # all equal
    for op in ("min", "max", "argmin", "argmax", "sum"):
        res_np = np.int32 if op.startswith("arg") else np.float32
        poison_for(dev, 6, res_np)
        out = gk.reduce_axis(dev, up(dev, x), dtypes.float32, 6, n, 1, op)
        with np.errstate(invalid="ignore"):
            want = getattr(np, op)(x, axis=1)
        got = down(out, res_np, (6,))
        if op == "sum":
            check_float(got, want, 1e-5, 1e-3, "sum with nan/inf")
        else:
            check_exact(got, want.astype(res_np), f"{op} with nan/inf")
    # inner > 1 layout
    y = rng.standard_normal((2, 50, 3)).astype(np.float32)
    y[1, 10, 2] = np.nan
    y[1, 30, 2] = np.nan
    for op in ("max", "argmin"):
        out = gk.reduce_axis(dev, up(dev, y), dtypes.float32, 2, 50, 3, op)
        res_np = np.int32 if op.startswith("arg") else np.float32
        check_exact(down(out, res_np, (2, 3)), getattr(np, op)(y, axis=1).astype(res_np), op)


def test_reduce_empty_axis(gpu_device):
    dev = gpu_device
    x = dev.malloc(0)
    for op, want in (("sum", 0.0), ("prod", 1.0)):
        poison_for(dev, 6, np.float32)
        out = gk.reduce_axis(dev, x, dtypes.float32, 2, 0, 3, op)
        check_exact(down(out, np.float32, (2, 3)), np.full((2, 3), want, np.float32), op)
    for op, want in (("any", 0), ("all", 1)):
        out = gk.reduce_axis(dev, x, dtypes.bool_, 4, 0, 1, op)
        check_exact(down(out, np.uint32, (4,)), np.full(4, want, np.uint32), op)
    for op in ("min", "max", "argmin", "argmax"):
        with pytest.raises(ValueError, match="empty axis"):
            gk.reduce_axis(dev, x, dtypes.float32, 2, 0, 3, op)
    out = gk.var_axis(dev, x, dtypes.float32, 2, 0, 1)
    assert np.isnan(down(out, np.float32, (2,))).all()
    assert gk.reduce_axis(dev, x, dtypes.float32, 0, 5, 3, "sum").nbytes == 0


def test_reduce_many_rows_2d_grid(gpu_device, rng, monkeypatch):
    """> 65535 workgroups (one per row in the GPU layout): the grid spreads over y."""
    monkeypatch.setattr(gk, "LAYOUT", "gpu")
    dev = gpu_device
    rows, n = 70001, 65
    x = rng.standard_normal((rows, n)).astype(np.float32)
    for op in ("sum",):
        res_np = np.int32 if op == "argmax" else np.float32
        poison_for(dev, rows, res_np)
        out = gk.reduce_axis(dev, up(dev, x), dtypes.float32, rows, n, 1, op)
        want = getattr(np, op)(x.astype(np.float64) if op == "sum" else x, axis=1)
        got = down(out, res_np, (rows,))
        if op == "sum":
            check_float(got, want, 1e-5, 1e-5 * np.abs(x).sum(axis=1), op)
        else:
            check_exact(got, want.astype(np.int32), op)


def test_many_threads_2d_grid(gpu_device, rng):
    """> 65535 * 256 threads (one per output column): the thread grid spreads over y."""
    dev = gpu_device
    rows = 65535 * 256 + 300
    x = rng.standard_normal(rows, dtype=np.float32)
    poison_for(dev, rows, np.float32, buffers=1)
    out = gk.reduce_axis(dev, up(dev, x), dtypes.float32, rows, 1, 1, "max")
    check_exact(down(out, np.float32, (rows,)), x, "max over n=1, 16.8M columns")


@pytest.mark.parametrize("name", ["float32", "int32", "float16"])
def test_mean_var(gpu_device, layout, rng, name):
    dev = gpu_device
    need(dev, name)
    dt = DT[name]
    out_np = np.float16 if name == "float16" else np.float32
    rtol = 2e-3 if name == "float16" else 2e-5
    for shape in [(3, 1000, 1), (2, 257, 4), (1, 65537, 1), (4, 1, 2), (2, 33, 3)]:
        outer, n, inner = shape
        x = rand(rng, shape, name)
        if name.startswith("float"):
            x = (x + 3).astype(name)  # a mean far from 0 tests the two-pass variance
        xf = x.astype(np.float64)
        poison_for(dev, outer * inner, out_np)
        got = down(gk.mean_axis(dev, up(dev, x), dt, *shape), out_np, (outer, inner))
        check_float(got, xf.mean(axis=1), rtol, 1e-6, f"mean {name} {shape}")
        for corr in (0, 1):
            poison_for(dev, outer * inner, out_np)
            got = down(gk.var_axis(dev, up(dev, x), dt, *shape, correction=corr), out_np,
                       (outer, inner))
            with np.errstate(divide="ignore", invalid="ignore"):
                want = xf.var(axis=1, ddof=corr) if n - corr > 0 else np.full((outer, inner), np.nan)
            check_float(got, want, rtol * 10, 1e-5 * (1 + np.abs(want)), f"var {name} {shape} c={corr}")


# ---------------------------------------------------------------------------
# cumulative sum
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["float32", "int32", "uint32", "float16", "bool"])
def test_cumsum(gpu_device, layout, rng, name):
    dev = gpu_device
    need(dev, name)
    dt = DT[name]
    out_np = np.int32 if name == "bool" else NP_STORAGE[name]
    shapes = [(1, 1, 1), (3, 255, 1), (2, 1025, 1), (1, 65537, 1), (4, 100, 3), (2, 50, 8),
              (1, 3000, 2), (5, 65, 1)]
    if name == "float32":
        shapes.append((1, 1100000, 1))  # tile totals need a scan of their own
    for shape in shapes:
        outer, n, inner = shape
        x = rand(rng, shape, name)
        for inc in (False, True):
            m = n + inc
            poison_for(dev, outer * m * inner, out_np)
            out = gk.cumsum_axis(dev, up(dev, x), dt, outer, n, inner, include_initial=inc)
            got = down(out, out_np, (outer, m, inner))
            what = f"cumsum {name} {shape} include_initial={inc}"
            if name.startswith("float"):
                want = np.cumsum(x.astype(np.float64), axis=1)
                mag = np.cumsum(np.abs(x.astype(np.float64)), axis=1)
            else:
                want = np.cumsum(x.astype(out_np), axis=1, dtype=out_np)
            if inc:
                want = np.concatenate([np.zeros((outer, 1, inner), want.dtype), want], axis=1)
                if name.startswith("float"):
                    mag = np.concatenate([np.zeros((outer, 1, inner)), mag], axis=1)
            if name == "float16":
                check_float(got, want, 2e-3, 2e-3 * mag, what)
            elif name == "float32":
                check_float(got, want, 1e-5, 2e-6 * mag, what)
            else:
                check_exact(got, want, what)


@pytest.mark.parametrize("name", ["float32", "int32", "uint32"])
def test_cumprod(gpu_device, layout, rng, name):
    # op="prod": scan.wgsl's OP = 1 (identity 1) with reduce.wgsl products as tile totals;
    # values +-1 / 2 / 1/2 (floats) or small ints (integers wrap): every product is exact
    dev = gpu_device
    dt = DT[name]
    out_np = NP_STORAGE[name]
    for shape in [(1, 1, 1), (3, 255, 1), (2, 1025, 1), (1, 65537, 1), (4, 100, 3), (1, 3000, 2)]:
        outer, n, inner = shape
        if name == "float32":
            x = rng.choice(np.array([1.0, -1.0, 2.0, 0.5], np.float32), size=shape,
                           p=[0.499, 0.499, 0.001, 0.001])
        else:
            x = rng.choice(np.array([1, 3, 1, 2], out_np), size=shape).astype(out_np)
            if name == "int32":
                x[..., ::5] *= -1
        for inc in (False, True):
            m = n + inc
            poison_for(dev, outer * m * inner, out_np)
            out = gk.cumsum_axis(dev, up(dev, x), dt, outer, n, inner, include_initial=inc,
                                 op="prod")
            got = down(out, out_np, (outer, m, inner))
            with np.errstate(over="ignore"):
                want = np.cumprod(x, axis=1, dtype=out_np)
            if inc:
                want = np.concatenate([np.ones((outer, 1, inner), out_np), want], axis=1)
            check_exact(got, want, f"cumprod {name} {shape} include_initial={inc} ({layout})")
    with pytest.raises(ValueError, match="op must be"):
        gk.cumsum_axis(dev, up(dev, x), dt, 1, 1, 1, op="max")


def test_cumsum_edges(gpu_device, rng):
    dev = gpu_device
    x = rng.integers(2**29, 2**30, (1, 2000, 1), dtype=np.int32)  # wraps
    got = down(gk.cumsum_axis(dev, up(dev, x), dtypes.int32, 1, 2000, 1), np.int32, (1, 2000, 1))
    check_exact(got, np.cumsum(x, axis=1, dtype=np.int32), "int32 cumsum wraps")
    e = dev.malloc(0)
    poison_for(dev, 6, np.float32)
    got = down(gk.cumsum_axis(dev, e, dtypes.float32, 2, 0, 3, include_initial=True), np.float32,
               (2, 1, 3))
    check_exact(got, np.zeros((2, 1, 3), np.float32), "n=0 include_initial")
    assert gk.cumsum_axis(dev, e, dtypes.float32, 2, 0, 3).nbytes == 0
    y = np.array([1, np.inf, 2, -np.inf, 3, np.nan, 4], np.float32)
    got = down(gk.cumsum_axis(dev, up(dev, y), dtypes.float32, 1, 7, 1), np.float32, (7,))
    with np.errstate(invalid="ignore"):
        check_exact(got, np.cumsum(y), "cumsum inf/nan")


# ---------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------
MM_CASES = [  # batch, M, K, N, a broadcast, b broadcast
    (1, 1, 1, 1, False, False),
    (1, 67, 33, 129, False, False),
    (3, 64, 64, 64, False, False),
    (2, 100, 300, 70, False, True),
    (4, 17, 5, 65, True, False),
    (1, 1, 257, 255, False, False),     # thin: naive kernel
    (2, 130, 7, 3, False, False),
    (1, 5, 0, 6, False, False),         # K == 0: zeros
]


def mm_data(rng, name, shape):
    if name.startswith("float"):
        return rng.standard_normal(shape).astype(name)
    if name == "int32":
        return rng.integers(-100, 100, shape, dtype=np.int32)
    return rng.integers(0, 100, shape, dtype=np.uint32)


@pytest.mark.parametrize("name", ["float32", "int32", "uint32", "float16"])
@pytest.mark.parametrize("fn", ["matmul", "matmul_naive"])
def test_matmul(gpu_device, rng, name, fn):
    dev = gpu_device
    need(dev, name)
    func = getattr(gk, fn)
    for batch, M, K, N, abc, bbc in MM_CASES:
        a = mm_data(rng, name, (1 if abc else batch, M, K))
        b = mm_data(rng, name, (1 if bbc else batch, K, N))
        poison_for(dev, batch * M * N, NP_STORAGE[name])
        out = func(dev, up(dev, a), up(dev, b), DT[name], batch, M, K, N,
                   0 if abc else M * K, 0 if bbc else K * N)
        got = down(out, NP_STORAGE[name], (batch, M, N))
        what = f"{fn} {name} {(batch, M, K, N)} bcast={(abc, bbc)}"
        if name.startswith("float"):
            af, bf = a.astype(np.float64), b.astype(np.float64)
            want = np.broadcast_to(af @ bf, (batch, M, N))
            mag = np.broadcast_to(np.abs(af) @ np.abs(bf), (batch, M, N))
            rtol, f = (2e-3, 2e-3) if name == "float16" else (1e-5, 2e-6)
            check_float(got, want, rtol, f * mag + 1e-30, what)
        else:
            want = np.broadcast_to(np.matmul(a.astype(np.int64), b.astype(np.int64)), (batch, M, N))
            check_exact(got, want.astype(NP_STORAGE[name]), what)


def test_matmul_int_wraps(gpu_device, rng):
    dev = gpu_device
    a = rng.integers(-2**20, 2**20, (70, 90), dtype=np.int32)
    b = rng.integers(-2**20, 2**20, (90, 80), dtype=np.int32)
    want = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)  # low 32 bits
    for fn in (gk.matmul, gk.matmul_naive):
        got = down(fn(dev, up(dev, a), up(dev, b), dtypes.int32, 1, 70, 90, 80, 0, 0), np.int32,
                   (70, 80))
        check_exact(got, want, f"{fn.__name__} int32 wraps")


# ---------------------------------------------------------------------------
# softmax / logsumexp
# ---------------------------------------------------------------------------
def softmax_ref(x):
    x = x.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)


def logsumexp_ref(x):
    x = x.astype(np.float64)
    m = x.max(axis=1) if x.shape[1] else np.full(x.shape[0], -np.inf)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        shift = np.where(np.isfinite(m), m, 0.0)
        r = np.log(np.exp(x - shift[:, None]).sum(axis=1)) + shift
    return np.where(np.isnan(m), np.nan, np.where(np.isinf(m), m, r))


@pytest.mark.parametrize("name", ["float32", "float16"])
def test_softmax_logsumexp(gpu_device, layout, rng, name):
    dev = gpu_device
    need(dev, name)
    dt = DT[name]
    rtol, atol = (2e-3, 1e-4) if name == "float16" else (1e-5, 1e-7)
    for rows, n in [(1, 1), (3, 1000), (5, 257), (70001, 3), (2, 5000)]:
        x = (rng.standard_normal((rows, n)) * 5).astype(name)
        poison_for(dev, rows * n, x.dtype)
        got = down(gk.softmax_rows(dev, up(dev, x), dt, rows, n), x.dtype, (rows, n))
        check_float(got, softmax_ref(x), rtol, atol, f"softmax {name} {(rows, n)}")
        poison_for(dev, rows, x.dtype)
        got = down(gk.logsumexp_rows(dev, up(dev, x), dt, rows, n), x.dtype, (rows,))
        # max + log(sum): rounding error relative to |max| (cancellation near 0)
        lse_atol = 10 * rtol * (1 + np.abs(x.astype(np.float64)).max(axis=1))
        check_float(got, logsumexp_ref(x), rtol, lse_atol, f"logsumexp {name} {(rows, n)}")
    inf, nan = np.inf, np.nan
    sp = np.array([[1, nan, 2, 3], [1, inf, 2, 3], [-inf, -inf, -inf, -inf], [-inf, 1, 2, -inf],
                   [inf, -inf, 0, 1], [1e4, -1e4, 0, 1e4], [0, 0, 0, 0]], name)
    got = down(gk.softmax_rows(dev, up(dev, sp), dt, 7, 4), sp.dtype, (7, 4))
    check_float(got, softmax_ref(sp), rtol, atol, "softmax nan/inf")
    got = down(gk.logsumexp_rows(dev, up(dev, sp), dt, 7, 4), sp.dtype, (7,))
    check_float(got, logsumexp_ref(sp), rtol, atol, "logsumexp nan/inf")
    empty = gk.logsumexp_rows(dev, dev.malloc(0), dt, 3, 0)
    check_exact(down(empty, sp.dtype, (3,)), np.full(3, -np.inf, sp.dtype), "logsumexp n=0")
    with pytest.raises(UnsupportedDTypeError):
        gk.softmax_rows(dev, up(dev, np.ones(4, np.int32)), dtypes.int32, 1, 4)


# ---------------------------------------------------------------------------
# sort
# ---------------------------------------------------------------------------
def sort_ref_idx(x: np.ndarray, descending: bool) -> np.ndarray:
    """Stable argsort along axis 1; descending = the reverse of ascending with ties
    in their original order (NaNs first)."""
    if not descending:
        return np.argsort(x, axis=1, kind="stable")
    if x.dtype.kind == "f":
        out = []
        for row in x:
            nan = np.flatnonzero(np.isnan(row))
            rest = np.flatnonzero(~np.isnan(row))
            order = rest[np.argsort(-row[rest].astype(np.float64), kind="stable")]
            out.append(np.concatenate([nan, order]))
        return np.array(out).reshape(x.shape)
    return np.argsort(-x.astype(np.int64), axis=1, kind="stable")


def sort_data(rng, name, shape):
    if name.startswith("float"):
        x = rng.integers(-20, 20, shape).astype(name) / 4  # many ties
        flat = x.reshape(-1)
        k = max(1, flat.size // 50)
        for v in (np.nan, np.inf, -np.inf, -0.0, 0.0):
            flat[rng.integers(0, flat.size, k)] = v
        return x
    if name == "int32":
        x = rng.integers(-50, 50, shape, dtype=np.int32)
        x.reshape(-1)[rng.integers(0, x.size, max(1, x.size // 50))] = np.iinfo(np.int32).min
        x.reshape(-1)[rng.integers(0, x.size, max(1, x.size // 50))] = np.iinfo(np.int32).max
        return x
    x = rng.integers(0, 100, shape, dtype=np.uint32)
    x.reshape(-1)[rng.integers(0, x.size, max(1, x.size // 20))] = 2**32 - 1 - rng.integers(0, 3)
    x.reshape(-1)[rng.integers(0, x.size, max(1, x.size // 20))] = 2**31 + 5
    return x


@pytest.mark.parametrize("name", ["float32", "int32", "uint32", "float16"])
def test_sort(gpu_device, rng, name):
    dev = gpu_device
    need(dev, name)
    for rows, n in [(1, 1), (3, 255), (2, 257), (1, 1000), (2, 2049), (1000, 2), (5, 7)]:
        x = sort_data(rng, name, (rows, n))
        xb = up(dev, x)
        for desc in (False, True):
            idx = sort_ref_idx(x, desc)
            poison_for(dev, rows * n, np.int32)
            gi = gk.sort_axis(dev, xb, DT[name], rows, n, descending=desc, return_indices=True)
            check_exact(down(gi, np.int32, (rows, n)), idx.astype(np.int32),
                        f"argsort {name} {(rows, n)} descending={desc}")
            poison_for(dev, rows * n, x.dtype)
            gv = gk.sort_axis(dev, xb, DT[name], rows, n, descending=desc)
            check_exact(down(gv, x.dtype, (rows, n)), np.take_along_axis(x, idx, axis=1),
                        f"sort {name} {(rows, n)} descending={desc}")
    assert gk.sort_axis(dev, dev.malloc(0), DT[name], 3, 0).nbytes == 0


# ---------------------------------------------------------------------------
# contract: recording only, temporaries freed, errors
# ---------------------------------------------------------------------------
def test_calls_only_record(gpu_device, rng, monkeypatch):
    """No call submits or waits, and each leaves exactly one live buffer (its result)."""
    dev = gpu_device
    x = up(dev, rng.standard_normal(300000).astype(np.float32))
    m = up(dev, rng.standard_normal((200, 300)).astype(np.float32))
    x.read(4)  # flush the uploads
    calls = [
        lambda: gk.reduce_axis(dev, x, dtypes.float32, 1, 300000, 1, "sum"),
        lambda: gk.reduce_axis(dev, x, dtypes.float32, 3, 100000, 1, "argmax"),
        lambda: gk.var_axis(dev, x, dtypes.float32, 1, 100000, 3),
        lambda: gk.cumsum_axis(dev, x, dtypes.float32, 1, 300000, 1),
        lambda: gk.matmul(dev, m, m, dtypes.float32, 1, 200, 300, 200, 0, 0),
        lambda: gk.softmax_rows(dev, m, dtypes.float32, 200, 300),
        lambda: gk.sort_axis(dev, m, dtypes.float32, 200, 300),
    ]
    for layout_name in ("gpu", "software"):
        monkeypatch.setattr(gk, "LAYOUT", layout_name)
        for i, call in enumerate(calls):
            call().free()  # compile + warm the pool
            x.read(4)
            before = dev.memory_stats()
            out = call()
            after = dev.memory_stats()
            what = f"call {i} ({layout_name} layout)"
            assert after["submits"] == before["submits"], f"{what} submitted work"
            assert after["dispatches"] > before["dispatches"], what
            live = (after["live_buffers"] - before["live_buffers"]
                    - (after["uniforms_cached"] - before["uniforms_cached"]))
            assert live == 1, f"{what}: {live} buffers left alive (temporaries not freed)"
            out.free()


def test_errors(gpu_device):
    dev = gpu_device
    x = up(dev, np.ones(8, np.float32))
    with pytest.raises(ValueError, match="unknown op"):
        gk.reduce_axis(dev, x, dtypes.float32, 1, 8, 1, "median")
    with pytest.raises(UnsupportedDTypeError):
        gk.reduce_axis(dev, x, dtypes.float64, 1, 1, 1, "sum")
    with pytest.raises(ValueError, match="n must be"):
        gk.cumsum_axis(dev, x, dtypes.float32, 1, -1, 1)
    if Capability.F16 not in dev.capabilities:
        with pytest.raises(UnsupportedDTypeError, match="shader-f16"):
            gk.softmax_rows(dev, x, dtypes.float16, 1, 8)


def test_cpu_device_refused():
    import pyaccel

    cpu = pyaccel.device("cpu:0")
    with pytest.raises(ValueError, match="GPU device"):
        gk.reduce_axis(cpu, cpu.malloc(16), dtypes.float32, 1, 4, 1, "sum")
