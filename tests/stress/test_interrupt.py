"""Ctrl-C and timeouts during long GPU work (issue 9, item 5).

A child process records a chain of large matmuls (calibrated to take about 12 s on the
device), starts a blocking read, and is sent SIGINT. Required: KeyboardInterrupt within
a few seconds of the signal (not when the GPU work ends), then the device is usable (or
reports ``DeviceLostError`` and ``pyaccel.device(uri)`` reopens it), and the process exits
0 -- never an abort or a hang. ``synchronize(timeout=...)`` and ``Buffer.read(timeout=...)``
on a long job raise ``pyaccel.errors.DeviceTimeoutError``, a ``TimeoutError``.
"""

from __future__ import annotations

import queue
import signal
import threading
import time

import pytest
from _stress_util import budget, describe, run_script, spawn

pytestmark = pytest.mark.stress

PROMPT_S = 5.0  # generous on a loaded 2-core machine; f0dbc06 answers only when the GPU is done

COMMON = r"""
import math, sys, time
import numpy as np
import pyaccel, pyaccel as xp
from pyaccel import DeviceLostError
uri, target = sys.argv[1], float(sys.argv[2])
d = pyaccel.device(uri)
N = 1024
q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((N, N)))
q = q.astype(np.float32)          # orthogonal: a chain of products stays of norm 1
x = xp.asarray(q, device=d)
t = time.monotonic(); (x @ x).to_numpy(); t1 = time.monotonic() - t
n = max(3, min(60, math.ceil(target / max(t1, 1e-3))))

def chain():
    y = x
    for _ in range(n):
        y = y @ x
    return y

def check_usable(dev):
    a = np.random.default_rng(5).integers(-9, 9, 3000, dtype=np.int32)
    got = xp.cumulative_sum(xp.asarray(a, device=dev)).to_numpy()
    assert np.array_equal(got, np.cumsum(a, dtype=np.int32)), "cumulative_sum wrong afterwards"
"""

INTERRUPT_CHILD = COMMON + r"""
y = chain()
print("READY", n, "matmuls, one takes", round(t1, 3), "s", flush=True)
t0 = time.monotonic()
try:
    y.to_numpy()
    print("FINISHED-WITHOUT-INTERRUPT after", round(time.monotonic() - t0, 2), "s", flush=True)
    sys.exit(5)
except KeyboardInterrupt:
    print("INTERRUPTED", flush=True)
try:
    check_usable(d)
    print("USABLE", flush=True)
except DeviceLostError as exc:
    print("LOST", str(exc)[:200], flush=True)
    fresh = pyaccel.device(uri)
    assert fresh is not d, "pyaccel.device(uri) returned the lost device again"
    check_usable(fresh)
    print("REOPENED", flush=True)
sys.exit(0)
"""


def _reader(stream, q: queue.Queue) -> None:
    for line in stream:
        q.put((time.monotonic(), line))
    q.put((time.monotonic(), None))


def test_sigint_during_blocking_read(gpu_device) -> None:
    """SIGINT while to_numpy() waits on ~12 s of matmuls: prompt KeyboardInterrupt, usable device."""
    proc = spawn(INTERRUPT_CHILD, gpu_device.uri, str(budget(12)))
    lines: queue.Queue = queue.Queue()
    out: list[str] = []
    threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
    try:
        def wait_for(word: str, deadline: float) -> float | None:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                try:
                    t, line = lines.get(timeout=left)
                except queue.Empty:
                    return None
                if line is None:
                    return None
                out.append(line)
                if line.startswith(word):
                    return t

        assert wait_for("READY", time.monotonic() + 120) is not None, "child never got ready: " + "".join(out)
        time.sleep(1.0)  # the read is now blocked on the GPU
        t_sig = time.monotonic()
        proc.send_signal(signal.SIGINT)
        t_int = wait_for("INTERRUPTED", t_sig + PROMPT_S)
        if t_int is None:  # not prompt: no need to wait for the GPU work to end
            proc.kill()
        try:
            rc = proc.wait(timeout=90)
        except Exception:
            proc.kill()
            rc = proc.wait()
        while True:  # drain what is left
            try:
                _, line = lines.get(timeout=5)
            except queue.Empty:
                break
            if line is None:
                break
            out.append(line)
        err = proc.stderr.read()
        report = f"exit status {rc}\n--- stdout ---\n{''.join(out)}\n--- stderr ---\n{err[-3000:]}"
        assert t_int is not None, (
            f"no KeyboardInterrupt within {PROMPT_S} s of SIGINT (child killed then): the blocking "
            f"read is not interruptible\n{report}")
        assert rc == 0, report
        assert any(w in "".join(out) for w in ("USABLE", "REOPENED")), report
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


TIMEOUT_CHILD = COMMON + r"""
from pyaccel import errors
y = chain()
t0 = time.monotonic()
try:
    d.synchronize(timeout=0.001)
    print("NO-TIMEOUT: synchronize(timeout=0.001) returned after", round(time.monotonic() - t0, 2), "s")
    sys.exit(6)
except TimeoutError as exc:
    dt = time.monotonic() - t0
    assert isinstance(exc, errors.DeviceTimeoutError), type(exc).__mro__
    assert isinstance(exc, pyaccel.PyaccelError)
    print("SYNC-TIMEOUT after", round(dt, 2), "s:", str(exc)[:200], flush=True)
    assert dt < 5, f"synchronize(timeout=0.001) took {dt:.1f} s to time out"
z = y @ x
buf = z.__pyaccel_buffer__()
t0 = time.monotonic()
try:
    buf.read(16, timeout=0.001)
    print("NO-TIMEOUT: read(timeout=0.001) returned after", round(time.monotonic() - t0, 2), "s")
    sys.exit(7)
except TimeoutError as exc:
    dt = time.monotonic() - t0
    assert isinstance(exc, errors.DeviceTimeoutError), type(exc).__mro__
    print("READ-TIMEOUT after", round(dt, 2), "s:", str(exc)[:200], flush=True)
    assert dt < 5, f"read(timeout=0.001) took {dt:.1f} s to time out"
d.synchronize()                      # no timeout: waits for the work, which is still right
want = q.astype(np.float64)
for _ in range(n + 1):
    want = want @ q
got = z.to_numpy()
assert np.allclose(got, want, rtol=1e-3, atol=1e-3), float(np.abs(got - want).max())
check_usable(d)
print("OK", flush=True)
"""


def test_synchronize_and_read_timeouts(gpu_device) -> None:
    """``synchronize(timeout=0.001)`` / ``Buffer.read(timeout=0.001)`` on a ~3 s job raise
    DeviceTimeoutError promptly; the job then completes correctly."""
    proc = run_script(TIMEOUT_CHILD, gpu_device.uri, str(budget(3)), timeout=180)
    assert proc.returncode == 0 and "OK" in proc.stdout, describe(proc)


EXIT_CHILD = COMMON + r"""
y = chain()
y.device.impl.flush()                 # submitted (GL: queued on the submit thread), not waited for
w = getattr(d.impl.f, "_worker", None)
print("EXITING", "submit-thread-busy" if w is not None and w.busy() else "no-pending-submit", flush=True)
"""


def test_exit_while_work_is_queued(gpu_device) -> None:
    """The interpreter exits cleanly (status 0, no wgpu panic, no hang) while ~3 s of
    submitted work has not finished (GL: still queued on or running in the submit thread)."""
    proc = run_script(EXIT_CHILD, gpu_device.uri, str(budget(3)), timeout=180)
    assert proc.returncode == 0 and "EXITING" in proc.stdout, describe(proc)
    assert "panicked" not in proc.stderr and "Traceback" not in proc.stderr, describe(proc)
