"""Launching built-in WGSL kernels on a GPU device (internal helpers shared by all op families).

Conventions every built-in kernel follows:

* dtype specialisation by a WGSL prefix, never string surgery inside the body:
  ``specialize(src, T="f32")`` prepends ``alias T = f32;`` (and ``enable f16;``
  when any alias is f16);
* buffers bind at 0..k-1 in the order given, the parameter block (a uniform) at k;
* 1-D work uses ``@workgroup_size(WG)`` with ``override WG: u32 = 256;`` and the
  linear index ``i = gid.x + gid.y * (nwg.x * WG)`` (``nwg`` =
  ``@builtin(num_workgroups)``), so grids beyond 65535 workgroups spread over y;
* every built-in pipeline is made through :func:`pipeline`, which compiles only what the
  entry point reaches (:func:`pruned`; ``PYACCEL_WGSL_PRUNE=0`` compiles whole sources).
"""

from __future__ import annotations

import math
import os
import struct
from typing import Any

from ..device import Device
from .wgsl_graph import prune

WG = 256
_SOURCES: dict[str, str] = {}
# (source, entry, overrides set) -> the pruned source; bounded (the key holds the source
# string, mostly the same object the families' own source caches hold)
_PRUNED: dict[tuple[str, str, tuple[str, ...]], str] = {}
_PRUNED_LIMIT = 1024
PRUNE_ENV = "PYACCEL_WGSL_PRUNE"
PRUNE = os.environ.get(PRUNE_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def device_lock(device: Device) -> Any:
    """The device's re-entrant lock: held across one op's whole recording sequence (parameter
    block, output allocation, dispatches) so threads sharing a device never interleave them.
    (``Device._lock`` is ``device.impl.lock``: the one place to change if that moves.)"""
    return device._lock


def lock_held(lock: Any) -> bool:
    """True when this thread already holds the device ``lock`` (an op in progress took it at
    its entry): nested helpers then record without taking it again, so one public op takes
    the lock once (a re-entrant acquire costs ~10x this check)."""
    return lock._is_owned()


def binding_size(nbytes: int) -> int:
    """Size to bind a storage buffer of ``nbytes`` with: a multiple of 4, at least 4 (WebGPU)."""
    return max(4, (nbytes + 3) & ~3)


# families whose source starts with the shared prelude (prelude.wgsl: column indexing)
PRELUDE_FAMILIES = frozenset({"reduce", "reduce64", "argreduce", "scan"})


def _read(name: str) -> str:
    from importlib import resources  # (on first use: importing it costs ~8 ms, not needed for cpu)

    return resources.files(__package__).joinpath(f"{name}.wgsl").read_text()


def wgsl_source(name: str) -> str:
    """Text of ``pyaccel/ops/<name>.wgsl`` (package data, cached), after ``prelude.wgsl``
    for the families in :data:`PRELUDE_FAMILIES`."""
    src = _SOURCES.get(name)
    if src is None:
        src = _read(name)
        if name in PRELUDE_FAMILIES:
            src = _read("prelude") + "\n" + src
        _SOURCES[name] = src
    return src


def specialize(src: str, **aliases: str) -> str:
    """Prefix ``alias NAME = type;`` lines (and ``enable f16;`` if needed) to WGSL source."""
    head = []
    if any(t == "f16" or "f16" in t for t in aliases.values()):
        head.append("enable f16;")
    head += [f"alias {k} = {v};" for k, v in aliases.items()]
    return "\n".join(head) + "\n" + src


def grid_1d(device: Device, n: int, wg: int = WG) -> tuple[int, int, int]:
    """Workgroup counts covering ``n`` invocations, spread over y past the per-dimension limit."""
    groups = max(1, math.ceil(n / wg))
    lim = device.limits.max_workgroups_per_dimension
    if groups <= lim:
        return (groups, 1, 1)
    y = math.ceil(groups / lim)
    x = math.ceil(groups / y)
    if y > lim:
        raise ValueError(f"{n} elements need more than {lim}x{lim} workgroups; split the array")
    return (x, y, 1)


def pack(fmt: str, *values: Any) -> bytes:
    """Little-endian parameter block, padded to 16 bytes (uniform-friendly)."""
    data = struct.pack("<" + fmt, *values)
    return data + b"\0" * (-len(data) % 16)


def pruned(src: str, entry: str, constants: dict[str, float] | None = None) -> str:
    """``src`` reduced to what entry point ``entry`` reaches (and the overrides ``constants``
    sets), as :func:`pyaccel.ops.wgsl_graph.prune`; cached per (source, entry, overrides).
    Unchanged when :data:`PRUNE` is off (``PYACCEL_WGSL_PRUNE=0``)."""
    if not PRUNE:
        return src
    keep = tuple(sorted(constants)) if constants else ()
    key = (src, entry, keep)
    out = _PRUNED.get(key)
    if out is None:
        out = prune(src, (entry,), keep)
        if len(_PRUNED) >= _PRUNED_LIMIT:
            _PRUNED.clear()
        _PRUNED[key] = out
    return out


def pipeline(impl: Any, src: str, entry: str, constants: dict[str, float] | None = None,
             name: str = "") -> Any:
    """The compiled pipeline of a built-in kernel: ``impl.pipeline`` (cached by source, entry
    and constants) on the :func:`pruned` source. Every op family makes its pipelines here
    (user :class:`pyaccel.Kernel` sources are compiled as written)."""
    return impl.pipeline(pruned(src, entry, constants), entry, constants, name)
