"""int64 / uint64 elementwise ops on WebGPU devices (ew_i64.wgsl / ew_u64.wgsl) bit for bit
against NumPy: random 64-bit values plus every pair of edge values (0, +-1, INT64_MIN/MAX,
UINT64_MAX, 2**32 +- 1, 2**31, 2**53 + 1), and the casts to and from every dtype."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _array_util import poisoned  # noqa: F401  (fixture)

import pyaccel as xp
from pyaccel.dtypes import WIDE_CAPABILITIES

EDGE = [0, 1, -1, 2**63 - 1, -(2**63), 2**64 - 1, 2**32 - 1, 2**32, 2**32 + 1, 2**31, -(2**31),
        2**53 + 1, 7, -7, 3, -3, 2**62, 64, 63]
BINARY = ["add", "subtract", "multiply", "floor_divide", "remainder", "maximum", "minimum",
          "bitwise_and", "bitwise_or", "bitwise_xor", "equal", "not_equal", "less", "less_equal",
          "greater", "greater_equal", "logical_and", "logical_or", "logical_xor"]
UNARY = {"negative": "negative", "abs": "abs", "sign": "sign", "square": "square",
         "bitwise_invert": "invert", "positive": "positive", "logical_not": "logical_not",
         "floor": "floor", "ceil": "ceil", "trunc": "trunc", "round": "round",
         "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite"}
TARGETS = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
           "float64"]


@pytest.fixture
def wide(gpu_device, monkeypatch):
    monkeypatch.setattr(gpu_device.impl, "capabilities", gpu_device.impl.capabilities | WIDE_CAPABILITIES)
    return gpu_device


def _wrap(vals, name):
    return np.array([v & (2**64 - 1) for v in vals], dtype=np.uint64).astype(name)


def operands(rng, name):
    """(x, y): every ordered pair of edge values, then random 64-bit values against random,
    small and edge values."""
    e = _wrap(EDGE, name)
    r = rng.integers(0, 2**64, size=256, dtype=np.uint64).astype(name)
    small = rng.integers(-1000, 1000, size=256).astype(name)
    x = np.concatenate([np.repeat(e, len(e)), r, small, r, np.resize(e, 256)])
    y = np.concatenate([np.tile(e, len(e)), r[::-1], small[::-1], small, r])
    return x, y


def _np(op):
    return {"bitwise_invert": np.invert}.get(op) or getattr(np, op)


def same(got, want, what):
    got_np = got.to_numpy()
    assert got_np.dtype == want.dtype, f"{what}: dtype {got_np.dtype} != {want.dtype}"
    bad = np.nonzero(got_np != want)[0] if got_np.ndim else ([] if got_np == want else [0])
    assert len(bad) == 0, f"{what}: {len(bad)} differ, first at {bad[:3]}: got {got_np[bad[:3]]}, want {want[bad[:3]]}"


@pytest.mark.parametrize("name", ["int64", "uint64"])
def test_binary_ops(wide, rng, name, poisoned):  # noqa: F811
    x, y = operands(rng, name)
    X, Y = xp.asarray(x, device=wide), xp.asarray(y, device=wide)
    for op in BINARY:
        with np.errstate(all="ignore"):
            want = _np(op)(x, y)
        same(getattr(xp, op)(X, Y), want, f"{op}({name})")


@pytest.mark.parametrize("name", ["int64", "uint64"])
def test_unary_ops(wide, rng, name, poisoned):  # noqa: F811
    x, _ = operands(rng, name)
    X = xp.asarray(x, device=wide)
    for op, nop in UNARY.items():
        with np.errstate(all="ignore"):
            want = getattr(np, nop)(x)
        same(getattr(xp, op)(X), want, f"{op}({name})")


@pytest.mark.parametrize("name", ["int64", "uint64"])
def test_shifts_pow_clip(wide, rng, name, poisoned):  # noqa: F811
    x, _ = operands(rng, name)
    s = np.resize(np.array([0, 1, 31, 32, 33, 63, 64, 65, 100] + ([-1] if name == "int64" else []),
                           dtype=name), x.shape[0])
    X, S = xp.asarray(x, device=wide), xp.asarray(s, device=wide)
    same(xp.bitwise_left_shift(X, S), np.left_shift(x, s), "left_shift")
    same(xp.bitwise_right_shift(X, S), np.right_shift(x, s), "right_shift")
    p = rng.integers(0, 70, size=x.shape[0]).astype(name)
    same(xp.pow(X, xp.asarray(p, device=wide)), np.power(x, p), "pow")
    lo, hi = _wrap([-(2**40)], name)[0], _wrap([2**50 + 3], name)[0]
    if lo > hi:
        lo, hi = hi, lo
    same(xp.clip(X, int(lo), int(hi)), np.clip(x, lo, hi), "clip scalars")
    same(xp.clip(X, X[::-1], None), np.maximum(x, x[::-1]), "clip array lower bound")


@pytest.mark.parametrize("name", ["int64", "uint64"])
def test_scalars_exact(wide, rng, name):
    """64-bit Python scalars reach the kernel whole (two words), not through 32 bits."""
    x, _ = operands(rng, name)
    X = xp.asarray(x, device=wide)
    for v in ([2**40 + 5, -(2**63), 2**63 - 1, -3] if name == "int64" else [2**40 + 5, 2**64 - 1, 2**63]):
        sv = np.array(v, dtype=name)
        same(X + v, x + sv, f"x + {v}")
        same(v * X, sv * x, f"{v} * x")
        same(X < v, x < sv, f"x < {v}")
        same(xp.where(X > v, X, v), np.where(x > sv, x, sv), f"where(..., {v})")


@pytest.mark.parametrize("name", ["int64", "uint64"])
def test_casts(wide, rng, name):
    """astype from int64/uint64 to every dtype and back (NumPy's cast semantics)."""
    x, _ = operands(rng, name)
    X = xp.asarray(x, device=wide)
    for t in TARGETS:
        if not xp.isdtype(getattr(xp, t), "bool") and getattr(xp, t) not in xp.__array_namespace_info__().dtypes(
                device=wide).values():
            continue
        same(X.astype(getattr(xp, t)), x.astype(t), f"{name} -> {t}")
    floats = np.array([0.0, -0.0, 1.5, -1.5, 2.0**31, -(2.0**31), 2.0**32, 2.0**53 + 2, 2.0**63, -(2.0**63),
                       2.0**64, 3e19, -3e19, 1e30, np.inf, -np.inf, np.nan, 4294967295.5, -7.9])
    for t in ["float32", "float64", "int32", "uint32", "int8", "uint16", "bool"]:
        if t.startswith("float"):
            src = np.concatenate([floats, rng.normal(0, 2.0**40, 200)]).astype(t)
        elif t == "bool":
            src = rng.random(100) < 0.5
        else:
            info = np.iinfo(t)
            src = np.concatenate([rng.integers(info.min, info.max, 200, endpoint=True),
                                  [info.min, info.max, 0, 1]]).astype(t)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            want = src.astype(name)
        same(xp.asarray(src, device=wide).astype(getattr(xp, name)), want, f"{t} -> {name}")


def test_mixed_promotion(wide, rng):
    """int64 with narrower operands converts them exactly (i64_from_i32, ...)."""
    a = rng.integers(-(2**62), 2**62, size=300)
    b = rng.integers(-(2**31), 2**31, size=300).astype(np.int32)
    c = rng.integers(0, 2**32, size=300).astype(np.uint32)
    A, B, C = (xp.asarray(v, device=wide) for v in (a, b, c))
    same(A + B, a + b, "int64 + int32")
    same(A * C, a * c, "int64 * uint32")
    same(C - A, c - a, "uint32 - int64")
    u = rng.integers(0, 2**64, size=300, dtype=np.uint64)
    same(xp.asarray(u, device=wide) // C, u // np.where(c == 0, 1, c) * (c != 0), "uint64 // uint32")
