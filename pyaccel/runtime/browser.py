"""The browser's WebGPU through Pyodide: ``webgpu:0`` (the default adapter),
``webgpu://high-performance`` and ``webgpu://low-power``.

:class:`JsFacade` implements the WebGPU facade of ``webgpu_common`` over JS objects
through ``pyodide.ffi``, so every kernel, op, pool and cache runs unchanged here.
Descriptors cross the boundary once per call as plain JS objects
(``to_js(..., dict_converter=Object.fromEntries)``); data crosses as one
``Uint8Array`` copy each way.

Waiting on a promise: with JSPI (``pyodide.ffi.can_run_sync()``, true inside
``runPythonAsync``) sync calls wait through ``run_sync``; without it, a sync call
that must wait raises :class:`AsyncRequiredError` naming its async twin.
"""

from __future__ import annotations

import sys
from typing import Any

from ..capabilities import FEATURE_FLAGS, Capability, Limits
from ..device import Device, DeviceDescriptor
from ..errors import (
    AsyncRequiredError,
    BackendUnavailableError,
    DeviceLostError,
    DeviceNotFoundError,
    DeviceTimeoutError,
    KernelCompileError,
    OutOfDeviceMemoryError,
    PyaccelError,
)
from ..uri import DeviceURI
from .webgpu_common import Facade, GPUDeviceImpl, compile_error

WANTED_FEATURES = ("shader-f16", "subgroups", "timestamp-query")
LIMIT_NAMES = (
    "maxBufferSize", "maxStorageBufferBindingSize", "maxUniformBufferBindingSize",
    "maxStorageBuffersPerShaderStage", "maxComputeWorkgroupSizeX", "maxComputeWorkgroupSizeY",
    "maxComputeWorkgroupSizeZ", "maxComputeInvocationsPerWorkgroup",
    "maxComputeWorkgroupsPerDimension", "maxComputeWorkgroupStorageSize",
    "minStorageBufferOffsetAlignment", "minUniformBufferOffsetAlignment",
)
# Limits pyaccel raises to the adapter's maximum when requesting the device.
REQUESTED_LIMITS = LIMIT_NAMES[:10]
PATHS = {"high-performance": "high-performance", "low-power": "low-power"}
READ_TWINS = ("await buf.read_async() (buffers), await x.tolist_async() / x.tobytes_async() / "
              "x.to_numpy_async() (arrays), await kernel.call_async(...) (kernels with host outputs)")


# With JSPI, buffer creations at least this large are checked at once (one wait each), so an
# allocation the browser cannot make raises OutOfDeviceMemoryError where it happens; smaller
# ones (and all without JSPI) are checked at the next sync point.
CHECK_ALLOC_NOW_BYTES = 1 << 20


class WebGPUError(PyaccelError, RuntimeError):
    """The browser's WebGPU reported a validation or internal error for work pyaccel sent.

    ``kind`` is the WebGPU error type (``"validation"``, ``"internal"``, ...), ``what`` the
    operation it came from. Raised at the next sync point (a read, ``synchronize``) instead
    of returning data, since the failed work wrote nothing.
    """

    def __init__(self, message: str, *, kind: str = "", what: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.what = what


def in_pyodide() -> bool:
    return sys.platform == "emscripten"


def _ffi() -> Any:
    import pyodide.ffi as ffi

    return ffi


def can_wait() -> bool:
    """True when sync code may wait for a promise (JSPI: inside ``runPythonAsync``)."""
    can = getattr(_ffi(), "can_run_sync", None)
    return can is not None and bool(can())


def async_required(twin: str) -> AsyncRequiredError:
    return AsyncRequiredError(
        f"this call has to wait for the browser's WebGPU, and synchronous waiting (JSPI) is not "
        f"available here; use the async form: {twin} (or run the code with "
        "pyodide.runPythonAsync in a browser with JSPI)"
    )


def wait(promise: Any, twin: str) -> Any:
    """Wait for a JS promise from sync code (JSPI), or explain the async twin to use."""
    if can_wait():
        return _ffi().run_sync(promise)
    raise async_required(twin)


# JS helpers (one per hot path), compiled once per page: each turns several JS calls into one
# crossing of the Python/JS boundary. ``writeFrom`` / ``readInto`` take a PyProxy of a Python
# buffer and use a view of the WebAssembly heap (``getBuffer``), so data is copied once.
#
# GPU errors: WebGPU reports them asynchronously (an invalid buffer or command buffer is
# returned, the error comes later). ``state(device)`` keeps, per device, the promises of the
# error scopes pushed around every buffer creation and every submit (``checks``), the errors
# they and the device's ``uncapturederror`` event reported (``errors``) and the loss
# (``lost``). Every sync point (``mapRead``, ``idle``) first waits for the pending checks and
# returns the first error instead of data, so a read never returns a staging buffer's old
# bytes after a failed copy.
# The JS program lives in browser_helpers.js (package data, next to this module).
JS_HELPERS_FILE = "browser_helpers.js"
_helpers: Any = None
# Transfers at least this large go through a heap view (one copy) instead of to_js (two).
ZERO_COPY_MIN_BYTES = 16384


def _js_helpers() -> Any:
    global _helpers
    if _helpers is None:
        from importlib import resources

        from pyodide.code import run_js

        _helpers = run_js(resources.files(__package__).joinpath(JS_HELPERS_FILE).read_text())
    return _helpers


def _byte_view(m: memoryview) -> memoryview:
    return m if m.format == "B" and m.ndim == 1 else m.cast("B")


class JsFacade(Facade):
    """The WebGPU primitives over JS objects (``GPUDevice``) through pyodide.ffi.

    ``calls`` counts crossings into JS made here (``memory_stats()['ffi_calls']``): a chained
    dispatch of the same kernel on the same buffers is one call. Without JSPI, pipelines are
    created unchecked and their compilation is checked at the next ``await`` (a read or
    ``synchronize_async``), which raises :class:`KernelCompileError`.
    """

    def __init__(self, device: Any, runtime_version: str) -> None:
        import js

        self.js = js
        self.ffi = _ffi()
        self.device = device
        self.queue = device.queue
        self.runtime_version = runtime_version
        self.calls = 0
        # contract 3: None while the device is alive, then why it was lost
        self.lost_reason: str | None = None
        self._obj = js.Object.fromEntries
        h = _js_helpers()
        self._st = h.state(device)  # pending error-scope checks, recorded errors, loss
        # buffers created without an immediate check, by sequence number, until a sync point
        # has settled their check; ids of those the device reported invalid (never reused)
        self._seq = 0
        self._unverified: dict[int, Any] = {}
        self._invalid: dict[int, Any] = {}  # id -> buffer (kept alive so the id stays unique)
        self._h_create_buffer = h.createBuffer
        self._h_map_read = h.mapRead
        self._h_idle = h.idle
        self._h_check = h.check
        self._h_race = h.race
        self._late: tuple[Any, int] | None = None  # a sync point that timed out: (promise, upto)
        # bound JS functions, looked up once (an attribute lookup costs as much as a call)
        self._h_dispatch = h.dispatch
        self._h_submit = h.submit
        self._h_write_from = h.writeFrom
        self._h_write = h.write
        self._h_bind_group = h.bindGroup
        self._h_shader_module = h.shaderModule
        self._h_read_into = h.readInto
        self._h_read_bytes = h.readBytes
        self._create_encoder = device.createCommandEncoder
        self._map_read_mode = js.GPUMapMode.READ
        self._create_proxy = self.ffi.create_proxy
        self._to_js = self.ffi.to_js
        # state of the open compute pass: what is already set on it
        self._pass: Any = None
        self._pass_pipe: Any = None
        self._pass_group: Any = None
        # no-JSPI compilation checks: (wgsl, compilation-info promise, error-scope promise, pipeline)
        self._unchecked: list[tuple[str, Any, Any, Any]] = []
        self._bad: dict[int, KernelCompileError] = {}

    def _o(self, d: dict) -> Any:
        return self.ffi.to_js(d, dict_converter=self._obj)

    def _lost_error(self) -> DeviceLostError:
        return DeviceLostError(
            f"the WebGPU device was lost ({self.lost_reason}); its arrays and buffers are gone. "
            "Open a fresh device with pyaccel.device('webgpu') (JSPI) or "
            "await pyaccel.device_async('webgpu') and create the data again (reload the page "
            "if that fails too)")

    def _check(self) -> None:
        if self.lost_reason is not None:
            raise self._lost_error()

    def mark_lost(self, reason: str) -> None:
        """Record the loss (the ``device.lost`` promise, or a failure that says so)."""
        if self.lost_reason is None:
            self.lost_reason = reason or "the device was destroyed"

    def buffer_ok(self, buf: Any) -> bool:
        return not self._invalid or id(buf) not in self._invalid

    def close(self) -> None:
        """Device.close(): destroy the page's GPUDevice (its loss promise then settles)."""
        self._unverified.clear()
        self._unchecked.clear()
        try:
            self.device.destroy()
        except Exception:  # noqa: BLE001 - already gone
            pass

    def _settled(self, upto: int, err: Any) -> None:
        """After a sync point: the checks of buffers created before ``upto`` are settled;
        those the device reported invalid are remembered (the pool drops them)."""
        if err and getattr(err, "bad", None):
            for seq in err.bad:
                buf = self._unverified.get(int(seq))
                if buf is not None:
                    self._invalid[id(buf)] = buf
        un = self._unverified
        while un:
            seq = next(iter(un))
            if seq >= upto:
                break
            del un[seq]

    def _error(self, err: Any, deferred: bool = True) -> PyaccelError:
        """The typed pyaccel error for a GPU error record of the JS helpers (``deferred``:
        found at a sync point, after more work may have been recorded)."""
        kind = str(err.kind)
        message = str(err.message)
        what = str(err.what or "")
        count = int(err.count or 0)
        if kind == "lost":
            self.mark_lost(message)
            return self._lost_error()
        message = message.strip()
        more = f" (and {count} more GPU error(s) since the last sync point)" if count else ""
        after = ("Nothing was read: work recorded in the same batch did not run, so arrays "
                 "computed since the last successful read may hold wrong values; recompute them. "
                 "The device is still usable." if deferred else
                 "Nothing was allocated; the device is still usable.")
        if kind == "out-of-memory" or what.startswith("allocating"):
            return OutOfDeviceMemoryError(
                f"the browser's WebGPU could not allocate ({what or kind}): {kind} error: {message}"
                f"{more}. Free arrays you no longer need (del / .free()) or use smaller data. {after}")
        return WebGPUError(
            f"the browser's WebGPU reported a {kind} error in {what or 'recorded work'}: {message}"
            f"{more}. {after}", kind=kind, what=what)

    def _js_failure(self, exc: BaseException) -> PyaccelError | None:
        """A typed error for a JS exception (AbortError / a lost device), or None."""
        text = str(exc)
        if self.lost_reason is not None or "AbortError" in text or "lost" in text.lower():
            self.mark_lost(text)
            return self._lost_error()
        return None

    def create_buffer(self, size: int, usage: int) -> Any:
        self._check()
        self.calls += 1
        if size >= CHECK_ALLOC_NOW_BYTES and can_wait():
            try:
                res = self.ffi.run_sync(self._h_create_buffer(self._st, self.device, size, usage, True, -1))
            except Exception as exc:
                raise self._js_failure(exc) or OutOfDeviceMemoryError(
                    f"allocating {size} bytes failed on the device: {exc}") from None
            err = res.error
            if err:
                res.buf.destroy()
                raise self._error(err, deferred=False)
            return res.buf
        try:
            seq = self._seq
            buf = self._h_create_buffer(self._st, self.device, size, usage, False, seq)
            self._seq = seq + 1
            self._unverified[seq] = buf
            return buf
        except Exception as exc:  # a synchronous JS exception (RangeError, TypeError, ...)
            raise self._js_failure(exc) or OutOfDeviceMemoryError(
                f"allocating {size} bytes failed on the device: {exc}") from None

    def destroy_buffer(self, buf: Any) -> None:
        self.calls += 1
        if self._invalid:
            self._invalid.pop(id(buf), None)
        buf.destroy()

    def write_buffer(self, buf: Any, offset: int, data: memoryview) -> None:
        self._check()
        self.calls += 1
        data = _byte_view(data)
        if data.nbytes < ZERO_COPY_MIN_BYTES:
            # to_js copies into a fresh Uint8Array; cheaper than a proxy for small blocks
            self._h_write(self._st, self.device, self.queue, buf, offset, self._to_js(data))
            return
        proxy = self._create_proxy(data)
        try:
            # writeBuffer from a heap view (inside a validation error scope)
            self._h_write_from(self._st, self.device, self.queue, buf, offset, proxy)
        finally:
            proxy.destroy()

    # -- pipelines ----------------------------------------------------------------------
    def _compile_messages(self, wgsl: str, info: Any) -> KernelCompileError | None:
        errors = [m for m in info.messages if m.type == "error"]
        if not errors:
            return None
        m = errors[0]
        text = "\n".join(f"wgsl:{e.lineNum}:{e.linePos}: {e.message}" for e in errors)
        return compile_error(wgsl, text, int(m.lineNum) or None, int(m.linePos) or None)

    def create_pipeline(self, wgsl: str, entry: str, constants: dict[str, float]) -> Any:
        self._check()
        module = self._h_shader_module(self.device, wgsl)
        self.calls += 1
        ffi = self.ffi
        jspi = can_wait()
        if jspi:
            info = ffi.run_sync(module.getCompilationInfo())
            self.calls += 1
            err = self._compile_messages(wgsl, info)
            if err is not None:
                raise err
        compute: dict[str, Any] = {"module": module, "entryPoint": entry}
        if constants:
            compute["constants"] = dict(constants)
        desc = self._o({"layout": "auto", "compute": compute})
        self.calls += 1
        if jspi:
            try:
                return ffi.run_sync(self.device.createComputePipelineAsync(desc))
            except KernelCompileError:
                raise
            except Exception as exc:  # GPUPipelineError (bad entry point, bad constants, ...)
                raise compile_error(wgsl, f"{type(exc).__name__}: {exc}") from None
        # Without JSPI the pipeline is created unchecked; WebGPU reports errors asynchronously,
        # so the compilation info and the validation scope are awaited at the next await.
        self.calls += 4
        self.device.pushErrorScope("validation")
        pipe = self.device.createComputePipeline(desc)
        scope = self.device.popErrorScope()
        self._unchecked.append((wgsl, module.getCompilationInfo(), scope, pipe))
        return pipe

    def _verdict(self, wgsl: str, info: Any, scope_err: Any, pipe: Any) -> None:
        err = self._compile_messages(wgsl, info)
        if err is None and scope_err:
            msg = str(getattr(scope_err, "message", scope_err))
            err = compile_error(wgsl, f"GPUValidationError: {msg}")
        if err is not None:
            self._bad[id(pipe)] = err
            raise err

    async def check_pending_async(self) -> None:
        """Await the compilation checks of pipelines created without JSPI (raises the first error)."""
        while self._unchecked:
            wgsl, info, scope, pipe = self._unchecked.pop(0)
            self._verdict(wgsl, await info, await scope, pipe)

    def _check_pending_sync(self) -> None:
        run_sync = self.ffi.run_sync
        while self._unchecked:
            wgsl, info, scope, pipe = self._unchecked.pop(0)
            self._verdict(wgsl, run_sync(info), run_sync(scope), pipe)

    def _compile_checks_sync(self) -> None:
        """The no-JSPI compilation checks at a sync point; on a KernelCompileError the GPU
        errors of the batch (its consequences: invalid bind groups, a failed submit) are
        settled and dropped with it, so they do not fail a later, unrelated read."""
        try:
            self._check_pending_sync()
        except KernelCompileError:
            upto = self._seq
            self._settled(upto, self.ffi.run_sync(self._h_check(self._st)))
            raise

    async def _compile_checks_async(self) -> None:
        try:
            await self.check_pending_async()
        except KernelCompileError:
            upto = self._seq
            self._settled(upto, await self._h_check(self._st))
            raise

    def _usable(self, pipeline: Any) -> None:
        if self._bad:
            err = self._bad.get(id(pipeline))
            if err is not None:
                raise err

    def create_bind_group(self, pipeline: Any, entries: list[tuple[int, Any, int, int]]) -> Any:
        self._usable(pipeline)
        self.calls += 2
        return self._h_bind_group(self._st, self.device, pipeline, self.ffi.to_js(
            [{"binding": b, "resource": {"buffer": buf, "offset": o, "size": s}}
             for b, buf, o, s in entries], dict_converter=self._obj))

    # -- commands -----------------------------------------------------------------------
    def create_encoder(self) -> Any:
        self._check()
        self.calls += 1
        return self._create_encoder()

    def begin_pass(self, encoder: Any) -> Any:
        self.calls += 1
        cpass = encoder.beginComputePass()
        self._pass, self._pass_pipe, self._pass_group = cpass, None, None
        return cpass

    def dispatch(self, cpass: Any, pipeline: Any, group: Any, x: int, y: int, z: int) -> None:
        # one JS call; setPipeline / setBindGroup only when they change within the pass
        if cpass is not self._pass:
            self._pass, self._pass_pipe, self._pass_group = cpass, None, None
        if pipeline is self._pass_pipe:
            pipe_arg = None
            group_arg = None if group is self._pass_group else group
        else:
            self._usable(pipeline)
            pipe_arg, group_arg = pipeline, group
        self._pass_pipe, self._pass_group = pipeline, group
        self.calls += 1
        self._h_dispatch(cpass, pipe_arg, group_arg, x, y, z)

    def end_pass(self, cpass: Any) -> None:
        self.calls += 1
        cpass.end()
        if cpass is self._pass:
            self._pass, self._pass_pipe, self._pass_group = None, None, None

    def copy(self, encoder: Any, src: Any, src_offset: int, dst: Any, dst_offset: int, n: int) -> None:
        self.calls += 1
        encoder.copyBufferToBuffer(src, src_offset, dst, dst_offset, n)

    def submit(self, encoder: Any) -> None:
        self._check()
        self.calls += 1
        try:
            self._h_submit(self._st, self.device, self.queue, encoder)  # inside error scopes
        except Exception as exc:
            raise self._js_failure(exc) or WebGPUError(
                f"submitting GPU work failed: {exc}", kind="submit", what="queue.submit") from None

    # -- reads --------------------------------------------------------------------------
    def _copy_out(self, buf: Any, offset: int, n: int, out: memoryview | None) -> Any:
        if out is not None:
            # one copy: mapped range -> Python memory (a heap view of ``out``); unmaps
            self.calls += 1
            proxy = self._create_proxy(_byte_view(out))
            try:
                self._h_read_into(buf, offset, n, proxy)
            finally:
                proxy.destroy()
            return out
        self.calls += 2
        u8 = self._h_read_bytes(buf, offset, n)
        try:
            return u8.to_bytes()  # one copy: mapped range -> Python bytes
        finally:
            buf.unmap()

    def map_read(self, buf: Any, offset: int, n: int, out: memoryview | None = None,
                 timeout: float | None = None) -> Any:
        if self._unchecked and can_wait():
            self._compile_checks_sync()
        if not can_wait():
            # checked before mapAsync: a pending map would leave the staging buffer unusable
            raise async_required(READ_TWINS)
        self._check()
        self._finish_late(timeout)
        self.calls += 1
        try:
            # waits for the map *and* the pending error checks; an error means no data
            upto = self._seq
            err = self._wait(self._h_map_read(self._st, buf, self._map_read_mode, offset, n), upto,
                             timeout)
        except PyaccelError:
            raise
        except Exception as exc:
            raise self._js_failure(exc) or WebGPUError(f"reading back failed: {exc}", kind="map") from None
        self._settled(upto, err)
        if err:
            raise self._error(err)
        return self._copy_out(buf, offset, n, out)

    async def map_read_async(self, buf: Any, offset: int, n: int, out: memoryview | None = None) -> Any:
        if self._unchecked:
            await self._compile_checks_async()
        self._check()
        await self._finish_late_async()
        self.calls += 1
        try:
            upto = self._seq
            err = await self._h_map_read(self._st, buf, self._map_read_mode, offset, n)
        except Exception as exc:
            raise self._js_failure(exc) or WebGPUError(f"reading back failed: {exc}", kind="map") from None
        self._settled(upto, err)
        if err:
            raise self._error(err)
        return self._copy_out(buf, offset, n, out)

    def wait_idle(self, timeout: float | None = None) -> None:
        if self._unchecked and can_wait():
            self._compile_checks_sync()
        self._check()
        if not can_wait():  # before creating the promise: it would consume the pending checks
            raise async_required("await device.synchronize_async()")
        self._finish_late(timeout)
        self.calls += 1
        upto = self._seq
        err = self._wait(self._h_idle(self._st, self.queue), upto, timeout)
        self._settled(upto, err)
        if err:
            raise self._error(err)

    def _wait(self, promise: Any, upto: int, timeout: float | None) -> Any:
        """``run_sync(promise)``; with ``timeout`` (seconds) DeviceTimeoutError when it has not
        settled by then. The promise is kept: the next sync point settles it first, so the
        error checks it carries are never lost."""
        if timeout is None:
            return self.ffi.run_sync(promise)
        res = self.ffi.run_sync(self._h_race(promise, max(0.0, float(timeout)) * 1000.0))
        if res is not None and str(getattr(res, "kind", "")) == "pyaccel-timeout":
            if self._late is None:
                self._late = (promise, upto)
            raise DeviceTimeoutError(
                f"the device did not finish within timeout={timeout} s; its work keeps running: "
                "wait again (a longer timeout, or none) or read later; the device stays usable")
        return res

    def _finish_late(self, timeout: float | None = None) -> None:
        """Settle a sync point that timed out earlier (raises the GPU error it reports; with
        ``timeout``, DeviceTimeoutError again while it is still pending)."""
        if self._late is not None:
            promise, upto = self._late
            err = self._wait(promise, upto, timeout)
            self._late = None
            self._settled(upto, err)
            if err:
                raise self._error(err)

    async def _finish_late_async(self) -> None:
        if self._late is not None:
            promise, upto = self._late
            self._late = None
            err = await promise
            self._settled(upto, err)
            if err:
                raise self._error(err)

    async def wait_idle_async(self) -> None:
        if self._unchecked:
            await self._compile_checks_async()
        self._check()
        await self._finish_late_async()
        self.calls += 1
        upto = self._seq
        err = await self._h_idle(self._st, self.queue)
        self._settled(upto, err)
        if err:
            raise self._error(err)


class BrowserDeviceImpl(GPUDeviceImpl):
    """GPUDeviceImpl that also reports the number of JS calls made."""

    @property
    def js_device(self) -> Any:
        """The JS ``GPUDevice`` (a JsProxy) this device records on (``pyaccel.extras.webgpu``)."""
        self._check()
        return self.f.device

    def js_buffer(self, h: Any) -> Any:
        """The JS ``GPUBuffer`` behind a buffer handle of this device."""
        return h.buf

    def memory_stats(self) -> dict[str, int]:
        return {**super().memory_stats(), "ffi_calls": self.f.calls}


def _adapter_descriptor(uri: str, adapter: Any) -> DeviceDescriptor:
    info = adapter.info
    get = lambda k: str(getattr(info, k, "") or "")  # noqa: E731
    arch, vendor = get("architecture"), get("vendor")
    fallback = bool(getattr(info, "isFallbackAdapter", False) or getattr(adapter, "isFallbackAdapter", False))
    software = fallback or arch.lower() in ("swiftshader", "llvmpipe", "lavapipe", "warp")
    feats = tuple(sorted(str(f) for f in adapter.features))
    limits = {name: int(getattr(adapter.limits, name)) for name in LIMIT_NAMES
              if getattr(adapter.limits, name, None) is not None}
    name = get("description") or get("device") or " ".join(p for p in (vendor, arch) if p) or "WebGPU adapter"
    return DeviceDescriptor(
        uri=uri, name=name, vendor=vendor or "unknown", api="webgpu",
        adapter_type="cpu" if software else "unknown", backend="webgpu",
        vendor_id=0, device_id=0, driver=get("description") or get("device"), arch=arch,
        extra={"features": feats, "limits": limits, "adapter": adapter},
    )


class BrowserBackend:
    """Registry backend for ``navigator.gpu`` in Pyodide."""

    name = "webgpu"
    schemes = ("webgpu",)

    def __init__(self) -> None:
        if not in_pyodide():
            raise BackendUnavailableError(
                "not running in a browser (Pyodide): the webgpu backend drives navigator.gpu from a "
                "web page; natively use the wgpu backend (vulkan:0, metal:0, ...) or cpu"
            )
        import js

        self.js = js
        gpu = getattr(js.navigator, "gpu", None)
        if gpu is None or str(type(gpu)) == "<class 'pyodide.ffi.JsNull'>" or not gpu:
            raise BackendUnavailableError(
                "this browser has no WebGPU (navigator.gpu is undefined): use Chrome/Edge 113+ or "
                "Safari 26+ over https:// or http://localhost, or start Chromium with "
                "--enable-unsafe-webgpu; without WebGPU only the cpu device is left, which needs numpy "
                "(see the cpu backend's reason)"
            )
        self.gpu = gpu
        self.version = f"browser WebGPU (Pyodide {getattr(sys, '_emscripten_info', None) and '.'.join(map(str, sys._emscripten_info.emscripten_version)) or ''})"
        try:
            import pyodide

            self.version = f"browser WebGPU via Pyodide {pyodide.__version__}"
        except Exception:
            pass
        self._adapters: dict[str, DeviceDescriptor | None] = {}

    # -- adapters ----------------------------------------------------------------
    def _options(self, key: str) -> Any:
        from pyodide.ffi import to_js

        opts = {"powerPreference": PATHS[key]} if key in PATHS else {}
        return to_js(opts, dict_converter=self.js.Object.fromEntries)

    def _store(self, key: str, adapter: Any) -> DeviceDescriptor | None:
        if adapter is None or str(type(adapter)).endswith("JsNull'>") or not adapter:
            self._adapters[key] = None
            return None
        uri = "webgpu:0" if key == "default" else f"webgpu://{key}"
        d = _adapter_descriptor(uri, adapter)
        self._adapters[key] = d
        return d

    def _adapter(self, key: str) -> DeviceDescriptor | None:
        if key not in self._adapters:
            pre = getattr(self.js, "pyaccelAdapter", None) if key == "default" else None
            if pre:  # a page may request the adapter up front (web/main.js does)
                return self._store(key, pre)
            uri = "webgpu" if key == "default" else f"webgpu://{key}"
            self._store(key, wait(self.gpu.requestAdapter(self._options(key)),
                                  f"await pyaccel.device_async({uri!r})"))
        return self._adapters[key]

    async def prepare_async(self, key: str = "default") -> None:
        """Request the adapter without blocking (the async path of discovery)."""
        if key not in self._adapters:
            self._store(key, await self.gpu.requestAdapter(self._options(key)))

    def _no_adapter(self, key: str) -> BackendUnavailableError:
        return BackendUnavailableError(
            "navigator.gpu exists but no WebGPU adapter was granted"
            + ("" if key == "default" else f" for powerPreference {key!r}")
            + " (blocklisted GPU, or headless without a GPU: start Chromium with --enable-unsafe-webgpu "
            "--use-webgpu-adapter=swiftshader); without WebGPU only the cpu device is left, which "
            "needs numpy (see the cpu backend's reason)"
        )

    def devices(self) -> list[DeviceDescriptor]:
        d = self._adapter("default")
        if d is None:
            raise self._no_adapter("default")
        return [d]

    def resolve(self, uri: DeviceURI) -> DeviceDescriptor:
        if uri.path is not None:
            if uri.path not in PATHS:
                raise DeviceNotFoundError(
                    f"no device {str(uri)!r}: webgpu paths are 'high-performance' and 'low-power' "
                    "(or use 'webgpu' / 'webgpu:0' for the default adapter)"
                )
            d = self._adapter(uri.path)
            if d is None:
                raise DeviceNotFoundError(f"no device {str(uri)!r}: {self._no_adapter(uri.path)}")
            return d
        if (uri.ordinal or 0) != 0:
            raise DeviceNotFoundError(
                f"no device {str(uri)!r}: the browser exposes one adapter, 'webgpu:0' "
                "(or 'webgpu://high-performance', 'webgpu://low-power')"
            )
        d = self._adapter("default")
        if d is None:  # same error type as a URI path without an adapter
            raise DeviceNotFoundError(f"no device {str(uri)!r}: {self._no_adapter('default')}")
        return d

    def _device_options(self, desc: DeviceDescriptor) -> Any:
        feats = [f for f in WANTED_FEATURES if f in desc.extra["features"]]
        limits = {k: desc.extra["limits"][k] for k in REQUESTED_LIMITS if k in desc.extra["limits"]}
        from pyodide.ffi import to_js

        return to_js({"requiredFeatures": feats, "requiredLimits": limits, "label": f"pyaccel {desc.uri}"},
                     dict_converter=self.js.Object.fromEntries)

    def _key(self, desc: DeviceDescriptor) -> str:
        return desc.uri[len("webgpu://"):] if desc.uri.startswith("webgpu://") else "default"

    def open(self, desc: DeviceDescriptor) -> Device:
        # An adapter grants one device ("consumed" afterwards), so each open asks for a fresh one.
        twin = f"await pyaccel.device_async({desc.uri!r})"
        adapter = wait(self.gpu.requestAdapter(self._options(self._key(desc))), twin)
        if not adapter:
            raise self._no_adapter(self._key(desc))
        return self._wrap(desc, wait(adapter.requestDevice(self._device_options(desc)), twin))

    async def open_async(self, desc: DeviceDescriptor) -> Device:
        adapter = await self.gpu.requestAdapter(self._options(self._key(desc)))
        if not adapter:
            raise self._no_adapter(self._key(desc))
        return self._wrap(desc, await adapter.requestDevice(self._device_options(desc)))

    def _wrap(self, desc: DeviceDescriptor, dev: Any) -> Device:
        caps = Capability.NONE
        for f in dev.features:
            caps |= FEATURE_FLAGS.get(str(f), Capability.NONE)
        if desc.is_software:
            caps |= Capability.SOFTWARE | Capability.UNIFIED_MEMORY
        limits = Limits.from_webgpu({n: int(getattr(dev.limits, n)) for n in LIMIT_NAMES
                                     if getattr(dev.limits, n, None) is not None})
        facade = JsFacade(dev, self.version)
        try:
            from pyodide.ffi import create_once_callable

            def _lost(info: Any) -> None:
                facade.mark_lost(f"{getattr(info, 'reason', '')}: {getattr(info, 'message', '')}")

            dev.lost.then(create_once_callable(_lost))
        except Exception:
            pass
        info = [f"  features        : {', '.join(sorted(str(f) for f in dev.features)) or 'none'}",
                f"  adapter features: {', '.join(desc.extra.get('features', ())) or 'none'}",
                f"  JSPI (sync API) : {'yes' if _jspi() else 'no (use the *_async forms)'}"]
        return Device(desc, BrowserDeviceImpl(facade, limits, caps, info))


def _jspi() -> bool:
    try:
        ffi = _ffi()
        return bool(getattr(ffi, "can_run_sync", None) and ffi.can_run_sync())
    except Exception:
        return False
