"""Differential fuzzing: random Array API programs on every device vs NumPy (issue 9).

Hypothesis builds random *programs*: 3-8 Array API calls over a small pool of arrays of
random shapes (0-d to 3-d, size-0 and size-1 dimensions, broadcasting-compatible partners)
and dtypes (bool, int8-32, uint8-32, float32; float16 where the device has
``Capability.F16``; int64/uint64/float64 on ``cpu:0`` only -- WebGPU devices have no
64-bit types). Steps: elementwise unary and binary functions (with broadcasting), operators
with Python scalars, reductions with ``axis``/``keepdims``, slicing, integer and boolean
indexing, in-place updates (``x[idx] = v``, ``x += y``), ``where``, ``concat``/``stack``,
``reshape``/``permute_dims``, ``astype``, ``matmul``, ``sort`` and ``cumulative_sum``.

Each step runs on the device and on NumPy (the oracle) and is compared at once:

* dtypes must agree; on a GPU the oracle's 64-bit default dtypes map to the device's
  32-bit defaults (float64 -> float32, int64 -> int32, uint64 -> uint32: e.g. ``sum`` of
  int8, ``int8_array * 0.5``), and a step whose NumPy result is 64-bit may raise
  ``UnsupportedDTypeError`` on a GPU (documented in docs/arrays.md);
* values: exact for integers and bools, ``pyaccel.testing`` per-dtype tolerances for
  floats, NaN positions must match;
* errors: both raise, or neither; a device error must be typed (a pyaccel error or a
  builtin ``ValueError``/``TypeError``/``IndexError``/...), never a raw wgpu error.

When a float result matches within tolerance but not bit for bit, the device copy is
replaced by the oracle's values before the next step, so later discrete steps
(comparisons, sort order, casts) see identical inputs on both sides.

Comparisons skipped, each an implementation-defined case documented in docs/arrays.md or
the Array API standard (nothing else is filtered): float -> int ``astype`` of NaN, +-inf or
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
from pyaccel.testing import tolerance  # noqa: E402

pytestmark = pytest.mark.fuzz

FUZZ_CI_EXAMPLES = 12
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
    if dev.is_cpu:
        return GPU_DTYPES + CPU_EXTRA
    return GPU_DTYPES + (["float16"] if Capability.F16 in dev.capabilities else [])


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


def _acc32(fn, a: np.ndarray, *rest: Any, **kw: Any) -> np.ndarray:
    """float16 sums, scans and matmuls accumulate in float32 on every pyaccel device."""
    if a.dtype == np.float16 and all(not isinstance(r, np.ndarray) or r.dtype == np.float16 for r in rest):
        rest = tuple(r.astype(np.float32) if isinstance(r, np.ndarray) else r for r in rest)
        return np.asarray(fn(a.astype(np.float32), *rest, **kw)).astype(np.float16)
    return fn(a, *rest, **kw)


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
        return tuple(self.draw(st.sampled_from([0, 1, 1, 2, 3, 4, 5])) for _ in range(nd))

    def compatible_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """A shape that broadcasts with ``shape`` (either side may be the larger one)."""
        dims = [self.draw(st.sampled_from([d, d, 1])) for d in shape]
        drop = self.draw(st.integers(0, len(dims)))
        dims = dims[drop:]
        if len(dims) < 3 and self.draw(st.booleans()):
            dims = [self.draw(st.sampled_from([1, 2]))] * self.draw(st.integers(0, 3 - len(shape))) + dims
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
             mask=None, promo: Any = None) -> Entry | None:
        """Run one call on both sides. ``target``: an in-place step updating that entry;
        otherwise the result becomes a new pool entry (``view_of``: entries it may alias)."""
        name = target.name if target is not None else f"v{self.n}"
        line = text if target is not None else f"{name} = {text}"
        self.lines.append(line)
        note(line)
        r_np, e_np = _run(f_np)
        r_dev, e_dev = _run(f_dev)
        if e_np is not None or e_dev is not None:
            return self._errors(line, e_np, e_dev, r_np, promo)
        want = np.asarray(target.a if target is not None else r_np)
        got_arr = target.x if target is not None else r_dev
        if not isinstance(got_arr, xp.Array):
            raise Mismatch(f"{line}: device returned {type(got_arr).__name__}, not an Array")
        try:
            got = got_arr.to_numpy()
        except Exception as exc:  # noqa: BLE001 - a read error is a device error
            return self._errors(line + "  # (reading the result)", None, exc, r_np)
        exact = self.compare(line, got, want, mask(want) if mask else None)
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

    def expected_dtype(self, want: np.ndarray) -> np.dtype:
        if self.dev.is_cpu:
            return want.dtype
        return np.dtype(_MAP64.get(want.dtype.name, want.dtype.name))

    def expected_value(self, want: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return want.astype(self.expected_dtype(want))

    def compare(self, line: str, got: np.ndarray, want: np.ndarray, skip: np.ndarray | None) -> bool:
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
            rtol, atol = tolerance(edt)
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
}
BINARY = {
    "add": "if", "subtract": "if", "multiply": "if", "divide": "f", "floor_divide": "if",
    "remainder": "if", "pow": "f", "maximum": "if", "minimum": "if", "atan2": "f",
    "equal": "bif", "not_equal": "bif", "less": "if", "greater_equal": "if",
    "logical_and": "b", "logical_or": "b", "bitwise_and": "bi", "bitwise_xor": "bi",
}
OPERATORS = {"+": "if", "-": "if", "*": "if", "/": "f", "//": "if", "%": "if", ">": "if",
             "==": "bif", "&": "bi", "|": "bi", "**": "f"}
REDUCTIONS = {"sum": "bif", "prod": "if", "max": "if", "min": "if", "mean": "f", "any": "bif",
              "all": "bif", "argmax": "if"}


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
    p.step(f"xp.{name}({a.name}, {b.name})", lambda: getattr(np, name)(a.a, b.a),
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
    if p.draw(st.booleans()):
        p.step(f"{e.name} {op} {s!r}", lambda: f(e.a, s), lambda: f(e.x, s))
    else:
        p.step(f"{s!r} {op} {e.name}", lambda: f(s, e.a), lambda: f(s, e.x))


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
    axis = draw_axis(p, e.a.ndim, allow_tuple=name != "argmax")
    keep = p.draw(st.booleans())
    if name in ("sum", "prod", "mean"):
        f_np = lambda: _acc32(getattr(np, name), e.a, axis=axis, keepdims=keep)  # noqa: E731
    else:
        f_np = lambda: getattr(np, name)(e.a, axis=axis, keepdims=keep)  # noqa: E731
    p.step(f"xp.{name}({e.name}, axis={axis!r}, keepdims={keep})", f_np,
           lambda: getattr(xp, name)(e.x, axis=axis, keepdims=keep))


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
               lambda: xp.where(c.x, a.x, s))


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


def st_reshape(p: Program) -> None:
    e = p.pick() or p.leaf()
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
    e = p.pick() or p.leaf()
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
    p.step(f"xp.matmul({e.name}, {o.name})", lambda: _acc32(np.matmul, e.a, o.a),
           lambda: xp.matmul(e.x, o.x))


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
           lambda: _acc32(np.cumulative_sum, e.a, axis=axis, include_initial=inc),
           lambda: xp.cumulative_sum(e.x, axis=axis, include_initial=inc))


STEPS = [st_unary, st_binary, st_binary, st_scalar_op, st_reduce, st_getitem, st_setitem, st_inplace,
         st_where, st_concat, st_reshape, st_astype, st_matmul, st_sort, st_cumsum]


def run_program(dev: Any, data: Any) -> Program:
    p = Program(dev, data)
    _fill(p, data)
    return p


def _fill(p: Program, data: Any) -> None:
    for _ in range(data.draw(st.integers(1, 3), label="leaves")):
        p.leaf()
    for _ in range(data.draw(st.integers(3, 8), label="steps")):
        step = data.draw(st.sampled_from(STEPS), label="step")
        step(p)


def test_fuzz_programs(device) -> None:
    """Random programs on ``device`` agree with NumPy step by step."""
    n = _examples()
    cfg = settings(settings.get_profile(settings.get_current_profile_name()),
                   **({"max_examples": n} if n else {}), derandomize=False, deadline=None,
                   print_blob=True, report_multiple_bugs=False)

    collect = os.environ.get("PYACCEL_FUZZ_COLLECT")
    stats = {"programs": 0, "steps": 0}

    @cfg
    @given(data=st.data())
    def check(data: Any) -> None:
        stats["programs"] += 1
        if not collect:
            stats["steps"] += len(run_program(device, data).lines) - 1
            return
        p = None
        try:
            p = Program(device, data)
            _fill(p, data)
            stats["steps"] += len(p.lines) - 1
        except Exception as exc:  # noqa: BLE001 - collect mode: record and go on
            with open(collect, "a") as fh:
                lines = "\n".join(p.lines if p else [])
                fh.write(f"=== {device.uri} {type(exc).__name__}\n{lines}\n--- {exc}\n\n")

    STATS.clear()
    check()
    print(f"fuzz on {device.uri}: {stats['programs']} programs, {stats['steps']} lines; steps: {STATS}")


def test_program_printer_reproduces(rng) -> None:
    """The printed program is valid Python that rebuilds the same leaf values."""
    for dt in GPU_DTYPES + CPU_EXTRA:
        a = make_values(rng, (2, 3), dt, special=True)
        src = render_array(a)
        b = eval(src, {"np": np})  # noqa: S307 - our own rendering
        assert b.dtype == a.dtype and b.shape == a.shape
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), (src, a, b)
    assert math.isnan(eval(render_array(np.asarray(np.nan, np.float32)), {"np": np}))
