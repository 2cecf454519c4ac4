"""Reductions that compute their lazy elementwise input in place (docs/fusion.md).

The reduction families (``reduce.wgsl``, ``reduce64.wgsl``, ``argreduce.wgsl``,
``softmax.wgsl``) and the scans (``scan.wgsl``: ``cumulative_sum`` / ``cumulative_prod``) read their input through one marked block of WGSL (``// <input>`` ...
``// </input>``: the input binding(s) and the load functions ``ld`` / ``ld4`` / ``ldw`` /
``ldw4``). When the input of a reduction is a lazy array (:mod:`.fusion`), the provider passes
:func:`operand`'s :class:`FusedInput` where the input buffer would go, and
``gpu_kernels._dispatch`` swaps the block for the tree: the load functions compute element
``i`` of the tree from its leaves (storage buffers, views read in place), its scalars,
strides and offsets come in a second uniform block; everything else in the kernel (plan,
passes, reduction order) is the eager kernel's, so results are bit-identical to
materialising first (every f32 node, the root included, goes through fusion's opaque
``p.pa`` round trip: no FMA contraction with the reduction either). Only the first pass of
a multi-pass reduction reads the input; the later ones read partials as before.

Kernels are cached per device by structure (the tree's :meth:`fusion._Walk.key`, the family,
its type aliases and the vec4 mode), never by values. A tree with more leaves than the
family's free storage bindings, or a lazy array a second consumer would recompute while its
tree is bigger than :data:`fusion.RECOMPUTE_OPS`, is materialised as before.
"""

from __future__ import annotations

import re
from typing import Any

from ..array import Array
from . import fusion as F
from . import launch

_CACHE = 256

# family -> (first free binding, other storage bindings the family declares, the load
# functions that replace the input block; S is the tree's storage type)
FAMILIES: dict[str, tuple[int, int, str]] = {
    "reduce": (5, 2, "fn ld(i: u32) -> T { return fx(i); }\nfn ld4(i4: u32) -> vec4<T> { return fx4(i4); }\n"),
    "reduce64": (4, 1, "fn ldw(i: u32) -> u32 { return bitcast<u32>(fx(i)); }\n"
                       "fn ldw4(q: u32) -> vec4<u32> { return bitcast<vec4<u32>>(fx4(q)); }\n"),
    "argreduce": (5, 3, "fn ld(i: u32) -> T { return fx(i); }\n"),
    "softmax": (5, 3, "fn ld(i: u32) -> T { return fx(i); }\n"),
    "scan": (4, 2, "fn ld(i: u32) -> T { return fx(i); }\n"),
}
_BLOCK = re.compile(r"// <input>.*?// </input>\n", re.S)


class FusedInput:
    """A lazy array standing in for a reduction's input buffer (``gpu_kernels._dispatch``
    binds its tree instead). ``stand_in``: a real buffer to bind where the kernel declares
    a read-only binding it does not read (``aux`` of a plain sum)."""

    swaps_block = True  # (gpu_kernels._dispatch: binds it by swapping a marked block)
    __slots__ = ("arr", "walk", "nbytes")

    def __init__(self, arr: Array, walk: Any) -> None:
        self.arr = arr
        self.walk = walk
        self.nbytes = arr.size * 4

    @property
    def stand_in(self) -> Any:
        return self.walk.leaves[0]

    def bind(self, device: Any, family: str, aliases: dict[str, str], family_src: str,
             entries: list[tuple]) -> str:
        """The fused source of ``family`` (cached by structure); appends this tree's binding
        entries (uniform block, leaves) to ``entries``."""
        base, _, loads = FAMILIES[family]
        w = self.walk
        impl = device.impl
        # lin leaves read 4 at a time when every one can be bound in whole vec4s
        vsz = [max(16, (b.nbytes + 15) & ~15) for b in w.leaves]
        vec = not w.bc and all(c != "lin" or s <= b.handle.size
                               for (_, c), b, s in zip(w.leaf_desc, w.leaves, vsz, strict=True))
        key = (w.key(), family, tuple(sorted(aliases.items())), vec)
        cache = device.memo("fusion_reduce_src", _CACHE)
        src = cache.get(key)
        ns4, nst = w.sizes()
        if src is None:
            src = cache.put(key, _BLOCK.sub(lambda _m: loads, family_src, count=1)
                            + _section(w, base, vec, ns4, nst))
            F.STATS["kernels_compiled"] += 1
        else:
            cache.move_to_end(key)
        params = w.param_bytes(ns4, nst)
        entries.append((base, impl.uniform(params), 0, len(params)))
        for j, ((_, c), b) in enumerate(zip(w.leaf_desc, w.leaves, strict=True)):
            size = vsz[j] if vec and c == "lin" else launch.binding_size(b.nbytes)
            entries.append((base + 1 + j, b.handle, 0, size))
        F.STATS["fused_reductions"] = F.STATS.get("fused_reductions", 0) + 1
        return src


def _section(w: Any, base: int, vec: bool, ns4: int, nst: int) -> str:
    """WGSL of the tree: uniform block ``p``, leaf bindings ``fl<j>``, ``compute`` and the
    element loads ``fx(i)`` / ``fx4(i4)`` (elements 4 i4 .. 4 i4 + 3)."""
    S = w.dt.wgsl
    out = [
        F._params_struct("FParams", ns4, nst),
        f"@group(0) @binding({base}) var<uniform> p: FParams;\n",
    ]
    for j, (t, c) in enumerate(w.leaf_desc):
        ty = f"vec4<{t}>" if vec and c == "lin" else t
        out.append(f"@group(0) @binding({base + 1 + j}) var<storage, read> fl{j}: array<{ty}>;\n")
    if w.bc:
        out.append(F._BC_OFF)
    out.append(F._compute(w.nodes, w.leaf_desc, S, opaque_last=True))
    bcj = {j: m for m, j in enumerate(w.bc)}

    def scalar_load(j: int, c: str, i: str) -> str:
        if c == "s0":
            return f"fl{j}[0u]"
        if c == "bc":
            return f"fl{j}[bc_off({i}, {bcj[j]}u)]"
        return f"fl{j}[{i} / 4u][{i} % 4u]" if vec else f"fl{j}[{i}]"

    nl = len(w.leaf_desc)
    args = ", ".join(f"v{j}" for j in range(nl))
    fx = "fn fx(i: u32) -> " + S + " {\n    _ = p.n;\n"  # (p is bound: keep it used)
    for j, (_, c) in enumerate(w.leaf_desc):
        fx += f"    let v{j} = {scalar_load(j, c, 'i')};\n"
    fx += f"    return compute({args});\n}}\n"
    out.append(fx)
    if vec:
        fx4 = "fn fx4(i4: u32) -> vec4<" + S + "> {\n    _ = p.n;\n"  # (p is bound: keep it used)
        for j, (_, c) in enumerate(w.leaf_desc):
            fx4 += f"    let v{j} = {f'fl{j}[i4]' if c == 'lin' else scalar_load(j, c, '0u')};\n"
        lanes = []
        for comp in "xyzw":
            lanes.append("compute(" + ", ".join(f"v{j}.{comp}" if c == "lin" else f"v{j}"
                                                for j, (_, c) in enumerate(w.leaf_desc)) + ")")
        fx4 += f"    return vec4<{S}>({', '.join(lanes)});\n}}\n"
    else:
        fx4 = (f"fn fx4(i4: u32) -> vec4<{S}> {{\n    let i = 4u * i4;\n"
               f"    return vec4<{S}>(fx(i), fx(i + 1u), fx(i + 2u), fx(i + 3u));\n}}\n")
    out.append(fx4)
    return "".join(out)


def operand(x: Array, family: str) -> Any:
    """What a reduction of ``family`` binds as its input: a :class:`FusedInput` when ``x``
    is lazy, fusion is on and the tree fits the family's free storage bindings; else
    ``x._buf`` (materialising a lazy ``x``)."""
    node = x._lazy
    if node is None or not F.enabled():
        return x._buf
    with node.lock:
        if x._lazy is None:
            return x._buf
        if node.mm:  # a deferred matmul in the tree: computed with its epilogue first
            return x._buf
        lim = x.device.limits.max_storage_buffers_per_stage - FAMILIES[family][1]
        node = F._counted(x)._lazy  # (a lazy reshape's consumers count on its source)
        node.nusers += 1
        if len(node.leaves) > lim or (node.nops > F.RECOMPUTE_OPS and node.nusers >= 2):
            return x._buf
        w = F._walk(x)
        # (f16 and multi-lane trees: materialised first, then reduced as before)
        if not w.leaves or len(w.leaves) > lim or F._enables(w) or F._has_wide(w):
            return x._buf
        return FusedInput(x, w)


def is_fused(x: Any) -> bool:
    return isinstance(x, FusedInput)


__all__ = ["FAMILIES", "FusedInput", "is_fused", "operand"]
