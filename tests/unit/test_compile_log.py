"""PYACCEL_COMPILE_LOG: one line per compiled pipeline; an unwritable path warns once and
stops logging, and never fails the compile."""

from __future__ import annotations

import types

import pytest

from pyaccel.runtime import webgpu_common as wc


def _impl():
    return types.SimpleNamespace(f=types.SimpleNamespace(label="vulkan"))


def test_compile_log_line(tmp_path, monkeypatch) -> None:
    log = tmp_path / "c.txt"
    monkeypatch.setattr(wc, "_COMPILE_LOG", str(log))
    wc._log_compile(_impl(), "fn main() {}", "main", "add", 0.25)
    pid, api, entry, h, n, secs, name = log.read_text().rstrip("\n").split("\t")
    assert (api, entry, n, secs, name) == ("vulkan", "main", "12", "0.2500", "add") and len(h) == 12


def test_unwritable_compile_log_warns_and_stops(tmp_path, monkeypatch) -> None:
    bad = str(tmp_path / "missing" / "c.txt")
    monkeypatch.setattr(wc, "_COMPILE_LOG", bad)
    with pytest.warns(RuntimeWarning, match="PYACCEL_COMPILE_LOG=.*missing.*writable"):
        wc._log_compile(_impl(), "fn main() {}", "main", "add", 0.1)
    assert wc._COMPILE_LOG == ""
