"""The 4-elements-per-invocation kernels (``ops.kernelgen.vec_source``) against NumPy.

Contiguous 32-bit operands with a multiple of 4 elements (at least ``VEC_MIN``) run a
generated kernel with vec4 loads and stores; the rest the generic skeleton. Every
elementwise row x every dtype runs at 4096 elements (vec4; ``test_array_elementwise``
covers the skeleton), with array and scalar operands, outputs poisoned first; where, clip,
arange and int8 wrapping on both sides of the line (4096 and 4098 elements).
"""

from __future__ import annotations

import numpy as np
import pytest
from _array_util import check, dtypes_for, poisoned, rand  # noqa: F401  (fixture)
from test_array_elementwise import BINARY, UNARY, input_dtypes, run_and_check, second_operand

import pyaccel
from pyaccel.dtypes import float32
from pyaccel.ops import kernelgen as gen
from pyaccel.ops import launch

SIZES = (4096, 4098)


def test_vec4_kernel_is_chosen_for_contiguous_32bit_data(gpu_device) -> None:
    n = 4096
    a, b = gpu_device.malloc(4 * n), gpu_device.malloc(4 * n)
    ops = [gen.buf(a, float32, "f32"), gen.buf(b, float32, "f32")]
    p = gen.plan(gpu_device, "x + y", "f32", 4 * n, float32, ops, (n,))
    assert p is not None and p.wg == launch.grid_1d(gpu_device, n // 4)
    q = gen.plan(gpu_device, "x + y", "f32", 4 * (n - 2), float32,
                 [gen.buf(a, float32, "f32"), gen.buf(b, float32, "f32")], (n - 2,))
    assert q is not None and q.wg == launch.grid_1d(gpu_device, n - 2)  # not a multiple of 4
    strided = [gen.buf(a, float32, "f32", 0, (2,)), gen.buf(b, float32, "f32")]
    r = gen.plan(gpu_device, "x + y", "f32", 4 * (n // 2), float32, strided, (n // 2,))
    assert r is not None and r.wg == launch.grid_1d(gpu_device, n // 2)  # strided: skeleton
    src, used = gen.vec_source("x + y", "f32", "f32", "float32",
                               (("buf", "f32", "f32"), ("scalar", "f32", "f32")), "")
    assert used == frozenset({2}) and "array<vec4<A0>>" in src and "read> x1" not in src


@pytest.mark.parametrize("row", UNARY, ids=lambda r: r.name)
def test_unary_vec4(gpu_device, row, rng, poisoned) -> None:  # noqa: F811
    for n in SIZES[:1]:
        for dt in input_dtypes(row, gpu_device):
            x = rand(rng, dt, (n,), row.domain)
            run_and_check(row, gpu_device, [x], dt, f"{row.name}({dt.name}[{n}]) on {gpu_device.uri}")


@pytest.mark.parametrize("row", BINARY, ids=lambda r: r.name)
def test_binary_vec4(gpu_device, row, rng, poisoned) -> None:  # noqa: F811
    for n in SIZES[:1]:
        for dt in input_dtypes(row, gpu_device):
            x = rand(rng, dt, (n,), "pow" if row.domain == "pow" else
                     ("any" if row.domain in ("nonzero", "shift") else row.domain))
            y = second_operand(row, rng, dt, (n,))
            what = f"{row.name}({dt.name}[{n}]) on {gpu_device.uri}"
            run_and_check(row, gpu_device, [x, y], dt, what)
            if row.domain not in ("shift", "pow", "nonzero"):  # a scalar in the parameter block
                s = True if dt.kind == "b" else (3 if dt.kind in "iu" else 1.75)
                run_and_check(row, gpu_device, [x, s], dt, what + " with a scalar")


def test_where_clip_arange_vec4(gpu_device, rng, poisoned) -> None:  # noqa: F811
    for n in SIZES:
        for dt in dtypes_for(gpu_device):
            c = rng.random(n) < 0.5
            a, b = rand(rng, dt, (n,)), rand(rng, dt, (n,))
            got = pyaccel.where(*(pyaccel.asarray(v, device=gpu_device) for v in (c, a, b)))
            check(got, np.where(c, a, b), "exact", f"where {dt.name}[{n}]")
        x = rand(rng, float32, (n,))
        check(pyaccel.clip(pyaccel.asarray(x, device=gpu_device), -1.5, 2.0),
              np.clip(x, np.float32(-1.5), np.float32(2.0)), "exact", f"clip [{n}]")
        check(pyaccel.arange(n, dtype=pyaccel.int32, device=gpu_device), np.arange(n, dtype=np.int32),
              "exact", f"arange [{n}]")
        i8 = rand(rng, pyaccel.int8, (n,))
        check(pyaccel.asarray(i8, device=gpu_device) * 7, i8 * np.int8(7), "exact", f"int8 wrap [{n}]")
