"""Launchers for the performance-critical WGSL kernel families (GPU devices only).

The Array layer calls these with C-contiguous :class:`~pyaccel.device.Buffer` s whose
elements are in the device storage type of a pyaccel ``DType`` (``dt.wgsl``: f32, f16,
i32, u32; bool is u32 0/1); the reductions (``reduce_axis``, ``mean_axis``, ``var_axis``,
``sum64_axis``, ``softmax_rows``, ``logsumexp_rows``, ``cumsum_axis``) also take a
:class:`~pyaccel.ops.fusion_reduce.FusedInput` (a lazy elementwise tree) as x, which
:func:`_dispatch` computes in place of the family's ``// <input>`` block. Every function only *records* dispatches on the device's
open encoder (no sync) and returns a fresh buffer from ``device.malloc``; temporaries
are freed right after recording (the pool keeps them alive for queued work).

Families (one ``.wgsl`` each, specialised by ``alias`` prefixes and ``override``
constants; entry points bind explicit binding numbers, see :func:`_dispatch`):

* ``reduce.wgsl`` / ``argreduce.wgsl`` — :func:`reduce_axis`, :func:`mean_axis`,
  :func:`var_axis`: x viewed as (outer, n, inner) reduced over n. ``inner == 1``:
  one workgroup per (row, chunk), vec4 loads and a tree reduction in workgroup memory
  (``rows``); on software devices one thread per contiguous run instead (``seg``, no
  barriers). ``inner > 1`` or short rows: one thread per output column (``cols``; four
  columns and vec4 loads when ``inner % 4 == 0``: ``cols4``). Long axes are split in
  chunks and the partials (kept in the accumulator type) reduced again until one is left.
* ``reduce64.wgsl`` — :func:`sum64_axis`: integer sums accumulated in 64 bits (two u32
  words, add with carry) from 32-bit or 64-bit integer data, int64 / uint64 partials; the
  same plans and layouts as ``reduce.wgsl`` (``cols4`` runs as ``cols``).
* ``scan.wgsl`` — :func:`cumsum_axis`: per-tile workgroup scan (tile totals from a
  reduce pass, scanned recursively, added as offsets); per-column sequential scans for
  ``inner > 1`` and on software devices. ``op="prod"`` (``OP = 1``) scans products
  (``cumulative_prod``) with the same plans.
* ``search.wgsl`` — :func:`searchsorted`: one binary search (at most 33 steps) per value.
* ``matmul.wgsl``, ``matmul_v4.wgsl`` — :func:`matmul`, one of :data:`MATMUL_VARIANTS`
  (chosen per adapter, dtype and size class by timing them on first use, cached on disk:
  :mod:`pyaccel.ops.autotune`; static default u16x8: vec4 loads, 16 x 8 outputs per thread;
  tiled: 64x64 tiles in workgroup memory; pinned with :func:`set_matmul_variant` /
  ``$PYACCEL_MATMUL_VARIANT``);
  :func:`matmul_naive`. A K longer than one
  invocation may loop over (:data:`MAX_LOOP`) is split into chunks whose partial products
  (accumulator type) a reduce pass sums.
* ``softmax.wgsl`` — :func:`softmax_rows`, :func:`logsumexp_rows`: one workgroup per
  row, online (max, sum) pairs merged by a tree reduction; rows too long for one
  invocation are split into chunks whose (max, sum) pairs are merged in a second pass.
* ``sort.wgsl`` — :func:`sort_axis`: bitonic network over (key, index) pairs (loops per
  invocation are bounded by the block size, whatever the length).

Loop bound: every planner keeps the loop iterations of one invocation within
:data:`MAX_LOOP` (Mesa's software GPUs silently cut an invocation at 65,535).

Semantics the caller relies on:

* integer sums, products, cumulative sums and matmuls wrap modulo 2**32 in the storage
  type (i32 / u32); narrow integer dtypes (int8 ...) stored widened are *not* wrapped
  here — wrap the result to the narrow type as for any other op; :func:`sum64_axis` sums
  integers in 64 bits instead (vec2<u32> result, wrapping modulo 2**64);
* f16 data is accumulated in f32 (sums, products, scans, matmul, softmax, variance);
* min / max / argmin / argmax: NaN wins and the first NaN's index is returned (NumPy);
  ties in argmin / argmax return the first occurrence;
* ``n == 0``: sum / prod / any / all / cumsum give the identity (0, 1, False, True) or an
  empty result; min / max / argmin / argmax raise ``ValueError`` (no identity in the
  Array API); :func:`var_axis` and :func:`mean_axis` give NaN;
* sizes are limited by one storage binding (``device.limits.max_storage_binding_size``)
  per buffer; every index fits in u32.
"""

from __future__ import annotations

import functools
import math
import os
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ..capabilities import Capability
from ..device import Buffer, Device
from ..dtypes import MULTI_LANE, DType, bool_, float32, int32
from ..errors import OutOfDeviceMemoryError, UnsupportedDTypeError
from .fusion_reduce import FusedInput
from .launch import grid_1d, lock_held, pack, pipeline, specialize, wgsl_source

WG = 256
MAX_LOOP = 16384
"""Most loop iterations one kernel invocation may run, summed over all its loops.

Mesa's software GPUs (lavapipe = vulkan:0, llvmpipe = gl:0) end a shader invocation after
65,535 loop iterations, counted over every loop of the invocation (nested and one after
the other) and shared by the SIMD batch of 8 invocations that run together, and the
invocation then writes garbage without any error (docs: /work/shared/PLATFORM.md, "Loop
cap on Mesa's software GPUs"). Real drivers have watchdogs as well (Windows TDR: about
2 s). Every planner below splits long axes so that an invocation stays within this bound
(a quarter of the cap, leaving room for tree reductions, tails and estimate slack);
normal sizes need no split and keep their single-pass kernels."""
_INF_BITS = 0x7F800000
_NINF_BITS = 0xFF800000
_SRC: dict[tuple, str] = {}

REDUCE_OPS = ("sum", "prod", "min", "max", "any", "all", "argmin", "argmax")
_OPCODE = {"sum": 0, "prod": 1, "min": 2, "max": 3, "any": 4, "all": 5, "sumsq_dev": 6}

# reduction plan: rows mode for contiguous rows longer than this
_ROW_MIN = 64
_ROW_SINGLE = 8192  # a row this short is reduced by one workgroup
_ROW_CHUNK_MIN = 2048  # smallest chunk when a row is split over workgroups
_TARGET_GROUPS = 2048  # rows mode: split long rows until about this many workgroups
_TARGET_THREADS = 65536  # cols mode: split n until about this many threads
_SEG_THREADS = 4096  # seg mode (software devices): split rows until about this many threads
_COL_CHUNK_MIN = 64
# Largest chunk of n one invocation may cover per layout, from its loop structure (see
# MAX_LOOP): rows reads 2 vec4 per thread per iteration (>= 64 threads), seg 4 vec4 per
# iteration, cols / cols4 / the scan's cols one step of n per iteration; argreduce rows
# one element per thread (>= 64 threads) per iteration. The slack covers tree
# reductions (<= 9 iterations) and scalar head / tail loops (<= 3 iterations each).
# reduce64.wgsl on 64-bit data reads half as many elements per vec4: "rows64" / "seg64".
_MAX_CHUNK = {"rows": (MAX_LOOP - 64) * 8 * 64, "seg": (MAX_LOOP - 64) * 16,
              "cols": MAX_LOOP - 64, "cols4": MAX_LOOP - 64, "argrows": (MAX_LOOP - 64) * 64,
              "rows64": (MAX_LOOP - 64) * 4 * 64, "seg64": (MAX_LOOP - 64) * 8}
_SCAN_ITEMS = 4
_SCAN_TILE = WG * _SCAN_ITEMS


# ---------------------------------------------------------------------------
# plumbing
# ---------------------------------------------------------------------------
def _u16_entry(C: int) -> str:
    """WGSL of the u16x{4C} matmul entry point (matmul_v4.wgsl's comment says what it does):
    16 workgroup-uniform rows x C vec4 columns per thread, every accumulator a named value."""
    R = 16
    L = ["@compute @workgroup_size(32)",
         f"fn u16x{4 * C}(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,",
         "        @builtin(local_invocation_index) lid: u32) {",
         "    let g = wid.x + wid.y * nwg.x;", "    if g >= P.total {", "        return;", "    }",
         "    let tn = g % P.tiles_n;", "    let r = g / P.tiles_n;", "    let tm = r % P.tiles_m;",
         "    let r2 = r / P.tiles_m;", "    let bz = r2 % P.batch;", "    let ci = r2 / P.batch;",
         "    let kbeg = (P.c0 + ci) * P.kc;", "    let k4beg = kbeg / 4u;",
         "    let k4end = min(P.K, kbeg + P.kc) / 4u;", "    let n4 = P.N / 4u;", "    let k4n = P.K / 4u;",
         f"    let my4 = tn * {32 * C}u + lid;", "    let bb = bz * P.sb / 4u;"]
    L += [f"    let bc{j} = bb + min(my4 + {32 * j}u, n4 - 1u);" for j in range(C)]
    L += ["    let m0 = tm * 16u;", "    let last = P.M - 1u;", "    let ar = bz * P.sa / 4u;"]
    L += [f"    let ra{i} = ar + min(m0 + {i}u, last) * k4n;" for i in range(R)]
    L += ["    " + " ".join(f"var c{i}_{j} = vec4<T>();" for j in range(C)) for i in range(R)]
    L += ["    for (var k4 = k4beg; k4 < k4end; k4 += 1u) {", "        let kb = 4u * k4 * n4;"]
    for j in range(C):
        L += [f"        let b{q}_{j} = b[bc{j} + kb{'' if q == 0 else f' + {q}u * n4'}];" for q in range(4)]
    for i in range(R):
        L.append(f"        let a{i} = a[ra{i} + k4];")
        L += [f"        c{i}_{j} += a{i}.x * b0_{j} + a{i}.y * b1_{j} + a{i}.z * b2_{j} + a{i}.w * b3_{j};"
              for j in range(C)]
    L += ["    }", "    let ob = ((P.s0 + ci) * P.batch + bz) * P.M * n4;"]
    for j in range(C):
        L += [f"    let o{j} = my4 + {32 * j}u;", f"    if o{j} < n4 {{"]
        L += [f"        if m0 + {i}u < P.M {{ sto4(ob + (m0 + {i}u) * n4 + o{j}, c{i}_{j}); }}"
              for i in range(R)]
        L.append("    }")
    L.append("}")
    return "\n".join(L) + "\n"


# entry points generated here and appended to a family's file text
_GENERATED = {"matmul_v4": lambda: "\n" + "".join(_u16_entry(c) for c in (2, 4))}


def _source(family: str, **aliases: str) -> str:
    key = (family, tuple(sorted(aliases.items())))
    src = _SRC.get(key)
    if src is None:
        gen = _GENERATED.get(family)
        src = specialize(wgsl_source(family) + (gen() if gen else ""), **aliases)
        _SRC[key] = src
    return src


def _dispatch(device: Device, family: str, aliases: dict[str, str], entry: str,
              bindings: Sequence[tuple[int, Buffer | FusedInput]], params: bytes, params_binding: int,
              workgroups: tuple[int, int, int], constants: dict[str, float] | None = None) -> None:
    """Record one dispatch binding buffers at explicit binding numbers (entry points of a
    family use different subsets of its bindings, so they are not always 0..k-1)."""
    # one lock across pipeline lookup, uniform block and dispatch (thread model: another
    # thread must not record between them); the calling op holds it, as a rule
    lock = device._lock
    if not lock_held(lock):
        with lock:
            return _dispatch(device, family, aliases, entry, bindings, params, params_binding,
                             workgroups, constants)
    impl = device.impl
    src = _source(family, **aliases)
    entries: list[tuple] = []
    # a lazy input computed in place (FusedInput, ops/fusion_reduce.py), an elementwise
    # epilogue computed at the store (FusedOutput, ops/fusion_matmul.py): each swaps its
    # marked block of the source and binds its own buffers
    fused = {id(buf): buf for _, buf in bindings
             if not isinstance(buf, Buffer) and getattr(buf, "swaps_block", False)}
    for f in fused.values():  # (one object may stand at several bindings: bound once)
        src = f.bind(device, family, aliases, src, entries)
    if fused:
        bindings = [(b, buf) for b, buf in bindings if id(buf) not in fused]
    pipe = pipeline(impl, src, entry, constants, f"{family}.{entry}" + ("+fused" if fused else ""))
    for b, buf in bindings:
        h = buf.handle
        # 16-byte multiple (vec4 views of a buffer), within the pooled allocation
        entries.append((b, h, 0, min(max(16, (buf.nbytes + 15) & ~15), h.size)))
    entries.append((params_binding, impl.uniform(params), 0, len(params)))
    impl.dispatch(pipe, entries, workgroups)


_F = TypeVar("_F", bound=Callable[..., Any])


def _locked(fn: _F) -> _F:
    """Hold the device lock across every pass an op records (thread model: another thread
    must not record between a multi-pass op's dispatches or reuse its temporaries)."""

    @functools.wraps(fn)
    def wrapper(device: Device, *args: Any, **kwargs: Any) -> Any:
        lock = device._lock
        if lock_held(lock):  # (the calling provider op holds it, as a rule)
            return fn(device, *args, **kwargs)
        with lock:
            return fn(device, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _binding_limit(device: Device) -> int:
    """Largest buffer one storage binding can hold on ``device`` (bytes)."""
    return min(device.limits.max_storage_binding_size, device.limits.max_buffer_size)


def _groups(device: Device, count: int) -> tuple[int, int, int]:
    """Workgroup grid for ``count`` workgroups (spread over y past 65535)."""
    return grid_1d(device, count, 1)


def _threads(device: Device, count: int, wg: int = WG) -> tuple[int, int, int]:
    """Workgroup grid for ``count`` threads in groups of ``wg``."""
    return grid_1d(device, count, wg)


def _check_gpu(device: Device, what: str) -> None:
    if Capability.KERNELS_RUN_REFERENCE in device.capabilities:  # no WGSL runs there
        raise ValueError(f"{what}: {device.uri} runs NumPy, not WGSL; these kernels need a GPU "
                         "device (use NumPy directly on cpu)")


def _wgsl(device: Device, dt: DType, what: str) -> str:
    t = dt.wgsl
    if dt in MULTI_LANE:
        raise UnsupportedDTypeError(
            f"{what}: dtype {dt.name} is stored as several 32-bit lanes ({t}); these kernels take "
            "32-bit (or f16) data: the array namespace runs multi-lane dtypes through elementwise "
            "passes (WgslOps) instead")
    if t is None:
        raise UnsupportedDTypeError(
            f"{what}: dtype {dt.name} has no WebGPU storage type; use float32/int32/uint32 "
            "or the cpu device")
    if t == "f16" and Capability.F16 not in device.capabilities:
        raise UnsupportedDTypeError(
            f"{what}: float16 needs the shader-f16 feature, which {device.uri} lacks; use float32")
    return t


def _size(t: str) -> int:
    return 2 if t == "f16" else 4


def _dims(what: str, **dims: int) -> None:
    for k, v in dims.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"{what}: {k} must be an int >= 0, got {v!r}")


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _ident_bits(t: str, want_max: bool) -> int:
    """Bits of the identity of min (want_max=False) or max in WGSL type ``t``."""
    if t == "f32":
        return _NINF_BITS if want_max else _INF_BITS
    if t == "i32":
        return 0x80000000 if want_max else 0x7FFFFFFF
    return 0 if want_max else 0xFFFFFFFF


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------
LAYOUT = "auto"
"""Kernel layout policy: ``"auto"`` (software devices get the barrier-free layouts),
``"gpu"`` or ``"software"`` to force one everywhere (tests use this to run both kinds of
kernel on whatever device is present; also a tuning knob)."""


def _software(device: Device) -> bool:
    if LAYOUT == "auto":
        return Capability.SOFTWARE in device.capabilities
    if LAYOUT not in ("gpu", "software"):
        raise ValueError(f"gpu_kernels.LAYOUT must be 'auto', 'gpu' or 'software', got {LAYOUT!r}")
    return LAYOUT == "software"


def _rows_wg(n: int) -> int:
    """Workgroup size of the one-workgroup-per-row kernels: 256 threads for long rows,
    64 for short ones (fewer idle threads, a shallower tree)."""
    return WG if n > 2048 else 64


def _bounded(mode: str, n: int, nchunks: int, chunk: int, kind: str | None = None
             ) -> tuple[str, int, int]:
    """(mode, nchunks, chunk) with chunk cut to the loop bound of ``kind`` (default: mode)."""
    cap = _MAX_CHUNK[kind or mode]
    if chunk > cap:
        chunk = _cdiv(n, _cdiv(n, cap))
        nchunks = _cdiv(n, chunk)
    return mode, nchunks, chunk


def _plan(device: Device, outer: int, n: int, inner: int) -> tuple[str, int, int]:
    """(mode, nchunks, chunk) of one reduction pass over (outer, n, inner), within MAX_LOOP."""
    mode, nchunks, chunk = _plan_free(device, outer, n, inner)
    return _bounded(mode, n, nchunks, chunk)


def _plan_free(device: Device, outer: int, n: int, inner: int) -> tuple[str, int, int]:
    """(mode, nchunks, chunk) of one reduction pass, before the loop bound."""
    if inner == 1 and n > _ROW_MIN:
        if _software(device):
            # Software rasterisers (lavapipe, llvmpipe, SwiftShader) run a workgroup on one
            # CPU thread with 8-wide SIMD, where barriers are costly: one thread per
            # contiguous run of >= 1024 elements, no barriers.
            nchunks = max(1, min(_cdiv(_SEG_THREADS, outer), _cdiv(n, 1024)))
            chunk = _cdiv(n, nchunks)
            return "seg", _cdiv(n, chunk), chunk
        if n <= _ROW_SINGLE:
            nchunks = 1
        else:
            nchunks = min(_cdiv(n, _ROW_CHUNK_MIN), max(1, _cdiv(_TARGET_GROUPS, outer)))
        chunk = _cdiv(n, nchunks)
        return "rows", _cdiv(n, chunk), chunk
    if n == 0:
        return "cols", 1, 0
    lanes = outer * (inner // 4 if inner % 4 == 0 else inner)
    nchunks = min(_cdiv(n, _COL_CHUNK_MIN), max(1, _cdiv(_TARGET_THREADS, max(1, lanes))))
    chunk = _cdiv(n, nchunks)
    return ("cols4" if inner % 4 == 0 else "cols"), _cdiv(n, chunk), chunk


def _reduce_pass(device: Device, x: Buffer | FusedInput, T: str, A: str, R: str, outer: int, n: int,
                 inner: int, mode: str, nchunks: int, chunk: int, code: int,
                 scale: float = 1.0, aux: Buffer | None = None, id_min: int = 0,
                 id_max: int = 0) -> Buffer:
    """One pass: (outer, n, inner) -> (outer, nchunks, inner) in type R."""
    count = outer * nchunks * inner
    out = device.malloc(count * _size(R))
    if count == 0:
        return out
    consts = {"OP": code, "A_FLOAT": 1.0 if A == "f32" else 0.0}
    aux = aux if aux is not None else (x.stand_in if isinstance(x, FusedInput) else x)
    if mode == "rows":
        total = outer * nchunks
        consts["WG"] = _rows_wg(n)
        grid = _groups(device, total)
        bindings = [(0, x), (1, aux), (2, out), (4, x)]
    elif mode == "seg":
        total = outer * nchunks
        grid = _threads(device, total)
        bindings = [(0, x), (1, aux), (2, out), (4, x)]
    elif mode == "cols4":
        total = count // 4
        grid = _threads(device, total)
        bindings = [(1, aux), (2, out), (4, x)]
    else:
        total = count
        grid = _threads(device, total)
        bindings = [(0, x), (1, aux), (2, out)]
    params = pack("6If5I", outer, n, inner, chunk, nchunks, total, scale, id_min, id_max, 0, 0, 0)
    _dispatch(device, "reduce", {"T": T, "A": A, "R": R}, mode, bindings, params, 3, grid, consts)
    return out


def _reduce(device: Device, x: Buffer | FusedInput, T: str, A: str, R: str, outer: int, n: int, inner: int,
            code: int, scale: float = 1.0, aux: Buffer | None = None) -> Buffer:
    """Multi-pass reduction of (outer, n, inner) over n -> (outer, inner) in type R."""
    id_min = _ident_bits(A, False) if code != 5 else 1
    id_max = _ident_bits(A, True)
    cur, cur_t, owned = x, T, False
    while True:
        mode, nchunks, chunk = _plan(device, outer, n, inner)
        final = nchunks == 1
        out = _reduce_pass(device, cur, cur_t, A, R if final else A, outer, n, inner, mode,
                           nchunks, chunk, code, scale if final else 1.0, aux, id_min, id_max)
        if owned:
            cur.free()
        if final:
            return out
        if code == 6:
            code, aux = 0, None  # later passes add up the partial sums of squares
        cur, cur_t, owned, n = out, A, True, nchunks


def _plan64(device: Device, outer: int, n: int, inner: int, wide: bool) -> tuple[str, int, int]:
    """(mode, nchunks, chunk) of one reduce64.wgsl pass (``wide``: 64-bit input), within MAX_LOOP."""
    mode, nchunks, chunk = _plan_free(device, outer, n, inner)
    if mode == "cols4":
        mode = "cols"
    kind = mode + "64" if wide and mode in ("rows", "seg") else mode
    return _bounded(mode, n, nchunks, chunk, kind)


@_locked
def sum64_axis(device: Device, x: Buffer | FusedInput, dt: DType, outer: int, n: int, inner: int) -> Buffer:
    """Sum over n of integer (or bool) x viewed as (outer, n, inner), accumulated in 64 bits:
    (outer, inner) elements as vec2<u32> (int64 / uint64 storage; the bits are the same for
    both), wrapping modulo 2**64 like NumPy. ``dt``: bool, int8..int64 or uint8..uint64
    (32-bit storage is sign-extended for signed dtypes). ``n == 0`` gives zeros."""
    _check_gpu(device, "sum64_axis")
    _dims("sum64_axis", outer=outer, n=n, inner=inner)
    if dt.kind not in "biu":
        raise UnsupportedDTypeError(f"sum64_axis: needs integer or bool data, got {dt.name}")
    wide = dt in MULTI_LANE
    signed = dt.kind == "i" and not wide
    cur, owned = x, False
    while True:
        mode, nchunks, chunk = _plan64(device, outer, n, inner, wide)
        count = outer * nchunks * inner
        out = device.malloc(count * 8)
        if count:
            consts: dict[str, float] = {"WIDE": float(wide), "SIGNED": float(signed)}
            if mode == "rows":
                total = outer * nchunks
                consts["WG"] = _rows_wg(n)
                grid = _groups(device, total)
                bindings = [(0, cur), (1, out), (3, cur)]
            else:
                total = count if mode == "cols" else outer * nchunks
                grid = _threads(device, total)
                bindings = [(0, cur), (1, out)] + ([(3, cur)] if mode == "seg" else [])
            params = pack("8I", outer, n, inner, chunk, nchunks, total, 0, 0)
            _dispatch(device, "reduce64", {}, mode, bindings, params, 2, grid, consts)
        if owned:
            cur.free()
        if nchunks == 1:
            return out
        cur, owned, wide, signed, n = out, True, True, False, nchunks


def _argreduce(device: Device, x: Buffer | FusedInput, T: str, outer: int, n: int, inner: int,
               is_max: bool) -> Buffer:
    A = "f32" if T == "f16" else T
    consts: dict[str, float] = {"IS_MAX": float(is_max), "A_FLOAT": float(A == "f32")}
    id_bits = _ident_bits(A, is_max)
    cur, cur_idx, cur_t = x, (x.stand_in if isinstance(x, FusedInput) else x), T
    has_idx = False
    while True:
        mode, nchunks, chunk = _plan_free(device, outer, n, inner)
        mode = "rows" if mode == "rows" else "cols"
        mode, nchunks, chunk = _bounded(mode, n, nchunks, chunk,
                                        "argrows" if mode == "rows" else "cols")
        count = outer * nchunks * inner
        vals = device.malloc(count * _size(A))
        idx = device.malloc(count * 4)
        if count:
            total = outer * nchunks if mode == "rows" else count
            params = pack("8I", outer, n, inner, chunk, nchunks, total, id_bits, 0)
            grid = _groups(device, total) if mode == "rows" else _threads(device, total)
            wg = {"WG": _rows_wg(n)} if mode == "rows" else {}
            _dispatch(device, "argreduce", {"T": cur_t, "A": A}, mode,
                      [(0, cur), (1, cur_idx), (2, vals), (3, idx)], params, 4, grid,
                      {**consts, **wg, "HAS_IDX": float(has_idx)})
        if has_idx:
            cur.free()
            cur_idx.free()
        if nchunks == 1:
            vals.free()
            return idx
        cur, cur_idx, cur_t, has_idx, n = vals, idx, A, True, nchunks


@_locked
def reduce_axis(device: Device, x: Buffer | FusedInput, dt: DType, outer: int, n: int, inner: int, op: str,
                out_dt: DType | None = None) -> Buffer:
    """Reduce x viewed as (outer, n, inner) over n; returns (outer, inner) elements.

    ``op``: sum, prod, min, max, any, all (u32 0/1 result, bool), argmin, argmax (int32
    index along n). ``out_dt`` is the result dtype of sum/prod/min/max (default: ``dt``;
    int32 for a bool sum/prod); float data accumulates in f32, integers wrap.
    """
    _check_gpu(device, "reduce_axis")
    _dims("reduce_axis", outer=outer, n=n, inner=inner)
    if op not in REDUCE_OPS:
        raise ValueError(f"reduce_axis: unknown op {op!r}; use one of {', '.join(REDUCE_OPS)}")
    T = _wgsl(device, dt, f"reduce_axis({op})")
    if n == 0 and op in ("min", "max", "argmin", "argmax"):
        raise ValueError(f"reduce_axis: {op} over an empty axis (n=0) has no identity; "
                         "check the size before reducing")
    if op in ("argmin", "argmax"):
        if outer * inner == 0:
            return device.malloc(0)
        return _argreduce(device, x, T, outer, n, inner, op == "argmax")
    if op in ("any", "all"):
        out_dt = bool_ if out_dt is None else out_dt
        A = "u32"
    elif out_dt is None:
        out_dt = int32 if (dt is bool_ and op in ("sum", "prod")) else dt
    R = _wgsl(device, out_dt, f"reduce_axis({op})")
    if op in ("sum", "prod"):
        A = "f32" if "f" in (dt.kind, out_dt.kind) else R
    elif op in ("min", "max"):
        A = "f32" if dt.kind == "f" else T
    return _reduce(device, x, T, A, R, outer, n, inner, _OPCODE[op])


@_locked
def mean_axis(device: Device, x: Buffer | FusedInput, dt: DType, outer: int, n: int, inner: int,
              out_dt: DType | None = None) -> Buffer:
    """Arithmetic mean over n of x viewed as (outer, n, inner) (f32 accumulation).

    The result dtype is ``out_dt`` (default: ``dt`` if it is a float type, else float32).
    """
    _check_gpu(device, "mean_axis")
    _dims("mean_axis", outer=outer, n=n, inner=inner)
    T = _wgsl(device, dt, "mean_axis")
    out_dt = out_dt or (dt if dt.kind == "f" else float32)
    R = _wgsl(device, out_dt, "mean_axis")
    scale = 1.0 / n if n else math.nan
    return _reduce(device, x, T, "f32", R, outer, n, inner, 0, scale)


@_locked
def var_axis(device: Device, x: Buffer | FusedInput, dt: DType, outer: int, n: int, inner: int,
             correction: float = 0.0, out_dt: DType | None = None) -> Buffer:
    """Variance over n of x viewed as (outer, n, inner): two passes (the mean, then the sum
    of squared deviations from it, divided by ``n - correction``), in f32.

    The result dtype is ``out_dt`` (default: ``dt`` if it is a float type, else float32).
    ``n - correction <= 0`` divides by zero like NumPy (inf, or NaN for 0/0); ``n == 0``
    gives NaN.
    """
    _check_gpu(device, "var_axis")
    _dims("var_axis", outer=outer, n=n, inner=inner)
    T = _wgsl(device, dt, "var_axis")
    out_dt = out_dt or (dt if dt.kind == "f" else float32)
    R = _wgsl(device, out_dt, "var_axis")
    mean = _reduce(device, x, T, "f32", "f32", outer, n, inner, 0, 1.0 / n if n else math.nan)
    d = n - float(correction)
    scale = 1.0 / d if d > 0 else math.inf
    out = _reduce(device, x, T, "f32", R, outer, n, inner, _OPCODE["sumsq_dev"], scale, aux=mean)
    mean.free()
    return out


# ---------------------------------------------------------------------------
# cumulative sum
# ---------------------------------------------------------------------------
def _scan_into(device: Device, x: Buffer | FusedInput, T: str, A: str, R: str, outer: int, n: int,
               inner: int, inc: int, out: Buffer, op: int = 0) -> None:
    """Record the inclusive scan of (outer, n, inner) along n into out (outer, n+inc, inner);
    ``op`` 0 sums, 1 products (scan.wgsl's OP; the tile totals are reduce.wgsl's sum / prod)."""
    m = n + inc
    if inner == 1 and n > _ROW_MIN and not _software(device):
        mode, chunk = "rows", _SCAN_TILE
        nchunks = _cdiv(n, chunk)
    elif n == 0:
        mode, nchunks, chunk = "cols", 1, 0
    else:
        mode = "cols"
        nchunks = min(_cdiv(n, _COL_CHUNK_MIN), max(1, _cdiv(_TARGET_THREADS, outer * inner)))
        chunk = _cdiv(n, nchunks)
        mode, nchunks, chunk = _bounded(mode, n, _cdiv(n, chunk), chunk)
    offs = None
    if nchunks > 1:
        rmode = "cols4" if mode == "cols" and inner % 4 == 0 else mode
        sums = _reduce_pass(device, x, T, A, A, outer, n, inner, rmode, nchunks, chunk, op)
        offs = device.malloc(outer * (nchunks + 1) * inner * _size(A))
        _scan_into(device, sums, A, A, A, outer, nchunks, inner, 1, offs, op)
        sums.free()
    total = outer * nchunks if mode == "rows" else outer * nchunks * inner
    params = pack("9I12x", outer, n, inner, chunk, nchunks, total, m, inc, int(offs is not None))
    grid = _groups(device, total) if mode == "rows" else _threads(device, total)
    _dispatch(device, "scan", {"T": T, "A": A, "R": R}, mode,
              [(0, x), (1, offs if offs is not None else (x.stand_in if isinstance(x, FusedInput) else x)),
               (2, out)], params, 3, grid,
              {"ITEMS": _SCAN_ITEMS, "OP": op})
    if offs is not None:
        offs.free()


@_locked
def cumsum_axis(device: Device, x: Buffer | FusedInput, dt: DType, outer: int, n: int, inner: int,
                include_initial: bool = False, out_dt: DType | None = None,
                op: str = "sum") -> Buffer:
    """Cumulative sum (``op="prod"``: product) along n of x viewed as (outer, n, inner)
    (Array API ``cumulative_sum`` / ``cumulative_prod``).

    Returns (outer, n + include_initial, inner) elements of ``out_dt`` (default ``dt``;
    int32 for bool); with ``include_initial`` the first is the identity (0 / 1). Floats
    accumulate in f32, integers wrap. ``n == 0`` is allowed.
    """
    if op not in ("sum", "prod"):
        raise ValueError(f"cumsum_axis: op must be 'sum' or 'prod', got {op!r}")
    _check_gpu(device, "cumsum_axis")
    _dims("cumsum_axis", outer=outer, n=n, inner=inner)
    T = _wgsl(device, dt, "cumsum_axis")
    out_dt = out_dt or (int32 if dt is bool_ else dt)
    R = _wgsl(device, out_dt, "cumsum_axis")
    A = "f32" if "f" in (dt.kind, out_dt.kind) else R
    inc = int(bool(include_initial))
    out = device.malloc(outer * (n + inc) * inner * _size(R))
    if outer * inner * (n + inc) == 0:
        return out
    _scan_into(device, x, T, A, R, outer, n, inner, inc, out, 1 if op == "prod" else 0)
    return out


# ---------------------------------------------------------------------------
# searchsorted
# ---------------------------------------------------------------------------
_F32_BEFORE = ("fn s_nan(p: f32) -> bool { return (bitcast<u32>(p) & 0x7fffffffu) > 0x7f800000u; }\n"
               "fn before(p: K, q: K) -> bool { return p < q || (s_nan(q) && !s_nan(p)); }\n")
_WIDE_BEFORE = {
    "float64": "fn before(p: K, q: K) -> bool {\n"
               "    return f64_less(p, q) || (f64_isnan(q) && !f64_isnan(p));\n}\n",
    "int64": "fn before(p: K, q: K) -> bool { return i64_less(p, q); }\n",
    "uint64": "fn before(p: K, q: K) -> bool { return u64_less(p, q); }\n",
}


def _search_source(dt: DType, S: str) -> str:
    key = ("search", dt.name, S)
    src = _SRC.get(key)
    if src is None:
        from .kernelgen import library_source  # (the multi-lane libraries' closure)

        if dt in MULTI_LANE:
            K, gen = S, "fn key(s: S) -> K { return s; }\n" + _WIDE_BEFORE[dt.name]
        else:
            K = "f32" if dt.kind == "f" else ("i32" if dt.kind == "i" else "u32")
            gen = "fn key(s: S) -> K { return K(s); }\n"
            gen += _F32_BEFORE if K == "f32" else "fn before(p: K, q: K) -> bool { return p < q; }\n"
        src = specialize(library_source(gen) + "\n" + gen + wgsl_source("search"), S=S, K=K)
        _SRC[key] = src
    return src


@_locked
def searchsorted(device: Device, a: Buffer, v: Buffer, dt: DType, n: int, m: int,
                 right: bool = False) -> Buffer:
    """Insertion indices (u32, ``m`` of them) of the values ``v`` into the sorted ``a`` of ``n``
    elements, both of dtype ``dt`` (real: bool, ints, floats incl. the multi-lane int64 /
    uint64 / float64 storage): NumPy's searchsorted with NaN sorted last; ``right``: side
    'right'. One thread per value, a binary search of at most 33 steps."""
    _check_gpu(device, "searchsorted")
    _dims("searchsorted", n=n, m=m)
    if dt.kind not in "biuf":
        raise UnsupportedDTypeError(f"searchsorted: needs real data, got {dt.name}")
    if n >= 2**32 - 1:
        raise ValueError(f"searchsorted: {n} sorted elements do not fit 32-bit indices")
    S = MULTI_LANE[dt].wgsl_storage if dt in MULTI_LANE else _wgsl(device, dt, "searchsorted")
    out = device.malloc(m * 4)
    if m == 0:
        return out
    impl = device.impl
    src = _search_source(dt, S)
    pipe = pipeline(impl, src, "main", None, "search.main")
    entries = []
    for b, buf in ((0, a), (1, v), (2, out)):
        h = buf.handle
        entries.append((b, h, 0, min(max(16, (buf.nbytes + 15) & ~15), h.size)))
    params = pack("4I", n, m, int(bool(right)), 0)
    entries.append((3, impl.uniform(params), 0, len(params)))
    impl.dispatch(pipe, entries, _threads(device, m))
    return out


# ---------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------
# Variants: name -> (entry point, output rows per workgroup, columns per workgroup, K per
# invocation). K per invocation (loop cap): tiled runs 3 loops of TK = 16 plus one step of
# the K loop per slice (52 iterations) and up to ~100 in the stores; naive and the register
# kernels one iteration per k (plus a few in the stores).
_MM_TK = 16
MATMUL_VARIANTS: dict[str, tuple[str, str, int, int, int, int]] = {
    # name: (WGSL family, entry, tile rows, tile columns, max K per invocation, K multiple)
    "u16x8": ("matmul_v4", "u16x8", 16, 256, (MAX_LOOP - 64) * 4, 4),  # static default
    "u16x16": ("matmul_v4", "u16x16", 16, 512, (MAX_LOOP - 64) * 4, 4),
    "u16x4": ("matmul_v4", "u16x4", 16, 128, (MAX_LOOP - 64) * 4 // 17, 4),
    "v8x4": ("matmul_v4", "v8x4", 64, 32, (MAX_LOOP - 64) * 4, 4),
    "v4x4": ("matmul_v4", "v4x4", 32, 32, (MAX_LOOP - 64) * 4, 4),
    "tiled": ("matmul", "tiled", 64, 64, (MAX_LOOP - 256) // (3 * _MM_TK + 4) * _MM_TK, _MM_TK),
    "reg8x4": ("matmul", "reg8x4", 64, 32, MAX_LOOP - 64, 1),
    "reg4x4": ("matmul", "reg4x4", 32, 32, MAX_LOOP - 64, 1),
    "naive": ("matmul", "naive", 1, 1, MAX_LOOP - 16, 1),
}
"""float32 / int32 / uint32 / f16 matmul kernels: of matmul_v4.wgsl (vec4 loads; K, N
multiples of 4, 32-bit types) u16x8 / u16x16 / u16x4 (16 workgroup-uniform rows x 8 / 16 / 4
columns per thread), v8x4 / v4x4; of matmul.wgsl tiled (workgroup memory, 64 x 64 tiles,
8 x 8 outputs per thread), reg4x4 / reg8x4 (registers only, 4 x 4 / 8 x 4 outputs per
thread), naive (one thread per output). docs/performance.md compares them."""
_MM_KC = {k: v[4] for k, v in MATMUL_VARIANTS.items()}  # (tests patch this to force splits)
_MM_SPLIT_MIN = 1024


def _matmul(device: Device, a: Buffer, b: Buffer, dt: DType, batch: int, M: int, K: int, N: int,
            sa: int, sb: int, variant: str, epilogue: Any = None) -> Buffer:
    if not lock_held(device._lock):  # (matmul holds it; the autotuner's timer may not)
        with device._lock:
            return _matmul(device, a, b, dt, batch, M, K, N, sa, sb, variant, epilogue)
    _check_gpu(device, "matmul")
    _dims("matmul", batch=batch, M=M, K=K, N=N, a_batch_stride=sa, b_batch_stride=sb)
    T = _wgsl(device, dt, "matmul")
    A = "f32" if T == "f16" else T
    family, entry, tm_rows, tn_cols, kc_max, kmul = MATMUL_VARIANTS[variant]
    count = batch * M * N
    if count == 0:
        return device.malloc(0)
    per_thread = entry == "naive"
    tiles_m, tiles_n = _cdiv(M, tm_rows), _cdiv(N, tn_cols)
    per_chunk = count if per_thread else batch * tiles_m * tiles_n
    kc_max = _MM_KC.get(variant, kc_max)
    nk = max(1, _cdiv(K, kc_max))
    if nk > 1:
        # split anyway: also spread a thin product's long K over more invocations (at least
        # _MM_SPLIT_MIN of k each), up to about _TARGET_THREADS threads (naive) or
        # _TARGET_GROUPS / 8 workgroups (tiled)
        want = _cdiv(_TARGET_THREADS, count) if per_thread else _cdiv(_TARGET_GROUPS // 8,
                                                                       per_chunk)
        nk = max(nk, min(_cdiv(K, _MM_SPLIT_MIN), want))
    kc = _cdiv(K, nk)
    kc = _cdiv(kc, kmul) * kmul
    nk = max(1, _cdiv(K, kc)) if kc else 1

    def record(out: Buffer, out_t: str, c0: int, nkc: int, s0: int) -> None:
        total = per_chunk * nkc
        grid = _threads(device, total) if per_thread else _groups(device, total)
        params = pack("13I12x", M, K, N, batch, sa, sb, tiles_m, tiles_n, total, max(kc, 1), c0,
                      s0, nkc)
        _dispatch(device, family, {"T": T, "A": A, "O": out_t}, entry, [(0, a), (1, b), (2, out)],
                  params, 3, grid)

    if nk == 1:  # the usual case: one pass straight into the result
        if epilogue is not None:  # (fusion_matmul: an elementwise tree computed at the store)
            record(epilogue, T, 0, 1, 0)
            return epilogue.buffer
        out = device.malloc(count * _size(T))
        record(out, T, 0, 1, 0)
        return out
    if epilogue is not None:
        raise AssertionError("matmul: an epilogue needs K in one chunk (fusion_matmul.defer checks it)")
    # long K: partial products of K chunks in slices (type A), summed by reduce passes;
    # past the binding limit in rounds whose first slice carries the previous rounds' sum
    slice_bytes = count * _size(A)
    limit = _binding_limit(device)
    per = limit // slice_bytes
    if per < 2:
        raise OutOfDeviceMemoryError(
            f"matmul: K={K} needs {nk} partial products of {slice_bytes} bytes each, and two do "
            f"not fit in one storage binding (max_storage_binding_size={limit}); split the "
            "product along M or N, or along K and add the parts")
    c, carry = 0, None
    while c < nk:
        s0 = 0 if carry is None else 1
        m = min(nk - c, per - s0)
        parts = device.malloc((s0 + m) * slice_bytes)
        if carry is not None:
            device.impl.copy(carry.handle, 0, parts.handle, 0, slice_bytes)
            carry.free()
        record(parts, A, c, m, s0)
        c += m
        carry = _reduce(device, parts, A, A, T if c >= nk else A, 1, s0 + m, count, 0)
        parts.free()
    return carry


@_locked
def matmul(device: Device, a: Buffer, b: Buffer, dt: DType, batch: int, M: int, K: int, N: int,
           a_batch_stride: int, b_batch_stride: int, variant: str | None = None,
           epilogue: Any = None) -> Buffer:
    """Batched ``a @ b``: a (batch, M, K), b (batch, K, N) row-major -> (batch, M, N).

    Matrix i of a starts at element ``i * a_batch_stride`` (0 broadcasts one matrix), of b
    at ``i * b_batch_stride``. ``variant`` (else the pinned one, see
    :func:`set_matmul_variant`) picks a kernel of :data:`MATMUL_VARIANTS`; unpinned, thin
    products (M or N below 16) run naive and the others the variant autotuned for this
    adapter, dtype and size class (:mod:`pyaccel.ops.autotune`; ``PYACCEL_AUTOTUNE=0``: the
    static default, u16x8 where K and N are multiples of 4 and the dtype is 32-bit, else
    tiled). f16 accumulates
    in f32; i32/u32 wrap; ``K == 0`` gives zeros. ``epilogue`` (a ``fusion_matmul.FusedOutput``,
    K within one chunk): the kernel stores that elementwise tree of the product instead, into
    the epilogue's output buffer (returned).
    """
    name = variant if variant is not None else _pinned_variant()
    v4_ok = (dt.wgsl in ("f32", "i32", "u32") and K % 4 == 0 and N % 4 == 0
             and a_batch_stride % 4 == 0 and b_batch_stride % 4 == 0)
    if name is None or not (MATMUL_VARIANTS[name][0] != "matmul_v4" or v4_ok):
        name = _choose(device, dt, M, K, N, v4_ok)
    return _matmul(device, a, b, dt, batch, M, K, N, a_batch_stride, b_batch_stride, name, epilogue)


def _static_choice(M: int, K: int, N: int, v4_ok: bool) -> str:
    """Without tuning: naive for thin products; for vec4-able ones u16x4 up to 128^3 (wider
    tiles leave too few workgroups), u16x8 up to 512^3, u16x16 past it (the fastest on
    lavapipe, docs/performance.md; its first compile is the longest); else tiled."""
    if min(M, N) < 16:
        return "naive"
    if not v4_ok:
        return "tiled"
    work = M * K * N
    return "u16x4" if work <= 128 ** 3 else ("u16x8" if work <= 512 ** 3 else "u16x16")


def _choose(device: Device, dt: DType, M: int, K: int, N: int, v4_ok: bool) -> str:
    """The unpinned choice: naive for thin products, else the autotuned variant of this
    adapter, dtype and size class (:mod:`pyaccel.ops.autotune`), else the static default."""
    static = _static_choice(M, K, N, v4_ok)
    if static == "naive" or K == 0 or device is None:
        return static
    from . import autotune

    if not autotune.enabled():
        return static
    held: dict[tuple[int, int, int], tuple[Buffer, Buffer]] = {}
    size = _size(_wgsl(device, dt, "matmul"))

    def timer(name: str, shape: tuple[int, int, int]) -> float:
        m, k, n = shape
        if shape not in held:
            bufs = (device.malloc(m * k * size), device.malloc(k * n * size))
            for buf in bufs:
                buf.write(bytes(buf.nbytes))
            held[shape] = bufs
        xa, xb = held[shape]
        device.synchronize()
        t = time.perf_counter()
        out = _matmul(device, xa, xb, dt, 1, m, k, n, 0, 0, name)
        device.synchronize()
        t = time.perf_counter() - t
        out.free()
        return t

    try:
        if lock_held(device._lock):  # (matmul holds it)
            tuned = autotune.choose(device, dt.wgsl, v4_ok, M, K, N, timer, first=static)
        else:
            with device._lock:
                tuned = autotune.choose(device, dt.wgsl, v4_ok, M, K, N, timer, first=static)
    finally:
        for bufs in held.values():
            for buf in bufs:
                buf.free()
    return tuned or static


MATMUL_VARIANT_ENV = "PYACCEL_MATMUL_VARIANT"
_PIN: list[str | None] = [None]


def _check_variant(name: str) -> str:
    if name not in MATMUL_VARIANTS:
        raise ValueError(f"unknown matmul variant {name!r}; the variants are "
                         f"{', '.join(MATMUL_VARIANTS)}")
    return name


def set_matmul_variant(name: str | None) -> None:
    """Pin the matmul kernel variant (a key of :data:`MATMUL_VARIANTS`) for every later
    matmul, or ``None`` to go back to the default choice (then ``$PYACCEL_MATMUL_VARIANT``
    if set). A vec4 variant (``v8x4``, ``v4x4``, ``u16x4``) falls back to the default for
    products it cannot take (K or N not a multiple of 4, f16)."""
    _PIN[0] = None if name is None else _check_variant(name)


def _pinned_variant() -> str | None:
    if _PIN[0] is not None:
        return _PIN[0]
    env = os.environ.get(MATMUL_VARIANT_ENV, "")
    return _check_variant(env) if env else None


def matmul_variant(device: Device, M: int, K: int, N: int, dt: DType | None = None) -> str:
    """Name of the variant :func:`matmul` runs for one (M, K) @ (K, N) product (tuning it
    first when autotuning is on and this class was not tuned yet)."""
    name = _pinned_variant()
    dt = dt if dt is not None else float32
    v4_ok = dt.wgsl in ("f32", "i32", "u32") and K % 4 == 0 and N % 4 == 0
    if name is not None and (MATMUL_VARIANTS[name][0] != "matmul_v4" or v4_ok):
        return name
    return _choose(device, dt, M, K, N, v4_ok)


@_locked
def matmul_naive(device: Device, a: Buffer, b: Buffer, dt: DType, batch: int, M: int, K: int,
                 N: int, a_batch_stride: int, b_batch_stride: int) -> Buffer:
    """Same contract as :func:`matmul`, one thread per output element (benchmark baseline)."""
    return _matmul(device, a, b, dt, batch, M, K, N, a_batch_stride, b_batch_stride, "naive")


@functools.cache
def _template_text(name: str) -> str:
    from importlib import resources

    return resources.files(__package__).joinpath(f"{name}.wgsl.tmpl").read_text()


def _template(name: str, **subs: str) -> str:
    """``pyaccel/ops/<name>.wgsl.tmpl`` (package data) with ``${key}`` filled in."""
    from string import Template

    return Template(_template_text(name)).substitute(subs)


WIDE_MM_CHUNK = 1024  # K steps per dispatch (<< MAX_LOOP; keeps each dispatch short)


def _bind(buf: Buffer) -> int:
    """Binding size of a whole buffer: a 16-byte multiple within its pooled allocation."""
    return min(max(16, (buf.nbytes + 15) & ~15), buf.handle.size)


@_locked
def matmul_wide(device: Device, a: Buffer, b: Buffer, dt: DType, batch: int, M: int, K: int, N: int,
                a_batch_stride: int, b_batch_stride: int) -> Buffer:
    """Same contract as :func:`matmul` for a multi-lane dtype (int64, uint64, float64, ...):
    one thread per output element summing ``<prefix>add(acc, <prefix>multiply(a, b))`` in
    k order, K split over dispatches of :data:`WIDE_MM_CHUNK` steps (each accumulates into
    the output). Integers wrap exactly; float64 sums in k order (NumPy's BLAS blocks it)."""
    from .kernelgen import library_source  # (kernelgen imports nothing of this module)

    _check_gpu(device, "matmul")
    _dims("matmul", batch=batch, M=M, K=K, N=N)
    row = MULTI_LANE[dt]
    R, pfx = row.wgsl_storage, row.prefix
    size = int(row.wgsl_layout.itemsize)  # type: ignore[union-attr]
    count = batch * M * N
    out = device.malloc(count * size)
    if count == 0:
        return out
    body = _template("wide_matmul", R=R, pfx=pfx)
    src = library_source(body) + "\n" + body
    impl = device.impl
    pipe = pipeline(impl, src, "main", None, f"matmul_{dt.name}")
    grid = _threads(device, count, 64)
    if K == 0:
        zero = pack("8I", M, 0, N, count, 0, 0, 0, 0)
        entries = [(0, out.handle, 0, _bind(out)), (1, impl.uniform(zero), 0, len(zero)),
                   (2, a.handle, 0, _bind(a)), (3, b.handle, 0, _bind(b))]
        impl.dispatch(pipe, entries, grid)
        return out
    for k0 in range(0, K, WIDE_MM_CHUNK):
        k1 = min(K, k0 + WIDE_MM_CHUNK)
        params = pack("8I", M, K, N, count, k0, k1, a_batch_stride, b_batch_stride)
        entries = [(0, out.handle, 0, _bind(out)), (1, impl.uniform(params), 0, len(params)),
                   (2, a.handle, 0, _bind(a)), (3, b.handle, 0, _bind(b))]
        impl.dispatch(pipe, entries, grid)
    return out




@_locked
def sort_wide(device: Device, keys: Buffer, idx: Buffer, dt: DType, rows: int, n: int, P: int,
              descending: bool) -> None:
    """Sort, in place, ``rows`` rows of ``P`` (a power of two >= n) multi-lane keys with their
    u32 original indices (``idx``, 0..P-1 per row; positions >= n are padding) by bitonic
    compare-exchange passes, one dispatch each (log2(P) * (log2(P) + 1) / 2 of them, no
    loops). The order is total (value, then original index), so the result is the stable
    sort; NaN last ascending, first descending (NumPy's flip-of-reversed order)."""
    from .kernelgen import library_source

    _check_gpu(device, "sort")
    row = MULTI_LANE[dt]
    R, pfx = row.wgsl_storage, row.prefix
    isnan = f"{pfx}isnan(v)" if dt.kind in "fc" else "false"
    body = _template("wide_sort", R=R, pfx=pfx, isnan=isnan)
    src = library_source(body) + "\n" + body
    impl = device.impl
    pipe = pipeline(impl, src, "main", None, f"sort_{dt.name}")
    count = rows * P
    grid = _threads(device, count, 64)
    k = 2
    while k <= P:
        j = k // 2
        while j >= 1:
            params = pack("8I", n, P, count, k, j, int(bool(descending)), 0, 0)
            impl.dispatch(pipe, [(0, keys.handle, 0, _bind(keys)), (1, impl.uniform(params), 0, len(params)),
                                 (2, idx.handle, 0, _bind(idx))], grid)
            j //= 2
        k *= 2


# ---------------------------------------------------------------------------
# softmax / logsumexp
# ---------------------------------------------------------------------------
def _rowwise(device: Device, x: Buffer | FusedInput, dt: DType, rows: int, n: int, entry: str) -> Buffer:
    _check_gpu(device, entry)
    _dims(entry, rows=rows, n=n)
    T = _wgsl(device, dt, entry)
    if dt.kind != "f":
        raise UnsupportedDTypeError(f"{entry}: needs a float dtype, got {dt.name}; "
                                    "convert with astype(float32) first")
    count = rows * n if entry == "softmax" else rows
    out = device.malloc(count * _size(T))
    if count == 0:
        return out
    wg = 8 if _software(device) else (64 if n <= 256 else WG)
    consts = {"WG": wg}
    # loop iterations per thread: ceil(n / wg) reading the row (twice for softmax) plus the
    # tree (<= 9); past MAX_LOOP the row is split into chunks (see softmax.wgsl)
    if 2 * _cdiv(n, wg) + 16 <= MAX_LOOP:
        params = pack("3If4I", rows, n, rows, -math.inf, n, 1, 0, 0)
        _dispatch(device, "softmax", {"T": T}, entry, [(0, x), (1, out)], params, 2,
                  _groups(device, rows), consts)
        return out
    chunk = wg * (MAX_LOOP // 4)
    nchunks = _cdiv(n, chunk)
    if nchunks + 2 * _cdiv(chunk, wg) + 16 > MAX_LOOP:  # (beyond any binding size today)
        raise ValueError(f"{entry}: rows of {n} elements are too long to split within "
                         f"MAX_LOOP={MAX_LOOP}; use a shorter axis")
    total = rows * nchunks
    params = pack("3If4I", rows, n, total, -math.inf, chunk, nchunks, 0, 0)
    with device._lock:
        stats = device.malloc(total * 8)
        _dispatch(device, "softmax", {"T": T}, "chunk_stats", [(0, x), (3, stats)], params, 2,
                  _groups(device, total), consts)
        if entry == "softmax":
            _dispatch(device, "softmax", {"T": T}, "softmax_chunks",
                      [(0, x), (1, out), (4, stats)], params, 2, _groups(device, total), consts)
        else:
            _dispatch(device, "softmax", {"T": T}, "logsumexp_chunks", [(1, out), (4, stats)],
                      params, 2, _threads(device, rows, wg), consts)
        stats.free()
    return out


@_locked
def softmax_rows(device: Device, x: Buffer | FusedInput, dt: DType, rows: int, n: int) -> Buffer:
    """Softmax of each row of x (rows, n): exp(x - max) / sum(exp(x - max)), f32 math."""
    return _rowwise(device, x, dt, rows, n, "softmax")


@_locked
def logsumexp_rows(device: Device, x: Buffer | FusedInput, dt: DType, rows: int, n: int) -> Buffer:
    """log(sum(exp(x))) of each row of x (rows, n), max-shifted; returns (rows,) elements.

    An empty or all -inf row gives -inf; a row with +inf (and no NaN) gives +inf.
    """
    return _rowwise(device, x, dt, rows, n, "logsumexp")


# ---------------------------------------------------------------------------
# sort
# ---------------------------------------------------------------------------
@_locked
def sort_axis(device: Device, x: Buffer, dt: DType, outer: int, n: int, descending: bool = False,
              stable: bool = True, return_indices: bool = False) -> Buffer:
    """Sort each row of x (outer, n) along the last axis; values, or int32 indices
    (``argsort``) with ``return_indices``.

    Always stable (``stable`` is accepted for the Array API signature). NaNs sort last
    (first when descending: the reverse of the ascending order, ties still in their
    original order); -0.0 and 0.0 tie. Rows are padded to a power of two (scratch of
    8 bytes per padded element).
    """
    _check_gpu(device, "sort_axis")
    _dims("sort_axis", outer=outer, n=n)
    T = _wgsl(device, dt, "sort_axis")
    out = device.malloc(outer * n * (4 if return_indices else _size(T)))
    if outer * n == 0:
        return out
    length = 1 << (n - 1).bit_length()
    total = outer * length
    keys = device.malloc(total * 4)
    idx = device.malloc(total * 4)
    kind = 0 if dt.kind == "f" else (1 if T == "i32" else 2)
    aliases = {"T": T}
    wg = WG  # (smaller groups did not help on software devices: global steps dominate)
    consts = {"KIND": kind, "DESCENDING": float(bool(descending)), "WG": wg}

    def params(k: int = 0, j: int = 0, init: int = 0) -> bytes:
        return pack("8I", outer, n, length, total, k, j, init, 0)

    lb = 4 * wg  # elements per workgroup in the local kernel
    nblocks = _cdiv(total, lb)
    _dispatch(device, "sort", aliases, "local", [(0, x), (1, keys), (2, idx)], params(init=1), 5,
              _groups(device, nblocks), consts)
    k = 2 * lb
    while k <= length:
        j = k // 2
        while j >= lb:
            _dispatch(device, "sort", aliases, "global_step", [(1, keys), (2, idx)], params(k, j),
                      5, _threads(device, total // 2, wg), consts)
            j //= 2
        _dispatch(device, "sort", aliases, "local", [(0, x), (1, keys), (2, idx)], params(k), 5,
                  _groups(device, nblocks), consts)
        k *= 2
    if return_indices:
        _dispatch(device, "sort", aliases, "gather_idx", [(2, idx), (4, out)], params(), 5,
                  _threads(device, outer * n, wg), consts)
    else:
        _dispatch(device, "sort", aliases, "gather_vals", [(0, x), (2, idx), (3, out)], params(),
                  5, _threads(device, outer * n, wg), consts)
    keys.free()
    idx.free()
    return out


__all__ = [
    "REDUCE_OPS", "cumsum_axis", "searchsorted", "logsumexp_rows", "matmul", "matmul_naive",
    "MATMUL_VARIANTS", "matmul_variant", "set_matmul_variant", "mean_axis",
    "matmul_wide", "reduce_axis", "softmax_rows", "sort_axis", "sort_wide", "sum64_axis", "var_axis",
]
