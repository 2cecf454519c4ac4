"""Run the native benchmarks in one process: bench_core, bench_kernels, bench_ops.

    python benchmarks/run_all.py [--quick] [--device vulkan:0] [--only core,kernels,ops]

(``pyaccel bench [--quick]`` runs this file.) Each benchmark writes its own JSON under
``benchmarks/results/`` (``core.json``, ``kernels.json``, ``ops.json``; with ``--quick``
the ``-quick`` variants, so a smoke run never overwrites recorded figures) and prints its
table; this script then prints every target with its verdict and writes a summary to
``benchmarks/results/all.json`` (``all-quick.json``). Targets are reported, not asserted:
the exit status is 0 unless a benchmark failed to run. About 90 s in full on the 2-core
reference machine, about 55 s with ``--quick``. The browser benchmark needs Chromium and
runs separately (``benchmarks/browser/run.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import bench_core  # noqa: E402
import bench_kernels  # noqa: E402
import bench_ops  # noqa: E402

from common import RESULTS_DIR, load_average, machine_info, write_json  # noqa: E402

SECTIONS = ("core", "kernels", "ops")


def _core(quick: bool, device: str) -> list[dict[str, Any]]:
    res = bench_core.run(quick=quick, device=device)
    return [{"target": f"{r['case']} vs {r['baseline']} {r['target']}", "value": r["ratio"],
             "met": r["met"]} for r in res["rows"] if r["limit"] is not None]


def _kernels(quick: bool, device: str) -> list[dict[str, Any]]:
    out = RESULTS_DIR / ("kernels-quick.json" if quick else "kernels.json")
    # quick: the full sizes with fewer repeats (its own --quick shrinks the sizes below the
    # ones its targets are stated for)
    argv = ["--device", device, "--out", str(out)] + (["--repeat", "3"] if quick else [])
    bench_kernels.main(argv)
    data = json.loads(out.read_text())
    return [{"target": k, "met": bool(v)} for k, v in data.get("targets", {}).items()]


def _ops(quick: bool, device: str) -> list[dict[str, Any]]:
    res = bench_ops.run(quick=quick, device=device)
    return [{"target": t["target"], "value": t["value"], "unit": t["unit"], "met": t["met"]}
            for t in res["targets"]]


def run(quick: bool = False, device: str = "vulkan:0", only: tuple[str, ...] = SECTIONS) -> dict[str, Any]:
    """Run the chosen benchmarks; returns the summary (also written to all[-quick].json)."""
    fns = {"core": _core, "kernels": _kernels, "ops": _ops}
    summary: dict[str, Any] = {"quick": quick, "device": device, "sections": {}}
    t_all = time.perf_counter()
    load0 = load_average()
    for name in only:
        print(f"\n=== bench_{name} ({'quick' if quick else 'full'}, {device}) ===", flush=True)
        t0 = time.perf_counter()
        try:
            targets = fns[name](quick, device)
            summary["sections"][name] = {"ok": True, "targets": targets}
        except Exception as exc:  # report and go on with the next benchmark
            traceback.print_exc()
            summary["sections"][name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        summary["sections"][name]["seconds"] = round(time.perf_counter() - t0, 1)
    summary["seconds"] = round(time.perf_counter() - t_all, 1)
    summary["load_average"] = {"start": load0, "end": load_average()}
    try:
        import pyaccel

        summary["machine"] = machine_info(pyaccel.device(device))
    except Exception:
        summary["machine"] = machine_info()
    summary["written_to"] = str(write_json("all-quick.json" if quick else "all.json", summary))
    return summary


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="short run of every benchmark")
    p.add_argument("--device", default=os.environ.get("PYACCEL_BENCH_DEVICE", "vulkan:0"))
    p.add_argument("--only", default=",".join(SECTIONS),
                   help=f"comma-separated subset of {','.join(SECTIONS)}")
    args = p.parse_args(argv)
    only = tuple(s.strip() for s in args.only.split(",") if s.strip())
    bad = [s for s in only if s not in SECTIONS]
    if bad:
        p.error(f"--only: unknown benchmark(s) {', '.join(bad)}; choose from {', '.join(SECTIONS)}")
    res = run(quick=args.quick, device=args.device, only=only)
    print(f"\n=== summary ({res['seconds']} s) ===")
    failed = False
    for name, sec in res["sections"].items():
        if not sec["ok"]:
            failed = True
            print(f"bench_{name}: FAILED ({sec['error']})")
            continue
        met = sum(t["met"] for t in sec["targets"])
        print(f"bench_{name}: {met}/{len(sec['targets'])} targets met ({sec['seconds']} s)")
        for t in sec["targets"]:
            if not t["met"]:
                val = f" ({t['value']:.3g}{' ' + t['unit'] if t.get('unit') else ''})" if "value" in t else ""
                print(f"  not met: {t['target']}{val}")
    print(f"summary: {res['written_to']}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
