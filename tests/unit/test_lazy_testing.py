"""``pyaccel.testing`` is an attribute after a plain ``import pyaccel``, loaded on first use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_CODE = r"""
import json, sys
import pyaccel
before = sorted(m for m in sys.modules if m.startswith("pyaccel.testing") or m in ("pytest", "numpy")
                or m.startswith("pyaccel.extras") or m.startswith("dask"))
import numpy as np
k = pyaccel.Kernel('''
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x < arrayLength(&y)) { y[g.x] = 2.0 * x[g.x]; } }
''', reference=lambda x, y: y.__setitem__(slice(None), 2 * x))
x = np.random.default_rng().random(100).astype(np.float32)
pyaccel.testing.assert_matches_oracle(k, x, np.zeros(100, np.float32), grid=100, device="cpu")
try:  # it really compares: different arrays fail
    pyaccel.testing.assert_allclose_dtype(x, x + 1, "float32")
    caught = False
except AssertionError:
    caught = True
print(json.dumps({"before": before, "after": "pyaccel.testing" in sys.modules, "caught": caught,
                  "dir": "testing" in dir(pyaccel)}))
"""


def test_testing_is_lazy_and_works() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-c", _CODE], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["before"] == []  # import pyaccel loads neither pyaccel.testing, pytest, nor extras
    assert got["after"] and got["dir"]
    assert got["caught"]  # the oracle check really compares (a wrong kernel fails it)


def test_unknown_attribute_still_raises() -> None:
    import pyaccel

    try:
        pyaccel.no_such_thing  # noqa: B018
    except AttributeError as e:
        assert "no_such_thing" in str(e)
    else:
        raise AssertionError("pyaccel.no_such_thing did not raise")
