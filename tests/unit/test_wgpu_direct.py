"""wgpu-py private internals live in one module (runtime/_wgpu_direct.py), probed once, and
PYACCEL_WGPU_DIRECT=0 turns them off (the facade then uses only wgpu-py's public API)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRIVATE = re.compile(r"\._internal\b|\blibf\b|wgpu_native\._ffi|wgpu_native\._api|READ_NOSYNC|\._poll\b"
                     r"|GPUBindGroup\(|\._state\b")


def test_private_wgpu_names_only_in_the_direct_module() -> None:
    offenders = []
    for path in (ROOT / "pyaccel").rglob("*.py"):
        if path.name == "_wgpu_direct.py":
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if PRIVATE.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not offenders, "wgpu-py internals outside runtime/_wgpu_direct.py:\n" + "\n".join(offenders)


def test_every_native_call_goes_through_libf_with_its_c_signature() -> None:
    src = (ROOT / "pyaccel" / "runtime" / "_wgpu_direct.py").read_text()
    assert not re.search(r"\blib\.wgpu", src), "a raw lib. call skips wgpu-py's error capture"
    calls = re.findall(r"self\._(set_group|dispatch|write|create_group|poll)\(", src)
    assert len(calls) == 5
    assert src.count("# C: ") == 5


@pytest.mark.parametrize("value, direct", [("0", False), ("1", True)])
def test_env_switch(value: str, direct: bool) -> None:
    pytest.importorskip("wgpu")
    env = {**os.environ, "PYACCEL_WGPU_DIRECT": value, "PYTHONPATH": str(ROOT)}
    code = "from pyaccel.runtime import _wgpu_direct as m; print(m.DIRECT is not None)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(direct)
