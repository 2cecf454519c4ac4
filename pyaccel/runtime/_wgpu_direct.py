"""Every private wgpu-py internal pyaccel uses, in one place, probed once.

wgpu-py (pinned 0.32.0) wraps each wgpu-native call in Python helpers that cost tens of
microseconds where the native call takes a few; pyaccel's hot paths (one bind group and
one dispatch per op, many small writes, the read-back wait) call wgpu-native directly
through these functions instead. Everything here:

* goes through wgpu-py's ``libf`` (its ``SafeLibCalls``): each native call captures the
  errors wgpu-native reports during it and raises them as ``wgpu.GPUError`` exactly as
  the public methods do (no raw ``lib.`` call skips that capture);
* takes wgpu-py objects and reads their private ``_internal`` handle;
* is probed once, at import (:data:`DIRECT` is ``None`` when the probe fails).

``PYACCEL_WGPU_DIRECT=0`` (read when this module is imported) makes :data:`DIRECT`
``None``: the facade then uses only wgpu-py's public API. ``scripts/test.sh`` runs the
backend tests that way too, so both paths stay tested.
"""

from __future__ import annotations

import os
from typing import Any

ENV_VAR = "PYACCEL_WGPU_DIRECT"


class Direct:
    """Direct wgpu-native calls (through wgpu-py's error-capturing ``libf``)."""

    def __init__(self) -> None:
        from wgpu.backends.wgpu_native._api import GPUBindGroup, libf
        from wgpu.backends.wgpu_native._ffi import ffi

        # the functions, struct names and the release helper this module relies on
        for name in ("wgpuComputePassEncoderSetBindGroup", "wgpuComputePassEncoderDispatchWorkgroups",
                     "wgpuQueueWriteBuffer", "wgpuDeviceCreateBindGroup", "wgpuDevicePoll"):
            getattr(libf, name)
        ffi.new("WGPUBindGroupEntry[]", 1)
        ffi.new("WGPUBindGroupDescriptor *")
        ffi.release(ffi.from_buffer(b"1234"))
        self.ffi = ffi
        self.libf = libf
        self.GPUBindGroup = GPUBindGroup
        self.NULL = ffi.NULL
        self._set_group = libf.wgpuComputePassEncoderSetBindGroup
        self._dispatch = libf.wgpuComputePassEncoderDispatchWorkgroups
        self._write = libf.wgpuQueueWriteBuffer
        self._create_group = libf.wgpuDeviceCreateBindGroup
        self._poll = libf.wgpuDevicePoll

    def set_bind_group(self, cpass: Any, group: Any) -> None:
        """``cpass.set_bind_group(0, group)`` without wgpu-py's argument handling."""
        # C: void wgpuComputePassEncoderSetBindGroup(WGPUComputePassEncoder computePassEncoder,
        #        uint32_t groupIndex, WGPUBindGroup group, size_t dynamicOffsetCount,
        #        uint32_t const * dynamicOffsets)
        self._set_group(cpass._internal, 0, group._internal, 0, self.NULL)

    def dispatch(self, cpass: Any, x: int, y: int, z: int) -> None:
        """``cpass.dispatch_workgroups(x, y, z)``."""
        # C: void wgpuComputePassEncoderDispatchWorkgroups(WGPUComputePassEncoder computePassEncoder,
        #        uint32_t workgroupCountX, uint32_t workgroupCountY, uint32_t workgroupCountZ)
        self._dispatch(cpass._internal, x, y, z)

    def write_buffer(self, queue: Any, buf: Any, offset: int, data: memoryview) -> None:
        """``queue.write_buffer(buf, offset, data)``: ``ffi.from_buffer`` instead of the three C
        types wgpu-py parses on first use (~15 ms each at start-up). The caller checked the range."""
        cdata = self.ffi.from_buffer(data)
        try:
            # C: void wgpuQueueWriteBuffer(WGPUQueue queue, WGPUBuffer buffer, uint64_t bufferOffset,
            #        void const * data, size_t size)
            self._write(queue._internal, buf._internal, offset, cdata, data.nbytes)
        finally:
            self.ffi.release(cdata)  # drop the buffer export now, also when the call raised

    def create_bind_group(self, device: Any, layout: Any, entries: list[tuple[int, Any, int, int]]) -> Any:
        """Bind group 0 from (binding, buffer, offset, size): the C descriptor filled in directly
        (~8 us instead of 40-60 us through wgpu-py's struct helpers on lavapipe); the result is
        wgpu-py's ``GPUBindGroup``, which releases it when collected."""
        ffi = self.ffi
        c_entries = ffi.new("WGPUBindGroupEntry[]", len(entries))  # zeroed: no sampler/texture
        for e, (b, buf, o, sz) in zip(c_entries, entries, strict=True):
            e.binding = b
            e.buffer = buf._internal
            e.offset = o
            e.size = sz
        desc = ffi.new("WGPUBindGroupDescriptor *")  # zeroed: no label, no chained struct
        desc.layout = layout._internal
        desc.entries = c_entries
        desc.entryCount = len(entries)
        # C: WGPUBindGroup wgpuDeviceCreateBindGroup(WGPUDevice device,
        #        WGPUBindGroupDescriptor const * descriptor)
        return self.GPUBindGroup("", self._create_group(device._internal, desc), device)

    def poll(self, device: Any, wait: bool = False) -> None:
        """Process the device's finished work on this thread (fires map callbacks).

        ``wait=False`` returns at once: pyaccel polls in a loop with short sleeps so a
        blocking read stays interruptible (Ctrl-C) and can time out."""
        # C: WGPUBool wgpuDevicePoll(WGPUDevice device, WGPUBool wait,
        #        WGPUSubmissionIndex const * submissionIndex)
        self._poll(device._internal, bool(wait), self.NULL)

    @staticmethod
    def map_read_nosync(buf: Any, offset: int, n: int) -> Any:
        """``buf.map_async(READ)`` without the empty submit wgpu-py makes first (a workaround
        for buffers never used in a submit; pyaccel always copied into ``buf`` just before)."""
        return buf.map_async("READ_NOSYNC", offset, n)

    @staticmethod
    def promise_done(promise: Any) -> bool:
        """Whether a wgpu-py promise has its result (fulfilled or failed)."""
        return promise._state != "pending"


def _probe() -> Direct | None:
    if os.environ.get(ENV_VAR, "1").strip() == "0":
        return None
    try:
        return Direct()
    except Exception:  # another wgpu-py: the public API only
        return None


DIRECT: Direct | None = _probe()
