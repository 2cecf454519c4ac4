"""Shared benchmark helpers: ABAB-interleaved timing, medians, ratios, machine info, output.

Interleaving (A B A B ... rather than A A A ... B B B) spreads slow drifts of the machine
(frequency, other processes, allocator state) evenly over the variants, so the ratio of
the medians is stable even on a small, busy machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "benchmarks" / "results"


def interleaved(variants: dict[str, Callable[[], Any]], rounds: int, *, inner: int = 1,
                warmup: int = 1) -> dict[str, list[float]]:
    """Seconds per call of each variant: ``rounds`` rounds, each running every variant
    ``inner`` times in turn (the order alternates between rounds: ABAB, then BABA)."""
    names = list(variants)
    for _ in range(warmup):
        for n in names:
            variants[n]()
    times: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        order = names if r % 2 == 0 else names[::-1]
        for n in order:
            fn = variants[n]
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            times[n].append((time.perf_counter() - t0) / inner)
    return times


def ready(out: Any, device: Any) -> Any:
    """Finish a timed GPU op: compute every lazy Array in ``out`` (an Array, or a tuple / list
    of them, e.g. a linalg result; anything else is left alone), then wait for ``device``;
    returns ``out``. ``Array.block_until_ready()`` for several results at once: a lazy result
    (fusion, deferred matmul; docs/fusion.md) is no recorded work, so ``device.synchronize()``
    alone would leave it out of the timed region."""
    from pyaccel.array import Array
    from pyaccel.ops import fusion

    todo = [out]
    while todo:
        x = todo.pop()
        if isinstance(x, Array):
            fusion.materialize(x)  # (no-op when x is not lazy)
        elif isinstance(x, (tuple, list)):
            todo.extend(x)
    device.synchronize()
    return out


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs)


@dataclass
class Row:
    """One comparison: pyaccel's median time against a baseline's, and the target ratio."""

    case: str
    pyaccel_s: float
    baseline: str
    baseline_s: float
    target: str  # e.g. "<= 1.10" (time ratio pyaccel / baseline)
    limit: float  # the ratio bound
    mode: str = "max"  # "max": ratio <= limit; "min": ratio >= limit (speed-up style)
    note: str = ""
    samples: int = 0

    @property
    def ratio(self) -> float:
        """pyaccel time / baseline time (< 1 means pyaccel is faster)."""
        return self.pyaccel_s / self.baseline_s if self.baseline_s else float("inf")

    @property
    def speedup(self) -> float:
        return 1.0 / self.ratio if self.ratio else float("inf")

    @property
    def met(self) -> bool:
        if self.mode == "min":
            return self.speedup >= self.limit
        return self.ratio <= self.limit

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (strict JSON: an unbounded limit is written as null)."""
        d = asdict(self)
        d.update(ratio=round(self.ratio, 4), speedup=round(self.speedup, 3), met=self.met)
        if d["limit"] == float("inf"):
            d["limit"] = None
        return d


def fmt_time(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:8.1f} us"
    if s < 1:
        return f"{s * 1e3:8.2f} ms"
    return f"{s:8.3f} s "


def table(rows: Sequence[Row]) -> str:
    """A fixed-width table of the rows (time ratio pyaccel/baseline; target; met)."""
    head = f"{'case':44s} {'pyaccel':>11s} {'baseline':>11s}  {'ratio':>7s}  {'target':>14s}  ok   baseline"
    lines = [head, "-" * len(head)]
    for r in rows:
        target = f"{r.target}"
        lines.append(
            f"{r.case:44s} {fmt_time(r.pyaccel_s)} {fmt_time(r.baseline_s)}  {r.ratio:7.3f}  "
            f"{target:>14s}  {'yes' if r.met else 'NO ':3s}  {r.baseline}"
        )
    return "\n".join(lines)


def machine_info(device: Any = None) -> dict[str, Any]:
    """CPU, core count, Python, wgpu and driver versions (and the device, if given)."""
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "cpu": _cpu_model(),
    }
    try:
        import wgpu

        info["wgpu"] = wgpu.__version__
    except ImportError:
        info["wgpu"] = None
    try:
        import numpy

        info["numpy"] = numpy.__version__
    except ImportError:
        info["numpy"] = None
    if device is not None:
        d = device.descriptor
        info["device"] = {"uri": d.uri, "name": d.name, "driver": d.driver, "api": d.api,
                          "adapter_type": d.adapter_type, "runtime": device.runtime_version}
    return info


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def write_json(name: str, data: dict[str, Any]) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / name
    path.write_text(json.dumps(data, indent=2, allow_nan=False) + "\n")
    return path


def load_average() -> tuple[float, float, float] | None:
    """``os.getloadavg()``, or None where the platform has none."""
    return os.getloadavg() if hasattr(os, "getloadavg") else None


def result(name: str, rows: Sequence[Row | dict[str, Any]], *, quick: bool, device: str, t0: float,
           dev: Any = None, targets: list[dict[str, Any]] | None = None, write: bool = True,
           **extra: Any) -> dict[str, Any]:
    """A run's results: ``benchmark``, ``quick``, ``device``, ``machine`` (of ``dev``), the
    ``extra`` fields, ``seconds`` since ``t0`` (a ``time.perf_counter()``), ``rows`` (Rows as
    dicts), ``targets`` (when given) and ``all_targets_met`` (every target met, or without
    targets every row). With ``write`` also written to ``<name>[-quick].json`` in RESULTS_DIR,
    its path under ``written_to``."""
    out: dict[str, Any] = {"benchmark": name, "quick": quick, "device": device,
                           "machine": machine_info(dev), **extra,
                           "seconds": round(time.perf_counter() - t0, 1),
                           "rows": [r.as_dict() if isinstance(r, Row) else r for r in rows]}
    if targets is not None:
        out["targets"] = targets
    out["all_targets_met"] = all(t["met"] for t in (out["rows"] if targets is None else targets))
    if write:
        out["written_to"] = str(write_json(f"{name}-quick.json" if quick else f"{name}.json", out))
    return out


def arg_parser(doc: str | None, quick_help: str) -> argparse.ArgumentParser:
    """``--quick`` and ``--device`` (default ``$PYACCEL_BENCH_DEVICE``, else ``vulkan:0``);
    the description is the first paragraph of ``doc``."""
    p = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help=quick_help)
    p.add_argument("--device", default=os.environ.get("PYACCEL_BENCH_DEVICE", "vulkan:0"))
    return p


def report(res: dict[str, Any], *, strict: bool = False) -> int:
    """Print the machine line of a ``result`` and where it was written; the exit status
    (with ``strict``, 1 when a target was missed)."""
    m, d = res["machine"], res["machine"].get("device") or {}
    la = (res.get("load_average") or {}).get("start")
    load = f"; load average {la[0]:.2f} at start" if la else ""
    print(f"\n{m['cpu']} ({m['cpu_count']} cores), Python {m['python']}, wgpu {m['wgpu']}, NumPy "
          f"{m['numpy']}, {d.get('name')} / {d.get('driver')}{load}; {res['seconds']} s")
    print(f"results: {res.get('written_to')}")
    return 1 if strict and not res["all_targets_met"] else 0


def ensure_path() -> None:
    """Make ``import pyaccel`` work from a source checkout."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
