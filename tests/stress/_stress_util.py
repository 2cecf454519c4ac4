"""Shared helpers of the stress suite: time budgets, thread runners, subprocess runners.

Every stress test is bounded twice: by an iteration count and by a wall-clock budget
(``budget(seconds)``; ``PYACCEL_STRESS_SCALE=4`` makes every budget and count four times
longer for a soak run). Tests that can abort or hang the interpreter on a broken build run
their body in a subprocess (:func:`run_script`), so a crash fails the test instead of
killing pytest.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCALE = float(os.environ.get("PYACCEL_STRESS_SCALE", "1") or 1)


def budget(seconds: float) -> float:
    """A wall-clock budget in seconds, scaled by PYACCEL_STRESS_SCALE."""
    return seconds * SCALE


def count(n: int) -> int:
    """An iteration count, scaled by PYACCEL_STRESS_SCALE."""
    return max(1, int(n * SCALE))


def run_threads(job: Callable[[int, int], list[str]], n_threads: int, iters: int,
                seconds: float) -> tuple[int, list[str]]:
    """Run ``job(thread_index, iteration)`` in ``n_threads`` threads, each until ``iters``
    iterations or ``seconds`` have passed; a job returns a list of mismatch messages.

    Returns (iterations run in total, problems), where problems holds every mismatch and
    every exception (with its traceback) any thread hit. The interpreter's thread switch
    interval is lowered to 10 us meanwhile, so threads interleave inside short sequences.
    """
    problems: list[str] = []
    done = [0] * n_threads
    lock = threading.Lock()
    start = threading.Barrier(n_threads)
    deadline_box: list[float] = []

    def worker(t: int) -> None:
        try:
            start.wait(timeout=60)
            if not deadline_box:
                deadline_box.append(time.monotonic() + seconds)
            for i in range(iters):
                if time.monotonic() > deadline_box[0] and i > 0:
                    break
                msgs = job(t, i)
                done[t] += 1
                if msgs:
                    with lock:
                        problems.extend(f"thread {t} iteration {i}: {m}" for m in msgs)
        except BaseException as exc:  # noqa: BLE001 - every failure is reported
            with lock:
                problems.append(f"thread {t}: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")

    threads = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(n_threads)]
    # switch threads every 10 us instead of 5 ms: far more interleavings per second
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=seconds + 120)
    finally:
        sys.setswitchinterval(old_interval)
    hung = [i for i, th in enumerate(threads) if th.is_alive()]
    if hung:
        problems.append(f"threads {hung} still running {seconds + 120:.0f} s after the budget (hang)")
    return sum(done), problems


def summarize(problems: list[str], total: int, limit: int = 8) -> str:
    head = "\n".join(problems[:limit])
    more = f"\n... and {len(problems) - limit} more" if len(problems) > limit else ""
    return f"{len(problems)} problem(s) in {total} iteration(s):\n{head}{more}"


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("PYTHONFAULTHANDLER", "1")
    if not env.get("XDG_RUNTIME_DIR"):
        import tempfile

        d = tempfile.mkdtemp(prefix="xdg-")
        os.chmod(d, 0o700)
        env["XDG_RUNTIME_DIR"] = d
    return env


def run_script(script: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``script`` (Python source, dedented) in a fresh interpreter with ``args`` as argv[1:].

    A hang is killed after ``timeout`` seconds and reported as returncode -9 with what the
    child printed so far.
    """
    cmd = [sys.executable, "-c", textwrap.dedent(script), *args]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                              env=child_env())
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        return subprocess.CompletedProcess(cmd, -9, out, err + f"\n[killed: no exit after {timeout} s]")


def describe(proc: subprocess.CompletedProcess[str], tail: int = 3000) -> str:
    """returncode + the tails of stdout/stderr (noise lines from the Vulkan loader dropped)."""
    err = "\n".join(ln for ln in proc.stderr.splitlines() if "XDG_RUNTIME_DIR" not in ln)
    return (f"exit status {proc.returncode}\n--- stdout ---\n{proc.stdout[-tail:]}\n"
            f"--- stderr ---\n{err[-tail:]}")


def spawn(script: str, *args: str) -> subprocess.Popen[str]:
    """Start ``script`` in a fresh interpreter, stdout/stderr piped (line-buffered text)."""
    cmd = [sys.executable, "-u", "-c", textwrap.dedent(script), *args]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT, env=child_env(), bufsize=1)
