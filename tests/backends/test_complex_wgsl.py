"""The complex64 WGSL library (pyaccel/ops/ew_c64.wgsl), standalone through pyaccel.Kernel.

Every op function of the library runs in one kernel (a ``switch`` over the op) on each GPU
device, on complex64 data passed as float32 arrays of 2n floats (real, imag). Checks:

* random data against NumPy complex128 on the same (float32) inputs, rounded to complex64,
  with float32 tolerances relative to the result's modulus (per component);
* special values (every pair of 0, -0, +-1, +-inf, NaN, ... as real and imaginary parts)
  against the cpu device, which is NumPy with the Array API's special cases (the
  array-api-tests special-case suite passes there): NaN, infinities and zeros must agree
  exactly, sign included, except where the Array API leaves a sign unspecified;
* conversions from i32 / u32 (rounded to nearest even) and from 64-bit ints, exactly.

Outputs are poisoned first (a NaN with a payload), so an unwritten element shows.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

import pyaccel

OPS_DIR = Path(pyaccel.__file__).parent / "ops"
POISON = np.frombuffer(np.uint32(0x7FC0DEAD).tobytes(), np.float32)[0]

# op name -> (kind, WGSL call): kind "c" complex result, "r" real result, "b" bool result
UNARY = ["negative", "positive", "square", "sqrt", "exp", "expm1", "log", "log1p", "log2", "log10",
         "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh",
         "atanh", "conj", "sign", "round", "reciprocal"]
BINARY = ["add", "subtract", "multiply", "divide", "pow"]
REAL = ["abs", "real", "imag"]
PRED1 = ["isnan", "isinf", "isfinite"]
PRED2 = ["equal", "not_equal"]
ALL = UNARY + BINARY + REAL + PRED1 + PRED2
OP_ID = {name: k for k, name in enumerate(ALL)}
# The kernel with every op takes ~20 s to compile on lavapipe / llvmpipe, so a CI run
# (CI=true) compiles and checks this subset (the hard cases: Smith's division, csqrt, the
# log1p/expm1 paths, large-angle reduction in sin, Kahan's inverse functions, pow's integer
# path); the other ops run in the full (slow) sweep of a developer run.
CORE = ["add", "multiply", "divide", "sqrt", "exp", "expm1", "log1p", "sin", "tanh", "asinh", "acos",
        "atanh", "pow", "abs", "sign", "isnan", "equal"]
FULL = os.environ.get("CI", "").lower() not in ("1", "true", "yes")


def _ops(names: list[str]) -> list:
    """Parameters: CORE ops plain, the rest marked slow (and left to the full sweep under CI)."""
    slow = [pytest.mark.slow, pytest.mark.skipif(not FULL, reason="full c64 sweep (20 s kernel "
                                                 "compile per device): run without CI=true")]
    return [n if n in CORE else pytest.param(n, marks=slow) for n in names]


def _call(name: str) -> str:
    if name in UNARY:
        return f"r = c64_{name}(x);"
    if name in BINARY:
        return f"r = c64_{name}(x, y);"
    if name in REAL:
        return f"r = vec2<f32>(c64_{name}(x), 0.0);"
    if name in PRED1:
        return f"r = vec2<f32>(select(0.0, 1.0, c64_{name}(x)), 0.0);"
    return f"r = vec2<f32>(select(0.0, 1.0, c64_{name}(x, y)), 0.0);"


def library(name: str = "ew_c64") -> str:
    """The library with what it requires (``// requires: ...``), transitively.

    Before the float64 library exists on this branch, functions calling ``f64_`` helpers
    are left out (the conversions from/to float64), and ``HAVE_F64`` says so."""
    src = (OPS_DIR / f"{name}.wgsl").read_text()
    m = re.match(r"\s*// requires:\s*([\w, ]+)", src)
    deps = [d.strip() for d in m.group(1).split(",")] if m else []
    parts = []
    for d in deps:
        if (OPS_DIR / f"{d}.wgsl").exists():
            parts.append(library(d))
        else:
            src = _drop_functions_calling(src, d.removeprefix("ew_") + "_")
    return "\n".join(parts + [src])


def _drop_functions_calling(src: str, prefix: str) -> str:
    out = []
    for block in re.split(r"\n(?=fn )", src):
        if block.startswith("fn ") and re.search(rf"\b{prefix}\w+\s*\(", block):
            continue
        out.append(block)
    return "\n".join(out)


HAVE_F64 = (OPS_DIR / "ew_f64.wgsl").exists()

KERNEL = """
struct P { n: u32, op: u32 }
@group(0) @binding(0) var<storage, read> xa: array<f32>;
@group(0) @binding(1) var<storage, read> ya: array<f32>;
@group(0) @binding(2) var<storage, read_write> o: array<f32>;
@group(0) @binding(3) var<uniform> p: P;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i >= p.n) { return; }
    let x = vec2<f32>(xa[2u * i], xa[2u * i + 1u]);
    let y = vec2<f32>(ya[2u * i], ya[2u * i + 1u]);
    var r = vec2<f32>(0.0, 0.0);
    switch p.op {
CASES
        default: {}
    }
    o[2u * i] = r.x;
    o[2u * i + 1u] = r.y;
}
"""

CONV = """
@group(0) @binding(0) var<storage, read> si: array<i32>;
@group(0) @binding(1) var<storage, read> su: array<u32>;
@group(0) @binding(2) var<storage, read> w64: array<u32>;
@group(0) @binding(3) var<storage, read_write> o: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i >= arrayLength(&si)) { return; }
    let w = vec2<u32>(w64[2u * i], w64[2u * i + 1u]);
    o[4u * i] = c64_from_i32(si[i]).x;
    o[4u * i + 1u] = c64_from_u32(su[i]).x;
    o[4u * i + 2u] = c64_from_i64(w).x;
    o[4u * i + 3u] = c64_from_u64(w).x;
}
"""

_KERNELS: dict[str, pyaccel.Kernel] = {}


def _kernel(which: str) -> pyaccel.Kernel:
    if which not in _KERNELS:
        if which in ("ops", "core"):
            names = ALL if which == "ops" else CORE
            cases = "\n".join(f"        case {OP_ID[n]}u: {{ {_call(n)} }}" for n in names)
            body = KERNEL.replace("CASES", cases)
        else:
            body = CONV
        _KERNELS[which] = pyaccel.Kernel(library() + body, name=f"c64_{which}_test")
    return _KERNELS[which]


def run_op(device, name: str, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
    """c64_<name> on complex64 ``x`` (and ``y``) on ``device``: complex64 (or float32 / bool)."""
    x = np.ascontiguousarray(x, np.complex64).reshape(-1)
    y = x if y is None else np.ascontiguousarray(y, np.complex64).reshape(-1)
    n = x.size
    out = np.full(2 * n, POISON, np.float32)
    _kernel("ops" if FULL or name not in CORE else "core")(x.view(np.float32), y.view(np.float32), out, {"n": n, "op": OP_ID[name]},
                   grid=n, device=device)
    res = out.view(np.complex64)
    if name in REAL:
        assert np.all(res.imag == 0), f"{name}: unwritten or wrong imaginary slot"
        return res.real.copy()
    if name in PRED1 + PRED2:
        assert np.all(np.isin(res.real, (0.0, 1.0))) and np.all(res.imag == 0), name
        return res.real == 1.0
    return res


def oracle(name: str, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
    """NumPy complex128 on the complex64 inputs, rounded to complex64 (float32 / bool)."""
    xd = x.astype(np.complex128)
    yd = None if y is None else y.astype(np.complex128)
    fn = {"reciprocal": lambda v: 1 / v, "conj": np.conj}.get(name) or getattr(np, name)
    with np.errstate(all="ignore"):
        r = fn(xd) if name not in BINARY + PRED2 else fn(xd, yd)
        if name == "expm1":  # NumPy's complex expm1 cancels near 0: exp(z) - 1 via exact parts
            r = np.where(np.abs(xd) < 1e-3, xd + xd * xd / 2 + xd ** 3 / 6, np.exp(xd) - 1)
        if name == "log1p":
            r = np.where(np.abs(xd) < 1e-3, xd - xd * xd / 2 + xd ** 3 / 3, np.log1p(xd))
    r = np.asarray(r)
    with np.errstate(over="ignore"):  # (past float32's range: inf, as the kernels give)
        if r.dtype == np.complex128:
            return r.astype(np.complex64)
        if r.dtype == np.float64:
            return r.astype(np.float32)
    return r


# accuracy per op (relative to |result|; float32 eps is 6e-8)
RTOL = {"add": 2e-7, "subtract": 2e-7, "multiply": 4e-7, "square": 4e-7, "divide": 1e-6,
        "reciprocal": 1e-6, "abs": 3e-7, "sqrt": 1e-6, "sign": 5e-7, "pow": 2e-4}
RTOL_DEFAULT = 2e-5  # exp/log/trig/hyperbolic and their inverses


def assert_close(got: np.ndarray, want: np.ndarray, name: str, x: np.ndarray, rtol: float) -> None:
    g = np.asarray(got, np.complex128).reshape(-1)
    w = np.asarray(want, np.complex128).reshape(-1)
    scale = np.maximum(np.abs(w), np.finfo(np.float32).tiny)
    with np.errstate(all="ignore"):
        dr = np.where(g.real == w.real, 0.0, np.abs(g.real - w.real))  # (equal infinities: 0)
        di = np.where(g.imag == w.imag, 0.0, np.abs(g.imag - w.imag))
        err = np.maximum(dr, di) / scale
    ok = err <= rtol
    bad = np.flatnonzero(~ok)
    assert not bad.size, (f"c64_{name}: {bad.size}/{g.size} beyond rtol {rtol}; worst at "
                          f"x={x.reshape(-1)[bad[np.argmax(err[bad])]]}: got "
                          f"{g[bad[np.argmax(err[bad])]]} want {w[bad[np.argmax(err[bad])]]} "
                          f"(rel err {err[bad].max():.3g})")


def _random(rng: np.random.Generator, n: int, name: str) -> np.ndarray:
    """Random complex64 values: moduli from 1e-6 to 1e6 (log-uniform) and around the unit
    circle, every direction; small moduli for the exp family."""
    mag = 10.0 ** rng.uniform(-6, 6, n)
    mag[: n // 4] = rng.uniform(0.2, 3.0, n // 4)
    if name in ("exp", "expm1", "sinh", "cosh", "tanh", "sin", "cos", "tan", "pow"):
        mag = 10.0 ** rng.uniform(-6, 1.5, n)
    ang = rng.uniform(-np.pi, np.pi, n)
    return (mag * np.exp(1j * ang)).astype(np.complex64)


@pytest.mark.parametrize("name", _ops(UNARY + BINARY + REAL))
def test_c64_random_matches_numpy(gpu_device, rng, name):
    n = 4096
    x = _random(rng, n, name)
    y = None
    if name in BINARY:
        y = _random(rng, n, "pow" if name == "pow" else "")
        if name == "pow":
            y = (y / 4).astype(np.complex64)
            y[: n // 8] = rng.integers(-8, 9, n // 8)  # NumPy's integer-power path
            x = np.where(np.abs(x) > 30, x / 100, x).astype(np.complex64)
    got = run_op(gpu_device, name, x, y)
    want = oracle(name, x, y)
    if name == "pow":  # results past float32's range: overflow, compared in the special tests
        keep = (np.abs(want) < 1e30) & (np.abs(want) > 1e-30)
        assert keep.mean() > 0.9
        got, want, x = got[keep], want[keep], x[keep]
    if name == "round":
        np.testing.assert_array_equal(got, want)
        return
    assert_close(got, want, name, x, RTOL.get(name, RTOL_DEFAULT))


SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 1e30, -1e-30, np.pi / 2, np.inf, -np.inf,
                     np.nan], np.float32)
SPECIAL_Z = SPECIALS[:, None].astype(np.complex64).repeat(len(SPECIALS), 1).reshape(-1)
SPECIAL_Z.imag = np.tile(SPECIALS, len(SPECIALS))

# (op) -> which parts' signs the Array API leaves unspecified on non-finite input; those are
# compared without sign (values, NaN-ness and infinity still exact)
UNSIGNED = {"sinh": "re", "cosh": "im", "tanh": "im", "sin": "im", "cos": "im", "tan": "re",
            "exp": "reim", "expm1": "reim", "sqrt": "im", "acosh": "im", "asinh": "re",
            "atanh": "re", "acos": "im", "asin": "im", "atan": "im", "log": "", "log1p": "",
            "log2": "", "log10": "", "sign": "reim", "divide": "reim", "pow": "reim",
            "multiply": "reim", "reciprocal": "reim", "square": "reim"}


def _finite_abs(v: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(v), np.abs(v), 0).astype(np.float64)


def _classify(v: np.ndarray, signed: np.ndarray | bool) -> np.ndarray:
    """Per value: 0 finite nonzero, 1 +-0, 2 +-inf, 3 NaN; -1 / -2 for -0 / -inf where
    ``signed`` (and -10 for a negative finite value)."""
    cls = np.select([np.isnan(v), np.isinf(v), v == 0], [3, 2, 1], 0)
    neg = np.signbit(v) & (cls != 3) & signed
    return np.where(neg, np.where(cls == 0, -10, -cls), cls)


# ops whose zero signs on finite input depend on how NumPy's loop was compiled (FMA, constant
# folding of x + 0): NumPy's complex divide / reciprocal / square give -0 where the exact
# product is +0 or -0 alike; their finite results are compared with a tolerance instead
ZERO_SIGN_FREE = {"reciprocal", "square", "sign"}


@pytest.mark.parametrize("name", _ops(UNARY + REAL + PRED1))
def test_c64_special_values_match_cpu(gpu_device, name):
    """NaN, +-inf and signed zeros as the cpu device gives them (NumPy with the Array API's
    special cases), on every pair of special real / imaginary parts."""
    x = SPECIAL_Z
    got = run_op(gpu_device, name, x)
    cpu = pyaccel.device("cpu")
    fn = (lambda a: 1 / a) if name == "reciprocal" else getattr(pyaccel, name)
    want = np.asarray(fn(pyaccel.asarray(x, device=cpu)).to_numpy())
    if name == "square":
        # NumPy's complex square rounds with an FMA where its SIMD loop has one (inf - inf gives
        # -inf, not NaN): the reference is the plain formula in float32 (NumPy's scalar loop)
        with np.errstate(all="ignore"):
            a, b = x.real, x.imag
            want = np.empty_like(x)
            want.real = a * a - b * b
            want.imag = a * b + b * a
    if want.dtype == np.bool_:
        np.testing.assert_array_equal(got, want, err_msg=name)
        return
    nonfinite = ~np.isfinite(x)
    for part in ("re", "im") if want.dtype.kind == "c" else ("re",):
        g = got.real if part == "re" else got.imag
        w = want.real if part == "re" else want.imag
        signed = part not in UNSIGNED.get(name, "")
        sign_kept = signed | (~nonfinite & (name not in ZERO_SIGN_FREE))
        cg = _classify(g, sign_kept)
        cw = _classify(w, sign_kept)
        bad = np.flatnonzero(cg != cw)
        assert not bad.size, (f"c64_{name} {part}: {bad.size} special-value mismatches, e.g. "
                              + "; ".join(f"{name}({x[j]}) = {got[j]} (cpu {want[j]})" for j in bad[:4]))
        fin = _classify(w, False) == 0
        scale = np.maximum(_finite_abs(want.real), _finite_abs(want.imag) if want.dtype.kind == "c"
                           else 0)[fin]
        rel = np.abs(g[fin].astype(np.float64) - w[fin]) / np.maximum(scale, 1e-30)
        tol = RTOL.get(name, RTOL_DEFAULT) * 10
        assert np.all(rel <= tol), (f"c64_{name} {part}: finite values off at "
                                    f"{x[fin][rel > tol][:4]}: got {got[fin][rel > tol][:4]}, cpu "
                                    f"{want[fin][rel > tol][:4]}")


@pytest.mark.parametrize("name", _ops(BINARY + PRED2))
def test_c64_binary_special_values(gpu_device, name):
    """Binary ops on special pairs: the same classes as NumPy's complex loops (cpu)."""
    z = SPECIAL_Z[::3]
    x = np.repeat(z, z.size)
    y = np.tile(z, z.size)
    got = run_op(gpu_device, name, x, y)
    cpu = pyaccel.device("cpu")
    want = getattr(pyaccel, name)(pyaccel.asarray(x, device=cpu), pyaccel.asarray(y, device=cpu)).to_numpy()
    if want.dtype == np.bool_:
        np.testing.assert_array_equal(got, want, err_msg=name)
        return
    if name in ("multiply", "pow"):
        # NumPy's complex multiply (and pow through it) depends on its SIMD path when a product
        # overflows (inf - inf: NaN, or -inf through an FMA) and rounds once with an FMA: compare
        # finite inputs whose exact (complex128) result is finite, with a tolerance
        exact = oracle(name, x, y)
        keep = (np.isfinite(x) & np.isfinite(y) & np.isfinite(exact) & np.isfinite(want)
                & (np.abs(exact.astype(np.complex128)) < 1e36)
                & (np.abs(y) < 100))  # (exp(y log x) of a huge y: the angle is ill-conditioned)
        assert keep.sum() > 100
        assert_close(got[keep], exact[keep], name, x[keep], RTOL[name])
        return
    for part in ("re", "im"):
        g = got.real if part == "re" else got.imag
        w = want.real if part == "re" else want.imag
        cg, cw = _classify(g, False), _classify(w, False)
        bad = np.flatnonzero(cg != cw)
        assert not bad.size, (f"c64_{name} {part}: {bad.size} mismatches, e.g. "
                              + "; ".join(f"{name}({x[j]}, {y[j]}) = {got[j]} (cpu {want[j]})"
                                          for j in bad[:4]))


def test_c64_conversions_round_to_nearest_even(gpu_device, rng):
    n = 2048
    si = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    su = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    w = rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
    # ties and near-ties of the 24-bit rounding, and small values
    si[:8] = [2**24 + 1, 2**24 + 3, -(2**24 + 1), 2**31 - 1, -2**31, 0, -1, 16777217 * 2 + 1]
    su[:4] = [2**32 - 1, 2**24 + 1, 2**25 + 2, 2**25 + 6]
    w[:6] = [2**63, 2**64 - 1, (2**24 + 1) << 39, ((2**24 + 1) << 39) + 1, 5, 0]
    out = np.full(4 * n, POISON, np.float32)
    _kernel("conv")(si, su, w.view(np.uint32), out, grid=n, device=gpu_device)
    out = out.reshape(n, 4)
    np.testing.assert_array_equal(out[:, 0], si.astype(np.complex64).real)
    np.testing.assert_array_equal(out[:, 1], su.astype(np.complex64).real)
    np.testing.assert_array_equal(out[:, 2], w.view(np.int64).astype(np.complex64).real)
    np.testing.assert_array_equal(out[:, 3], w.astype(np.complex64).real)


@pytest.mark.parametrize("lib", ["ew_c64", "ew_c128"])
def test_library_is_loop_bounded_and_prefixed(lib):
    prefix = lib.removeprefix("ew_") + "_"
    src = (OPS_DIR / f"{lib}.wgsl").read_text()
    assert src.startswith("// requires: ew_f64\n")
    for m in re.finditer(r"\bfor\s*\(([^)]*)\)", src):
        assert re.search(r"<\s*\d+u", m.group(1)), f"unbounded loop: {m.group(0)}"
    code = re.sub(r"//[^\n]*", "", src)
    assert not re.search(r"\bwhile\b|\bloop\s*\{", code)
    names = re.findall(r"^fn (\w+)", src, re.M)
    assert names and all(n.startswith(prefix) for n in names), [n for n in names if not n.startswith(prefix)]
    conv = ["from_f32", "from_i32", "from_u32", "from_i64", "from_u64", "from_f64", "to_f64", "to_f32",
            "to_i32", "to_u32", "to_i64", "to_u64"] + (["from_c64", "to_c64"] if lib == "ew_c128" else [])
    for op in ALL + conv:
        assert f"{prefix}{op}" in names, op
    # private variables and helpers are the library's own (several libraries share one shader)
    for var in re.findall(r"^var<private> (\w+)", src, re.M):
        assert var.startswith(prefix.upper()), var


@pytest.mark.skipif(not HAVE_F64, reason="ew_f64.wgsl (the softfloat branch) is not merged here yet")
def test_c64_float64_conversions(gpu_device, rng):
    """c64_to_f64 is exact and c64_from_f64 rounds to nearest even, as NumPy's casts."""
    d = np.concatenate([rng.standard_normal(500) * 10.0 ** rng.integers(-40, 40, 500),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e300, -1e-300, 3.4028235e38,
                         1 + 2.0 ** -24, 1 + 2.0 ** -24 + 2.0 ** -50]])
    f = rng.standard_normal(d.size).astype(np.float32)
    src = library() + """
@group(0) @binding(0) var<storage, read> dw: array<u32>;
@group(0) @binding(1) var<storage, read> fa: array<f32>;
@group(0) @binding(2) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i >= arrayLength(&fa)) { return; }
    let c = c64_from_f64(vec2<u32>(dw[2u * i], dw[2u * i + 1u]));
    o[4u * i] = bitcast<u32>(c.x);
    o[4u * i + 1u] = bitcast<u32>(c.y);
    let w = c64_to_f64(vec2<f32>(fa[i], 1.0));
    o[4u * i + 2u] = w.x;
    o[4u * i + 3u] = w.y;
}"""
    out = np.full(4 * d.size, 0xDEADBEEF, np.uint32)
    pyaccel.Kernel(src)(d.view(np.uint32), f, out, grid=d.size, device=gpu_device)
    out = out.reshape(-1, 4)
    with np.errstate(over="ignore"):
        want = d.astype(np.complex64)
    np.testing.assert_array_equal(out[:, :2].copy().view(np.complex64)[:, 0], want)
    np.testing.assert_array_equal(out[:, 2:].copy().view(np.float64)[:, 0], f.astype(np.float64))


# -- complex128 (pyaccel/ops/ew_c128.wgsl, over ew_f64's soft-float) ------------------------------
C128_UNARY = ["negative", "positive", "conj", "square", "sqrt", "sign", "round", "reciprocal"]
C128_BINARY = ["add", "subtract", "multiply", "divide"]
C128_REAL = ["abs", "real", "imag"]
C128_ALL = C128_UNARY + C128_BINARY + C128_REAL + PRED1 + PRED2
C128_ID = {name: k for k, name in enumerate(C128_ALL)}
# (every op inlines ew_f64's soft-float code: the full kernel takes ~1.5 min to compile on
# lavapipe, so a CI run checks this subset in a kernel of its own)
C128_CORE = ["add", "multiply", "conj", "real", "isnan", "equal"]


def _c128_ops(names: list[str]) -> list:
    slow = [pytest.mark.slow, pytest.mark.skipif(not FULL, reason="full c128 sweep (1.5 min kernel "
                                                 "compile per device): run without CI=true")]
    return [n if n in C128_CORE else pytest.param(n, marks=slow) for n in names]
needs_f64 = pytest.mark.skipif(not HAVE_F64, reason="ew_c128 runs on ew_f64.wgsl (the softfloat "
                                                    "branch), not merged here yet")

C128_KERNEL = """
struct P { n: u32, op: u32 }
@group(0) @binding(0) var<storage, read> xa: array<u32>;
@group(0) @binding(1) var<storage, read> ya: array<u32>;
@group(0) @binding(2) var<storage, read_write> o: array<u32>;
@group(0) @binding(3) var<uniform> p: P;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i >= p.n) { return; }
    let x = vec4<u32>(xa[4u * i], xa[4u * i + 1u], xa[4u * i + 2u], xa[4u * i + 3u]);
    let y = vec4<u32>(ya[4u * i], ya[4u * i + 1u], ya[4u * i + 2u], ya[4u * i + 3u]);
    let z = vec2<u32>(0u, 0u);
    let one = vec2<u32>(0u, 0x3ff00000u);
    var r = vec4<u32>(0u, 0u, 0u, 0u);
    switch p.op {
CASES
        default: {}
    }
    o[4u * i] = r.x;
    o[4u * i + 1u] = r.y;
    o[4u * i + 2u] = r.z;
    o[4u * i + 3u] = r.w;
}
"""


def _c128_call(name: str) -> str:
    if name in C128_UNARY:
        return f"r = c128_{name}(x);"
    if name in C128_BINARY:
        return f"r = c128_{name}(x, y);"
    if name in C128_REAL:
        return f"r = vec4<u32>(c128_{name}(x), z);"
    arg = "x" if name in PRED1 else "x, y"
    return f"r = vec4<u32>(select(z, one, c128_{name}({arg})), z);"


def run_c128(device, name: str, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
    which = "c128" if FULL or name not in C128_CORE else "c128_core"
    if which not in _KERNELS:
        names = C128_ALL if which == "c128" else C128_CORE
        cases = "\n".join(f"        case {C128_ID[n]}u: {{ {_c128_call(n)} }}" for n in names)
        _KERNELS[which] = pyaccel.Kernel(library("ew_c128") + C128_KERNEL.replace("CASES", cases),
                                         name=which + "_test")
    x = np.ascontiguousarray(x, np.complex128).reshape(-1)
    y = x if y is None else np.ascontiguousarray(y, np.complex128).reshape(-1)
    out = np.full(4 * x.size, 0x7FF8DEAD, np.uint32)  # NaN with a payload in every word pair
    _KERNELS[which](x.view(np.uint32), y.view(np.uint32), out, {"n": x.size, "op": C128_ID[name]},
                     grid=x.size, device=device)
    res = out.view(np.complex128)
    if name in C128_REAL:
        assert np.all(res.imag == 0), name
        return res.real.copy()
    if name in PRED1 + PRED2:
        assert np.all(np.isin(res.real, (0.0, 1.0))) and np.all(res.imag == 0), name
        return res.real == 1.0
    return res


C128_RTOL = {"sqrt": 4e-16, "abs": 4e-16, "sign": 4e-16, "divide": 6e-16, "reciprocal": 6e-16,
             "multiply": 3e-16, "square": 3e-16}


@needs_f64
@pytest.mark.parametrize("name", _c128_ops(C128_UNARY + C128_BINARY + C128_REAL))
def test_c128_random_matches_numpy(gpu_device, rng, name):
    n = 1024
    mag = 10.0 ** rng.uniform(-30, 30, n)
    x = mag * np.exp(1j * rng.uniform(-np.pi, np.pi, n))
    x[:8] = [1e-310 + 1e-310j, 1e300 - 1e300j, 3 + 4j, -0.0 + 2j, 1e-200j, 5e-324, -7.5 + 0.5j, 2.5]
    y = (10.0 ** rng.uniform(-30, 30, n)) * np.exp(1j * rng.uniform(-np.pi, np.pi, n))
    got = run_c128(gpu_device, name, x, y if name in C128_BINARY else None)
    fn = {"reciprocal": lambda v: 1 / v}.get(name) or getattr(np, name)
    want = fn(x, y) if name in C128_BINARY else fn(x)
    if name not in C128_RTOL:  # one correctly rounded operation per part, or none: bit-exact
        np.testing.assert_array_equal(got, want, err_msg=name)
        return
    # NumPy's own loops may round once more or less (FMA), and overflow differently inside a
    # product (inf - inf: NaN, or inf through an FMA): a few ulp of the modulus, where no
    # partial product overflows
    keep = np.ones(x.size, bool)
    if name in ("multiply", "square", "divide", "reciprocal"):
        other = y if name in C128_BINARY else x
        keep = (np.abs(x) * np.abs(other) < 1e300) & (np.abs(x) > 1e-300) & (np.abs(other) > 1e-300)
    got, want, x = got[keep], want[keep], x[keep]
    scale = np.maximum(np.abs(want), 1e-300)
    with np.errstate(invalid="ignore"):
        dr = np.where(got.real == want.real, 0, np.abs(got.real - want.real))
        di = np.where(np.imag(got) == np.imag(want), 0, np.abs(np.imag(got) - np.imag(want)))
    err = np.maximum(dr, di) / scale
    assert np.all(err <= C128_RTOL[name]), (name, x[np.argmax(err)], got[np.argmax(err)],
                                            want[np.argmax(err)], err.max())


@needs_f64
@pytest.mark.parametrize("name", _c128_ops(["sqrt", "sign", "abs", "isnan", "isinf", "isfinite",
                                             "conj", "negative", "round", "equal", "not_equal",
                                             "add", "divide"]))
def test_c128_special_values(gpu_device, name):
    z = SPECIAL_Z.astype(np.complex128)
    if name in ("equal", "not_equal", "add", "divide"):
        x, y = np.repeat(z[::3], z[::3].size), np.tile(z[::3], z[::3].size)
    else:
        x, y = z, None
    got = run_c128(gpu_device, name, x, y)
    cpu = pyaccel.device("cpu")
    args = [pyaccel.asarray(a, device=cpu) for a in ((x,) if y is None else (x, y))]
    want = getattr(pyaccel, name)(*args).to_numpy()
    if want.dtype == np.bool_:
        np.testing.assert_array_equal(got, want, err_msg=name)
        return
    for g, w in ((np.real(got), np.real(want)), (np.imag(got), np.imag(want))):
        signed = name not in ("divide", "sign")  # (zero signs of NumPy's loops: see c64)
        cg, cw = _classify(g, signed), _classify(w, signed)
        bad = np.flatnonzero(cg != cw)
        assert not bad.size, (f"c128_{name}: mismatches, e.g. "
                              + "; ".join(f"{x[j]}, {None if y is None else y[j]} -> {got[j]} "
                                          f"(cpu {want[j]})" for j in bad[:4]))


# complex128 transcendental functions: each kernel inlines ew_f64's soft-float exp / log / sin
# ... and takes 10-50 s to compile on lavapipe, so they run one op per kernel, only when asked
# for (PYACCEL_SLOW_WGSL=1); measured on vulkan:0: <= 6e-16 relative to |result| against NumPy
# (pow 3.5e-15) on 512 random values per op.
C128_TRANS = ["exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "sinh", "cosh",
              "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "pow"]
SLOW_WGSL = os.environ.get("PYACCEL_SLOW_WGSL", "") == "1"


@needs_f64
@pytest.mark.slow
@pytest.mark.skipif(not SLOW_WGSL, reason="c128 transcendental kernels take 10-50 s each to compile "
                                          "on software GPUs: set PYACCEL_SLOW_WGSL=1")
@pytest.mark.parametrize("name", C128_TRANS)
def test_c128_transcendental_matches_numpy(gpu_device, rng, name):
    n = 512
    x = (10.0 ** rng.uniform(-3, 1.3, n)) * np.exp(1j * rng.uniform(-np.pi, np.pi, n))
    y = (10.0 ** rng.uniform(-2, 0.5, n)) * np.exp(1j * rng.uniform(-np.pi, np.pi, n))
    x[:4] = [complex(np.inf, 1.0), complex(-np.inf, np.inf), complex(np.nan, 0.0), -0.0 + 0j]
    big = np.array([1e7 + 0.5j, -1e22 + 0.25j, 1e300 - 1e-3j, 2.0**1023 - 2j])  # Payne-Hanek
    if name in ("sin", "cos", "tan"):
        x[4:8] = big
    elif name in ("exp", "sinh", "cosh"):
        x[4:8] = 1j * big.real + big.imag
    call = f"r = c128_{name}(x, y);" if name == "pow" else f"r = c128_{name}(x);"
    k = pyaccel.Kernel(library("ew_c128") + C128_KERNEL.replace("CASES", f"        case 0u: {{ {call} }}"))
    out = np.full(4 * n, 0x7FF8DEAD, np.uint32)
    k(x.view(np.uint32), y.view(np.uint32), out, {"n": n, "op": 0}, grid=n, device=gpu_device)
    got = out.view(np.complex128)
    cpu = pyaccel.device("cpu")
    args = [pyaccel.asarray(a, device=cpu) for a in ((x, y) if name == "pow" else (x,))]
    want = getattr(pyaccel, name)(*args).to_numpy()  # NumPy with the Array API special cases
    fin = np.isfinite(want) & np.isfinite(x)
    if name == "pow":
        fin &= np.isfinite(y)
    err = np.abs(got[fin] - want[fin]) / np.maximum(np.abs(want[fin]), 1e-300)
    assert err.max() <= (1e-14 if name == "pow" else 2e-15), (name, err.max(), x[fin][np.argmax(err)])
    for part in (np.real, np.imag):  # special values: the same classes
        signed = name not in ("exp", "expm1", "sinh", "cosh", "tanh", "sin", "cos", "tan", "pow")
        assert np.array_equal(_classify(part(got[~fin]), signed), _classify(part(want[~fin]), signed)), \
            (name, x[~fin], got[~fin], want[~fin])
