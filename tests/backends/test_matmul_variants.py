"""Every float32 matmul kernel variant (gpu_kernels.MATMUL_VARIANTS) against NumPy.

Each variant is pinned with ``pyaccel.set_matmul_variant`` and run through the public
``matmul`` / ``@`` / ``tensordot`` on fresh random float32 data; the device's buffer pool
is poisoned with NaN buffers of the output's size first, so an output element a kernel
forgets to write shows up. A vec4 variant given K or N not a multiple of 4 falls back to
the default choice (checked by ``matmul_variant``), and is still compared.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import pyaccel
from pyaccel.ops import gpu_kernels as gk
from pyaccel.testing import POISON_F32

VARIANTS = [v for v in gk.MATMUL_VARIANTS if v != "naive"] + ["naive"]


@pytest.fixture(params=VARIANTS)
def variant(request):
    pyaccel.set_matmul_variant(request.param)
    yield request.param
    pyaccel.set_matmul_variant(None)


def _poison(dev, nbytes: int) -> None:
    data = (POISON_F32.to_bytes(4, "little") * (nbytes // 4 + 1))[:nbytes]
    bufs = [dev.malloc(nbytes) for _ in range(3)]
    for b in bufs:
        b.write(data)
    for b in bufs:
        b.free()


def _check(got: np.ndarray, a: np.ndarray, b: np.ndarray, what: str) -> None:
    af, bf = a.astype(np.float64), b.astype(np.float64)
    want = af @ bf
    mag = np.abs(af) @ np.abs(bf)
    assert got.shape == want.shape, what
    assert np.all(np.isfinite(got)), f"{what}: unwritten (NaN) outputs"
    err = np.abs(got - want)
    bad = err > 1e-5 * np.abs(want) + 2e-6 * mag + 1e-30
    assert not bad.any(), f"{what}: {bad.sum()} elements off, max err {err.max():.3g}"


SHAPES = [(1, 1, 1), (3, 17, 5), (17, 65, 3), (65, 129, 17), (129, 17, 65), (64, 64, 64),
          (33, 100, 132), (96, 8, 260)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_variant_matches_numpy(gpu_device, rng, variant, shape):
    M, K, N = shape
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    _poison(gpu_device, M * N * 4)
    got = np.asarray(pyaccel.asarray(a, device=gpu_device) @ pyaccel.asarray(b, device=gpu_device))
    _check(got, a, b, f"{variant} {shape}")


def test_variant_batched_and_transposed(gpu_device, rng, variant):
    a = rng.standard_normal((3, 40, 36)).astype(np.float32)
    b = rng.standard_normal((1, 36, 20)).astype(np.float32)  # broadcast batch
    xa, xb = pyaccel.asarray(a, device=gpu_device), pyaccel.asarray(b, device=gpu_device)
    _poison(gpu_device, 3 * 40 * 20 * 4)
    _check(np.asarray(pyaccel.matmul(xa, xb)), a, b, f"{variant} batched")
    # .mT of both operands: (3, 36, 40).mT @ (1, 20, 36).mT
    at = np.ascontiguousarray(np.swapaxes(a, -1, -2))
    bt = np.ascontiguousarray(np.swapaxes(b, -1, -2))
    got = np.asarray(pyaccel.asarray(at, device=gpu_device).mT @ pyaccel.asarray(bt, device=gpu_device).mT)
    _check(got, a, b, f"{variant} transposed")
    c = rng.standard_normal((36, 20, 4)).astype(np.float32)
    got = np.asarray(pyaccel.tensordot(xa, pyaccel.asarray(c, device=gpu_device), axes=([2], [0])))
    want = np.tensordot(a.astype(np.float64), c.astype(np.float64), axes=([2], [0]))
    assert np.allclose(got, want, rtol=1e-4, atol=1e-4), f"{variant} tensordot"


@pytest.mark.parametrize("variant_name", ["u16x8", "u16x16", "v8x4", "u16x4", "tiled", "reg8x4"])
def test_variant_k_past_one_chunk(gpu_device, rng, variant_name, monkeypatch):
    """K longer than one invocation's chunk (the Mesa loop cap): split and summed. Under
    CI=true the chunk is shrunk to 64 (the same split code at a cheap K; the real cap's
    K is up to 65,428 for v8x4, 8-10 s a device)."""
    pyaccel.set_matmul_variant(variant_name)
    if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
        monkeypatch.setitem(gk._MM_KC, variant_name, 64)
    try:
        kc = gk._MM_KC[variant_name]
        K = kc + 4 * 37  # past one chunk, a multiple of 4 so the vec4 kernels run
        a = rng.standard_normal((17, K)).astype(np.float32)
        b = rng.standard_normal((K, 20)).astype(np.float32)
        assert gk.matmul_variant(gpu_device, 17, K, 20) == variant_name
        _poison(gpu_device, 17 * 20 * 4)
        got = np.asarray(pyaccel.asarray(a, device=gpu_device) @ pyaccel.asarray(b, device=gpu_device))
        _check(got, a, b, f"{variant_name} K={K}")
    finally:
        pyaccel.set_matmul_variant(None)
