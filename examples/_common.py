"""Shared bits of the examples: argument parsing, timing, and the oracle check."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import pyaccel


def parse_args(description: str, **extra: Any) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--device", default=None, help="device URI (default: the best device here)")
    p.add_argument("--repeat", type=int, default=3, help="timed runs (best is reported)")
    for name, (typ, default, help_) in extra.items():
        p.add_argument(f"--{name.replace('_', '-')}", type=typ, default=default, help=help_)
    return p.parse_args()


def timed(fn: Callable[[], Any], repeat: int, sync: Callable[[Any], Any] = lambda r: r) -> tuple[Any, float]:
    """Best wall time of ``repeat`` runs; ``sync`` forces the result (e.g. reads it back)."""
    best = float("inf")
    out = None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        out = sync(fn())
        best = min(best, time.perf_counter() - t0)
    return out, best


def print_times(name: str, dev: pyaccel.Device, t_dev: float, t_np: float) -> None:
    print(name)
    print(f"  {dev.uri:10s} {dev.name[:40]:40s} {t_dev * 1e3:9.2f} ms")
    print(f"  {'numpy':10s} {'oracle (NumPy on the host)':40s} {t_np * 1e3:9.2f} ms")


def verdict(ok: bool, detail: str) -> int:
    """Print the oracle verdict; return a process exit code."""
    print(f"  {detail} -> {'OK' if ok else 'MISMATCH'}")
    return 0 if ok else 1


def report(name: str, dev: pyaccel.Device, got: np.ndarray, expected: np.ndarray, t_dev: float,
           t_np: float, rtol: float = 1e-4, atol: float = 1e-5) -> int:
    """Print timings and the element-wise oracle comparison; return a process exit code."""
    got = np.asarray(got)
    same = got.shape == expected.shape
    ok = same and np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    err = float(np.max(np.abs(got.astype(np.float64) - expected))) if same and got.size else float("nan")
    print_times(name, dev, t_dev, t_np)
    return verdict(bool(ok), f"max |device - numpy| = {err:.3e} (rtol={rtol}, atol={atol}, "
                   f"shapes {got.shape} vs {expected.shape})")
