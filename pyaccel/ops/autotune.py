"""Per-adapter choice of the matmul kernel variant: timed on first use, cached on disk.

On the first unpinned matmul of an (adapter, dtype, size class), :func:`choose` times the
candidate variants of :data:`pyaccel.ops.gpu_kernels.MATMUL_VARIANTS` on one synthetic
product of the class's representative shape (:data:`CLASS_SHAPES`; per candidate a 16^3
call that compiles the kernel, then one timed call, two when it takes under 20 ms), the
static default first, the others while a budget of :data:`DEFAULT_BUDGET_MS` ms lasts
(``$PYACCEL_AUTOTUNE_BUDGET_MS``; the first compile is not counted), and keeps the fastest. The
choice is remembered in memory and in ``<cache dir>/matmul-autotune.json``, keyed by the
adapter (name, driver, API, backend, vendor and device ids, runtime version) and the pyaccel
version, so another GPU, driver or release tunes again, and a later process reads the
choice instead of timing (:func:`stats` counts both).

* Cache dir: ``$PYACCEL_CACHE_DIR``; unset: the platform's user cache dir
  (``$XDG_CACHE_HOME/pyaccel`` or ``~/.cache/pyaccel`` on Linux, ``~/Library/Caches/pyaccel``
  on macOS, ``%LOCALAPPDATA%\\pyaccel\\Cache`` on Windows); ``PYACCEL_CACHE_DIR=""``: no disk
  cache. In the browser (Pyodide) the cache is in memory only. A read-only or unwritable dir
  also leaves the choices in memory only (never an error); a corrupt cache file is ignored
  with a warning and rewritten.
* ``PYACCEL_AUTOTUNE=0`` (or ``set_autotune(False)``): no timing, the static default
  (u16x8 where the vec4 kernels apply, tiled otherwise).
* ``PYACCEL_MATMUL_VARIANT`` / :func:`pyaccel.set_matmul_variant` pin a variant; a pin
  wins over the tuned choice (deterministic runs, CI).

A tuning that fails (an adapter that cannot synchronise, a kernel that does not compile)
falls back to the static default for that key, remembered for the process.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._flags import check_flag, env_flag

CACHE_DIR_ENV = "PYACCEL_CACHE_DIR"
AUTOTUNE_ENV = "PYACCEL_AUTOTUNE"
BUDGET_ENV = "PYACCEL_AUTOTUNE_BUDGET_MS"
CACHE_FILE = "matmul-autotune.json"
FORMAT = 1
DEFAULT_BUDGET_MS = 1000.0
"""Most wall time one tuning (one adapter, dtype and size class) spends past compiling the
first candidate (the static default, which the product needs anyway); the candidate running
when the budget runs out finishes, no further one starts."""

# size class -> (M, K, N) of the timed product; classes by M * K * N
CLASS_SHAPES: dict[str, tuple[int, int, int]] = {
    "small": (64, 64, 64),
    "medium": (192, 192, 192),
    "large": (384, 384, 384),
}
_SMALL_MAX = 128 ** 3
_MEDIUM_MAX = 512 ** 3

# candidates, the static default first (it is timed first, so a short budget keeps it)
V4_CANDIDATES = ("u16x8", "u16x16", "u16x4", "v8x4", "tiled")
SCALAR_CANDIDATES = ("tiled", "reg8x4", "reg4x4")

_lock = threading.RLock()
_memory: dict[str, dict[str, Any]] = {}  # adapter key -> {class key: entry}
_loaded: set[str] = set()  # cache files read this process
_forced: list[bool | None] = [None]
_warned: set[str] = set()
_stats = {"tunings": 0, "timed_calls": 0, "cache_hits": 0, "disk_hits": 0, "disk_writes": 0,
          "failures": 0}


def enabled() -> bool:
    """Whether unpinned matmuls are autotuned (``set_autotune`` else ``$PYACCEL_AUTOTUNE``)."""
    if _forced[0] is not None:
        return _forced[0]
    return env_flag(AUTOTUNE_ENV)


def set_autotune(on: bool | None) -> None:
    """Turn matmul autotuning on or off for this process; ``None`` goes back to
    ``$PYACCEL_AUTOTUNE`` (default on)."""
    _forced[0] = check_flag("set_matmul_autotune", on, allow_none=True)


def default_cache_dir() -> Path:
    """The platform's user cache dir for pyaccel (not created here)."""
    home = Path.home()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
        return (Path(base) if base else home / "AppData" / "Local") / "pyaccel" / "Cache"
    if sys.platform == "darwin":
        return home / "Library" / "Caches" / "pyaccel"
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg else home / ".cache") / "pyaccel"


def cache_dir() -> Path | None:
    """Where the autotune cache lives: ``$PYACCEL_CACHE_DIR`` (``""``: nowhere), else
    :func:`default_cache_dir`; ``None`` in Pyodide (memory only)."""
    if sys.platform == "emscripten":
        return None
    env = os.environ.get(CACHE_DIR_ENV)
    if env is not None:
        return Path(env).expanduser() if env.strip() else None
    try:
        return default_cache_dir()
    except (RuntimeError, KeyError, OSError):  # no home directory
        return None


def cache_path() -> Path | None:
    """The autotune cache file (``None``: memory only)."""
    d = cache_dir()
    return None if d is None else d / CACHE_FILE


def adapter_key(device: Any) -> str:
    """The cache key of a device's adapter: name, driver, API, backend, ids, runtime and
    pyaccel versions (a different GPU, driver or release tunes again)."""
    # (the package is imported before any of its modules; no import statement: the layers
    # import downwards only, tests/unit/test_import_graph.py)
    version = getattr(sys.modules.get(__name__.split(".")[0]), "__version__", "unknown")
    d = device.descriptor
    parts = [d.name, d.driver, d.api, d.backend, f"{d.vendor_id:#x}:{d.device_id:#x}",
             str(getattr(device, "runtime_version", "")), f"pyaccel {version}"]
    return " | ".join(parts)


def size_class(M: int, K: int, N: int) -> str:
    """``small`` / ``medium`` / ``large`` by M * K * N."""
    work = M * K * N
    return "small" if work <= _SMALL_MAX else ("medium" if work <= _MEDIUM_MAX else "large")


def class_key(dtype_wgsl: str, v4: bool, M: int, K: int, N: int) -> str:
    return f"{dtype_wgsl}/{'v4' if v4 else 'scalar'}/{size_class(M, K, N)}"


def stats() -> dict[str, int]:
    """Counters of this process: tunings run, timed kernel calls, choices found in memory
    and in the disk cache, cache files written, failed tunings."""
    with _lock:
        return dict(_stats)


def clear(memory: bool = True) -> None:
    """Forget this process's choices and counters (the disk cache stays; tests)."""
    with _lock:
        if memory:
            _memory.clear()
            _loaded.clear()
        for k in _stats:
            _stats[k] = 0


def _warn_once(key: str, msg: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(msg, RuntimeWarning, stacklevel=4)


def _read_file(path: Path) -> dict[str, Any]:
    """The cache file's adapters table ({} when missing, unreadable or corrupt)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError:
        return {}
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format') if isinstance(data, dict) else None!r}, "
                             f"want {FORMAT}")
        adapters = data.get("adapters")
        if not isinstance(adapters, dict):
            raise ValueError("no 'adapters' table")
        return adapters
    except (ValueError, TypeError, AttributeError) as exc:
        _warn_once(f"corrupt:{path}", f"pyaccel: ignoring the matmul autotune cache {path}: it is not "
                   f"a valid cache file ({exc}); pyaccel tunes again and rewrites it (or delete it)")
        return {}


def _valid(entry: Any, names: tuple[str, ...] | None = None) -> bool:
    """A cache entry naming one of ``names`` (default: any candidate)."""
    names = names if names is not None else V4_CANDIDATES + SCALAR_CANDIDATES
    return isinstance(entry, dict) and isinstance(entry.get("variant"), str) and entry["variant"] in names


def _load(akey: str) -> dict[str, Any]:
    """This adapter's choices in memory, read from disk the first time."""
    table = _memory.setdefault(akey, {})
    if akey not in _loaded:
        _loaded.add(akey)
        path = cache_path()
        if path is not None:
            disk = _read_file(path).get(akey)
            if isinstance(disk, dict):
                for ck, entry in (disk.get("choices") or {}).items():
                    if _valid(entry) and ck not in table:
                        table[ck] = dict(entry, source="disk")
    return table


def _write(akey: str, ckey: str, entry: dict[str, Any]) -> None:
    """Merge one choice into the cache file (atomic replace); any OS error: memory only."""
    path = cache_path()
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        adapters = _read_file(path)
        slot = adapters.get(akey)
        if not isinstance(slot, dict) or not isinstance(slot.get("choices"), dict):
            slot = {"choices": {}}
        slot["choices"][ckey] = entry
        adapters[akey] = slot
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps({"format": FORMAT, "adapters": adapters}, indent=1,
                                  sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
        _stats["disk_writes"] += 1
    except OSError:
        try:
            tmp.unlink()  # type: ignore[possibly-undefined]
        except (OSError, NameError):
            pass


def budget_ms() -> float:
    raw = os.environ.get(BUDGET_ENV, "").strip()
    if not raw:
        return DEFAULT_BUDGET_MS
    try:
        return max(0.0, float(raw))
    except ValueError:
        raise ValueError(f"{BUDGET_ENV}={raw!r} is not a number of milliseconds; set it to e.g. "
                         f"{DEFAULT_BUDGET_MS:g} or unset it") from None


def choose(device: Any, dtype_wgsl: str, v4: bool, M: int, K: int, N: int,
           timer: Callable[[str, tuple[int, int, int]], float], first: str | None = None) -> str | None:
    """The tuned variant for this product's class on ``device`` (timing the candidates with
    ``timer(variant, (M, K, N)) -> seconds`` the first time), or ``None`` when autotuning
    is off. ``first`` (the static default) is timed first, so a short budget keeps it; a
    failed tuning returns it. The caller holds the device lock."""
    if not enabled():
        return None
    names = V4_CANDIDATES if v4 else SCALAR_CANDIDATES
    if first in names:
        names = (first,) + tuple(n for n in names if n != first)
    ckey = class_key(dtype_wgsl, v4, M, K, N)
    with _lock:
        akey = adapter_key(device)
        table = _load(akey)
        entry = table.get(ckey)
        if _valid(entry, names):
            _stats["cache_hits" if entry.get("source") != "disk" else "disk_hits"] += 1
            if entry.get("source") == "disk":
                entry["source"] = "disk-used"
            return entry["variant"]
        entry = _tune(names, CLASS_SHAPES[size_class(M, K, N)], timer)
        table[ckey] = entry
        if entry.get("ok"):
            _write(akey, ckey, {k: v for k, v in entry.items() if k != "source"})
        return entry["variant"]


MARGIN = 0.9
"""Another candidate replaces the first (the static default) only when it takes less than
this fraction of its time (one timed call each: load from other processes moves them)."""
WARMUP_SHAPE = (16, 16, 16)
"""The product a candidate's first call runs: it compiles the kernel (the pipeline does not
depend on the shape) at almost no run time."""


def _tune(names: tuple[str, ...], shape: tuple[int, int, int],
          timer: Callable[[str, tuple[int, int, int]], float]) -> dict[str, Any]:
    """Time ``names`` in order on ``shape``: the first one always (its compile, which the
    caller's product needs anyway, is not counted against the budget), the next ones while
    the budget lasts."""
    _stats["tunings"] += 1
    budget = budget_ms() / 1e3
    t_begin = time.perf_counter()
    t_start = None
    best: dict[str, float] = {}
    try:
        for name in names:
            if t_start is not None and time.perf_counter() - t_start > budget:
                break
            timer(name, WARMUP_SHAPE)  # compiles the kernel
            _stats["timed_calls"] += 1
            if t_start is None:
                t_start = time.perf_counter()
            t = timer(name, shape)
            _stats["timed_calls"] += 1
            if t < 0.02 and time.perf_counter() - t_start < budget:  # fast: a second sample
                t = min(t, timer(name, shape))
                _stats["timed_calls"] += 1
            best[name] = t
    except Exception as exc:  # noqa: BLE001 - any failure: the static default, remembered
        _stats["failures"] += 1
        return {"variant": names[0], "ok": False, "error": f"{type(exc).__name__}: {exc}",
                "source": "failed"}
    pick = min(best, key=best.__getitem__)
    if best[pick] > MARGIN * best[names[0]]:  # within noise of the static default: keep it
        pick = names[0]
    return {"variant": pick, "ok": True, "shape": list(shape),
            "ms": {k: round(v * 1e3, 3) for k, v in best.items()},
            "tuning_ms": round((time.perf_counter() - t_begin) * 1e3, 1),
            "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "source": "tuned"}


def choices(device: Any) -> dict[str, dict[str, Any]]:
    """This process's known choices for ``device``'s adapter (read from disk if needed)."""
    with _lock:
        return {k: dict(v) for k, v in _load(adapter_key(device)).items()}


__all__ = ["AUTOTUNE_ENV", "BUDGET_ENV", "CACHE_DIR_ENV", "CACHE_FILE", "CLASS_SHAPES",
           "DEFAULT_BUDGET_MS", "adapter_key", "budget_ms", "cache_dir", "cache_path", "choices",
           "choose", "clear", "default_cache_dir", "enabled", "set_autotune", "size_class", "stats"]
