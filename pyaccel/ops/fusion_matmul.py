"""Deferred matmul with an elementwise epilogue (docs/fusion.md, "Matmul epilogues").

With fusion on, a float32 / int32 / uint32 matmul on a GPU device does not dispatch at once:
``WgslOps.matmul`` calls :func:`defer`, which returns a lazy Array whose node is a
:class:`fusion.MatmulNode` over the two contiguous operand buffers. An elementwise op that
takes it records a fusion node as usual (the matmul is the tree's ``("m", T)`` leaf). When
that tree is computed (:func:`launch`, from ``fusion._launch``), the matmul kernel runs with
the tree as its epilogue: the matmul families read their output through a marked block
(``// <output>`` ... ``// </output>``: the ``out`` binding and the store functions ``sto`` /
``sto4``), which :class:`FusedOutput` swaps for functions that compute the tree at the
stored element, with the product's value as the matmul leaf. ``relu(a @ w + b)`` is one
matmul kernel and nothing else.

The product itself is the eager kernel's (same variant choice, same accumulation order):
its value passes fusion's opaque ``p.pa`` round trip before the tree uses it, so results
are bit-identical to ``fusion(False)``. When the matmul is needed on its own (a read, a
second consumer, a non-elementwise op, an in-place write into an operand) it runs as the
plain kernel. Only products whose K fits one invocation (no K split, so one pass writes the
result) are deferred; the others run eagerly as before. On the kernels with unrolled stores
(u16x8, u16x16) only light trees (at most 4 ops, none of exp / log / tanh / pow / the
trigonometric family) become the epilogue;
a heavier one runs as its own fused kernel after the product (one dispatch more, and a
compile of seconds instead of tens of seconds on software GPUs).
"""

from __future__ import annotations

import re
from typing import Any

from ..array import Array
from ..dtypes import DTYPE_TABLE, WGSL_ENABLE, DType
from . import fusion as F
from . import gpu_kernels as _gk
from . import launch as _launch

# the 32-bit fusable dtypes (a bool matmul, the narrow integers' matmul, which runs in
# 32 bits and is wrapped after, and float16 are not deferred)
EPILOGUE_DTYPES: frozenset[DType] = frozenset(
    d for d in F.FUSABLE if d.kind != "b" and DTYPE_TABLE[d].wrap is None and d.wgsl not in WGSL_ENABLE)
_CACHE = 256
_BLOCK = re.compile(r"// <output>.*?// </output>\n", re.S)
_BASE = 4  # first binding after the matmul's a (0), b (1), out (2) and P (3)


def defer(ops: Any, a: Array, b: Array, dt: DType, batch: int, M: int, K: int, N: int, sa: int,
          sb: int, shape: tuple[int, ...]) -> Array | None:
    """A lazy ``a @ b`` (a (batch, M, K), b (batch, K, N) as ``gpu_kernels.matmul`` takes
    them) of result ``shape``, or None when it is not deferred (fusion off, another dtype,
    an empty result, K past one invocation's chunk, a buffer past one binding: these run
    eagerly, and raise their errors at the op as before)."""
    if not F.enabled() or dt not in EPILOGUE_DTYPES or batch * M * N == 0:
        return None
    if K > min(_gk._MM_KC.values()):  # K split into partial products: the eager path
        return None
    dev = ops.device
    lim = min(dev.limits.max_buffer_size, dev.limits.max_storage_binding_size)
    if 4 * batch * M * N > lim or dev.limits.max_storage_buffers_per_stage < 4:
        return None
    _gk._check_gpu(dev, "matmul")
    with _launch.device_lock(dev):
        abuf, bbuf = a._buf, b._buf  # (lazy operands computed, views gathered: as eager)
        if abuf.nbytes > lim or bbuf.nbytes > lim:
            return None
        ins = [Array._new(abuf, (abuf.nbytes // 4,), dt, dev), Array._new(bbuf, (bbuf.nbytes // 4,), dt, dev)]
        out = Array._new(None, shape, dt, dev)  # type: ignore[arg-type]
        out._lazy = F.MatmulNode(ins, (dt, batch, M, K, N, sa, sb), dev)
        for x in ins:
            F._register(x._b, out)  # an in-place write into an operand computes it first
    F.STATS["nodes"] += 1
    return out


def launch(arr: Array) -> tuple[Array | None, Any]:
    """Compute the lazy ``arr`` (device lock held) if its tree holds a deferred matmul: the
    matmul kernel with the tree as epilogue (or the plain kernel for the matmul node itself).
    Returns (the new array, None), or (None, the tree's walk) when the tree holds no deferred
    matmul any more (it was computed meanwhile) or its leaves do not fit the bindings left
    (the matmul is then computed first): the caller records the elementwise kernel."""
    node = arr._lazy
    dev = node.dev  # type: ignore[union-attr]
    if isinstance(node, F.MatmulNode):
        return _plain(node, arr._shape), None
    w = F._walk(arr, keep_arrays=True)
    while w.mm is not None:
        shared = _shared(w)
        if shared is None:
            break
        F._materialize_locked(shared)  # (its own epilogue, or the plain product)
        w = F._walk(arr, keep_arrays=True)
    w.arrays = []  # (only _shared needs them)
    if w.mm is None:
        return None, w
    mm = w.mm._lazy
    dt, batch, M, K, N, sa, sb = mm.dims
    if (_BASE - 1 + len(w.leaves) > dev.limits.max_storage_buffers_per_stage or F._enables(w)
            or F._has_wide(w)  # (a multi-lane epilogue: the product first, the tree its own kernel)
            or (_heavy(w) and _gk.matmul_variant(dev, M, K, N, dt) in _UNROLLED)):
        F._materialize_locked(w.mm)
        return None, F._walk(arr)
    out = Array._output(dev, arr._shape, arr._dtype)
    a, b = mm.ins
    _gk.matmul(dev, a._b, b._b, dt, batch, M, K, N, sa, sb, epilogue=FusedOutput(w, out))
    F.STATS["fused_matmuls"] = F.STATS.get("fused_matmuls", 0) + 1
    return out, None


# kernels whose stores are unrolled (128 / 256 per invocation), so an epilogue is inlined
# that many times: only light trees go there (a tanh-GELU made lavapipe compile ~20 s)
_UNROLLED = frozenset({"u16x8", "u16x16"})
_LIGHT_NODES = 4
_LIB_CALL = re.compile(r"\bf_(\w+)\(")
# ew_float.wgsl functions of a few instructions (NaN-aware max / min / compares, sign bits)
_CHEAP = frozenset({"maximum", "minimum", "clip", "isnan", "isinf", "isfinite", "signbit", "sign",
                    "nan", "inf", "copysign", "eq", "ne"})


def _heavy(w: Any) -> bool:
    """More than :data:`_LIGHT_NODES` ops, or a float function of the ``ew_float`` library
    beyond the cheap ones (exp, tanh, log, pow, the trigonometric family: polynomials and
    range reductions): inlined once per unrolled store it compiles too slowly."""
    return len(w.nodes) > _LIGHT_NODES or any(
        name not in _CHEAP for fn, _ in w.nodes for name in _LIB_CALL.findall(fn[0]))


def _shared(w: Any) -> Array | None:
    """The outermost array of the tree that holds the deferred matmul and has a consumer
    outside this kernel (a lazy array, a reduction), or None: computing it inside this
    kernel only would make that consumer compute the product again."""
    inside: dict[int, set[int]] = {}  # node index (-1: the matmul) -> consumers in the tree
    for k, (_fn, refs) in enumerate(w.nodes):
        for r in refs:
            if r[0] == "n":
                inside.setdefault(r[1], set()).add(k)
            elif r[0] == "m":
                inside.setdefault(-1, set()).add(k)
    root = len(w.nodes) - 1
    for k in range(root - 1, -1, -1):  # outermost first (the root is what is computed)
        node = w.arrays[k]._lazy
        if node.mm and node.nusers > len(inside.get(k, ())):
            return w.arrays[k]
    if w.mm._lazy.nusers > len(inside.get(-1, ())):
        return w.mm
    return None


def _plain(node: Any, shape: tuple[int, ...]) -> Array:
    dt, batch, M, K, N, sa, sb = node.dims
    a, b = node.ins
    buf = _gk.matmul(node.dev, a._b, b._b, dt, batch, M, K, N, sa, sb)
    return Array._new(buf, shape, dt, node.dev)


class FusedOutput:
    """The output binding of a matmul that computes an elementwise tree at each stored
    element (``gpu_kernels._dispatch`` binds it where ``out`` would go)."""

    swaps_block = True  # (gpu_kernels._dispatch: binds it by swapping a marked block)
    __slots__ = ("walk", "out")

    def __init__(self, walk: Any, out: Array) -> None:
        self.walk = walk
        self.out = out

    @property
    def buffer(self) -> Any:
        return self.out._b

    def bind(self, device: Any, family: str, aliases: dict[str, str], family_src: str,
             entries: list[tuple]) -> str:
        """The matmul ``family``'s source with the tree as its store (cached by structure);
        appends the output, the tree's uniform block and its leaves to ``entries``."""
        w = self.walk
        impl = device.impl
        key = (w.key(), len(w.cshape) if w.bc else 0, family, tuple(sorted(aliases.items())))
        cache = device.memo("fusion_matmul_src", _CACHE)
        src = cache.get(key)
        ns4, nst = w.sizes()
        if src is None:
            src = cache.put(key, _BLOCK.sub(lambda _m: _section(w, family, aliases["T"], ns4, nst),
                                            family_src, count=1))
            F.STATS["kernels_compiled"] += 1
        else:
            cache.move_to_end(key)
        ob = self.out._b
        entries.append((2, ob.handle, 0, _gk._bind(ob)))
        params = w.param_bytes(ns4, nst)
        entries.append((_BASE, impl.uniform(params), 0, len(params)))
        for j, b in enumerate(w.leaves):
            entries.append((_BASE + 1 + j, b.handle, 0, _launch.binding_size(b.nbytes)))
        return src


def _section(w: Any, family: str, T: str, ns4: int, nst: int) -> str:
    """WGSL replacing the ``<output>`` block: the output binding, the tree's uniform block
    ``p`` and leaves ``fl<j>``, ``compute``, ``ev(i, m)`` (the tree at element ``i``, the
    product's value there ``m``) and the family's store function."""
    R = w.dt.wgsl
    vec = family == "matmul_v4"
    out = [
        f"@group(0) @binding(2) var<storage, read_write> out: array<{f'vec4<{R}>' if vec else R}>;\n",
        F._params_struct("FParams", ns4, nst),
        f"@group(0) @binding({_BASE}) var<uniform> p: FParams;\n",
    ]
    for j, (t, _c) in enumerate(w.leaf_desc):
        out.append(f"@group(0) @binding({_BASE + 1 + j}) var<storage, read> fl{j}: array<{t}>;\n")
    if w.bc:
        out.append(_bc_off(len(w.cshape)))
    out.append(F._compute(w.nodes, w.leaf_desc, R, mm_t=T))
    bcj = {j: m for m, j in enumerate(w.bc)}
    ev = f"fn ev(i: u32, m: {T}) -> {R} {{\n"
    # the product as the eager kernel stores it: never contracted with the tree's first op
    ev += (f"    let am = bitcast<{T}>(bitcast<u32>(m) ^ p.pa);\n" if T == "f32" else
           "    let am = m;\n    _ = p.n;\n")
    for j, (_, c) in enumerate(w.leaf_desc):
        ix = "i" if c == "lin" else "0u" if c == "s0" else f"bc_off(i, {bcj[j]}u)"
        ev += f"    let v{j} = fl{j}[{ix}];\n"
    ev += f"    return compute({', '.join([f'v{j}' for j in range(len(w.leaf_desc))] + ['am'])});\n}}\n"
    out.append(ev)
    if vec:
        out.append(f"fn sto4(q: u32, v: vec4<{T}>) {{\n    let i = 4u * q;\n"
                   f"    out[q] = vec4<{R}>(ev(i, v.x), ev(i + 1u, v.y), ev(i + 2u, v.z), ev(i + 3u, v.w));\n}}\n")
    else:
        out.append(f"fn sto(i: u32, v: {T}) {{\n    out[i] = ev(i, v);\n}}\n")
    return "".join(out)


def _bc_off(nd: int) -> str:
    """``bc_off(i, j)`` (fusion's, the same uniform block) unrolled for ``nd`` collapsed
    dimensions: no loop, so the unrolled store sections of the u16 matmul entries (up to 256
    stores per invocation, each inlined) stay quick to compile."""
    L = ["fn bc_off(i: u32, j: u32) -> u32 {", "    var rem = i;", "    var o = p.st[j * 3u + 2u].x;"]
    for d in range(nd - 1, -1, -1):
        L.append(f"    o = o + i32(rem % p.shape[{d // 4}u][{d % 4}u]) * p.st[j * 3u + {d // 4}u][{d % 4}u];")
        if d:
            L.append(f"    rem = rem / p.shape[{d // 4}u][{d % 4}u];")
    L += ["    return u32(o);", "}", ""]
    return "\n".join(L)


F._MATMUL_LAUNCH[0] = launch

__all__ = ["EPILOGUE_DTYPES", "FusedOutput", "defer", "launch"]
