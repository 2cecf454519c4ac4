"""Native GPUs through wgpu-py: Vulkan, Metal, DX12 and GL adapters.

URIs: ``vulkan:N`` / ``metal:N`` / ``dx12:N`` / ``gl:N`` number the adapters of
one API in enumeration order; ``wgpu`` (``wgpu:N``) is the best (N-th best)
native adapter. The canonical URI of a device is its API form.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import os
import queue
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from .._hints import WGPU_IN_PYODIDE, in_pyodide, wgpu_fix
from .._lru import LRU
from ..capabilities import FEATURE_FLAGS, Capability, Limits
from ..device import Device, DeviceDescriptor
from ..errors import (
    BackendUnavailableError,
    DeviceLostError,
    DeviceNotFoundError,
    DeviceTimeoutError,
    KernelCompileError,
    OutOfDeviceMemoryError,
    PyaccelError,
)
from ..ranking import device_rank
from ..uri import DeviceURI
from . import _wgpu_direct
from .webgpu_common import PIPELINE_CACHE, Facade, GPUDeviceImpl, compile_error

_USE_PROBE: Any = object()  # WgpuFacade(direct=...) default: the module-level probe result

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


# queue.writeBuffer stages a copy of its data in host memory; a failed staging allocation
# ("Not enough memory left" in wgpuQueueWriteBuffer) loses the wgpu-native device for good,
# while a failed wgpuDeviceCreateBuffer does not. Large writes go in slices of this size so
# running out of memory shows up in create_buffer (OutOfDeviceMemoryError, recoverable).
WRITE_SLICE = 4 * 2**20
_MAP_READ = 1  # wgpu.BufferUsage.MAP_READ
_WAIT_SLICE = 0.05  # longest uninterrupted wait for a map (a signal interrupts it anyway)
_DRAIN_SLICE = 0.05  # longest uninterrupted wait for the submit thread (Ctrl-C acts between)
# PYACCEL_SUBMIT_THREAD=1 / 0 forces the submit thread on / off for every wgpu device (default:
# on for OpenGL adapters only, see _SubmitThread)
SUBMIT_THREAD_ENV = "PYACCEL_SUBMIT_THREAD"


def _first_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    detail = [ln for ln in lines if ln not in ("Validation Error", "Caused by:") and not ln.startswith("In wgpu")]
    return (detail or lines or [type(exc).__name__])[-1]


class _SubmitThread:
    """One long-lived daemon thread that runs a device's ``queue.submit`` calls, in order.

    wgpu's OpenGL backend executes the GPU work *inside* ``queue.submit`` (a C call that no
    signal can stop), so a submit on the calling thread would make Ctrl-C and timeouts act
    only once all the work ran. The facade hands each submission here and returns at once;
    operations that must come after earlier submissions (host writes, maps, buffer creation)
    first :meth:`wait` for the drain in short slices, so KeyboardInterrupt and
    DeviceTimeoutError are raised while the work still runs. Nothing is lost by that: the
    thread finishes its jobs and later operations wait for them.

    The thread references no facade (a facade that is collected stops it) and is a daemon:
    the interpreter exits without waiting for work still running.
    """

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], Any] | None] = queue.SimpleQueue()
        self._cv = threading.Condition(threading.Lock())
        self.queued = 0  # jobs handed over (a job's number is its position)
        self.done = 0  # jobs finished (ran or raised)
        self._error: BaseException | None = None  # the first job failure not yet reported
        threading.Thread(target=self._run, name=name, daemon=True).start()

    def put(self, job: Callable[[], Any]) -> None:
        """Queue ``job`` after every job handed over before."""
        with self._cv:
            self.queued += 1
            self._jobs.put(job)

    def stop(self) -> None:
        """End the thread once the jobs queued so far ran."""
        self._jobs.put(None)

    def busy(self) -> bool:
        return self.done < self.queued

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                job()
            except BaseException as exc:  # reported by the next wait (see take_error)
                with self._cv:
                    if self._error is None:
                        self._error = exc
            job = None  # release the command buffer before reporting the job done
            with self._cv:
                self.done += 1
                self._cv.notify_all()

    def wait(self, target: int, deadline: float | None, timeout: float | None) -> None:
        """Wait (interruptibly) until the first ``target`` jobs finished; DeviceTimeoutError
        once ``deadline`` (time.monotonic) passes."""
        with self._cv:
            while self.done < target:
                left = _DRAIN_SLICE if deadline is None else min(_DRAIN_SLICE, deadline - time.monotonic())
                if left <= 0:
                    break
                self._cv.wait(left)  # signal handlers (KeyboardInterrupt) run at the latest after it
            else:
                return
        WgpuFacade._check_deadline(deadline, timeout)

    def take_error(self) -> BaseException | None:
        with self._cv:
            err, self._error = self._error, None
        return err


_LIVE_SUBMITTERS: weakref.WeakSet[_SubmitThread] = weakref.WeakSet()


def _drain_at_exit() -> None:
    # At interpreter exit the GC releases wgpu objects; on GL each release waits for the GL
    # context a running submission holds, and wgpu-hal aborts the process after 1 s of that.
    # So exit waits (interruptibly) for the submissions still queued: as long as a direct
    # submit would have taken, never longer.
    for w in list(_LIVE_SUBMITTERS):
        w.wait(w.queued, None, None)


class WgpuFacade(Facade):
    """The WebGPU primitives over wgpu-py objects.

    Private wgpu-py internals are used only through :mod:`._wgpu_direct` (``DIRECT``); when
    it is ``None`` (probe failed, or ``PYACCEL_WGPU_DIRECT=0``) only the public API is used.
    Blocking waits sleep on the map promise's event in short slices (wgpu-py's poll thread sets
    it), so Ctrl-C and timeouts act during them.
    With ``submit_thread`` (OpenGL adapters: there the GPU work runs inside ``queue.submit``)
    submissions run on a :class:`_SubmitThread` and every operation ordered after them waits
    for it interruptibly (:meth:`_drain`). Elsewhere only a submission that may wait for
    unfinished earlier work goes there (lavapipe blocks in ``vkQueueSubmit`` behind a running
    job); one on an idle device is made on the calling thread, so a small kernel + read pays
    no thread hand-off. ``PYACCEL_SUBMIT_THREAD=1``/``0`` forces it on / off.
    """

    def __init__(self, wgpu: Any, device: Any, direct: Any = _USE_PROBE, submit_thread: bool = False) -> None:
        self.wgpu = wgpu
        self.device = device
        self.queue = device.queue
        self.runtime_version = f"wgpu-py {wgpu.__version__}"
        self.lost_reason: str | None = None
        self.lock: Any = threading.RLock()  # GPUDeviceImpl replaces it with its own lock
        self._direct = _wgpu_direct.DIRECT if direct is _USE_PROBE else direct
        self._pass: Any = None
        self._pass_pipe: Any = None
        self._pass_group: Any = None
        self._pass_keep: list[Any] = []
        self._queued: list[tuple[Any, Any, int, int, int]] = []  # dispatches not yet recorded
        # id(pipeline) -> (pipeline, group 0 layout), bounded like the pipeline cache it follows
        self._layouts: LRU = LRU(PIPELINE_CACHE)
        self._fence_src: Any = None
        self._read_encoder: Any = None  # encoder holding a read's staging copy (no fence: submit)
        self._last_fence: Any = None  # fence buffer of the latest submission (None: taken)
        self._fences: list[Any] = []  # free MAP_READ fence buffers (one per concurrent wait)
        self._abandoned: list[Any] = []  # buffers whose map wait was interrupted (see _reap)
        env = os.environ.get(SUBMIT_THREAD_ENV, "").strip()
        # True: every submission on the thread (GL); "auto": only those that may have to wait
        # for unfinished earlier work (lavapipe blocks in vkQueueSubmit then, in C); False: none
        self._submit_thread: bool | str = (env == "1") if env in ("0", "1") else (
            True if submit_thread else "auto")
        self._seq = 0  # submissions so far
        self._done_seq = 0  # every submission up to this one is known to have completed
        self._worker: _SubmitThread | None = None  # started by the first submit
        self._scope: tuple[float, float] | None = None  # (deadline, timeout) of a deadline() scope

    @contextlib.contextmanager
    def deadline(self, timeout: float | None) -> Iterator[None]:
        """Within it (the caller holds :attr:`lock`), waits for the submit thread also honour
        ``timeout`` (seconds from now): a read's staging buffer creation waits for it on GL."""
        if timeout is None or self._worker is None:
            yield
            return
        outer, self._scope = self._scope, (time.monotonic() + max(float(timeout), 0.0), timeout)
        try:
            yield
        finally:
            self._scope = outer

    # -- the submit thread (OpenGL) ----------------------------------------------------
    def _submitter(self) -> _SubmitThread:
        w = self._worker
        if w is None:
            w = self._worker = _SubmitThread(f"pyaccel-submit-{id(self):x}")
            weakref.finalize(self, w.stop)
            atexit.unregister(_drain_at_exit)  # (once; registered last, so it runs first)
            atexit.register(_drain_at_exit)
            _LIVE_SUBMITTERS.add(w)
        return w

    def _drain(self, deadline: float | None = None, timeout: float | None = None) -> None:
        """Wait until every submission handed to the submit thread so far ran (no-op without
        one); raises what a submission raised, KeyboardInterrupt, or DeviceTimeoutError past
        ``deadline``. Called before anything the earlier submissions must precede."""
        w = self._worker
        if w is None:
            return
        if deadline is None and self._scope is not None:
            deadline, timeout = self._scope
        if w.busy():
            w.wait(w.queued, deadline, timeout)
        self._raise_submit_error(w)

    async def _drain_async(self) -> None:
        """:meth:`_drain` without blocking the event loop (polls with growing sleeps)."""
        w = self._worker
        if w is None:
            return
        target, delay = w.queued, 1e-4
        while w.done < target:
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.005)
        self._raise_submit_error(w)

    def _raise_submit_error(self, w: _SubmitThread) -> None:
        err = w.take_error()
        if err is not None:
            if isinstance(err, Exception):
                raise self._error(err, "queue.submit") from err
            raise err

    # -- errors -----------------------------------------------------------------
    def _error(self, exc: BaseException, what: str) -> BaseException:
        """The typed pyaccel error for a wgpu-py exception (or ``exc`` itself)."""
        if isinstance(exc, PyaccelError):
            return exc
        msg = str(exc)
        low = msg.lower()
        if self.lost_reason is None and ("device is lost" in low or "device lost" in low
                                         or "device was lost" in low or "device is invalid" in low):
            self.lost_reason = f"{what} failed: {_first_line(exc)}"
        if self.lost_reason is not None:
            return DeviceLostError(f"the device is lost ({self.lost_reason})")
        if "not enough memory" in low or "out of memory" in low or "outofmemory" in low:
            if what.startswith("queue.writeBuffer"):
                # wgpu-native loses the device when a staging allocation fails
                self.lost_reason = f"{what} ran out of host memory for its staging copy"
                return DeviceLostError(f"the device is lost ({self.lost_reason})")
            return OutOfDeviceMemoryError(f"{what}: the device is out of memory ({_first_line(exc)})")
        return exc

    # -- buffers ----------------------------------------------------------------
    def create_buffer(self, size: int, usage: int) -> Any:
        if self._submit_thread is True:
            self._drain()  # (GL: creating a buffer waits for the GL context a running submit holds)
        try:
            return self.device.create_buffer(size=size, usage=usage)
        except Exception as exc:
            raise self._error(exc, f"createBuffer({size} bytes)") from exc

    def destroy_buffer(self, buf: Any) -> None:
        w = self._worker
        if w is not None and w.busy():
            w.put(buf.destroy)  # after the queued submissions that may still use it
        else:
            buf.destroy()

    def write_buffer(self, buf: Any, offset: int, data: memoryview) -> None:
        n = data.nbytes
        self._drain()  # it must land after the submissions queued before it, not overtake them
        try:
            for o in range(0, max(n, 1), WRITE_SLICE):
                part = data[o: o + WRITE_SLICE] if n > WRITE_SLICE else data
                if self._direct is not None:  # (pyaccel checked the range)
                    self._direct.write_buffer(self.queue, buf, offset + o, part)
                else:
                    self.queue.write_buffer(buf, offset + o, part)
        except Exception as exc:
            raise self._error(exc, f"queue.writeBuffer({n} bytes)") from exc

    def create_pipeline(self, wgsl: str, entry: str, constants: dict[str, float]) -> Any:
        if self._submit_thread is True:
            self._drain()  # (GL: compiling waits for the GL context a running submit holds)
        try:
            module = self.device.create_shader_module(code=wgsl)
            compute: dict[str, Any] = {"module": module, "entry_point": entry}
            if constants:
                compute["constants"] = constants
            return self.device.create_compute_pipeline(layout="auto", compute=compute)
        except self.wgpu.GPUError as exc:
            err = self._error(exc, "createComputePipeline")
            if err is not exc:
                raise err from exc
            raise compile_error(wgsl, str(exc)) from None
        except Exception as exc:  # panics surface as other error types in some versions
            if isinstance(exc, KernelCompileError):
                raise
            raise compile_error(wgsl, f"{type(exc).__name__}: {exc}") from None

    def _layout(self, pipeline: Any) -> Any:
        # get_bind_group_layout makes a new wrapper (and a native reference) on every call
        ent = self._layouts.get(id(pipeline))
        if ent is None or ent[0] is not pipeline:
            ent = self._layouts.put(id(pipeline), (pipeline, pipeline.get_bind_group_layout(0)))
        return ent[1]

    def close(self) -> None:
        """Device.close(): wait for the submit thread, then destroy the wgpu device."""
        self._layouts.clear()
        self._fences.clear()
        self._last_fence = None
        self._read_encoder = None
        w, self._worker = self._worker, None
        if w is not None:
            w.stop()
        try:
            self.device.destroy()
        except Exception:  # noqa: BLE001 - already gone
            pass

    def create_bind_group(self, pipeline: Any, entries: list[tuple[int, Any, int, int]]) -> Any:
        layout = self._layout(pipeline)
        try:
            if self._direct is not None:
                return self._direct.create_bind_group(self.device, layout, entries)
            return self.device.create_bind_group(
                layout=layout,
                entries=[{"binding": b, "resource": {"buffer": buf, "offset": o, "size": s}}
                         for b, buf, o, s in entries],
            )
        except Exception as exc:
            raise self._error(exc, "createBindGroup") from exc

    def create_encoder(self) -> Any:
        return self.device.create_command_encoder()

    def begin_pass(self, encoder: Any) -> Any:
        cpass = encoder.begin_compute_pass()
        if self._queued:
            self._record_queued()  # (into the pass they were made for; normally end_pass did)
        self._pass, self._pass_pipe, self._pass_group = cpass, None, None
        return cpass

    def dispatch(self, cpass: Any, pipeline: Any, group: Any, x: int, y: int, z: int) -> None:
        # set_pipeline / set_bind_group only when they change within the pass (each wgpu-py
        # call costs a few microseconds; a chain of the same kernel needs neither)
        if cpass is not self._pass:
            if self._queued:
                self._record_queued()
            self._pass, self._pass_pipe, self._pass_group = cpass, None, None
        if self._direct is not None:
            # queued, and recorded when the pass ends: one error capture for the whole run of
            # native calls (Direct.record) instead of one per call; nothing runs before the
            # encoder is submitted, which ends the pass first (so does every copy)
            pipe = None
            if pipeline is not self._pass_pipe:
                pipe = self._pass_pipe = pipeline
                self._pass_group = None
                self._pass_keep.append(pipeline)
            if group is self._pass_group:
                self._queued.append((pipe, None, x, y, z))
            else:
                self._queued.append((pipe, group, x, y, z))
                self._pass_keep.append(group)  # alive until the pass ends, as wgpu-py would
                self._pass_group = group
            return
        if pipeline is not self._pass_pipe:
            cpass.set_pipeline(pipeline)
            self._pass_pipe, self._pass_group = pipeline, None
        if group is not self._pass_group:
            cpass.set_bind_group(0, group)
            self._pass_group = group
        cpass.dispatch_workgroups(x, y, z)

    def _record_queued(self) -> None:
        """Record the queued dispatches into their pass (see dispatch)."""
        queued, self._queued = self._queued, []
        try:
            self._direct.record(self._pass, queued)
        except Exception as exc:
            raise self._error(exc, "computePass.dispatchWorkgroups") from exc

    def end_pass(self, cpass: Any) -> None:
        try:
            if self._queued and cpass is self._pass:
                self._record_queued()
        finally:
            try:
                cpass.end()
            finally:
                if cpass is self._pass:
                    self._pass, self._pass_pipe, self._pass_group = None, None, None
                    self._pass_keep = []

    def copy(self, encoder: Any, src: Any, src_offset: int, dst: Any, dst_offset: int, n: int) -> None:
        encoder.copy_buffer_to_buffer(src, src_offset, dst, dst_offset, n)
        if dst.usage & _MAP_READ:  # a read's staging copy: the read maps dst (see submit)
            self._read_encoder = encoder

    def submit(self, encoder: Any) -> None:
        """Submit ``encoder``, ending it with a 4-byte copy into a fence buffer (see _fence),
        unless it ends with a read's copy into a staging buffer: the read waits by mapping
        that buffer, so the submission needs no fence of its own (a later wait_idle submits
        one, through the submit thread when the device may be busy)."""
        try:
            if self._fence_src is None:
                self._fence_src = self.device.create_buffer(size=4, usage=self.wgpu.BufferUsage.COPY_SRC)
            # the latest fence, unless a waiter took it, is reused (nobody maps it): no new
            # buffer per submit (on GL creating one would wait for a running submit, in C)
            fence = self._last_fence
            if encoder is self._read_encoder:
                self._read_encoder = None
                if fence is not None:  # it no longer marks the latest submission
                    self._fences.append(fence)
                    self._last_fence = fence = None
            elif fence is None and self._fences:
                fence = self._fences.pop()
            elif fence is None and (self._worker is None or not self._worker.busy()):
                fence = self.device.create_buffer(
                    size=4, usage=self.wgpu.BufferUsage.MAP_READ | self.wgpu.BufferUsage.COPY_DST)
            # (else, GL with the submit thread busy: no fence; _fence() makes one once it is idle)
            if fence is not None:
                encoder.copy_buffer_to_buffer(self._fence_src, 0, fence, 0, 4)
            mode = self._submit_thread
            if mode == "auto":  # idle device: submit here (no thread hand-off on the hot path)
                w = self._worker
                mode = self._done_seq < self._seq or (w is not None and w.busy())
            if mode:  # (its failure is raised by the next _drain)
                self._submitter().put(functools.partial(self.queue.submit, [encoder.finish()]))
            else:
                self.queue.submit([encoder.finish()])
            self._seq += 1
        except Exception as exc:
            raise self._error(exc, "queue.submit") from exc
        self._last_fence = fence

    # -- waits ------------------------------------------------------------------
    def _reap(self) -> None:
        """Clean up buffers whose wait was interrupted (Ctrl-C, timeout, cancelled task):
        unmap and destroy each once its map has resolved (``map_state`` is no longer pending).
        With a submit thread, only while it is idle: a buffer abandoned before its map started
        may still be used by a queued submission (destroying it would fail that submission)."""
        if not self._abandoned or (self._worker is not None and self._worker.busy()):
            return
        if self._direct is not None:
            self._direct.poll(self.device, False)
        keep = []
        for buf in self._abandoned:
            try:
                state = str(buf.map_state)
                if state == "pending":
                    keep.append(buf)
                    continue
                if state == "mapped":
                    buf.unmap()
                buf.destroy()
            except Exception:
                pass
        self._abandoned = keep

    def _map_wait(self, buf: Any, offset: int, n: int, timeout: float | None,
                  deadline: float | None = None) -> None:
        """Map ``buf`` for reading and wait (interruptible; DeviceTimeoutError past ``timeout``).

        On any exception (KeyboardInterrupt included) the buffer is handed to :meth:`_reap`:
        the caller must not reuse it. ``deadline`` (time.monotonic) defaults to now + ``timeout``,
        or to the one a :meth:`deadline` scope set.
        """
        if deadline is None:
            if timeout is not None:
                deadline = time.monotonic() + max(float(timeout), 0.0)
            elif self._scope is not None:
                deadline, timeout = self._scope
        try:
            self._drain(deadline, timeout)  # mapping before its copy was submitted is invalid
        except BaseException:
            self._abandoned.append(buf)  # map not started: destroyed once the thread is idle
            raise
        seq = self._seq  # buf was written by one of these submissions: once mapped, all ran
        self._reap()
        direct = self._direct
        mapping = False
        try:
            if direct is not None:
                promise = direct.map_read_nosync(buf, offset, n)
                mapping = True
                direct.poll(self.device, False)  # finished work: the map resolves on this thread
                # else wgpu-py's poll thread (blocking in wgpuDevicePoll while the map is
                # pending) resolves it and wakes this wait at once; slices let the deadline act
                while not direct.promise_wait(promise, _WAIT_SLICE if deadline is None else
                                              max(0.0, min(_WAIT_SLICE, deadline - time.monotonic()))):
                    self._check_deadline(deadline, timeout)
                promise.sync_wait()  # resolved: runs the handler, raises a map failure
                self._done_seq = max(self._done_seq, seq)
                return
            # public API only: sync_wait() blocks in C, so it runs on a helper thread and this
            # thread waits on an Event in short slices (signals and timeouts act between them)
            promise = buf.map_async(self.wgpu.MapMode.READ, offset, n)
            mapping = True
            done = threading.Event()
            box: list[BaseException] = []

            def wait() -> None:
                try:
                    promise.sync_wait()
                except BaseException as e:  # handed to the waiting thread
                    box.append(e)
                finally:
                    done.set()

            threading.Thread(target=wait, name="pyaccel-map-wait", daemon=True).start()
            while not done.wait(0.05 if deadline is None else max(0.0, min(0.05, deadline - time.monotonic()))):
                self._check_deadline(deadline, timeout)
            if box:
                raise box[0]
            self._done_seq = max(self._done_seq, seq)
        except BaseException as exc:
            if mapping:
                self._abandoned.append(buf)
            if isinstance(exc, Exception):
                raise self._error(exc, "buffer.mapAsync") from exc
            raise

    @staticmethod
    def _check_deadline(deadline: float | None, timeout: float | None) -> None:
        if deadline is not None and time.monotonic() >= deadline:
            raise DeviceTimeoutError(
                f"the device did not finish within timeout={timeout} s; its work keeps running: "
                "wait again (a longer timeout, or none) or read later; the device stays usable"
            )

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

    def map_read(self, buf: Any, offset: int, n: int, out: memoryview | None = None,
                 timeout: float | None = None) -> Any:
        self._map_wait(buf, offset, n, timeout)
        return self._copy_out(buf, offset, n, out)

    async def map_read_async(self, buf: Any, offset: int, n: int, out: memoryview | None = None) -> Any:
        try:
            await self._drain_async()
            with self.lock:
                self._reap()
                seq = self._seq
                promise = buf.map_async(self.wgpu.MapMode.READ, offset, n)
            await promise
        except BaseException as exc:  # cancelled task or failed map: reaped later
            with self.lock:
                self._abandoned.append(buf)
            if isinstance(exc, Exception):
                raise self._error(exc, "buffer.mapAsync") from exc
            raise
        with self.lock:
            self._done_seq = max(self._done_seq, seq)
            return self._copy_out(buf, offset, n, out)

    # queue.on_submitted_work_done_* is broken in wgpu-py 0.32.0 (its callback signature does
    # not match the bundled wgpu-native: TypeError). Waiting on a mapped "fence" works instead:
    # a copy submitted last completes after every earlier submission (one queue, in order).
    # Every submission ends with that copy into a fence buffer (a small pool of them), so a
    # wait maps the latest submission's fence without submitting anything: on lavapipe a
    # submit blocks (in C, uninterruptible) while earlier work runs, which would defeat
    # Ctrl-C and timeouts. Each waiter takes the fence for itself; a concurrent waiter
    # (threads, asyncio.gather) that finds it taken submits an empty encoder for a new one,
    # so no buffer is ever mapped twice.
    def _fence(self, deadline: float | None = None, timeout: float | None = None) -> Any:
        if self._last_fence is None:
            self._drain(deadline, timeout)  # (a new fence buffer: only while the submit thread is idle)
            self.submit(self.device.create_command_encoder())
        dst, self._last_fence = self._last_fence, None
        return dst

    def wait_idle(self, timeout: float | None = None) -> None:
        with self.lock:
            deadline = None if timeout is None else time.monotonic() + max(float(timeout), 0.0)
            dst = self._fence(deadline, timeout)
            self._map_wait(dst, 0, 4, timeout, deadline)  # on failure dst is reaped, not pooled
            dst.unmap()
            self._fences.append(dst)

    async def wait_idle_async(self) -> None:
        await self._drain_async()  # (then _fence() finds the submit thread idle, as a rule)
        with self.lock:
            dst = self._fence()
        try:
            await self._drain_async()
            with self.lock:
                self._reap()
                seq = self._seq
                promise = dst.map_async(self.wgpu.MapMode.READ, 0, 4)
            await promise
        except BaseException as exc:
            with self.lock:
                self._abandoned.append(dst)
            if isinstance(exc, Exception):
                raise self._error(exc, "buffer.mapAsync") from exc
            raise
        with self.lock:
            self._done_seq = max(self._done_seq, seq)
            dst.unmap()
            self._fences.append(dst)


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
        if in_pyodide():
            raise BackendUnavailableError(WGPU_IN_PYODIDE)
        _quiet_loader()
        try:
            import wgpu
        except ImportError as exc:
            raise BackendUnavailableError(f"wgpu-py is not importable ({exc}); fix: {wgpu_fix()}") from exc
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
            pool = sorted(descs, key=device_rank)
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
        # wgpu's GL backend runs the GPU work inside queue.submit: submit on a thread there
        facade = WgpuFacade(self.wgpu, dev, submit_thread=desc.api == "gl")
        facade.label = desc.api
        return GPUDeviceImpl(facade, limits, caps, info)


def _vendor_name(vid: int) -> str:
    return {0x10DE: "NVIDIA", 0x1002: "AMD", 0x8086: "Intel", 0x106B: "Apple", 0x13B5: "ARM",
            0x5143: "Qualcomm", 0x10005: "Mesa"}.get(int(vid or 0), "")
