"""Importing pyaccel starts nothing: no GPU runtime, no NumPy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _modules_after(code: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys, json\n"
         "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('wgpu', 'numpy'))))"],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_pyaccel_loads_neither_wgpu_nor_numpy() -> None:
    assert _modules_after("import pyaccel") == []


def test_import_testing_helpers_loads_neither_wgpu_nor_numpy() -> None:
    assert _modules_after("import pyaccel.testing") == []


def test_listing_backends_is_what_loads_the_runtimes() -> None:
    # the check above is not vacuous: asking for devices does load them
    loaded = _modules_after("import pyaccel; pyaccel.devices()")
    assert "numpy" in loaded


def test_backends_function_survives_backend_discovery() -> None:
    # a subpackage named like the function would replace pyaccel.backends on first import
    import pyaccel

    pyaccel.devices()
    import pyaccel.runtime.cpu  # noqa: F401

    assert callable(pyaccel.backends)
    assert {b.name for b in pyaccel.backends()} >= {"cpu", "wgpu", "webgpu"}
