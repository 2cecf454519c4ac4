"""Discovery in the browser: backends, devices, descriptors, selection, unavailability.

The webgpu backend exists only in Pyodide with ``navigator.gpu``; here it is SwiftShader
in headless Chromium. A page launched without the WebGPU flags (``nogpu_page``) must
report webgpu unavailable with its reason, and pyaccel must still import and say what
to do. ``PYACCEL_DEVICE`` is tested both ways a page can set it: ``os.environ`` before
first use, and ``loadPyodide({env: {PYACCEL_DEVICE: ...}})`` (the playground's
``?device=`` query parameter).
"""

from __future__ import annotations

import pytest

INFO_PY = """
import pyaccel
dev = pyaccel.device("webgpu:0")
d = dev.descriptor
{
    "devices": [x.uri for x in pyaccel.devices()],
    "backends": {b.name: [b.available, b.reason, list(b.devices)] for b in pyaccel.backends()},
    "descriptor": [d.uri, d.name, d.vendor, d.api, d.adapter_type, d.backend, d.arch, d.is_software],
    "adapter_features": list(d.extra["features"]),
    "adapter_limits": dict(d.extra["limits"]),
    "device_features": sorted(str(f) for f in dev.impl.f.device.features),
    "capabilities": dev.capabilities.names(),
    "limits": dev.limits.as_dict(),
    "info": dev.info(),
    "runtime": dev.runtime_version,
    "default": pyaccel.default_device_uri(),
}
"""


@pytest.fixture(scope="module")
def info(pyodide_page):
    return pyodide_page.run_py(INFO_PY)


def test_backends_in_pyodide(info):
    be = info["backends"]
    assert be["webgpu"][0] is True and be["webgpu"][2] == ["webgpu:0"]
    # no numpy offline: the cpu backend says how to get it
    avail, reason, _ = be["cpu"]
    assert avail is False
    assert "await pyodide.loadPackage('numpy')" in reason or 'await pyodide.loadPackage("numpy")' in reason
    # the native backend is never part of the browser build
    assert be["wgpu"][0] is False and "wgpu" in be["wgpu"][1]


def test_devices_and_descriptor(info, pyodide_page):
    assert info["devices"] == ["webgpu:0"]
    assert info["default"] == "webgpu:0"
    uri, name, vendor, api, adapter_type, backend, arch, software = info["descriptor"]
    js = pyodide_page.webgpu()["adapter"]
    assert (uri, api, backend) == ("webgpu:0", "webgpu", "webgpu")
    assert vendor == js["vendor"] == "google"
    assert arch == js["architecture"] == "swiftshader"
    assert name and "swiftshader" in name
    assert adapter_type == "cpu" and software is True  # SwiftShader is a CPU implementation
    assert sorted(info["adapter_features"]) == js["features"]
    assert info["adapter_limits"]["maxStorageBufferBindingSize"] == js["maxStorageBufferBindingSize"]


def test_requested_features_and_capabilities(info):
    adapter, device = set(info["adapter_features"]), set(info["device_features"])
    for f in ("shader-f16", "subgroups", "timestamp-query"):
        assert (f in device) == (f in adapter), f"{f}: requested when offered, only then"
    caps = set(info["capabilities"])
    assert ("subgroups" in caps) == ("subgroups" in device)
    assert ("f16" in caps or "shader_f16" in caps) == ("shader-f16" in device)
    assert "software" in caps


def test_limits_come_from_the_adapter(info):
    lim, adapter = info["limits"], info["adapter_limits"]
    assert lim["max_storage_binding_size"] == adapter["maxStorageBufferBindingSize"]
    assert lim["max_invocations_per_workgroup"] == adapter["maxComputeInvocationsPerWorkgroup"]
    assert lim["max_workgroups_per_dimension"] == adapter["maxComputeWorkgroupsPerDimension"]


def test_info_report_is_filled(info):
    text = info["info"]
    for needle in ("Device webgpu:0", "api             : webgpu", "swiftshader", "(software)",
                   "browser WebGPU via Pyodide", "JSPI (sync API) : yes", "features        :",
                   "max_storage_binding_size", "ffi_calls"):
        assert needle in text, f"{needle!r} missing from info():\n{text}"
    assert "Pyodide" in info["runtime"]


def test_power_preference_uris_and_bad_uris(run_py):
    got = run_py("""
import pyaccel
out = {}
for uri in ("webgpu", "webgpu://high-performance", "webgpu://low-power"):
    d = pyaccel.device(uri)
    out[uri] = [d.uri, d.arch]
for uri in ("webgpu:1", "webgpu://fastest", "metal:0"):
    try:
        pyaccel.device(uri)
        out[uri] = "opened?!"
    except pyaccel.PyaccelError as e:
        out[uri] = [type(e).__name__, str(e)]
out["same"] = pyaccel.device("webgpu") is pyaccel.device("webgpu:0")
out
""")
    assert got["webgpu"] == ["webgpu:0", "swiftshader"]
    assert got["webgpu://high-performance"][0] == "webgpu://high-performance"
    assert got["webgpu://low-power"][0] == "webgpu://low-power"
    assert got["same"] is True
    kind, msg = got["webgpu:1"]
    assert kind == "DeviceNotFoundError" and "webgpu:0" in msg
    kind, msg = got["webgpu://fastest"]
    assert kind == "DeviceNotFoundError" and "high-performance" in msg and "low-power" in msg
    kind, msg = got["metal:0"]
    assert kind == "DeviceNotFoundError" and "wgpu" in msg


ENV_PY = """
import os
import pyaccel
from pyaccel import registry
saved_env, saved_default = os.environ.get("PYACCEL_DEVICE"), registry._global_default[0]
out = {}
try:
    for value in ("webgpu", "webgpu:0", "cpu,webgpu:0", "cpu"):
        os.environ["PYACCEL_DEVICE"] = value
        pyaccel.set_device(None)          # forget the current device: re-read PYACCEL_DEVICE
        try:
            out[value] = ["ok", pyaccel.get_device().uri, pyaccel.default_device_uri()]
        except pyaccel.PyaccelError as e:
            out[value] = [type(e).__name__, str(e)]
finally:
    if saved_env is None:
        os.environ.pop("PYACCEL_DEVICE", None)
    else:
        os.environ["PYACCEL_DEVICE"] = saved_env
    registry._global_default[0] = saved_default
out
"""


def test_pyaccel_device_env_via_os_environ(run_py):
    got = run_py(ENV_PY)
    assert got["webgpu"] == ["ok", "webgpu:0", "webgpu:0"]
    assert got["webgpu:0"] == ["ok", "webgpu:0", "webgpu:0"]
    assert got["cpu,webgpu:0"] == ["ok", "webgpu:0", "webgpu:0"]  # first that works
    kind, msg = got["cpu"]
    assert kind == "DeviceNotFoundError"
    assert "PYACCEL_DEVICE" in msg and "numpy" in msg and "loadPackage" in msg


def test_pyaccel_device_env_via_loadpyodide(pyodide_page, chromium_webgpu, site_url):
    """The playground's ?device= passes loadPyodide({env: {PYACCEL_DEVICE}})."""
    bp = type(pyodide_page)(chromium_webgpu, site_url + "?device=webgpu://low-power",
                            "webgpu page with ?device=")
    try:
        got = bp.run_py("import os, pyaccel\n"
                        "(os.environ.get('PYACCEL_DEVICE'), pyaccel.default_device_uri(), "
                        "pyaccel.get_device().uri)")
    finally:
        bp.page.close()
    assert got == ["webgpu://low-power", "webgpu://low-power", "webgpu://low-power"]


# ------------------------------------------------------------------ no WebGPU
NOGPU_PY = """
import pyaccel
web = {b.name: b for b in pyaccel.backends()}["webgpu"]
out = {"available": web.available, "reason": web.reason, "devices": [d.uri for d in pyaccel.devices()],
       "default": pyaccel.default_device_uri()}
for what, call in (("device", lambda: pyaccel.device("webgpu")), ("get_device", pyaccel.get_device)):
    try:
        call()
        out[what] = "opened?!"
    except pyaccel.PyaccelError as e:
        out[what] = [type(e).__name__, str(e)]
out
"""


def test_nogpu_page_reports_webgpu_unavailable_with_reason(nogpu_page):
    got = nogpu_page.run_py(NOGPU_PY)
    js = nogpu_page.webgpu()
    assert got["available"] is False
    reason = got["reason"]
    if js["navigatorGpu"]:  # Chromium without the flags: navigator.gpu exists, no adapter
        assert "no WebGPU adapter was granted" in reason
    else:
        assert "navigator.gpu is undefined" in reason
    assert "--enable-unsafe-webgpu" in reason  # what to do
    assert "numpy" in reason  # and what pyaccel falls back to
    assert got["devices"] == [] and got["default"] is None
    kind, msg = got["device"]
    assert kind == "DeviceNotFoundError" and "webgpu" in msg and "adapter" in msg
    kind, msg = got["get_device"]
    assert kind == "DeviceNotFoundError"
    assert "webgpu" in msg and "loadPackage('numpy')" in msg  # every backend's reason + the fix
