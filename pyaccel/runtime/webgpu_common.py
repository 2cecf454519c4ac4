"""Everything both WebGPU backends share, written once against a small facade.

``wgpu_native.py`` (wgpu-py) and ``browser.py`` (Pyodide + JS WebGPU) each
implement :class:`Facade`: a dozen primitives mirroring the WebGPU API. All GPU
logic lives here, above the facade:

* buffers from a size-class pool (freed buffers are reused; staging buffers too); an op
  output (:meth:`GPUDeviceImpl.alloc_output`) may reuse a buffer queued work still uses,
  since the kernel writes it in encoder order,
* pipelines cached by (source hash, entry, constants), bind groups by content,
* an open command encoder + compute pass: kernel calls *record* dispatches and
  return; the encoder is submitted when a result is read, on ``synchronize()``
  or at a batch limit, so reads are the only host/device sync point,
* write hazards: a host write to a buffer that queued work still uses flushes
  that work first (``queue.writeBuffer`` runs before unsubmitted commands),
* small uniform parameter blocks cached by content, so a chain of ops with the
  same parameters writes nothing.

Threads: one ``threading.RLock`` per device, :attr:`GPUDeviceImpl.lock` (``Device._lock`` is
the same object). The allocation and recording methods (``alloc``, ``alloc_output``,
``pipeline``, ``uniform``, ``dispatch``, ``dispatch_bound``, ``dispatch_group``) assume the
caller holds it (``Device.malloc``, the op layer and ``Kernel`` take it once per call); the
others take it themselves. The async methods take it for their synchronous parts (record,
submit, copy out) and never across an await.

Failures: a :class:`~pyaccel.errors.PyaccelError` raised by the facade passes through
unchanged. Once the facade sets ``lost_reason`` (device lost), :attr:`GPUDeviceImpl.is_lost`
is true and every call raises :class:`~pyaccel.errors.DeviceLostError`. An allocation that
runs out of memory trims the pool and retries once before raising
:class:`~pyaccel.errors.OutOfDeviceMemoryError`.
"""

from __future__ import annotations

import contextlib
import operator
import os
import re
import threading
from collections import OrderedDict, deque
from time import perf_counter as _perf_counter
from typing import Any

from .._lru import LRU
from ..capabilities import Capability, Limits
from ..dtypes import gpu_wide
from ..errors import DeviceLostError, KernelCompileError, OutOfDeviceMemoryError

# WebGPU buffer usage bits (identical in wgpu-py and the JS API).
MAP_READ, MAP_WRITE, COPY_SRC, COPY_DST, UNIFORM, STORAGE = 1, 2, 4, 8, 64, 128
DEVICE_USAGE = STORAGE | UNIFORM | COPY_SRC | COPY_DST
STAGING_USAGE = MAP_READ | COPY_DST

# PYACCEL_COMPILE_LOG=path: append one tab-separated line per pipeline compiled (pid, adapter,
# entry, source hash, source bytes, seconds, kernel name) to find what a run spends compiling
_COMPILE_LOG = os.environ.get("PYACCEL_COMPILE_LOG", "")


def _log_compile(impl: Any, wgsl: str, entry: str, name: str, secs: float) -> None:
    """Append the compile's line; a log that cannot be written warns once and stops logging
    (the compile itself succeeded: the kernel runs)."""
    global _COMPILE_LOG
    import hashlib
    adapter = getattr(impl.f, "label", type(impl.f).__name__)
    h = hashlib.sha1(wgsl.encode()).hexdigest()[:12]
    try:
        with open(_COMPILE_LOG, "a") as f:
            f.write(f"{os.getpid()}\t{adapter}\t{entry}\t{h}\t{len(wgsl)}\t{secs:.4f}\t{name}\n")
    except OSError as exc:
        import warnings
        warnings.warn(f"PYACCEL_COMPILE_LOG={_COMPILE_LOG!r} cannot be written ({exc.strerror}): "
                      "compiles are no longer logged; set it to a writable file path", RuntimeWarning,
                      stacklevel=2)
        _COMPILE_LOG = ""


BATCH_LIMIT = 256  # dispatches recorded before an automatic submit
# queue.writeBuffer stages its data until the next submit: submit after this many writes
# (or bytes) so a long run of writes without a kernel or read keeps memory bounded.
WRITE_FLUSH_COUNT = 256
WRITE_FLUSH_BYTES = 64 * 2**20
POOL_LIMIT_BYTES = 512 * 2**20  # pooled (free) device memory kept for reuse
STAGING_POOL_LIMIT_BYTES = 128 * 2**20
BIND_GROUP_CACHE = 512
REUSE_PENDING_BYTES = 64 * 2**10  # pooled buffers this large are reused even while queued
UNIFORM_CACHE = 256
PIPELINE_CACHE = 512  # compiled pipelines kept per device (least recently used evicted)
_ID = operator.attrgetter("id")


class Facade:
    """The WebGPU primitives a GPU backend provides (see module docstring)."""

    runtime_version: str = ""
    lost_reason: str | None = None  # set (a sentence) once the device is lost

    def create_buffer(self, size: int, usage: int) -> Any:
        raise NotImplementedError

    def destroy_buffer(self, buf: Any) -> None:
        raise NotImplementedError

    def buffer_ok(self, buf: Any) -> bool:
        """False for a buffer the device reported invalid after handing it out (a failed
        creation reported late): the pool destroys it instead of reusing it."""
        return True

    def write_buffer(self, buf: Any, offset: int, data: memoryview) -> None:
        """queue.writeBuffer: offset and len(data) are multiples of 4."""
        raise NotImplementedError

    def create_pipeline(self, wgsl: str, entry: str, constants: dict[str, float]) -> Any:
        """Compile a compute pipeline (auto layout); raise KernelCompileError on bad WGSL."""
        raise NotImplementedError

    def create_bind_group(self, pipeline: Any, entries: list[tuple[int, Any, int, int]]) -> Any:
        """Bind group 0 of ``pipeline`` from (binding, buffer, offset, size) tuples."""
        raise NotImplementedError

    def create_encoder(self) -> Any:
        raise NotImplementedError

    def begin_pass(self, encoder: Any) -> Any:
        raise NotImplementedError

    def dispatch(self, cpass: Any, pipeline: Any, group: Any, x: int, y: int, z: int) -> None:
        raise NotImplementedError

    def end_pass(self, cpass: Any) -> None:
        raise NotImplementedError

    def copy(self, encoder: Any, src: Any, src_offset: int, dst: Any, dst_offset: int, n: int) -> None:
        raise NotImplementedError

    def submit(self, encoder: Any) -> None:
        raise NotImplementedError

    def map_read(self, buf: Any, offset: int, n: int, out: memoryview | None = None,
                 timeout: float | None = None) -> Any:
        """Map a MAP_READ buffer, copy ``n`` bytes out (into ``out`` if given), unmap.

        A facade whose wait can time out also takes ``timeout`` (seconds; raise
        DeviceTimeoutError); after any exception the caller never reuses ``buf``."""
        raise NotImplementedError

    async def map_read_async(self, buf: Any, offset: int, n: int, out: memoryview | None = None) -> Any:
        raise NotImplementedError

    def deadline(self, timeout: float | None) -> contextlib.AbstractContextManager[None]:
        """A scope in which the facade's own waits also honour ``timeout`` (seconds from now)."""
        return contextlib.nullcontext()

    def wait_idle(self, timeout: float | None = None) -> None:
        """Wait until every submitted command has run (DeviceTimeoutError past ``timeout`` s)."""
        raise NotImplementedError

    async def wait_idle_async(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Release the device itself (``Device.close()``; lost_reason is already set).
        Optional: a facade without it lets the runtime free the device at garbage collection."""


_LOC_RES = (
    re.compile(r"wgsl:(\d+):(\d+)"),
    re.compile(r":(\d+):(\d+)"),
    re.compile(r"line (\d+)[, ]+(?:col(?:umn)?|pos) (\d+)", re.I),
)


def compile_error(wgsl: str, message: str, line: int | None = None, column: int | None = None,
                  name: str = "") -> KernelCompileError:
    """A KernelCompileError with the WGSL position, the source line and the compiler message."""
    if line is None:
        for rx in _LOC_RES:
            m = rx.search(message)
            if m:
                line, column = int(m.group(1)), int(m.group(2))
                break
    where = f" at line {line}, column {column}" if line is not None else ""
    excerpt = ""
    lines = wgsl.splitlines()
    if line is not None and 1 <= line <= len(lines):
        excerpt = f"\n  {line:4d} | {lines[line - 1]}\n         {' ' * max((column or 1) - 1, 0)}^"
    msg_first = next((ln.strip() for ln in message.splitlines()
                      if ln.strip() and "Validation Error" not in ln and "Caused by" not in ln
                      and not ln.strip().startswith("In wgpu")), message.strip())
    msg_first = re.sub(r"^wgsl:\d+:\d+:\s*", "", msg_first)
    text = (f"WGSL kernel {name + ' ' if name else ''}failed to compile{where}: {msg_first}{excerpt}"
            f"\nCompiler output:\n{message.strip()}\nFix the WGSL; the device is still usable.")
    return KernelCompileError(text, line=line, column=column, compiler_message=message, source=wgsl)


def size_class(n: int) -> int:
    """Allocation size class: >= n, at most 12.5% larger, 256-byte minimum."""
    n = max(int(n), 256)
    k = (n - 1).bit_length()
    step = 1 << max(k - 3, 8)
    return (n + step - 1) // step * step


def align4(n: int) -> int:
    return (n + 3) & ~3


def _trim_read(data: Any, skip: int, span: int, n: int, out: memoryview | None) -> Any:
    """The ``n`` requested bytes of an aligned ``span`` read (into ``out`` when given)."""
    if skip or span != n or not isinstance(data, bytes):
        data = bytes(memoryview(data)[skip: skip + n])  # (no second copy of whole reads)
    if out is not None:
        out[:] = data
        return out
    return data


class GPUBuffer:
    """A pooled device buffer (the handle behind a ``pyaccel.Buffer``)."""

    __slots__ = ("buf", "size", "epoch", "id", "destroyed")
    _next_id = 0

    def __init__(self, buf: Any, size: int) -> None:
        self.buf = buf
        self.size = size
        self.epoch = -1  # encoder epoch of the last recorded use
        GPUBuffer._next_id += 1
        self.id = GPUBuffer._next_id
        self.destroyed = False


class GPUDeviceImpl:
    """A device over a :class:`Facade` (implements ``pyaccel.device.DeviceImpl``)."""

    # pyaccel.jit's recorder (pyaccel/jit.py) while a trace runs on this device, else None:
    # the hooks below hand the call to it (it runs the call with the hook off and records it);
    # the trace holds :attr:`lock` throughout, so no other thread's work is recorded
    _rec: Any = None

    def __init__(self, facade: Facade, limits: Limits, capabilities: Capability,
                 info_lines: list[str] | None = None) -> None:
        self.f = facade
        self.lock = threading.RLock()
        self._late_releases: deque[GPUBuffer] = deque()  # released while the lock was busy
        try:
            facade.lock = self.lock  # the facade's async parts take the same lock
        except AttributeError:
            pass
        if not hasattr(facade, "lost_reason"):
            facade.lost_reason = None  # (the hot paths read it as an attribute)
        # None when the facade keeps Facade.buffer_ok (always True): the pool skips the call
        self._buffer_ok = None if getattr(type(facade), "buffer_ok", None) is Facade.buffer_ok else facade.buffer_ok
        self.limits = limits
        # emulated 64-bit / complex dtypes (pyaccel.dtypes.gpu_wide: INT64, FLOAT64, EMULATED_64)
        self.capabilities = capabilities | gpu_wide()
        self.runtime_version = facade.runtime_version
        self._info_lines = info_lines or []
        self._pool: dict[int, list[GPUBuffer]] = {}
        self._pooled_bytes = 0
        self._out_sizes: dict[int, int] = {}  # nbytes -> size class (alloc_output)
        self._staging: dict[int, list[Any]] = {}
        self._staging_bytes = 0
        # (wgsl, entry, constants) -> pipeline; keyed by the source string itself, whose hash
        # Python caches, so a lookup never re-hashes the source
        self._pipelines: LRU = LRU(PIPELINE_CACHE)
        self._groups: OrderedDict[tuple, Any] = OrderedDict()
        self._uniforms: OrderedDict[bytes, GPUBuffer] = OrderedDict()
        self._encoder: Any = None
        self._pass: Any = None
        self._pending = 0
        self._pending_writes = 0
        self._pending_write_bytes = 0
        self._epoch = 0
        self._deferred: list[GPUBuffer] = []
        self.stats = {
            "buffers_created": 0, "buffers_destroyed": 0, "live_buffers": 0, "live_bytes": 0,
            "pipelines_compiled": 0, "dispatches": 0, "submits": 0, "bind_groups_created": 0,
            "staging_created": 0, "flushes_for_write": 0, "reads": 0,
        }

    def make_ops(self, device: Any) -> Any:
        """The WGSL op provider of ``device`` (``pyaccel.ops.provider.OpProvider``)."""
        from ..ops.wgsl_provider import WgslOps

        return WgslOps(device)

    # -- state ------------------------------------------------------------------
    @property
    def is_lost(self) -> bool:
        """True once the facade reported the device lost (then every call raises)."""
        return self.f.lost_reason is not None

    def _lost_error(self) -> DeviceLostError:
        return DeviceLostError(
            f"the device is lost ({self.f.lost_reason}); its buffers and arrays are gone. "
            "Fix: open it again with pyaccel.device(uri) (a fresh device) and recreate the data"
        )

    def _check(self) -> None:
        if self.f.lost_reason is not None:
            raise self._lost_error()

    def _mapped(self, exc: Exception) -> BaseException:
        """The error to raise for a facade exception: once the device is lost, DeviceLostError
        with the recovery hint; otherwise ``exc`` unchanged (PyaccelErrors pass through)."""
        if self.is_lost:
            return self._lost_error()
        return exc

    def _check_binding_size(self, nbytes: int, what: str) -> None:
        limit = self.limits.max_storage_binding_size
        if nbytes > limit:
            raise OutOfDeviceMemoryError(
                f"{what} of {nbytes} bytes ({nbytes / 2**20:.1f} MiB) is above this device's "
                f"max_storage_binding_size of {limit} bytes ({limit / 2**20:.0f} MiB): a kernel cannot "
                "bind it. Fix: work on smaller pieces (split the array, e.g. by rows) or use a device "
                "with a larger limit; the device and other arrays are unaffected"
            )

    # -- allocation -----------------------------------------------------------
    def alloc(self, nbytes: int) -> GPUBuffer:
        """A device buffer of at least ``nbytes`` (pooled; contents undefined). The caller
        holds :attr:`lock` (``Device.malloc`` takes it)."""
        if self._rec is not None:
            return self._rec.alloc(nbytes, False)
        self._check()
        self._check_binding_size(nbytes, "a device buffer")
        return self._alloc(nbytes)

    def _create(self, nbytes: int, size: int) -> Any:
        """facade.create_buffer; out of memory: trim the pool, retry once, then raise typed."""
        for attempt in (0, 1):
            try:
                return self.f.create_buffer(size, DEVICE_USAGE)
            except Exception as exc:
                err = self._mapped(exc)
                if isinstance(err, DeviceLostError):
                    raise err from exc
                oom = isinstance(err, MemoryError) or "memory" in str(exc).lower()
                if not oom:
                    raise
                if attempt == 0 and (self._pooled_bytes or self._staging_bytes or self._deferred):
                    self.trim()  # give the pooled memory back, then try once more
                    continue
                raise OutOfDeviceMemoryError(
                    f"allocating {nbytes} bytes failed: the device is out of memory ({exc}); "
                    f"{self.stats['live_bytes']} bytes are live in {self.stats['live_buffers']} buffers. "
                    "Fix: free arrays you no longer need (del / .free()) or use smaller data; "
                    "the device stays usable"
                ) from exc
        raise AssertionError("unreachable")

    def _alloc(self, nbytes: int) -> GPUBuffer:
        if self._late_releases:
            self._release_late()
        size = min(size_class(nbytes), max(align4(nbytes), 4, self.limits.max_buffer_size))
        free = self._pool.get(size)
        h = None
        if free:
            # Prefer a buffer no queued command still uses: a host write to it needs no flush.
            # Past REUSE_PENDING_BYTES take a queued one anyway: a new buffer costs a zero-fill
            # of its whole size, a later host write to a queued one only a submit (the write
            # hazard check flushes), and an op output is written by the GPU in order.
            for i in range(len(free) - 1, -1, -1):
                if free[i].epoch < self._epoch or self._encoder is None:
                    h = free.pop(i)
                    break
            if h is None and size >= REUSE_PENDING_BYTES:
                h = free.pop()
            if h is not None:
                self._pooled_bytes -= size
                if self._buffer_ok is not None and not self._buffer_ok(h.buf):
                    self._destroy(h)
                    h = None
        if h is None:
            buf = self._create(nbytes, size)
            h = GPUBuffer(buf, size)
            self.stats["buffers_created"] += 1
        self.stats["live_buffers"] += 1
        self.stats["live_bytes"] += size
        return h

    def alloc_output(self, nbytes: int) -> GPUBuffer:
        """A buffer for a kernel to write before anything reads it (an op's fresh output).

        Takes the most recently freed pooled buffer of the size class even while the open
        encoder still uses it: the kernel writes it in encoder order, after every command
        recorded before (WebGPU orders dispatches that touch the same buffer), so no flush
        is needed. Only *host* writes need the flush (:meth:`write` keeps that rule), and
        this buffer gets none before its kernel. Reusing the buffer an op chain just freed
        (``y = y + x``: the output of step k takes the buffer of step k - 2) also makes the
        bind groups repeat, so a chain creates a couple of them instead of one per op.
        The caller holds :attr:`lock` (the op layer takes it once per op).
        """
        if self.f.lost_reason is not None:
            raise self._lost_error()
        if self._rec is not None:
            return self._rec.alloc(nbytes, True)
        size = self._out_sizes.get(nbytes)
        if size is None:
            self._check_binding_size(nbytes, "an op output")
        # (the common case, a pooled buffer of a known size, inline: one call per op)
        elif not self._late_releases:
            free = self._pool.get(size)
            if free and self._buffer_ok is None:
                self._pooled_bytes -= size
                h = free.pop()
                stats = self.stats
                stats["live_buffers"] += 1
                stats["live_bytes"] += size
                return h
        return self._alloc_output(nbytes, size)

    def _alloc_output(self, nbytes: int, size: int | None) -> GPUBuffer:
        if self._late_releases:
            self._release_late()
        if size is None:
            size = min(size_class(nbytes), max(align4(nbytes), 4, self.limits.max_buffer_size))
            if len(self._out_sizes) < 4096:
                self._out_sizes[nbytes] = size
        free = self._pool.get(size)
        if free:
            self._pooled_bytes -= size
            h = free.pop()
            if self._buffer_ok is None or self._buffer_ok(h.buf):
                self.stats["live_buffers"] += 1
                self.stats["live_bytes"] += size
                return h
            self._destroy(h)
        return self._alloc(nbytes)

    def release(self, h: GPUBuffer, nbytes: int) -> None:
        """Return a buffer to the pool (called by Buffer.free() and by GC).

        Never blocks: garbage collection runs this on whatever thread allocates, including a
        facade's submit thread while another thread holds the lock and waits for that thread
        (a deadlock if this waited). When the lock is busy the buffer is queued, and the next
        call that holds the lock (allocation, flush, trim, memory_stats) pools it."""
        try:
            if self.lock.acquire(blocking=False):
                try:
                    if self._late_releases:
                        self._release_late()
                    if self._rec is not None:
                        self._rec.released(h)
                    self._release(h)
                finally:
                    self.lock.release()
            else:
                self._late_releases.append(h)  # (deque.append is atomic)
        except Exception:  # interpreter shutdown
            pass

    def _release_late(self) -> None:
        q = self._late_releases
        while q:
            try:
                h = q.popleft()
            except IndexError:
                break
            self._release(h)

    def _release(self, h: GPUBuffer) -> None:
        stats, size = self.stats, h.size
        stats["live_buffers"] -= 1
        stats["live_bytes"] -= size
        if self._pooled_bytes + size > POOL_LIMIT_BYTES:
            self._destroy(h)
            return
        if self.f.lost_reason is not None:
            return  # nothing to reuse on a lost device
        self._pool.setdefault(size, []).append(h)
        self._pooled_bytes += size

    def _destroy(self, h: GPUBuffer) -> None:
        if h.epoch >= self._epoch and self._encoder is not None:
            self._deferred.append(h)  # still used by unsubmitted commands
            return
        h.destroyed = True
        self._groups.clear()  # cached bind groups may reference it
        self.f.destroy_buffer(h.buf)
        self.stats["buffers_destroyed"] += 1

    def trim(self) -> None:
        """Destroy every pooled (free) buffer."""
        with self.lock:
            self._trim()

    def _trim(self) -> None:
        self._release_late()
        if not self.is_lost:
            self.flush()
        for lst in self._pool.values():
            for h in lst:
                self._destroy(h)
        self._pool.clear()
        self._pooled_bytes = 0
        for lst in self._staging.values():
            for b in lst:
                self.f.destroy_buffer(b)
        self._staging.clear()
        self._staging_bytes = 0

    def memory_stats(self) -> dict[str, int]:
        with self.lock:
            self._release_late()
            return self._memory_stats()

    def _memory_stats(self) -> dict[str, int]:
        return {**self.stats, "pooled_bytes": self._pooled_bytes,
                "pooled_buffers": sum(len(v) for v in self._pool.values()),
                "staging_bytes": self._staging_bytes, "pipelines_cached": len(self._pipelines),
                "pipelines_evicted": self._pipelines.evicted,
                "uniforms_cached": len(self._uniforms)}

    def info_lines(self) -> list[str]:
        return list(self._info_lines)

    # -- encoder ----------------------------------------------------------------
    def _ensure_encoder(self) -> Any:
        if self._encoder is None:
            self._encoder = self.f.create_encoder()
        return self._encoder

    def _end_pass(self) -> None:
        if self._pass is not None:
            self.f.end_pass(self._pass)
            self._pass = None

    def flush(self) -> None:
        """Submit the open encoder (if any)."""
        with self.lock:
            self._check()
            try:
                self._flush()
            except Exception as exc:
                err = self._mapped(exc)
                if err is exc:
                    raise
                raise err from exc

    def _flush(self) -> None:
        if self._late_releases:
            self._release_late()
        self._end_pass()
        if self._encoder is not None:
            enc, self._encoder = self._encoder, None
            self._pending = 0
            self._pending_writes = self._pending_write_bytes = 0
            self._epoch += 1
            self.f.submit(enc)
            self.stats["submits"] += 1
        if self._deferred:
            dead, self._deferred = self._deferred, []
            for h in dead:
                self._destroy(h)

    def synchronize(self, timeout: float | None = None) -> None:
        """Submit and wait until the device is idle (DeviceTimeoutError past ``timeout`` s)."""
        with self.lock:
            self.flush()
            try:
                self.f.wait_idle(timeout=timeout)
            except Exception as exc:
                err = self._mapped(exc)
                if err is exc:
                    raise
                raise err from exc

    async def synchronize_async(self) -> None:
        with self.lock:
            self.flush()
        try:
            await self.f.wait_idle_async()  # (the facade locks its own synchronous parts)
        except Exception as exc:
            err = self._mapped(exc)
            if err is exc:
                raise
            raise err from exc

    # -- transfers ----------------------------------------------------------------
    def write(self, h: GPUBuffer, offset: int, data: memoryview) -> None:
        """Host write into ``h`` (queue.writeBuffer; flushes queued work that uses ``h`` first)."""
        with self.lock:
            if self._rec is not None:
                return self._rec.write(h, offset, data)
            self._check()
            try:
                self._write(h, offset, data)
            except Exception as exc:
                err = self._mapped(exc)
                if err is exc:
                    raise
                raise err from exc

    def _write(self, h: GPUBuffer, offset: int, data: memoryview) -> None:
        if self._encoder is not None and h.epoch >= self._epoch:
            self.stats["flushes_for_write"] += 1
            self.flush()  # queued commands use h: they must run before this write lands
        n = data.nbytes
        self._pending_writes += 1
        self._pending_write_bytes += n
        if offset % 4 == 0 and n % 4 == 0:
            self.f.write_buffer(h.buf, offset, data)
            self._bound_staged_writes()
            return
        start, end = offset & ~3, align4(offset + n)
        if end > h.size:
            end = h.size
        window = bytearray(self.read(h, start, end - start)) if (start != offset or end != offset + n) else bytearray(end - start)
        window[offset - start: offset - start + n] = data
        window.extend(b"\0" * (align4(len(window)) - len(window)))
        self.f.write_buffer(h.buf, start, memoryview(window))
        self._bound_staged_writes()

    def _bound_staged_writes(self) -> None:
        if self._pending_writes < WRITE_FLUSH_COUNT and self._pending_write_bytes < WRITE_FLUSH_BYTES:
            return
        if self._encoder is not None:
            self.flush()
        else:  # nothing recorded: an empty submit releases the staged write data
            self._pending_writes = self._pending_write_bytes = 0
            self.f.submit(self.f.create_encoder())
            self.stats["submits"] += 1

    def _staging_get(self, size: int) -> Any:
        lst = self._staging.get(size)
        if lst:
            self._staging_bytes -= size
            return lst.pop()
        self.stats["staging_created"] += 1
        return self.f.create_buffer(size, STAGING_USAGE)

    def _staging_put(self, size: int, buf: Any) -> None:
        if self._staging_bytes + size > STAGING_POOL_LIMIT_BYTES or (
                self._buffer_ok is not None and not self._buffer_ok(buf)):
            self.f.destroy_buffer(buf)
            return
        self._staging.setdefault(size, []).append(buf)
        self._staging_bytes += size

    def _start_read(self, h: GPUBuffer, offset: int, n: int) -> tuple[Any, int, int, int]:
        start, end = offset & ~3, min(align4(offset + n), h.size)
        span = end - start
        size = size_class(span)
        self.stats["reads"] += 1
        st = self._staging_get(size)
        self._end_pass()
        self.f.copy(self._ensure_encoder(), h.buf, start, st, 0, span)
        h.epoch = self._epoch
        self.flush()
        return st, size, offset - start, span

    def read(self, h: GPUBuffer, offset: int, n: int, out: memoryview | None = None,
             timeout: float | None = None) -> Any:
        """Copy ``n`` bytes of ``h`` to the host (waits; DeviceTimeoutError past ``timeout`` s).

        After an exception during the wait (Ctrl-C, timeout) the staging buffer is not reused:
        the facade cleans it up once its map resolves, and the device stays usable."""
        with self.lock:
            if self._rec is not None:
                self._rec.read()  # (raises pyaccel.JitError: a host read inside a trace)
            self._check()
            try:
                with self.f.deadline(timeout):  # (the staging buffer's creation may wait too)
                    st, size, skip, span = self._start_read(h, offset, n)
                if out is not None and skip == 0 and span == n:
                    self.f.map_read(st, 0, n, out, timeout=timeout)
                    res = out
                else:
                    res = _trim_read(self.f.map_read(st, 0, span, timeout=timeout), skip, span, n, out)
            except Exception as exc:
                err = self._mapped(exc)
                if err is exc:
                    raise
                raise err from exc
            self._staging_put(size, st)
            return res

    async def read_async(self, h: GPUBuffer, offset: int, n: int, out: memoryview | None = None) -> Any:
        with self.lock:
            if self._rec is not None:
                self._rec.read()
            self._check()
            st, size, skip, span = self._start_read(h, offset, n)
        try:
            data = await self.f.map_read_async(st, 0, span)  # (no lock across the await)
        except Exception as exc:
            err = self._mapped(exc)
            if err is exc:
                raise
            raise err from exc
        with self.lock:
            self._staging_put(size, st)
        return _trim_read(data, skip, span, n, out)

    def copy(self, src: GPUBuffer, src_offset: int, dst: GPUBuffer, dst_offset: int, nbytes: int) -> None:
        """Device-side copy (through the host when offsets or size are not 4-aligned)."""
        with self.lock:
            if self._rec is not None:
                return self._rec.copy(src, src_offset, dst, dst_offset, nbytes)
            self._check()
            self._copy(src, src_offset, dst, dst_offset, nbytes)

    def _copy(self, src: GPUBuffer, src_offset: int, dst: GPUBuffer, dst_offset: int, n: int) -> None:
        if src_offset % 4 or dst_offset % 4 or n % 4:
            # copyBufferToBuffer needs 4-byte alignment: go through the host (rare)
            self.write(dst, dst_offset, memoryview(self.read(src, src_offset, n)))
            return
        self._end_pass()
        self.f.copy(self._ensure_encoder(), src.buf, src_offset, dst.buf, dst_offset, n)
        src.epoch = dst.epoch = self._epoch
        self._count()

    def _count(self) -> None:
        self._pending += 1
        if self._pending >= BATCH_LIMIT:
            self.flush()

    # -- kernels --------------------------------------------------------------------
    def pipeline(self, wgsl: str, entry: str, constants: dict[str, float] | None = None,
                 name: str = "") -> Any:
        """The compiled pipeline (cached by source hash, entry and constants; the caller
        holds :attr:`lock`)."""
        self._check()
        return self._pipeline(wgsl, entry, constants, name)

    def _pipeline(self, wgsl: str, entry: str, constants: dict[str, float] | None, name: str) -> Any:
        key = (wgsl, entry, tuple(sorted(constants.items())) if constants else ())
        pipe = self._pipelines.get(key)
        if pipe is None:
            t0 = _perf_counter() if _COMPILE_LOG else 0.0
            try:
                pipe = self.f.create_pipeline(wgsl, entry, dict(constants or {}))
            except KernelCompileError as exc:
                if name and not exc.args[0].startswith(f"WGSL kernel {name}"):
                    raise compile_error(wgsl, exc.compiler_message, exc.line, exc.column, name) from None
                raise
            self._pipelines.put(key, pipe)
            self.stats["pipelines_compiled"] += 1
            if _COMPILE_LOG:
                _log_compile(self, wgsl, entry, name, _perf_counter() - t0)
        return pipe

    def close(self) -> None:
        """Release the device (``Device.close()``): finish queued work, destroy pooled and
        staging buffers, drop every cache, then let the facade release the device. Later
        calls raise DeviceLostError naming the fix (open the URI again)."""
        with self.lock:
            if self.f.lost_reason is None:
                try:
                    self.synchronize()
                except Exception:  # noqa: BLE001 - closing must not fail on a dying device
                    pass
                self._trim()
                self.f.lost_reason = "closed by Device.close()"
            self._pipelines.clear()
            self._groups.clear()
            self._uniforms.clear()
            self._deferred.clear()
            try:
                self.f.close()
            except Exception:  # noqa: BLE001
                pass

    def uniform(self, data: bytes) -> GPUBuffer:
        """A device buffer holding ``data`` (small parameter blocks, cached by content).

        The caller holds :attr:`lock` until it has recorded the dispatch that binds it (an
        evicted block returns to the pool and may be reused)."""
        if self.f.lost_reason is not None:
            raise self._lost_error()
        if self._rec is not None:
            return self._rec.uniform(data)
        if self._buffer_ok is None:  # (the common case, a cached block, inline)
            h = self._uniforms.get(data)
            if h is not None:
                self._uniforms.move_to_end(data)
                return h
        return self._uniform(data)

    def _uniform(self, data: bytes) -> GPUBuffer:
        h = self._uniforms.get(data)
        if h is not None:
            if self._buffer_ok is None or self._buffer_ok(h.buf):
                self._uniforms.move_to_end(data)
                return h
            del self._uniforms[data]  # its creation failed late: the pool destroys it
            self._release(h)
        h = self._alloc(len(data))
        self.write(h, 0, memoryview(data + b"\0" * (align4(len(data)) - len(data))))
        self._uniforms[data] = h
        if len(self._uniforms) > UNIFORM_CACHE:
            # (an evicted block returns to the pool at once: callers hold the lock from here
            # until their dispatch is recorded, so no other thread can reuse it in between)
            _, old = self._uniforms.popitem(last=False)
            self._release(old)
        return h

    def _bind_group(self, key: tuple, pipeline: Any, entries: Any) -> Any:
        """The bind group cached under ``key``; ``entries()`` gives (binding, buffer, offset,
        size) tuples when it has to be created."""
        ent = self._groups.get(key)
        if ent is not None:
            self._groups.move_to_end(key)
            return ent[0]
        group = self.f.create_bind_group(pipeline, entries())
        self.stats["bind_groups_created"] += 1
        self._groups[key] = (group, pipeline)  # the pipeline stays alive while its id is a key
        if len(self._groups) > BIND_GROUP_CACHE:
            self._groups.popitem(last=False)
        return group

    def dispatch(self, pipeline: Any, entries: list[tuple[int, GPUBuffer, int, int]],
                 workgroups: tuple[int, int, int]) -> Any:
        """Record one dispatch into the open compute pass (no submit; returns the bind group;
        the caller holds :attr:`lock`)."""
        if self._rec is not None:
            return self._rec.dispatch(pipeline, entries, workgroups)
        self._check()
        return self._dispatch(pipeline, entries, workgroups)

    def _dispatch(self, pipeline: Any, entries: list[tuple[int, GPUBuffer, int, int]],
                  workgroups: tuple[int, int, int]) -> Any:
        key = (id(pipeline),) + tuple((b, h.id, o, s) for b, h, o, s in entries)
        group = self._bind_group(key, pipeline, lambda: [(b, h.buf, o, s) for b, h, o, s in entries])
        self._dispatch_group(pipeline, group, tuple(e[1] for e in entries), workgroups)
        return group

    def dispatch_bound(self, pipeline: Any, key: int, binds: tuple[tuple[int, int], ...],
                       handles: tuple[GPUBuffer, ...], workgroups: tuple[int, int, int]) -> None:
        """Record a dispatch binding ``handles[j]`` at ``binds[j] = (binding, size)`` (offset 0).

        ``key`` names the pair (pipeline, binds) for the bind-group cache (the caller's plan
        id), so the cache key is a few ints instead of a tuple per binding.
        """
        if self.f.lost_reason is not None:
            raise self._lost_error()
        if self._rec is not None:
            return self._rec.dispatch_bound(pipeline, key, binds, handles, workgroups)
        gkey = (key, *map(_ID, handles))
        ent = self._groups.get(gkey)  # (_bind_group's cache hit, inline: one call per op)
        if ent is not None:
            self._groups.move_to_end(gkey)
            group = ent[0]
        else:
            group = self._bind_group(gkey, pipeline, lambda: [
                (b, h.buf, 0, sz) for (b, sz), h in zip(binds, handles, strict=True)])
        self._dispatch_group(pipeline, group, handles, workgroups)

    def dispatch_group(self, pipeline: Any, group: Any, handles: tuple[GPUBuffer, ...],
                       workgroups: tuple[int, int, int]) -> None:
        """Record a dispatch with a bind group from an earlier :meth:`dispatch` over ``handles``
        (the caller checked they are still the live buffers it was made for)."""
        if self.f.lost_reason is not None:
            raise self._lost_error()
        if self._rec is not None:
            return self._rec.dispatch_group(pipeline, group, handles, workgroups)
        self._dispatch_group(pipeline, group, handles, workgroups)

    def _dispatch_group(self, pipeline: Any, group: Any, handles: tuple[GPUBuffer, ...],
                        workgroups: tuple[int, int, int]) -> None:
        cpass = self._pass
        if cpass is None:
            cpass = self._pass = self.f.begin_pass(self._ensure_encoder())
        epoch = self._epoch
        for h in handles:
            h.epoch = epoch
        self.f.dispatch(cpass, pipeline, group, *workgroups)
        self.stats["dispatches"] += 1
        self._pending += 1  # (_count, inline)
        if self._pending >= BATCH_LIMIT:
            self.flush()
