"""``pyaccel.jit`` (pyaccel/jit.py, docs/jit.md): trace once per signature, replay after.

Every jitted result is compared bit for bit with the same function run un-jitted (same fusion
setting) and with NumPy within tolerance, on fresh random data, twice with different inputs.
Replay outputs are poisoned: before a replay the pool is filled with buffers of the trace's
allocation sizes holding 0xFF bytes (NaN as float32, -1 as int32), which the replay's
allocations take, so an element a replayed kernel did not write shows. Counters, never timings:
``device.memory_stats()["dispatches"]`` and ``Jitted.trace_count``.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import pyaccel
from pyaccel.jit import _ALLOC

RTOL = 2e-5


def _up(dev, a):
    return pyaccel.asarray(a, device=dev)


def _disp(dev) -> int:
    return dev.memory_stats()["dispatches"]


def _poison_pool(dev, jf) -> None:
    """Put a 0xFF-filled buffer of every allocation size of ``jf``'s traces into the pool."""
    sizes = [ev[2] for t in jf.traces() for ev in t.events if ev[0] == _ALLOC]
    bufs = [dev.malloc(max(n, 4)) for n in sizes]
    for b in bufs:
        b.write(b"\xff" * b.nbytes)
    for b in bufs:
        b.free()


def _prog(xp, x, y, w, s):
    a = xp.tanh(x * s + y)  # fused elementwise
    b = xp.matmul(a, w)  # a sink: matmul kernel
    c = xp.sum(b * b, axis=1)  # fused, then a reduction
    d = xp.sort(c)
    e = x[:, ::2] - 1.5  # a strided view read by a fused kernel
    return {"b": b, "d": d, "e": e, "n": 3}


def _data(rng, m=24, k=16, n=8):
    return (rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((m, k)).astype(np.float32),
            rng.standard_normal((k, n)).astype(np.float32))


def _check(got, want_dev, want_np):
    assert got["n"] == 3
    for key in ("b", "d", "e"):
        g = got[key].to_numpy()
        np.testing.assert_array_equal(g, want_dev[key].to_numpy(), err_msg=f"{key}: jit vs un-jitted")
        np.testing.assert_allclose(g, want_np[key], rtol=RTOL, atol=2e-5, err_msg=f"{key}: jit vs NumPy")


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "eager"])
def test_jit_matches_unjitted_and_numpy(gpu_device, rng, fused) -> None:
    dev = gpu_device
    jf = pyaccel.jit(_prog, static_argnums=(0,))
    with pyaccel.fusion(fused):
        outs = []
        for call in range(3):
            a, b, w = _data(rng)
            x, y, ww = _up(dev, a), _up(dev, b), _up(dev, w)
            if call:
                _poison_pool(dev, jf)
            got = jf(pyaccel, x, y, ww, 0.75)
            want = _prog(pyaccel, x, y, ww, 0.75)
            _check(got, want, _prog(np, a, b, w, np.float32(0.75)))
            outs.append((got, {k: got[k].to_numpy() for k in ("b", "d", "e")}))
        assert jf.trace_count == 1 and jf.replay_count == 2
        # fresh buffers per call: an earlier call's outputs are not overwritten by a later one
        for got, vals in outs:
            for k in ("b", "d", "e"):
                np.testing.assert_array_equal(got[k].to_numpy(), vals[k])
        ids = {id(got[k]._b) for got, _ in outs for k in ("b", "d", "e")}
        assert len(ids) == 9


def test_retrace_on_new_signature(gpu_device, rng) -> None:
    dev = gpu_device
    seen = []

    @pyaccel.jit(static_argnames="mode")
    def f(x, s, mode="add"):
        seen.append(1)  # a Python side effect: runs at trace time only
        return x + s if mode == "add" else x * s

    a = rng.standard_normal(64).astype(np.float32)
    x = _up(dev, a)
    f(x, 2.0)
    f(x, 2.0)
    assert f.trace_count == 1 and len(seen) == 1
    f(_up(dev, a[:32]), 2.0)  # new shape
    assert f.trace_count == 2
    xi = _up(dev, (a * 10).astype(np.int32))
    np.testing.assert_array_equal(f(xi, 3).to_numpy(), (a * 10).astype(np.int32) + 3)  # new dtype
    assert f.trace_count == 3
    np.testing.assert_array_equal(f(x, 3.0).to_numpy(), a + np.float32(3.0))  # new scalar value
    assert f.trace_count == 4
    np.testing.assert_array_equal(f(x, 3.0, mode="mul").to_numpy(), a * np.float32(3.0))
    assert f.trace_count == 5
    with pyaccel.fusion(False):  # the fusion switch is part of the signature
        f(x, 3.0)
    assert f.trace_count == 6
    f(x[::2], 3.0)  # a strided view: a new layout
    assert f.trace_count == 7
    np.testing.assert_array_equal(f(_up(dev, a + 1)[::2], 3.0).to_numpy(), (a + 1)[::2] + np.float32(3))
    assert f.trace_count == 7 and len(seen) == 7
    f.clear()
    f(x, 2.0)
    assert f.trace_count == 8


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "eager"])
def test_100_ops_replay_the_traced_dispatches(gpu_device, rng, fused) -> None:
    dev = gpu_device

    def hundred(x, y):
        v = x
        for i in range(100):
            if i % 25 == 24:
                v = v - pyaccel.mean(v, axis=0)  # a reduction every 25 ops (a sink)
            elif i % 3 == 0:
                v = pyaccel.tanh(v * 1.01 + y)
            elif i % 3 == 1:
                v = v * 0.9 - 0.05
            else:
                v = pyaccel.maximum(v, y * 0.5)
        return v

    jf = pyaccel.jit(hundred)
    with pyaccel.fusion(fused):
        a, b = (rng.standard_normal((32, 16)).astype(np.float32) for _ in range(2))
        x, y = _up(dev, a), _up(dev, b)
        d0 = _disp(dev)
        jf(x, y)
        traced = _disp(dev) - d0
        (t,) = jf.traces()
        assert t.ndispatches == traced
        if not fused:
            assert traced >= 100
        a, b = (rng.standard_normal((32, 16)).astype(np.float32) for _ in range(2))
        x, y = _up(dev, a), _up(dev, b)
        _poison_pool(dev, jf)
        d0 = _disp(dev)
        got = jf(x, y)
        assert _disp(dev) - d0 == traced
        want = hundred(x, y)
        np.testing.assert_array_equal(got.to_numpy(), want.to_numpy())
        ref = a
        for i in range(100):
            if i % 25 == 24:
                ref = ref - ref.mean(axis=0, dtype=np.float32)
            elif i % 3 == 0:
                ref = np.tanh(ref * np.float32(1.01) + b)
            elif i % 3 == 1:
                ref = ref * np.float32(0.9) - np.float32(0.05)
            else:
                ref = np.maximum(ref, b * np.float32(0.5))
        np.testing.assert_allclose(got.to_numpy(), ref, rtol=1e-4, atol=1e-5)


DATA_DEPENDENT = [
    ("pyaccel.nonzero", lambda x: pyaccel.nonzero(x > 0)),
    ("pyaccel.unique_values", lambda x: pyaccel.unique_values(x)),
    ("x[key]", lambda x: x[x > 0]),
    ("bool(x)", lambda x: x if x[0] > 0 else -x),
    ("float(x)", lambda x: x * float(pyaccel.sum(x))),
    ("x.item()", lambda x: x + pyaccel.max(x).item()),
    ("x.to_numpy()", lambda x: x.to_numpy()),
    ("str(x)", lambda x: print(x)),
]


@pytest.mark.parametrize(("name", "fn"), DATA_DEPENDENT, ids=[d[0] for d in DATA_DEPENDENT])
def test_data_dependent_ops_raise_naming_the_call(gpu_device, rng, name, fn) -> None:
    dev = gpu_device
    a = rng.standard_normal(16).astype(np.float32)
    x = _up(dev, a)
    jf = pyaccel.jit(fn)
    with pytest.raises(pyaccel.JitError, match=r"pyaccel\.jit: " + name.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")) as ei:
        jf(x)
    assert "Fix: move that call out of the jitted function" in str(ei.value)
    assert isinstance(ei.value, pyaccel.PyaccelError) and isinstance(ei.value, RuntimeError)
    assert jf.trace_count == 0 and dev.impl._rec is None
    # the device stays usable, eagerly and jitted
    np.testing.assert_allclose((x * 2 + 1).to_numpy(), a * 2 + 1, rtol=1e-6)
    g = pyaccel.jit(lambda v: pyaccel.exp(v) - 1)
    np.testing.assert_allclose(g(x).to_numpy(), np.exp(a) - 1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g(x).to_numpy(), np.exp(a) - 1, rtol=1e-5, atol=1e-6)


def test_a_caught_jit_error_still_fails_the_trace(gpu_device, rng) -> None:
    x = _up(gpu_device, rng.standard_normal(8).astype(np.float32))

    def f(v):
        try:
            bool(v[0] > 0)
        except pyaccel.JitError:
            pass
        return v + 1

    with pytest.raises(pyaccel.JitError, match=r"bool\(x\)"):
        pyaccel.jit(f)(x)


def test_threads_share_a_jitted_function(gpu_device, rng) -> None:
    dev = gpu_device
    jf = pyaccel.jit(lambda x, y: pyaccel.sum(pyaccel.exp(x * 0.5) * y, axis=0) + x[0])
    inputs = [tuple(rng.standard_normal((16, 8)).astype(np.float32) for _ in range(2)) for _ in range(4)]
    errors: list[BaseException] = []

    def work(a, b):
        try:
            for _ in range(5):
                got = jf(_up(dev, a), _up(dev, b)).to_numpy()
                want = (np.exp(a * np.float32(0.5)) * b).sum(axis=0) + a[0]
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    ts = [threading.Thread(target=work, args=ab) for ab in inputs]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors[0]
    assert jf.trace_count == 1 and jf.replay_count == 19


def test_captured_arrays_and_side_effects(gpu_device, rng) -> None:
    dev = gpu_device
    a, c = rng.standard_normal(32).astype(np.float32), rng.standard_normal(32).astype(np.float32)
    cap = _up(dev, c)
    calls = []

    def f(x):
        calls.append(1)
        return x * cap

    jf = pyaccel.jit(f)
    x = _up(dev, a)
    np.testing.assert_array_equal(jf(x).to_numpy(), a * c)
    c2 = rng.standard_normal(32).astype(np.float32)
    cap[...] = _up(dev, c2)  # mutated in place: later calls see it (bound by buffer identity)
    np.testing.assert_array_equal(jf(x).to_numpy(), a * c2)
    cap = _up(dev, c)  # rebinding the name: the trace still reads the old buffer  # noqa: F841
    np.testing.assert_array_equal(jf(x).to_numpy(), a * c2)
    assert len(calls) == 1  # side effects ran once, at trace time


def test_writes_into_arguments_and_returning_them(gpu_device, rng) -> None:
    dev = gpu_device

    @pyaccel.jit
    def f(x, y):
        x[1:3] = 7.0
        x += y
        return x, x[::2], y * 2

    for _ in range(2):
        a, b = rng.standard_normal(8).astype(np.float32), rng.standard_normal(8).astype(np.float32)
        x, y = _up(dev, a), _up(dev, b)
        r, v, z = f(x, y)
        ref = a.copy()
        ref[1:3] = 7.0
        ref += b
        assert r._b is x._b and v._b is x._b
        np.testing.assert_array_equal(x.to_numpy(), ref)
        np.testing.assert_array_equal(v.to_numpy(), ref[::2])
        np.testing.assert_array_equal(z.to_numpy(), b * 2)
    assert f.trace_count == 1


def test_shared_argument_buffers_are_part_of_the_signature(gpu_device, rng) -> None:
    dev = gpu_device

    @pyaccel.jit
    def f(x, y):
        x += 1.0
        return y * 2

    a = rng.standard_normal(8).astype(np.float32)
    x = _up(dev, a)
    np.testing.assert_array_equal(f(x, x).to_numpy(), (a + 1) * 2)  # y is x: sees the write
    x2, y2 = _up(dev, a), _up(dev, a)
    np.testing.assert_array_equal(f(x2, y2).to_numpy(), a * 2)  # distinct: does not
    assert f.trace_count == 2


def test_nested_jit_and_kernels(gpu_device, rng) -> None:
    dev = gpu_device
    inner = pyaccel.jit(lambda v: v * 3 + 1)
    outer = pyaccel.jit(lambda v: pyaccel.sqrt(pyaccel.abs(inner(v))))
    for _ in range(2):
        a = rng.standard_normal(40).astype(np.float32)
        np.testing.assert_allclose(outer(_up(dev, a)).to_numpy(), np.sqrt(np.abs(a * 3 + 1)), rtol=1e-6)
    assert outer.trace_count == 1 and inner.trace_count == 0  # inside a trace: inlined


def test_arguments_are_checked(gpu_device, rng) -> None:
    dev = gpu_device
    jf = pyaccel.jit(lambda x, s: x + s[0])
    with pytest.raises(TypeError, match=r"argument 1 is a bytearray"):
        jf(_up(dev, np.ones(4, np.float32)), bytearray(b"ab"))
    with pytest.raises(TypeError, match=r"NumPy array of shape \(4,\)"):
        jf(np.ones(4, np.float32), (1,))
    with pytest.raises(TypeError, match="static_argnums must be ints"):
        pyaccel.jit(lambda x: x, static_argnums=("a",))
    with pytest.raises(TypeError, match="fn must be callable"):
        pyaccel.jit(3)
    cpu = pyaccel.device("cpu:0")
    with pytest.raises(pyaccel.JitError, match="on two devices|are on"):
        pyaccel.jit(lambda a, b: a)(_up(dev, np.ones(2, np.float32)), _up(cpu, np.ones(2, np.float32)))


def test_cpu_calls_the_function(rng) -> None:
    cpu = pyaccel.device("cpu:0")
    calls = []

    @pyaccel.jit
    def f(x, s):
        calls.append(1)
        return x * s

    a = rng.standard_normal(8).astype(np.float32)
    for _ in range(3):
        np.testing.assert_array_equal(f(_up(cpu, a), 2.0).to_numpy(), a * np.float32(2))
    assert len(calls) == 3 and f.trace_count == 0
    assert f.__wrapped__ is not f and f.__name__ == "f"
    with pytest.raises(TypeError, match="bytearray"):
        f(_up(cpu, a), bytearray(b"x"))


def test_pytree_and_keyword_arguments(gpu_device, rng) -> None:
    dev = gpu_device

    @pyaccel.jit
    def f(pair, *, scale, extra):
        x, y = pair
        return [x * scale + extra["z"], None, (y - x, 5)]

    for _ in range(2):
        a, b, c = (rng.standard_normal(12).astype(np.float32) for _ in range(3))
        r = f((_up(dev, a), _up(dev, b)), scale=2.0, extra={"z": _up(dev, c)})
        assert r[1] is None and r[2][1] == 5 and isinstance(r, list) and isinstance(r[2], tuple)
        np.testing.assert_array_equal(r[0].to_numpy(), a * np.float32(2) + c)
        np.testing.assert_array_equal(r[2][0].to_numpy(), b - a)
    assert f.trace_count == 1 and f.replay_count == 1
    f((_up(dev, a), _up(dev, b)), scale=3.0, extra={"z": _up(dev, c)})
    assert f.trace_count == 2


def test_an_error_inside_the_trace_caches_nothing(gpu_device, rng) -> None:
    dev = gpu_device
    fail = [True]

    @pyaccel.jit
    def f(x):
        y = pyaccel.exp(x) * 2
        z = pyaccel.sum(y, axis=0)
        if fail[0]:
            raise ValueError("boom")
        return z

    a = rng.standard_normal((8, 4)).astype(np.float32)
    x = _up(dev, a)
    with pytest.raises(ValueError, match="boom"):
        f(x)
    assert f.trace_count == 0 and dev.impl._rec is None
    fail[0] = False
    for _ in range(2):
        np.testing.assert_allclose(f(x).to_numpy(), (np.exp(a) * 2).sum(axis=0), rtol=1e-5)
    assert f.trace_count == 1


def test_the_device_is_part_of_the_signature(rng) -> None:
    gpus = [d for d in pyaccel.devices() if not d.uri.startswith(("cpu", "webgpu"))]
    if len(gpus) < 2:
        pytest.skip(f"needs two GPU devices, this machine has {[d.uri for d in gpus]}")
    f = pyaccel.jit(lambda x: pyaccel.exp(x) + 1)
    a = rng.standard_normal(16).astype(np.float32)
    for desc in gpus[:2]:
        dev = pyaccel.device(desc.uri)
        for _ in range(2):
            got = f(_up(dev, a))
            assert got.device is dev
            np.testing.assert_allclose(got.to_numpy(), np.exp(a) + 1, rtol=1e-6)
    assert f.trace_count == 2 and f.replay_count == 2
