"""Backend registry, discovery and default-device selection.

Discovery is tiered and lazy (after IREE's driver/device split):

1. ``backends()`` lists registered backends. Creating a backend may load a
   runtime, so each is created once per process and cached; a backend whose
   creation or probe raises is reported unavailable with that error, and never
   hides the others.
2. ``backend(name).devices()`` enumerates that backend's devices (cached).
3. ``device(uri)`` opens a device; the same device is returned for every URI
   that names it (``vulkan`` / ``vulkan:0``).

Default device (no URI): ``PYACCEL_DEVICE`` if set (an ordered, comma-separated
preference list; nothing outside it is used), else the first device in this
order: real GPUs (discrete, integrated, virtual/unknown), then NumPy ``cpu``,
then software GPU adapters (lavapipe, llvmpipe, SwiftShader), which stay
selectable by URI. Within a rank, backend priority, then API (Vulkan / Metal /
DX12 before GL), then enumeration order: see :mod:`pyaccel.ranking`.

A cached device that was lost (``device.is_lost``) is dropped: the next ``device(uri)``
opens a fresh one.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from . import _hints
from .device import Device, DeviceDescriptor
from .errors import (
    AsyncRequiredError,
    BackendUnavailableError,
    DeviceNotFoundError,
    InvalidDeviceURIError,
    PyaccelError,
)
from .ranking import device_rank
from .uri import DeviceURI

ENV_VAR = "PYACCEL_DEVICE"
ENTRY_POINT_GROUP = "pyaccel.backends"


def _is_lost(dev: Device | None) -> bool:
    """True for a device whose impl reports it lost (contract 3: it is reopened, not reused)."""
    return dev is not None and bool(getattr(dev.impl, "is_lost", False))


class Backend(Protocol):
    """What a backend module provides (one small class per ``runtime/*.py``)."""

    name: str
    schemes: tuple[str, ...]
    version: str

    def devices(self) -> list[DeviceDescriptor]:
        """Enumerate devices (may be slow the first time; cache inside)."""
        ...

    def resolve(self, uri: DeviceURI) -> DeviceDescriptor:
        """The descriptor a URI of this backend's schemes names; raise DeviceNotFoundError."""
        ...

    def open(self, descriptor: DeviceDescriptor) -> Device:
        """Open a device (called once per descriptor; the registry caches the result)."""
        ...


@dataclass(frozen=True)
class BackendEntry:
    """A registration record: how to create a backend, lazily."""

    name: str
    factory: Callable[[], Backend] | str  # callable or "module:attr" (imported on first use)
    priority: int  # higher first when ranking defaults
    schemes: tuple[str, ...]
    description: str = ""
    fix: str = ""  # what to do when it is unavailable
    plugin: bool = False


@dataclass(frozen=True)
class BackendInfo:
    """One row of ``pyaccel.backends()``."""

    name: str
    priority: int
    available: bool
    reason: str  # why not (and the fix); "" when available
    version: str
    schemes: tuple[str, ...]
    devices: tuple[str, ...] = ()
    description: str = ""

    def __repr__(self) -> str:
        state = f"available, {len(self.devices)} device(s)" if self.available else f"unavailable: {self.reason}"
        return f"<BackendInfo {self.name} (priority {self.priority}) {state}>"


# ---------------------------------------------------------------------------
# Built-in registrations. A new backend is one module plus one record here
# (or an entry point in the "pyaccel.backends" group of an outside package).
# ---------------------------------------------------------------------------
BUILTIN_BACKENDS: tuple[BackendEntry, ...] = (
    # The browser's WebGPU through Pyodide: only inside a web page.
    BackendEntry(
        "webgpu",
        "pyaccel.runtime.browser:BrowserBackend",
        priority=300,
        schemes=("webgpu",),
        description="the browser's WebGPU through Pyodide",
        fix="run inside Pyodide in a browser with WebGPU (Chrome/Edge 113+, or --enable-unsafe-webgpu)",
    ),
    # Native GPUs through wgpu-py: Vulkan, Metal, DX12 and GL adapters.
    BackendEntry(
        "wgpu",
        "pyaccel.runtime.wgpu_native:WgpuBackend",
        priority=200,
        schemes=("wgpu", "vulkan", "metal", "dx12", "gl"),
        description="native GPUs through wgpu-py (Vulkan/Metal/DX12/GL)",
        fix="pip install wgpu==0.32.0; on Linux without a GPU: apt-get install mesa-vulkan-drivers libvulkan1",
    ),
    # NumPy on the host: the fallback and the oracle.
    BackendEntry(
        "cpu",
        "pyaccel.runtime.cpu:CpuBackend",
        priority=100,
        schemes=("cpu", "numpy"),
        description="NumPy on the host CPU (fallback and oracle)",
        fix="pip install numpy",  # inside Pyodide: _hints.numpy_fix() (see _fix)
    ),
)


# Inside Pyodide the built-in native fixes (pip install ...) are untrue: these give the text there.
_PYODIDE_FIXES: dict[str, Callable[[], str]] = {"wgpu": _hints.wgpu_fix, "cpu": _hints.numpy_fix}


def _fix(entry: BackendEntry) -> str:
    """The entry's fix, or its Pyodide form for a built-in backend inside Pyodide."""
    if _hints.in_pyodide() and not entry.plugin and entry.name in _PYODIDE_FIXES:
        return _PYODIDE_FIXES[entry.name]()
    return entry.fix


class BackendRegistry:
    """Holds backend records, cached backend instances and open devices."""

    def __init__(self, entries: Sequence[BackendEntry] = (), *, load_plugins: bool = True) -> None:
        self._entries: dict[str, BackendEntry] = {}
        self._instances: dict[str, Backend] = {}
        self._errors: dict[str, str] = {}
        self._devices: dict[str, Device] = {}
        self._lock = threading.RLock()
        self._plugins_loaded = not load_plugins
        for e in entries:
            self.register(e)

    # -- registration -------------------------------------------------------
    def register(self, entry: BackendEntry, *, replace: bool = False) -> None:
        """Add a backend record. Names are unique unless ``replace``."""
        with self._lock:
            if entry.name in self._entries and not replace:
                raise ValueError(f"backend {entry.name!r} is already registered; pass replace=True to override")
            self._entries[entry.name] = entry
            self._instances.pop(entry.name, None)
            self._errors.pop(entry.name, None)

    def register_backend(
        self,
        name: str,
        factory: Callable[[], Backend] | str,
        *,
        priority: int = 0,
        schemes: Sequence[str] | None = None,
        description: str = "",
        fix: str = "",
    ) -> None:
        """Shorthand for :meth:`register` (like JAX ``register_backend_factory``)."""
        self.register(
            BackendEntry(name, factory, priority, tuple(schemes or (name,)), description, fix)
        )

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        try:
            from importlib.metadata import entry_points

            eps = entry_points(group=ENTRY_POINT_GROUP)
        except Exception:  # pragma: no cover - broken metadata never hides built-ins
            return
        for ep in eps:
            try:
                obj = ep.load()
                entry = obj() if callable(obj) and not isinstance(obj, BackendEntry) else obj
                if not isinstance(entry, BackendEntry):
                    raise TypeError(f"entry point must give a BackendEntry, got {type(entry).__name__}")
                if entry.name in self._entries:
                    continue
                self._entries[entry.name] = BackendEntry(**{**entry.__dict__, "plugin": True})
            except Exception as exc:
                # Record a broken plugin as an unavailable backend instead of failing.
                self._entries[ep.name] = BackendEntry(
                    ep.name, ep.value, 0, (ep.name,), f"plugin {ep.value}", plugin=True
                )
                self._errors[ep.name] = f"plugin entry point {ep.value!r} failed to load: {exc!r}"

    def entries(self) -> list[BackendEntry]:
        with self._lock:
            self._load_plugins()
            return sorted(self._entries.values(), key=lambda e: -e.priority)

    # -- tier 1: backends ---------------------------------------------------
    def _create(self, name: str) -> Backend:
        """The cached backend instance; raises BackendUnavailableError with the reason."""
        with self._lock:
            if name in self._instances:
                return self._instances[name]
            if name not in self._entries:  # plugins are scanned only when needed (slow)
                self._load_plugins()
            entry = self._entries.get(name)
            if entry is None:
                raise BackendUnavailableError(
                    f"no backend named {name!r}; registered backends: {', '.join(self._entries) or 'none'}"
                )
            if name in self._errors:
                raise BackendUnavailableError(self._errors[name])
            try:
                factory = entry.factory
                if isinstance(factory, str):
                    mod, _, attr = factory.partition(":")
                    factory = getattr(importlib.import_module(mod), attr)
                inst = factory()
            except BackendUnavailableError as exc:
                self._errors[name] = str(exc)
                raise
            except Exception as exc:
                msg = f"backend {name!r} failed to start: {type(exc).__name__}: {exc}"
                if _fix(entry):
                    msg += f"; fix: {_fix(entry)}"
                self._errors[name] = msg
                raise BackendUnavailableError(msg) from exc
            self._instances[name] = inst
            return inst

    def backend(self, name: str) -> Backend:
        """The backend object for ``name`` (created once, cached for the process)."""
        return self._create(name)

    def backends(self) -> list[BackendInfo]:
        """One record per registered backend; never raises."""
        out = []
        for e in self.entries():
            try:
                b = self._create(e.name)
                devs = tuple(d.uri for d in b.devices())
                reason = "" if devs else f"backend {e.name!r} found no devices; fix: {_fix(e)}"
                out.append(
                    BackendInfo(e.name, e.priority, bool(devs), reason, str(getattr(b, "version", "")),
                                e.schemes, devs, e.description)
                )
            except Exception as exc:
                reason = str(exc) if isinstance(exc, PyaccelError) else f"{type(exc).__name__}: {exc}"
                if not isinstance(exc, PyaccelError):
                    reason += "\n" + "".join(traceback.format_exception_only(exc)).strip()
                out.append(BackendInfo(e.name, e.priority, False, reason, "", e.schemes, (), e.description))
        return out

    def _entry_for_scheme(self, scheme: str) -> BackendEntry:
        # Registered backends first: scanning the "pyaccel.backends" entry points reads every
        # installed distribution's metadata, and a plugin never replaces a registered name.
        with self._lock:
            registered = sorted(self._entries.values(), key=lambda e: -e.priority)
        for e in registered:
            if scheme in e.schemes:
                return e
        for e in self.entries():
            if scheme in e.schemes:
                return e
        avail = [b for b in self.backends() if b.available]
        known = sorted({s for e in self.entries() for s in e.schemes})
        raise DeviceNotFoundError(
            f"no backend handles the device scheme {scheme!r}; known schemes: {', '.join(known)}; "
            f"available devices here: {', '.join(u for b in avail for u in b.devices) or 'none'}"
        )

    # -- tier 2: devices ----------------------------------------------------
    def devices(self) -> list[DeviceDescriptor]:
        """Every device of every available backend, in default-preference order."""
        found: list[tuple[tuple, DeviceDescriptor]] = []
        for i, e in enumerate(self.entries()):
            try:
                devs = self._create(e.name).devices()
            except Exception:
                continue
            for j, d in enumerate(devs):
                found.append(((*device_rank(d, e.priority), i, j), d))
        return [d for _, d in sorted(found, key=lambda t: t[0])]

    def count_devices(self, backend: str | None = None) -> int:
        if backend is None:
            return len(self.devices())
        try:
            return len(self._create(backend).devices())
        except BackendUnavailableError:
            return 0

    def resolve(self, uri: str | DeviceURI) -> DeviceDescriptor:
        """Descriptor for a URI; raises InvalidDeviceURIError / DeviceNotFoundError."""
        u = DeviceURI.parse(uri)
        entry = self._entry_for_scheme(u.scheme)
        try:
            b = self._create(entry.name)
        except BackendUnavailableError as exc:
            raise DeviceNotFoundError(
                f"device {str(u)!r}: backend {entry.name!r} is unavailable: {exc}"
            ) from exc
        return b.resolve(u)

    # -- tier 3: open -------------------------------------------------------
    def open(self, uri: str | DeviceURI | Device) -> Device:
        if isinstance(uri, Device):
            return uri
        desc = self.resolve(uri)
        with self._lock:
            dev = self.cached(desc.uri)
            if dev is None:
                dev = self._create(desc.backend).open(desc)
                self._devices[desc.uri] = dev
            return dev

    def cached(self, uri: str) -> Device | None:
        """The open device cached under a canonical URI; a lost one is dropped (None)."""
        with self._lock:
            dev = self._devices.get(uri)
            if dev is not None and dev.is_lost:
                del self._devices[uri]
                return None
            return dev

    def preferences(self) -> list[str] | None:
        """The PYACCEL_DEVICE preference list, or None when unset."""
        raw = os.environ.get(ENV_VAR)
        if raw is None or not raw.strip():
            return None
        return [p.strip() for p in raw.split(",") if p.strip()]

    def first_device(self, uris: Sequence[str | DeviceURI | Device], *, source: str = "") -> Device:
        """Open the first URI that works; the error lists every URI's reason."""
        if isinstance(uris, (str, DeviceURI)):
            uris = [uris]
        if not uris:
            raise DeviceNotFoundError(f"first_device([]): no device URIs given{source}")
        reasons = []
        for u in uris:
            try:
                return self.open(u)
            except InvalidDeviceURIError:
                raise
            except (DeviceNotFoundError, BackendUnavailableError) as exc:
                reasons.append(f"  {u}: {exc}")
        raise DeviceNotFoundError(
            f"none of the devices {', '.join(map(str, uris))}{source} could be opened:\n" + "\n".join(reasons)
            + "\nFix the first one, or set PYACCEL_DEVICE to a device listed by `pyaccel devices`."
        )

    def default_device(self) -> Device:
        prefs = self.preferences()
        if prefs is not None:
            return self.first_device(prefs, source=f" (from {ENV_VAR}={os.environ[ENV_VAR]!r})")
        reasons = []
        for d in self.devices():
            try:
                return self.open(d.uri)
            except AsyncRequiredError:  # the browser without JSPI: the caller names the twin
                raise
            except PyaccelError as exc:
                reasons.append(f"  {d.uri}: {exc}")
        raise self.no_device_error(reasons)

    def no_device_error(self, reasons: Sequence[str]) -> DeviceNotFoundError:
        """"no device could be opened": each device's and each unavailable backend's reason."""
        lines = [f"  {b.name}: {b.reason}" for b in self.backends() if not b.available]
        return DeviceNotFoundError(
            "no device could be opened:\n" + "\n".join([*reasons, *lines] or ["  (no backend registered)"])
            + "\n" + _hints.no_device_advice()
        )

    def default_uri(self) -> str | None:
        """URI of the device ``device()`` would open (None when there is none); opens nothing new."""
        prefs = self.preferences()
        if prefs is not None:
            for p in prefs:
                try:
                    return self.resolve(p).uri
                except PyaccelError:
                    continue
            return None
        devs = self.devices()
        return devs[0].uri if devs else None

    def rescan(self) -> None:
        """Forget remembered backend failures so the next listing probes them again
        (e.g. after ``await pyodide.loadPackage("numpy")`` makes the cpu backend available)."""
        with self._lock:
            plugin_errors = {n for n, e in self._entries.items() if e.plugin and n not in self._instances}
            self._errors = {n: m for n, m in self._errors.items() if n in plugin_errors}

    def reset(self) -> None:
        """Forget cached backends and devices (tests)."""
        with self._lock:
            self._instances.clear()
            self._errors.clear()
            self._devices.clear()


# ---------------------------------------------------------------------------
# The process-wide registry and the public functions over it.
# ---------------------------------------------------------------------------
REGISTRY = BackendRegistry(BUILTIN_BACKENDS)
_local = threading.local()
_global_default: list[Device | None] = [None]


def register_backend(
    name: str,
    factory: Callable[[], Backend] | str,
    *,
    priority: int = 0,
    schemes: Sequence[str] | None = None,
    description: str = "",
    fix: str = "",
) -> None:
    """Register a backend factory in the process registry (see :class:`BackendEntry`)."""
    REGISTRY.register_backend(name, factory, priority=priority, schemes=schemes,
                              description=description, fix=fix)


def backends() -> list[BackendInfo]:
    """One record per registered backend (name, priority, available, reason, version); never raises."""
    return REGISTRY.backends()


def rescan_backends() -> list[BackendInfo]:
    """Probe again the backends that failed (failures are otherwise remembered for the process)."""
    REGISTRY.rescan()
    return REGISTRY.backends()


def backend(name: str) -> Backend:
    """The cached backend object; raises BackendUnavailableError with the reason."""
    return REGISTRY.backend(name)


def devices() -> list[DeviceDescriptor]:
    """Every device of every available backend, best first (default-selection order)."""
    return REGISTRY.devices()


def count_devices(backend: str | None = None) -> int:
    """Number of devices (of one backend, or of all)."""
    return REGISTRY.count_devices(backend)


def device(uri: str | DeviceURI | Device | None = None) -> Device:
    """Open a device by URI (cached: the same object each time); no URI means the current device."""
    if uri is None:
        return get_device()
    return REGISTRY.open(uri)


async def device_async(uri: str | DeviceURI | Device | None = None) -> Device:
    """Async twin of :func:`device`: awaits what the browser must await (adapter, device)."""
    if isinstance(uri, Device):
        return uri
    if uri is None:
        stack = getattr(_local, "stack", None)
        if stack:
            return stack[-1]
        if _global_default[0] is not None and not _is_lost(_global_default[0]):
            return _global_default[0]
        prefs = REGISTRY.preferences()
        cands: list[str] = prefs if prefs is not None else []
        if prefs is None:
            for e in REGISTRY.entries():  # let async backends discover first
                await _prepare(e.name, None)
            cands = [d.uri for d in REGISTRY.devices()]
        reasons = []
        for c in cands:
            try:
                dev = await _open_async(c)
            except (DeviceNotFoundError, BackendUnavailableError) as exc:
                reasons.append(f"  {c}: {exc}")
                continue
            _global_default[0] = dev
            return dev
        raise REGISTRY.no_device_error(reasons)
    return await _open_async(uri)


async def _prepare(name: str, path: str | None) -> None:
    try:
        b = REGISTRY.backend(name)
    except BackendUnavailableError:
        return
    prep = getattr(b, "prepare_async", None)
    if prep is not None:
        await prep(path or "default")


async def _open_async(uri: str | DeviceURI) -> Device:
    u = DeviceURI.parse(uri)
    entry = REGISTRY._entry_for_scheme(u.scheme)
    await _prepare(entry.name, u.path)
    desc = REGISTRY.resolve(u)
    dev = REGISTRY.cached(desc.uri)
    if dev is None:
        b = REGISTRY.backend(desc.backend)
        opener = getattr(b, "open_async", None)
        dev = await opener(desc) if opener is not None else b.open(desc)
        dev = REGISTRY._devices.setdefault(desc.uri, dev)
    return dev


def first_device(uris: Sequence[str | DeviceURI | Device]) -> Device:
    """Open the first URI of ``uris`` that works; the error lists each URI's reason."""
    return REGISTRY.first_device(uris)


def get_device() -> Device:
    """The current device: innermost ``using()``, else ``set_device()``, else the default."""
    stack = getattr(_local, "stack", None)
    if stack:
        return stack[-1]
    if _global_default[0] is not None and _global_default[0].is_lost:
        _global_default[0] = REGISTRY.open(_global_default[0].uri)  # a fresh device
    if _global_default[0] is None:
        try:
            _global_default[0] = REGISTRY.default_device()
        except AsyncRequiredError as exc:
            raise AsyncRequiredError(
                "pyaccel.get_device() / pyaccel.device() with no URI has to open the default "
                "device, which has to wait here; use the async form: await pyaccel.device_async() "
                f"(details: {exc})") from None
    return _global_default[0]


def set_device(uri: str | DeviceURI | Device | None) -> Device | None:
    """Set the process-wide current device (``None`` returns to the default selection)."""
    _global_default[0] = None if uri is None else REGISTRY.open(uri)
    return _global_default[0]


@contextlib.contextmanager
def using(uri: str | DeviceURI | Device) -> Iterator[Device]:
    """``with pyaccel.using("vulkan:0") as dev:`` makes ``dev`` current in this thread."""
    dev = REGISTRY.open(uri)
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    stack.append(dev)
    try:
        yield dev
    finally:
        stack.pop()


def default_device_uri() -> str | None:
    """URI of the device used when none is given (``pyaccel devices`` marks it)."""
    stack = getattr(_local, "stack", None)
    if stack:
        return stack[-1].uri
    if _global_default[0] is not None:
        return _global_default[0].uri
    return REGISTRY.default_uri()


def as_device(dev: Any) -> Device:
    """A Device from a Device, URI string or None (current device)."""
    if dev is None:
        return get_device()
    return device(dev)
