"""x[key] and x[key] = value on every device, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from _array_util import FEW, check, dtypes_for, poisoned, rand  # noqa: F401
from hypothesis import given, settings
from hypothesis import strategies as st

import pyaccel

SHAPE = (4, 5, 6)
IDX = np.array([3, 0, -1, 1], np.int32)
J = np.array([[0, 3], [2, 2]], np.int32)

BASIC_KEYS = [
    0, -1, (1, 2), (1, 2, 3), slice(None), slice(1, 3), slice(None, None, -1), slice(3, 0, -2),
    (Ellipsis, 1), (slice(None), None, 2), (None, Ellipsis, None), (0, slice(None, None, 2), -1),
    (slice(10, 20),), (slice(-100, 100, 3), Ellipsis), (Ellipsis,), (), (2, Ellipsis, slice(1, 5, 3)),
    (slice(1, 1),), (slice(None), slice(4, 1, -1), slice(None, None, -3)),
]


def adv_keys(dev):
    Id, Jd = (pyaccel.asarray(v, device=dev) for v in (IDX, J))
    return [
        (Id, IDX), ((slice(None), Id), (slice(None), IDX)), ((Id, 1), (IDX, 1)), ((1, slice(None), Jd), (1, slice(None), J)),
        ((Id, slice(None), Id), (IDX, slice(None), IDX)), ((slice(1, 3), Jd, 0), (slice(1, 3), J, 0)),
        (([1, 0, 1], slice(None), [2, 5, 0]), ([1, 0, 1], slice(None), [2, 5, 0])),
        ((0, [4, -5]), (0, [4, -5])), ((Ellipsis, Id[:2]), (Ellipsis, IDX[:2])),
        ((None, Id, None), (None, IDX, None)), ((Jd, Jd[0]), (J, J[0])),
    ]


def test_basic_getitem(device, rng, poisoned):  # noqa: F811
    for dt in dtypes_for(device):
        x = rand(rng, dt, SHAPE)
        X = pyaccel.asarray(x, device=device)
        for key in BASIC_KEYS:
            check(X[key], np.asarray(x[key]), "exact", f"{dt.name}[{key!r}]")


def test_integer_array_getitem(device, rng, poisoned):  # noqa: F811
    x = rand(rng, pyaccel.float32, SHAPE)
    X = pyaccel.asarray(x, device=device)
    for key, npkey in adv_keys(device):
        check(X[key], x[npkey], "exact", f"[{npkey!r}]")
    with pytest.raises(IndexError, match="out of bounds"):
        X[[0, 7]]
    with pytest.raises(IndexError, match="integer"):
        X[pyaccel.asarray([0.5], device=device)]


def test_boolean_getitem(device, rng, poisoned):  # noqa: F811
    for dt in dtypes_for(device):
        x = rand(rng, dt, SHAPE)
        X = pyaccel.asarray(x, device=device)
        m = rng.random(SHAPE) < 0.4
        check(X[pyaccel.asarray(m, device=device)], x[m], "exact", f"{dt.name}[mask]")
        m2 = rng.random(SHAPE[:2]) < 0.5
        check(X[pyaccel.asarray(m2, device=device)], x[m2], "exact", "leading 2-d mask")
        m1 = rng.random(SHAPE[1]) < 0.5
        check(X[:, pyaccel.asarray(m1, device=device), 1], x[:, m1, 1], "exact", "mask in the middle")
        check(X[X > X[0, 0, 0]] if dt.kind != "b" else X[X], x[x > x[0, 0, 0]] if dt.kind != "b" else x[x],
              "exact", "mask from a comparison")
    X = pyaccel.asarray(rand(rng, pyaccel.int32, (3,)), device=device)
    check(X[True], X.to_numpy()[True], "exact", "x[True]")
    check(X[False], X.to_numpy()[False], "exact", "x[False]")
    with pytest.raises(IndexError, match="match"):
        X[pyaccel.asarray([True, False], device=device)]


def test_setitem(device, rng):
    for dt in dtypes_for(device):
        x = rand(rng, dt, SHAPE)
        v = rand(rng, dt, SHAPE)
        scalar = True if dt.kind == "b" else (3 if dt.kind in "iu" else -1.5)
        cases = [
            (1, v[0]), ((slice(None), 2), v[:, 0]), ((Ellipsis, slice(None, None, -2)), v[..., ::2]),
            (slice(1, 3), scalar), ((0, 1, 2), scalar), ((slice(None), slice(None), 0), v[0, :, 0]),
            (pyaccel.asarray(rng.random(SHAPE) < 0.5, device=device), scalar),
            ((pyaccel.asarray(IDX, device=device), 1), v[0, 0, :]),
            (([0, 2], slice(None), [1, 5]), scalar),
            ((slice(None), pyaccel.asarray(J, device=device)), v[:, :1, :1, None]),
        ]
        for key, val in cases:
            want = x.copy()
            npkey = tuple(k.to_numpy() if isinstance(k, pyaccel.Array) else k for k in key) if isinstance(
                key, tuple) else (key.to_numpy() if isinstance(key, pyaccel.Array) else key)
            want[npkey] = val
            X = pyaccel.asarray(x, device=device)
            buf = X.__pyaccel_buffer__()
            X[key] = pyaccel.asarray(val, device=device) if isinstance(val, np.ndarray) else val
            assert X.__pyaccel_buffer__() is buf  # in place (these keys repeat no position)
            check(X, want, "exact", f"{dt.name}[{key!r:.60}] = ...")
    X = pyaccel.asarray(rand(rng, pyaccel.float32, (6,)), device=device)
    m = np.array([True, False, True, False, False, True])
    X[pyaccel.asarray(m, device=device)] = pyaccel.asarray(np.array([1.0, 2.0, 3.0], np.float32), device=device)
    assert X.to_numpy()[m].tolist() == [1.0, 2.0, 3.0]
    X[1:] = X[:-1]  # overlapping source and destination
    Y = pyaccel.asarray(np.arange(5, dtype=np.int32), device=device)
    Y[1:] = Y[:-1]
    assert Y.tolist() == [0, 0, 1, 2, 3]
    with pytest.raises(OverflowError, match="uint8"):
        U = pyaccel.zeros(3, dtype="uint8", device=device)
        U[0] = 256
    with pytest.raises(ValueError, match="broadcast"):
        Y[:2] = pyaccel.ones(3, dtype="int32", device=device)
    Y[0] = 9.7  # floats into ints truncate, like NumPy
    assert Y.tolist()[0] == 9


@settings(max_examples=FEW)
@given(data=st.data())
def test_random_slices(device, rng, poisoned, data):  # noqa: F811
    shape = data.draw(st.lists(st.integers(0, 9), min_size=1, max_size=4).map(tuple))
    key = tuple(
        data.draw(st.one_of(st.integers(-n, n - 1) if n else st.just(slice(None)),
                            st.builds(slice, st.none() | st.integers(-12, 12), st.none() | st.integers(-12, 12),
                                      st.none() | st.integers(-4, 4).filter(bool))))
        for n in shape
    )
    x = rand(rng, pyaccel.int16, shape)
    X = pyaccel.asarray(x, device=device)
    check(X[key], np.asarray(x[key]), "exact", f"{shape}[{key!r}]")
    val = rand(rng, pyaccel.int16, np.asarray(x[key]).shape)
    want = x.copy()
    want[key] = val
    X[key] = pyaccel.asarray(val, device=device)
    check(X, want, "exact", f"{shape}[{key!r}] = v")
