"""The device lock is taken once per public op (issue 22 item 6), and every impl call that
records GPU state runs while the calling thread holds it.

The op layer takes ``device.impl.lock`` at the op's entry (a provider method, the
elementwise memo, ``Kernel.__call__``); everything below it (``WgslOps.output``, the
kernel generators, ``gpu_kernels``, ``Device.malloc`` inside an op, and the impl's
``alloc`` / ``alloc_output`` / ``pipeline`` / ``uniform`` / ``dispatch*``) records under
that one acquisition. A counting proxy replaces the lock; results are checked against
NumPy on fresh random data.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import pyaccel as xp
from pyaccel.device import Device
from pyaccel.nn import softmax

# impl methods that assume the caller holds the lock (GPUImpl's recording calls + alloc)
HELD = ("alloc", "alloc_output", "pipeline", "uniform", "dispatch", "dispatch_bound",
        "dispatch_group")


class CountingLock:
    """An RLock that counts acquisitions (blocking or not) and knows its owner."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.n = 0

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        ok = self.inner.acquire(blocking, timeout)
        self.n += bool(ok)
        return ok

    def release(self) -> None:
        self.inner.release()

    def _is_owned(self) -> bool:
        return self.inner._is_owned()

    def __enter__(self) -> CountingLock:
        self.acquire()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()


@pytest.fixture
def counted(gpu_device: Device) -> Iterator[tuple[Device, CountingLock, list[str]]]:
    """The device with its lock replaced by a CountingLock (memos and provider rebuilt so
    nothing holds the old object) and the HELD impl methods checking ownership; yields
    (device, lock, names of HELD calls made without the lock)."""
    dev = gpu_device
    impl = dev.impl
    dev.synchronize()
    old = impl.lock
    lk = CountingLock(old)
    unheld: list[str] = []
    saved = {}
    for name in HELD:
        fn = getattr(impl, name)
        saved[name] = impl.__dict__.get(name)

        def checked(*a: Any, _fn: Any = fn, _name: str = name, **k: Any) -> Any:
            if not old._is_owned():
                unheld.append(_name)
            return _fn(*a, **k)

        setattr(impl, name, checked)
    had_f = hasattr(impl.f, "lock")
    impl.lock = dev._lock = lk
    if had_f:
        impl.f.lock = lk
    dev._memos.clear()
    dev.__dict__.pop("ops", None)
    try:
        yield dev, lk, unheld
    finally:
        dev.synchronize()
        impl.lock = dev._lock = old
        if had_f:
            impl.f.lock = old
        for name in HELD:
            if saved[name] is None:
                delattr(impl, name)
            else:
                setattr(impl, name, saved[name])
        dev._memos.clear()
        dev.__dict__.pop("ops", None)


def _f32(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def test_one_acquisition_per_op(counted, rng) -> None:
    dev, lk, unheld = counted
    xh, yh, ah = _f32(rng, 64), _f32(rng, 64), _f32(rng, 16, 16)
    y2h = _f32(rng, 2)
    x, y = xp.asarray(xh, device=dev), xp.asarray(yh, device=dev)
    a, y2 = xp.asarray(ah, device=dev), xp.asarray(y2h, device=dev)
    keep: list[Any] = []  # results stay alive: a freed buffer's release is not the op's

    def setitem() -> None:
        x[1:3] = y2

    cases = {"x + y": lambda: x + y, "sum(x)": lambda: xp.sum(x), "x[1:3] = y": setitem,
             "matmul": lambda: xp.matmul(a, a)}
    x0h = xh.copy()
    counts = {}
    with xp.fusion(False):  # eager: the op records its dispatch now
        for name, fn in cases.items():
            for _ in range(2):  # warm: kernels compiled, memos filled
                keep.append(fn())
            dev.synchronize()
            lk.n = 0
            keep.append(fn())
            counts[name] = lk.n
    assert counts == {"x + y": 1, "sum(x)": 1, "x[1:3] = y": 1, "matmul": 1}, counts
    assert not unheld, f"impl calls made without the device lock: {sorted(set(unheld))}"
    # and they computed the right thing
    np.testing.assert_allclose(keep[2].to_numpy(), x0h + yh, rtol=1e-6)
    np.testing.assert_allclose(keep[5].to_numpy(), x0h.sum(), rtol=1e-4, atol=1e-4)
    x0h[1:3] = y2h
    np.testing.assert_array_equal(x.to_numpy(), x0h)
    np.testing.assert_allclose(keep[11].to_numpy(), ah @ ah, rtol=1e-4, atol=1e-4)


def test_every_recording_impl_call_holds_the_lock(counted, rng) -> None:
    """A sweep over the op families (threads included): no HELD impl method runs unlocked."""
    dev, lk, unheld = counted
    xh, ah = _f32(rng, 40), _f32(rng, 6, 6)
    x, a = xp.asarray(xh, device=dev), xp.asarray(ah, device=dev)
    checks = [
        (lambda: xp.exp(x) * 2 + x, np.exp(xh) * 2 + xh),
        (lambda: xp.sum(a, axis=0), ah.sum(axis=0)),
        (lambda: xp.argmax(x), np.argmax(xh)),
        (lambda: xp.cumulative_sum(x), np.cumsum(xh)),
        (lambda: xp.sort(x), np.sort(xh)),
        (lambda: xp.matmul(a, a), ah @ ah),
        (lambda: a[1:4, ::2] + 1, ah[1:4, ::2] + 1),
        (lambda: xp.concat([x, x]), np.concatenate([xh, xh])),
        (lambda: xp.astype(x, xp.int32), xh.astype(np.int32)),
        (lambda: xp.linalg.solve(a + 8 * xp.eye(6, device=dev), a),
         np.linalg.solve(ah + 8 * np.eye(6, dtype=np.float32), ah)),
        (lambda: xp.mean(a, axis=1), ah.mean(axis=1)),
        (lambda: xp.arange(7, device=dev), np.arange(7)),
        (lambda: xp.searchsorted(xp.sort(x), x), np.searchsorted(np.sort(xh), xh)),
        (lambda: softmax(a, axis=-1),
         np.exp(ah - ah.max(-1, keepdims=True)) / np.exp(ah - ah.max(-1, keepdims=True)).sum(-1, keepdims=True)),
        (lambda: xp.fft.fft(xp.astype(x, xp.complex64)), np.fft.fft(xh.astype(np.complex64))),
    ]
    if xp.float64 in xp.__array_namespace_info__().dtypes(device=dev).values():
        x64h = rng.standard_normal(20)
        x64 = xp.asarray(x64h, device=dev)
        checks.append((lambda: xp.sum(x64 * x64), np.sum(x64h * x64h)))
    for fn, want in checks:
        got = fn().to_numpy()
        if want is not None:
            np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4)

    errors: list[BaseException] = []

    def worker(seed: int) -> None:
        r = np.random.default_rng(seed)
        try:
            for _ in range(10):
                uh, vh = _f32(r, 33), _f32(r, 33)
                u, v = xp.asarray(uh, device=dev), xp.asarray(vh, device=dev)
                np.testing.assert_allclose(xp.sum(u * v + u).to_numpy(), np.sum(uh * vh + uh),
                                           rtol=1e-4, atol=1e-4)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert not unheld, f"impl calls made without the device lock: {sorted(set(unheld))}"
