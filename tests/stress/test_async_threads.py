"""asyncio together with threads (issue 9, items 3 and 4).

Both run in a child process: on f0dbc06 the first aborts the interpreter (exit 134, a
wgpu panic "Buffer ... is still mapped"), which must fail the test, not kill pytest.
"""

from __future__ import annotations

import pytest
from _stress_util import budget, describe, run_script

pytestmark = pytest.mark.stress

GATHER_CHILD = r"""
import asyncio, sys
import numpy as np
import pyaccel, pyaccel as xp
d = pyaccel.device(sys.argv[1])
a = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)
x = xp.asarray(a, device=d)

async def main():
    for _ in range(5):
        y = x @ x                      # pending work, so both waits really wait
        await asyncio.gather(d.synchronize_async(), d.synchronize_async())
        r1, r2 = await asyncio.gather(y.to_numpy_async(), (y + 1).to_numpy_async())
        want = a.astype(np.float64) @ a.astype(np.float64)
        assert np.allclose(r1, want, rtol=1e-3, atol=1e-3), "matmul wrong"
        assert np.allclose(r2, want + 1, rtol=1e-3, atol=1e-3), "matmul + 1 wrong"

asyncio.run(main())
print("OK", flush=True)
"""


def test_gather_two_synchronize_async_does_not_abort(gpu_device) -> None:
    """``asyncio.gather(d.synchronize_async(), d.synchronize_async())`` (abort 134 on f0dbc06)."""
    proc = run_script(GATHER_CHILD, gpu_device.uri, timeout=120)
    assert proc.returncode == 0 and "OK" in proc.stdout, describe(proc)


ASYNC_THREAD_CHILD = r"""
import asyncio, sys, threading, time, traceback
import numpy as np
import pyaccel, pyaccel as xp
d = pyaccel.device(sys.argv[1])
seconds = float(sys.argv[2])
problems = []
stop = threading.Event()

def cumsums():
    rng = np.random.default_rng(1)
    i = 0
    try:
        while not stop.is_set() and i < 400:
            a = rng.integers(-100, 100, int(rng.integers(1, 3000)), dtype=np.int32)
            got = xp.cumulative_sum(xp.asarray(a, device=d)).to_numpy()
            if not np.array_equal(got, np.cumsum(a, dtype=np.int32)):
                problems.append(f"thread cumulative_sum of {a.size} wrong at iteration {i}")
            i += 1
    except BaseException as exc:
        problems.append("thread: " + "".join(traceback.format_exception(exc)))

async def main():
    rng = np.random.default_rng(2)
    t_end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < t_end and n < 300:
        a = rng.uniform(-2, 2, int(rng.integers(1, 5000))).astype(np.float32)
        x = xp.asarray(a, device=d)
        got = await (x * 2 + 1).to_numpy_async()
        if not np.allclose(got, a * 2 + 1, rtol=1e-6, atol=1e-6):
            problems.append(f"async x*2+1 of {a.size} wrong at iteration {n}")
        if n % 5 == 0:
            await d.synchronize_async()
        n += 1
    return n

th = threading.Thread(target=cumsums, daemon=True)
th.start()
try:
    n = asyncio.run(main())
except BaseException as exc:
    problems.append("asyncio: " + "".join(traceback.format_exception(exc)))
    n = -1
stop.set()
th.join(120)
if th.is_alive():
    problems.append("cumulative_sum thread hung")
print("async iterations", n, flush=True)
if problems:
    print("PROBLEMS", len(problems), *problems[:6], sep="\n", flush=True)
    sys.exit(1)
print("OK", flush=True)
"""


def test_asyncio_reads_while_a_thread_computes(gpu_device) -> None:
    """A thread doing cumulative sums while asyncio.run awaits to_numpy_async() repeatedly
    (an untyped ``GPUValidationError: Encoding must not have ended`` on f0dbc06)."""
    proc = run_script(ASYNC_THREAD_CHILD, gpu_device.uri, str(budget(8)), timeout=150)
    assert proc.returncode == 0 and "OK" in proc.stdout, describe(proc)
