"""The command line: ``pyaccel devices | info [URI] | doctor | demo`` (run as ``python -m pyaccel``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import pyaccel


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    e = {**os.environ, **(env or {})}
    if env is None or "PYACCEL_DEVICE" not in env:
        e.pop("PYACCEL_DEVICE", None)
    return subprocess.run([sys.executable, "-m", "pyaccel", *args], capture_output=True, text=True,
                          env=e, timeout=180)


def test_devices_lists_every_device_and_marks_the_default() -> None:
    p = run_cli("devices")
    assert p.returncode == 0, p.stderr
    for d in pyaccel.devices():
        assert d.uri in p.stdout
    default = pyaccel.default_device_uri()
    assert any(line.startswith(f"* {default} ") for line in p.stdout.splitlines()), p.stdout
    assert "webgpu" in p.stdout and "not running in a browser (Pyodide)" in p.stdout


def test_devices_honours_pyaccel_device() -> None:
    uri = next(d.uri for d in reversed(pyaccel.devices()))
    p = run_cli("devices", env={"PYACCEL_DEVICE": uri})
    assert p.returncode == 0, p.stderr
    assert f"* default device: {uri} (from PYACCEL_DEVICE=" in p.stdout


def test_info_reports_adapter_api_limits() -> None:
    for d in pyaccel.devices():
        p = run_cli("info", d.uri)
        assert p.returncode == 0, p.stderr
        assert f"Device {d.uri}" in p.stdout and d.name in p.stdout
        assert f"api             : {d.api}" in p.stdout
        assert "max_storage_binding_size" in p.stdout and "capabilities" in p.stdout


@pytest.mark.parametrize("bad, kind, text", [
    ("vulkan:abc", "InvalidDeviceURIError", "'vulkan:abc'"),
    ("cuda:0", "DeviceNotFoundError", "'cuda'"),
    ("cpu:7", "DeviceNotFoundError", "'cpu:7'"),
])
def test_info_bad_uri_exits_1_with_the_reason(bad: str, kind: str, text: str) -> None:
    p = run_cli("info", bad)
    assert p.returncode == 1
    assert kind in p.stderr and text in p.stderr


def test_doctor_names_each_backend_and_fixes() -> None:
    p = run_cli("doctor", env={"PYACCEL_DEVICE": "cuda:0,cpu"})
    assert p.returncode == 0, p.stderr
    for name in ("webgpu", "wgpu", "cpu"):
        assert f"] {name}:" in p.stdout
    assert "[FAIL] cuda:0" in p.stdout and "[ok] cpu -> cpu:0" in p.stdout
    assert "default device: cpu:0" in p.stdout
    assert "fix:" in p.stdout  # the unavailable browser backend says how to get it


def test_demo_checks_every_gpu_against_numpy() -> None:
    p = run_cli("demo")
    assert p.returncode == 0, p.stdout + p.stderr
    for d in pyaccel.devices():
        if d.api != "cpu":
            assert any(line.strip().startswith(d.uri) and line.rstrip().endswith(("OK", "OK (default)"))
                       for line in p.stdout.splitlines()), p.stdout
    assert "MISMATCH" not in p.stdout


def test_python_dash_m_without_command_prints_help() -> None:
    p = run_cli()
    assert p.returncode == 0 and "devices" in p.stdout and "doctor" in p.stdout


def _num(line: str, unit: str) -> float:
    return float(line.split(unit)[0].split()[-1])


def test_bench_prints_adapter_limits_and_pyaccel_fractions() -> None:
    """``pyaccel bench --limits-only`` (cheap sizes): the FMA peak and copy bandwidth through
    raw wgpu-py, and matmul / add as % of them, consistent with the printed figures."""
    gpus = [d.uri for d in pyaccel.devices() if d.api != "cpu"]
    if not gpus:
        pytest.skip("no GPU device (pyaccel.devices() lists cpu only)")
    p = run_cli("bench", "--limits-only", "--quick", "--device", gpus[0], "--sizes", "64,128",
                "--add-size", "65536")
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith(f"Adapter limits and pyaccel against them: {gpus[0]} = "), p.stdout
    peak = _num(next(ln for ln in lines if "FMA peak (raw wgpu-py)" in ln), "GFLOP/s")
    copy = _num(next(ln for ln in lines if "copy bandwidth (raw wgpu-py)" in ln), "GB/s")
    assert peak > 0 and copy > 0
    mm = [ln for ln in lines if ln.strip().startswith("matmul float32")]
    assert [int(ln.split()[2].rstrip("^2")) for ln in mm] == [64, 128], p.stdout
    for ln in mm:
        gf, pct = _num(ln, "GFLOP/s"), _num(ln, "% of FMA peak")
        assert gf > 0 and abs(pct - 100 * gf / peak) <= 0.06 + 0.01 * pct, ln
        assert "variant " in ln
    add = next(ln for ln in lines if ln.strip().startswith("add float32"))
    gbs, pct = _num(add, "GB/s"), _num(add, "% of copy")
    assert gbs > 0 and abs(pct - 100 * gbs / copy) <= 0.06 + 0.01 * pct, add
    assert "65,536" in add


def test_bench_rejects_bad_sizes() -> None:
    p = run_cli("bench", "--limits-only", "--sizes", "64,big")
    assert p.returncode == 2 and "'64,big': want comma-separated integers" in p.stderr
