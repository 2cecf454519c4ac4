"""Dtype coverage of the GPU kernels, derived from the WGSL libraries (issue 22 item 5).

Every elementwise row of the op table that accepts a multi-lane dtype (int64, uint64,
float64, complex64, complex128 on WebGPU devices) calls ``<prefix><name>`` from that
dtype's library (``f64_reciprocal`` in ``ew_f64.wgsl``) unless the row has a generic
``wide`` expression. A row added without the library function is a failure here, at
unit-test time, instead of a ``KernelCompileError`` on a float64 GPU.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

import pyaccel
from pyaccel.dtypes import MULTI_LANE
from pyaccel.ops import table

OPS = Path(pyaccel.__file__).parent / "ops"
KIND = {"int64": "i", "uint64": "u", "float64": "f", "complex64": "c", "complex128": "c"}
# internal rows whose multi-lane dtypes take another path (named), not the row's kernel
OTHER_PATH = {
    "arange_kernel": "WgslOps._arange_wide (exact values from the host, uploaded)",
    "linspace_kernel": "WgslOps.linspace (NumPy's formula on the host, bit-identical)",
}


@cache
def _functions(lib: str) -> frozenset[str]:
    return frozenset(re.findall(r"\bfn\s+(\w+)\s*\(", (OPS / f"{lib}.wgsl").read_text()))


def coverage_gaps(rows: tuple[table.OpDef, ...]) -> list[tuple[str, str, str]]:
    """(row, dtype, missing WGSL function) for every pair the table accepts without a kernel."""
    gaps = []
    for row in rows:
        if row.wide or row.name in OTHER_PATH or (row.args and all(a == "bool" for a in row.args)):
            continue
        for dt, r in MULTI_LANE.items():
            if KIND[str(dt)] not in table.CATEGORIES[row.dtypes]:
                continue
            called = set(re.findall(r"\b(\w+)\s*\(", row.wide_expr(r.prefix)))
            for fn in sorted(called - _functions(r.functions)):
                gaps.append((row.name, str(dt), fn))
    return gaps


def test_every_accepted_multilane_pair_has_its_kernel() -> None:
    gaps = coverage_gaps(table.ELEMENTWISE + table.INTERNAL)
    assert not gaps, "op table rows accept dtypes whose WGSL library lacks the function: " + ", ".join(
        f"{r}[{d}] needs {f}" for r, d, f in gaps)


def test_a_row_without_its_function_is_found() -> None:
    fake = table.OpDef("reciprocal_nokernel", "elementwise", 1, "floating", "float", "reciprocal",
                       {"f": "f_divide(T(1), x)"})
    gaps = coverage_gaps((fake,))
    assert ("reciprocal_nokernel", "float64", "f64_reciprocal_nokernel") in gaps
    assert {d for _, d, _ in gaps} == {"float64", "complex64", "complex128"}


def test_other_paths_exist() -> None:
    names = {r.name for r in table.INTERNAL}
    assert set(OTHER_PATH) <= names
    from pyaccel.ops import wgsl_provider

    assert hasattr(wgsl_provider.WgslOps, "_arange_wide") and hasattr(wgsl_provider.WgslOps, "linspace")


@pytest.mark.parametrize("dt", sorted(MULTI_LANE, key=str), ids=str)
def test_library_functions_parse(dt) -> None:
    fns = _functions(MULTI_LANE[dt].functions)
    assert len(fns) > 10 and all(f.isidentifier() for f in fns)
