"""The op table: every public array function described as data.

One :class:`OpDef` row per function: its public name and module, arity, the dtype
category it accepts, how its result dtype follows from the inputs, the kernel family
that runs it on WebGPU devices, the NumPy function that is its reference (and the cpu
implementation), and, for the elementwise family, one WGSL expression per compute kind.

Elementwise expressions are written over the operands ``x``, ``y``, ``z`` (already
converted to the compute type ``T``: ``f32`` for float16/float32 data, ``i32`` for
int8/16/32, ``u32`` for uint8/16/32 and bool) and may call the helpers of the kind's
library (``f_*`` in ``ew_float.wgsl``, ``i_*`` in ``ew_sint.wgsl``, ``u_*`` in
``ew_uint.wgsl``), ``i`` (the linear output index) and the parameter block ``p``. The
generator in :mod:`pyaccel.ops.kernelgen` turns a row into one kernel per
(op, dtypes); because rows are plain expressions, a chain of rows can later be fused
into one kernel by nesting them (``let t = <row1>; ... <row2 over t>``).

Compute kinds: ``f`` (float), ``h`` (float16 data computing in f32: falls back to ``f``),
``i`` (signed int), ``u`` (unsigned int), ``b`` (bool, stored as u32 0/1; falls back to
the ``u`` expression when a row has no ``b`` entry). Multi-lane dtypes (int64, uint64,
float64, complex64, complex128 on WebGPU devices) use :meth:`OpDef.wide_expr`: the row's
generic ``wide`` expression for rows that only move elements, else ``<prefix><name>(x, y)`` from the
dtype's library (``i64_add`` in ``ew_i64.wgsl``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..dtypes import DTYPE_TABLE, MULTI_LANE, WGSL_FUNCTIONS

# the multi-lane dtypes' libraries (ew_i64, ew_u64, ew_f64, ew_c64, ew_c128); that each file
# exists is checked by tests/unit/test_op_table.py (no file system access at import)
_WIDE_LIBS = tuple(dict.fromkeys(r.functions for r in MULTI_LANE.values() if r.functions))

# Kernel families and the WGSL files (pyaccel/ops/<name>.wgsl) that implement them.
FAMILIES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "elementwise": ("elementwise", "ew_float", "ew_sint", "ew_uint", *_WIDE_LIBS),
    "creation": ("elementwise",),  # fill / arange / linspace / eye / tril / triu: generated compute
    "gather": ("elementwise",),  # strided / broadcast / indexed copies (indexing, manipulation)
    "reduction": ("prelude", "reduce", "reduce64", "argreduce"),  # pyaccel.ops.gpu_kernels (prelude.wgsl: shared)
    "scan": ("prelude", "scan"),
    "matmul": ("matmul", "matmul_v4"),
    "softmax": ("softmax",),
    "sort": ("sort",),
    "search": ("search",),  # searchsorted (binary search per value), isin
    "linalg": ("linalg_blocked", "linalg_lu", "linalg_qr", "linalg_jacobi"),  # pyaccel.ops.linalg_wgsl
    "fft": ("fft",),  # pyaccel.fft: Stockham / Bluestein passes (ops/fft_wgsl.py)
    "composite": (),  # built from other ops (no kernel of its own)
    "host": (),  # data-dependent shapes: NumPy / pure Python after a device sync on GPUs
})

# WGSL helper library per compute kind (from the dtype table's compute type -> function file).
HELPER_LIBS: Mapping[str, str] = MappingProxyType({
    "f": WGSL_FUNCTIONS["f32"], "i": WGSL_FUNCTIONS["i32"], "u": WGSL_FUNCTIONS["u32"],
    "b": WGSL_FUNCTIONS["u32"]})

# dtype categories (Array API names) -> dtype kinds accepted ("b" bool, "i", "u", "f", "c" complex)
CATEGORIES: Mapping[str, str] = MappingProxyType({
    "any": "biufc",
    "numeric": "iufc",
    "real": "iuf",
    "integer": "iu",
    "integer_or_bool": "biu",
    "bool": "b",
    "floating": "fc",  # integer / bool inputs are promoted to the device's default float
    "real_floating": "f",  # as "floating", but complex input is a TypeError (atan2, hypot, ...)
})
# categories whose integer / bool inputs compute in the device's default float
FLOAT_CATEGORIES = frozenset({"floating", "real_floating"})

# Test tolerance classes for float32 results: (rtol, atol). float16 uses (1e-2, 1e-3).
# The one tolerance table, (rtol, atol): per op accuracy class (an OpDef's ``tol``) and per
# dtype (pyaccel.testing.tolerance: oracle comparisons of kernels). Integers and bool: exact.
TOLERANCES: Mapping[str, tuple[float, float]] = MappingProxyType({
    # per dtype (the dtype table's ``tol``)
    **{d.name: r.tol for d, r in DTYPE_TABLE.items()},
    # per op accuracy class
    "exact": (0.0, 0.0),
    "arith": (1e-6, 0.0),  # one rounding (WGSL allows 2.5 ULP for division)
    "transcendental": (2e-5, 1e-6),  # exp/log family (WGSL: a few ULP, absolute near 0)
    "trig": (2e-5, 2.0**-11),  # WGSL sin/cos: absolute error 2^-11 on [-pi, pi]
    "pow": (1e-4, 1e-6),  # exp2(y * log2(x))
    "divmod": (1e-5, 1e-6),  # floor_divide / remainder: may differ when x / y is near an integer
})


@dataclass(frozen=True)
class OpDef:
    """One public array function."""

    name: str
    family: str
    arity: int
    dtypes: str  # key of CATEGORIES
    # "same" | "bool" | "float" | "index" | "sum" | "x" | "none" | "realpart" (the real dtype of
    # a complex input: abs, real, imag; real inputs keep their dtype) | "complex" (the complex
    # dtype of the input's precision: linalg.eig, eigvals)
    result: str
    numpy: str  # NumPy reference: attribute path under numpy ("" when NumPy has none)
    wgsl: Mapping[str, str] = field(default_factory=dict)  # compute kind -> expression
    args: tuple[str, ...] = ()  # per-operand conversion: "T" (default) or "bool"
    module: str = "pyaccel"  # public namespace ("" for internal kernels)
    tol: str = "exact"
    domain: str = "any"  # test-data hint: any | positive | unit | ge1 | small | trig | shift | nonzero
    doc: str = ""
    wide: str = ""  # expression for every multi-lane dtype (rows that only move elements), or ""

    @property
    def public(self) -> bool:
        return bool(self.module)

    def wide_expr(self, prefix: str) -> str:
        """WGSL expression of the row for a multi-lane compute dtype (int64, uint64, float64,
        complex): the row's generic ``wide`` expression (element moves: where, copies, fills), else a
        call of the dtype library's function ``<prefix><name>(x, y, ...)`` (COMMON contract 2)."""
        if self.wide:
            return self.wide
        return f"{prefix}{self.name}({', '.join(('x', 'y', 'z')[: self.arity])})"

    def expr(self, kind: str) -> str | None:
        """WGSL expression for a compute kind (``h``, float16 data, falls back to ``f``;
        ``b`` falls back to ``u``)."""
        e = self.wgsl.get(kind)
        if e is None and kind == "h":
            e = self.wgsl.get("f")
        if e is None and kind == "b":
            e = self.wgsl.get("u") if "b" in CATEGORIES[self.dtypes] else None
        return e


def _ew(name: str, arity: int, dtypes: str, result: str, numpy: str, wgsl: dict[str, str], *,
        args: tuple[str, ...] = (), tol: str = "exact", domain: str = "any", module: str = "pyaccel",
        family: str = "elementwise", doc: str = "", wide: str = "") -> OpDef:
    return OpDef(name, family, arity, dtypes, result, numpy, MappingProxyType(wgsl), args, module,
                 tol, domain, doc, wide)


def _f(expr: str) -> dict[str, str]:
    return {"f": expr}


def _all(expr: str) -> dict[str, str]:
    return {"f": expr, "i": expr, "u": expr}


def _num(f: str, i: str, u: str) -> dict[str, str]:
    return {"f": f, "i": i, "u": u}


_B = ("bool", "bool")

ELEMENTWISE: tuple[OpDef, ...] = (
    # -- arithmetic ------------------------------------------------------------
    _ew("abs", 1, "numeric", "realpart", "abs", _num("abs(x)", "abs(x)", "x")),
    _ew("negative", 1, "numeric", "same", "negative", _num("-x", "-x", "0u - x")),
    _ew("positive", 1, "numeric", "same", "positive", _all("x"), wide="x"),
    _ew("sign", 1, "numeric", "same", "sign", _num("f_sign(x)", "sign(x)", "select(0u, 1u, x > 0u)")),
    _ew("square", 1, "numeric", "same", "square", _all("x * x"), tol="arith"),
    _ew("add", 2, "numeric", "same", "add", _all("x + y"), tol="arith"),
    _ew("subtract", 2, "numeric", "same", "subtract", _all("x - y"), tol="arith"),
    _ew("multiply", 2, "numeric", "same", "multiply", _all("x * y"), tol="arith"),
    _ew("divide", 2, "floating", "float", "divide", _f("f_divide(x, y)"), tol="arith"),
    _ew("reciprocal", 1, "floating", "float", "reciprocal", _f("f_divide(T(1), x)"), tol="arith"),
    _ew("pow", 2, "numeric", "same", "pow", _num("f_pow(x, y)", "i_pow(x, y)", "u_pow(x, y)"),
        tol="pow", domain="pow"),
    _ew("floor_divide", 2, "real", "same", "floor_divide",
        _num("f_floor_divide(x, y)", "i_floor_divide(x, y)", "u_floor_divide(x, y)"),
        tol="divmod", domain="nonzero"),
    _ew("remainder", 2, "real", "same", "remainder",
        _num("f_remainder(x, y)", "i_remainder(x, y)", "u_remainder(x, y)"),
        tol="divmod", domain="nonzero"),
    _ew("maximum", 2, "real", "same", "maximum", _num("f_maximum(x, y)", "max(x, y)", "max(x, y)")),
    _ew("minimum", 2, "real", "same", "minimum", _num("f_minimum(x, y)", "min(x, y)", "min(x, y)")),
    _ew("clip", 3, "real", "same", "clip",
        _num("f_clip(x, y, z)", "min(max(x, y), z)", "min(max(x, y), z)")),
    # -- rounding --------------------------------------------------------------
    _ew("floor", 1, "real", "same", "floor", _num("f_floor(x)", "x", "x")),
    _ew("ceil", 1, "real", "same", "ceil", _num("f_ceil(x)", "x", "x")),
    _ew("trunc", 1, "real", "same", "trunc", _num("f_trunc(x)", "x", "x")),
    _ew("round", 1, "numeric", "same", "round", _num("f_round(x)", "x", "x")),
    # -- exponential / logarithmic ---------------------------------------------
    _ew("sqrt", 1, "floating", "float", "sqrt", _f("f_sqrt(x)"), tol="arith", domain="positive"),
    _ew("exp", 1, "floating", "float", "exp", _f("f_exp(x)"), tol="transcendental", domain="small"),
    _ew("expm1", 1, "floating", "float", "expm1", _f("f_expm1(x)"), tol="transcendental",
        domain="small"),
    _ew("log", 1, "floating", "float", "log", _f("f_log(x)"), tol="transcendental", domain="positive"),
    _ew("log1p", 1, "floating", "float", "log1p", _f("f_log1p(x)"), tol="transcendental",
        domain="positive"),
    _ew("log2", 1, "floating", "float", "log2", _f("f_log2(x)"), tol="transcendental",
        domain="positive"),
    _ew("log10", 1, "floating", "float", "log10", _f("f_log10(x)"), tol="transcendental",
        domain="positive"),
    _ew("logaddexp", 2, "real_floating", "float", "logaddexp", _f("f_logaddexp(x, y)"),
        tol="transcendental"),
    # -- trigonometric / hyperbolic --------------------------------------------
    _ew("sin", 1, "floating", "float", "sin", _f("f_sin(x)"), tol="trig", domain="trig"),
    _ew("cos", 1, "floating", "float", "cos", _f("f_cos(x)"), tol="trig", domain="trig"),
    _ew("tan", 1, "floating", "float", "tan", _f("f_tan(x)"), tol="trig", domain="unit"),
    _ew("asin", 1, "floating", "float", "asin", _f("f_asin(x)"), tol="trig", domain="unit"),
    _ew("acos", 1, "floating", "float", "acos", _f("f_acos(x)"), tol="trig", domain="unit"),
    _ew("atan", 1, "floating", "float", "atan", _f("f_atan(x)"), tol="trig"),
    _ew("atan2", 2, "real_floating", "float", "atan2", _f("f_atan2(x, y)"), tol="trig"),
    _ew("sinh", 1, "floating", "float", "sinh", _f("f_sinh(x)"), tol="transcendental",
        domain="small"),
    _ew("cosh", 1, "floating", "float", "cosh", _f("f_cosh(x)"), tol="transcendental",
        domain="small"),
    _ew("tanh", 1, "floating", "float", "tanh", _f("f_tanh(x)"), tol="transcendental"),
    _ew("asinh", 1, "floating", "float", "asinh", _f("f_asinh(x)"), tol="transcendental"),
    _ew("acosh", 1, "floating", "float", "acosh", _f("f_acosh(x)"), tol="transcendental",
        domain="ge1"),
    _ew("atanh", 1, "floating", "float", "atanh", _f("f_atanh(x)"), tol="transcendental",
        domain="unit"),
    # -- float bits --------------------------------------------------------------
    _ew("copysign", 2, "real_floating", "float", "copysign", _f("f_copysign(x, y)")),
    _ew("hypot", 2, "real_floating", "float", "hypot", _f("f_hypot(x, y)"), tol="arith"),
    _ew("nextafter", 2, "real_floating", "float", "nextafter",
        {"f": "f_nextafter(x, y)", "h": "f_nextafter16(x, y)"}),
    _ew("signbit", 1, "real_floating", "bool", "signbit", _f("f_signbit(x)")),
    _ew("isnan", 1, "numeric", "bool", "isnan", _num("f_isnan(x)", "false", "false")),
    _ew("isinf", 1, "numeric", "bool", "isinf", _num("f_isinf(x)", "false", "false")),
    _ew("isfinite", 1, "numeric", "bool", "isfinite", _num("f_isfinite(x)", "true", "true")),
    # -- comparison ----------------------------------------------------------------
    _ew("equal", 2, "any", "bool", "equal", _all("x == y")),
    _ew("not_equal", 2, "any", "bool", "not_equal", _num("f_ne(x, y)", "x != y", "x != y")),
    _ew("less", 2, "real", "bool", "less", _all("x < y")),
    _ew("less_equal", 2, "real", "bool", "less_equal", _all("x <= y")),
    _ew("greater", 2, "real", "bool", "greater", _all("x > y")),
    _ew("greater_equal", 2, "real", "bool", "greater_equal", _all("x >= y")),
    # -- logical (any dtype; operands are truth values) ------------------------------
    _ew("logical_not", 1, "any", "bool", "logical_not", {"b": "!x"}, args=("bool",)),
    _ew("logical_and", 2, "any", "bool", "logical_and", {"b": "x && y"}, args=_B),
    _ew("logical_or", 2, "any", "bool", "logical_or", {"b": "x || y"}, args=_B),
    _ew("logical_xor", 2, "any", "bool", "logical_xor", {"b": "x != y"}, args=_B),
    # -- bitwise -----------------------------------------------------------------------
    _ew("bitwise_and", 2, "integer_or_bool", "same", "bitwise_and", {"i": "x & y", "u": "x & y"}),
    _ew("bitwise_or", 2, "integer_or_bool", "same", "bitwise_or", {"i": "x | y", "u": "x | y"}),
    _ew("bitwise_xor", 2, "integer_or_bool", "same", "bitwise_xor", {"i": "x ^ y", "u": "x ^ y"}),
    _ew("bitwise_invert", 1, "integer_or_bool", "same", "bitwise_invert",
        {"i": "~x", "u": "~x", "b": "x ^ 1u"}),
    _ew("bitwise_left_shift", 2, "integer", "same", "bitwise_left_shift",
        {"i": "i_left_shift(x, y)", "u": "u_left_shift(x, y)"}, domain="shift"),
    _ew("bitwise_right_shift", 2, "integer", "same", "bitwise_right_shift",
        {"i": "i_right_shift(x, y)", "u": "u_right_shift(x, y)"}, domain="shift"),
    # -- selection / complex parts of real data -----------------------------------------
    _ew("where", 3, "any", "same23", "where", _all("select(z, y, x)"), wide="select(z, y, x)",
        args=("bool", "T", "T")),
    _ew("conj", 1, "numeric", "same", "conj", _all("x")),
    _ew("real", 1, "numeric", "realpart", "real", _all("x")),
    _ew("imag", 1, "numeric", "realpart", "imag", _all("T(0)")),
)

# Internal kernels of the same skeleton: astype, copies, creation.
_TRI = "i32(i % p.prm.x) - i32((i / p.prm.x) % p.prm.y)"
INTERNAL: tuple[OpDef, ...] = (
    _ew("cast", 1, "any", "target", "astype", _all("x"), wide="x", module="", family="gather"),
    _ew("cast_bool", 1, "any", "bool", "astype", {"b": "x"}, args=("bool",), module="",
        family="gather"),
    _ew("copy", 1, "any", "same", "copy", _all("x"), wide="x", module="", family="gather"),
    _ew("fill", 1, "any", "same", "full", _all("x"), wide="x", module="", family="creation"),
    _ew("arange_kernel", 2, "real", "same", "arange", _num("x + T(i) * y", "x + T(i) * y",
                                                            "x + T(i) * y"),
        module="", family="creation", tol="arith"),
    _ew("linspace_kernel", 3, "floating", "same", "linspace",
        _f("select(x + T(i) * y, z, i + 1u == p.n)"), module="", family="creation", tol="arith"),
    _ew("eye_kernel", 0, "any", "same", "eye",
        _all("(i32(i % p.prm.x) - i32(i / p.prm.x)) == bitcast<i32>(p.prm.z)"),
        # multi-lane: x is the scalar one of the dtype
        wide="select(T(0), x, (i32(i % p.prm.x) - i32(i / p.prm.x)) == bitcast<i32>(p.prm.z))",
        module="", family="creation"),
    _ew("tril", 1, "any", "same", "tril", _all(f"select(T(0), x, {_TRI} <= bitcast<i32>(p.prm.z))"),
        wide=f"select(T(0), x, {_TRI} <= bitcast<i32>(p.prm.z))", family="creation"),
    _ew("triu", 1, "any", "same", "triu", _all(f"select(T(0), x, {_TRI} >= bitcast<i32>(p.prm.z))"),
        wide=f"select(T(0), x, {_TRI} >= bitcast<i32>(p.prm.z))", family="creation"),
)


def _op(name: str, family: str, arity: int, dtypes: str, result: str, numpy: str,
        module: str = "pyaccel") -> OpDef:
    return OpDef(name, family, arity, dtypes, result, numpy, MappingProxyType({}), (), module)


# Everything else in the namespace: data, not kernels of this skeleton.
OTHER: tuple[OpDef, ...] = (
    # creation
    _op("asarray", "host", 1, "any", "x", "asarray"),
    _op("empty", "host", 0, "any", "x", "empty"),
    _op("empty_like", "host", 1, "any", "x", "empty_like"),
    _op("zeros", "creation", 0, "any", "x", "zeros"),
    _op("zeros_like", "creation", 1, "any", "x", "zeros_like"),
    _op("ones", "creation", 0, "any", "x", "ones"),
    _op("ones_like", "creation", 1, "any", "x", "ones_like"),
    _op("full", "creation", 0, "any", "x", "full"),
    _op("full_like", "creation", 1, "any", "x", "full_like"),
    _op("arange", "creation", 0, "real", "x", "arange"),
    _op("linspace", "creation", 0, "numeric", "x", "linspace"),
    _op("eye", "creation", 0, "any", "x", "eye"),
    _op("meshgrid", "composite", 1, "any", "x", "meshgrid"),
    _op("from_dlpack", "host", 1, "any", "x", "from_dlpack"),
    # manipulation
    _op("reshape", "gather", 1, "any", "same", "reshape"),
    _op("permute_dims", "gather", 1, "any", "same", "permute_dims"),
    _op("expand_dims", "gather", 1, "any", "same", "expand_dims"),
    _op("squeeze", "gather", 1, "any", "same", "squeeze"),
    _op("broadcast_to", "gather", 1, "any", "same", "broadcast_to"),
    _op("broadcast_arrays", "gather", 1, "any", "same", "broadcast_arrays"),
    _op("concat", "gather", 1, "any", "same", "concat"),
    _op("stack", "gather", 1, "any", "same", "stack"),
    _op("flip", "gather", 1, "any", "same", "flip"),
    _op("roll", "gather", 1, "any", "same", "roll"),
    _op("astype", "gather", 1, "any", "target", "astype"),
    _op("matrix_transpose", "gather", 1, "any", "same", "matrix_transpose"),
    _op("moveaxis", "gather", 1, "any", "same", "moveaxis"),
    _op("unstack", "gather", 1, "any", "same", "unstack"),
    _op("tile", "gather", 1, "any", "same", "tile"),
    _op("repeat", "gather", 1, "any", "same", "repeat"),
    _op("take", "gather", 2, "any", "same", "take"),
    _op("take_along_axis", "gather", 2, "any", "same", "take_along_axis"),
    # statistics / utility (pyaccel.ops.gpu_kernels)
    _op("sum", "reduction", 1, "numeric", "sum", "sum"),
    _op("prod", "reduction", 1, "numeric", "sum", "prod"),
    _op("min", "reduction", 1, "real", "same", "min"),
    _op("max", "reduction", 1, "real", "same", "max"),
    _op("mean", "reduction", 1, "floating", "float", "mean"),
    _op("var", "reduction", 1, "real_floating", "float", "var"),
    _op("std", "reduction", 1, "real_floating", "float", "std"),
    _op("argmin", "reduction", 1, "real", "index", "argmin"),
    _op("argmax", "reduction", 1, "real", "index", "argmax"),
    _op("any", "reduction", 1, "any", "bool", "any"),
    _op("all", "reduction", 1, "any", "bool", "all"),
    _op("count_nonzero", "reduction", 1, "any", "index", "count_nonzero"),
    _op("cumulative_sum", "scan", 1, "numeric", "sum", "cumulative_sum"),
    _op("cumulative_prod", "scan", 1, "numeric", "sum", "cumulative_prod"),
    _op("diff", "composite", 1, "numeric", "same", "diff"),
    _op("sort", "sort", 1, "real", "same", "sort"),
    _op("argsort", "sort", 1, "real", "index", "argsort"),
    # searching / sets (data-dependent shapes: a device sync on GPUs)
    _op("nonzero", "host", 1, "any", "index", "nonzero"),
    _op("searchsorted", "search", 2, "real", "index", "searchsorted"),
    _op("isin", "search", 2, "numeric", "bool", "isin"),  # sort + searchsorted + gather
    _op("unique_all", "host", 1, "any", "same", "unique_all"),
    _op("unique_counts", "host", 1, "any", "same", "unique_counts"),
    _op("unique_inverse", "host", 1, "any", "same", "unique_inverse"),
    _op("unique_values", "host", 1, "any", "same", "unique_values"),
    # linear algebra
    _op("matmul", "matmul", 2, "numeric", "same", "matmul"),
    _op("tensordot", "matmul", 2, "numeric", "same", "tensordot"),
    _op("vecdot", "composite", 2, "numeric", "same", "vecdot"),
    _op("matmul", "matmul", 2, "numeric", "same", "linalg.matmul", module="pyaccel.linalg"),
    _op("matrix_transpose", "gather", 1, "any", "same", "linalg.matrix_transpose",
        module="pyaccel.linalg"),
    _op("tensordot", "matmul", 2, "numeric", "same", "linalg.tensordot", module="pyaccel.linalg"),
    _op("vecdot", "composite", 2, "numeric", "same", "linalg.vecdot", module="pyaccel.linalg"),
    _op("diagonal", "gather", 1, "any", "same", "linalg.diagonal", module="pyaccel.linalg"),
    _op("trace", "composite", 1, "numeric", "sum", "linalg.trace", module="pyaccel.linalg"),
    _op("outer", "composite", 2, "numeric", "same", "linalg.outer", module="pyaccel.linalg"),
    _op("vector_norm", "composite", 1, "floating", "float", "linalg.vector_norm",
        module="pyaccel.linalg"),
    _op("matrix_norm", "composite", 1, "floating", "float", "linalg.matrix_norm",
        module="pyaccel.linalg"),
    # the factorizations (pyaccel.ops.linalg_wgsl kernels) and what is built on them
    *(_op(n, "linalg", a, "floating", r, f"linalg.{n}", module="pyaccel.linalg") for n, a, r in (
        ("cholesky", 1, "same"), ("solve", 2, "same"), ("inv", 1, "same"), ("det", 1, "same"),
        ("slogdet", 1, "same"), ("qr", 1, "same"), ("eigh", 1, "same"), ("eigvalsh", 1, "float"),
        ("svd", 1, "same"), ("svdvals", 1, "float"))),
    # general eigenproblems (2025.12 draft): LAPACK geev on the host for every device, complex results
    *(_op(n, "host", 1, "floating", "complex", f"linalg.{n}", module="pyaccel.linalg")
      for n in ("eig", "eigvals")),
    *(_op(n, "composite", a, d, r, f"linalg.{n}", module="pyaccel.linalg") for n, a, d, r in (
        ("cross", 2, "numeric", "same"), ("matrix_power", 1, "numeric", "same"),
        ("matrix_rank", 1, "floating", "index"), ("pinv", 1, "floating", "same"))),
    # nn
    # (no NumPy function: pyaccel.nn's cpu path is the max-shifted NumPy formula)
    _op("softmax", "softmax", 1, "real_floating", "float", "", module="pyaccel.nn"),
    _op("log_softmax", "softmax", 1, "real_floating", "float", "", module="pyaccel.nn"),
    _op("logsumexp", "softmax", 1, "real_floating", "float", "", module="pyaccel.nn"),
)

OPS: tuple[OpDef, ...] = ELEMENTWISE + INTERNAL + OTHER
_BY_NAME: dict[str, OpDef] = {}
for _row in OPS:  # kernel rows first, then the rest (a name's first row wins)
    _BY_NAME.setdefault(_row.name, _row)


def get(name: str) -> OpDef:
    """The row of an op (elementwise/internal kernels first)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no op named {name!r} in the op table") from None


def elementwise_public() -> list[OpDef]:
    return [r for r in ELEMENTWISE if r.public]
