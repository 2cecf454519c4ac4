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


def test_every_native_call_runs_inside_wgpu_py_error_capture() -> None:
    src = (ROOT / "pyaccel" / "runtime" / "_wgpu_direct.py").read_text()
    # libf's proxies capture around each call; the two raw functions are the dispatch pair,
    # called only in Direct.record, inside one capture of libf's own ErrorHandler
    raw = sorted(set(re.findall(r"\blib\.(wgpu\w+)", src)))
    assert raw == ["wgpuComputePassEncoderDispatchWorkgroups", "wgpuComputePassEncoderSetBindGroup"]
    assert "errors = libf._error_handler" in src
    assert src.count("self._set_group") == src.count("self._dispatch") == 2  # bound once, used in record
    body = src[src.index("    def record("):]
    body = body[:body.index("\n    def ", 1)]
    body = body[body.index('"""', body.index('"""') + 3):]  # the code after the docstring
    assert "self._set_group, self._dispatch" in body
    order = [body.index(s) for s in ("errors.capture(", "try:", "set_group(p,", "dispatch(p,",
                                     "finally:", "errors.release(", "raise ")]
    assert order == sorted(order), "the raw pair must run between capture and release (in finally)"
    calls = re.findall(r"self\._(write|create_group|poll)\(", src)
    assert sorted(calls) == ["create_group", "poll", "write"]
    assert src.count("# C: ") == 5


@pytest.mark.parametrize("value, direct", [("0", False), ("1", True)])
def test_env_switch(value: str, direct: bool) -> None:
    pytest.importorskip("wgpu")
    env = {**os.environ, "PYACCEL_WGPU_DIRECT": value, "PYTHONPATH": str(ROOT)}
    code = "from pyaccel.runtime import _wgpu_direct as m; print(m.DIRECT is not None)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(direct)
