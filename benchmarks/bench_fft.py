"""pyaccel.fft against NumPy and a naive WGSL DFT, in one run.

    python benchmarks/bench_fft.py [--quick] [--device vulkan:0]

Writes ``benchmarks/results/fft.json`` (``fft-quick.json`` with ``--quick``) and prints a
table. Every case times its variants ABAB-interleaved (``common.interleaved``) and reports
medians; GPU variants include waiting for the device (``y.block_until_ready()``); inputs are
uploaded once, outside the timed region, and every variant's result is checked against
NumPy (complex128) once before timing.

Cases (complex64, forward, norm="backward"):

* ``fft`` of 2^16 and 2^20 points, batch 1, and batched (16 x 2^16, 4 x 2^20 along the
  last axis): pyaccel (Stockham radix-4 passes) vs NumPy's ``np.fft.fft`` (pocketfft, one
  thread). GFLOP/s use the usual 5 n log2 n per transform; ``numpy time-equivalent`` =
  NumPy time / pyaccel time (1.0: as fast as NumPy).
* a non-power of two, 3 * 5 * 7 * 11 * 16 = 18480 points (Bluestein, two FFTs of 2^16) vs NumPy.
* 4096 points: pyaccel vs a naive O(n^2) DFT kernel in WGSL (one thread per output, a loop
  over the n inputs with the same float64-derived twiddle table, ``pyaccel.Kernel``):
  the issue's "faster than a naive WGSL version".

Targets (reported, not asserted): Stockham faster than the naive DFT at 4096 points. On a
software GPU (lavapipe) NumPy on the same CPU cores is expected to be faster; the ratio
is recorded, with no target.

``run(quick=False) -> dict`` is the entry point.
"""

from __future__ import annotations

import math
import os
import sys
import time
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import common
    from common import ensure_path, fmt_time, interleaved, median, write_json
else:
    from . import common
    from .common import ensure_path, fmt_time, interleaved, median, write_json

ensure_path()

NAIVE_N = 4096
NAIVE_DFT = """
struct P { n: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> tw: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> p: P;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let k = g.x;
    if (k >= p.n) { return; }
    var re = 0.0;
    var im = 0.0;
    var m = 0u;                       // (j * k) mod n, kept exact in integers
    for (var j = 0u; j < p.n; j++) {  // n <= 16384: within the project's loop bound
        let a = vec2<f32>(x[2u * j], x[2u * j + 1u]);
        let w = vec2<f32>(tw[2u * m], tw[2u * m + 1u]);
        re += a.x * w.x - a.y * w.y;
        im += a.x * w.y + a.y * w.x;
        m += k;
        if (m >= p.n) { m -= p.n; }
    }
    y[2u * k] = re;
    y[2u * k + 1u] = im;
}
"""


class Results:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.targets: list[dict[str, Any]] = []

    def add(self, case: str, impl: str, times: list[float], **metrics: Any) -> dict[str, Any]:
        row = {"case": case, "impl": impl, "median_s": median(times), "best_s": min(times),
               "samples": len(times), **metrics}
        self.rows.append(row)
        return row

    def target(self, name: str, value: float, limit: float, met: bool, unit: str = "") -> None:
        self.targets.append({"target": name, "value": round(value, 4), "limit": limit, "unit": unit,
                             "met": bool(met)})


def _put(dev: Any, a: Any) -> Any:
    """A complex64 Array on ``dev`` (asarray when it takes complex data, else raw storage)."""
    import pyaccel
    from pyaccel.array import Array

    try:
        return pyaccel.asarray(a, device=dev)
    except (TypeError, pyaccel.UnsupportedDTypeError):
        x = Array._empty(dev, a.shape, pyaccel.complex64)
        x._buf.write(a)
        return x


def _get(x: Any) -> Any:
    import numpy as np

    return np.frombuffer(x._storage_bytes(), np.complex64).reshape(x.shape)


def _err(got: Any, ref: Any) -> float:
    import numpy as np

    return float(np.abs(got - ref).max() / np.abs(ref).max())


def bench_fft(dev: Any, res: Results, quick: bool) -> None:
    import numpy as np

    import pyaccel.fft as pf

    rng = np.random.default_rng(5)
    cases = [(1, 1 << 16), (16, 1 << 16), (1, 1 << 20), (4, 1 << 20), (1, 3 * 5 * 7 * 11 * 16)]
    for batch, n in cases:
        a = (rng.standard_normal((batch, n)) + 1j * rng.standard_normal((batch, n))).astype(np.complex64)
        x = _put(dev, a)

        def ours(x: Any = x) -> Any:
            return pf.fft(x).block_until_ready()

        err = _err(_get(ours()), np.fft.fft(a.astype(np.complex128)))
        assert err < 1e-5, err
        big = batch * n >= 1 << 21
        rounds = (2 if big else 3) if quick else (5 if big else 9)
        t = interleaved({"pyaccel": ours, "numpy": lambda a=a: np.fft.fft(a)}, rounds)
        flop = 5.0 * n * math.log2(n) * batch
        tn = median(t["numpy"])
        case = f"fft {batch} x {n}" if batch > 1 else f"fft {n}"
        for impl, label in (("pyaccel", "pyaccel.fft.fft"), ("numpy", "numpy np.fft.fft")):
            res.add(case, label, t[impl], gflops=round(flop / median(t[impl]) / 1e9, 3),
                    numpy_time_equiv=round(tn / median(t[impl]), 4),
                    rel_err=round(err, 10) if impl == "pyaccel" else None)
        x._buf.free()


def bench_naive(dev: Any, res: Results, quick: bool) -> None:
    import numpy as np

    import pyaccel
    import pyaccel.fft as pf
    from pyaccel.ops.fft_wgsl import twiddle_table

    n = NAIVE_N
    rng = np.random.default_rng(6)
    a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    x = _put(dev, a)
    xf = pyaccel.asarray(a.view(np.float32), device=dev)
    tw = pyaccel.asarray(np.frombuffer(twiddle_table(n), np.float32), device=dev)
    yf = pyaccel.zeros(2 * n, dtype=pyaccel.float32, device=dev)
    kern = pyaccel.Kernel(NAIVE_DFT)

    def naive() -> None:
        kern(xf, tw, yf, {"n": n}, grid=n, device=dev)
        dev.synchronize()

    def ours() -> Any:
        return pf.fft(x).block_until_ready()

    ref = np.fft.fft(a.astype(np.complex128))
    naive()
    err_naive = _err(yf.to_numpy().view(np.complex64), ref)
    err = _err(_get(ours()), ref)
    assert err_naive < 1e-4 and err < 1e-5, (err_naive, err)
    t = interleaved({"pyaccel": ours, "naive": naive}, 3 if quick else 7)
    flop = 5.0 * n * math.log2(n)
    for impl, label, e in (("pyaccel", "pyaccel.fft.fft (Stockham)", err),
                           ("naive", "naive O(n^2) WGSL DFT", err_naive)):
        res.add(f"fft {n}", label, t[impl], gflops=round(flop / median(t[impl]) / 1e9, 3),
                rel_err=round(e, 10))
    sp = median(t["naive"]) / median(t["pyaccel"])
    res.target(f"fft {n}: Stockham faster than the naive WGSL DFT", sp, 1.0, sp > 1.0, "x naive")


ACCURACY_SIZES = [1 << k for k in range(1, 21)] + [1000, 3 * 5 * 7 * 11, 4097, 18480, 65537]


def accuracy(device: str = "vulkan:0", sizes: list[int] | None = None) -> list[dict[str, Any]]:
    """Relative error (max |X - X_ref| / max |X_ref|, X_ref: NumPy in complex128 of the same
    complex64 input) of fft, ifft (norm="backward"), rfft and irfft per size, and of the
    round trip ifft(fft(x)) against x."""
    import numpy as np

    import pyaccel
    import pyaccel.fft as pf
    from pyaccel import Capability
    from pyaccel.array import Array

    dev = pyaccel.device(device)
    impl = dev.impl
    if Capability.COMPLEX not in dev.capabilities:  # rfft's complex64 result (see the tests)
        impl.capabilities = dev.capabilities | Capability.COMPLEX
    rng = np.random.default_rng(7)
    rows = []
    for n in sizes or ACCURACY_SIZES:
        a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
        r = rng.standard_normal(n).astype(np.float32)
        x = _put(dev, a)
        xr = Array._empty(dev, (n,), pyaccel.float32)
        xr._buf.write(r)
        a64, r64 = a.astype(np.complex128), r.astype(np.float64)
        fx = pf.fft(x)
        h = np.fft.rfft(r64).astype(np.complex64)
        xh = _put(dev, h)
        row = {"n": n, "path": "stockham" if n & (n - 1) == 0 else "bluestein",
               "fft": _err(_get(fx), np.fft.fft(a64)),
               "ifft": _err(_get(pf.ifft(x)), np.fft.ifft(a64)),
               "rfft": _err(_get(pf.rfft(xr)), np.fft.rfft(r64)),
               "irfft": _err(np.frombuffer(pf.irfft(xh, n=n)._storage_bytes(), np.float32),
                             np.fft.irfft(h.astype(np.complex128), n=n)),
               "round_trip": _err(_get(pf.ifft(fx)), a64),
               "numpy_complex64_fft": _err(np.fft.fft(a), np.fft.fft(a64))}
        rows.append(row)
        print(f"{n:8d} {row['path']:9s} " + " ".join(f"{k} {row[k]:.2e}" for k in
                                                     ("fft", "ifft", "rfft", "irfft", "round_trip",
                                                      "numpy_complex64_fft")))
    return rows


def table(res: Results) -> str:
    head = f"{'case':22s} {'impl':30s} {'median':>11s} {'GFLOP/s':>8s} {'np-equiv':>8s} {'rel err':>9s}"
    lines = [head, "-" * len(head)]
    for r in res.rows:
        ne = r.get("numpy_time_equiv")
        e = r.get("rel_err")
        lines.append(f"{r['case']:22s} {r['impl']:30s} {fmt_time(r['median_s'])} {r['gflops']:8.3f} "
                     f"{'' if ne is None else format(ne, '.3f'):>8s} {'' if e is None else format(e, '.2e'):>9s}")
    lines.append("")
    for tg in res.targets:
        lines.append(f"target {tg['target']}: {tg['value']:.3g} {tg['unit']} -> "
                     f"{'met' if tg['met'] else 'NOT met'}")
    return "\n".join(lines)


def run(quick: bool = False, device: str = "vulkan:0", write: bool = True) -> dict[str, Any]:
    """Run every case; returns (and by default writes) the results as a dict."""
    import pyaccel

    dev = pyaccel.device(device)
    if dev.is_cpu:
        raise ValueError("bench_fft measures the WGSL kernels: pass a GPU device URI (vulkan:0, gl:0)")
    t0 = time.perf_counter()
    res = Results()
    load0 = common.load_average()
    bench_fft(dev, res, quick)
    bench_naive(dev, res, quick)
    load = {"start": load0, "end": common.load_average()}
    out = common.result("fft", res.rows, quick=quick, device=device, dev=dev, t0=t0, write=write,
                        targets=res.targets, load_average=load)
    print(table(res))
    return out


def main(argv: list[str] | None = None) -> int:
    p = common.arg_parser(__doc__, "fewer rounds")
    p.add_argument("--accuracy", action="store_true",
                   help="print the error against NumPy per size instead (docs/fft.md)")
    args = p.parse_args(argv)
    if args.accuracy:
        rows = accuracy(args.device)
        print(f"results: {write_json('fft-accuracy.json', {'device': args.device, 'rows': rows})}")
        return 0
    return common.report(run(quick=args.quick, device=args.device))


if __name__ == "__main__":
    raise SystemExit(main())
