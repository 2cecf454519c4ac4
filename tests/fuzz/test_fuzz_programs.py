"""Differential fuzzing: random Array API programs on every device vs NumPy (issue 9).

Hypothesis builds random *programs*: 3-8 Array API calls over a small pool of arrays of
random shapes (0-d to 3-d, size-0 and size-1 dimensions, broadcasting-compatible partners)
and dtypes (bool, int8-32, uint8-32, float32; float16 where the device has
``Capability.F16``; int64/uint64/float64 where the device holds them: ``cpu:0``, and GPU
devices, which emulate them in WGSL; in the fused mode their cheap rows and casts fuse
like the 32-bit ones, docs/fusion.md "Multi-lane dtypes"). Steps: elementwise unary and binary functions (with broadcasting), operators
with Python scalars, reductions with ``axis``/``keepdims``, slicing, integer and boolean
indexing, in-place updates (``x[idx] = v``, ``x += y``), ``where``, ``concat``/``stack``,
``reshape``/``permute_dims``/``flip``/``roll``/``take``/``squeeze``/``expand_dims``,
``astype``, ``clip``, shifts, ``matmul``, ``sort``/``argsort``, ``cumulative_sum``,
``nonzero``, ``unique_values``, ``count_nonzero``, ``nn.softmax``/``nn.logsumexp`` and
creation (``arange``, ``linspace``, ``eye``, ``full``).

Each step runs on the device and on NumPy (the oracle) and is compared at once:

* dtypes must agree; on a device without a 64-bit dtype the oracle's 64-bit dtypes map to
  the device's 32-bit ones (float64 -> float32, int64 -> int32, uint64 -> uint32), and a
  step whose NumPy result is 64-bit may raise ``UnsupportedDTypeError`` there (documented in
  docs/arrays.md); where the device's default float is float32 (float64 emulated: the dtype
  policy, issue 21) a float64 / complex128 NumPy result is expected in the default float /
  complex dtype unless it is typed: the step's input arrays promote to it (float64 inputs,
  ``int32 + float32``, ``int8 + uint64``) or the call names it (``astype(x, float64)``); so
  ``int8_array * 0.5``, ``mean`` of ints, int / int, ``linspace`` without dtype give float32;
* values: exact for integers and bools, ``pyaccel.testing`` per-dtype tolerances for
  floats, NaN positions must match;
* errors: both raise, or neither; a device error must be typed (a pyaccel error or a
  builtin ``ValueError``/``TypeError``/``IndexError``/...), never a raw wgpu error.

Every program runs twice on a GPU device: with lazy elementwise fusion on (docs/fusion.md;
each step's lazy result is read through ``fusion.evaluate``, a copy, so the device-side
chain stays lazy and later steps grow its tree; at the end every entry still lazy is
materialised and compared again) and with it off (``pyaccel.fusion(False)``); a third
mode, ``jit``, runs the printed program as one function through ``pyaccel.jit`` (trace and a
replay on fresh leaves with a poisoned pool, bit for bit the un-jitted run of the same lines;
a data-dependent step must raise ``JitError``: :func:`check_jit`). Under ``CI=true`` the
fused and eager modes run half of ``FUZZ_CI_EXAMPLES`` each, jit a fifth.

When a float result matches within tolerance but not bit for bit, the device copy is
replaced by the oracle's values before the next step, so later discrete steps
(comparisons, sort order, casts) see identical inputs on both sides.

Comparisons skipped, each an implementation-defined case documented in docs/arrays.md or
the Array API standard (nothing else is filtered): an ``OverflowError`` for a Python int
out of the array dtype's range (``uint8_array > -1``: NumPy 2 compares, pyaccel raises as
docs/arrays.md says; the standard leaves it unspecified); ``var``/``std`` elements where
NumPy's own computation in the input dtype overflows (squares of ~1e30 in float32) while
the float64 oracle does not; float -> int ``astype`` of NaN, +-inf or
out-of-range values (those elements only); where NaNs land in a *descending* sort (the
values elsewhere are still compared); ``sin``/``cos`` are only generated on data within
[-10, 10] (WebGPU's accuracy bound has no range reduction for huge arguments). Integer
``//`` and ``%`` by zero are compared: pyaccel documents NumPy's result (0).

Budgets (hypothesis profiles, ``tests/conftest.py``): ``ci`` (``CI=true``) runs
``FUZZ_CI_EXAMPLES`` programs per device, ``dev`` (the default) 50, and a long run with a
fixed budget of 1000 programs per device is::

    HYPOTHESIS_PROFILE=exhaustive python -m pytest tests/fuzz -m fuzz -q

``PYACCEL_FUZZ_EXAMPLES=N`` overrides the count of any profile;
``PYACCEL_FUZZ_COLLECT=FILE`` records every failing program in FILE and goes on instead of
failing (how tests/fuzz/FINDINGS.md was made). A failure prints the
program (hypothesis ``note``) as Python lines that reproduce it.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, note, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import pyaccel as xp  # noqa: E402
from pyaccel import Capability, PyaccelError, UnsupportedDTypeError  # noqa: E402
from pyaccel.ops import fusion as _fusion  # noqa: E402
from pyaccel.testing import tolerance  # noqa: E402

pytestmark = pytest.mark.fuzz

FUZZ_CI_EXAMPLES = 100  # per device; about 5-30 s each on lavapipe/llvmpipe
_env_examples = os.environ.get("PYACCEL_FUZZ_EXAMPLES")


def _examples() -> int | None:
    if _env_examples:
        return int(_env_examples)
    if settings.get_current_profile_name() == "ci":
        return FUZZ_CI_EXAMPLES
    return None  # the profile's own count


GPU_DTYPES = ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32"]
CPU_EXTRA = ["int64", "uint64", "float64", "float16"]
TYPED_BUILTINS = (ValueError, TypeError, IndexError, LookupError, ArithmeticError, MemoryError,
                  NotImplementedError)
_MAP64 = {"float64": "float32", "int64": "int32", "uint64": "uint32"}


def device_dtypes(dev: Any) -> list[str]:
    """The fuzzed dtypes the device holds (from its capabilities: GPUs emulate 64-bit types)."""
    caps = dev.capabilities
    extra = {"int64": Capability.INT64 in caps, "uint64": Capability.INT64 in caps,
             "float64": Capability.FLOAT64 in caps, "float16": Capability.F16 in caps}
    return GPU_DTYPES + [d for d in CPU_EXTRA if extra[d]]


class Mismatch(AssertionError):
    pass


@dataclass
class Entry:
    name: str
    a: np.ndarray  # oracle value
    x: Any  # device Array
    fresh: bool = True  # owns its memory on both sides (may be updated in place)


def kind(dt: Any) -> str:
    k = np.dtype(dt).kind
    return {"b": "b", "i": "i", "u": "i", "f": "f"}[k]


# ---------------------------------------------------------------------------
# random data
# ---------------------------------------------------------------------------
def make_values(rng: np.random.Generator, shape: tuple[int, ...], dt: str, special: bool) -> np.ndarray:
    d = np.dtype(dt)
    if d.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if d.kind in "iu":
        info = np.iinfo(d)
        v = rng.integers(max(info.min, -6), min(info.max, 9) + 1, shape)
        out = np.asarray(v).astype(d)
        if special and out.size:
            edges = np.array([info.min, info.max, 0, 1, info.max - 1, max(info.min, -1)], dtype=d)
            m = rng.random(shape) < 0.3
            out[m] = rng.choice(edges, int(m.sum()))
        return out
    v = np.asarray(rng.integers(-32, 33, shape) / 4.0).astype(d)
    if special and v.size:
        sp = np.array([np.nan, np.inf, -np.inf, -0.0, 1e30 if d.itemsize >= 4 else 6e4, 0.5], dtype=d)
        m = rng.random(shape) < 0.2
        v[m] = rng.choice(sp, int(m.sum()))
    return v


def shape_str(s: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"


def render_array(a: np.ndarray) -> str:
    body = np.array2string(a, separator=", ", threshold=10**6, max_line_width=10**6,
                           formatter={"float_kind": repr, "int_kind": str, "bool": str})
    body = body.replace("nan", "np.nan").replace("inf", "np.inf")
    if a.ndim == 0:
        return f"np.asarray({body}, dtype=np.{a.dtype.name})"
    return f"np.asarray({body}, dtype=np.{a.dtype.name}).reshape({shape_str(a.shape)})"


# ---------------------------------------------------------------------------
# the two sides
# ---------------------------------------------------------------------------
def np_sort(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    s = np.sort(a, axis=axis, stable=True)
    return np.flip(s, axis=axis) if descending else s


def _acc(fn, a: np.ndarray, *rest: Any, **kw: Any) -> np.ndarray:
    """Oracle of an accumulating op (sum, scan, matmul, mean, var): float inputs are computed
    in float64 and rounded to NumPy's result dtype once. (pyaccel accumulates float16 in
    float32 on every device; a parallel GPU sum rounds in another order than NumPy's.)"""
    plain = fn(a, *rest, **kw)
    dt = np.asarray(plain).dtype
    if dt.kind != "f":
        return plain
    up = [r.astype(np.float64) if isinstance(r, np.ndarray) and r.dtype.kind == "f" else r for r in rest]
    a64 = a.astype(np.float64) if a.dtype.kind == "f" else a
    return np.asarray(fn(a64, *up, **kw)).astype(dt)


def acc_tol(dt: Any, n: int, *arrays: np.ndarray, square: bool = False) -> tuple[float, float]:
    """(rtol, atol) for a float result accumulated over ``n`` terms: the dtype's tolerance
    plus 4 sqrt(n) eps times the size of the terms (sum of |x|, or of x**2 for var)."""
    rtol, atol = tolerance(np.dtype(dt).name) if np.dtype(dt).kind == "f" else (0.0, 0.0)
    if np.dtype(dt).kind != "f":
        return rtol, atol
    eps = float(np.finfo(dt).eps)

    def finite_abs(x: np.ndarray) -> np.ndarray:
        x64 = np.abs(x.astype(np.float64)).ravel()
        return x64[np.isfinite(x64)]

    parts = [finite_abs(x) for x in arrays]
    if not parts or any(q.size == 0 for q in parts):
        scale = 0.0
    elif len(parts) == 1:
        scale = float(np.sum(parts[0] ** 2 if square else parts[0]))
    else:  # a product's terms: sum_k |a_k b_k| <= sum|a| max|b|
        a, b = parts[0], parts[1]
        scale = max(float(a.sum()) * float(b.max()), float(b.sum()) * float(a.max()))
    return rtol, atol + 4 * math.sqrt(max(n, 1)) * eps * scale


STATS: dict[str, int] = {}


def _count(what: str) -> None:
    STATS[what] = STATS.get(what, 0) + 1


class Program:
    """Draws steps from hypothesis ``data``, runs each on both sides, compares at once."""

    def __init__(self, dev: Any, data: Any) -> None:
        self.dev = dev
        self.data = data
        self.dtypes = device_dtypes(dev)
        self.pool: list[Entry] = []
        self.lines: list[str] = [f"dev = pyaccel.device({dev.uri!r})"]
        self.n = 0
        self.typed64 = True  # (set per step)

    # -- drawing helpers ---------------------------------------------------
    def draw(self, strat: Any, label: str | None = None) -> Any:
        return self.data.draw(strat, label=label)

    def pick(self, pred=lambda e: True) -> Entry | None:
        cands = [e for e in self.pool if pred(e)]
        if not cands:
            return None
        return self.draw(st.sampled_from(cands))

    def draw_shape(self, max_ndim: int = 3) -> tuple[int, ...]:
        nd = self.draw(st.integers(0, max_ndim))
        if nd and self.draw(st.integers(0, 7)) == 0:
            # now and then past one workgroup (64-256 invocations) and multi-pass sizes
            dims = [self.draw(st.sampled_from([1, 3, 17, 65, 257, 1000, 5000])) for _ in range(nd)]
            while math.prod(dims) > 20_000:
                dims[dims.index(max(dims))] //= 4
            return tuple(dims)
        return tuple(self.draw(st.sampled_from([0, 1, 1, 2, 3, 4, 5])) for _ in range(nd))

    def compatible_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """A shape that broadcasts with ``shape`` (either side may be the larger one)."""
        dims = [self.draw(st.sampled_from([d, d, 1])) for d in shape]
        drop = self.draw(st.integers(0, len(dims)))
        dims = dims[drop:]
        if len(dims) < 3 and self.draw(st.booleans()):
            dims = [self.draw(st.sampled_from([1, 2]))] * self.draw(st.integers(0, max(0, 3 - len(dims)))) + dims
        return tuple(dims)

    def leaf(self, shape: tuple[int, ...] | None = None, dt: str | None = None,
             kinds: str = "bif") -> Entry:
        shape = self.draw_shape() if shape is None else shape
        if dt is None:
            dt = self.draw(st.sampled_from([d for d in self.dtypes if kind(d) in kinds]))
        seed = self.draw(st.integers(0, 2**32 - 1))
        special = self.draw(st.integers(0, 4)) == 0
        a = make_values(np.random.default_rng(seed), shape, dt, special)
        return self.add_leaf(a)

    def add_leaf(self, a: np.ndarray) -> Entry:
        name = f"v{self.n}"
        self.n += 1
        self.lines.append(f"{name} = xp.asarray({render_array(a)}, device=dev)")
        note(self.lines[-1])
        e = Entry(name, a.copy(), xp.asarray(a, device=self.dev))
        self.pool.append(e)
        return e

    def scalar_for(self, dt: Any) -> Any:
        k = kind(dt)
        if k == "b":
            return self.draw(st.booleans())
        if k == "i":
            return self.draw(st.sampled_from([0, 1, 2, 3, -1, -3, 7, 100, 300, -200]))
        return self.draw(st.sampled_from([0.5, -2.25, 3.0, 0.0, -1.0, 1e3, float("nan"), float("inf")]))

    # -- running -------------------------------------------------------------
    def step(self, text: str, f_np, f_dev, *, target: Entry | None = None, view_of: list[Entry] = (),
             mask=None, promo: Any = None, tol: tuple[float, float] | None = None,
             may_raise: tuple[type, ...] = (), why: str = "") -> Entry | None:
        """Run one call on both sides. ``target``: an in-place step updating that entry;
        otherwise the result becomes a new pool entry (``view_of``: entries it may alias)."""
        name = target.name if target is not None else f"v{self.n}"
        line = text if target is not None else f"{name} = {text}"
        # whether a float64 result is typed (the input arrays promote to float64 / complex128:
        # float64 inputs, int32 + float32, int8 + uint64; or an explicit 64-bit dtype in the
        # call) or came from a default (int -> float functions, Python floats with ints)
        names = set(re.findall(r"\bv\d+\b", text))
        ins = [e.a.dtype for e in self.pool if e.name in names]
        self.typed64 = ((bool(ins) and np.result_type(*ins).name in ("float64", "complex128"))
                                or re.search(r"\b(float64|complex128)\b", text) is not None)
        self.lines.append(line)
        note(line)
        r_np, e_np = _run(f_np)
        r_dev, e_dev = _run(f_dev)
        if e_np is not None or e_dev is not None:
            if e_np is None and may_raise and isinstance(e_dev, may_raise):
                _count("documented difference")
                note(f"  # device raised {type(e_dev).__name__}: documented ({why})")
                return None
            return self._errors(line, e_np, e_dev, r_np, promo)
        want = np.asarray(target.a if target is not None else r_np)
        got_arr = target.x if target is not None else r_dev
        if not isinstance(got_arr, xp.Array):
            raise Mismatch(f"{line}: device returned {type(got_arr).__name__}, not an Array")
        try:
            # a lazy (fused) result is read through a copy, so the chain stays lazy and later
            # steps grow its tree (fusion on; pyaccel/ops/fusion.py)
            got = _fusion.evaluate(got_arr).to_numpy()
        except Exception as exc:  # noqa: BLE001 - a read error is a device error
            return self._errors(line + "  # (reading the result)", None, exc, r_np)
        exact = self.compare(line, got, want, mask(want) if mask else None, tol)
        _count("compared exactly" if exact else "compared within tolerance")
        if target is not None:
            if not exact:
                target.x = xp.asarray(self.expected_value(want), device=self.dev)
            return target
        self.n += 1
        # the oracle continues in the device's dtypes (int64 -> int32 ... on a GPU)
        mapped = self.expected_value(want) if self.expected_dtype(want) != want.dtype else None
        a = mapped if mapped is not None else want if isinstance(r_np, np.ndarray) else want.copy()
        e = Entry(name, a, got_arr, fresh=not view_of)
        for v in view_of:
            v.fresh = False
        if not exact:
            e.x = xp.asarray(self.expected_value(want), device=self.dev)
        self.pool.append(e)
        return e

    def check_lazy(self) -> None:
        """At the end of a program: every entry still lazy (fusion on) is materialised and
        compared with its oracle value (its tree may have grown across many steps)."""
        self.typed64 = True
        for e in self.pool:
            if isinstance(e.x, xp.Array) and e.x._lazy is not None:
                _count("lazy at the end, materialised")
                try:
                    got = e.x.to_numpy()
                except Exception as exc:  # noqa: BLE001 - a read error is a device error
                    raise Mismatch(f"{e.name}  # materialised at the end: {type(exc).__name__}: {exc}") from exc
                self.compare(f"{e.name}  # materialised at the end of the program", got, e.a, None)

    def expected_dtype(self, want: np.ndarray) -> np.dtype:
        if want.dtype.name in ("float64", "complex128") and not self.typed64:
            # NumPy's float64 here is its default float; the device's may be float32
            dflt = xp.__array_namespace_info__().default_dtypes(device=self.dev)
            key = "real floating" if want.dtype.kind == "f" else "complex floating"
            return np.dtype(dflt[key].name)
        if want.dtype.name in device_dtypes(self.dev):
            return want.dtype  # the device holds it (cpu, and GPUs emulating 64-bit types)
        return np.dtype(_MAP64.get(want.dtype.name, want.dtype.name))

    def expected_value(self, want: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return want.astype(self.expected_dtype(want))

    def compare(self, line: str, got: np.ndarray, want: np.ndarray, skip: np.ndarray | None,
                tol: tuple[float, float] | None = None) -> bool:
        """Raise Mismatch unless equal within tolerance; True when bit-identical."""
        edt = self.expected_dtype(want)
        if got.dtype != edt:
            raise Mismatch(f"{line}\n  dtype: device {got.dtype}, NumPy {want.dtype} (expected {edt} "
                           f"on {self.dev.uri})")
        if got.shape != want.shape:
            raise Mismatch(f"{line}\n  shape: device {got.shape}, NumPy {want.shape}")
        w = self.expected_value(want)
        g = got
        if skip is not None and skip.any():
            g, w = g[~skip], w[~skip]
        if g.size == 0:
            return skip is None or not skip.any()
        if kind(edt) == "f":
            rtol, atol = tol if tol is not None else tolerance(edt)
            gf, wf = g.astype(np.float64), w.astype(np.float64)
            with np.errstate(all="ignore"):
                same = (gf == wf) | (np.isnan(gf) & np.isnan(wf))
                ok = same | (np.abs(gf - wf) <= atol + rtol * np.abs(wf))
            # an infinity must match exactly (the tolerance test above is NaN-safe for inf - inf)
            ok &= ~(np.isinf(gf) ^ np.isinf(wf)) | same
            if not ok.all():
                raise Mismatch(self._diff(line, g, w, ok))
            bits = g.view(f"u{g.dtype.itemsize}") == w.view(f"u{w.dtype.itemsize}")
            return bool(bits.all()) and (skip is None or not skip.any())
        ok = g == w
        if not ok.all():
            raise Mismatch(self._diff(line, g, w, ok))
        return skip is None or not skip.any()

    def _diff(self, line: str, g: np.ndarray, w: np.ndarray, ok: np.ndarray) -> str:
        bad = np.argwhere(~ok) if ok.ndim else np.zeros((1, 0), int)
        k = tuple(int(i) for i in bad[0])
        return (f"{line}\n  on {self.dev.uri}: {int((~ok).sum())} of {ok.size} element(s) differ; "
                f"first at {k}: device {g[k]!r}, NumPy {w[k]!r}\n  device: {np.array2string(g.ravel()[:40])}"
                f"\n  NumPy:  {np.array2string(w.ravel()[:40])}")

    def _errors(self, line: str, e_np, e_dev, r_np, promo: Any = None) -> None:
        if e_dev is not None and not isinstance(e_dev, (PyaccelError, *TYPED_BUILTINS)):
            raise Mismatch(f"{line}\n  on {self.dev.uri}: untyped device error {type(e_dev).__module__}."
                           f"{type(e_dev).__name__}: {e_dev}\n  (NumPy: {e_np!r})")
        if e_np is not None and e_dev is not None:
            _count("both raise")
            if os.environ.get("PYACCEL_FUZZ_DEBUG"):
                _count(f"both raise: {line.split('(')[0][-30:]} | {type(e_np).__name__}: {str(e_np)[:50]}")
            note(f"  # both raise: NumPy {type(e_np).__name__}, device {type(e_dev).__name__}")
            return None
        if e_dev is not None:
            wdt = np.asarray(r_np).dtype if r_np is not None else None
            # documented: WebGPU devices have no 64-bit dtypes, so a 64-bit result or operand
            # promotion (int32 + uint32, float16 < uint32) raises there (docs/arrays.md)
            wide = [d for d in (wdt, None if promo is None else np.dtype(promo)) if d is not None]
            if (isinstance(e_dev, UnsupportedDTypeError) and not self.dev.is_cpu
                    and any(d.itemsize == 8 for d in wide)):
                _count("64-bit refused (documented)")
                note(f"  # {self.dev.uri}: UnsupportedDTypeError for NumPy's {wide} (documented)")
                return None
            raise Mismatch(f"{line}\n  on {self.dev.uri}: device raised {type(e_dev).__name__}: {e_dev}\n"
                           f"  NumPy gave {np.asarray(r_np).dtype} {np.asarray(r_np)!r}"[:2000])
        raise Mismatch(f"{line}\n  on {self.dev.uri}: NumPy raised {type(e_np).__name__}: {e_np}, "
                       f"the device did not")


def _run(f) -> tuple[Any, BaseException | None]:
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return f(), None
    except Mismatch:
        raise
    except Exception as exc:  # noqa: BLE001 - categories are compared by the caller
        return None, exc


# ---------------------------------------------------------------------------
# steps
# ---------------------------------------------------------------------------
UNARY = {  # name -> dtype kinds it accepts
    "negative": "if", "abs": "if", "square": "if", "sign": "if", "floor": "if", "ceil": "if",
    "trunc": "if", "round": "if", "sqrt": "f", "exp": "f", "log": "f", "tanh": "f", "sin": "f",
    "logical_not": "b", "bitwise_invert": "bi", "isnan": "if", "isfinite": "if",
    "isinf": "if", "signbit": "f", "expm1": "f", "log1p": "f", "positive": "if",
}
BINARY = {
    "add": "if", "subtract": "if", "multiply": "if", "divide": "f", "floor_divide": "if",
    "remainder": "if", "pow": "f", "maximum": "if", "minimum": "if", "atan2": "f",
    "equal": "bif", "not_equal": "bif", "less": "if", "greater_equal": "if",
    "logical_and": "b", "logical_or": "b", "bitwise_and": "bi", "bitwise_xor": "bi",
    "hypot": "f", "copysign": "f", "logaddexp": "f",
}
OPERATORS = {"+": "if", "-": "if", "*": "if", "/": "f", "//": "if", "%": "if", ">": "if",
             "==": "bif", "&": "bi", "|": "bi", "**": "f"}
REDUCTIONS = {"sum": "bif", "prod": "if", "max": "if", "min": "if", "mean": "f", "any": "bif",
              "all": "bif", "argmax": "if", "argmin": "if", "var": "f", "std": "f"}


def _floor_divide(a, b):
    """NumPy's floor_divide with the Array API's results where one operand is infinite
    (floor(a / b): inf // 5 is inf, 5 // -inf is -0; NumPy: nan, -1), as pyaccel computes it."""
    r = np.floor_divide(a, b)  # (a, b as given: Python scalars stay weak)
    if np.asarray(r).dtype.kind == "f":
        a_, b_ = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        one_inf = (np.isinf(a_) != np.isinf(b_)) & ~np.isnan(a_) & ~np.isnan(b_)
        r = np.where(one_inf, np.true_divide(a, b), r).astype(np.asarray(r).dtype)
    return r


def _np_fn(name: str):
    return _floor_divide if name == "floor_divide" else getattr(np, name)


def _opfn(op: str):
    import operator
    return {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
            "//": operator.floordiv, "%": operator.mod, ">": operator.gt, "==": operator.eq,
            "&": operator.and_, "|": operator.or_, "**": operator.pow}[op]


def st_unary(p: Program) -> None:
    name = p.draw(st.sampled_from(sorted(UNARY)))
    kinds = UNARY[name]

    def pred(e: Entry) -> bool:
        if kind(e.a.dtype) not in kinds:
            return False
        return name != "sin" or bool(np.all(~np.isfinite(e.a) | (np.abs(e.a) <= 10)))

    e = p.pick(pred) or p.leaf(kinds=kinds)
    if name == "sin" and not pred(e):
        return
    p.step(f"xp.{name}({e.name})", lambda: getattr(np, name)(e.a), lambda: getattr(xp, name)(e.x))


def partner(p: Program, e: Entry, kinds: str) -> Entry:
    """A pool entry broadcast-compatible with ``e`` (or a new leaf); rarely an incompatible one."""
    if p.draw(st.integers(0, 9)) == 0:
        other = p.pick(lambda o: kind(o.a.dtype) in kinds)
        if other is not None:
            return other  # may not broadcast: then both sides must raise
    def fits(o: Entry) -> bool:
        try:
            np.broadcast_shapes(o.a.shape, e.a.shape)
        except ValueError:
            return False
        return kind(o.a.dtype) in kinds
    if p.draw(st.booleans()):
        o = p.pick(fits)
        if o is not None:
            return o
    same_dtype = p.draw(st.booleans())
    return p.leaf(p.compatible_shape(e.a.shape), dt=str(e.a.dtype) if same_dtype else None, kinds=kinds)


def st_binary(p: Program) -> None:
    name = p.draw(st.sampled_from(sorted(BINARY)))
    kinds = BINARY[name]
    e = p.pick(lambda o: kind(o.a.dtype) in kinds) or p.leaf(kinds=kinds)
    o = partner(p, e, kinds)
    a, b = (e, o) if p.draw(st.booleans()) else (o, e)
    p.step(f"xp.{name}({a.name}, {b.name})", lambda: _np_fn(name)(a.a, b.a),
           lambda: getattr(xp, name)(a.x, b.x), promo=np.result_type(a.a.dtype, b.a.dtype))


def st_scalar_op(p: Program) -> None:
    op = p.draw(st.sampled_from(sorted(OPERATORS)))
    kinds = OPERATORS[op]
    e = p.pick(lambda o: kind(o.a.dtype) in kinds) or p.leaf(kinds=kinds)
    s = p.scalar_for(p.draw(st.sampled_from([e.a.dtype, e.a.dtype, "float32"])) if kind(e.a.dtype) != "b"
                     else e.a.dtype)
    if kind(e.a.dtype) == "b" and op not in ("==", "&", "|"):
        s = bool(s)
    f = _opfn(op)
    f_np = _floor_divide if op == "//" else f  # (the oracle: NumPy with the spec's inf cases)
    kw: dict[str, Any] = {}
    if type(s) is int and kind(e.a.dtype) == "i" and not (
            np.iinfo(e.a.dtype).min <= s <= np.iinfo(e.a.dtype).max):
        # NumPy 2 compares with an out-of-range Python int (and raises for arithmetic); pyaccel
        # raises OverflowError for both (docs/arrays.md; the Array API leaves it unspecified)
        kw = {"may_raise": (OverflowError,), "why": "Python int out of the dtype's range"}
    if p.draw(st.booleans()):
        p.step(f"{e.name} {op} {s!r}", lambda: f_np(e.a, s), lambda: f(e.x, s), **kw)
    else:
        p.step(f"{s!r} {op} {e.name}", lambda: f_np(s, e.a), lambda: f(s, e.x), **kw)


def draw_axis(p: Program, nd: int, allow_tuple: bool = True) -> Any:
    choice = p.draw(st.integers(0, 9))
    if choice < 3 or nd == 0:
        return None
    if choice == 9:
        return nd + 1  # out of range: both sides must raise
    if allow_tuple and choice >= 7 and nd >= 2:
        axes = p.draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
        return tuple(a - nd if p.draw(st.booleans()) else a for a in axes)
    ax = p.draw(st.integers(0, nd - 1))
    return ax - nd if p.draw(st.booleans()) else ax


def st_reduce(p: Program) -> None:
    name = p.draw(st.sampled_from(sorted(REDUCTIONS)))
    kinds = REDUCTIONS[name]
    e = p.pick(lambda o: kind(o.a.dtype) in kinds) or p.leaf(kinds=kinds)
    axis = draw_axis(p, e.a.ndim, allow_tuple=name not in ("argmax", "argmin"))
    keep = p.draw(st.booleans())
    tol = None
    if name in ("sum", "prod", "mean", "var", "std"):
        f_np = lambda: _acc(getattr(np, name), e.a, axis=axis, keepdims=keep)  # noqa: E731
        if kind(e.a.dtype) == "f":
            n = e.a.size if axis is None or not e.a.ndim else int(np.prod(
                [e.a.shape[i] for i in (axis if isinstance(axis, tuple) else (axis,)) if -e.a.ndim <= i < e.a.ndim]))
            tol = acc_tol(e.a.dtype, n, e.a, square=name in ("var", "std"))
            if name == "prod":  # a product's rounding error is relative: n roundings
                tol = (tol[0] + 4 * n * float(np.finfo(e.a.dtype).eps), tolerance(e.a.dtype)[1])
            elif name == "std":
                tol = (tol[0], math.sqrt(tol[1]))
            elif name == "mean":
                tol = (tol[0], tol[1] / max(n, 1))
            elif name == "var":
                tol = (tol[0], 4 * tol[1] / max(n, 1))
    else:
        f_np = lambda: getattr(np, name)(e.a, axis=axis, keepdims=keep)  # noqa: E731
    src = e.a

    def overflow(want: np.ndarray) -> np.ndarray | None:
        # var/std square the deviations in the input dtype (NumPy too): where that overflows
        # (|x| ~ 1e30 in float32) the result may be inf; the float64 oracle is finite there
        if name == "prod" and kind(src.dtype) == "f":
            # a float product whose factors >= 1 in magnitude multiply past the dtype's range
            # can overflow in some order (then inf * 0 = nan) where the float64 oracle is
            # finite: NumPy's own float32 result depends on its order there (257 factors in
            # [-8, 8] with one 0: np.prod gives -0.0, np.prod of the reversed array nan)
            with np.errstate(all="ignore"):
                big = np.maximum(np.abs(src.astype(np.float64)), 1.0)
                bound = np.prod(big, axis=axis, keepdims=keep)
            return np.asarray(bound > float(np.finfo(src.dtype).max))
        if name not in ("var", "std"):
            return None
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plain = np.asarray(getattr(np, name)(src, axis=axis, keepdims=keep))
        return ~np.isfinite(plain) & np.isfinite(want)

    p.step(f"xp.{name}({e.name}, axis={axis!r}, keepdims={keep})", f_np,
           lambda: getattr(xp, name)(e.x, axis=axis, keepdims=keep), tol=tol, mask=overflow)


def draw_slice(p: Program, n: int) -> slice:
    start = p.draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
    stop = p.draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
    step = p.draw(st.sampled_from([None, 1, 2, -1, -2, 3]))
    return slice(start, stop, step)


def basic_key(p: Program, shape: tuple[int, ...]) -> tuple:
    key: list[Any] = []
    for n in shape:
        c = p.draw(st.integers(0, 5))
        if c == 0 and n > 0:
            key.append(p.draw(st.integers(-n, n - 1)))
        elif c == 1:
            key.append(slice(None))
        else:
            key.append(draw_slice(p, n))
    if key and p.draw(st.integers(0, 4)) == 0:
        key.insert(p.draw(st.integers(0, len(key))), None)
    if key and p.draw(st.integers(0, 4)) == 0:
        k = p.draw(st.integers(0, len(key) - 1))
        key = key[:k] + [Ellipsis]
    return tuple(key)


def key_str(key: Any) -> str:
    def one(k: Any) -> str:
        if isinstance(k, slice):
            return (("" if k.start is None else str(k.start)) + ":" + ("" if k.stop is None else str(k.stop))
                    + ("" if k.step is None else f":{k.step}"))
        if k is Ellipsis:
            return "..."
        return repr(k)
    if isinstance(key, tuple):
        return ", ".join(one(k) for k in key) if key else "()"
    return one(key)


def st_getitem(p: Program) -> None:
    e = p.pick() or p.leaf()
    c = p.draw(st.integers(0, 3))
    if c <= 1 or e.a.ndim == 0:
        key = basic_key(p, e.a.shape)
        view = True
    elif c == 2:  # integer array (a host list, bounds-checked) along axis 0
        n = e.a.shape[0]
        idx = p.draw(st.lists(st.integers(-n - 1 if n else -1, n), min_size=0, max_size=5))
        key = (idx,) if p.draw(st.booleans()) else (slice(None), idx) if e.a.ndim >= 2 else (idx,)
        view = False
    else:  # boolean mask of the leading dimensions
        k = p.draw(st.integers(1, e.a.ndim))
        m = p.pick(lambda o: o.a.dtype == np.bool_ and o.a.shape == e.a.shape[:k])
        m = m or p.leaf(e.a.shape[:k], dt="bool")
        key = m
        p.step(f"{e.name}[{m.name}]", lambda: e.a[m.a], lambda: e.x[m.x])
        return
    p.step(f"{e.name}[{key_str(key)}]", lambda: e.a[key], lambda: e.x[key], view_of=[e] if view else [])


def st_setitem(p: Program) -> None:
    e = p.pick(lambda o: o.fresh and o.a.ndim > 0)
    if e is None:
        return
    c = p.draw(st.integers(0, 2))
    if c == 0:
        key: Any = basic_key(p, e.a.shape)
        ks = key_str(key)
        xk, ak = key, key
    elif c == 1:
        n = e.a.shape[0]
        idx = p.draw(st.lists(st.integers(-n if n else -1, max(n - 1, 0)), min_size=0, max_size=4))
        idx = list(dict.fromkeys(i % n for i in idx)) if n else idx  # no duplicates (unspecified order)
        key = (idx,)
        ks, xk, ak = key_str(key), key, key
    else:
        m = p.pick(lambda o: o.a.dtype == np.bool_ and o.a.shape == e.a.shape) or p.leaf(e.a.shape, dt="bool")
        ks, xk, ak = m.name, m.x, m.a
    try:
        tshape = e.a[ak].shape
    except Exception:  # noqa: BLE001 - an invalid key: both sides must raise
        tshape = ()
    if c == 2 or p.draw(st.booleans()):
        v = p.scalar_for(e.a.dtype)
        if kind(e.a.dtype) == "i":
            info = np.iinfo(e.a.dtype)
            v = int(np.clip(v, info.min, info.max))
        vs, va, vx = repr(v), v, v
    else:
        src = p.leaf(p.compatible_shape(tshape) if len(tshape) else (), dt=str(e.a.dtype))
        src_shape = src.a.shape
        if len(src_shape) > len(tshape):  # setitem values may not add dimensions
            src = p.leaf(src_shape[len(src_shape) - len(tshape):], dt=str(e.a.dtype))
        vs, va, vx = src.name, src.a, src.x

    def f_np() -> None:
        e.a[ak] = va

    def f_dev() -> None:
        e.x[xk] = vx

    p.step(f"{e.name}[{ks}] = {vs}", f_np, f_dev, target=e)


def st_inplace(p: Program) -> None:
    e = p.pick(lambda o: o.fresh and kind(o.a.dtype) in "if")
    if e is None:
        return
    op = p.draw(st.sampled_from(["+=", "-=", "*="]))
    if p.draw(st.booleans()):
        o = p.leaf(p.compatible_shape(e.a.shape)[-e.a.ndim:] if e.a.ndim else (), dt=str(e.a.dtype))
        try:
            if np.broadcast_shapes(o.a.shape, e.a.shape) != e.a.shape:
                return
        except ValueError:
            return
        on, oa, ox = o.name, o.a, o.x
    else:
        s = p.scalar_for(e.a.dtype)
        if kind(e.a.dtype) == "i":
            info = np.iinfo(e.a.dtype)
            s = int(np.clip(s, info.min, info.max))
        on, oa, ox = repr(s), s, s

    import operator
    f = {"+=": operator.iadd, "-=": operator.isub, "*=": operator.imul}[op]

    def f_np() -> None:
        r = f(e.a, oa)
        assert r is e.a

    def f_dev() -> None:
        r = f(e.x, ox)
        if r is not e.x:
            raise Mismatch(f"{e.name} {op} {on}: the device returned a new array, not {e.name} updated")

    p.step(f"{e.name} {op} {on}", f_np, f_dev, target=e)


def st_where(p: Program) -> None:
    c = p.pick(lambda o: o.a.dtype == np.bool_) or p.leaf(dt="bool")
    a = partner(p, c, "bif")
    if p.draw(st.booleans()):
        b = partner(p, a, "bif")
        p.step(f"xp.where({c.name}, {a.name}, {b.name})", lambda: np.where(c.a, a.a, b.a),
               lambda: xp.where(c.x, a.x, b.x), promo=np.result_type(a.a.dtype, b.a.dtype))
    else:
        s = p.scalar_for(a.a.dtype)
        if kind(a.a.dtype) == "i":
            s = int(np.clip(s, np.iinfo(a.a.dtype).min, np.iinfo(a.a.dtype).max))
        p.step(f"xp.where({c.name}, {a.name}, {s!r})", lambda: np.where(c.a, a.a, s),
               lambda: xp.where(c.x, a.x, s), may_raise=(OverflowError,),
               why="a Python int out of the dtype's range")


def st_concat(p: Program) -> None:
    e = p.pick(lambda o: o.a.ndim > 0) or p.leaf((p.draw(st.integers(0, 3)), p.draw(st.integers(1, 3))))
    stack = p.draw(st.booleans())
    nd = e.a.ndim
    axis = p.draw(st.integers(-nd, nd - 1)) if not stack else p.draw(st.integers(-nd - 1, nd))
    parts = [e]
    for _ in range(p.draw(st.integers(1, 2))):
        shape = list(e.a.shape)
        if not stack:
            shape[axis] = p.draw(st.integers(0, 3))
        same = p.draw(st.integers(0, 2)) > 0
        parts.append(p.leaf(tuple(shape), dt=str(e.a.dtype) if same else None))
    names = ", ".join(q.name for q in parts)
    fn = "stack" if stack else "concat"
    p.step(f"xp.{fn}([{names}], axis={axis})", lambda: getattr(np, fn)([q.a for q in parts], axis=axis),
           lambda: getattr(xp, fn)([q.x for q in parts], axis=axis))


def _factor_shape(p: Program, size: int) -> tuple[int, ...]:
    if size == 0:
        nd = p.draw(st.integers(1, 3))
        dims = [p.draw(st.integers(0, 3)) for _ in range(nd)]
        dims[p.draw(st.integers(0, nd - 1))] = 0
        return tuple(dims)
    primes, n, f = [], size, 2
    while n > 1:
        while n % f == 0:
            primes.append(f)
            n //= f
        f += 1
    nd = p.draw(st.integers(0 if size == 1 else 1, 3))
    if nd == 0:
        return ()
    dims = [1] * nd
    for q in primes:
        dims[p.draw(st.integers(0, nd - 1))] *= q
    return tuple(dims)


def pick_lazy_first(p: Program) -> Entry:
    """An entry of the pool, half the time a lazy one when there is one (fusion on: an
    elementwise result still unevaluated), so reshapes and casts of lazy trees (fusion's
    ``defer_reshape`` / ``defer_cast``) are drawn as often as those of plain arrays."""
    if p.draw(st.booleans()):
        e = p.pick(lambda o: isinstance(o.x, xp.Array) and o.x._lazy is not None)
        if e is not None:
            return e
    return p.pick() or p.leaf()


def st_reshape(p: Program) -> None:
    e = pick_lazy_first(p)
    if p.draw(st.booleans()) and e.a.ndim >= 2:
        perm = tuple(p.draw(st.permutations(range(e.a.ndim))))
        p.step(f"xp.permute_dims({e.name}, {perm})", lambda: np.permute_dims(e.a, perm),
               lambda: xp.permute_dims(e.x, perm), view_of=[e])
        return
    shape = _factor_shape(p, e.a.size)
    if p.draw(st.integers(0, 9)) == 0:
        shape = shape + (2,)  # wrong size (unless 0): both raise or both agree
    elif shape and e.a.size and p.draw(st.integers(0, 3)) == 0:
        k = p.draw(st.integers(0, len(shape) - 1))
        shape = shape[:k] + (-1,) + shape[k + 1:]
    p.step(f"xp.reshape({e.name}, {shape_str(shape)})", lambda: np.reshape(e.a, shape),
           lambda: xp.reshape(e.x, shape), view_of=[e])


def st_astype(p: Program) -> None:
    e = pick_lazy_first(p)
    dt = p.draw(st.sampled_from(p.dtypes))
    src = e.a

    def skip(want: np.ndarray) -> np.ndarray | None:
        # float -> int of NaN, inf or out-of-range values is implementation-defined
        if src.dtype.kind != "f" or np.dtype(dt).kind not in "iu":
            return None
        info = np.iinfo(dt)
        with np.errstate(all="ignore"):
            s = src.astype(np.float64)
            return ~np.isfinite(s) | (s < info.min) | (s >= float(info.max) + 1)

    p.step(f"xp.astype({e.name}, xp.{dt})", lambda: src.astype(dt), lambda: xp.astype(e.x, getattr(xp, dt)),
           mask=skip)


def st_matmul(p: Program) -> None:
    e = p.pick(lambda o: o.a.ndim >= 1 and kind(o.a.dtype) in "if") or p.leaf(
        tuple(p.draw(st.integers(1, 4)) for _ in range(p.draw(st.integers(1, 3)))), kinds="if")
    k = e.a.shape[-1]
    if p.draw(st.integers(0, 9)) == 0:
        k += 1  # mismatched inner dimension: both must raise
    form = p.draw(st.integers(0, 2))
    n = p.draw(st.integers(0, 4))
    shape = (k,) if form == 0 else (k, n) if form == 1 else (p.draw(st.sampled_from([1, 2])), k, n)
    o = p.leaf(shape, dt=str(e.a.dtype) if p.draw(st.booleans()) else None, kinds="if")
    tol = acc_tol(np.result_type(e.a.dtype, o.a.dtype), k, e.a, o.a) if (
        np.result_type(e.a.dtype, o.a.dtype).kind == "f") else None
    p.step(f"xp.matmul({e.name}, {o.name})", lambda: _acc(np.matmul, e.a, o.a),
           lambda: xp.matmul(e.x, o.x), tol=tol)


def st_sort(p: Program) -> None:
    e = p.pick(lambda o: o.a.ndim >= 1 and kind(o.a.dtype) in "if") or p.leaf(
        (p.draw(st.integers(0, 6)),), kinds="if")
    axis = p.draw(st.integers(-e.a.ndim, e.a.ndim - 1))
    desc = p.draw(st.booleans())
    src = e.a

    def skip(want: np.ndarray) -> np.ndarray | None:
        # where NaNs go in a descending sort is not specified: compare the rest only
        if desc and src.dtype.kind == "f" and np.isnan(src).any():
            return np.isnan(want) | np.isnan(np.flip(want, axis=axis))
        return None

    p.step(f"xp.sort({e.name}, axis={axis}, descending={desc})", lambda: np_sort(src, axis, desc),
           lambda: xp.sort(e.x, axis=axis, descending=desc), mask=skip)


def st_cumsum(p: Program) -> None:
    e = p.pick(lambda o: o.a.ndim >= 1 and kind(o.a.dtype) in "if") or p.leaf(
        (p.draw(st.integers(0, 6)),), kinds="if")
    axis = p.draw(st.integers(-e.a.ndim, e.a.ndim - 1)) if (e.a.ndim > 1 or p.draw(st.booleans())) else None
    inc = p.draw(st.booleans())
    p.step(f"xp.cumulative_sum({e.name}, axis={axis}, include_initial={inc})",
           lambda: _acc(np.cumulative_sum, e.a, axis=axis, include_initial=inc),
           lambda: xp.cumulative_sum(e.x, axis=axis, include_initial=inc),
           tol=acc_tol(e.a.dtype, e.a.size if axis is None else e.a.shape[axis], e.a) if kind(e.a.dtype) == "f"
           else None)


def st_shift(p: Program) -> None:
    """Shifts by 0..width+2 (negative counts are undefined in the standard; >= width is NumPy's)."""
    e = p.pick(lambda o: kind(o.a.dtype) == "i") or p.leaf(kinds="i")
    bits = 8 * e.a.dtype.itemsize
    shape = p.compatible_shape(e.a.shape)
    seed = p.draw(st.integers(0, 2**32 - 1))
    amt = p.add_leaf(np.asarray(np.random.default_rng(seed).integers(0, bits + 3, shape)).astype(e.a.dtype))
    name = p.draw(st.sampled_from(["bitwise_left_shift", "bitwise_right_shift"]))
    p.step(f"xp.{name}({e.name}, {amt.name})", lambda: getattr(np, name)(e.a, amt.a),
           lambda: getattr(xp, name)(e.x, amt.x))


def st_manip(p: Program) -> None:
    e = p.pick(lambda o: o.a.ndim >= 1) or p.leaf((p.draw(st.integers(0, 5)), p.draw(st.integers(1, 3))))
    nd = e.a.ndim
    c = p.draw(st.integers(0, 4))
    ax = p.draw(st.integers(-nd, nd - 1))
    if c == 0:
        axis = None if p.draw(st.booleans()) else ax
        p.step(f"xp.flip({e.name}, axis={axis})", lambda: np.flip(e.a, axis=axis),
               lambda: xp.flip(e.x, axis=axis), view_of=[e])
    elif c == 1:
        shift = p.draw(st.integers(-7, 7))
        axis = None if p.draw(st.booleans()) else ax
        p.step(f"xp.roll({e.name}, {shift}, axis={axis})", lambda: np.roll(e.a, shift, axis=axis),
               lambda: xp.roll(e.x, shift, axis=axis))
    elif c == 2:
        axis = p.draw(st.integers(-nd - 1, nd))
        p.step(f"xp.expand_dims({e.name}, axis={axis})", lambda: np.expand_dims(e.a, axis),
               lambda: xp.expand_dims(e.x, axis=axis), view_of=[e])
    elif c == 3:
        ones = [i for i, d in enumerate(e.a.shape) if d == 1] or [ax]  # [ax]: maybe not 1: both raise
        axis = p.draw(st.sampled_from(ones))
        p.step(f"xp.squeeze({e.name}, axis={axis})", lambda: np.squeeze(e.a, axis=axis),
               lambda: xp.squeeze(e.x, axis=axis), view_of=[e])
    else:
        n = e.a.shape[ax]
        idx = p.draw(st.lists(st.integers(-n if n else 0, max(n - 1, 0)), min_size=0, max_size=5))
        if not n:
            idx = []
        p.step(f"xp.take({e.name}, xp.asarray({idx}, dtype=xp.int32, device=dev), axis={ax})",
               lambda: np.take(e.a, np.asarray(idx, dtype=np.int64), axis=ax),
               lambda: xp.take(e.x, xp.asarray(idx, dtype=xp.int32, device=p.dev), axis=ax))


def st_clip(p: Program) -> None:
    e = p.pick(lambda o: kind(o.a.dtype) in "if") or p.leaf(kinds="if")
    lo = p.draw(st.sampled_from([None, -3, 0, 1]))
    hi = p.draw(st.sampled_from([None, 2, 5]))
    if kind(e.a.dtype) == "f" and p.draw(st.booleans()):
        lo = None if lo is None else lo - 0.5
    if kind(e.a.dtype) == "i" and np.iinfo(e.a.dtype).min == 0 and lo is not None and lo < 0:
        lo = 0
    p.step(f"xp.clip({e.name}, {lo!r}, {hi!r})", lambda: np.clip(e.a, lo, hi),
           lambda: xp.clip(e.x, lo, hi))


def _np_softmax(a: np.ndarray, axis: int) -> np.ndarray:
    a64 = a.astype(np.float64)
    m = np.max(a64, axis=axis, keepdims=True)
    e = np.exp(a64 - m)
    return (e / np.sum(e, axis=axis, keepdims=True)).astype(a.dtype)


def _np_logsumexp(a: np.ndarray, axis: int, keepdims: bool) -> np.ndarray:
    a64 = a.astype(np.float64)
    m = np.max(a64, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    r = np.log(np.sum(np.exp(a64 - m), axis=axis, keepdims=True)) + m
    return (r if keepdims else np.squeeze(r, axis=axis)).astype(a.dtype)


def st_nn(p: Program) -> None:
    """pyaccel.nn.softmax / logsumexp (oracle: the float64 formulas, rounded to the dtype)."""
    e = p.pick(lambda o: o.a.ndim >= 1 and o.a.size > 0 and kind(o.a.dtype) == "f") or p.leaf(
        (p.draw(st.integers(1, 4)), p.draw(st.sampled_from([1, 5, 300, 3000]))), kinds="f")
    axis = p.draw(st.integers(-e.a.ndim, e.a.ndim - 1))
    if p.draw(st.booleans()):
        p.step(f"xp.nn.softmax({e.name}, axis={axis})", lambda: _np_softmax(e.a, axis),
               lambda: xp.nn.softmax(e.x, axis=axis),
               tol=(tolerance(e.a.dtype)[0] + 4 * math.sqrt(e.a.shape[axis]) * float(np.finfo(e.a.dtype).eps),
                    tolerance(e.a.dtype)[1]))
    else:
        keep = p.draw(st.booleans())
        p.step(f"xp.nn.logsumexp({e.name}, axis={axis}, keepdims={keep})",
               lambda: _np_logsumexp(e.a, axis, keep), lambda: xp.nn.logsumexp(e.x, axis=axis, keepdims=keep))


def st_argsort(p: Program) -> None:
    """argsort (stable, so tie order is defined) and nonzero / unique_values / count_nonzero."""
    e = p.pick(lambda o: o.a.ndim >= 1 and kind(o.a.dtype) in "if") or p.leaf(
        (p.draw(st.integers(0, 9)),), kinds="if")
    c = p.draw(st.integers(0, 3))
    if c == 0:
        axis = p.draw(st.integers(-e.a.ndim, e.a.ndim - 1))
        desc = p.draw(st.booleans())
        src = e.a
        if desc and src.dtype.kind == "f" and np.isnan(src).any():
            return  # where NaNs go in a descending sort is unspecified (see st_sort)

        def f_np() -> np.ndarray:
            if not desc:
                return np.argsort(src, axis=axis, stable=True)
            # stable descending: ties keep their original order
            n = src.shape[axis]
            rev = np.flip(src, axis=axis)
            return (n - 1 - np.flip(np.argsort(rev, axis=axis, stable=True), axis=axis)) if n else \
                np.argsort(src, axis=axis)

        p.step(f"xp.argsort({e.name}, axis={axis}, descending={desc}, stable=True)", f_np,
               lambda: xp.argsort(e.x, axis=axis, descending=desc, stable=True))
    elif c == 1:
        k = p.draw(st.integers(0, e.a.ndim - 1))
        p.step(f"xp.nonzero({e.name})[{k}]", lambda: np.nonzero(e.a)[k], lambda: xp.nonzero(e.x)[k])
    elif c == 2:
        # the standard: every NaN is a distinct value (NumPy: equal_nan=False)
        p.step(f"xp.unique_values({e.name})", lambda: np.unique(e.a, equal_nan=False),
               lambda: xp.unique_values(e.x))
    else:
        axis = draw_axis(p, e.a.ndim)
        keep = p.draw(st.booleans())
        p.step(f"xp.count_nonzero({e.name}, axis={axis!r}, keepdims={keep})",
               lambda: np.count_nonzero(e.a, axis=axis, keepdims=keep),
               lambda: xp.count_nonzero(e.x, axis=axis, keepdims=keep))


def st_create(p: Program) -> None:
    """arange / linspace / eye / full on the device (NumPy's float64 results map to float32 on a GPU)."""
    c = p.draw(st.integers(0, 3))
    dt = p.draw(st.sampled_from([None] + [d for d in p.dtypes if kind(d) != "b"]))
    dts = "None" if dt is None else f"xp.{dt}"
    xdt = None if dt is None else getattr(xp, dt)
    if c == 0:
        start, stop = p.draw(st.integers(-10, 10)), p.draw(st.integers(-10, 40))
        step = p.draw(st.sampled_from([1, 2, 3, -1, -2]))
        if dt is not None and kind(dt) == "i" and np.iinfo(dt).min == 0 and min(start, stop) < 0:
            return
        p.step(f"xp.arange({start}, {stop}, {step}, dtype={dts}, device=dev)",
               lambda: np.arange(start, stop, step, dtype=dt),
               lambda: xp.arange(start, stop, step, dtype=xdt, device=p.dev))
    elif c == 1:
        a, b = p.draw(st.sampled_from([0, 1, -2.5, 3])), p.draw(st.sampled_from([0, 1, 10, -4.25]))
        n = p.draw(st.integers(0, 9))
        endpoint = p.draw(st.booleans())
        fdt = dt if dt is not None and kind(dt) == "f" else None
        fdts = "None" if fdt is None else f"xp.{fdt}"
        p.step(f"xp.linspace({a}, {b}, {n}, dtype={fdts}, endpoint={endpoint}, device=dev)",
               lambda: np.linspace(a, b, n, endpoint=endpoint, dtype=fdt),
               lambda: xp.linspace(a, b, n, dtype=None if fdt is None else getattr(xp, fdt),
                                   endpoint=endpoint, device=p.dev))
    elif c == 2:
        n, m, k = p.draw(st.integers(0, 5)), p.draw(st.integers(0, 5)), p.draw(st.integers(-3, 3))
        p.step(f"xp.eye({n}, {m}, k={k}, dtype={dts}, device=dev)",
               lambda: np.eye(n, m, k=k, dtype=dt or np.float64),
               lambda: xp.eye(n, m, k=k, dtype=xdt, device=p.dev))
    else:
        shape = p.draw_shape()
        v = p.scalar_for(dt or "float32")
        if dt is not None and kind(dt) == "i":
            v = int(np.clip(v, np.iinfo(dt).min, np.iinfo(dt).max))
        p.step(f"xp.full({shape_str(shape)}, {v!r}, dtype={dts}, device=dev)",
               lambda: np.full(shape, v, dtype=dt),
               lambda: xp.full(shape, v, dtype=xdt, device=p.dev))


def st_alias(p: Program) -> None:
    """reshape/expand_dims/squeeze share the buffer (docs/arrays.md, as NumPy views of contiguous
    data): an in-place update through the view must show in the base, and the reverse."""
    e = p.pick(lambda o: o.fresh and o.a.size > 0 and kind(o.a.dtype) in "if")
    if e is None:
        return
    c = p.draw(st.integers(0, 1))
    if c == 0:
        shape = _factor_shape(p, e.a.size)
        v = p.step(f"xp.reshape({e.name}, {shape_str(shape)})", lambda: np.reshape(e.a, shape),
                   lambda: xp.reshape(e.x, shape), view_of=[e])
    else:
        v = p.step(f"xp.expand_dims({e.name}, axis=0)", lambda: np.expand_dims(e.a, 0),
                   lambda: xp.expand_dims(e.x, axis=0), view_of=[e])
    if v is None or not np.shares_memory(v.a, e.a):
        return  # the step raised, or NumPy copied (its operand was not C-contiguous, e.g. the
        # result of x[:, [i, j]]; pyaccel arrays always are, so there the view is shared)
    through_view = p.draw(st.booleans())
    tgt, other = (v, e) if through_view else (e, v)
    s_ = p.scalar_for(tgt.a.dtype)
    if kind(tgt.a.dtype) == "i":
        s_ = int(np.clip(s_, np.iinfo(tgt.a.dtype).min, np.iinfo(tgt.a.dtype).max))
    tgt.fresh = True  # allowed here on purpose: the aliasing is what is checked

    def f_np() -> None:
        tgt.a[...] = s_

    def f_dev() -> None:
        tgt.x[...] = s_

    p.step(f"{tgt.name}[...] = {s_!r}", f_np, f_dev, target=tgt)
    tgt.fresh = False
    # the other array must see the write (compare it as a no-op step)
    p.step(f"{other.name}  # after writing {tgt.name}", lambda: None, lambda: None, target=other)


# one entry per draw: repeated entries are drawn more often
STEPS = [
    st_unary, st_binary, st_binary, st_scalar_op, st_reduce, st_getitem, st_setitem, st_inplace,
    st_where, st_concat, st_reshape, st_astype, st_matmul, st_sort, st_cumsum, st_shift,
    st_manip, st_manip, st_clip, st_nn, st_argsort, st_create, st_alias,
]


def run_program(dev: Any, data: Any) -> Program:
    p = Program(dev, data)
    _fill(p, data)
    p.check_lazy()
    return p


def _fill(p: Program, data: Any) -> None:
    for _ in range(data.draw(st.integers(1, 3), label="leaves")):
        p.leaf()
    for _ in range(data.draw(st.integers(3, 8), label="steps")):
        step = data.draw(st.sampled_from(STEPS), label="step")
        step(p)


_LEAF = re.compile(r"^(v\d+) = xp\.asarray\(")
_ASSIGNED = re.compile(r"^(v\d+)\b")


def _jit_source(lines: list[str]) -> tuple[str, list[str], list[str]]:
    """A program's printed lines as ``(leaf lines, the names of the leaves, the source of a
    function of the leaves running every other line)``; each step line runs in a ``try``
    (a step that raised on both sides in the step run raises here too), except that a
    ``JitError`` propagates. The function returns every array it made or was given."""
    leaves, names, body = [], [], []
    for ln in lines[1:]:
        m = _LEAF.match(ln)
        if m and not body:
            leaves.append(ln)
            names.append(m.group(1))
        else:
            body += ["    try:", f"        {ln}", "    except Exception as exc:",
                     "        if isinstance(exc, xp.JitError):", "            raise"]
    src = (f"def program({', '.join(names)}):\n" + "\n".join(body or ["    pass"]) + "\n"
           "    return {k: v for k, v in locals().items() if isinstance(v, xp.Array)}\n")
    return "\n".join(leaves), names, src


def _same(line: str, got: Any, want: Any) -> None:
    for k in want:
        g, w = got[k].to_numpy(), want[k].to_numpy()
        if g.dtype != w.dtype or g.shape != w.shape or not np.array_equal(g, w, equal_nan=g.dtype.kind in "fc"):
            raise Mismatch(f"jit: {k} differs from the un-jitted run ({line})\n got {g!r}\n want {w!r}")


def check_jit(dev: Any, p: Program) -> str:
    """Run the program ``p`` printed, as a function of its leaves: un-jitted, then through
    ``pyaccel.jit`` twice (the trace, and a replay on fresh copies of the leaves with the pool
    holding 0xFF-filled buffers of the trace's allocation sizes); every array each run made or
    was given must be bit for bit the un-jitted run's. A program with a data-dependent step
    (a host read inside the function) must raise ``JitError`` naming a call."""
    from pyaccel.jit import _ALLOC

    leaf_src, names, src = _jit_source(p.lines)
    g = {"xp": xp, "np": np, "math": math, "dev": dev, "pyaccel": xp}
    exec(src, g)  # noqa: S102 - our own program text

    def leaves() -> list[Any]:
        ns = dict(g)
        exec(leaf_src, ns)  # noqa: S102
        return [ns[n] for n in names]

    want = g["program"](*leaves())
    jf = xp.jit(g["program"])
    try:
        got = jf(*leaves())
    except xp.JitError as exc:
        if not re.search(r"pyaccel\.jit: \S", str(exc)) or "Fix:" not in str(exc):
            raise Mismatch(f"jit: a JitError without the call or the fix: {exc}") from exc
        return "split (JitError: " + str(exc).split(" reads", 1)[0].removeprefix("pyaccel.jit: ") + ")"
    _same("the trace", got, want)
    sizes = [ev[2] for t in jf.traces() for ev in t.events if ev[0] == _ALLOC]
    bufs = [dev.malloc(max(n, 4)) for n in sizes]
    for b in bufs:
        b.write(b"\xff" * b.nbytes)
        b.free()
    _same("a replay", jf(*leaves()), want)
    if jf.trace_count != 1 or jf.replay_count != 1:
        raise Mismatch(f"jit: {jf.trace_count} traces, {jf.replay_count} replays (expected 1 and 1)")
    return "traced and replayed"


@pytest.mark.parametrize("mode", ["fused", "eager", "jit"])
def test_fuzz_programs(device, mode) -> None:
    """Random programs on ``device`` agree with NumPy step by step, with lazy elementwise
    fusion on (``fused``: results read through copies, so trees grow over the steps, and
    materialised at the end) and off (``pyaccel.fusion(False)``, what PYACCEL_FUSION=0 runs);
    ``jit``: the step run with fusion on, then the printed program as one function through
    ``pyaccel.jit`` (:func:`check_jit`). Under ``CI=true`` each GPU mode runs half of
    ``FUZZ_CI_EXAMPLES`` (jit: a fifth)."""
    fused = mode != "eager"
    if mode != "eager" and device.is_cpu:
        pytest.skip("cpu:0 runs NumPy eagerly: nothing to fuse or trace (the eager mode covers it)")
    n = _examples()
    if n and not device.is_cpu and not _env_examples:
        n = max(1, n // (5 if mode == "jit" else 2))
    cfg = settings(settings.get_profile(settings.get_current_profile_name()),
                   **({"max_examples": n} if n else {}), derandomize=False, deadline=None,
                   print_blob=True, report_multiple_bugs=False)

    collect = os.environ.get("PYACCEL_FUZZ_COLLECT")
    stats = {"programs": 0, "steps": 0}

    @cfg
    @given(data=st.data())
    def check(data: Any) -> None:
        with xp.fusion(fused):
            _check(data)

    def _check(data: Any) -> None:
        stats["programs"] += 1
        if not collect:
            p = run_program(device, data)
            stats["steps"] += len(p.lines) - 1
            if mode == "jit":
                _count("jit: " + check_jit(device, p))
            return
        p = None
        try:
            p = Program(device, data)
            _fill(p, data)
            p.check_lazy()
            stats["steps"] += len(p.lines) - 1
            if mode == "jit":
                _count("jit: " + check_jit(device, p))
        except Exception as exc:  # noqa: BLE001 - collect mode: record and go on
            with open(collect, "a") as fh:
                lines = "\n".join(p.lines if p else [])
                fh.write(f"=== {device.uri} {type(exc).__name__}\n{lines}\n--- {exc}\n\n")

    STATS.clear()
    check()
    print(f"fuzz on {device.uri} ({mode}): {stats['programs']} programs, {stats['steps']} lines; steps: {STATS}")


def test_program_printer_reproduces(rng) -> None:
    """The printed program is valid Python that rebuilds the same leaf values."""
    for dt in GPU_DTYPES + CPU_EXTRA:
        a = make_values(rng, (2, 3), dt, special=True)
        src = render_array(a)
        b = eval(src, {"np": np})  # noqa: S307 - our own rendering
        assert b.dtype == a.dtype and b.shape == a.shape
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), (src, a, b)
    assert math.isnan(eval(render_array(np.asarray(np.nan, np.float32)), {"np": np}))
