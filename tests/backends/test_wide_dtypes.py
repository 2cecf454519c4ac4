"""Multi-lane dtypes on WebGPU devices: storage, transfers and data movement, bit for bit.

int64 / uint64 / float64 are stored as ``vec2<u32>`` words, complex64 as ``vec2<f32>`` and
complex128 as ``vec4<u32>``, all bit-identical to NumPy's little-endian bytes; the copy
kernels (gathers, scatters, fills, where) move elements whole, so every bit pattern (NaN
payloads, -0.0, subnormals, INT64_MIN) must come back unchanged. The ``wide`` fixture makes
sure the device holds the emulated dtypes' capabilities (every WebGPU device is granted them).
"""

from __future__ import annotations

import numpy as np
import pytest
from _array_util import poisoned  # noqa: F401  (fixture)

import pyaccel as xp
from pyaccel import _host
from pyaccel.dtypes import GPU_WIDE, MULTI_LANE, WIDE_CAPABILITIES, gpu_wide

WIDE = [d.name for d in MULTI_LANE]  # int64, uint64, float64, complex64, complex128
EDGE_I64 = [0, 1, -1, 2**63 - 1, -(2**63), 2**32 - 1, 2**32, 2**32 + 1, 2**31, -(2**31), 2**53 + 1,
            -(2**53) - 1]
EDGE_U64 = [0, 1, 2**64 - 1, 2**63, 2**63 - 1, 2**32 - 1, 2**32, 2**32 + 1, 2**31, 2**53 + 1]
EDGE_F64 = [0.0, -0.0, 1e300, -1e300, 0.1, 5e-324, -5e-324, 2.2250738585072014e-308, float("inf"),
            -float("inf"), float("nan"), 1.7976931348623157e308, 2.0**53 + 2]


@pytest.fixture
def wide(gpu_device, monkeypatch):
    """The GPU device with the emulated 64-bit / complex dtypes enabled."""
    monkeypatch.setattr(gpu_device.impl, "capabilities", gpu_device.impl.capabilities | WIDE_CAPABILITIES)
    return gpu_device


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def wide_data(rng: np.random.Generator, name: str, shape) -> np.ndarray:
    """Random bit patterns of a multi-lane dtype (every word random, so NaN payloads,
    subnormals and sign bits all occur), with the edge values placed at the front."""
    dt = np.dtype(name)
    n = int(np.prod(shape))
    words = rng.integers(0, 2**32, size=n * dt.itemsize // 4, dtype=np.uint64).astype(np.uint32)
    a = words.view(dt).copy()
    edge = {"int64": EDGE_I64, "uint64": EDGE_U64, "float64": EDGE_F64}.get(name)
    if edge is None:  # complex: pairs of float edge values (set part by part: no inf * 1j)
        with np.errstate(over="ignore"):  # 1e300 -> inf in complex64
            f = np.array(EDGE_F64).astype(np.float64 if name == "complex128" else np.float32)
        edge = np.zeros(len(f) - 1, dtype=dt)
        edge.real, edge.imag = f[:-1], f[1:]
    k = min(n, len(edge))
    a[:k] = np.array(edge[:k], dtype=dt)
    return a.reshape(shape)


def test_issue_round_trips(wide):
    """The issue's done-when: int64 and float64 round-trip exactly."""
    a = xp.asarray(np.arange(5), device=wide)
    assert a.dtype == xp.int64
    got = a.to_numpy()
    assert got.dtype == np.int64 and _bits(got) == _bits(np.arange(5))
    b = xp.asarray([1e300, 0.1], dtype=xp.float64, device=wide)  # (Python floats default
    assert b.dtype == xp.float64                                  # to float32 here: issue 21)
    assert _bits(b.to_numpy()) == _bits(np.array([1e300, 0.1]))
    c = xp.asarray(np.array([1e300, 0.1]), device=wide)  # NumPy float64: exact, no dtype=
    assert c.dtype == xp.float64 and _bits(c.to_numpy()) == _bits(np.array([1e300, 0.1]))
    big = xp.asarray([2**40, -(2**62) - 3], device=wide)
    assert big.tolist() == [2**40, -(2**62) - 3]


@pytest.mark.parametrize("name", WIDE)
def test_transfers_bit_exact(wide, rng, name, poisoned):  # noqa: F811
    h = wide_data(rng, name, (7, 33))
    a = xp.asarray(h, device=wide)
    assert a.dtype.name == name and a.shape == (7, 33)
    assert _bits(a.to_numpy()) == _bits(h)
    assert _bits(np.asarray(a)) == _bits(h)
    assert a.tobytes() == _bits(h)
    assert bytes(a.memoryview()) == _bits(h)
    # Python values: tolist, item, scalars of 0-d arrays
    want = h.tolist()
    got = a.tolist()
    assert np.array_equal(np.array(got, dtype=h.dtype), h, equal_nan=True)
    assert len(got) == len(want)
    z = a[3, 5]
    assert z.shape == () and _bits(z.to_numpy()) == _bits(h[3, 5])
    if name in ("int64", "uint64"):
        assert int(z) == int(h[3, 5]) and z.item() == h[3, 5].item()
    elif name == "float64":
        v = float(z)
        assert np.float64(v).tobytes() == h[3, 5].tobytes() or (np.isnan(v) and np.isnan(h[3, 5]))
    else:
        c = complex(z)
        assert np.array(c, dtype=h.dtype).tobytes() == h[3, 5].tobytes() or np.isnan(c)
    # to another GPU-layout copy and back (raw copy), and from cpu
    b = xp.asarray(a, copy=True)
    assert _bits(b.to_numpy()) == _bits(h)


@pytest.mark.parametrize("name", WIDE)
def test_transfers_without_numpy(wide, rng, name, monkeypatch):
    """The NumPy-free host paths (Pyodide without NumPy) pack/unpack multi-lane values."""
    h = wide_data(rng, name, (11,))
    if h.dtype.kind in "fc":
        h = np.where(np.isnan(h), 0, h).astype(h.dtype)  # lists compare NaN unequal
    vals = h.tolist()
    monkeypatch.setattr(_host, "FORCE_NO_NUMPY", True)
    a = xp.asarray(vals, dtype=getattr(xp, name), device=wide)
    got = a.tolist()
    assert a.tobytes() == _bits(h)
    monkeypatch.setattr(_host, "FORCE_NO_NUMPY", False)
    assert got == vals
    assert np.array(got, dtype=h.dtype).tobytes() == _bits(h)


@pytest.mark.parametrize("name", WIDE)
def test_creation(wide, name, poisoned):  # noqa: F811
    dt = getattr(xp, name)
    kind = np.dtype(name).kind
    for fill in ({"i": [-(2**63), 2**40 + 7], "u": [2**64 - 1, 2**33]}.get(kind)
                 or ([0.1, -0.0, 1e300] if kind == "f" else [1e300 - 2.5j, complex(-0.0, 0.1)])):
        got = xp.full((5, 3), fill, dtype=dt, device=wide).to_numpy()
        with np.errstate(over="ignore"):  # 1e300 in complex64: inf
            want = np.full((5, 3), fill, dtype=name)
        assert _bits(got) == _bits(want), fill
    assert _bits(xp.zeros((4,), dtype=dt, device=wide).to_numpy()) == _bits(np.zeros(4, dtype=name))
    assert _bits(xp.ones((4,), dtype=dt, device=wide).to_numpy()) == _bits(np.ones(4, dtype=name))
    assert xp.empty((2, 3), dtype=dt, device=wide).shape == (2, 3)
    assert _bits(xp.eye(4, 5, k=1, dtype=dt, device=wide).to_numpy()) == _bits(np.eye(4, 5, k=1, dtype=name))
    x = xp.asarray(np.arange(12).reshape(3, 4).astype(name) * 3 + 2**34 * (kind in "iu"), device=wide)
    assert _bits(xp.tril(x, k=1).to_numpy()) == _bits(np.tril(x.to_numpy(), k=1))
    assert _bits(xp.triu(x).to_numpy()) == _bits(np.triu(x.to_numpy()))
    xs = xp.astype(x, dt)
    assert xs is not x and _bits(xs.to_numpy()) == _bits(x.to_numpy())


@pytest.mark.parametrize("name", ["int64", "uint64", "float64"])
def test_arange(wide, name):
    dt = getattr(xp, name)
    if name == "float64":
        want = np.arange(0.1, 3.0, 0.3)
        got = xp.arange(0.1, 3.0, 0.3, dtype=dt, device=wide).to_numpy()
    else:
        start = 2**40 if name == "int64" else 2**63
        want = np.arange(start, start + 50 * 2**33, 2**33, dtype=name)
        got = xp.arange(start, start + 50 * 2**33, 2**33, dtype=dt, device=wide).to_numpy()
    assert _bits(got) == _bits(want)


@pytest.mark.parametrize("name", WIDE)
def test_data_movement(wide, rng, name, poisoned):  # noqa: F811
    """Gathers, scatters and where copy whole elements (every bit pattern)."""
    h = wide_data(rng, name, (6, 5, 4))
    a = xp.asarray(h, device=wide)

    def same(got, want, what):
        assert got.dtype.name == name, what
        assert got.shape == want.shape, what
        assert _bits(got.to_numpy()) == _bits(want), what

    same(xp.reshape(a, (30, 4)), h.reshape(30, 4), "reshape")
    same(xp.permute_dims(a, (2, 0, 1)), h.transpose(2, 0, 1), "permute_dims")
    same(xp.flip(a, axis=(0, 2)), h[::-1, :, ::-1], "flip")
    same(a[1:5:2, ::-1, 1], h[1:5:2, ::-1, 1], "basic getitem")
    same(xp.concat([a, a[:2]], axis=0), np.concatenate([h, h[:2]]), "concat")
    same(xp.stack([a[0], a[1]], axis=1), np.stack([h[0], h[1]], axis=1), "stack")
    same(xp.broadcast_to(a[:, :1, :], (6, 5, 4)), np.broadcast_to(h[:, :1, :], (6, 5, 4)), "broadcast_to")
    for idt in ("int32", "int64"):
        idx = np.array([4, 0, -1, 2], dtype=idt)
        same(a[xp.asarray(idx, device=wide)], h[idx], f"take {idt}")
        same(a[:, xp.asarray(idx[:3], device=wide), 1:3], h[:, idx[:3], 1:3], f"adv getitem {idt}")
    cond = rng.random((6, 5, 4)) < 0.5
    b = h[::-1].copy()
    same(xp.where(xp.asarray(cond, device=wide), a, xp.asarray(b, device=wide)), np.where(cond, h, b), "where")
    # setitem: slices, index arrays, scalars
    c = xp.asarray(h, device=wide)
    w = h.copy()
    c[1:3, ::2] = a[4:6, ::2]
    w[1:3, ::2] = h[4:6, ::2]
    idx = np.array([5, 0], dtype=np.int64)
    c[xp.asarray(idx, device=wide)] = a[2:4]
    w[idx] = h[2:4]
    val = {"int64": -(2**63) + 5, "uint64": 2**64 - 3, "float64": -1e-310}.get(name, 1e30 - 0.5j)
    with np.errstate(over="ignore"):
        hv = np.array(val, dtype=name)
    if hv.dtype.kind == "c":  # complex Python scalars in setitem: the complex helper's part
        val = xp.asarray(hv, device=wide)
    c[0, 0, 0] = val
    w[0, 0, 0] = hv
    c[xp.asarray(np.array([3], dtype=np.int32), device=wide), 1] = val
    w[np.array([3]), 1] = hv
    same(c, w, "setitem")


def test_every_gpu_holds_the_emulated_dtypes(gpu_device):
    assert gpu_wide() == GPU_WIDE and WIDE_CAPABILITIES in GPU_WIDE
    assert WIDE_CAPABILITIES in gpu_device.impl.capabilities
