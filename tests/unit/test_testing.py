"""pyaccel.testing: tolerance table, assert_allclose_dtype, poison, the oracle check, the plugin."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pyaccel
from pyaccel.testing import (
    TOLERANCES,
    assert_allclose_dtype,
    assert_matches_oracle,
    poison,
    tolerance,
)

ROOT = Path(__file__).resolve().parents[2]

SCALE = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&y)) { y[g.x] = x[g.x] * 3.0; }
}
"""


def test_tolerance_table() -> None:
    assert TOLERANCES["float32"] == (1e-5, 1e-6)
    assert TOLERANCES["float16"] == (1e-2, 1e-3)
    for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"):
        assert TOLERANCES[name] == (0.0, 0.0)
    assert tolerance(pyaccel.float32) == tolerance(np.float32) == tolerance("f4") == (1e-5, 1e-6)
    assert tolerance(np.complex64) == tolerance(pyaccel.complex64) == (1e-5, 1e-6)  # per part
    with pytest.raises(TypeError, match="no tolerance for dtype 'datetime64'"):
        tolerance(np.dtype("datetime64"))


def test_allclose_passes_within_tolerance(rng) -> None:
    e = rng.standard_normal(100).astype(np.float32) + 2
    assert_allclose_dtype(e * (1 + 5e-6), e, np.float32)
    h = e.astype(np.float16)
    assert_allclose_dtype(h * np.float16(1.005), h)  # float16 tolerance is looser
    nan = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    assert_allclose_dtype(nan.copy(), nan)
    assert_allclose_dtype(np.array([], np.float32), np.array([], np.float32))


def test_allclose_reports_worst_element() -> None:
    e = np.arange(12, dtype=np.float32).reshape(3, 4) + 1
    a = e.copy()
    a[1, 2] += 1e-3  # small miss
    a[2, 1] += 0.5  # the worst
    with pytest.raises(AssertionError) as ei:
        assert_allclose_dtype(a, e, np.float32, what="out")
    msg = str(ei.value)
    assert msg.startswith("out: 2 of 12 element(s) differ (float32); worst at index [2, 1]")
    assert "actual np.float32(10.5), expected np.float32(10.0)" in msg
    assert "atol 1e-06 + rtol 1e-05 * |expected|" in msg


def test_allclose_nan_where_number_expected() -> None:
    e = np.ones(5, np.float32)
    a = e.copy()
    a[3] = np.nan
    a[1] = 1.01
    with pytest.raises(AssertionError, match=r"worst at index \[3\]: actual np.float32\(nan\)"):
        assert_allclose_dtype(a, e)


def test_allclose_integers_are_exact() -> None:
    e = np.array([0, 2**31 - 1, -5], np.int32)
    assert_allclose_dtype(e.copy(), e)
    a = e.copy()
    a[2] = -4
    with pytest.raises(AssertionError, match=r"1 of 3 .*worst at index \[2\].*exact \(int32\)"):
        assert_allclose_dtype(a, e)
    u = np.array([2**32 - 1, 0], np.uint32)
    with pytest.raises(AssertionError, match=r"index \[0\]"):
        assert_allclose_dtype(np.array([2**32 - 2, 0], np.uint32), u)


def test_allclose_complex_compares_both_parts() -> None:
    """The imaginary part counts (astype(float64) used to drop it, so 1+1j matched 1+5j)."""
    e = np.array([1 + 1j, 2 - 3j, -4 + 0.5j], np.complex64)
    assert_allclose_dtype(e * np.float32(1 + 5e-6), e)
    a = e.copy()
    a[1] = 2 - 2j
    with pytest.raises(AssertionError, match=r"1 of 6 .*\(complex64\); worst at index \[1, 1\]"):
        assert_allclose_dtype(a, e)
    with pytest.raises(AssertionError, match=r"index \[0, 1\]"):
        assert_allclose_dtype(np.array([1 + 5j]), np.array([1 + 1j]))
    with pytest.raises(AssertionError, match=r"1 of 2 .*worst at index \[1\]"):
        assert_allclose_dtype(np.complex128(3j), np.complex128(3.003j))
    assert_allclose_dtype(np.array([np.nan + 1j]), np.array([np.nan + 1j]))


def test_allclose_shape_and_overrides() -> None:
    with pytest.raises(AssertionError, match=r"shape mismatch: actual \(3,\) vs expected \(4,\)"):
        assert_allclose_dtype(np.zeros(3), np.zeros(4))
    assert_allclose_dtype(np.float32([1.1]), np.float32([1.0]), atol=0.2)
    with pytest.raises(AssertionError):
        assert_allclose_dtype(np.float32([1.0 + 1e-5]), np.float32([1.0]), rtol=0, atol=0)


def test_poison_numpy_and_bytes() -> None:
    f = poison(np.ones(7, np.float32))
    assert np.isnan(f).all()
    i = poison(np.ones(3, np.int32))
    assert (i.view(np.uint32) == 0xDEADBEEF).all()
    u16 = poison(np.ones(3, np.uint16))
    assert (u16 == 0xBEEF).all()
    b = poison(np.zeros(3, bool))
    assert b.all()
    ba = poison(bytearray(6))
    assert bytes(ba) == b"\xef\xbe\xad\xde\xef\xbe"
    with pytest.raises(TypeError, match="poison"):
        poison(3)


def test_poison_buffer() -> None:
    buf = pyaccel.device("cpu:0").malloc(10)
    assert poison(buf) is buf
    assert buf.read() == b"\xef\xbe\xad\xde" * 2 + b"\xef\xbe"


def test_oracle_on_cpu_passes_and_catches_a_wrong_reference(rng) -> None:
    good = pyaccel.Kernel(SCALE, reference=lambda x, y: np.multiply(x, 3, out=y), name="scale")
    x = rng.standard_normal(200).astype(np.float32)
    y = poison(np.empty(200, np.float32))
    assert_matches_oracle(good, x, y, grid=200, device="cpu:0")
    assert np.isnan(y).all()  # the caller's arrays are not touched (copies are used)

    calls = []

    def flaky(x, y):
        calls.append(1)
        y[:] = x * 3
        if len(calls) == 1:  # the "device" run differs from the reference run
            y[17] += 1

    bad = pyaccel.Kernel(SCALE, reference=flaky, name="flaky")
    with pytest.raises(AssertionError) as ei:
        assert_matches_oracle(bad, x, y, grid=200, device="cpu:0")
    msg = str(ei.value)
    assert "kernel 'flaky' on cpu:0, binding 1 'y' vs NumPy reference" in msg
    assert "1 of 200 element(s) differ" in msg and "worst at index [17]" in msg


def test_oracle_argument_checks() -> None:
    k = pyaccel.Kernel(SCALE)
    with pytest.raises(ValueError, match="has no NumPy reference"):
        assert_matches_oracle(k, np.ones(4, np.float32), np.ones(4, np.float32), grid=4)
    k2 = pyaccel.Kernel(SCALE, reference=lambda x, y: None)
    buf = pyaccel.device("cpu:0").malloc(16)
    with pytest.raises(TypeError, match="takes host inputs"):
        assert_matches_oracle(k2, buf, np.ones(4, np.float32), grid=4, device="cpu:0")


def test_device_fixture(device) -> None:
    assert device in pyaccel.devices() or device.uri in [d.uri for d in pyaccel.devices()]


def test_gpu_device_fixture(gpu_device) -> None:
    assert not gpu_device.is_cpu


@pytest.mark.parametrize("device", ["cpu:0"])
def test_explicit_parametrization_wins(device) -> None:
    assert device == "cpu:0"


# -- the plugin and conftest in a fresh pytest --------------------------------------------
def _pytest(*args: str, env: dict | None = None, pythonpath: list[str] = ()) -> subprocess.CompletedProcess:
    e = {**os.environ, **(env or {})}
    e["PYTHONPATH"] = os.pathsep.join([*pythonpath, str(ROOT)])
    e.pop("PYACCEL_DEVICE", None)
    return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=ROOT, capture_output=True,
                          text=True, env=e, timeout=120)


SELF = "tests/unit/test_testing.py"


def test_ci_session_fails_loudly_when_a_device_is_missing() -> None:
    p = _pytest(SELF, "--collect-only", "-q", "-k", "fixture",
                env={"CI": "true", "PYACCEL_CI_REQUIRED_DEVICES": "cpu:0,cuda:0"})
    out = p.stdout + p.stderr
    assert p.returncode == pytest.ExitCode.USAGE_ERROR, out
    assert "CI=true but the device(s) cuda:0 are missing" in out
    assert "mesa-vulkan-drivers libvulkan1" in out


def _plugin_installed() -> bool:
    from importlib.metadata import entry_points

    return any(ep.value == "pyaccel.testing" for ep in entry_points(group="pytest11"))


def test_ci_session_runs_when_devices_present_and_plugin_option_works() -> None:
    # "-p pyaccel.testing" loads the plugin from a plain checkout; where the package is installed
    # its pytest11 entry point already loads it (passing -p too would register it twice).
    explicit = [] if _plugin_installed() else ["-p", "pyaccel.testing"]
    p = _pytest(SELF, "--collect-only", "-k", "fixture", "--pyaccel-device", "cpu:0",
                "--pyaccel-device", "nosuch:3", *explicit,
                env={"CI": "true", "PYACCEL_CI_REQUIRED_DEVICES": "cpu:0"})
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert "test_device_fixture[cpu:0]" in out and "test_device_fixture[nosuch:3]" in out
    assert "test_gpu_device_fixture[nosuch:3]" in out and "gpu_device_fixture[cpu:0]" not in out
    assert "hypothesis profile 'ci'" in out  # CI=true loads the short profile


def test_hypothesis_profiles_registered() -> None:
    from hypothesis import settings

    assert settings.get_profile("ci").max_examples == 15 and settings.get_profile("ci").deadline is None
    assert settings.get_profile("dev").max_examples == 50
    assert settings.get_profile("exhaustive").max_examples >= 1000


def test_plugin_installed_through_entry_point_is_not_registered_twice(tmp_path) -> None:
    di = tmp_path / "pyaccel_ep-0.1.dist-info"
    di.mkdir()
    (di / "METADATA").write_text("Metadata-Version: 2.1\nName: pyaccel-ep\nVersion: 0.1\n")
    (di / "entry_points.txt").write_text("[pytest11]\npyaccel = pyaccel.testing\n")
    p = _pytest(SELF, "-q", "-k", "device_fixture and cpu", "--pyaccel-device", "cpu:0",
                pythonpath=[str(tmp_path)])
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert "1 passed" in out  # (a second registration would abort with "already registered")
