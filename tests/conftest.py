"""Shared test setup.

* Loads the ``pyaccel.testing`` pytest plugin (``device`` / ``gpu_device`` fixtures,
  ``--pyaccel-device``) when it is not already registered through its ``pytest11``
  entry point (a development checkout that is not pip-installed).
* Hypothesis profiles: ``ci`` (15 examples, no deadline; loaded when ``CI=true``),
  ``dev`` (50 examples; the default) and ``exhaustive`` (1000); ``HYPOTHESIS_PROFILE``
  picks one explicitly. The differential fuzzer (``tests/fuzz``) runs its own CI count under
  ``ci`` (``FUZZ_CI_EXAMPLES`` there) and 1000 programs per device under ``exhaustive``.
* Markers ``stress`` (tests/stress: threads, asyncio, OOM, Ctrl-C, long rows; bounded in
  time, ``PYACCEL_STRESS_SCALE`` lengthens them) and ``fuzz`` (tests/fuzz) are registered
  in pyproject.toml; both directories are in ``testpaths``, so plain ``pytest`` runs them.
* With ``CI=true`` the session fails at start unless every device CI must test is
  present (``vulkan:0``, ``gl:0``, ``cpu:0``; override with
  ``PYACCEL_CI_REQUIRED_DEVICES=uri,uri``), so a runner without Mesa cannot pass by
  skipping everything.
* ``rng``: a NumPy Generator with a fresh seed per test (printed, so a failure can
  be replayed with ``PYACCEL_TEST_SEED``).
* Parallel sessions (pytest-xdist, ``-n N``; ``scripts/test.sh`` uses one worker per core):
  every worker is its own process, so the session fixtures (open devices, the browser
  page) exist once per worker; no test depends on another's order or process. The
  terminal summary reports the peak resident memory of every test process.
* ``PYACCEL_CACHE_DIR`` is a fresh temporary dir per test process and ``PYACCEL_AUTOTUNE``
  defaults to ``0`` (static matmul kernels; ``tests/backends/test_matmul_autotune.py`` turns
  tuning on where it tests it).
"""

from __future__ import annotations

import os
import re
import sys

# SciPy reads this once, at import: its array-API dispatch (tests/clients) needs it set first
os.environ.setdefault("SCIPY_ARRAY_API", "1")

# matmul autotune (pyaccel/ops/autotune.py): test processes never write into the user's cache
# dir (a fresh temporary one per test process, inherited by the subprocesses tests start), and
# run the static default kernels unless a test turns tuning on
# (tests/backends/test_matmul_autotune.py); PYACCEL_AUTOTUNE=1 in the environment tunes
# everywhere
if "PYACCEL_TEST_KEEP_CACHE_DIR" not in os.environ:
    import tempfile

    os.environ["PYACCEL_CACHE_DIR"] = tempfile.mkdtemp(prefix="pyaccel-test-cache-")
os.environ.setdefault("PYACCEL_AUTOTUNE", "0")

import pytest

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # hypothesis-based tests skip themselves
    settings = None

CI = os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")
CI_REQUIRED = ("vulkan:0", "gl:0", "cpu:0")

if settings is not None:
    _slow_ok = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
    settings.register_profile("ci", max_examples=15, deadline=None, suppress_health_check=_slow_ok)
    settings.register_profile("dev", max_examples=50, deadline=None, suppress_health_check=_slow_ok)
    settings.register_profile("exhaustive", max_examples=1000, deadline=None,
                              suppress_health_check=_slow_ok)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if CI else "dev"))


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    # Register the plugin unless its entry point (pip install) or `-p` already did.
    already = pluginmanager.has_plugin("pyaccel") or pluginmanager.has_plugin("pyaccel.testing")
    mod = sys.modules.get("pyaccel.testing")
    if mod is not None and pluginmanager.is_registered(mod):
        already = True
    if not already:
        import pyaccel.testing

        pluginmanager.register(pyaccel.testing, "pyaccel.testing")


def required_devices() -> list[str]:
    raw = os.environ.get("PYACCEL_CI_REQUIRED_DEVICES")
    if raw is None:
        return list(CI_REQUIRED)
    return [u.strip() for u in raw.split(",") if u.strip()]


def missing_devices_report(required: list[str]) -> str | None:
    """None when every required device is listed, else a message naming what is missing and the fix."""
    import pyaccel

    have = [d.uri for d in pyaccel.devices()]
    missing = [u for u in required if u not in have]
    if not missing:
        return None
    reasons = "\n".join(f"    {b.name}: {b.reason}" for b in pyaccel.backends() if not b.available)
    return (
        f"CI=true but the device(s) {', '.join(missing)} are missing; "
        f"pyaccel.devices() lists: {', '.join(have) or 'nothing'}.\n"
        f"  unavailable backends:\n{reasons or '    none'}\n"
        "  fix: install the software drivers, e.g. `apt-get install mesa-vulkan-drivers libvulkan1 "
        "libegl1 libgl1-mesa-dri` (and `pip install wgpu==0.32.0 numpy`); CI refuses to pass by "
        "skipping device tests"
    )


def pytest_sessionstart(session: pytest.Session) -> None:
    if not CI:
        return
    report = missing_devices_report(required_devices())
    if report:
        pytest.exit(report, returncode=pytest.ExitCode.USAGE_ERROR)


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = []
    if settings is not None:
        lines.append(f"pyaccel: hypothesis profile {settings.get_current_profile_name()!r}, CI={CI}")
    return lines


@pytest.fixture
def rng():
    """A NumPy Generator with a fresh seed (set PYACCEL_TEST_SEED to replay one)."""
    import numpy as np

    seed = int(os.environ.get("PYACCEL_TEST_SEED") or int.from_bytes(os.urandom(4), "little"))
    print(f"rng seed: PYACCEL_TEST_SEED={seed}")
    return np.random.default_rng(seed)


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


_WORKER_RSS: dict[str, float] = {}


class _XdistRss:
    """Collects each xdist worker's peak RSS in the controller (the hook exists only with xdist)."""

    @staticmethod
    def pytest_testnodedown(node, error) -> None:  # noqa: ANN001
        out = getattr(node, "workeroutput", None) or {}
        if "peak_rss_mb" in out:
            _WORKER_RSS[str(out.get("workerid", node.gateway.id))] = float(out["peak_rss_mb"])


def pytest_configure(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistRss(), "pyaccel-xdist-rss")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    out = getattr(session.config, "workeroutput", None)
    if out is not None:  # an xdist worker: hand the figure to the controller
        out["peak_rss_mb"] = _peak_rss_mb()


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:  # noqa: ANN001
    if getattr(config, "workeroutput", None) is not None:
        return
    parts = [f"{w} {mb:.0f} MiB" for w, mb in sorted(_WORKER_RSS.items())]
    parts.append(f"controller {_peak_rss_mb():.0f} MiB")
    terminalreporter.write_line("pyaccel: peak RSS per test process: " + ", ".join(parts))


# Elementwise test files whose parametrized tests are grouped per (GPU device, op) for xdist's
# --dist loadgroup: every kernel of an op then compiles once, in one worker, and the other
# tests of that op find it in the device's pipeline cache. The emulated float64 / complex
# kernels take seconds each to compile on software GPUs (LLVM), and lavapipe keeps no disk
# cache of its front end, so spreading one op's tests over both workers compiled each twice.
_OP_GROUPED_FILES = ("test_array_elementwise.py", "test_softfloat.py", "test_complex.py",
                     "test_f32_accuracy.py")
_URI = re.compile(r"[a-z][a-z0-9]*:\d+")


def _op_group(item: pytest.Item, ops: frozenset[str]) -> str | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None or not item.nodeid.split("::")[0].endswith(_OP_GROUPED_FILES):
        return None
    parts = callspec.id.split("-")
    dev = next((p for p in parts if _URI.fullmatch(p)), None)
    op = next((p for p in parts if p in ops), None)
    if dev is None or op is None or dev.startswith("cpu:"):
        return None
    return f"ops-{dev}-{op}"


def pytest_collection_modifyitems(config, items) -> None:  # noqa: ANN001
    """Run the browser suite last: Playwright's sync API keeps an event loop running in this
    thread for the rest of the session, and native async tests call asyncio.run(). Group the
    elementwise tests per (device, op) (see _OP_GROUPED_FILES)."""
    items.sort(key=lambda item: "tests/browser/" in item.nodeid.replace("\\", "/"))
    import pyaccel

    ops = frozenset(n for n in dir(pyaccel) if not n.startswith("_") and callable(getattr(pyaccel, n)))
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            group = _op_group(item, ops)
            if group is not None:
                item.add_marker(pytest.mark.xdist_group(group))
