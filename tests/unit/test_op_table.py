"""The op table, the public namespace and the WGSL files agree (no device needed)."""

from __future__ import annotations

import importlib
import re
from importlib import resources

import pytest

import pyaccel
from pyaccel.ops import kernelgen as gen
from pyaccel.ops import table

OPS_DIR = resources.files("pyaccel.ops")
WGSL_FILES = {p.name[:-5] for p in OPS_DIR.iterdir() if p.name.endswith(".wgsl")}

# Array API 2023.12 function names pyaccel implements outside the table on purpose: none.
NOT_IN_TABLE: set[str] = set()
# data-type functions and the inspection entry point are not ops
NON_OPS = {"astype", "broadcast_shapes", "can_cast", "finfo", "iinfo", "isdtype", "result_type",
           "__array_namespace_info__"}


def _helpers(lib: str) -> set[str]:
    return set(re.findall(r"\bfn\s+(\w+)\s*\(", (OPS_DIR / f"{lib}.wgsl").read_text()))


def test_every_family_has_its_wgsl_files() -> None:
    for fam, files in table.FAMILIES.items():
        for f in files:
            assert f in WGSL_FILES, f"family {fam!r} needs pyaccel/ops/{f}.wgsl"
    used = {r.family for r in table.OPS}
    assert used <= set(table.FAMILIES), f"unknown families {used - set(table.FAMILIES)}"


def test_every_wgsl_file_belongs_to_a_family() -> None:
    owned = {f for files in table.FAMILIES.values() for f in files}
    assert WGSL_FILES <= owned, f"WGSL files no family lists: {WGSL_FILES - owned}"


def test_public_rows_are_in_their_namespace() -> None:
    for row in table.OPS:
        if not row.public:
            continue
        mod = importlib.import_module(row.module)
        fn = getattr(mod, row.name, None)
        assert callable(fn), f"{row.module}.{row.name} is in the op table but not in the namespace"


def test_namespace_functions_are_in_the_table() -> None:
    rows = {(r.module, r.name) for r in table.OPS if r.public}
    for modname in ("pyaccel", "pyaccel.linalg", "pyaccel.nn"):
        mod = importlib.import_module(modname)
        names = [n for n in getattr(mod, "__all__", []) if not n.startswith("_")]
        for n in names:
            obj = getattr(mod, n)
            if not callable(obj) or isinstance(obj, type) or n in NON_OPS:
                continue
            if getattr(obj, "__module__", "").split(".")[0] != "pyaccel":
                continue
            if modname == "pyaccel" and obj.__module__ not in (
                    "pyaccel.array", "pyaccel.creation", "pyaccel.elementwise", "pyaccel.manipulation",
                    "pyaccel.reductions", "pyaccel.linalg"):
                continue  # device/registry functions of the core API
            assert (modname, n) in rows, f"{modname}.{n} is public but has no op-table row"


def test_array_api_elementwise_names_present() -> None:
    spec = """abs acos acosh add asin asinh atan atan2 atanh bitwise_and bitwise_left_shift
    bitwise_invert bitwise_or bitwise_right_shift bitwise_xor ceil clip conj copysign cos cosh
    divide equal exp expm1 floor floor_divide greater greater_equal hypot imag isfinite isinf
    isnan less less_equal log log1p log2 log10 logaddexp logical_and logical_not logical_or
    logical_xor maximum minimum multiply negative not_equal positive pow real remainder round
    sign signbit sin sinh square sqrt subtract tan tanh trunc""".split()
    names = {r.name for r in table.ELEMENTWISE}
    assert set(spec) <= names, f"missing elementwise functions: {set(spec) - names}"


def test_array_api_other_names_present() -> None:
    spec = """arange asarray empty empty_like eye from_dlpack full full_like linspace meshgrid ones
    ones_like tril triu zeros zeros_like broadcast_arrays broadcast_to concat expand_dims flip
    moveaxis permute_dims repeat reshape roll squeeze stack tile unstack take argmax argmin
    nonzero searchsorted where unique_all unique_counts unique_inverse unique_values sort argsort
    max mean min prod std sum var cumulative_sum all any matmul matrix_transpose tensordot vecdot
    astype can_cast finfo iinfo isdtype result_type""".split()
    missing = [n for n in spec if not callable(getattr(pyaccel, n, None))]
    assert not missing, f"missing from the pyaccel namespace: {missing}"
    for c in ("e", "pi", "inf", "nan", "newaxis", "bool", "__array_api_version__"):
        assert hasattr(pyaccel, c)


@pytest.mark.parametrize("row", [r for r in table.ELEMENTWISE + table.INTERNAL if r.wgsl],
                         ids=lambda r: r.name)
def test_expressions_only_call_defined_helpers(row) -> None:
    builtins_ = {"abs", "floor", "ceil", "trunc", "round", "sqrt", "exp", "exp2", "log", "log2",
                 "max", "min", "select", "sign", "sin", "cos", "tan", "atan2", "bitcast", "T", "R",
                 "i32", "u32", "f32", "pack2x16float", "unpack2x16float"}
    for kind, expr in row.wgsl.items():
        lib = table.HELPER_LIBS["f" if kind == "h" else kind]
        defined = _helpers(lib) | builtins_
        called = set(re.findall(r"\b(\w+)\s*\(", expr)) - {"bitcast"}
        assert called <= defined, f"{row.name}[{kind}] calls undefined {called - defined}"
        assert re.fullmatch(r"[\w\s().,+\-*/<>=!&|^~%?:]+|.*bitcast<i32>.*", expr), expr


def test_rows_cover_their_categories() -> None:
    for row in table.ELEMENTWISE:
        kinds = table.CATEGORIES[row.dtypes]
        if row.args and all(a == "bool" for a in row.args):
            assert row.expr("b"), row.name
            continue
        for k in ("f", "i", "u", "b"):
            if row.dtypes == "floating":
                assert row.expr("f"), row.name
                break
            if k in kinds or (k == "u" and "b" in kinds and row.name != "bitwise_invert"):
                assert row.expr(k) is not None, f"{row.name} accepts kind {k!r} but has no WGSL for it"


def test_numpy_references_exist() -> None:
    np = pytest.importorskip("numpy")
    for row in table.OPS:
        if not row.numpy:
            assert row.module == "pyaccel.nn", f"{row.name} has no NumPy reference"
            continue
        obj = np
        for part in row.numpy.split("."):
            obj = getattr(obj, part, None)
            assert obj is not None, f"{row.name}: numpy.{row.numpy} does not exist"


def test_generated_source_is_deterministic_and_specialised() -> None:
    key = (("buf", "f32", "f32"), ("scalar", "f32", "f32"))
    a = gen.source("x + y", "f32", "f32", "float32", key, "linear", "")
    b = gen.source("x + y", "f32", "f32", "float32", key, "linear", "")
    assert a == b
    assert a.startswith("alias T = f32;")
    assert "bitcast<f32>(p.aux.y)" in a and "x0[o.x]" in a
    i8 = gen.source("x + y", "i32", "i32", "int8", (("buf", "i32", "i32"),) * 2, "linear", "")
    assert "(r << 24u) >> 24u" in i8
    h = gen.source("x", "f32", "f16", "float16", (("buf", "f16", "f32"),), "linear", "")
    assert h.startswith("enable f16;")
    lin = gen.source("x + y", "f32", "f32", "float32", key, "linear", "", True)
    assert "x0[i]" in lin and "x0[o.x]" not in lin  # contiguous operands: vectorisable loads


def test_collapse_merges_contiguous_dims() -> None:
    shape, st = gen.collapse([2, 3, 4], [[12, 4, 1], [12, 4, 1]])
    assert shape == [24] and st == [[1], [1]]
    shape, st = gen.collapse([2, 1, 4], [[4, 4, 1], [0, 0, 1]])
    assert shape == [2, 4] and st == [[4, 1], [0, 1]]
