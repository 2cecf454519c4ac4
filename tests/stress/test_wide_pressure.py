"""The later paths under pressure: emulated 64-bit dtypes, complex, linalg and fft (issue 9's
stress items, applied to the dtypes and extensions added after it).

* Threads: 5 threads on ONE device (every device, cpu:0 the control), and 2 threads per device
  on vulkan:0, gl:0 and cpu:0 at once, each iteration one workload of :func:`workload` on fresh
  random data (``default_rng([seed, thread, iteration])``): float64 exact arithmetic
  (``+ - * / sqrt``, bit-identical to NumPy, special values included) and an exp/log chain,
  int64 / uint64 ``// % * -`` with wrap-around and division by zero (exact), complex64
  multiply + sum, float64 sum / mean / var over 2-4 * 10^4 elements, int64 cumulative_sum
  that wraps, float64 matmul / vecdot, linalg solve / inv / cholesky on float32 batches (the
  WGSL kernels) and solve / det on float64 (the host path), fft / ifft / rfft on complex64 and
  float32 (Stockham and Bluestein lengths).
* asyncio: in a child interpreter (a wgpu abort must fail the test, not kill pytest), several
  tasks on one device build the same workloads and ``await to_numpy_async()`` /
  ``synchronize_async()`` in between, while a thread runs them synchronously.
* Past Mesa's loop cap (65,535 iterations per invocation, ``gpu_kernels.MAX_LOOP``), outputs
  poisoned first: float64 sum / mean / max / argmax / var / cumulative_sum over a
  200,000-element row and sum over long rows and columns, int64 / uint64 sum and int64
  cumulative_sum over 200,000 (exact, wrapping), complex64 / complex128 sum over 200,000,
  complex64 vecdot with K = 70,000, float64 matmul and vecdot with K = 100,000 (10-30 ms on
  lavapipe / llvmpipe, so no smaller K was needed), fft / ifft of length 2^17 (Stockham) and
  70,001 (Bluestein), qr / svdvals of a (70,000, 3) float32 matrix.

Comparisons use ``pyaccel.testing.assert_allclose_dtype``: exact where the docs say exact
(docs/float64.md, docs/arrays.md), the per-dtype table otherwise, and for sums, dot products
and transforms a bound scaled by the magnitude of the terms (as ``_array_util.check_scaled``).
Each workload has a fixed size, so ``CI=true`` shortens only the rounds (thread iterations and
wall-clock budgets); ``PYACCEL_STRESS_SCALE`` lengthens them.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from _stress_util import ROOT, budget, count, describe, run_script, run_threads, summarize

sys.path.insert(0, str(ROOT / "tests" / "backends"))
from _array_util import check, check_scaled, poisoned, rand  # noqa: E402, F401  (fixture)

import pyaccel as xp  # noqa: E402
from pyaccel.testing import assert_allclose_dtype, tolerance  # noqa: E402

pytestmark = pytest.mark.stress

CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
EPS = {"float32": 2e-6, "float64": 1e-14}  # per-term bound of a sum (as check_scaled)
I64 = np.iinfo(np.int64)


# ------------------------------------------------------------------------------------------
# workloads: (what, pyaccel result, NumPy expectation, rtol, atol)
# ------------------------------------------------------------------------------------------
def _i64_operands(rng, n: int) -> tuple[np.ndarray, np.ndarray]:
    a = rng.integers(I64.min, I64.max, n, dtype=np.int64, endpoint=True)
    b = rng.integers(-(2**40), 2**40, n, dtype=np.int64)
    k = max(1, n // 16)
    b[rng.integers(0, n, k)] = rng.choice(np.array([0, 1, -1, 3, -7, I64.min, I64.max]), k)
    a[rng.integers(0, n, k)] = I64.min
    return a, b


def _crandn(rng, shape, dtype=np.complex64) -> np.ndarray:
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _spread(want, scale: float, eps: float) -> tuple:
    """(want, rtol, atol) for a result whose error scales with ``scale`` (term magnitudes)."""
    return want, 0.0, 4 * eps * float(scale) + 1e-30


def workload(kind: int, dev, rng) -> list[tuple]:
    """The checks of one workload ``kind % KINDS`` on fresh random data; the pyaccel results
    are recorded but not read, so the caller decides how (to_numpy / to_numpy_async)."""
    kind %= KINDS
    on = dev.uri
    put = lambda a: xp.asarray(a, device=dev)  # noqa: E731
    n = int(rng.integers(500, 5000))
    if kind == 0:  # float64 + - * / sqrt, correctly rounded: NumPy's bits (specials included)
        a, b, c = (rand(rng, xp.float64, (n,)) for _ in range(3))
        xa, xb, xc = put(a), put(b), put(c)
        with np.errstate(all="ignore"):
            want = np.sqrt(a * b + a / b) - c * 0.5
            want2 = (a - b) * (c + 1.25)
        return [(f"float64 sqrt(a*b + a/b) - c*0.5 [{n}] on {on}", xp.sqrt(xa * xb + xa / xb) - xc * 0.5,
                 want, 0.0, 0.0),
                (f"float64 (a - b) * (c + 1.25) [{n}] on {on}", (xa - xb) * (xc + 1.25), want2, 0.0, 0.0)]
    if kind == 1:  # float64 transcendental chain: the per-dtype tolerance
        a = rand(rng, xp.float64, (n,), "positive", specials=False)
        b = rand(rng, xp.float64, (n,), "small", specials=False)
        xa, xb = put(a), put(b)
        got = xp.log(xp.exp(xa * 0.25) + xp.abs(xb)) * xb + xp.exp(-xa)
        want = np.log(np.exp(a * 0.25) + np.abs(b)) * b + np.exp(-a)
        return [(f"float64 log(exp(a/4) + |b|) * b + exp(-a) [{n}] on {on}", got, want,
                 *tolerance("float64"))]
    if kind == 2:  # int64 // % * - with wrap-around, division by zero and INT64_MIN // -1
        a, b = _i64_operands(rng, n)
        c = rng.integers(I64.min, I64.max, n, dtype=np.int64)
        xa, xb, xc = put(a), put(b), put(c)
        with np.errstate(all="ignore"):
            return [(f"int64 a // b [{n}] on {on}", xa // xb, a // b, 0.0, 0.0),
                    (f"int64 a % b [{n}] on {on}", xp.remainder(xa, xb), a % b, 0.0, 0.0),
                    (f"int64 a * c - b [{n}] on {on}", xa * xc - xb, a * c - b, 0.0, 0.0)]
    if kind == 3:  # uint64 wrap-around, division by zero
        a = rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
        b = rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True) >> rng.integers(0, 64, n).astype(np.uint64)
        b[rng.integers(0, n, max(1, n // 16))] = 0
        xa, xb = put(a), put(b)
        with np.errstate(all="ignore"):
            return [(f"uint64 a * b - a [{n}] on {on}", xa * xb - xa, a * b - a, 0.0, 0.0),
                    (f"uint64 floor_divide(a, b) [{n}] on {on}", xp.floor_divide(xa, xb), a // b, 0.0, 0.0),
                    (f"uint64 remainder(a, b) [{n}] on {on}", xp.remainder(xa, xb), a % b, 0.0, 0.0)]
    if kind == 4:  # complex64 multiply + sum (complex128 reference of the same inputs)
        x, y = _crandn(rng, n), _crandn(rng, n)
        xx, xy = put(x), put(y)
        prod = xx * xy
        p = x.astype(np.complex128) * y
        return [(f"complex64 x * y [{n}] on {on}", prod, p, *_spread(p, np.abs(p).max(), EPS["float32"])[1:]),
                (f"complex64 sum(x * y) [{n}] on {on}", xp.sum(prod),
                 *_spread(p.sum(), np.abs(p).sum(), EPS["float32"]))]
    if kind == 5:  # float64 sum / mean / var over a few 10^4 elements
        m = int(rng.integers(20_000, 40_000))
        a = rng.normal(1.5, 3.0, m)
        x = put(a)
        s = np.abs(a).sum()
        return [(f"float64 sum[{m}] on {on}", xp.sum(x), *_spread(a.sum(), s, EPS["float64"])),
                (f"float64 mean[{m}] on {on}", xp.mean(x), *_spread(a.mean(), s / m, EPS["float64"])),
                (f"float64 var[{m}] on {on}", xp.var(x), a.var(), *tolerance("float64"))]
    if kind == 6:  # int64 cumulative_sum past 2^32 and wrapping past 2^63
        a = rng.integers(-(2**61), 2**61, n, dtype=np.int64)
        a[: n // 8] = rng.integers(2**60, 2**62, n // 8)  # a run that overflows int64
        return [(f"int64 cumulative_sum[{n}] on {on}", xp.cumulative_sum(put(a)), np.cumsum(a), 0.0, 0.0)]
    if kind == 7:  # float64 matmul / vecdot (the wide matmul kernel)
        m, k, p = (int(v) for v in rng.integers(1, 40, 3))
        k *= 10
        a, b = rng.standard_normal((m, k)), rng.standard_normal((k, p))
        v, w = rng.standard_normal((m, k)), rng.standard_normal(k)
        s = (np.abs(a) @ np.abs(b)).max()
        return [(f"float64 matmul {m}x{k}x{p} on {on}", put(a) @ put(b), *_spread(a @ b, s, EPS["float64"])),
                (f"float64 vecdot ({m}, {k}) . ({k},) on {on}", xp.vecdot(put(v), put(w)),
                 *_spread(v @ w, (np.abs(v) @ np.abs(w)).max(), EPS["float64"]))]
    if kind == 8:  # linalg on float32 batches (WGSL kernels): NumPy's float64 solution of the same data
        bn, d = int(rng.integers(1, 5)), int(rng.integers(2, 12))
        g = rng.standard_normal((bn, d, d))
        a = (g / np.sqrt(d) + 2 * np.eye(d)).astype(np.float32)
        spd = (g @ g.transpose(0, 2, 1) / d + np.eye(d)).astype(np.float32)
        r = rng.standard_normal((bn, d, 3)).astype(np.float32)
        a64 = a.astype(np.float64)
        lt = (1e-4, 1e-5)
        return [(f"linalg.solve float32 {a.shape} on {on}", xp.linalg.solve(put(a), put(r)),
                 np.linalg.solve(a64, r.astype(np.float64)).astype(np.float32), *lt),
                (f"linalg.inv float32 {a.shape} on {on}", xp.linalg.inv(put(a)),
                 np.linalg.inv(a64).astype(np.float32), *lt),
                (f"linalg.cholesky float32 {spd.shape} on {on}", xp.linalg.cholesky(put(spd)),
                 np.linalg.cholesky(spd.astype(np.float64)).astype(np.float32), *lt)]
    if kind == 9:  # linalg on float64 (the host path on GPUs: read back, NumPy, upload)
        bn, d = int(rng.integers(1, 5)), int(rng.integers(2, 12))
        a = rng.standard_normal((bn, d, d)) / np.sqrt(d) + 2 * np.eye(d)
        r = rng.standard_normal((bn, d, 2))
        return [(f"linalg.solve float64 {a.shape} on {on}", xp.linalg.solve(put(a), put(r)),
                 np.linalg.solve(a, r), 1e-10, 1e-12),
                (f"linalg.det float64 {a.shape} on {on}", xp.linalg.det(put(a)), np.linalg.det(a), 1e-10, 0.0)]
    # kind 10: fft on complex64 / float32, Stockham (2^k) and Bluestein lengths
    length = int(rng.choice([64, 256, 1024, 4096, 100, 1000, 3000]))
    x = _crandn(rng, (2, length))
    f = np.fft.fft(x.astype(np.complex128))
    fi = np.fft.ifft(x.astype(np.complex128))
    xr = rng.standard_normal(length).astype(np.float32)
    fr = np.fft.rfft(xr.astype(np.float64))
    xx = put(x)
    return [(f"fft complex64 (2, {length}) on {on}", xp.fft.fft(xx), *_spread(f, np.abs(f).max(), 0.5e-6)),
            (f"ifft complex64 (2, {length}) on {on}", xp.fft.ifft(xx), *_spread(fi, np.abs(fi).max(), 0.5e-6)),
            (f"rfft float32 ({length},) on {on}", xp.fft.rfft(put(xr)), *_spread(fr, np.abs(fr).max(), 0.5e-6))]


KINDS = 11
# the result dtype NumPy's expectation is compared in (float32 / complex64 kernels against a
# wider reference); every other result must have the reference's own dtype
_NARROW = {"complex128": "complex64", "float64": "float32"}


def compare(what: str, got: np.ndarray, want, rtol: float, atol: float) -> list[str]:
    """Mismatch messages (empty when ``got`` matches): dtype, shape and values."""
    want = np.asarray(want)
    if got.dtype != want.dtype and _NARROW.get(want.dtype.name) != got.dtype.name:
        return [f"{what}: dtype {got.dtype} (NumPy's {want.dtype})"]
    try:
        assert_allclose_dtype(got, want, rtol=rtol, atol=atol, what=what)
    except AssertionError as exc:
        return [str(exc)]
    return []


def _job(dev, seed: int):
    def job(t: int, i: int) -> list[str]:
        rng = np.random.default_rng([seed, t, i])
        msgs = []
        for what, arr, want, rtol, atol in workload(t * 3 + i, dev, rng):
            msgs += compare(what, arr.to_numpy(), want, rtol, atol)
        return msgs
    return job


# each thread runs every workload kind ROUNDS times; the wall-clock budgets are only a cap
# (about 7 s per GPU device under CI=true with a cold shader cache, measured on 2 cores)
ROUNDS = 2 if CI else 4


def test_threads_wide_workloads_one_device(device, rng, poisoned) -> None:  # noqa: F811
    """5 threads on one device, every iteration another workload (64-bit, complex, linalg, fft)."""
    seed = int(rng.integers(2**31))
    n_threads = 5
    total, problems = run_threads(_job(device, seed), n_threads, count(ROUNDS * KINDS),
                                  budget(30 if CI else 40))
    print(f"{total} iterations in {n_threads} threads on {device.uri}")
    assert not problems, summarize(problems, total)
    assert total >= n_threads * KINDS, f"only {total} iterations ran (budget too small to cover every kind)"


def test_threads_wide_workloads_across_devices(rng) -> None:
    """Two threads per device on vulkan:0, gl:0 and cpu:0 at once (those present)."""
    present = {d.uri for d in xp.devices()}
    uris = [u for u in ("vulkan:0", "gl:0", "cpu:0") if u in present]
    if len(uris) < 2:
        pytest.skip(f"needs at least two of vulkan:0, gl:0, cpu:0; present: {sorted(present)}")
    jobs = [_job(xp.device(u), int(rng.integers(2**31)) + k) for k, u in enumerate(uris)]

    def job(t: int, i: int) -> list[str]:
        return jobs[t % len(jobs)](t, i)

    n_threads = 2 * len(uris)
    total, problems = run_threads(job, n_threads, count(KINDS), budget(30))
    print(f"{total} iterations in {n_threads} threads on {', '.join(uris)}")
    assert not problems, summarize(problems, total)
    assert total >= n_threads


# ------------------------------------------------------------------------------------------
# asyncio tasks on one device (child interpreter)
# ------------------------------------------------------------------------------------------
ASYNC_CHILD = r"""
import asyncio, sys, threading, time, traceback
sys.path[:0] = ["tests/stress", "tests/backends"]
import numpy as np
import pyaccel
from test_wide_pressure import KINDS, compare, workload

d = pyaccel.device(sys.argv[1])
seed, n_tasks, rounds, seconds = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
problems, counts = [], {}
t_end = time.monotonic() + seconds

async def task(t):
    i = 0
    while i < rounds * KINDS and (i == 0 or time.monotonic() < t_end):
        rng = np.random.default_rng([seed, t, i])
        checks = workload(t * 5 + i, d, rng)
        if i % 3 == 0:
            await d.synchronize_async()
        # read this workload's results concurrently; other tasks record ops in between
        got = await asyncio.gather(*(arr.to_numpy_async() for _, arr, *_ in checks))
        for (what, _, want, rtol, atol), g in zip(checks, got):
            problems.extend(f"task {t} iteration {i}: {m}" for m in compare(what, g, want, rtol, atol))
        await asyncio.sleep(0)
        i += 1
    counts[t] = i

def sync_thread(stop):
    i = 0
    try:
        while not stop.is_set() and i < rounds * KINDS:
            rng = np.random.default_rng([seed, 99, i])
            for what, arr, want, rtol, atol in workload(i + 7, d, rng):
                problems.extend(f"thread iteration {i}: {m}" for m in compare(what, arr.to_numpy(), want, rtol, atol))
            i += 1
    except BaseException as exc:
        problems.append("thread: " + "".join(traceback.format_exception(exc)))
    counts["thread"] = i

async def main():
    await asyncio.gather(*(task(t) for t in range(n_tasks)))

stop = threading.Event()
th = threading.Thread(target=sync_thread, args=(stop,), daemon=True)
th.start()
try:
    asyncio.run(main())
except BaseException as exc:
    problems.append("asyncio: " + "".join(traceback.format_exception(exc)))
stop.set()
th.join(120)
if th.is_alive():
    problems.append("synchronous thread hung")
print("iterations", counts, flush=True)
if problems:
    print("PROBLEMS", len(problems), *problems[:6], sep="\n", flush=True)
    sys.exit(1)
if min(counts.get(t, 0) for t in range(n_tasks)) < KINDS:  # every kind at least once per task
    print("too few iterations", counts, flush=True)
    sys.exit(1)
print("OK", flush=True)
"""


def test_asyncio_tasks_wide_workloads(gpu_device, rng) -> None:
    """4 asyncio tasks on one GPU device, each building a workload and gathering its
    ``to_numpy_async()`` reads (``synchronize_async()`` every third), while a thread runs the
    same workloads synchronously; every result against NumPy."""
    seed = int(rng.integers(2**31))
    proc = run_script(ASYNC_CHILD, gpu_device.uri, str(seed), "4", str(count(ROUNDS // 2 or 1)),
                      str(budget(30)), timeout=240)
    print(proc.stdout.strip())
    assert proc.returncode == 0 and "OK" in proc.stdout, describe(proc)


# ------------------------------------------------------------------------------------------
# past the loop cap (65,535 iterations per invocation), outputs poisoned
# ------------------------------------------------------------------------------------------
LONG = 200_000


def test_float64_reductions_past_loop_cap(gpu_device, rng, poisoned) -> None:  # noqa: F811
    """float64 sum / mean / max / argmax over one 200,000-element row, and sum over long
    rows (axis=-1) and long columns (axis=0) of 70,001."""
    a = rng.normal(0.5, 2.0, LONG)
    a[-1 - int(rng.integers(1000))] = 50.0  # the maximum near the end, past the first 65,535
    x = xp.asarray(a, device=gpu_device)
    check_scaled(xp.sum(x), np.asarray(a.sum()), np.abs(a).sum(), what=f"float64 sum[{LONG}]")
    check_scaled(xp.mean(x), np.asarray(a.mean()), np.abs(a).mean(), what=f"float64 mean[{LONG}]")
    check(xp.max(x), np.asarray(a.max()), what=f"float64 max[{LONG}]")
    check(xp.argmax(x), np.asarray(a.argmax()), what=f"float64 argmax[{LONG}]")
    check(xp.var(x), np.asarray(a.var()), "arith", what=f"float64 var[{LONG}]")
    check_scaled(xp.cumulative_sum(x), np.cumsum(a), np.cumsum(np.abs(a)), what=f"float64 cumulative_sum[{LONG}]")
    m = rng.normal(0.0, 1.0, (3, 70_001))
    xm = xp.asarray(m, device=gpu_device)
    check_scaled(xp.sum(xm, axis=-1), m.sum(axis=-1), np.abs(m).sum(axis=-1), what="float64 sum (3, 70001) axis=-1")
    mt = np.ascontiguousarray(m.T)
    check_scaled(xp.sum(xp.asarray(mt, device=gpu_device), axis=0), mt.sum(axis=0), np.abs(mt).sum(axis=0),
                 what="float64 sum (70001, 3) axis=0")


def test_int64_sum_and_cumulative_sum_past_loop_cap(gpu_device, rng, poisoned) -> None:  # noqa: F811
    """int64 / uint64 sum and int64 cumulative_sum of 200,000 values that wrap: exact."""
    a = rng.integers(-(2**62), 2**62, LONG, dtype=np.int64)
    a[LONG // 2:] = rng.integers(2**61, 2**62, LONG - LONG // 2)  # the running sum wraps, often
    x = xp.asarray(a, device=gpu_device)
    check(xp.sum(x), np.asarray(a.sum()), what=f"int64 sum[{LONG}]")
    check(xp.cumulative_sum(x), np.cumsum(a), what=f"int64 cumulative_sum[{LONG}]")
    u = rng.integers(0, 2**64 - 1, LONG, dtype=np.uint64, endpoint=True)
    check(xp.sum(xp.asarray(u, device=gpu_device)), np.asarray(u.sum()), what=f"uint64 sum[{LONG}]")


def test_complex_sum_and_vecdot_past_loop_cap(gpu_device, rng, poisoned) -> None:  # noqa: F811
    """complex64 and complex128 sum over 200,000 values (both parts checked), complex64
    vecdot (x1 conjugated) with K = 70,000; complex128 references."""
    for dt, eps in ((np.complex64, EPS["float32"]), (np.complex128, EPS["float64"])):
        c = _crandn(rng, LONG, dt) + dt(0.25 - 0.5j)
        got = xp.sum(xp.asarray(c, device=gpu_device))
        assert got.dtype.name == np.dtype(dt).name
        want = c.astype(np.complex128).sum()
        _, rtol, atol = _spread(want, np.abs(c).sum(), eps)
        assert_allclose_dtype(got.to_numpy(), np.asarray(want), rtol=rtol, atol=atol,
                              what=f"{np.dtype(dt).name} sum[{LONG}]")
    k = 70_000
    v, w = _crandn(rng, (2, k)), _crandn(rng, k)
    got = xp.vecdot(xp.asarray(v, device=gpu_device), xp.asarray(w, device=gpu_device))
    want = np.conj(v.astype(np.complex128)) @ w
    _, rtol, atol = _spread(want, (np.abs(v) @ np.abs(w)).max(), EPS["float32"])
    assert_allclose_dtype(got.to_numpy(), want, rtol=rtol, atol=atol, what=f"complex64 vecdot K={k}")


def test_float64_matmul_vecdot_long_k(gpu_device, rng, poisoned) -> None:  # noqa: F811
    """float64 (3, K) @ (K, 2) and vecdot over K = 100,000 (10-30 ms on lavapipe / llvmpipe)."""
    k = 100_000
    a, b = rng.standard_normal((3, k)), rng.standard_normal((k, 2))
    got = xp.asarray(a, device=gpu_device) @ xp.asarray(b, device=gpu_device)
    check_scaled(got, a @ b, np.abs(a) @ np.abs(b), what=f"float64 matmul K={k}")
    v, w = rng.standard_normal((2, k)), rng.standard_normal(k) + 1.0
    got = xp.vecdot(xp.asarray(v, device=gpu_device), xp.asarray(w, device=gpu_device))
    check_scaled(got, v @ w, np.abs(v) @ np.abs(w), what=f"float64 vecdot K={k}")


@pytest.mark.parametrize("n", [2**17, 70_001])
def test_fft_long_complex64(gpu_device, rng, poisoned, n) -> None:  # noqa: F811
    """fft and ifft of complex64 length 2^17 (Stockham) and 70,001 (Bluestein, m = 2^18)."""
    c = _crandn(rng, n)
    x = xp.asarray(c, device=gpu_device)
    for name, fn, ref in (("fft", xp.fft.fft, np.fft.fft), ("ifft", xp.fft.ifft, np.fft.ifft)):
        got = fn(x)
        assert got.dtype == xp.complex64 and got.shape == (n,)
        want = ref(c.astype(np.complex128))
        _, rtol, atol = _spread(want, np.abs(want).max(), 0.5e-6)  # max error / max |X| <= 2e-6
        assert_allclose_dtype(got.to_numpy(), want, rtol=rtol, atol=atol, what=f"{name} complex64 n={n}")


def test_linalg_tall_float32_past_loop_cap(gpu_device, rng, poisoned) -> None:  # noqa: F811
    """qr and svdvals of a (70,000, 3) float32 matrix: columns longer than one invocation
    may loop over. ‖A - QR‖, ‖QᵀQ - I‖ and the singular values against NumPy's float64."""
    a = rng.standard_normal((70_000, 3)).astype(np.float32)
    q, r = xp.linalg.qr(xp.asarray(a, device=gpu_device))
    qn, rn = q.to_numpy().astype(np.float64), r.to_numpy().astype(np.float64)
    assert qn.shape == (70_000, 3) and rn.shape == (3, 3) and np.all(np.tril(rn, -1) == 0)
    assert_allclose_dtype(qn @ rn, a.astype(np.float64), rtol=0, atol=1e-4 * float(np.abs(a).max()),
                          what="qr (70000, 3): Q @ R vs A")
    assert_allclose_dtype(qn.T @ qn, np.eye(3), rtol=0, atol=1e-4, what="qr (70000, 3): QᵀQ vs I")
    sv = np.linalg.svd(a.astype(np.float64), compute_uv=False).astype(np.float32)
    check(xp.linalg.svdvals(xp.asarray(a, device=gpu_device)), sv, "float32", what="svdvals (70000, 3)")
