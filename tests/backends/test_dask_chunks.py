"""pyaccel Arrays as Dask chunks (pyaccel/_dask.py, docs/interop.md), checked against NumPy.

The threaded scheduler on cpu:0 and vulkan:0; one 2-process ``LocalCluster`` where each
worker process opens its own vulkan:0.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import pyaccel

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
URIS = ["cpu:0", "vulkan:0"]


def _dev(uri: str) -> pyaccel.Device:
    if uri not in [d.uri for d in pyaccel.devices()]:
        pytest.skip(f"{uri} is not available here")
    return pyaccel.device(uri)


def _check(res: object, want: np.ndarray, dev: pyaccel.Device, tol: float = 2e-5) -> None:
    assert isinstance(res, pyaccel.Array), type(res)
    assert res.device is dev
    got = res.to_numpy()
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.fixture(scope="module", autouse=True)
def _threads():
    with dask.config.set(scheduler="threads"):
        yield


@pytest.mark.parametrize("uri", URIS)
def test_chunked_ops_match_numpy(uri: str, rng: np.random.Generator) -> None:
    dev = _dev(uri)
    a = rng.standard_normal((9, 7)).astype(np.float32)
    b = rng.standard_normal((7, 5)).astype(np.float32)
    x = pyaccel.asarray(a, device=dev)
    d = da.from_array(x, chunks=(4, 3))
    db = da.from_array(pyaccel.asarray(b, device=dev), chunks=(3, 5))
    assert isinstance(d._meta, pyaccel.Array) and d._meta.size == 0 and d._meta.device is dev
    assert d.dtype == np.float32 and d.numblocks == (3, 3)
    _check((d + 1).compute(), a + 1, dev)
    _check((d * d - 2 * d).compute(), a * a - 2 * a, dev)
    _check(da.exp(d).compute(), np.exp(a), dev)
    _check(np.exp(d).compute(), np.exp(a), dev)  # NumPy's ufunc on the Dask array
    _check(da.maximum(d, 0).compute(), np.maximum(a, 0), dev)
    _check((d @ db).compute(), a @ b, dev, 1e-4)
    _check(da.tensordot(d, d, axes=((0,), (0,))).compute(), np.tensordot(a, a, axes=((0,), (0,))),
           dev, 1e-4)
    _check(da.concatenate([d, d[:, :2]], axis=1).compute(), np.concatenate([a, a[:, :2]], 1), dev)
    _check(d.rechunk((5, 7)).T.compute(), a.T, dev)
    _check(d.map_blocks(lambda blk: pyaccel.sin(blk) * 2).compute(), np.sin(a) * 2, dev)
    _check(d[2:8:2, ::-1].compute(), a[2:8:2, ::-1], dev)


def test_building_graphs_touches_no_data(rng: np.random.Generator) -> None:
    # tokens and 0-size metadata arrays: no readback (Dask would otherwise pickle the array to
    # hash it), no kernel compiled or dispatched, nothing submitted until compute()
    dev = _dev("vulkan:0")
    x = pyaccel.asarray(rng.standard_normal((64, 32)).astype(np.float32), device=dev)
    dev.synchronize()
    keys = ("pipelines_compiled", "dispatches", "submits")
    before = {k: dev.memory_stats()[k] for k in keys}
    d = da.from_array(x, chunks=(16, 16))
    graphs = [da.exp(d) + 1, d.sum(axis=0, keepdims=True), d.mean(axis=1), d @ d.T,
              da.concatenate([d, d]), d.rechunk((32, 8)), d.max()]
    assert {k: dev.memory_stats()[k] for k in keys} == before
    for g in graphs:  # 0-size metadata on the device (0-d for full reductions, as with NumPy)
        assert isinstance(g._meta, pyaccel.Array) and g._meta.device is dev
        assert g._meta.size == 0 or g._meta.ndim == 0
    from dask.base import tokenize

    assert tokenize(x) == tokenize(x)  # the token is stable per buffer ...
    assert tokenize(pyaccel.reshape(x, (32, 64))) != tokenize(x)
    assert tokenize(pyaccel.asarray(x, copy=True)) != tokenize(x)  # ... and differs between buffers
    x += 1.0  # from_array took a snapshot (a device copy, as Dask does with NumPy arrays)
    np.testing.assert_allclose(d.compute().to_numpy(), x.to_numpy() - 1, atol=1e-6)


@pytest.mark.parametrize("uri", URIS)
def test_reductions_with_axis_and_keepdims(uri: str, rng: np.random.Generator) -> None:
    dev = _dev(uri)
    a = (rng.random((10, 6)) + 0.5).astype(np.float32)  # prod stays in range
    d = da.from_array(pyaccel.asarray(a, device=dev), chunks=(3, 4))
    for name in ("sum", "mean", "max", "min", "prod"):
        for axis in (None, 0, 1, (0, 1)):
            for keepdims in (False, True):
                res = getattr(d, name)(axis=axis, keepdims=keepdims).compute()
                want = getattr(a.astype(np.float64), name)(axis=axis, keepdims=keepdims)
                _check(res, want, dev, 1e-4)


@pytest.mark.parametrize("uri", URIS)
def test_var_std_need_int64_counts(uri: str, rng: np.random.Generator) -> None:
    # Dask's moment_chunk casts element counts to int64: where a device holds int64 var/std
    # match NumPy, elsewhere they fail with the typed dtype error (never a wrong value)
    dev = _dev(uri)
    a = rng.standard_normal((8, 6)).astype(np.float32)
    d = da.from_array(pyaccel.asarray(a, device=dev), chunks=(3, 4))
    if pyaccel.Capability.INT64 in dev.capabilities:
        _check(d.std(axis=0).compute(), a.std(axis=0), dev, 1e-4)
        _check(d.var(axis=1, keepdims=True).compute(), a.var(axis=1, keepdims=True), dev, 1e-4)
    else:
        with pytest.raises(pyaccel.UnsupportedDTypeError, match="int64"):
            d.std(axis=0).compute()


def test_numpy_protocols_on_plain_arrays(rng: np.random.Generator) -> None:
    dev = _dev("vulkan:0")
    a = rng.standard_normal((4, 3)).astype(np.float32)
    x = pyaccel.asarray(a, device=dev)
    _check(np.exp(x), np.exp(a), dev)
    _check(np.add.reduce(x, axis=1), a.sum(1), dev)
    _check(np.sum(x, axis=0, keepdims=True), a.sum(0, keepdims=True), dev)
    _check(np.concatenate([x, a]), np.concatenate([a, a]), dev)  # NumPy member uploaded
    _check(np.float32(2.0) * x, 2 * a, dev)
    # issue 19: what has no device twin is NumPy on the host copy (NumPy's result), and writes
    # into out= reach the pyaccel array (these raised TypeError before)
    mixed = np.ones(3, np.float32) + x
    assert type(mixed) is np.ndarray
    np.testing.assert_array_equal(mixed, np.ones(3, np.float32) + a)
    y = pyaccel.asarray(a, device=dev)
    assert np.exp(y, out=y) is y
    _check(y, np.exp(a), dev)
    assert np.percentile(x, 50) == np.percentile(a, 50)
    assert np.dtype(pyaccel.float32) == np.float32


_HOOK = """
import sys
{first}
import pyaccel._dask as h
def state():
    return f"registered={{h.is_registered()}} hook={{h._HOOK in sys.meta_path}}"
print(state())
{then}
print(state())
"""


@pytest.mark.parametrize("first,then,env,want", [
    # the hook arms at import pyaccel and fires (then leaves) when dask.array is imported
    ("import pyaccel", "import dask.array", "1", ["registered=False hook=True",
                                                 "registered=True hook=False"]),
    # dask already imported: registered at once, no hook
    ("import dask.array; import pyaccel", "", "1", ["registered=True hook=False"] * 2),
    # hook disabled: nothing happens until register()
    ("import pyaccel; import dask.array", "import pyaccel.extras.dask as e; e.register()", "0",
     ["registered=False hook=False", "registered=True hook=False"]),
])
def test_registration_is_automatic(first: str, then: str, env: str, want: list[str]) -> None:
    e = {**os.environ, "PYTHONPATH": str(ROOT), "PYACCEL_DASK_HOOK": env}
    r = subprocess.run([sys.executable, "-c", _HOOK.format(first=first, then=then)],
                       capture_output=True, text=True, env=e, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-2:] == want


def _worker_state() -> tuple[int, list[str]]:
    from pyaccel.registry import REGISTRY

    return os.getpid(), sorted(REGISTRY._devices)


def test_local_cluster_two_processes(rng: np.random.Generator, monkeypatch) -> None:
    distributed = pytest.importorskip("distributed")
    dev = _dev("vulkan:0")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the workers import this checkout
    a = rng.standard_normal((12, 8)).astype(np.float32)
    d = da.from_array(pyaccel.asarray(a, device=dev), chunks=(3, 8))  # 4 chunks
    t0 = time.monotonic()
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        pids = {w.pid for w in cluster.workers.values()}
        res, mm = dask.compute((da.exp(d) * 2).sum(axis=0, keepdims=True), d.T @ d)
        state = client.run(_worker_state)
    assert time.monotonic() - t0 < 120  # (bounded; typical ~10 s)
    _check(res, (np.exp(a) * 2).sum(0, keepdims=True), dev, 1e-4)
    _check(mm, a.T @ a, dev, 1e-3)
    assert len(state) == 2
    assert {pid for pid, _ in state.values()} == pids and os.getpid() not in pids
    busy = [devs for _, devs in state.values() if "vulkan:0" in devs]
    assert busy, f"no worker opened vulkan:0: {state}"  # the chunks ran on the workers' own device
    for pid in pids:  # no worker process left behind
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"worker process {pid} still runs after the cluster closed")
