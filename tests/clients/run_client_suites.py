"""Run scikit-learn's and SciPy's own array-API test suites with pyaccel added to their namespace
parametrization (``pyaccel_client_plugin``) next to array-api-strict, and tabulate the results.

Each suite runs in subprocesses (``python -m pytest --pyargs ...``), the way their CI selects
array-API tests:

* scikit-learn: ``--pyargs sklearn -k "array_api or pyaccel"`` (their CI's ``-k array_api``; the
  ``pyaccel`` alternative selects the pyaccel cases of tests whose only ``array_api`` keyword is
  array-api-strict's parameter id), one process, pyaccel on ``cpu:0`` and ``vulkan:0``.
* SciPy: ``SCIPY_ARRAY_API=1 --pyargs scipy.<sub> -m array_api_backends`` for each submodule of
  :data:`SCIPY_SUBMODULES`; one process with ``PYACCEL_DEVICE=cpu:0`` (array_api_strict and
  pyaccel) and one with ``PYACCEL_DEVICE=vulkan:0`` (pyaccel; ``--scipy-gpu-sample N`` keeps a
  fixed 1-in-N sample of the test functions there).

Results come from JUnit XML; a case counts for a column by its parameter id (``array_api_strict``,
``pyaccel`` + device). Rates are passed / (passed + failed); skips and xfails are counted apart.

``python tests/clients/run_client_suites.py --profile ci`` (the reduced, fixed selection of
:data:`CI_SKLEARN` / :data:`CI_SCIPY`) or ``--profile full``; ``--out DIR`` keeps the XML and a
``results.json`` with every failure (node id and first line of the message).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
STRICT = "array-api-strict"
COLUMNS = (STRICT, "pyaccel cpu:0", "pyaccel vulkan:0")
SCIPY_SUBMODULES = ("special", "stats", "signal", "fft", "cluster", "ndimage", "integrate",
                    "optimize", "spatial", "linalg")

# The reduced CI selection (~2 minutes here): fixed modules covering naive Bayes, linear models
# and the linear-algebra utilities of scikit-learn (one process), and clustering, statistics,
# FFT and windows of SciPy (one process per device; the GPU one without the slowest, windows and
# FFT, which take ~70 s there). Each entry is the pytest arguments after --pyargs.
CI_SKLEARN: tuple[tuple[str, ...], ...] = (
    ("sklearn.tests.test_naive_bayes", "sklearn.utils.tests.test_extmath",
     "sklearn.linear_model.tests.test_ridge", "-k", "array_api or pyaccel"),
)
CI_SCIPY: tuple[str, ...] = ("scipy.cluster.tests.test_vq", "scipy.stats.tests.test_morestats",
                             "scipy.signal.tests.test_windows", "scipy.fft.tests.test_basic")
CI_SCIPY_GPU: tuple[str, ...] = CI_SCIPY[:2]
CI_SCIPY_SAMPLE = 3  # 1-in-3 of those modules' test functions, every backend


@dataclass
class Tally:
    """Outcome counts of one (suite, column), with the failing node ids and messages."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)

    @property
    def rate(self) -> float | None:
        n = self.passed + self.failed
        return None if n == 0 else 100.0 * self.passed / n


def python() -> str:
    return sys.executable


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("CI", None)  # pyaccel's CI device check is for its own suite, not theirs
    env["SCIPY_ARRAY_API"] = "1"
    # the plugin, then this checkout's pyaccel: the venv's editable install may be another
    # checkout's (a worktree sharing main's .venv measured main's pyaccel before this)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.update(extra)
    return env


def run_pytest(args: list[str], extra_env: dict[str, str], junit: Path, timeout: float,
               workers: int = 0) -> int:
    """One ``python -m pytest`` subprocess in an empty directory (their own conftests only)."""
    with tempfile.TemporaryDirectory(prefix="pyaccel-clients-") as tmp:
        ini = Path(tmp) / "pytest.ini"
        ini.write_text("[pytest]\n")
        cmd = [python(), "-m", "pytest", "-c", str(ini), "-p", "pyaccel_client_plugin",
               "-p", "no:cacheprovider", "-q", "-rN", "--tb=line", f"--junitxml={junit}",
               "-o", "junit_family=xunit1"]
        if workers:
            cmd += ["-n", str(workers)]
        cmd += args
        t0 = time.monotonic()
        try:
            proc = subprocess.run(cmd, cwd=tmp, env=_env(extra_env), timeout=timeout,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            rc = proc.returncode
            tail = proc.stdout[-600:]
        except subprocess.TimeoutExpired as exc:
            rc, tail = 124, (exc.stdout or b"")[-600:] if isinstance(exc.stdout, bytes) else ""
        print(f"  [{time.monotonic() - t0:6.1f} s rc={rc}] {' '.join(args)[:110]}", flush=True)
        if rc not in (0, 1) or not junit.exists():
            print(f"    pytest output tail:\n{tail}", flush=True)
        return rc


def parse_junit(path: Path) -> list[tuple[str, str, str]]:
    """(node id, outcome in passed/failed/skipped, first message line) of every test case."""
    if not path.exists():
        return []
    out = []
    for tc in ET.parse(path).getroot().iter("testcase"):
        nodeid = f"{tc.get('classname', '')}::{tc.get('name', '')}"
        outcome, msg = "passed", ""
        for child in tc:
            if child.tag in ("failure", "error"):
                outcome = "failed"
                msg = (child.get("message") or child.text or "").strip().splitlines()[:1]
                msg = msg[0][:300] if msg else ""
                break
            if child.tag == "skipped":
                outcome = "skipped"
        out.append((nodeid, outcome, msg))
    return out


def _params(nodeid: str) -> str:
    m = re.search(r"\[(.*)\]$", nodeid)
    return m.group(1) if m else ""


def column(suite: str, nodeid: str, run_device: str | None) -> str | None:
    """The table column of a case, from its parameter id (None: numpy or another namespace)."""
    p = _params(nodeid)
    if re.search(r"(?<![\w.])pyaccel(?![\w.])", p):
        if suite == "scikit-learn":
            for uri in ("vulkan:0", "cpu:0", "gl:0"):
                if uri in p:
                    return f"pyaccel {uri}"
            return None
        return f"pyaccel {run_device}"
    if "array_api_strict" in p:
        return STRICT
    return None


def tally(suite: str, cases: list[tuple[str, str, str]], run_device: str | None,
          into: dict[tuple[str, str], Tally], only: set[str] | None = None) -> None:
    for nodeid, outcome, msg in cases:
        col = column(suite, nodeid, run_device)
        if col is None or (only is not None and col not in only):
            continue
        t = into.setdefault((suite, col), Tally())
        if outcome == "passed":
            t.passed += 1
        elif outcome == "failed":
            t.failed += 1
            t.failures.append((nodeid, msg))
        else:
            t.skipped += 1


def _fmt(t: Tally | None) -> str:
    if t is None or t.rate is None:
        return "—"
    return f"{t.rate:.1f} % ({t.passed} / {t.failed} failed, {t.skipped} skipped)"


def table(results: dict[tuple[str, str], Tally], labels: dict[str, str]) -> str:
    lines = ["| suite | " + " | ".join(COLUMNS) + " |", "|---|" + "---|" * len(COLUMNS)]
    for suite in ("scikit-learn", "SciPy"):
        cells = [_fmt(results.get((suite, c))) for c in COLUMNS]
        lines.append(f"| {labels.get(suite, suite)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def gaps(results: dict[tuple[str, str], Tally]) -> list[str]:
    """Every (suite, pyaccel column) more than 1 point below array-api-strict's rate."""
    bad = []
    for suite in ("scikit-learn", "SciPy"):
        ref = results.get((suite, STRICT))
        if ref is None or ref.rate is None:
            bad.append(f"{suite}: array-api-strict ran no case")
            continue
        for col in COLUMNS[1:]:
            t = results.get((suite, col))
            if t is None or t.rate is None:
                bad.append(f"{suite} {col}: no case ran")
            elif t.rate < ref.rate - 1.0:
                bad.append(f"{suite} {col}: {t.rate:.1f} % < array-api-strict {ref.rate:.1f} % - 1")
    return bad


def run_all(profile: str, out: Path, workers: int = 0, scipy_gpu_sample: int = 1,
            devices: tuple[str, ...] = ("cpu:0", "vulkan:0"),
            scipy_submodules: tuple[str, ...] = SCIPY_SUBMODULES,
            suites: tuple[str, ...] = ("sklearn", "scipy")) -> dict[tuple[str, str], Tally]:
    """Run both suites (``profile`` ``ci`` or ``full``) and return the tallies by (suite, column)."""
    out.mkdir(parents=True, exist_ok=True)
    results: dict[tuple[str, str], Tally] = {}
    timeout = 900.0 if profile == "ci" else 4 * 3600.0
    # scikit-learn: one process, every device
    sk_env = {"PYACCEL_CLIENT_DEVICES": ",".join(devices), "PYACCEL_DEVICE": "cpu:0"}
    sk_runs = CI_SKLEARN if profile == "ci" else (("sklearn", "-k", "array_api or pyaccel"),)
    if "sklearn" not in suites:
        sk_runs = ()
    for i, args in enumerate(sk_runs):
        junit = out / f"sklearn-{i}.xml"
        run_pytest(["--pyargs", *args], sk_env, junit, timeout, workers)
        tally("scikit-learn", parse_junit(junit), None, results)
    # SciPy: one process per pyaccel device (the process default device, as SciPy runs torch)
    mods = CI_SCIPY if profile == "ci" else tuple(f"scipy.{m}" for m in scipy_submodules)
    for dev in devices if "scipy" in suites else ():
        keep = "array_api_strict,pyaccel" if dev.startswith("cpu") else "pyaccel"
        env = {"PYACCEL_DEVICE": dev, "PYACCEL_CLIENT_KEEP": keep}
        sample = CI_SCIPY_SAMPLE if profile == "ci" else (1 if dev.startswith("cpu")
                                                          else scipy_gpu_sample)
        if sample > 1:
            env["PYACCEL_CLIENT_SAMPLE"] = str(sample)
        if profile == "ci":  # one process per device
            groups = [CI_SCIPY if dev.startswith("cpu") else CI_SCIPY_GPU]
        else:
            groups = [(m,) for m in mods]
        for group in groups:
            junit = out / f"scipy-{dev.replace(':', '')}-{group[0]}.xml"
            run_pytest(["--pyargs", *group, "-m", "array_api_backends"], env, junit, timeout,
                       workers)
            tally("SciPy", parse_junit(junit), dev, results)
    dump = {f"{s}|{c}": {"passed": t.passed, "failed": t.failed, "skipped": t.skipped,
                         "rate": t.rate, "failures": t.failures}
            for (s, c), t in sorted(results.items())}
    (out / "results.json").write_text(json.dumps(dump, indent=1))
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", choices=("ci", "full"), default="ci")
    ap.add_argument("--out", type=Path, default=None, help="keep JUnit XML and results.json here")
    ap.add_argument("--workers", type=int, default=0, help="pytest-xdist workers per process")
    ap.add_argument("--scipy-gpu-sample", type=int, default=1,
                    help="full profile: 1-in-N SciPy test functions on non-CPU devices")
    ap.add_argument("--devices", default="cpu:0,vulkan:0")
    ap.add_argument("--scipy", default=",".join(SCIPY_SUBMODULES), help="SciPy submodules")
    ap.add_argument("--suites", default="sklearn,scipy", help="which suites to run")
    a = ap.parse_args(argv)
    out = a.out or Path(tempfile.mkdtemp(prefix="pyaccel-clients-out-"))
    res = run_all(a.profile, out, a.workers, a.scipy_gpu_sample,
                  tuple(d for d in a.devices.split(",") if d),
                  tuple(m for m in a.scipy.split(",") if m),
                  tuple(x for x in a.suites.split(",") if x))
    print(table(res, {}))
    bad = gaps(res)
    for line in bad:
        print("GAP:", line)
    print(f"results: {out / 'results.json'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
