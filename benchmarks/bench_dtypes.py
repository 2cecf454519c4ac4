"""Emulated 64-bit dtypes against their 32-bit peers on one device (default ``vulkan:0``).

    python benchmarks/bench_dtypes.py [--quick] [--device vulkan:0] [--rounds 5]

float64 against float32 and int64 against int32 for ``add``, ``multiply``, ``exp`` (float
only), ``sum`` and ``matmul`` (512 x 512), each timed as op + ``result.block_until_ready()``,
the two dtypes ABAB-interleaved in one run; reported as the ratio of the minimum times
(64-bit / 32-bit; the minimum is the least disturbed by other load on the machine). Target
of issue 10 for the memory-bound case: ``add`` at 2^22 elements within 3x of float32.
Ops still on the host path (docs/arrays.md) are marked: they measure a read back, NumPy
and an upload. Writes ``benchmarks/results/dtypes.json``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import arg_parser, ensure_path, interleaved, machine_info, write_json
else:
    from .common import arg_parser, ensure_path, interleaved, machine_info, write_json

ensure_path()

import pyaccel as xp  # noqa: E402
from pyaccel.ops import wgsl_provider as wp  # noqa: E402

PAIRS = (("float64", "float32"), ("int64", "int32"))


def _case(dev: Any, op: str, n: int, dt: str, rng: np.random.Generator) -> Any:
    if op == "matmul":
        h = rng.standard_normal((n, n)) if dt.startswith("float") else rng.integers(-50, 50, (n, n))
    else:
        h = rng.standard_normal(n) if dt.startswith("float") else rng.integers(-(2**20), 2**20, n)
    a = xp.asarray(h.astype(dt), device=dev)
    b = xp.asarray(h[::-1].astype(dt).copy(), device=dev)
    fn = {"add": lambda: xp.add(a, b), "multiply": lambda: xp.multiply(a, b), "exp": lambda: xp.exp(a),
          "sum": lambda: xp.sum(a), "matmul": lambda: xp.matmul(a, b)}[op]

    def run() -> None:
        # (a 32-bit elementwise result is lazy, a float32/int32 matmul deferred, until needed:
        # docs/fusion.md; the 64-bit ones run at once. synchronize() alone timed nothing for the
        # 32-bit side, inflating every ratio)
        fn().block_until_ready()

    return run


def run(device: str = "vulkan:0", quick: bool = False, rounds: int = 5) -> dict[str, Any]:
    dev = xp.device(device)
    rng = np.random.default_rng(0)
    big = 2**18 if quick else 2**22
    cases = [("add", big), ("add", 2**16), ("multiply", big), ("exp", 2**16 if quick else 2**20),
             ("sum", big), ("matmul", 128 if quick else 512)]
    rows = []
    for wide, narrow in PAIRS:
        for op, n in cases:
            if op == "exp" and not wide.startswith("float"):
                continue
            host = wide in wp.HOST_PATH.get(op, ()) or (op == "exp" and wide in wp.HOST_PATH.get("exp", ()))
            t = interleaved({wide: _case(dev, op, n, wide, rng), narrow: _case(dev, op, n, narrow, rng)},
                            rounds=1 if op == "matmul" and not quick else rounds)
            tw, tn = min(t[wide]), min(t[narrow])
            rows.append({"op": op, "n": n, "wide": wide, "narrow": narrow, "t_wide_s": tw, "t_narrow_s": tn,
                         "ratio": tw / tn, "host_path": host})
    print(f"{'op':10} {'n':>9} {'dtypes':18} {'64-bit':>10} {'32-bit':>10} {'ratio':>7}")
    for r in rows:
        mark = "  (host path)" if r["host_path"] else ""
        print(f"{r['op']:10} {r['n']:>9} {r['wide'] + '/' + r['narrow']:18} {r['t_wide_s'] * 1e3:9.2f}ms "
              f"{r['t_narrow_s'] * 1e3:9.2f}ms {r['ratio']:6.2f}x{mark}")
    target = next((r for r in rows if r["op"] == "add" and r["n"] == big and r["wide"] == "float64"), None)
    out = {"device": device, "machine": machine_info(dev), "rows": rows,
           "target_add_float64_le_3x": None if target is None else target["ratio"] <= 3.0}
    write_json("dtypes.json", out)
    return out


def main(argv: list[str] | None = None) -> None:
    p = arg_parser(__doc__, "smaller sizes (2^18 elements, matmul 128)")
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args(argv)
    run(a.device, a.quick, a.rounds)


if __name__ == "__main__":
    main()
