"""A page with WebGPU switched off (``nogpu_page``: Chromium without the WebGPU flags), offline.

There is no device at all there (no adapter, no NumPy): ``await pyaccel.device_async()``
with no URI must list every backend's reason, as ``get_device()`` does; no reason may advise
``pip install`` or promise a fallback that cannot load; the numpy hint says it needs the
network and what to do offline. The same rules with a faked platform:
tests/unit/test_pyodide_error_text.py.
"""

from __future__ import annotations

NOGPU_ASYNC_PY = """
import pyaccel
reasons = {b.name: [b.available, b.reason] for b in pyaccel.backends()}
out = {"reasons": reasons, "devices": [d.uri for d in pyaccel.devices()]}
for what in ("device_async", "get_device"):
    try:
        if what == "device_async":
            await pyaccel.device_async()
        else:
            pyaccel.get_device()
        out[what] = "opened?!"
    except pyaccel.PyaccelError as e:
        out[what] = [type(e).__name__, str(e)]
k = pyaccel.Kernel("@compute @workgroup_size(1) fn main() {}")   # no device needed to define one
out["kernel"] = type(k).__name__
out
"""


def test_nowebgpu_page_error_text(nogpu_page):
    got = nogpu_page.run_py(NOGPU_ASYNC_PY)
    reasons = got["reasons"]
    assert got["devices"] == []
    assert set(reasons) >= {"webgpu", "wgpu", "cpu"}
    assert not any(avail for avail, _ in reasons.values()), reasons
    for name, (_, reason) in reasons.items():
        assert "pip install" not in reason, (name, reason)
        assert "falls back" not in reason, (name, reason)
    cpu = reasons["cpu"][1]
    assert "await pyodide.loadPackage('numpy')" in cpu and "needs the network" in cpu
    assert "Offline" in cpu and "pyemscripten" in cpu and ".whl" in cpu  # the lock's numpy wheel
    assert "cannot run in Pyodide" in reasons["wgpu"][1]

    kind, msg = got["device_async"]
    assert kind == "DeviceNotFoundError"
    assert "(none found)" not in msg
    for name, (_, reason) in reasons.items():
        assert f"  {name}: {reason.splitlines()[0]}" in msg, (name, msg)
    assert "pip install" not in msg and "falls back" not in msg
    assert got["get_device"] == ["DeviceNotFoundError", msg]  # the same text both ways
    assert got["kernel"] == "Kernel"
    print(msg)
