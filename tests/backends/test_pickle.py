"""Pickling and copying of Arrays and Devices (docs/interop.md), on every device.

Round trips keep dtype, shape, values and device; another process opens the same URI, or
its current device (``PYACCEL_DEVICE``) when that URI does not exist there.
"""

from __future__ import annotations

import copy
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pyaccel
from pyaccel._pickle import rebuild_array
from pyaccel.promotion import device_dtypes

ROOT = Path(__file__).resolve().parents[2]


def _random(rng: np.random.Generator, dtype: pyaccel.DType, shape: tuple[int, ...]) -> np.ndarray:
    nd = np.dtype(dtype.name)
    if nd.kind == "b":
        return rng.random(shape) < 0.5
    if nd.kind in "iu":
        info = np.iinfo(nd)
        return rng.integers(max(info.min, -(2**31)), min(info.max, 2**31 - 1), size=shape,
                            endpoint=True).astype(nd)
    if nd.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(nd)
    return (rng.standard_normal(shape) * 100).astype(nd)


def _same(y: pyaccel.Array, x: pyaccel.Array, want: np.ndarray) -> None:
    assert type(y) is pyaccel.Array
    assert y.device is x.device
    assert y.dtype is x.dtype
    assert y.shape == x.shape
    got = y.to_numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)  # bit-exact (NaN-free data)


def test_every_dtype_round_trips(device: pyaccel.Device, rng: np.random.Generator) -> None:
    for i, dt in enumerate(device_dtypes(device)):
        a = _random(rng, dt, (3, 5))
        x = pyaccel.asarray(a, device=device)
        proto = (2, 3, 4, 5)[i % 4]
        _same(pickle.loads(pickle.dumps(x, protocol=proto)), x, a)
        _same(copy.deepcopy(x), x, a)


@pytest.mark.parametrize("proto", [2, 3, 4, 5])
@pytest.mark.parametrize("shape", [(), (0, 4), (2, 3, 4)], ids=["0d", "empty", "3d"])
def test_shapes_and_protocols(device: pyaccel.Device, rng: np.random.Generator, proto: int,
                              shape: tuple[int, ...]) -> None:
    a = _random(rng, pyaccel.float32, shape)
    x = pyaccel.asarray(a, device=device)
    _same(pickle.loads(pickle.dumps(x, protocol=proto)), x, a)


def test_views_pickle_their_own_data(device: pyaccel.Device, rng: np.random.Generator) -> None:
    a = _random(rng, pyaccel.float32, (4, 6))
    x = pyaccel.asarray(a, device=device)
    views = {"reshape": (pyaccel.reshape(x, (3, 8)), a.reshape(3, 8)),
             "transpose": (x.T, a.T), "slice": (x[1:3, ::2], a[1:3, ::2])}
    for name, (v, want) in views.items():
        y = pickle.loads(pickle.dumps(v))
        assert y.shape == want.shape, name
        np.testing.assert_array_equal(y.to_numpy(), want, err_msg=name)


def test_protocol5_sends_data_out_of_band(device: pyaccel.Device, rng: np.random.Generator) -> None:
    a = _random(rng, pyaccel.float32, (64,))
    x = pyaccel.asarray(a, device=device)
    buffers: list[pickle.PickleBuffer] = []
    s = pickle.dumps(x, protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 1 and buffers[0].raw().nbytes == a.nbytes
    assert len(s) < a.nbytes  # the data is not in the stream
    _same(pickle.loads(s, buffers=buffers), x, a)


def test_copies_are_independent(device: pyaccel.Device, rng: np.random.Generator) -> None:
    a = _random(rng, pyaccel.float32, (5, 3))
    x = pyaccel.asarray(a, device=device)
    shallow, deep = copy.copy(x), copy.deepcopy(x)
    holder = copy.deepcopy({"k": [x, x]})
    assert holder["k"][0] is holder["k"][1]  # deepcopy's memo: one copy per object
    x += 1.0
    for c in (shallow, deep, holder["k"][0]):
        assert c.device is device
        assert c._buf is not x._buf
        np.testing.assert_array_equal(c.to_numpy(), a)
    np.testing.assert_array_equal(x.to_numpy(), a + np.float32(1))


def test_device_pickles_as_its_uri(device: pyaccel.Device) -> None:
    s = pickle.dumps(device)
    assert device.uri.encode() in s and len(s) < 200
    assert pickle.loads(s) is device


def test_unpicklable_things_say_why(device: pyaccel.Device) -> None:
    buf = device.malloc(16)
    with pytest.raises(TypeError, match="cannot be pickled; pickle an Array"):
        pickle.dumps(buf)
    x = pyaccel.asarray([1.0, 2.0], device=device)
    x._buf.free()
    with pytest.raises(pyaccel.BufferFreedError, match="pickling a pyaccel array"):
        pickle.dumps(x)
    y = pyaccel.asarray([3.0], device=device)  # the device is still usable
    assert pickle.loads(pickle.dumps(y)).tolist() == [3.0]


class _Forged:
    """Pickles like an array from a device that does not exist here."""

    def __init__(self, uri: str, a: np.ndarray) -> None:
        self.uri, self.a = uri, a

    def __reduce__(self) -> tuple:
        return (rebuild_array, (self.uri, self.a.dtype.name, self.a.shape, self.a.tobytes()))


def test_missing_uri_goes_to_the_current_device(rng: np.random.Generator) -> None:
    a = _random(rng, pyaccel.float32, (2, 3))
    s = pickle.dumps(_Forged("vulkan:97", a))
    with pyaccel.using("cpu:0"):
        with pytest.warns(RuntimeWarning, match="'vulkan:97'.*current device 'cpu:0'"):
            y = pickle.loads(s)
    assert y.device.uri == "cpu:0"
    np.testing.assert_array_equal(y.to_numpy(), a)


_CHILD = r"""
import json, pickle, sys, warnings
import numpy as np
warnings.simplefilter("always")
out = []
with warnings.catch_warnings(record=True) as w:
    for blob in pickle.load(sys.stdin.buffer):
        x = pickle.loads(blob)
        out.append([x.device.uri, x.dtype.name, list(x.shape), x.to_numpy().ravel().tolist()])
print(json.dumps({"arrays": out, "warnings": [str(m.message) for m in w]}))
"""


def test_unpickling_in_another_process(rng: np.random.Generator) -> None:
    uris = [u for u in ("cpu:0", "vulkan:0") if u in [d.uri for d in pyaccel.devices()]]
    arrays = [_random(rng, pyaccel.float32, (3, 2)), _random(rng, pyaccel.int32, (4,))]
    blobs, want = [], []
    for uri in uris:
        for a in arrays:
            blobs.append(pickle.dumps(pyaccel.asarray(a, device=uri), protocol=5))
            want.append([uri, a.dtype.name, list(a.shape), a.ravel().tolist()])
    blobs.append(pickle.dumps(_Forged("vulkan:97", arrays[0])))  # no such device there
    want.append(["cpu:0", "float32", [3, 2], arrays[0].ravel().tolist()])
    blobs.append(pickle.dumps(pyaccel.device(uris[-1])))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYACCEL_DEVICE": "cpu"}
    code = _CHILD.replace("out.append([", "out.append([x.uri, None, None, None] if isinstance(x, "
                          "__import__('pyaccel').Device) else [")
    r = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(blobs), capture_output=True,
                       env=env, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    got = json.loads(r.stdout.decode().strip().splitlines()[-1])
    assert got["arrays"][:-1] == want
    assert got["arrays"][-1][0] == uris[-1]  # a Device opens the same URI there
    assert len(got["warnings"]) == 1 and "vulkan:97" in got["warnings"][0]
