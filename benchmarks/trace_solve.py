"""Trace one ``pyaccel.linalg.solve`` of a 4 x 4 float32 system (a warm call: kernels
compiled, memos filled by a first call) and print what it costs in Python: the calls
cProfile counts, the source files they run in, and the climbs back into the namespace
(calls into ``pyaccel/indexing.py``, ``elementwise.py``, ``reductions.py``,
``manipulation.py`` made from the op layer ``pyaccel/ops/``), and the dispatches recorded.

Usage: ``python benchmarks/trace_solve.py [--device vulkan:0] [--n 4] [--json]``.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys

import numpy as np

import pyaccel

NAMESPACE = ("indexing.py", "elementwise.py", "reductions.py", "manipulation.py", "linalg.py",
             "creation.py", "fft.py", "nn.py", "ranking.py")


def _rel(path: str) -> str:
    root = os.path.dirname(os.path.dirname(os.path.abspath(pyaccel.__file__)))
    return os.path.relpath(path, root) if path.startswith(root) else path


_PKG = os.path.dirname(os.path.abspath(pyaccel.__file__))
_PASS = ("placement.py", "_dispatch.py", "array.py")  # wrappers between a caller and the namespace


def _is_namespace(path: str) -> bool:
    return os.path.dirname(path) == _PKG and os.path.basename(path) in NAMESPACE


def _climbs(fn) -> tuple[list[str], int]:
    """Entries into a namespace module whose nearest pyaccel caller (past the placement /
    dispatch / Array-operator wrappers) is in ``pyaccel/ops/`` (one per call made), and the
    number of calls into namespace modules made anywhere below an op-layer frame (nested
    ones included)."""
    out: list[str] = []
    under = [0]
    ops_dir = os.path.join(_PKG, "ops") + os.sep

    def prof(frame, event, arg):
        if event != "call" or not _is_namespace(frame.f_code.co_filename):
            return
        g = frame.f_back
        while g is not None and not g.f_code.co_filename.startswith(ops_dir):
            g = g.f_back
        if g is not None:  # any namespace call with an op-layer frame below it
            under[0] += 1
        f = frame.f_back
        while f is not None:
            path = f.f_code.co_filename
            if _is_namespace(path):
                return  # a call inside the namespace, not an entry
            if not (os.path.dirname(path) == _PKG and os.path.basename(path) in _PASS):
                break
            f = f.f_back
        if f is not None and f.f_code.co_filename.startswith(ops_dir):
            out.append(f"{_rel(f.f_code.co_filename)}:{f.f_code.co_name} -> "
                       f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_code.co_name}")

    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return out, under[0]


def trace(device: str, n: int) -> dict:
    dev = pyaccel.device(device)
    rng = np.random.default_rng(0)
    a_np = (rng.standard_normal((n, n)) + n * np.eye(n)).astype(np.float32)
    b_np = rng.standard_normal((n, 1)).astype(np.float32)
    a = pyaccel.asarray(a_np, device=dev)
    b = pyaccel.asarray(b_np, device=dev)
    pyaccel.linalg.solve(a, b).to_numpy()  # warm: pipelines, plans, memos
    dev.synchronize()
    impl = dev.impl
    counted = {"dispatch": 0}
    patched = []
    for name in ("dispatch", "dispatch_bound", "dispatch_group"):
        fn = getattr(impl, name, None)
        if fn is None:
            continue

        def wrap(*args, _fn=fn, **kwargs):
            counted["dispatch"] += 1
            return _fn(*args, **kwargs)
        try:
            setattr(impl, name, wrap)
            patched.append(name)
        except AttributeError:
            pass
    climbs, under = _climbs(lambda: pyaccel.linalg.solve(a, b))
    counted["dispatch"] = 0
    prof = cProfile.Profile()
    prof.enable()
    x = pyaccel.linalg.solve(a, b)
    prof.disable()
    x.block_until_ready()  # (a lazy result's kernel is one of solve's dispatches: count it)
    for name in patched:
        delattr(impl, name)
    got = x.to_numpy()
    assert np.allclose(got, np.linalg.solve(a_np, b_np), rtol=1e-4, atol=1e-5), "wrong solve result"
    st = pstats.Stats(prof)
    calls = 0
    files: set[str] = set()
    pkg = os.path.dirname(os.path.abspath(pyaccel.__file__))
    for (path, _line, _func), (_cc, nc, _tt, _ct, _callers) in st.stats.items():  # type: ignore[attr-defined]
        calls += nc
        if path.startswith(pkg):
            files.add(_rel(path))
    return {"device": dev.uri, "n": n, "python_calls": calls, "pyaccel_files": sorted(files),
            "files": len(files), "climbs": climbs, "n_climbs": len(climbs), "namespace_calls_under_ops": under,
            "dispatch_calls": counted["dispatch"] if patched else None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="vulkan:0")
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    r = trace(args.device, args.n)
    if args.json:
        print(json.dumps(r, indent=1))
        return 0
    print(f"linalg.solve {r['n']}x{r['n']} float32 on {r['device']} (warm call)")
    print(f"  Python calls (cProfile): {r['python_calls']}")
    print(f"  pyaccel files touched:   {r['files']}")
    for f in r["pyaccel_files"]:
        print(f"    {f}")
    print(f"  climbs ops/ -> namespace: {r['n_climbs']}")
    for c in sorted(set(r["climbs"])):
        print(f"    {c} x{r['climbs'].count(c)}")
    print(f"  namespace calls below an op-layer frame (nested included): {r['namespace_calls_under_ops']}")
    print(f"  dispatches recorded:     {r['dispatch_calls']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
