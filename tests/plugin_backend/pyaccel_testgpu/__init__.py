"""A test-only WebGPU-shaped backend: one module plus one record (issue 8, item 5).

It registers the ``testgpu`` URI scheme through the ``pyaccel.backends`` entry-point group
(``pyaccel_testgpu-0.0.dist-info/entry_points.txt`` beside this package; put this folder on
``PYTHONPATH``) and wraps wgpu-py's facade with nothing pyaccel-internal beyond the public
backend contract: descriptors, ``resolve``, ``open`` returning a ``Device`` over a
``GPUDeviceImpl``. ``testgpu:N`` is the N-th native Vulkan adapter under another name.
``scripts/test.sh`` runs the kernel and array-op backend tests on ``testgpu:0``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pyaccel.device import Device, DeviceDescriptor
from pyaccel.errors import DeviceNotFoundError
from pyaccel.registry import BackendEntry
from pyaccel.uri import DeviceURI

SCHEME = "testgpu"


class TestGPUBackend:
    """Registry backend: the Vulkan adapters of wgpu-py, renamed ``testgpu:N``."""

    name = SCHEME
    schemes = (SCHEME,)

    def __init__(self) -> None:
        from pyaccel.runtime.wgpu_native import WgpuBackend

        self._wgpu = WgpuBackend()  # raises BackendUnavailableError without wgpu-py
        self.version = f"testgpu over {self._wgpu.version}"
        self._descs: list[tuple[DeviceDescriptor, DeviceDescriptor]] | None = None

    def _pairs(self) -> list[tuple[DeviceDescriptor, DeviceDescriptor]]:
        if self._descs is None:
            inner = [d for d in self._wgpu.devices() if d.api == "vulkan"]
            self._descs = [
                (dataclasses.replace(d, uri=f"{SCHEME}:{i}", backend=self.name, api=SCHEME), d)
                for i, d in enumerate(inner)
            ]
        return self._descs

    def devices(self) -> list[DeviceDescriptor]:
        return [d for d, _ in self._pairs()]

    def resolve(self, uri: DeviceURI) -> DeviceDescriptor:
        descs = self.devices()
        i = uri.ordinal or 0
        if uri.path is not None or i >= len(descs):
            raise DeviceNotFoundError(
                f"no device {str(uri)!r}: testgpu has {len(descs)} device(s) "
                f"({', '.join(d.uri for d in descs) or 'none'})"
            )
        return descs[i]

    def open(self, desc: DeviceDescriptor) -> Device:
        inner = dict((d.uri, w) for d, w in self._pairs())[desc.uri]
        dev: Any = self._wgpu.open(inner)  # a wgpu device on the same adapter ...
        return Device(desc, dev.impl)  # ... presented under this backend's descriptor


def entry() -> BackendEntry:
    """The record the ``pyaccel.backends`` entry point gives the registry."""
    return BackendEntry(
        SCHEME, "pyaccel_testgpu:TestGPUBackend", priority=10, schemes=(SCHEME,),
        description="test-only WebGPU-shaped backend (wgpu facade under the testgpu scheme)",
        fix="put tests/plugin_backend on PYTHONPATH and install wgpu-py with a Vulkan driver",
    )
