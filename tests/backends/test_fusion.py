"""Lazy elementwise fusion (pyaccel/ops/fusion.py, docs/fusion.md) on GPU devices.

Every program runs three ways on fresh random data with poisoned outputs: fused
(``pyaccel.fusion(True)``), eager (``pyaccel.fusion(False)``, what ``PYACCEL_FUSION=0``
gives) and NumPy. Counters, never timings: ``device.memory_stats()["dispatches"]`` (one
per recorded kernel) and ``fusion.STATS["kernels_compiled"]`` (structural cache misses).
Cheap: arrays of a few thousand elements, a handful of random chains under ``CI=true``.
"""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest
from _array_util import poisoned  # noqa: F401

import pyaccel
from pyaccel.ops import fusion as F

CI = os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")
CHAINS = 6 if CI else 40


def _disp(dev) -> int:
    return dev.memory_stats()["dispatches"]


def _up(dev, a):
    return pyaccel.asarray(a, device=dev)


# ops a random chain draws from: (name, arity, float-only domain-safe)
_F_UNARY = ["sin", "cos", "tanh", "negative", "abs", "square", "exp", "sqrt", "floor", "atan"]
_F_BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "atan2", "hypot", "copysign"]
_I_BINARY = ["add", "subtract", "multiply", "maximum", "bitwise_and", "bitwise_xor", "bitwise_or"]


def _safe(name, v, xp):
    """Keep values bounded so chains of 20 ops stay finite (same formula on both sides)."""
    if name == "exp":
        return xp.exp(xp.tanh(v))
    if name == "sqrt":
        return xp.sqrt(xp.abs(v))
    if name == "square":
        return xp.tanh(v * v)
    return getattr(xp, name)(v)


def _program(seed: int, nops: int):
    """A random chain: a list of steps over a value stack, replayable on any namespace."""
    r = np.random.default_rng(seed)
    steps = []
    for _ in range(nops):
        c = r.integers(0, 10)
        if c < 4:
            steps.append(("u", str(r.choice(_F_UNARY))))
        elif c < 7:
            steps.append(("b", str(r.choice(_F_BINARY)), int(r.integers(0, 3))))
        elif c < 8:
            steps.append(("s", str(r.choice(["add", "multiply", "subtract"])), float(r.uniform(-2, 2))))
        elif c < 9:
            steps.append(("w", int(r.integers(0, 3))))  # where(v > input, v, input)
        else:
            steps.append(("i", str(r.choice(_I_BINARY))))  # an int32 side chain, cast back
    return steps


def _run(steps, inputs, xp, ints):
    v = inputs[0]
    for st in steps:
        if st[0] == "u":
            v = _safe(st[1], v, xp)
        elif st[0] == "b":
            other = inputs[st[2]]
            v = getattr(xp, st[1])(v, other)
            v = xp.tanh(v) if st[1] in ("multiply", "hypot") else v
        elif st[0] == "s":
            v = getattr(xp, st[1])(v, st[2]) if xp is np else getattr(xp, st[1])(v, st[2])
            if xp is np:
                v = v.astype(np.float32)
        elif st[0] == "w":
            other = inputs[st[1]]
            v = xp.where(v > other, v, other)
        else:
            k = getattr(xp, st[1])(ints[0], ints[1])
            v = v + (k > 3)  # bool -> float32 promotion (mixed dtypes)
            if xp is np:
                v = v.astype(np.float32)
    return v


@pytest.mark.parametrize("k", range(CHAINS))
def test_random_chains_fused_eager_numpy(gpu_device, rng, poisoned, k) -> None:  # noqa: F811
    dev = gpu_device
    seed = int(rng.integers(1 << 31))
    steps = _program(seed, 2 + k % 19)
    shapes = [(6, 1, 33), (33,), (4, 1)][: 3] if k % 2 else [(5, 64), (5, 64), (1, 64)]
    hs = [rng.uniform(-2, 2, s).astype(np.float32) for s in shapes]
    ih = [rng.integers(-50, 50, shapes[0]).astype(np.int32),
          rng.integers(-50, 50, shapes[-1]).astype(np.int32)]
    want = _run(steps, hs, np, ih)
    got = {}
    for on in (True, False):
        with pyaccel.fusion(on):
            xs = [_up(dev, h) for h in hs]
            ins = [_up(dev, h) for h in ih]
            got[on] = _run(steps, xs, pyaccel, ins).to_numpy()
    # bit-identical: the same row expressions in the same f32 precision, no FMA contraction
    np.testing.assert_array_equal(got[True], got[False], err_msg=str(steps))
    np.testing.assert_allclose(got[True], want, rtol=1e-4, atol=1e-5, err_msg=str(steps))


def test_one_dispatch_per_chain(gpu_device, rng) -> None:
    dev = gpu_device
    xh = rng.uniform(-1, 1, 4096).astype(np.float32)
    yh = rng.uniform(-1, 1, 4096).astype(np.float32)
    with pyaccel.fusion(True):
        x, y = _up(dev, xh), _up(dev, yh)
        d0 = _disp(dev)
        z = pyaccel.exp(x * 2 + 1) - x
        w = x
        for _ in range(5):
            w = pyaccel.tanh(w * y + 0.5)  # 10 ops
        assert _disp(dev) == d0  # nothing recorded yet
        assert z._lazy is not None and w._lazy is not None
        F.materialize(z)
        assert _disp(dev) == d0 + 1
        F.materialize(w)
        assert _disp(dev) == d0 + 2
    np.testing.assert_allclose(z.to_numpy(), np.exp(xh * 2 + 1) - xh, rtol=1e-5, atol=1e-6)
    ref = xh
    for _ in range(5):
        ref = np.tanh(ref * yh + np.float32(0.5))
    np.testing.assert_allclose(w.to_numpy(), ref, rtol=1e-5, atol=1e-6)


def test_block_until_ready_computes_a_lazy_array(gpu_device, rng) -> None:
    """``device.synchronize()`` waits for recorded work, and a lazy array is none yet;
    ``block_until_ready()`` computes it (one kernel) and waits, with no host read."""
    dev = gpu_device
    xh = rng.uniform(-1, 1, 4096).astype(np.float32)
    with pyaccel.fusion(True):
        x = _up(dev, xh)
        z = pyaccel.exp(x * 2 + 1) - x
        d0 = _disp(dev)
        dev.synchronize()
        assert z._lazy is not None and _disp(dev) == d0
        reads = dev.memory_stats()["reads"]
        assert z.block_until_ready() is z
        assert z._lazy is None and _disp(dev) == d0 + 1
        assert dev.memory_stats()["reads"] == reads
        assert x.block_until_ready() is x  # a plain array: only the wait
    np.testing.assert_allclose(z.to_numpy(), np.exp(xh * 2 + 1) - xh, rtol=1e-5, atol=1e-6)


def test_fusion_off_dispatches_each_op(gpu_device, rng) -> None:
    dev = gpu_device
    x = _up(dev, rng.uniform(-1, 1, 1024).astype(np.float32))
    with pyaccel.fusion(False):
        d0 = _disp(dev)
        z = pyaccel.exp(x * 2 + 1) - x
        assert z._lazy is None and _disp(dev) == d0 + 4
    pyaccel.set_fusion(False)
    try:
        assert (x + 1)._lazy is None
    finally:
        pyaccel.set_fusion(True)
    with pyaccel.fusion(True):
        assert (x + 1)._lazy is not None


def test_scalars_are_uniforms_compile_once(gpu_device, rng) -> None:
    dev = gpu_device
    xh = rng.uniform(-1, 1, 2048).astype(np.float32)
    with pyaccel.fusion(True):
        x = _up(dev, xh)
        (x * 0.5 + 1.0).to_numpy()  # warm: the structure compiled once
        c0, p0 = F.STATS["kernels_compiled"], dev.memory_stats()["pipelines_compiled"]
        outs = []
        for j in range(100):
            s = float(rng.uniform(-3, 3))
            outs.append((s, x * s + float(j)))
        for s, o in outs[::17]:
            j = outs.index((s, o))
            np.testing.assert_allclose(o.to_numpy(), xh * np.float32(s) + np.float32(j), rtol=1e-6)
        for _, o in outs:
            F.materialize(o)
        assert F.STATS["kernels_compiled"] == c0
        assert dev.memory_stats()["pipelines_compiled"] == p0


def test_node_used_twice(gpu_device, rng) -> None:
    dev = gpu_device
    xh = rng.uniform(-1, 1, 3000).astype(np.float32)
    with pyaccel.fusion(True):
        x = _up(dev, xh)
        y = pyaccel.exp(x)
        z = y + y * 2  # one kernel: y computed once inside it
        d0 = _disp(dev)
        zz = z.to_numpy()
        assert _disp(dev) == d0 + 1
        np.testing.assert_allclose(zz, np.exp(xh) * 3, rtol=1e-5)
        # a small node is recomputed in each consumer; a big one materialises at its 2nd
        big = x
        for _ in range(F.RECOMPUTE_OPS + 2):
            big = pyaccel.sin(big)
        a = big + 1
        assert big._lazy is not None
        b = big * 3
        assert big._lazy is None  # materialised when the second consumer came
        ref = xh
        for _ in range(F.RECOMPUTE_OPS + 2):
            ref = np.sin(ref)
        np.testing.assert_allclose(a.to_numpy(), ref + 1, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(b.to_numpy(), ref * 3, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(big.to_numpy(), ref, rtol=1e-5, atol=1e-6)


def test_lazy_array_written_through_view_and_setitem(gpu_device, rng, poisoned) -> None:  # noqa: F811
    dev = gpu_device
    xh = rng.uniform(-1, 1, (8, 16)).astype(np.float32)
    with pyaccel.fusion(True):
        x = _up(dev, xh)
        y = x * 2 + 1
        y[0] = 5.0  # setitem on a lazy array
        v = y[2:4, ::2]  # a view of it writes through
        v[...] = -1.0
        ref = xh * 2 + 1
        ref[0] = 5.0
        ref[2:4, ::2] = -1.0
        np.testing.assert_allclose(y.to_numpy(), ref, rtol=1e-6)
        # a lazy consumer of y sees y's value at the time it was made
        y2 = x + 0.0
        z = y2 * 3
        y2[1] = 100.0
        np.testing.assert_allclose(z.to_numpy(), (xh + 0) * 3, rtol=1e-6)


def test_writes_into_an_input_come_after_lazy_readers(gpu_device, rng, poisoned) -> None:  # noqa: F811
    dev = gpu_device
    xh = rng.uniform(-1, 1, 1024).astype(np.float32)
    with pyaccel.fusion(True):
        x = _up(dev, xh)
        y = x + 1
        z = pyaccel.exp(y)
        x[3] = 100.0  # setitem into y's input
        x += 7  # in-place op
        x[:10] = x[10:20]  # a view write
        np.testing.assert_allclose(y.to_numpy(), xh + 1, rtol=1e-6)
        np.testing.assert_allclose(z.to_numpy(), np.exp(xh + 1), rtol=1e-5)
        xr = xh.copy()
        xr[3] = 100
        xr += 7
        xr[:10] = xr[10:20]
        np.testing.assert_allclose(x.to_numpy(), xr, rtol=1e-6)
        # a lazy array in place: x2 = x2 * 2 through *=, its old value still read by w
        x2 = x * 1.0
        w = x2 - 1
        x2 *= 2
        np.testing.assert_allclose(w.to_numpy(), xr - 1, rtol=1e-6)
        np.testing.assert_allclose(x2.to_numpy(), xr * 2, rtol=1e-6)


def test_errors_raise_at_the_op(gpu_device, rng) -> None:
    dev = gpu_device
    with pyaccel.fusion(True):
        x = _up(dev, rng.uniform(-1, 1, 64).astype(np.float32))
        y = x * 2  # lazy
        with pytest.raises(TypeError, match="bitwise_and"):
            pyaccel.bitwise_and(y, 1)
        k = _up(dev, np.arange(64, dtype=np.int32)) + 1  # lazy int32
        with pytest.raises(OverflowError):
            k + 2**40
        with pytest.raises(ValueError):
            y + _up(dev, np.zeros(63, np.float32))
        with pytest.raises(TypeError, match="where"):
            pyaccel.where(y, y, y)  # a float condition
        np.testing.assert_allclose(y.to_numpy(), x.to_numpy() * 2)


def test_size_limits_split_the_tree(gpu_device, rng) -> None:
    dev = gpu_device
    xh = rng.uniform(-1, 1, 512).astype(np.float32)
    hs = [rng.uniform(-1, 1, 512).astype(np.float32) for _ in range(40)]
    with pyaccel.fusion(True):
        x = _up(dev, xh)
        y = x
        for _ in range(100):
            y = y + 0.25
        assert y._lazy is not None and y._lazy.nops <= F.MAX_OPS
        ref = xh
        for _ in range(100):
            ref = ref + np.float32(0.25)
        np.testing.assert_allclose(y.to_numpy(), ref, rtol=1e-6)
        arrs = [_up(dev, h) for h in hs]  # 40 distinct inputs: more than one kernel's bindings
        s = arrs[0]
        for a in arrs[1:]:
            s = s + a
        lim = dev.limits.max_storage_buffers_per_stage - 1
        assert len(s._lazy.leaves) <= lim
        ref = hs[0]
        for h in hs[1:]:
            ref = ref + h
        np.testing.assert_allclose(s.to_numpy(), ref, rtol=1e-5, atol=1e-6)


def test_int_bool_dtypes_fuse(gpu_device, rng, poisoned) -> None:  # noqa: F811
    dev = gpu_device
    ah = rng.integers(-1000, 1000, (7, 9)).astype(np.int32)
    bh = rng.integers(0, 1000, (9,)).astype(np.uint32)
    with pyaccel.fusion(True):
        a, b = _up(dev, ah), _up(dev, bh)
        m = (a * 3 - 7) & 0xFF
        u = b * 5 + 1
        c = (m > 10) & (u < 3000)
        r = pyaccel.where(c, m, -m)
        assert r._lazy is not None
        d0 = _disp(dev)
        got = r.to_numpy()
        assert _disp(dev) == d0 + 1
    mm = (ah * 3 - 7) & 0xFF
    uu = bh * np.uint32(5) + np.uint32(1)
    np.testing.assert_array_equal(got, np.where((mm > 10) & (uu < 3000), mm, -mm))


# -- multi-lane dtypes (int64, uint64, float64, complex: emulated in WGSL) ------------------
# Few kernels on purpose: each wide kernel costs a second or more to compile on lavapipe
# (fused, and each op's eager kernel for the fusion(False) side), so a fixed chain per dtype,
# no sweep over the rows (the elementwise sweeps and the fuzzer cover the rows one by one).

def _need(dev, *caps) -> None:
    for c in caps:
        if getattr(pyaccel.Capability, c) not in dev.capabilities:
            pytest.skip(f"{dev.uri} has no {c.lower()}")


def _bits(a: np.ndarray) -> np.ndarray:
    """The bit patterns of float / complex data (NaN payloads and -0.0 compared too)."""
    if a.dtype.kind == "c":
        a = a.view(f"f{a.dtype.itemsize // 2}")
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


def _wide_both(dev, make, hs, ndisp):
    """``make(*arrays)`` -> list of arrays, fused and with fusion off, read as NumPy; fused: the
    results are lazy, nothing is recorded before the reads, ``ndisp`` dispatches for them.
    Asserts bit equality of the two and returns the fused results."""
    res = {}
    for on in (True, False):
        with pyaccel.fusion(on):
            xs = [_up(dev, h) for h in hs]
            d0 = _disp(dev)
            outs = make(*xs)
            if on:
                assert all(o._lazy is not None for o in outs)
                assert _disp(dev) == d0
            res[on] = [o.to_numpy() for o in outs]
            if on:
                assert _disp(dev) == d0 + ndisp
    for g, e in zip(res[True], res[False], strict=True):
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(_bits(g), _bits(e))
    return res[True]


def test_float64_chain_fuses(gpu_device, rng, poisoned) -> None:  # noqa: F811
    """A float64 chain of the cheap rows (arithmetic, a comparison, where, abs, negative,
    a Python scalar) is one kernel, bit-identical to the eager kernels (the same soft-float
    functions in the same order: NaN, infinities, -0.0, overflow); a reduction of a float64
    tree computes it first (one fused kernel), then reduces as before (the pairwise passes)."""
    dev = gpu_device
    _need(dev, "FLOAT64")
    xh = rng.uniform(-1e3, 1e3, 1001)
    yh = rng.uniform(-2, 2, 1001)
    xh[:7] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e308, 5e-324]
    yh[:7] = [1.0, 0.0, 2.0, 3.0, -0.0, 10.0, 0.5]

    def make(x, y):
        return [pyaccel.where(x < y, x * y + x - 2.5, -pyaccel.abs(y))]

    (z,) = _wide_both(dev, make, [xh, yh], 1)
    with np.errstate(all="ignore"):
        want = np.where(xh < yh, xh * yh + xh - 2.5, -np.abs(yh))
    np.testing.assert_array_equal(_bits(z), _bits(want))  # (IEEE-exact soft-float arithmetic)
    sums = {}
    for on in (True, False):
        with pyaccel.fusion(on):
            x, y = _up(dev, xh[7:]), _up(dev, yh[7:])
            t = x * y - y
            assert (t._lazy is not None) == on
            sums[on] = pyaccel.sum(t).to_numpy()
            assert t._lazy is None  # (materialised, then reduced by the eager passes)
    np.testing.assert_array_equal(_bits(sums[True]), _bits(sums[False]))
    np.testing.assert_allclose(sums[True], np.sum(xh[7:] * yh[7:] - yh[7:]), rtol=1e-12)


def test_int64_chain_fuses(gpu_device, rng, poisoned) -> None:  # noqa: F811
    """int64 shifts, bitwise ops, a comparison, where and invert (8 ops: MAX_WIDE_OPS) are one
    kernel, exact (wrapping as NumPy does)."""
    dev = gpu_device
    _need(dev, "INT64")
    assert F.MAX_WIDE_OPS >= 8
    ah = rng.integers(-(2**62), 2**62, 999, dtype=np.int64)
    bh = rng.integers(0, 1 << 40, 999, dtype=np.int64)
    ah[:3] = [np.iinfo(np.int64).min, np.iinfo(np.int64).max, -1]

    def make(a, b):
        c = (a << (b & 7)) ^ (a >> 3)
        return [pyaccel.where(c > b, c - b, ~a)]

    (r,) = _wide_both(dev, make, [ah, bh], 1)
    c = (ah << (bh & 7)) ^ (ah >> 3)
    np.testing.assert_array_equal(r, np.where(c > bh, c - bh, ~ah))


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_complex_chain_fuses(gpu_device, rng, poisoned, dt) -> None:  # noqa: F811
    """``z * w + conj(z) - 1.5`` and its real part times imag(z): complex and float nodes in
    one tree, bit-identical to eager (complex64 products are not contracted with the next
    node's add into FMAs: the opaque round trip on both f32 lanes)."""
    dev = gpu_device
    _need(dev, "COMPLEX", *(("FLOAT64",) if dt == "complex128" else ()))
    n = 777

    def c(lo, hi):
        return (rng.uniform(lo, hi, n) + 1j * rng.uniform(lo, hi, n)).astype(dt)

    zh, wh = c(-3, 3), c(-3, 3)
    zh[:3] = [complex(np.nan, 1), complex(np.inf, -0.0), complex(-0.0, 2)]

    def make(z, w):
        r = z * w + pyaccel.conj(z) - 1.5
        return [r, pyaccel.real(r) * pyaccel.imag(z)]

    r, t = _wide_both(dev, make, [zh, wh], 2)  # (r: 4 ops, recomputed inside t's kernel)
    with np.errstate(all="ignore"):
        rh = zh * wh + np.conj(zh) - np.array(1.5, dt)
    tol = 1e-5 if dt == "complex64" else 1e-13
    np.testing.assert_allclose(r[3:], rh[3:], rtol=tol, atol=tol)
    np.testing.assert_allclose(t[3:], rh.real[3:] * zh.imag[3:], rtol=tol, atol=tol)


def test_mixed_float32_float64_int64_tree(gpu_device, rng, poisoned) -> None:  # noqa: F811
    """A float32 tree (exp: ew_float) feeding float64 through promotion and astype, int32
    index arithmetic promoted to int64, and a cast back to float32: one kernel, bit-identical
    to eager (the eager kernels' conversion functions, f64_from_f32, i64_from_i32, f64_to_f32)."""
    dev = gpu_device
    _need(dev, "FLOAT64", "INT64")
    n = 1000
    fh = rng.uniform(-3, 3, n).astype(np.float32)
    xh = rng.uniform(-1e300, 1e300, n)  # (f64 -> f32: inf past float32's range)
    xh[:3] = [np.nan, -0.0, 1e-300]
    ih = rng.integers(-1000, 1000, n).astype(np.int32)
    ah = rng.integers(-3000, 3000, n).astype(np.int64)

    def make(f, x, i, a):
        g = pyaccel.exp(f) * 2
        y = g + x
        y2 = pyaccel.astype(g, pyaccel.float64) * x
        k = i * 3 + a
        out = pyaccel.where(k > 0, y, y2)
        return [pyaccel.astype(out, pyaccel.float32) + f, out]

    back, out = _wide_both(dev, make, [fh, xh, ih, ah], 2)
    g = np.exp(fh.astype(np.float64)) * 2
    with np.errstate(all="ignore"):
        want = np.where(ih * 3 + ah > 0, g + xh, g * xh)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(back, want.astype(np.float32) + fh, rtol=1e-5)


def test_wide_cheap_rule() -> None:
    """The documented cheap set (docs/fusion.md, "Multi-lane dtypes"): WIDE_ROWS whose eager
    kernel's pruned WGSL is at most WIDE_SRC_MAX characters (no device: sources only)."""
    from pyaccel import dtypes as D

    wide = (D.int64, D.uint64, D.float64, D.complex64, D.complex128)
    for dt in wide:
        for name in ("add", "subtract", "multiply", "negative", "equal", "where", "conj", "real"):
            assert F.wide_cheap(name, dt), (name, dt)
        for name in ("exp", "log", "sin", "tanh", "pow", "floor_divide", "remainder", "hypot", "atan2"):
            assert not F.wide_cheap(name, dt), (name, dt)
    for name in ("divide", "sqrt", "abs", "multiply", "square"):
        assert F.wide_cheap(name, D.float64) and F.wide_cheap(name, D.complex64), name
    for name in ("abs", "sign", "divide", "reciprocal", "sqrt"):  # (12.6k-15.8k characters)
        assert not F.wide_cheap(name, D.complex128), name
    assert F.wide_cheap("multiply", D.complex128) and F.wide_cheap("bitwise_left_shift", D.int64)


def test_wide_rows_outside_the_cheap_set_stay_eager(gpu_device, rng) -> None:
    """On the multi-lane dtypes only :data:`fusion.WIDE_ROWS` (and casts) fuse; another row
    (here int64 floor_divide) runs eagerly and materialises its lazy input; a float64 tree of
    more than MAX_WIDE_OPS ops is cut (the biggest lazy input computed first)."""
    dev = gpu_device
    _need(dev, "FLOAT64", "INT64")
    assert "floor_divide" not in F.WIDE_ROWS and "exp" not in F.WIDE_ROWS
    ah = rng.integers(-1000, 1000, 64).astype(np.int64)
    xh = rng.uniform(-1, 1, 64)
    with pyaccel.fusion(True):
        a, x = _up(dev, ah), _up(dev, xh)
        y = a * 3
        assert y._lazy is not None
        q = y // 7
        assert q._lazy is None and y._lazy is None
        np.testing.assert_array_equal(q.to_numpy(), (ah * 3) // 7)
        s = x
        for _ in range(F.MAX_WIDE_OPS + 2):
            s = s + x
        assert s._lazy is not None and len(s._lazy.wide) <= F.MAX_WIDE_OPS
        d0 = _disp(dev)
        got = s.to_numpy()
        assert _disp(dev) == d0 + 1  # (the first MAX_WIDE_OPS adds were computed at the cut)
    ref = xh.copy()
    for _ in range(F.MAX_WIDE_OPS + 2):
        ref = ref + xh
    np.testing.assert_array_equal(got, ref)


def test_threads_share_a_lazy_input(gpu_device, rng) -> None:
    dev = gpu_device
    xh = rng.uniform(-1, 1, 2048).astype(np.float32)
    errors = []
    with pyaccel.fusion(True):
        x = _up(dev, xh)
        for _rep in range(3 if CI else 10):
            y = pyaccel.sin(x) * 2 + 1
            for _ in range(F.RECOMPUTE_OPS):
                y = pyaccel.cos(y)  # bigger than RECOMPUTE_OPS: consumers materialise it
            ref = np.sin(xh) * 2 + 1
            for _ in range(F.RECOMPUTE_OPS):
                ref = np.cos(ref)

            def work(t: int, y=y, ref=ref) -> None:
                try:
                    with pyaccel.fusion(True):
                        for j in range(4):
                            z = (y * float(t + j) + 1.0).to_numpy()
                            np.testing.assert_allclose(z, ref * np.float32(t + j) + 1, rtol=1e-5,
                                                       atol=1e-5)
                except Exception as exc:  # noqa: BLE001
                    errors.append(exc)

            ts = [threading.Thread(target=work, args=(t,)) for t in range(4)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
    assert not errors, errors[0]


def test_non_fusable_consumers_materialise(gpu_device, rng) -> None:
    dev = gpu_device
    xh = rng.uniform(-1, 1, (32, 16)).astype(np.float32)
    with pyaccel.fusion(True):
        x = _up(dev, xh)
        y = pyaccel.exp(x) - 1
        np.testing.assert_allclose(pyaccel.sum(y).item(), np.sum(np.exp(xh) - 1), rtol=1e-4)
        y = pyaccel.exp(x) - 1
        np.testing.assert_allclose((y @ y.T).to_numpy(), (np.exp(xh) - 1) @ (np.exp(xh) - 1).T,
                                   rtol=1e-4, atol=1e-4)
        y = pyaccel.exp(x) - 1
        np.testing.assert_allclose(pyaccel.sort(y, axis=1).to_numpy(), np.sort(np.exp(xh) - 1, axis=1),
                                   rtol=1e-5, atol=1e-6)
        y = x * 2
        np.testing.assert_allclose(y.T.to_numpy(), (xh * 2).T)
        np.testing.assert_allclose(y.astype(pyaccel.int32).to_numpy(), (xh * 2).astype(np.int32))
        y = x * 2
        np.testing.assert_allclose(pyaccel.asarray(y, device="cpu").to_numpy(), xh * 2)


def _row_inputs(rng, row, dt):
    shape = (3, 40)
    if dt == "bool":
        return [rng.integers(0, 2, shape).astype(bool) for _ in range(row.arity)]
    if dt in ("float32", "float16"):
        lo, hi = {"positive": (0.1, 4), "unit": (-0.9, 0.9), "ge1": (1, 4), "small": (-5, 5)}.get(
            row.domain, (-4, 4))
        return [rng.uniform(lo, hi, shape).astype(dt) for _ in range(row.arity)]
    lo, hi = (0, 31) if row.domain == "shift" else (1, 60) if row.domain in ("nonzero", "pow") else (-60, 60)
    if dt.startswith("uint"):
        lo, hi = max(lo, 0), max(hi, 1)
    return [rng.integers(lo, hi, shape).astype(dt) for _ in range(row.arity)]


def test_every_row_fused_matches_eager(gpu_device, rng) -> None:
    """Every public elementwise row over lazy inputs (a 2+ op tree) on each fusable dtype:
    bit-identical to the eager kernels (one row, the same operations in the same precision)."""
    from pyaccel.ops import table

    dev = gpu_device
    checked = 0
    f16 = ("float16",) if pyaccel.Capability.F16 in dev.capabilities else ()
    pairs = [(row, dt) for row in table.elementwise_public()
             for dt in ("float32", "int32", "uint32", "bool", "int8", "int16", "uint8", "uint16", *f16)]
    if CI:  # a fresh random eighth of the pairs (the rng seed is printed)
        pairs = [pairs[j] for j in sorted(rng.choice(len(pairs), len(pairs) // 8, replace=False))]
    for row, dt in pairs:
        hs = _row_inputs(rng, row, dt)
        res = {}
        for on in (True, False):
            with pyaccel.fusion(on):
                xs = [_up(dev, h) for h in hs]
                if row.name == "where":
                    xs[0] = _up(dev, hs[0].astype(bool))
                cond = xs[0] == xs[0]  # (NaN-free inputs: all True)
                lazy = [pyaccel.where(cond, x, x) if on else x for x in xs]
                try:
                    r = getattr(pyaccel, row.name)(*lazy)
                except (TypeError, ValueError) as exc:
                    res[on] = type(exc)
                    continue
                if on and row.name != "clip":  # (clip: its own provider method, eager)
                    assert r._lazy is not None, (row.name, dt)
                res[on] = r.to_numpy()
        if isinstance(res[True], type) or isinstance(res[False], type):
            assert res[True] == res[False], (row.name, dt, res)
            continue
        np.testing.assert_array_equal(res[True], res[False], err_msg=f"{row.name} {dt}")
        checked += 1
    assert checked > len(pairs) // 2


_SAXPY = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> a: f32;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < arrayLength(&y)) {
        y[i] = a * x[i] + y[i];
    }
}
"""


def test_kernel_calls_see_lazy_values(gpu_device, rng) -> None:
    """A lazy array passed to a Kernel is computed first; a Kernel writing an array that lazy
    arrays read runs after they are computed."""
    dev = gpu_device
    k = pyaccel.Kernel(_SAXPY)
    xh, yh = rng.uniform(-1, 1, 256).astype(np.float32), rng.uniform(-1, 1, 256).astype(np.float32)
    with pyaccel.fusion(True):
        x, y = _up(dev, xh), _up(dev, yh)
        lx = x * 2  # lazy input of the kernel
        before = y + 1  # lazy reader of y, which the kernel writes
        k(lx, y, 0.5, grid=256)
        np.testing.assert_allclose(y.to_numpy(), 0.5 * (xh * 2) + yh, rtol=1e-6)
        np.testing.assert_allclose(before.to_numpy(), yh + 1, rtol=1e-6)


def test_strided_views_are_read_in_place(gpu_device, rng, poisoned) -> None:  # noqa: F811
    """Views (slices, steps, flips, transposes, broadcast rows) are leaves read through their
    offset and strides: a 5-point stencil is one dispatch, no gathers."""
    dev = gpu_device
    uh = rng.uniform(-1, 1, (33, 47)).astype(np.float32)
    with pyaccel.fusion(True):
        u = _up(dev, uh)
        d0 = _disp(dev)
        lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]
        got = (u[1:-1, 1:-1] + 0.2 * lap).to_numpy()
        assert _disp(dev) == d0 + 1
        odd = (u.T[::-2, 3:] * 2 + u[5, 3:33][::-1] * 3 + u[1::3, ::-1].mT[::2, :1]).to_numpy()
    lap_h = uh[2:, 1:-1] + uh[:-2, 1:-1] + uh[1:-1, 2:] + uh[1:-1, :-2] - 4 * uh[1:-1, 1:-1]
    np.testing.assert_allclose(got, uh[1:-1, 1:-1] + np.float32(0.2) * lap_h, rtol=1e-5, atol=1e-6)
    ref = uh.T[::-2, 3:] * 2 + uh[5, 3:33][::-1] * 3 + uh[1::3, ::-1].T[::2, :1]
    np.testing.assert_allclose(odd, ref, rtol=1e-6)


def test_astype_is_a_fused_cast(gpu_device, rng, poisoned) -> None:  # noqa: F811
    """``astype`` between fusable dtypes is a node: ``astype(x * 2, int32) + 1`` is one kernel,
    bit-identical to the eager astype (the gather's cast: NaN, inf, out-of-range and negative
    floats to unsigned, bool, the narrow wrap); int and bool sources too."""
    dev = gpu_device
    xh = rng.uniform(-1e3, 1e3, 999).astype(np.float32)
    xh[:7] = [np.nan, np.inf, -np.inf, -0.5, 2.5, -0.0, 3e9]  # (x * 2: also past int32)
    kh = rng.integers(-30000, 30000, 999).astype(np.int16)
    targets = ("int32", "uint32", "int8", "uint16", "bool")
    res = {}
    for on in (True, False):
        with pyaccel.fusion(on):
            x, k = _up(dev, xh), _up(dev, kh)
            outs = []
            for dt in targets:
                d0 = _disp(dev)
                y = pyaccel.astype(x * 2, getattr(pyaccel, dt))
                outs.append((~y if dt == "bool" else y + 1).to_numpy())
                assert _disp(dev) == d0 + (1 if on else 3), dt
            d0 = _disp(dev)
            i8 = pyaccel.astype(k * 3, pyaccel.int8)  # wraps
            mix = pyaccel.astype(k > 0, pyaccel.uint8) * 5 + i8.astype(pyaccel.float32) / 3
            outs += [i8.to_numpy(), mix.to_numpy()]
            assert _disp(dev) == d0 + (2 if on else 8)
            res[on] = outs
    for a, b in zip(res[True], res[False], strict=True):
        np.testing.assert_array_equal(a, b)
    v = (xh * 2)[7:]  # (NumPy's casts of NaN / inf / out-of-range floats are the host's)
    for dt, got in zip(targets, res[True], strict=False):
        want = ~(v != 0) if dt == "bool" else np.trunc(v).astype(np.int64).astype(dt) + np.array(1, dt)
        np.testing.assert_array_equal(got[7:], want, err_msg=dt)
    i8h = (kh.astype(np.int32) * 3).astype(np.int8)
    np.testing.assert_array_equal(res[True][-2], i8h)
    np.testing.assert_allclose(res[True][-1], (kh > 0).astype(np.uint8) * 5 + i8h.astype(np.float32) / 3,
                               rtol=1e-6)


def test_astype_copy_semantics(gpu_device, rng) -> None:
    """A same-dtype astype of a lazy array or a view is a lazy copy (its own buffer: writes
    into either side do not reach the other), ``copy=False`` returns the array itself, a plain
    array's copy is a buffer copy; a cast reads its input's value at the time it was made."""
    dev = gpu_device
    uh = rng.uniform(-5, 5, (6, 8)).astype(np.float32)
    with pyaccel.fusion(True):
        u = _up(dev, uh)
        y = u * 2
        assert pyaccel.astype(y, pyaccel.float32, copy=False) is y
        c = pyaccel.astype(y, pyaccel.float32)
        assert c is not y and c._lazy is not None
        y[0] = 100.0
        c[1] = -1.0
        ref = uh * 2
        np.testing.assert_array_equal(c.to_numpy()[2:], ref[2:])
        np.testing.assert_array_equal(c.to_numpy()[0], ref[0])
        np.testing.assert_array_equal(y.to_numpy()[1], ref[1])
        p = pyaccel.astype(u, pyaccel.float32)
        assert p._lazy is None and p._b is not u._b
        v = pyaccel.astype(u[1:, ::2], pyaccel.int32)  # a view read in place
        w = pyaccel.astype(u[::-1], pyaccel.float32)  # a copy of a view
        assert v._lazy is not None and w._lazy is not None
        u[...] = 0.0  # lazy readers of u are computed first
        np.testing.assert_array_equal(v.to_numpy(), uh[1:, ::2].astype(np.int32))
        np.testing.assert_array_equal(w.to_numpy(), uh[::-1])
        with pytest.raises(TypeError, match="astype"):
            pyaccel.astype(pyaccel.asarray(np.ones(3, np.complex64), device="cpu"), pyaccel.float32)


def test_float16_fuses(gpu_device, rng, poisoned) -> None:  # noqa: F811
    """float16 trees (where the device has shader-f16): every node computes in f32 and returns
    ``f16(value)``, the rounding the eager kernel does at its store, so a chain mixing float16,
    float32 and casts is one kernel, bit-identical to the eager chain (odd and vec4-sized
    lengths: f16 data is read and written one element per invocation, as eagerly)."""
    dev = gpu_device
    if pyaccel.Capability.F16 not in dev.capabilities:
        pytest.skip(f"{dev.uri} has no shader-f16")
    for n in (1001, 4096):
        ah, bh = (rng.uniform(-4, 4, n).astype(np.float16) for _ in range(2))
        fh = rng.uniform(-4, 4, n).astype(np.float32)
        res = {}
        for on in (True, False):
            with pyaccel.fusion(on):
                a, b, f = _up(dev, ah), _up(dev, bh), _up(dev, fh)
                d0 = _disp(dev)
                y = pyaccel.where(a > b, pyaccel.exp(a * 1.75 + b), a - 3) / (b * b + 1)
                c = pyaccel.astype(y + f, pyaccel.float16) + 1  # float32 in the middle
                k = pyaccel.astype(c * 100, pyaccel.int16)
                assert not on or (_disp(dev) == d0 and c._lazy is not None and k._lazy is not None)
                res[on] = [c.to_numpy(), k.to_numpy(), pyaccel.nextafter(c, a).to_numpy()]
                if on:  # c (12 ops: one kernel), then k and nextafter over c's buffer
                    assert _disp(dev) == d0 + 3
        for g, e in zip(res[True], res[False], strict=True):
            assert g.dtype == e.dtype
            np.testing.assert_array_equal(g, e)
        yh = np.where(ah > bh, np.exp(ah * np.float16(1.75) + bh), ah - np.float16(3)) / (bh * bh + np.float16(1))
        ch = (yh.astype(np.float32) + fh).astype(np.float16) + np.float16(1)
        np.testing.assert_allclose(res[True][0], ch, rtol=2e-3, atol=2e-3)


def test_reshape_of_a_lazy_array_stays_lazy(gpu_device, rng, poisoned) -> None:  # noqa: F811
    """``reshape`` of a lazy array is lazy (a view of it: the same row-major elements) when
    every leaf of its tree can be read through the new shape: ``reshape(x * 2 + s, (3, 40)) * 3``
    is one kernel. A broadcast row read through a merged axis materialises first (as before).
    Writes through the reshaped array or its source reach the other, as with an eager reshape;
    lazy consumers keep the value they were made from."""
    dev = gpu_device
    xh = rng.uniform(-1, 1, (6, 20)).astype(np.float32)
    bh = rng.uniform(-1, 1, 20).astype(np.float32)
    res = {}
    for on in (True, False):
        with pyaccel.fusion(on):
            x, b, s = _up(dev, xh), _up(dev, bh), _up(dev, xh[:1, :1])
            d0 = _disp(dev)
            y = (x * 2 + s).reshape(-1)
            z = pyaccel.reshape(y + 1, (3, 40)) * 3
            assert not on or (y._lazy is not None and z._lazy is not None and _disp(dev) == d0)
            out = [z.to_numpy()]
            assert _disp(dev) == d0 + (1 if on else 4)
            w = (x + b).reshape(-1)  # b's row through the merged axis: materialised
            assert w._lazy is None
            out += [w.to_numpy(), ((x * 3).reshape(6, 4, 5) - pyaccel.reshape(b, (4, 5))).to_numpy(),
                    pyaccel.sum((x * x).reshape(3, 40), axis=1).to_numpy()]
            y = x * 2
            r = y.reshape(12, 10)
            c = r + 1  # a lazy consumer: the value r had when it was made
            r[0] = 5.0  # through the reshape into y
            y[1] = -7.0  # through y into r
            assert y._lazy is None and r._lazy is None and r._b is y._b
            out += [y.to_numpy(), r.to_numpy(), c.to_numpy()]
            y = x * 1.0
            r = y.reshape(-1)
            q = r * 2
            x[0] = 100.0  # into a leaf: lazy readers first
            out += [q.to_numpy(), r.to_numpy()]
            res[on] = out
    for k, (g, e) in enumerate(zip(res[True], res[False], strict=True)):
        np.testing.assert_array_equal(g, e, err_msg=str(k))
    ref = ((xh * 2 + xh[0, 0]).reshape(-1) + 1).reshape(3, 40) * 3
    np.testing.assert_allclose(res[True][0], ref, rtol=1e-6)
    yr = (xh * 2).reshape(12, 10)
    yr[0] = 5.0
    yr.reshape(6, 20)[1] = -7.0
    np.testing.assert_array_equal(res[True][4], yr.reshape(6, 20))
    np.testing.assert_array_equal(res[True][6], (xh * 2).reshape(12, 10) + 1)
    np.testing.assert_array_equal(res[True][7], xh.reshape(-1) * 2)


def test_reshape_consumers_count_on_the_source(gpu_device, rng) -> None:
    """A lazy reshape's consumers count as its source's: a big source used through its
    reshape and directly is materialised at the second consumer, once, and the reshape then
    reads its buffer."""
    dev = gpu_device
    xh = rng.uniform(-1, 1, (8, 16)).astype(np.float32)
    with pyaccel.fusion(True):
        x = _up(dev, xh)
        y = x
        for _ in range(F.RECOMPUTE_OPS + 1):
            y = pyaccel.sin(y)
        r = y.reshape(4, 32)
        a = r + 1
        assert y._lazy is not None and r._lazy is not None
        b = y * 2  # the second consumer of y's tree
        assert y._lazy is None and r._lazy is None and r._b is y._b
        d0 = _disp(dev)
        got = [a.to_numpy(), b.to_numpy()]
        assert _disp(dev) == d0 + 2
    ref = xh
    for _ in range(F.RECOMPUTE_OPS + 1):
        ref = np.sin(ref)
    np.testing.assert_allclose(got[0], ref.reshape(4, 32) + 1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], ref * 2, rtol=1e-5, atol=1e-6)
