"""The step-7 dtypes in the page: int64, uint64, float64 (emulated in WGSL over u32 words),
complex64 and complex128 on webgpu:0, against NumPy here.

Inputs are fresh random values plus edge values, sent as exact Python literals (ints, float
hex strings, complex pairs); results come back as ``bytes(x)`` (NumPy's little-endian layout)
and are compared bit for bit where the operation is exact (integer arithmetic with wrap-around,
float64 + - * / sqrt, comparisons, round trips) and within a few ulp otherwise.
"""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")

DEVICE = "webgpu:0"
PRELUDE = f"""
import pyaccel
dev = pyaccel.device({DEVICE!r})

def f64(hexes):
    return pyaccel.asarray([float.fromhex(h) for h in hexes], dtype=pyaccel.float64, device=dev)

def out(r):
    return (r.dtype.name, list(r.shape), bytes(r))
"""


def back(res) -> np.ndarray:
    name, shape, raw = res
    return np.frombuffer(raw, dtype=np.dtype(name)).reshape(shape)


def hexes(a: np.ndarray) -> list[str]:
    return [float(v).hex() for v in a]


def test_round_trips_exactly(run_py):
    got = run_py(PRELUDE + """
[out(pyaccel.asarray(list(range(5)), dtype=pyaccel.int64, device=dev)),
 out(pyaccel.asarray([1e300, 0.1], dtype=pyaccel.float64, device=dev)),
 out(pyaccel.asarray([2**63 - 1, -2**63, 2**40], device=dev)),
 out(pyaccel.asarray([2**64 - 1, 2**32 + 1], dtype=pyaccel.uint64, device=dev)),
 out(pyaccel.asarray([1 + 2j, -0.5j], dtype=pyaccel.complex128, device=dev)),
 pyaccel.asarray([1.5, 0.1], device=dev).dtype.name,
 pyaccel.asarray([1 + 2j], device=dev).dtype.name,
 pyaccel.asarray([2**40], device=dev).dtype.name]
""")
    np.testing.assert_array_equal(back(got[0]), np.arange(5, dtype=np.int64))
    assert back(got[1]).tobytes() == np.array([1e300, 0.1]).tobytes()  # explicit float64: exact
    np.testing.assert_array_equal(back(got[2]), np.array([2**63 - 1, -2**63, 2**40], np.int64))
    np.testing.assert_array_equal(back(got[3]), np.array([2**64 - 1, 2**32 + 1], np.uint64))
    assert back(got[4]).tobytes() == np.array([1 + 2j, -0.5j]).tobytes()
    # issue 21: float64 is emulated in the page, so the default floats are 32-bit; ints int64
    assert got[5:] == ["float32", "complex64", "int64"]


@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_int64_arithmetic_bit_exact(run_py, rng, dtype):
    info = np.iinfo(dtype)
    edge = [0, 1, info.max, info.min, 2**32 - 1, 2**32, 2**31, 2**53 + 1]
    x = np.concatenate([np.array(edge, dtype=dtype),
                        rng.integers(info.min, info.max, 200, dtype=dtype, endpoint=True)])
    y = rng.integers(info.min, info.max, x.size, dtype=dtype, endpoint=True)
    y[y == 0] = 3
    got = run_py(PRELUDE + f"""
x = pyaccel.asarray({x.tolist()}, dtype=pyaccel.{dtype}, device=dev)
y = pyaccel.asarray({y.tolist()}, dtype=pyaccel.{dtype}, device=dev)
[out(x + y), out(x * y), out(x - y), out(x // y), out(x % y), out(x < y), out(x ^ y),
 out(pyaccel.sum(x)), out(pyaccel.max(x))]
""")
    with np.errstate(over="ignore"):
        want = [x + y, x * y, x - y, x // y, x % y, x < y, x ^ y, np.sum(x, dtype=dtype), np.max(x)]
    for name, g, w in zip(("add", "mul", "sub", "floordiv", "mod", "less", "xor", "sum", "max"),
                          got, want, strict=True):
        np.testing.assert_array_equal(back(g), np.asarray(w), err_msg=f"{dtype} {name}")


def test_float64_arithmetic_bit_exact(run_py, rng):
    edge = np.array([0.0, -0.0, 5e-324, -2.2250738585072014e-308, 1.7976931348623157e308,
                     np.inf, -np.inf, 1.0, 0.1, 1e300, -1e-300, 3.0])
    x = np.concatenate([edge, rng.standard_normal(150) * 10.0 ** rng.integers(-30, 30, 150)])
    y = np.concatenate([edge[::-1], rng.standard_normal(150) * 10.0 ** rng.integers(-30, 30, 150)])
    a = np.abs(x)
    got = run_py(PRELUDE + f"""
x, y, a = f64({hexes(x)}), f64({hexes(y)}), f64({hexes(a)})
[out(x + y), out(x * y), out(x - y), out(x / y), out(pyaccel.sqrt(a)), out(x <= y),
 out(pyaccel.astype(x, pyaccel.float32))]
""")
    with np.errstate(all="ignore"):
        want = [x + y, x * y, x - y, x / y, np.sqrt(a), x <= y, x.astype(np.float32)]
    for name, g, w in zip(("add", "mul", "sub", "div", "sqrt", "less_equal", "to_float32"), got, want,
                          strict=True):
        g = back(g)
        assert g.dtype == w.dtype, name
        # bit for bit, every NaN counted equal to every NaN
        same = (g.view(f"u{g.itemsize}") == w.view(f"u{w.itemsize}")) | (np.isnan(g) & np.isnan(w)) \
            if g.dtype.kind == "f" else g == w
        assert same.all(), f"{name}: {np.count_nonzero(~same)} of {g.size} differ, e.g. " \
                           f"{x[~same][:3]}, {y[~same][:3]} -> {g[~same][:3]} vs {w[~same][:3]}"


def test_float64_transcendental_and_sum(run_py, rng):
    x = rng.uniform(-30, 30, 300)
    got = run_py(PRELUDE + f"""
x = f64({hexes(x)})
[out(pyaccel.exp(x)), out(pyaccel.sin(x)), out(pyaccel.sum(x))]
""")
    for name, g, w in zip(("exp", "sin"), got[:2], (np.exp(x), np.sin(x)), strict=False):
        g = back(g)
        ulp = np.abs(g - w) / np.spacing(np.abs(w))
        assert np.max(ulp) <= 2.0, f"{name}: {np.max(ulp)} ulp"
    np.testing.assert_allclose(back(got[2]), np.sum(x), rtol=1e-13)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_ops(run_py, rng, dtype):
    x = (rng.standard_normal(100) + 1j * rng.standard_normal(100)).astype(dtype)
    y = (rng.standard_normal(100) + 1j * rng.standard_normal(100)).astype(dtype)
    got = run_py(PRELUDE + f"""
def c(pairs):
    return pyaccel.asarray([complex(a, b) for a, b in pairs], dtype=pyaccel.{dtype}, device=dev)
x = c({[(v.real.item(), v.imag.item()) for v in x]})
y = c({[(v.real.item(), v.imag.item()) for v in y]})
[out(x + y), out(x * y), out(x / y), out(pyaccel.abs(x)), out(pyaccel.conj(x)), out(x == y),
 out(pyaccel.sum(x))]
""")
    rtol = 1e-5 if dtype == "complex64" else 1e-13
    want = [x + y, x * y, x / y, np.abs(x), np.conj(x), x == y, np.sum(x)]
    for name, g, w in zip(("add", "mul", "div", "abs", "conj", "equal", "sum"), got, want, strict=True):
        g = back(g)
        assert g.dtype == np.asarray(w).dtype, f"{name}: {g.dtype} vs {np.asarray(w).dtype}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * 10, err_msg=name)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_matmul_and_cumulative_sum(run_py, rng, dtype):
    """complex matmul (2-D, batched with broadcasting, 1-D either side, K = 70,000 past the
    65,535 loop cap for complex64) and cumulative_sum (axes, include_initial, an empty axis) in
    the page without NumPy: real kernels on the parts, never the host path (which needs NumPy)."""
    a = (rng.standard_normal((2, 3, 4)) + 1j * rng.standard_normal((2, 3, 4))).astype(dtype)
    b = (rng.standard_normal((4, 5)) + 1j * rng.standard_normal((4, 5))).astype(dtype)
    v = (rng.standard_normal(4) + 1j * rng.standard_normal(4)).astype(dtype)
    x = (rng.standard_normal((6, 7)) + 1j * rng.standard_normal((6, 7))).astype(dtype)
    long_k = 70000 if dtype == "complex64" else 0
    got = run_py(PRELUDE + f"""
import random
from pyaccel.ops import host_path
def c(pairs, shape):
    flat = pyaccel.asarray([complex(p, q) for p, q in pairs], dtype=pyaccel.{dtype}, device=dev)
    return pyaccel.reshape(flat, shape)
def pairs_of(n, seed):
    r = random.Random(seed)
    return [(r.uniform(-1, 1), r.uniform(-1, 1)) for _ in range(n)]
a = c({[(z.real.item(), z.imag.item()) for z in a.ravel()]}, (2, 3, 4))
b = c({[(z.real.item(), z.imag.item()) for z in b.ravel()]}, (4, 5))
v = c({[(z.real.item(), z.imag.item()) for z in v.ravel()]}, (4,))
x = c({[(z.real.item(), z.imag.item()) for z in x.ravel()]}, (6, 7))
before = sum(host_path.HOST_CALLS.values())
res = [out(a @ b), out(v @ b), out(a @ v), out(pyaccel.tensordot(a, b, axes=1)),
       out(pyaccel.cumulative_sum(x, axis=0)), out(pyaccel.cumulative_sum(x, axis=1, include_initial=True)),
       out(pyaccel.cumulative_sum(pyaccel.reshape(x, (42,)))),
       out(pyaccel.cumulative_sum(pyaccel.zeros((3, 0), dtype=pyaccel.{dtype}, device=dev), axis=1,
                                  include_initial=True))]
if {long_k}:
    p = c(pairs_of(2 * {long_k}, 1), (2, {long_k}))
    q = c(pairs_of(2 * {long_k}, 2), ({long_k}, 2))
    res.append(out(p @ q))
res.append(sum(host_path.HOST_CALLS.values()) - before)
res
""", timeout=180)
    want = [a @ b, v @ b, a @ v, np.tensordot(a, b, axes=1), np.cumulative_sum(x, axis=0),
            np.cumulative_sum(x, axis=1, include_initial=True), np.cumulative_sum(x.ravel()),
            np.zeros((3, 1), dtype)]
    names = ["matmul", "1-D @ 2-D", "batched @ 1-D", "tensordot", "cumsum axis 0", "cumsum include_initial",
             "cumsum 1-D", "cumsum empty axis"]
    if long_k:
        import random

        def pairs_of(n, seed):
            r = random.Random(seed)
            return np.array([complex(r.uniform(-1, 1), r.uniform(-1, 1)) for _ in range(n)]).astype(dtype)

        p = pairs_of(2 * long_k, 1).reshape(2, long_k)
        q = pairs_of(2 * long_k, 2).reshape(long_k, 2)
        want.append(p.astype(np.complex128) @ q.astype(np.complex128))
        names.append("K=70000")
    assert got[-1] == 0, "the host path was taken in the page"
    rtol = 1e-5 if dtype == "complex64" else 1e-12
    for name, g, w in zip(names, got[:-1], want, strict=True):
        g, w = back(g), np.asarray(w)
        assert g.dtype.name == dtype and g.shape == w.shape, f"{name}: {g.dtype} {g.shape} vs {w.shape}"
        scale = max(np.max(np.abs(w.real)), np.max(np.abs(w.imag)), 1.0)
        for part in ("real", "imag"):
            np.testing.assert_allclose(getattr(g, part), getattr(w, part), rtol=rtol, atol=rtol * scale,
                                       err_msg=f"{name} ({part})")
