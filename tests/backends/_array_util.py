"""Shared helpers for the tests/backends/test_array_*.py files (not a test module)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st

from pyaccel.array import Array
from pyaccel.ops.table import TOLERANCES
from pyaccel.promotion import device_dtypes
from pyaccel.testing import assert_allclose_dtype, poison

# examples per hypothesis test: a tenth of the profile's (dev 50 -> 5, ci 15 -> 2)
FEW = max(2, settings.default.max_examples // 10)

SPECIAL_F = [math.nan, math.inf, -math.inf, 0.0, -0.0, -1.0, 1.0, 0.5, -2.5, 1.5]


@pytest.fixture
def poisoned(monkeypatch):
    """Every new array's buffer is filled with garbage first, so unwritten elements show."""
    orig = Array._empty.__func__

    def empty(cls, device, shape, dtype):
        a = orig(cls, device, shape, dtype)
        if a._buf.nbytes:
            poison(a)
        return a

    orig_output = Array._output.__func__

    def output(cls, device, shape, dtype, nbytes=-1):  # op results (elementwise fast path)
        a = orig_output(cls, device, shape, dtype, nbytes)
        if a._buf.nbytes:
            poison(a)
        return a

    monkeypatch.setattr(Array, "_empty", classmethod(empty))
    monkeypatch.setattr(Array, "_output", classmethod(output))
    yield


@pytest.fixture
def poisoned_malloc(monkeypatch):
    """Every buffer a kernel launcher allocates (``Device.malloc``: reductions, scans, sorts,
    matmul) is filled with garbage first."""
    import struct

    from pyaccel.device import Device

    orig = Device.malloc

    def malloc(self, nbytes, *a, **k):
        buf = orig(self, nbytes, *a, **k)
        if nbytes >= 4:
            buf.write(struct.pack("<I", 0x7FC0DEAD) * (nbytes // 4) + b"\0" * (nbytes % 4))
        return buf
    monkeypatch.setattr(Device, "malloc", malloc)
    yield


def floor_divide_ref(x, y):
    """NumPy's floor_divide with the Array API's special cases where exactly one operand is
    infinite (floor(x / y): inf // 5 is inf, 5 // -inf is -0; NumPy gives nan and -1, which the
    spec also allows): what pyaccel computes on every device (the 2024.12 suite checks them)."""
    with np.errstate(all="ignore"):
        r = np.floor_divide(x, y)  # (x, y as given: Python scalars stay weak)
        if np.asarray(r).dtype.kind == "f":
            xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
            one_inf = (np.isinf(xa) != np.isinf(ya)) & ~np.isnan(xa) & ~np.isnan(ya)
            r = np.where(one_inf, np.true_divide(x, y), r).astype(np.asarray(r).dtype)
    return r


def np_dtype(dt) -> np.dtype:
    return np.dtype(dt.name)


def dtypes_for(device, kinds: str = "biuf") -> list:
    return [d for d in device_dtypes(device) if d.kind in kinds]


def small_shapes(max_dims: int = 3, max_size: int = 3000):
    dim = st.sampled_from([0, 1, 2, 3, 5, 7, 16, 255, 257, 300])
    return st.one_of(
        st.just(()),
        st.lists(dim, min_size=1, max_size=max_dims).map(tuple).filter(
            lambda s: math.prod(s) <= max_size),
    )


@st.composite
def broadcast_pair(draw, max_dims: int = 3):
    """Two shapes that broadcast together (dims set to 1 / dropped at random)."""
    base = draw(small_shapes(max_dims))
    other = list(base)
    for j in range(len(other)):
        if draw(st.booleans()):
            other[j] = 1
    drop = draw(st.integers(0, len(other)))
    other = tuple(other[drop:])
    if draw(st.booleans()):
        return base, other
    return other, base


def rand(rng: np.random.Generator, dt, shape, domain: str = "any", specials: bool = True) -> np.ndarray:
    """Fresh random data of a pyaccel dtype (never all zeros), with special values for floats."""
    return np.asarray(_rand(rng, dt, shape, domain, specials))


def _rand(rng: np.random.Generator, dt, shape, domain: str, specials: bool) -> np.ndarray:
    npdt = np_dtype(dt)
    n = math.prod(shape)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(npdt)
        if domain == "shift":
            return rng.integers(0, dt.bits + 3, size=shape).astype(npdt)
        if domain == "pow":
            return rng.integers(0, 6, size=shape).astype(npdt)
        lo, hi = int(info.min), int(info.max)
        if dt.bits > 16:
            lo, hi = max(lo, -100000), min(hi, 100000)
        return rng.integers(lo, hi, size=shape, endpoint=True).astype(npdt)
    if domain == "positive":
        v = rng.uniform(0.01, 10.0, size=shape)
    elif domain == "unit":
        v = rng.uniform(-0.99, 0.99, size=shape)
    elif domain == "ge1":
        v = rng.uniform(1.0, 10.0, size=shape)
    elif domain == "small":
        v = rng.uniform(-10.0, 10.0, size=shape)
    elif domain == "trig":
        v = rng.uniform(-math.pi, math.pi, size=shape)
    elif domain == "pow":
        v = rng.uniform(0.1, 3.0, size=shape)
    else:
        v = rng.normal(0.0, 3.0, size=shape)
    v = np.asarray(v).astype(npdt)
    if specials and n:
        k = max(1, n // 20)
        idx = rng.integers(0, n, size=k)
        v.reshape(-1)[idx] = np.array(rng.choice(SPECIAL_F, size=k), dtype=npdt)
    return v




def tol(row_tol: str, dt) -> tuple[float, float]:
    r, a = TOLERANCES[row_tol]
    if dt.name == "float16":
        return max(r, 1e-2), max(a, 1e-3)
    if dt.name == "float64":
        return (1e-12, 1e-14) if row_tol != "exact" else (0.0, 0.0)
    return r, a


def check(got: Array, want: np.ndarray, row_tol: str = "exact", what: str = "") -> None:
    """Compare a pyaccel result with a NumPy expectation: dtype, shape, values."""
    assert isinstance(got, Array), f"{what}: expected a pyaccel Array, got {type(got).__name__}"
    want = np.asarray(want)
    assert got.dtype.name == want.dtype.name, f"{what}: dtype {got.dtype.name} != NumPy's {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    r, a = tol(row_tol, got.dtype) if want.dtype.kind == "f" else (0.0, 0.0)
    assert_allclose_dtype(got.to_numpy(), want, want.dtype, rtol=r, atol=a, what=what)


def check_scaled(got: Array, want: np.ndarray, scale: np.ndarray, what: str = "") -> None:
    """Sums / dot products: the error bound scales with the magnitude of the terms
    (``scale``: the same reduction over absolute values), not with the result."""
    want = np.asarray(want)
    assert got.dtype.name == want.dtype.name, f"{what}: dtype {got.dtype.name} != NumPy's {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if want.dtype.kind != "f":
        assert_allclose_dtype(got.to_numpy(), want, want.dtype, what=what)
        return
    eps = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-14}[want.dtype.name]
    g = got.to_numpy().astype(np.float64)
    w = want.astype(np.float64)
    s = np.broadcast_to(np.abs(np.asarray(scale, np.float64)), w.shape)
    with np.errstate(invalid="ignore"):
        ok = (np.abs(g - w) <= 4 * eps * s + 1e-30) | (g == w) | (np.isnan(g) & np.isnan(w))
    bad = np.flatnonzero(~ok)
    assert not bad.size, (f"{what}: {bad.size} of {w.size} differ; first at flat index {bad[0]}: got "
                          f"{g.reshape(-1)[bad[0]]}, want {w.reshape(-1)[bad[0]]}, term magnitude "
                          f"{s.reshape(-1)[bad[0]]}")
