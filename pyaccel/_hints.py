"""The fixes that unavailable-backend messages suggest, true for where Python runs.

Natively the fix for a missing package is ``pip install``. Inside Pyodide (a web page) it is
not: there is no pip, wgpu-py cannot exist (it drives native GPU drivers), and numpy comes
from the Pyodide CDN through ``pyodide.loadPackage``, which needs the network (pyaccel's
offline Pyodide folder ships no numpy: the npm package has none and PyPI has no Pyodide
wheel). These helpers give the text for each case; they import nothing from pyaccel.
"""

from __future__ import annotations

import sys

PYODIDE_NUMPY_WHEEL = "numpy's Pyodide wheel"


def in_pyodide() -> bool:
    """True inside Pyodide (``sys.platform == "emscripten"``)."""
    return sys.platform == "emscripten"


def _numpy_wheel_name() -> str:
    """The numpy wheel the page's Pyodide lock names (best effort; no wait, no network)."""
    try:
        import pyodide_js  # type: ignore[import-not-found]

        name = str(pyodide_js.lockfile.packages.numpy.file_name)
        return name.rsplit("/", 1)[-1] or PYODIDE_NUMPY_WHEEL
    except Exception:
        return PYODIDE_NUMPY_WHEEL


def numpy_fix() -> str:
    """How to get numpy here (native: pip; Pyodide: loadPackage, online only, or a served wheel)."""
    if not in_pyodide():
        return "pip install numpy"
    wheel = _numpy_wheel_name()
    return (
        "await pyodide.loadPackage('numpy') before the first pyaccel call (or call "
        "pyaccel.rescan_backends() after it); that downloads numpy from the Pyodide CDN, so it "
        "needs the network. Offline there is no numpy unless the page serves "
        f"{wheel} (from the Pyodide release; PyPI has none) and loads it by its URL: "
        "await pyodide.loadPackage('<url of that wheel>')"
    )


def wgpu_fix() -> str:
    """How to get the native wgpu backend (never in Pyodide: the page's WebGPU is webgpu:0)."""
    if in_pyodide():
        return "nothing to install in a page: pyaccel uses the browser's WebGPU there (webgpu:0)"
    return ("pip install wgpu==0.32.0; on Linux without a GPU: apt-get install mesa-vulkan-drivers "
            "libvulkan1")


WGPU_IN_PYODIDE = ("wgpu-py is native only: it drives native GPU drivers (Vulkan, Metal, DX12, GL) "
                   "and cannot run in Pyodide; in a page pyaccel uses the browser's WebGPU (webgpu:0)")


def no_device_advice() -> str:
    """The last line of "no device could be opened"."""
    if in_pyodide():
        return ("In a page: open it in a browser with WebGPU over https:// or http://localhost "
                "(see the webgpu line), or load numpy for the cpu device (see the cpu line; needs "
                "the network).")
    return "Install numpy for the cpu backend, or see `pyaccel doctor`."
