"""Out of device memory, and recovery (issue 9, item 7).

A child process limits its address space (RLIMIT_AS, about 4 GB), then allocates 64 MiB
buffers and writes each until the device runs out. Required: a typed
``pyaccel.OutOfDeviceMemoryError`` (a MemoryError), never a raw wgpu error or an abort;
after the buffers are freed, allocations and computations work again on the same device
(or, if the driver really lost it -- llvmpipe GL loses the device on OOM today -- the first
error or a later one is ``DeviceLostError`` and ``pyaccel.device(uri)`` opens a fresh,
working device).
"""

from __future__ import annotations

import pytest
from _stress_util import describe, run_script

pytestmark = pytest.mark.stress

OOM_CHILD = r"""
import resource, sys, time
uri = sys.argv[1]
limit = 4_000_000_000
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import numpy as np
import pyaccel
import pyaccel as xp
from pyaccel import DeviceLostError, OutOfDeviceMemoryError

dev = pyaccel.device(uri)
chunk = 64 << 20
payload = np.full(chunk // 4, 7, np.uint32)
bufs = []
caught = None
t0 = time.monotonic()
while len(bufs) < 200 and time.monotonic() - t0 < 60:
    try:
        b = dev.malloc(chunk)
        bufs.append(b)
        b.write(payload)
    except BaseException as exc:
        caught = exc
        break
print("allocated", len(bufs), "buffers of 64 MiB;", "caught", type(caught).__module__,
      type(caught).__name__, str(caught)[:300].replace("\n", " "), flush=True)
if caught is None:
    print("NO-OOM: the limit was never reached", flush=True)
    sys.exit(3)
if not isinstance(caught, (OutOfDeviceMemoryError, DeviceLostError)):
    print("WRONG-TYPE: expected pyaccel.OutOfDeviceMemoryError (or DeviceLostError if the driver "
          "really lost the device), got", type(caught).__mro__, flush=True)
    sys.exit(4)
assert isinstance(caught, (MemoryError, DeviceLostError))
for b in bufs:
    b.free()
bufs.clear()
import gc
gc.collect()

def works(d):
    b = d.malloc(chunk)
    b.write(payload)
    back = np.frombuffer(b.read(16, offset=chunk - 16), np.uint32)
    assert (back == 7).all(), back
    b.free()
    a = np.random.default_rng(1).integers(-9, 9, 5000, dtype=np.int32)
    got = xp.cumulative_sum(xp.asarray(a, device=d)).to_numpy()
    assert np.array_equal(got, np.cumsum(a, dtype=np.int32)), "cumulative_sum wrong after OOM"

try:
    works(dev)
    print("RECOVERED: same device works again", flush=True)
except DeviceLostError as exc:
    print("LOST:", str(exc)[:300], flush=True)
    fresh = pyaccel.device(uri)
    assert fresh is not dev, "pyaccel.device(uri) returned the lost device again"
    works(fresh)
    print("REOPENED: a fresh device works", flush=True)
sys.exit(0)
"""


def test_out_of_memory_is_typed_and_recovers(gpu_device) -> None:
    proc = run_script(OOM_CHILD, gpu_device.uri, timeout=150)
    assert proc.returncode == 0, describe(proc)
    assert "RECOVERED" in proc.stdout or "REOPENED" in proc.stdout, describe(proc)
