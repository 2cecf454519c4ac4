"""float32 transcendental accuracy of a pyaccel device, in ulp against float64 NumPy.

For every float32 transcendental of the op table, random inputs from the domains the op
table's tests draw from, the ranges where WGSL's built-ins are weakest (``exp`` on [30, 46],
``log1p`` near 0, ``sin`` / ``cos`` up to 1e5) and results near the ends of float32's range.
The reference is NumPy's float64 function rounded to float32; the error is
``|got - ref| / spacing(ref)`` in float32 ulps (0 where both are the same NaN / inf).

Run as a script for the table of docs/arrays.md::

    python tests/backends/accuracy_f32.py --device vulkan:0 [--n 20000] [--name exp]

``tests/backends/test_f32_accuracy.py`` asserts the bounds from the same domains.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable

import numpy as np

Domain = tuple[str, Callable[[np.random.Generator, int], tuple[np.ndarray, ...]]]


def _u(lo: float, hi: float) -> Callable[[np.random.Generator, int], tuple[np.ndarray, ...]]:
    return lambda rng, n: (rng.uniform(lo, hi, n),)


def _logu(lo: float, hi: float, signed: bool = False):
    def f(rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        v = np.exp(rng.uniform(math.log(lo), math.log(hi), n))
        return (v * rng.choice([-1.0, 1.0], n) if signed else v,)
    return f


def _u2(lo: float, hi: float, lo2: float, hi2: float):
    return lambda rng, n: (rng.uniform(lo, hi, n), rng.uniform(lo2, hi2, n))


def _pow_int(rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
    return (-rng.integers(1, 20, n).astype(np.float64), rng.integers(-25, 25, n).astype(np.float64))


# function -> [(label, draw(rng, n) -> float64 inputs)]; the first domain of each is the op
# table's test domain (tests/backends/_array_util.rand)
DOMAINS: dict[str, list[Domain]] = {
    "exp": [("[-10, 10]", _u(-10, 10)), ("[30, 46]", _u(30, 46)), ("[-87, 88.7]", _u(-87, 88.7)),
            ("[-103, -87] (subnormal)", _u(-103, -87.4))],
    "expm1": [("[-10, 10]", _u(-10, 10)), ("[-1, 1]", _u(-1, 1)), ("abs(x) < 1e-4", _u(-1e-4, 1e-4)),
              ("[-20, 88.7]", _u(-20, 88.7))],
    "log": [("[0.01, 10]", _u(0.01, 10)), ("[0.5, 2]", _u(0.5, 2)),
            ("[1e-37, 3e38]", _logu(1e-37, 3e38))],
    "log2": [("[0.01, 10]", _u(0.01, 10)), ("[0.5, 2]", _u(0.5, 2)),
             ("[1e-37, 3e38]", _logu(1e-37, 3e38))],
    "log10": [("[0.01, 10]", _u(0.01, 10)), ("[0.5, 2]", _u(0.5, 2)),
              ("[1e-37, 3e38]", _logu(1e-37, 3e38))],
    "log1p": [("[0.01, 10]", _u(0.01, 10)), ("abs(x) <= 0.04", _u(-0.04, 0.04)),
              ("(-1, 1)", _u(-0.999, 1)), ("abs(x) in [1e-8, 1e-3]", _logu(1e-8, 1e-3, True)),
              ("[1, 3e38]", _logu(1, 3e38))],
    "sin": [("[-pi, pi]", _u(-math.pi, math.pi)), ("[-100, 100]", _u(-100, 100)),
            ("abs(x) <= 1e4", _u(-1e4, 1e4)), ("abs(x) <= 1e5", _u(-1e5, 1e5)),
            ("abs(x) in [1e-6, 1e-2]", _logu(1e-6, 1e-2, True))],
    "cos": [("[-pi, pi]", _u(-math.pi, math.pi)), ("[-100, 100]", _u(-100, 100)),
            ("abs(x) <= 1e4", _u(-1e4, 1e4)), ("abs(x) <= 1e5", _u(-1e5, 1e5))],
    "tan": [("(-1, 1)", _u(-0.99, 0.99)), ("[-100, 100]", _u(-100, 100)),
            ("abs(x) <= 1e4", _u(-1e4, 1e4)), ("abs(x) <= 1e5", _u(-1e5, 1e5))],
    "asin": [("(-1, 1)", _u(-1, 1)), ("abs(x) in [1e-6, 0.1]", _logu(1e-6, 0.1, True)),
             ("abs(x) in [0.99, 1]", _logu(0.99, 1, True))],
    "acos": [("(-1, 1)", _u(-1, 1)), ("abs(x) in [0.99, 1]", _logu(0.99, 1, True))],
    "atan": [("normal(0, 3)", lambda rng, n: (rng.normal(0, 3, n),)),
             ("abs(x) in [1e-6, 1e10]", _logu(1e-6, 1e10, True))],
    "atan2": [("normal(0, 3)^2", lambda rng, n: (rng.normal(0, 3, n), rng.normal(0, 3, n))),
              ("abs(y), abs(x) in [1e-10, 1e10]", lambda rng, n: (_logu(1e-10, 1e10, True)(rng, n)[0],
                                                         _logu(1e-10, 1e10, True)(rng, n)[0]))],
    "sinh": [("[-10, 10]", _u(-10, 10)), ("[-1, 1]", _u(-1, 1)), ("[-89, 89]", _u(-89, 89))],
    "cosh": [("[-10, 10]", _u(-10, 10)), ("[-89, 89]", _u(-89, 89))],
    "tanh": [("normal(0, 3)", lambda rng, n: (rng.normal(0, 3, n),)), ("[-1, 1]", _u(-1, 1)),
             ("abs(x) in [1e-6, 0.1]", _logu(1e-6, 0.1, True))],
    "asinh": [("normal(0, 3)", lambda rng, n: (rng.normal(0, 3, n),)), ("[-1, 1]", _u(-1, 1)),
              ("abs(x) in [1e-6, 1e30]", _logu(1e-6, 1e30, True))],
    "acosh": [("[1, 10]", _u(1, 10)), ("[1, 1.01]", _u(1, 1.01)), ("[1, 1e30]", _logu(1, 1e30))],
    "atanh": [("(-1, 1)", _u(-0.99, 0.99)), ("abs(x) in [1e-6, 0.1]", _logu(1e-6, 0.1, True)),
              ("abs(x) in [0.99, 1)", _logu(0.99, 0.99999, True))],
    "pow": [("[0.1, 3] ** [0.1, 3]", _u2(0.1, 3, 0.1, 3)), ("[0, 10] ** [-10, 10]", _u2(0, 10, -10, 10)),
            ("[0.5, 2] ** [-100, 100]", _u2(0.5, 2, -100, 100)),
            ("negative ** integer", _pow_int)],
    "sqrt": [("[0.01, 10]", _u(0.01, 10)), ("[1e-37, 3e38]", _logu(1e-37, 3e38))],
    "hypot": [("normal(0, 3)^2", lambda rng, n: (rng.normal(0, 3, n), rng.normal(0, 3, n))),
              ("abs(x), abs(y) in [1e-30, 1e30]", lambda rng, n: (_logu(1e-30, 1e30, True)(rng, n)[0],
                                                        _logu(1e-30, 1e30, True)(rng, n)[0]))],
    "logaddexp": [("normal(0, 3)^2", lambda rng, n: (rng.normal(0, 3, n), rng.normal(0, 3, n))),
                  ("[-100, 100]^2", _u2(-100, 100, -100, 100))],
}
NAMES = tuple(DOMAINS)


def reference(name: str, *args: np.ndarray) -> np.ndarray:
    """NumPy's float64 result on the float32 inputs, rounded to float32."""
    with np.errstate(all="ignore"):
        return getattr(np, name)(*(a.astype(np.float64) for a in args)).astype(np.float32)


def ulp_error(got: np.ndarray, want: np.ndarray, tiny: float = 0.0) -> np.ndarray:
    """|got - want| in float32 ulps of ``want`` (0 where both are NaN or equal; inf where one is
    NaN / inf and the other not). With ``tiny``, an ulp is at least ``tiny`` (an absolute error
    bound for results near 0)."""
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    same = (np.isnan(g) & np.isnan(w)) | (g == w)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(g - w) / np.maximum(np.spacing(np.abs(want)).astype(np.float64), tiny)
    err = np.where(same, 0.0, err)
    return np.where(np.isfinite(err), err, np.inf)


def inputs(rng: np.random.Generator, name: str, n: int) -> list[tuple[str, tuple[np.ndarray, ...]]]:
    """(label, float32 inputs) per domain of ``name``, ``n`` values each."""
    return [(label, tuple(a.astype(np.float32) for a in draw(rng, n))) for label, draw in DOMAINS[name]]


def run(device, name: str, *args: np.ndarray) -> np.ndarray:
    """``pyaccel.<name>`` of float32 inputs on ``device``, as a NumPy array."""
    import pyaccel

    xs = [pyaccel.asarray(a, device=device) for a in args]
    return np.asarray(getattr(pyaccel, name)(*xs))


def measure(device, name: str, n: int, seed: int = 0) -> list[tuple[str, float, tuple[float, ...], float]]:
    """(domain label, max ulp, worst input, NumPy float32's max ulp) per domain of ``name`` on
    ``device`` (one launch)."""
    rng = np.random.default_rng(seed)
    parts = inputs(rng, name, n)
    args = tuple(np.concatenate([p[k] for _, p in parts]) for k in range(len(parts[0][1])))
    ref = reference(name, *args)
    err = ulp_error(run(device, name, *args), ref)
    with np.errstate(all="ignore"):
        nerr = ulp_error(getattr(np, name)(*args), ref)  # NumPy's own float32 loop
    out = []
    for j, (label, _) in enumerate(parts):
        e = err[j * n: (j + 1) * n]
        k = int(np.argmax(e))
        out.append((label, float(e[k]), tuple(float(a[j * n + k]) for a in args),
                    float(nerr[j * n: (j + 1) * n].max())))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="vulkan:0")
    ap.add_argument("--n", type=int, default=20000, help="values per domain")
    ap.add_argument("--name", action="append", help="functions (default: all)")
    a = ap.parse_args(argv)
    import pyaccel

    dev = pyaccel.device(a.device) if hasattr(pyaccel, "device") else a.device
    print(f"| function | domain | max ulp ({a.device}) | worst input | NumPy float32 |")
    print("|---|---|---|---|---|")
    for name in a.name or NAMES:
        for label, e, worst, ne in measure(dev, name, a.n):
            w = ", ".join(f"{v:.9g}" for v in worst)
            print(f"| {name} | {label} | {e:.3g} | {w} | {ne:.3g} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
