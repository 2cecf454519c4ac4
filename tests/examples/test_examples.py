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
}


def test_every_example_is_listed() -> None:
    found = {p.name for p in (ROOT / "examples").glob("*.py") if not p.name.startswith("_")}
    assert found == set(EXAMPLES), "add new examples to EXAMPLES so they are tested"


@pytest.mark.parametrize("uri", ["cpu:0", "vulkan:0"])
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example(name: str, uri: str, tmp_path: Path) -> None:
    import pyaccel

    if uri not in [d.uri for d in pyaccel.devices()]:
        pytest.skip(f"{uri} is not available here")
    args = [sys.executable, str(ROOT / "examples" / name), "--device", uri, *EXAMPLES[name]]
    if name == "mandelbrot.py":
        args += ["--out", str(tmp_path / "m.png")]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "-> OK" in out and uri in out, out
    if name == "mandelbrot.py":
        assert (tmp_path / "m.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
