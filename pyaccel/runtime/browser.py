"""The browser's WebGPU through Pyodide (``webgpu:0``, ``webgpu://high-performance``,
``webgpu://low-power``). Implements the WebGPU facade over JS objects via pyodide.ffi."""

from __future__ import annotations

import sys

from ..errors import BackendUnavailableError


def in_pyodide() -> bool:
    return sys.platform == "emscripten"


class BrowserBackend:
    """Registry backend for the browser's WebGPU (full facade: step 4)."""

    name = "webgpu"
    schemes = ("webgpu",)

    def __init__(self) -> None:
        if not in_pyodide():
            raise BackendUnavailableError(
                "not running in a browser (Pyodide): the webgpu backend drives navigator.gpu from a "
                "web page; natively use the wgpu backend (vulkan:0, metal:0, ...) or cpu"
            )
        raise BackendUnavailableError("the browser backend is not built yet")
