"""Every private wgpu-py internal pyaccel uses, in one place, probed once.

wgpu-py (pinned 0.32.0) wraps each wgpu-native call in Python helpers that cost tens of
microseconds where the native call takes a few; pyaccel's hot paths (one bind group and
one dispatch per op, many small writes, the read-back wait) call wgpu-native directly
through these functions instead. Everything here:

* runs inside wgpu-py's error capture: each native call either goes through wgpu-py's
  ``libf`` (its ``SafeLibCalls``), which captures the errors wgpu-native reports during the
  call and raises them as ``wgpu.GPUError`` exactly as the public methods do, or, for the
  per-dispatch pair ``SetBindGroup`` + ``DispatchWorkgroups`` (:meth:`Direct.record`), is
  made inside one capture of that same ``ErrorHandler`` spanning all the dispatches of a
  compute pass (the protocol ``libf`` uses, once per pass instead of once per call): no
  native call runs outside a capture;
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
_RECORD = "pyaccel: wgpuComputePassEncoderSetBindGroup + DispatchWorkgroups"


class Direct:
    """Direct wgpu-native calls (through wgpu-py's error-capturing ``libf``)."""

    def __init__(self) -> None:
        from wgpu.backends.wgpu_native._api import GPUBindGroup, GPUPromise, libf
        from wgpu.backends.wgpu_native._ffi import ffi, lib
        from wgpu.backends.wgpu_native._helpers import ERROR_TYPES

        # the functions, struct names, error capture and promise internals this module relies on
        for name in ("wgpuComputePassEncoderSetBindGroup", "wgpuComputePassEncoderDispatchWorkgroups",
                     "wgpuQueueWriteBuffer", "wgpuDeviceCreateBindGroup", "wgpuDevicePoll"):
            getattr(libf, name)
        errors = libf._error_handler
        errors.capture(_RECORD)
        if errors.release(_RECORD) is not None:
            raise RuntimeError("wgpu-py's error capture does not work as expected")
        probe = GPUPromise("pyaccel probe", None)
        probe._set_input(None)  # (resolved: wgpu-py drops it from its unresolved set)
        if not probe._thread_event.is_set():
            raise RuntimeError("wgpu-py's promise does not set its thread event")
        ffi.new("WGPUBindGroupEntry[]", 1)
        ffi.new("WGPUBindGroupDescriptor *")
        ffi.release(ffi.from_buffer(b"1234"))
        self.ffi = ffi
        self.libf = libf
        self.GPUBindGroup = GPUBindGroup
        self.NULL = ffi.NULL
        self._errors = errors
        self._error_types = ERROR_TYPES
        # the pair made per dispatch: called inside one capture of ``errors`` (see record)
        self._set_group = lib.wgpuComputePassEncoderSetBindGroup
        self._dispatch = lib.wgpuComputePassEncoderDispatchWorkgroups
        self._write = libf.wgpuQueueWriteBuffer
        self._create_group = libf.wgpuDeviceCreateBindGroup
        self._poll = libf.wgpuDevicePoll

    def record(self, cpass: Any, commands: list[tuple[Any, Any, int, int, int]]) -> None:
        """Record ``commands`` into the compute pass ``cpass``: each is ``(pipeline, group, x,
        y, z)``, meaning ``cpass.set_pipeline(pipeline)`` (unless None), ``cpass.set_bind_group(0,
        group)`` (unless None) and ``cpass.dispatch_workgroups(x, y, z)``, in order.

        The facade queues a pass's dispatches and records them here when the pass ends, so the
        whole run of native calls is made inside **one** capture of wgpu-py's ``ErrorHandler``
        (the capture / release protocol of ``libf``'s proxies, once per pass instead of once
        per call; ``set_pipeline`` goes through wgpu-py and nests its own capture). An error
        wgpu-native reports during any of the calls is raised here, as the ``wgpu.GPUError``
        subclass ``libf`` would raise (when several calls report one, wgpu-py's handler logs
        the earlier messages and the last is raised). wgpu-native 29 validates pass commands
        when the encoder is finished, which wgpu-py's public ``finish()`` captures; what these
        calls report directly is a misuse of the pass itself (e.g. recording after its end).
        """
        errors = self._errors
        set_group, dispatch, null = self._set_group, self._dispatch, self.NULL
        p = cpass._internal
        errors.capture(_RECORD)
        try:
            for pipeline, group, x, y, z in commands:
                if pipeline is not None:
                    cpass.set_pipeline(pipeline)
                if group is not None:
                    # C: void wgpuComputePassEncoderSetBindGroup(WGPUComputePassEncoder computePassEncoder,
                    #        uint32_t groupIndex, WGPUBindGroup group, size_t dynamicOffsetCount,
                    #        uint32_t const * dynamicOffsets)
                    set_group(p, 0, group._internal, 0, null)
                # C: void wgpuComputePassEncoderDispatchWorkgroups(WGPUComputePassEncoder computePassEncoder,
                #        uint32_t workgroupCountX, uint32_t workgroupCountY, uint32_t workgroupCountZ)
                dispatch(p, x, y, z)
        finally:
            err = errors.release(_RECORD)
        if err is not None:
            raise self._error_types.get(err[0], self._error_types[""])(err[1])

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

        ``wait=False`` returns at once (a blocking poll would make Ctrl-C and timeouts wait
        for the GPU); a wait then sleeps on the promise (:meth:`promise_wait`)."""
        # C: WGPUBool wgpuDevicePoll(WGPUDevice device, WGPUBool wait,
        #        WGPUSubmissionIndex const * submissionIndex)
        self._poll(device._internal, bool(wait), self.NULL)

    @staticmethod
    def map_read_nosync(buf: Any, offset: int, n: int) -> Any:
        """``buf.map_async(READ)`` without the empty submit wgpu-py makes first (a workaround
        for buffers never used in a submit; pyaccel always copied into ``buf`` just before)."""
        return buf.map_async("READ_NOSYNC", offset, n)

    @staticmethod
    def promise_wait(promise: Any, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a wgpu-py promise to get its result; True once
        it has. wgpu-py's poll thread (which a pending map keeps polling, blocking in
        ``wgpuDevicePoll``) sets the promise's thread event the moment the map resolves, so
        this wakes at once, like ``sync_wait``; unlike it, it returns after ``timeout`` (and
        a signal, Ctrl-C, interrupts it on POSIX), so the caller can check its deadline."""
        return promise._thread_event.wait(timeout)


def _probe() -> Direct | None:
    if os.environ.get(ENV_VAR, "1").strip() == "0":
        return None
    try:
        return Direct()
    except Exception:  # another wgpu-py: the public API only
        return None


DIRECT: Direct | None = _probe()
