"""Manipulation functions and astype on every device, against NumPy (hypothesis shapes)."""

from __future__ import annotations

import numpy as np
import pytest
from _array_util import FEW, check, dtypes_for, np_dtype, poisoned, rand, small_shapes  # noqa: F401
from hypothesis import given, settings
from hypothesis import strategies as st

import pyaccel


@settings(max_examples=FEW)
@given(shape=small_shapes(max_dims=4, max_size=2000), data=st.data())
def test_manipulation_matches_numpy(device, rng, poisoned, shape, data):  # noqa: F811
    nd = len(shape)
    perm = data.draw(st.permutations(list(range(nd))))
    axis = data.draw(st.integers(-nd, nd - 1)) if nd else None
    shift = data.draw(st.integers(-7, 7))
    for dt in dtypes_for(device):
        x = rand(rng, dt, shape)
        X = pyaccel.asarray(x, device=device)
        what = f"{dt.name}{list(shape)}"
        check(pyaccel.permute_dims(X, perm), np.transpose(x, perm), "exact", f"permute_dims {what} {perm}")
        check(pyaccel.reshape(X, (-1,)), x.reshape(-1), "exact", "reshape -1")
        check(pyaccel.flip(X), np.flip(x), "exact", f"flip {what}")
        check(pyaccel.expand_dims(X, axis=0), x[None], "exact", "expand_dims")
        check(pyaccel.roll(X, shift), np.roll(x, shift), "exact", f"roll {what} {shift}")
        if nd:
            check(pyaccel.flip(X, axis=axis), np.flip(x, axis=axis), "exact", f"flip {what} axis {axis}")
            check(pyaccel.roll(X, shift, axis=axis), np.roll(x, shift, axis=axis), "exact",
                  f"roll {what} {shift} {axis}")
            check(pyaccel.concat([X, X], axis=axis), np.concatenate([x, x], axis=axis), "exact",
                  f"concat {what} {axis}")
            check(pyaccel.stack([X, X], axis=axis), np.stack([x, x], axis=axis), "exact",
                  f"stack {what} {axis}")
            check(pyaccel.moveaxis(X, 0, -1), np.moveaxis(x, 0, -1), "exact", "moveaxis")
            check(pyaccel.repeat(X, 2, axis=axis), np.repeat(x, 2, axis=axis), "exact", "repeat")
            for j, piece in enumerate(pyaccel.unstack(X, axis=axis)):
                check(piece, np.take(x, j, axis=axis), "exact", "unstack")
        if nd >= 2:
            check(pyaccel.matrix_transpose(X), np.swapaxes(x, -1, -2), "exact", "matrix_transpose")
        check(pyaccel.tile(X, (2,) * min(nd, 2) or (3,)), np.tile(x, (2,) * min(nd, 2) or (3,)), "exact",
              "tile")
        big = (2,) + tuple(shape)
        check(pyaccel.broadcast_to(X, big), np.broadcast_to(x, big), "exact", f"broadcast_to {what}")
        check(pyaccel.concat([X, X], axis=None), np.concatenate([x.ravel(), x.ravel()]), "exact",
              "concat axis=None")


def test_astype_every_pair(device, rng, poisoned):  # noqa: F811
    dts = dtypes_for(device)
    for src in dts:
        x = rand(rng, src, (5, 67), specials=False)
        if src.kind == "f":
            x = np.clip(x, -100, 100)  # float -> int of NaN/out-of-range is implementation-defined
            x[0, :4] = [-1.0, -0.0, 0.5, -7.9]
        X = pyaccel.asarray(x, device=device)
        for dst in dts:
            if src.kind == "f" and dst.kind == "u":
                xs = x[x >= 0]  # NumPy's negative float -> unsigned is undefined behaviour in C
                want = xs.astype(np_dtype(dst))
                check(pyaccel.astype(pyaccel.asarray(xs, device=device), dst), want, "exact",
                      f"astype {src.name}->{dst.name}")
                continue
            with np.errstate(all="ignore"):
                want = x.astype(np_dtype(dst))
            check(pyaccel.astype(X, dst), want, "exact" if dst.kind != "f" or src.kind != "f" else "arith",
                  f"astype {src.name}->{dst.name}")
    a = pyaccel.ones(3, dtype="float32", device=device)
    assert pyaccel.astype(a, "float32", copy=False) is a
    assert pyaccel.astype(a, "float32") is not a
    f = pyaccel.asarray(np.array([np.nan, -1.0, 2.0], np.float32), device=device)
    check(f.astype(pyaccel.bool), np.array([True, True, True]), "exact", "float -> bool (NaN is True)")


def test_shape_functions(device, rng):
    x = rand(rng, pyaccel.int32, (2, 1, 3, 1))
    X = pyaccel.asarray(x, device=device)
    check(pyaccel.squeeze(X, axis=1), x.squeeze(1), "exact", "squeeze")
    check(pyaccel.squeeze(X, axis=(1, 3)), x.squeeze((1, 3)), "exact", "squeeze tuple")
    with pytest.raises(ValueError, match="size 2"):
        pyaccel.squeeze(X, axis=0)
    check(pyaccel.expand_dims(X, axis=-1), x[..., None], "exact", "expand_dims -1")
    r = pyaccel.reshape(X, (3, 2))
    assert r.__pyaccel_buffer__() is X.__pyaccel_buffer__()  # shares (C-contiguous)
    assert pyaccel.reshape(X, (6,), copy=True).__pyaccel_buffer__() is not X.__pyaccel_buffer__()
    with pytest.raises(ValueError, match="-1"):
        pyaccel.reshape(X, (-1, -1))
    a, b = pyaccel.broadcast_arrays(pyaccel.asarray(x, device=device), pyaccel.ones((4, 1, 1, 1, 5),
                                                                                   device=device))
    assert a.shape == b.shape == (4, 2, 1, 3, 5)
    with pytest.raises(ValueError, match="broadcast"):
        pyaccel.broadcast_to(X, (3, 3))
    with pytest.raises(ValueError, match="permutation"):
        pyaccel.permute_dims(X, (0, 0, 1, 2))
    with pytest.raises(ValueError, match="match except"):
        pyaccel.concat([X, pyaccel.ones((2, 2, 3, 1), dtype="int32", device=device)], axis=0)
    mixed = pyaccel.concat([pyaccel.ones(2, dtype="int8", device=device),
                            pyaccel.ones(3, dtype="uint8", device=device)])
    assert mixed.dtype == pyaccel.int16 and mixed.tolist() == [1] * 5


def test_take(device, rng):
    x = rand(rng, pyaccel.float32, (5, 6))
    X = pyaccel.asarray(x, device=device)
    idx = np.array([4, 0, -1, 2], np.int32)
    IDX = pyaccel.asarray(idx, device=device)
    check(pyaccel.take(X, IDX, axis=1), np.take(x, idx, axis=1), "exact", "take axis 1")
    check(pyaccel.take(X, IDX, axis=0), np.take(x, idx, axis=0), "exact", "take axis 0")
    v = pyaccel.reshape(X, (-1,))
    check(pyaccel.take(v, IDX), np.take(x.ravel(), idx), "exact", "take 1-d")
    order = np.argsort(x, axis=1).astype(np.int32)
    check(pyaccel.take_along_axis(X, pyaccel.asarray(order, device=device), axis=1),
          np.take_along_axis(x, order, axis=1), "exact", "take_along_axis")
    check(pyaccel.repeat(X, pyaccel.asarray([1, 0, 2, 1, 3], device=device), axis=0),
          np.repeat(x, [1, 0, 2, 1, 3], axis=0), "exact", "repeat with array repeats")


@pytest.mark.slow
@settings(max_examples=max(FEW, 30))
@given(shape=small_shapes(max_dims=6, max_size=4000), data=st.data())
def test_permute_many_dims(device, rng, shape, data):
    perm = data.draw(st.permutations(list(range(len(shape)))))
    for dt in dtypes_for(device):
        x = rand(rng, dt, shape)
        check(pyaccel.permute_dims(pyaccel.asarray(x, device=device), perm), np.transpose(x, perm),
              "exact", f"permute_dims {shape} {perm}")


def test_more_than_eight_axes(device, rng):
    """Kernels take 8 strided axes per dispatch; more are split over dispatches."""
    shape = (2, 3, 2, 3, 2, 3, 2, 3, 2, 2)
    x = rand(rng, pyaccel.int32, shape)
    perm = list(range(len(shape)))[::-1]
    X = pyaccel.asarray(x, device=device)
    check(pyaccel.permute_dims(X, perm), np.transpose(x, perm), "exact", "10-d transpose")
    check(X + pyaccel.permute_dims(pyaccel.permute_dims(X, perm), perm), x + x, "exact", "10-d add")
