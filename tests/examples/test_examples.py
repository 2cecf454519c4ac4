"""Every example runs on cpu:0 and vulkan:0 (small sizes) and passes its own NumPy-oracle check."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = {
    "heat_diffusion.py": ["--n", "96", "--steps", "20", "--repeat", "1"],
    "kmeans.py": ["--points", "3000", "--k", "8", "--iters", "5", "--repeat", "1"],
    "mlp.py": ["--batch", "64", "--width", "128", "--repeat", "1"],
    "mandelbrot.py": ["--width", "160", "--height", "120", "--max-iter", "100", "--repeat", "1"],
    "sklearn_pca.py": ["--components", "12", "--repeat", "1"],
    "dask_reduce.py": ["--quick", "1", "--repeat", "1"],
    "wgpu_render_field.py": ["--width", "96", "--height", "64", "--repeat", "1"],
}
# examples that run on other devices than cpu:0 + vulkan:0 (wgpu_render_field needs a native
# wgpu-py device; gl:0 is covered by tests/backends/test_extras_wgpu.py)
URIS = {"dask_reduce.py": ["vulkan:0"], "wgpu_render_field.py": ["vulkan:0"]}


def test_every_example_is_listed() -> None:
    found = {p.name for p in (ROOT / "examples").glob("*.py") if not p.name.startswith("_")}
    assert found == set(EXAMPLES), "add new examples to EXAMPLES so they are tested"


@pytest.mark.parametrize("name,uri", [(n, u) for n in sorted(EXAMPLES)
                                      for u in URIS.get(n, ["cpu:0", "vulkan:0"])])
def test_example(name: str, uri: str, tmp_path: Path) -> None:
    import pyaccel

    if uri not in [d.uri for d in pyaccel.devices()]:
        pytest.skip(f"{uri} is not available here")
    args = [sys.executable, str(ROOT / "examples" / name), "--device", uri, *EXAMPLES[name]]
    if name == "mandelbrot.py":
        args += ["--out", str(tmp_path / "m.png")]
    if name == "wgpu_render_field.py":
        args += ["--out", str(tmp_path / "f.png")]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "-> OK" in out and uri in out, out
    if name == "mandelbrot.py":
        assert (tmp_path / "m.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if name == "wgpu_render_field.py":
        _check_field_png(tmp_path / "f.png", 96, 64)


def _check_field_png(path: Path, w: int, h: int) -> None:
    """The PNG's pixels are the NumPy rendering of the same field (decoded independently)."""
    import importlib.util

    import numpy as np

    spec = importlib.util.spec_from_file_location("wgpu_render_field", ROOT / "examples" / "wgpu_render_field.py")
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(ROOT / "examples"))
    img = mod.read_png(str(path))
    want = mod.numpy_render(mod.compute_field(np, h, w))
    assert img.shape == (h, w, 4)
    assert len(np.unique(img.reshape(-1, 4), axis=0)) > 50  # a picture, not a flat colour
    diff = np.abs(img.astype(np.int16) - want).max(axis=-1)
    assert np.mean(diff > 2) <= 1e-3, f"{int(np.sum(diff > 2))} pixels differ from NumPy's rendering"
