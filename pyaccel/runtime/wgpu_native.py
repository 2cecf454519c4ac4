"""Native GPUs through wgpu-py: Vulkan, Metal, DX12 and GL adapters.

URIs: ``vulkan:N`` / ``metal:N`` / ``dx12:N`` / ``gl:N`` number the adapters of
one API in enumeration order; ``wgpu`` (``wgpu:N``) is the best (N-th best)
native adapter. The canonical URI of a device is its API form.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from ..capabilities import FEATURE_FLAGS, Capability, Limits
from ..device import Device, DeviceDescriptor
from ..errors import BackendUnavailableError, DeviceNotFoundError, KernelCompileError
from ..uri import DeviceURI
from .webgpu_common import Facade, GPUDeviceImpl, compile_error

_API = {"vulkan": "vulkan", "metal": "metal", "d3d12": "dx12", "dx12": "dx12", "opengl": "gl",
        "gl": "gl", "gles": "gl"}
_ADAPTER = {"discretegpu": "discrete", "integratedgpu": "integrated", "cpu": "cpu",
            "virtualgpu": "virtual"}
# Optional features pyaccel uses when an adapter offers them.
WANTED_FEATURES = ("shader-f16", "subgroup", "subgroups", "timestamp-query")
WANTED_LIMITS = (
    "max-buffer-size", "max-storage-buffer-binding-size", "max-compute-workgroup-storage-size",
    "max-compute-invocations-per-workgroup", "max-compute-workgroup-size-x",
    "max-compute-workgroup-size-y", "max-compute-workgroup-size-z",
    "max-compute-workgroups-per-dimension", "max-storage-buffers-per-shader-stage",
)


class WgpuFacade(Facade):
    """The WebGPU primitives over wgpu-py objects."""

    def __init__(self, wgpu: Any, device: Any) -> None:
        self.wgpu = wgpu
        self.device = device
        self.queue = device.queue
        self.runtime_version = f"wgpu-py {wgpu.__version__}"
        self._fast_map = True
        self._pass: Any = None
        self._pass_pipe: Any = None
        self._pass_group: Any = None
        self._pass_keep: list[Any] = []
        self._set_group, self._dispatch_wg, self._null, self._write, self._from_buffer = _direct_calls()
        self._layouts: dict[int, tuple[Any, Any]] = {}  # id(pipeline) -> (pipeline, group 0 layout)
        self._bind_direct = _direct_bind_group()

    def create_buffer(self, size: int, usage: int) -> Any:
        return self.device.create_buffer(size=size, usage=usage)

    def destroy_buffer(self, buf: Any) -> None:
        buf.destroy()

    def write_buffer(self, buf: Any, offset: int, data: memoryview) -> None:
        if self._write is not None:  # (pyaccel checked the range; see _direct_calls)
            self._write(self.queue._internal, buf._internal, offset, self._from_buffer(data), data.nbytes)
            return
        self.queue.write_buffer(buf, offset, data)

    def create_pipeline(self, wgsl: str, entry: str, constants: dict[str, float]) -> Any:
        try:
            module = self.device.create_shader_module(code=wgsl)
            compute: dict[str, Any] = {"module": module, "entry_point": entry}
            if constants:
                compute["constants"] = constants
            return self.device.create_compute_pipeline(layout="auto", compute=compute)
        except self.wgpu.GPUError as exc:
            raise compile_error(wgsl, str(exc)) from None
        except Exception as exc:  # panics surface as other error types in some versions
            if isinstance(exc, KernelCompileError):
                raise
            raise compile_error(wgsl, f"{type(exc).__name__}: {exc}") from None

    def _layout(self, pipeline: Any) -> Any:
        # get_bind_group_layout makes a new wrapper (and a native reference) on every call
        ent = self._layouts.get(id(pipeline))
        if ent is None or ent[0] is not pipeline:
            ent = self._layouts[id(pipeline)] = (pipeline, pipeline.get_bind_group_layout(0))
        return ent[1]

    def create_bind_group(self, pipeline: Any, entries: list[tuple[int, Any, int, int]]) -> Any:
        layout = self._layout(pipeline)
        direct = self._bind_direct
        if direct is not None:
            # wgpuDeviceCreateBindGroup with the descriptor filled in directly: ~8 us instead
            # of ~40-60 us through wgpu-py's struct helpers (see _direct_bind_group)
            ffi, create, wrap = direct
            c_entries = ffi.new("WGPUBindGroupEntry[]", len(entries))
            for e, (b, buf, o, sz) in zip(c_entries, entries, strict=True):
                e.binding = b
                e.buffer = buf._internal
                e.offset = o
                e.size = sz
            desc = ffi.new("WGPUBindGroupDescriptor *")
            desc.layout = layout._internal
            desc.entries = c_entries
            desc.entryCount = len(entries)
            return wrap("", create(self.device._internal, desc), self.device)
        return self.device.create_bind_group(
            layout=layout,
            entries=[{"binding": b, "resource": {"buffer": buf, "offset": o, "size": s}}
                     for b, buf, o, s in entries],
        )

    def create_encoder(self) -> Any:
        return self.device.create_command_encoder()

    def begin_pass(self, encoder: Any) -> Any:
        cpass = encoder.begin_compute_pass()
        self._pass, self._pass_pipe, self._pass_group = cpass, None, None
        return cpass

    def dispatch(self, cpass: Any, pipeline: Any, group: Any, x: int, y: int, z: int) -> None:
        # set_pipeline / set_bind_group only when they change within the pass (each wgpu-py
        # call costs a few microseconds; a chain of the same kernel needs neither)
        if cpass is not self._pass:
            self._pass, self._pass_pipe, self._pass_group = cpass, None, None
        if pipeline is not self._pass_pipe:
            cpass.set_pipeline(pipeline)
            self._pass_pipe, self._pass_group = pipeline, None
        if self._set_group is not None:
            # the two per-dispatch calls straight into wgpu-native (see _direct_calls)
            if group is not self._pass_group:
                self._set_group(cpass._internal, 0, group._internal, 0, self._null)
                self._pass_keep.append(group)  # alive until the pass ends, as wgpu-py would
                self._pass_group = group
            self._dispatch_wg(cpass._internal, x, y, z)
            return
        if group is not self._pass_group:
            cpass.set_bind_group(0, group)
            self._pass_group = group
        cpass.dispatch_workgroups(x, y, z)

    def end_pass(self, cpass: Any) -> None:
        cpass.end()
        if cpass is self._pass:
            self._pass, self._pass_pipe, self._pass_group = None, None, None
            self._pass_keep = []

    def copy(self, encoder: Any, src: Any, src_offset: int, dst: Any, dst_offset: int, n: int) -> None:
        encoder.copy_buffer_to_buffer(src, src_offset, dst, dst_offset, n)

    def submit(self, encoder: Any) -> None:
        self.queue.submit([encoder.finish()])

    def _map_sync(self, buf: Any, offset: int, n: int) -> None:
        """Map for reading and wait, polling on this thread.

        ``buf.map_sync`` first submits an empty command buffer (a wgpu-native workaround for
        buffers never used in a submit; pyaccel always copied into ``buf`` just before) and
        then waits for wgpu-py's poll thread to resolve the promise: two thread hand-offs per
        read. Polling here (``wgpuDevicePoll(wait=True)``) halves the latency of a small
        read on lavapipe. Falls back to ``map_sync`` if this wgpu-py lacks the internals.
        """
        poll = getattr(self.device, "_poll", None)
        if poll is not None and self._fast_map:
            try:
                promise = buf.map_async("READ_NOSYNC", offset, n)
            except Exception:  # another wgpu-py: use the public path from now on
                self._fast_map = False
            else:
                poll(True)
                promise.sync_wait()
                return
        buf.map_sync(self.wgpu.MapMode.READ, offset, n)

    @staticmethod
    def _copy_out(buf: Any, offset: int, n: int, out: memoryview | None) -> Any:
        """Copy a mapped range into ``out`` (or new bytes), then unmap."""
        try:
            mv = buf.read_mapped(offset, n, copy=False)
            if out is not None:
                out.cast("B")[:] = mv.cast("B")
                return out
            return bytes(mv)
        finally:
            buf.unmap()

    def map_read(self, buf: Any, offset: int, n: int, out: memoryview | None = None) -> Any:
        self._map_sync(buf, offset, n)
        return self._copy_out(buf, offset, n, out)

    async def map_read_async(self, buf: Any, offset: int, n: int, out: memoryview | None = None) -> Any:
        await buf.map_async(self.wgpu.MapMode.READ, offset, n)
        return self._copy_out(buf, offset, n, out)

    # queue.on_submitted_work_done_* is broken in wgpu-py 0.32.0 (its callback signature does
    # not match the bundled wgpu-native: TypeError). Waiting on a mapped "fence" works instead:
    # a copy submitted last completes after every earlier submission (one queue, in order).
    def _fence(self) -> Any:
        fence = getattr(self, "_fence_buf", None)
        if fence is None:
            src = self.device.create_buffer(size=4, usage=self.wgpu.BufferUsage.COPY_SRC)
            dst = self.device.create_buffer(
                size=4, usage=self.wgpu.BufferUsage.MAP_READ | self.wgpu.BufferUsage.COPY_DST)
            fence = self._fence_buf = (src, dst)
        enc = self.device.create_command_encoder()
        enc.copy_buffer_to_buffer(fence[0], 0, fence[1], 0, 4)
        self.queue.submit([enc.finish()])
        return fence[1]

    def wait_idle(self) -> None:
        dst = self._fence()
        self._map_sync(dst, 0, 4)
        dst.unmap()

    async def wait_idle_async(self) -> None:
        dst = self._fence()
        await dst.map_async(self.wgpu.MapMode.READ, 0, 4)
        dst.unmap()


def _direct_calls() -> tuple[Any, Any, Any, Any, Any]:
    """(SetBindGroup, DispatchWorkgroups, NULL, QueueWriteBuffer, from_buffer) of wgpu-native
    for the hot paths, or Nones (then the public wgpu-py methods are used).

    * wgpu-py wraps every native call in an error-capturing proxy (about 1 us each); a chain
      of small kernels makes two such calls per dispatch, which dominated pyaccel's recording
      cost. Both calls only append to the pass's command list: wgpu-native validates the
      pass when it ends, and ``end()`` / ``finish()`` still go through wgpu-py, so errors
      surface there as exceptions. These two are raw cffi functions.
    * ``queue.write_buffer`` converts its argument with three C types that cffi parses on
      first use (~15 ms each at start-up); ``ffi.from_buffer`` needs none. The write itself
      keeps wgpu-py's error-capturing proxy.

    Only for the pinned wgpu-py (private ``_ffi`` / ``_api`` modules); set
    ``PYACCEL_WGPU_DIRECT=0`` to use the public methods.
    """
    none = (None, None, None, None, None)
    if os.environ.get("PYACCEL_WGPU_DIRECT", "1") == "0":
        return none
    try:
        from wgpu.backends.wgpu_native._api import libf
        from wgpu.backends.wgpu_native._ffi import ffi, lib

        return (lib.wgpuComputePassEncoderSetBindGroup, lib.wgpuComputePassEncoderDispatchWorkgroups,
                ffi.NULL, libf.wgpuQueueWriteBuffer, ffi.from_buffer)
    except Exception:
        return none


def _direct_bind_group() -> tuple[Any, Any, Any] | None:
    """(ffi, wgpuDeviceCreateBindGroup, GPUBindGroup) of the pinned wgpu-py, or None.

    wgpu-py's ``create_bind_group`` builds each entry through generic struct helpers that
    record every field in a weak dictionary, and fetches a new layout wrapper per call:
    40-60 us per bind group on lavapipe, while the native call takes ~4 us. pyaccel fills
    the C descriptor itself (zeroed by ``ffi.new``: no label, no chained structs) and calls
    the error-capturing ``libf`` wrapper, so a validation error still raises as in wgpu-py;
    the result is wrapped in wgpu-py's ``GPUBindGroup``, which releases it when collected.
    Private API of wgpu-py 0.32.0; ``PYACCEL_WGPU_DIRECT=0`` uses the public method.
    """
    if os.environ.get("PYACCEL_WGPU_DIRECT", "1") == "0":
        return None
    try:
        from wgpu.backends.wgpu_native._api import GPUBindGroup, libf
        from wgpu.backends.wgpu_native._ffi import ffi

        ffi.new("WGPUBindGroupEntry[]", 1)  # the struct names this code relies on
        ffi.new("WGPUBindGroupDescriptor *")
        return ffi, libf.wgpuDeviceCreateBindGroup, GPUBindGroup
    except Exception:
        return None


def _quiet_loader() -> None:
    # The Vulkan loader prints "XDG_RUNTIME_DIR is invalid or not set" without it.
    if not os.environ.get("XDG_RUNTIME_DIR"):
        d = tempfile.mkdtemp(prefix="pyaccel-xdg-")
        os.chmod(d, 0o700)
        os.environ["XDG_RUNTIME_DIR"] = d


class WgpuBackend:
    """Registry backend for wgpu-py adapters."""

    name = "wgpu"
    schemes = ("wgpu", "vulkan", "metal", "dx12", "gl")

    def __init__(self) -> None:
        _quiet_loader()
        try:
            import wgpu
        except ImportError as exc:
            raise BackendUnavailableError(
                f"wgpu-py is not importable ({exc}); fix: pip install wgpu==0.32.0"
            ) from exc
        self.wgpu = wgpu
        try:
            from wgpu.backends.wgpu_native import __version__ as native_version
        except Exception:
            native_version = "?"
        self.version = f"wgpu-py {wgpu.__version__} (wgpu-native {native_version})"
        self._adapters: list[tuple[DeviceDescriptor, Any]] | None = None

    def _enumerate(self) -> list[tuple[DeviceDescriptor, Any]]:
        if self._adapters is not None:
            return self._adapters
        try:
            adapters = self.wgpu.gpu.enumerate_adapters_sync()
        except Exception as exc:
            raise BackendUnavailableError(
                f"wgpu could not enumerate adapters: {exc}; fix: install a GPU driver or, for a "
                "software device, apt-get install mesa-vulkan-drivers libvulkan1"
            ) from exc
        counters: dict[str, int] = {}
        out = []
        for a in adapters:
            info = dict(a.info)
            api = _API.get(str(info.get("backend_type", "")).lower(), str(info.get("backend_type", "")).lower())
            if api not in ("vulkan", "metal", "dx12", "gl"):
                continue
            n = counters.get(api, 0)
            counters[api] = n + 1
            atype = _ADAPTER.get(str(info.get("adapter_type", "")).lower(), "unknown")
            name = info.get("device") or info.get("description") or "unknown adapter"
            vendor = info.get("vendor") or _vendor_name(info.get("vendor_id", 0)) or "unknown"
            desc = DeviceDescriptor(
                uri=f"{api}:{n}", name=str(name), vendor=str(vendor), api=api, adapter_type=atype,
                backend=self.name, vendor_id=int(info.get("vendor_id", 0) or 0),
                device_id=int(info.get("device_id", 0) or 0),
                driver=str(info.get("description", "")), arch=str(info.get("architecture", "")),
                extra={"features": tuple(sorted(a.features)), "limits": dict(a.limits),
                       "adapter_info": info},
            )
            out.append((desc, a))
        self._adapters = out
        return out

    def devices(self) -> list[DeviceDescriptor]:
        return [d for d, _ in self._enumerate()]

    def resolve(self, uri: DeviceURI) -> DeviceDescriptor:
        descs = self.devices()
        if uri.path is not None:
            raise DeviceNotFoundError(
                f"device {str(uri)!r}: the {uri.scheme} scheme takes an ordinal, not a path; "
                f"devices: {', '.join(d.uri for d in descs) or 'none'}"
            )
        if uri.scheme == "wgpu":
            from ..registry import _API_RANK, _adapter_rank

            pool = sorted(descs, key=lambda d: (_adapter_rank(d), _API_RANK.get(d.api, 2)))
        else:
            pool = [d for d in descs if d.api == uri.scheme]
        i = uri.ordinal or 0
        if i >= len(pool):
            have = ", ".join(d.uri for d in pool) or "none"
            raise DeviceNotFoundError(
                f"no device {str(uri)!r}: this machine has {len(pool)} {uri.scheme} device(s) ({have}); "
                f"all wgpu devices: {', '.join(d.uri for d in descs) or 'none'}. "
                "Run `pyaccel devices` to list them"
                + ("; for a software Vulkan device: apt-get install mesa-vulkan-drivers libvulkan1"
                   if not pool and uri.scheme == "vulkan" else "")
            )
        return pool[i]

    def open(self, desc: DeviceDescriptor) -> Device:
        adapter = dict((d.uri, a) for d, a in self._enumerate())[desc.uri]
        feats = [f for f in WANTED_FEATURES if f in adapter.features]
        limits = {k: v for k, v in adapter.limits.items() if k in WANTED_LIMITS}
        dev = adapter.request_device_sync(required_features=feats, required_limits=limits,
                                          label=f"pyaccel {desc.uri}")
        return Device(desc, self._impl(desc, dev, feats))

    async def open_async(self, desc: DeviceDescriptor) -> Device:
        adapter = dict((d.uri, a) for d, a in self._enumerate())[desc.uri]
        feats = [f for f in WANTED_FEATURES if f in adapter.features]
        limits = {k: v for k, v in adapter.limits.items() if k in WANTED_LIMITS}
        dev = await adapter.request_device_async(required_features=feats, required_limits=limits,
                                                 label=f"pyaccel {desc.uri}")
        return Device(desc, self._impl(desc, dev, feats))

    def _impl(self, desc: DeviceDescriptor, dev: Any, feats: list[str]) -> GPUDeviceImpl:
        caps = Capability.NONE
        for f in dev.features:
            caps |= FEATURE_FLAGS.get(f, Capability.NONE)
        if desc.is_software:
            caps |= Capability.SOFTWARE | Capability.UNIFIED_MEMORY
        elif desc.adapter_type == "integrated":
            caps |= Capability.UNIFIED_MEMORY
        limits = Limits.from_webgpu(dict(dev.limits))
        info = [f"  features        : {', '.join(sorted(dev.features)) or 'none'}",
                f"  adapter features: {', '.join(desc.extra.get('features', ())) or 'none'}"]
        return GPUDeviceImpl(WgpuFacade(self.wgpu, dev), limits, caps, info)


def _vendor_name(vid: int) -> str:
    return {0x10DE: "NVIDIA", 0x1002: "AMD", 0x8086: "Intel", 0x106B: "Apple", 0x13B5: "ARM",
            0x5143: "Qualcomm", 0x10005: "Mesa"}.get(int(vid or 0), "")
