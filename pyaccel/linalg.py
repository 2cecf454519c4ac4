"""Linear algebra: ``matmul``, ``tensordot``, ``vecdot``, ``matrix_transpose`` (also in the main
namespace) and a subset of the Array API ``linalg`` extension (``diagonal``, ``trace``,
``outer``, ``vector_norm``, ``matrix_norm`` with ord 'fro', 1, -1, inf, -inf).

``matmul`` and ``diagonal`` run on the device's op provider; the rest are built from
namespace functions. On WebGPU devices ``matmul`` runs :func:`pyaccel.ops.gpu_kernels.matmul` (tiled; batch
dimensions broadcast with stride 0 when one side has a single matrix, else the smaller
side is broadcast first). Integer products wrap; float16 accumulates in float32.
Decompositions (``svd``, ``inv``, ``solve``, ...) are not implemented.
"""

from __future__ import annotations

import math
from typing import Any

from . import elementwise as ew
from . import reductions as red
from ._dispatch import register
from ._shapes import broadcast_shapes, normalize_axis, prod
from .array import Array
from .manipulation import matrix_transpose, permute_dims, reshape
from .promotion import check_dtype, common_device, default_float, promote

__all__ = ["diagonal", "matmul", "matrix_norm", "matrix_transpose", "outer", "tensordot", "trace",
           "vecdot", "vector_norm"]

def _check(x: Any, what: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{what}: expected a pyaccel Array, got {type(x).__name__}; convert it with "
                        "pyaccel.asarray(x)")
    return x


def matmul(x1: Array, x2: Array, /) -> Array:
    """Matrix product with NumPy's rules for 1-D operands and broadcast batch dimensions."""
    _check(x1, "matmul")
    _check(x2, "matmul")
    dev = common_device(x1.device, x2.device)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError(f"matmul: operands must have at least one dimension, got shapes {x1.shape} "
                         f"and {x2.shape}; use multiply for scalars")
    dt = promote(x1.dtype, x2.dtype)
    if dt.kind == "b":
        raise TypeError("matmul needs numeric arrays, got bool; cast with x.astype(pyaccel.int32)")
    dt = check_dtype(dev, dt, "matmul")
    a_shape = (1,) + x1.shape if x1.ndim == 1 else x1.shape
    b_shape = x2.shape + (1,) if x2.ndim == 1 else x2.shape
    K = a_shape[-1]
    K2 = b_shape[-2]
    if K != K2:
        raise ValueError(f"matmul: shapes {x1.shape} and {x2.shape} are not aligned: {K} (last axis of "
                         f"x1) != {K2} ({'only' if x2.ndim == 1 else 'second-to-last'} axis of x2)")
    broadcast_shapes(a_shape[:-2], b_shape[:-2])
    return dev.ops.matmul(x1, x2, dt)


def tensordot(x1: Array, x2: Array, /, *, axes: Any = 2) -> Array:
    """Sum of products over ``axes`` (an int: the last/first n axes; or two axis sequences)."""
    _check(x1, "tensordot")
    _check(x2, "tensordot")
    if isinstance(axes, int):
        if axes < 0 or axes > min(x1.ndim, x2.ndim):
            raise ValueError(f"tensordot: axes={axes} must be in 0..{min(x1.ndim, x2.ndim)}")
        a_ax = list(range(x1.ndim - axes, x1.ndim))
        b_ax = list(range(axes))
    else:
        a_ax, b_ax = (list(v) if isinstance(v, (list, tuple)) else [v] for v in axes)
        a_ax = [normalize_axis(a, x1.ndim, "tensordot axes") for a in a_ax]
        b_ax = [normalize_axis(a, x2.ndim, "tensordot axes") for a in b_ax]
        if len(a_ax) != len(b_ax):
            raise ValueError(f"tensordot: axes {axes!r} must name the same number of axes on each side")
    for a, b in zip(a_ax, b_ax, strict=True):
        if x1.shape[a] != x2.shape[b]:
            raise ValueError(f"tensordot: axis {a} of x1 (size {x1.shape[a]}) and axis {b} of x2 "
                             f"(size {x2.shape[b]}) differ")
    free_a = [j for j in range(x1.ndim) if j not in a_ax]
    free_b = [j for j in range(x2.ndim) if j not in b_ax]
    K = prod([x1.shape[a] for a in a_ax])
    A = permute_dims(x1, free_a + a_ax) if free_a + a_ax != list(range(x1.ndim)) else x1
    B = permute_dims(x2, b_ax + free_b) if b_ax + free_b != list(range(x2.ndim)) else x2
    A = reshape(A, (prod([x1.shape[j] for j in free_a]), K))
    B = reshape(B, (K, prod([x2.shape[j] for j in free_b])))
    r = matmul(A, B)
    return reshape(r, tuple(x1.shape[j] for j in free_a) + tuple(x2.shape[j] for j in free_b))


def vecdot(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Dot product of vectors along ``axis`` (broadcasting the other axes); complex ``x1`` is
    conjugated (sum of conj(x1) * x2, as the Array API says)."""
    _check(x1, "vecdot")
    _check(x2, "vecdot")
    multiply, _sum = ew.multiply, red.sum
    nd = max(x1.ndim, x2.ndim)
    ax = normalize_axis(axis, nd, "vecdot axis")
    s1 = (1,) * (nd - x1.ndim) + x1.shape
    s2 = (1,) * (nd - x2.ndim) + x2.shape
    if s1[ax] != s2[ax]:
        raise ValueError(f"vecdot: axis {axis} has size {s1[ax]} in x1 (shape {x1.shape}) but "
                         f"{s2[ax]} in x2 (shape {x2.shape})")
    dt = promote(x1.dtype, x2.dtype)
    if dt.name == "float16":  # products and sums in float32, rounded once (as matmul)
        p = multiply(x1.astype("float32"), x2.astype("float32"))
        return _sum(p, axis=ax - nd + p.ndim).astype(dt)
    if x1.dtype.kind == "c":  # the Array API's vecdot conjugates the first argument
        x1 = ew.conj(x1)
    p = multiply(x1, x2)
    return _sum(p, axis=ax - nd + p.ndim, dtype=p.dtype)


def diagonal(x: Array, /, *, offset: int = 0) -> Array:
    """The ``offset``-th diagonal of the last two axes."""
    _check(x, "diagonal")
    if x.ndim < 2:
        raise ValueError(f"diagonal needs an array with >= 2 dimensions, got shape {x.shape}")
    return x.device.ops.diagonal(x, offset)


def trace(x: Array, /, *, offset: int = 0, dtype: Any = None) -> Array:
    """Sum of the ``offset``-th diagonal of the last two axes."""
    return red.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def outer(x1: Array, x2: Array, /) -> Array:
    """Outer product of two 1-D arrays."""
    _check(x1, "outer")
    _check(x2, "outer")
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"outer needs 1-D arrays, got shapes {x1.shape} and {x2.shape}")
    return ew.multiply(reshape(x1, (-1, 1)), reshape(x2, (1, -1)))


def vector_norm(x: Array, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Array:  # noqa: A002
    """Vector p-norm over ``axis`` (all axes when None); ord in {p > 0, 0, inf, -inf}."""
    _check(x, "vector_norm")
    a = ew.abs(x)
    if a.dtype.kind != "f":
        a = a.astype(check_dtype(x.device, _default_float(x), "vector_norm"))
    if ord == 2:
        return ew.sqrt(red.sum(ew.multiply(a, a), axis=axis, keepdims=keepdims))
    if ord == 1:
        return red.sum(a, axis=axis, keepdims=keepdims)
    if ord == math.inf:
        return red.max(a, axis=axis, keepdims=keepdims)
    if ord == -math.inf:
        return red.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return red.sum(ew.not_equal(a, 0.0).astype(a.dtype), axis=axis, keepdims=keepdims)
    p = float(ord)
    return ew.pow(red.sum(ew.pow(a, p), axis=axis, keepdims=keepdims), 1.0 / p)


def _default_float(x: Array) -> Any:
    return default_float(x.device)


def matrix_norm(x: Array, /, *, keepdims: bool = False, ord: Any = "fro") -> Array:  # noqa: A002
    """Matrix norm of the last two axes: 'fro', 1, -1, inf, -inf (2, -2, 'nuc' need an SVD)."""
    _check(x, "matrix_norm")
    if x.ndim < 2:
        raise ValueError(f"matrix_norm needs an array with >= 2 dimensions, got shape {x.shape}")
    if ord == "fro":
        return vector_norm(x, axis=(-2, -1), keepdims=keepdims, ord=2)
    if ord in (1, -1, math.inf, -math.inf):
        a = ew.abs(x)
        if a.dtype.kind != "f":
            a = a.astype(check_dtype(x.device, _default_float(x), "matrix_norm"))
        sum_axis = -2 if ord in (1, -1) else -1
        s = red.sum(a, axis=sum_axis, keepdims=True)
        pick = red.max if ord in (1, math.inf) else red.min
        r = pick(s, axis=-1 if sum_axis == -2 else -2, keepdims=True)
        return r if keepdims else reshape(r, x.shape[:-2])
    raise NotImplementedError(f"matrix_norm(ord={ord!r}) needs singular values, which pyaccel does not "
                              "compute; use ord='fro', 1, -1, inf or -inf, or NumPy on x.to_numpy()")


_ = matrix_transpose  # re-exported

register(matmul=matmul)
