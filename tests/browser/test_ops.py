"""The Array API on webgpu:0 in the browser: one representative op of each family.

Elementwise (arithmetic, transcendental, trig, comparison), creation, gather
(transpose / concat / slicing), reductions, scan, sort, matmul, softmax, composite
(vecdot) and a host op (nonzero), on float32 / int32 / uint32 with odd sizes. Inputs are
fresh NumPy random data sent as bytes; the device's buffer pool is seeded with poisoned
buffers (NaN / 0xDEADBEEF) of each output's size first, so elements an op forgets to
write show up; results come back with ``bytes(x)`` (host layout, no NumPy in the page)
and are compared with NumPy here, with the tolerances of the native tests
(``pyaccel.ops.table.TOLERANCES`` per op, sums scaled by the magnitude of the terms).

Every test needs the Array API in the page (``pyaccel.asarray`` ...): the ``array_api``
fixture skips them, with the reason, while it is missing.
"""

from __future__ import annotations

import base64
import math

import pytest

np = pytest.importorskip("numpy")

from pyaccel.testing import POISON_F32, POISON_U32, assert_allclose_dtype  # noqa: E402

DEVICE = "webgpu:0"
FMT = {"float32": "f", "int32": "i", "uint32": "I", "bool": "?"}
NEEDED = ("asarray", "reshape", "add", "exp", "sum", "cumulative_sum", "sort", "matmul",
          "permute_dims", "concat", "nn.softmax", "vecdot", "nonzero", "arange")

PRELUDE = f"""
import base64, struct
import pyaccel
dev = pyaccel.device({DEVICE!r})

def arr(b64, fmt, shape, dtype):
    mv = memoryview(base64.b64decode(b64)).cast(fmt)
    x = pyaccel.asarray(mv, dtype=getattr(pyaccel, dtype), device=dev)
    return pyaccel.reshape(x, tuple(shape)) if len(shape) != 1 else x

def poison_pool(nbytes, word, count=4):
    # the next allocations of this size class get these poisoned buffers back
    bufs = [dev.malloc(nbytes) for _ in range(count)]
    for b in bufs:
        b.write((struct.pack("<I", word) * (nbytes // 4 + 1))[:nbytes])
    for b in bufs:
        b.free()

def out(r):
    return (r.dtype.name, list(r.shape), bytes(r))
"""


def send(a: np.ndarray) -> str:
    """A page expression that rebuilds ``a`` as a pyaccel array on the device."""
    a = np.ascontiguousarray(a)
    raw = base64.b64encode(a.tobytes()).decode()
    return f"arr({raw!r}, {FMT[a.dtype.name]!r}, {list(a.shape)}, {a.dtype.name!r})"


def poison(shape, dtype: str) -> str:
    nbytes = max(4, 4 * math.prod(shape))  # device storage: 4 bytes per element here
    word = POISON_F32 if dtype == "float32" else POISON_U32
    return f"poison_pool({nbytes}, {word})\n"


def back(res) -> np.ndarray:
    name, shape, raw = res
    return np.frombuffer(raw, dtype=np.dtype(name)).reshape(shape)


def rand(rng, dtype: str, shape, lo: int = -1000, hi: int = 1000) -> np.ndarray:
    if dtype == "float32":
        return rng.standard_normal(shape).astype(np.float32)
    if dtype == "int32":
        return rng.integers(lo, hi, shape, dtype=np.int32)
    return rng.integers(0, hi, shape, dtype=np.uint32)


def tol(op: str) -> tuple[float, float]:
    from pyaccel.ops import table

    return table.TOLERANCES[table.get(op).tol]


@pytest.fixture(scope="module")
def array_api(pyodide_page):
    """Skip unless the page's pyaccel has the Array API functions these tests use."""
    missing = pyodide_page.run_py(
        "import pyaccel\n"
        "def _get(p):\n"
        "    o = pyaccel\n"
        "    for part in p.split('.'):\n"
        "        o = getattr(o, part, None)\n"
        "    return o\n"
        f"[n for n in {NEEDED!r} if not callable(_get(n))]"
    )
    if missing:
        pytest.skip(f"the Array API is not (fully) in this pyaccel yet: missing {', '.join(missing)}")
    return True


# ---------------------------------------------------------------- elementwise
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32"])
@pytest.mark.parametrize("n", [1, 257, 10007])
def test_binary_arithmetic_and_comparison(array_api, run_py, rng, dtype, n):
    x, y = rand(rng, dtype, n), rand(rng, dtype, n)
    got = run_py(PRELUDE + f"""
x, y = {send(x)}, {send(y)}
res = []
for op in (lambda: x + y, lambda: x * y, lambda: x - y, lambda: x < y):
    {poison((n,), dtype)}
    res.append(out(op()))
res
""")
    add, mul, sub, less = (back(r) for r in got)
    r, a = tol("add")
    with np.errstate(over="ignore"):
        assert_allclose_dtype(add, x + y, dtype, rtol=r, atol=a, what="add")
        assert_allclose_dtype(mul, x * y, dtype, rtol=r, atol=a, what="multiply")
        assert_allclose_dtype(sub, x - y, dtype, rtol=r, atol=a, what="subtract")
    assert_allclose_dtype(less, x < y, "bool", what="less")


def test_unary_float_math(array_api, run_py, rng):
    shape = (33, 65)
    x = rng.uniform(-10, 10, shape).astype(np.float32)
    t = rng.uniform(-math.pi, math.pi, shape).astype(np.float32)
    p = rng.uniform(0.01, 10, shape).astype(np.float32)
    got = run_py(PRELUDE + f"""
x, t, p = {send(x)}, {send(t)}, {send(p)}
res = []
for f, v in ((pyaccel.exp, x), (pyaccel.sin, t), (pyaccel.sqrt, p), (pyaccel.log, p), (pyaccel.abs, x)):
    {poison(shape, "float32")}
    res.append(out(f(v)))
res
""")
    for (name, ref, arg), r in zip((("exp", np.exp, x), ("sin", np.sin, t), ("sqrt", np.sqrt, p),
                                    ("log", np.log, p), ("abs", np.abs, x)), got, strict=True):
        rt, at = tol(name)
        assert_allclose_dtype(back(r), ref(arg), "float32", rtol=rt, atol=at, what=name)


def test_broadcasting_with_python_scalars(array_api, run_py, rng):
    a = rand(rng, "float32", (7, 1, 5))
    b = rand(rng, "float32", (1, 9, 5))
    got = run_py(PRELUDE + f"""
a, b = {send(a)}, {send(b)}
{poison((7, 9, 5), "float32")}
[out(a * b + 2.5), out(3 - a)]
""")
    r, at = tol("multiply")
    assert_allclose_dtype(back(got[0]), a * b + np.float32(2.5), "float32", rtol=2 * r + 1e-7, atol=1e-6)
    assert_allclose_dtype(back(got[1]), np.float32(3) - a, "float32")


# ---------------------------------------------------------------- reductions
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32"])
def test_reductions(array_api, run_py, rng, dtype):
    shape = (5, 1001)
    x = rand(rng, dtype, shape)
    got = run_py(PRELUDE + f"""
x = {send(x)}
res = []
for f in (lambda: pyaccel.sum(x, axis=1), lambda: pyaccel.max(x, axis=0),
          lambda: pyaccel.argmax(x, axis=1), lambda: pyaccel.sum(x)):
    {poison((1001,), dtype)}
    res.append(out(f()))
res
""")
    s, mx, am, total = (back(r) for r in got)
    if dtype == "float32":
        mag = np.abs(x.astype(np.float64)).sum(axis=1)
        assert_allclose_dtype(s, x.astype(np.float64).sum(axis=1).astype(np.float32), dtype,
                              rtol=1e-5, atol=float(2e-6 * mag.max()), what="sum axis=1")
        assert_allclose_dtype(total, np.float32(x.astype(np.float64).sum()), dtype,
                              rtol=1e-5, atol=float(2e-6 * mag.sum()), what="sum")
    else:
        assert_allclose_dtype(s, x.sum(axis=1, dtype=x.dtype), dtype, what="sum axis=1")
        assert_allclose_dtype(total, x.sum(dtype=x.dtype), dtype, what="sum")
    assert_allclose_dtype(mx, x.max(axis=0), dtype, what="max axis=0")
    assert am.astype(np.int64).tolist() == x.argmax(axis=1).tolist()


def test_mean_and_cumulative_sum(array_api, run_py, rng):
    x = rand(rng, "float32", (3, 777))
    got = run_py(PRELUDE + f"""
x = {send(x)}
{poison((3, 777), "float32")}
[out(pyaccel.mean(x, axis=1)), out(pyaccel.cumulative_sum(x, axis=1))]
""")
    mean, cs = back(got[0]), back(got[1])
    assert_allclose_dtype(mean, x.astype(np.float64).mean(axis=1).astype(np.float32), "float32",
                          rtol=2e-5, atol=1e-6, what="mean")
    ref = np.cumsum(x.astype(np.float64), axis=1)
    mag = np.cumsum(np.abs(x.astype(np.float64)), axis=1)
    bad = np.abs(cs - ref) > 1e-5 * np.abs(ref) + 2e-6 * mag
    assert not bad.any(), f"cumulative_sum: {bad.sum()} elements off, first at {np.argwhere(bad)[0]}"


# ---------------------------------------------------------------- sort
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32"])
def test_sort_and_argsort(array_api, run_py, rng, dtype):
    n = 3001
    if dtype == "float32":
        x = rng.permutation(n).astype(np.float32) * np.float32(0.25) - np.float32(100)
    else:
        x = rng.permutation(n).astype(dtype)  # distinct: argsort is unambiguous
    got = run_py(PRELUDE + f"""
x = {send(x)}
{poison((n,), dtype)}
[out(pyaccel.sort(x)), out(pyaccel.argsort(x)), out(pyaccel.sort(x, descending=True))]
""")
    s, order, desc = (back(r) for r in got)
    assert_allclose_dtype(s, np.sort(x), dtype, what="sort")
    assert order.astype(np.int64).tolist() == np.argsort(x, kind="stable").tolist()
    assert_allclose_dtype(desc, np.sort(x)[::-1], dtype, what="sort descending")


# ---------------------------------------------------------------- matmul
@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("mkn", [(1, 1, 1), (37, 53, 29), (64, 128, 64), (5, 300, 1)])
def test_matmul(array_api, run_py, rng, dtype, mkn):
    m, k, n = mkn
    a = rand(rng, dtype, (m, k), -50, 50)
    b = rand(rng, dtype, (k, n), -50, 50)
    got = run_py(PRELUDE + f"""
a, b = {send(a)}, {send(b)}
{poison((m, n), dtype)}
[out(pyaccel.matmul(a, b)), out(a @ b)]
""")
    for r in got:
        c = back(r)
        if dtype == "float32":
            mag = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
            ref = a.astype(np.float64) @ b.astype(np.float64)
            bad = np.abs(c - ref) > 1e-5 * np.abs(ref) + 2e-6 * mag + 1e-30
            assert not bad.any(), f"matmul {mkn}: {bad.sum()} off, first at {np.argwhere(bad)[0]}"
        else:
            assert_allclose_dtype(c, a @ b, dtype, what=f"matmul {mkn}")


# ---------------------------------------------------------------- softmax
@pytest.mark.parametrize("shape", [(1, 1), (4, 1000), (33, 257)])
def test_softmax(array_api, run_py, rng, shape):
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    got = run_py(PRELUDE + f"""
x = {send(x)}
{poison(shape, "float32")}
[out(pyaccel.nn.softmax(x, axis=-1)), out(pyaccel.nn.logsumexp(x, axis=-1))]
""")
    sm, lse = back(got[0]), back(got[1])
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(axis=-1, keepdims=True))
    assert_allclose_dtype(sm, (e / e.sum(axis=-1, keepdims=True)).astype(np.float32), "float32",
                          rtol=1e-5, atol=1e-7, what="softmax")
    ref = xd.max(axis=-1) + np.log(e.sum(axis=-1))
    assert_allclose_dtype(lse, ref.astype(np.float32), "float32", rtol=1e-5,
                          atol=float(1e-4 * (1 + np.abs(xd).max())), what="logsumexp")


# ---------------------------------------------------------------- gather / creation / composite / host
def test_gather_creation_composite_host(array_api, run_py, rng):
    x = rand(rng, "int32", (6, 7, 5))
    y = rand(rng, "int32", (2, 7, 5))
    v = rand(rng, "float32", (9, 31))
    w = rand(rng, "float32", (9, 31))
    got = run_py(PRELUDE + f"""
x, y, v, w = {send(x)}, {send(y)}, {send(v)}, {send(w)}
{poison((6, 7, 5), "int32")}
[out(pyaccel.permute_dims(x, (2, 0, 1))), out(pyaccel.concat([x, y], axis=0)),
 out(x[1:5, ::2, -1]), out(pyaccel.arange(3, 1000, 7, dtype=pyaccel.int32, device=dev)),
 out(pyaccel.full((3, 4), 2.5, dtype=pyaccel.float32, device=dev)),
 out(pyaccel.vecdot(v, w)), out(pyaccel.nonzero(x > 500)[0])]
""")
    perm, cat, sl, ar, full, vd, nz = (back(r) for r in got)
    assert_allclose_dtype(perm, np.transpose(x, (2, 0, 1)), "int32", what="permute_dims")
    assert_allclose_dtype(cat, np.concatenate([x, y], axis=0), "int32", what="concat")
    assert_allclose_dtype(sl, x[1:5, ::2, -1], "int32", what="slicing")
    assert_allclose_dtype(ar, np.arange(3, 1000, 7, dtype=np.int32), "int32", what="arange")
    assert_allclose_dtype(full, np.full((3, 4), 2.5, np.float32), "float32", what="full")
    mag = (np.abs(v.astype(np.float64)) * np.abs(w)).sum(axis=-1)
    assert_allclose_dtype(vd, (v.astype(np.float64) * w).sum(axis=-1).astype(np.float32), "float32",
                          rtol=1e-5, atol=float(2e-6 * mag.max()), what="vecdot")
    assert nz.astype(np.int64).tolist() == np.nonzero(x > 500)[0].tolist()


# ---------------------------------------------------------------- async twins + chains
def test_array_async_twins_and_chain(array_api, run_py, rng):
    """tolist_async / tobytes_async with JSPI disabled, and a chain that reads once: nothing is
    submitted before the read; eager, the 20 ops are 20 recorded dispatches, fused (the
    default, docs/fusion.md) none until the read, which runs them as one kernel."""
    x = rand(rng, "float32", 999)
    got = run_py(PRELUDE + f"""
import pyodide.ffi as ffi
x = {send(x)}
dev.synchronize()
s0 = dev.memory_stats()
z = x
for _ in range(10):
    z = z * 0.5 + x          # 20 ops, recorded only
s1 = dev.memory_stats()
orig = ffi.can_run_sync
ffi.can_run_sync = lambda: False
try:
    try:
        z.tolist()
        err = None
    except pyaccel.AsyncRequiredError as e:
        err = str(e)
    as_list = await z.tolist_async()
    as_bytes = await z.tobytes_async()
finally:
    ffi.can_run_sync = orig
s2 = dev.memory_stats()
(as_bytes, as_list[:3], err, s1["submits"] - s0["submits"], s1["dispatches"] - s0["dispatches"],
 s2["dispatches"] - s1["dispatches"], pyaccel.ops.fusion.enabled())
""")
    raw, head, err, submits, dispatches, at_read, fused = got
    ref = x.copy()
    for _ in range(10):
        ref = ref * np.float32(0.5) + x
    assert_allclose_dtype(np.frombuffer(raw, np.float32), ref, "float32", rtol=1e-5, atol=1e-6)
    assert head == np.frombuffer(raw, np.float32)[:3].tolist()
    assert err is not None and "_async" in err
    assert submits == 0, submits
    if fused:
        assert (dispatches, at_read) == (0, 1)
    else:
        assert dispatches >= 20, dispatches


def test_fused_reductions_match_eager(array_api, run_py, rng):
    """Reductions computing their lazy input in place (ops/fusion_reduce.py) on webgpu:0:
    bit-identical to ``fusion(False)``, NumPy within tolerance, one kernel fewer than eager."""
    x = rand(rng, "float32", (6, 130))
    y = rand(rng, "float32", (6, 260))
    got = run_py(PRELUDE + f"""
from pyaccel.ops import fusion as F
res = {{}}
for on in (True, False):
    with pyaccel.fusion(on):
        x = {send(x)}
        y = {send(y)}[:, 1::2]
        dev.synchronize()
        f0, d0 = F.STATS.get("fused_reductions", 0), dev.memory_stats()["dispatches"]
        rs = [pyaccel.sum(x * y), pyaccel.max(pyaccel.abs(x - y), axis=1), pyaccel.mean((x - 0.5) ** 2, axis=0),
              pyaccel.nn.logsumexp(x * 2, axis=-1), pyaccel.argmax(x * y, axis=1)]
        f1, d1 = F.STATS.get("fused_reductions", 0), dev.memory_stats()["dispatches"]
        res[on] = ([out(r) for r in rs], f1 - f0, d1 - d0)
(res[True], res[False])
""")
    (fused, nf, df), (eager, ne, de) = got
    yv = y[:, 1::2]
    wants = [np.sum(x * yv), np.max(np.abs(x - yv), axis=1), np.mean((x - np.float32(0.5)) ** 2, axis=0),
             np.log(np.exp(x.astype(np.float64) * 2).sum(axis=-1)), np.argmax(x * yv, axis=1)]
    for f, e, w in zip(fused, eager, wants, strict=True):
        assert f == e  # bit for bit
        np.testing.assert_allclose(back(f), w, rtol=2e-5, atol=2e-4)
    assert (nf, ne) == (5, 0), (nf, ne)
    assert df < de, (df, de)


def test_matmul_epilogue_matches_eager(array_api, run_py, rng):
    """``relu(a @ w + b)`` on webgpu:0 (ops/fusion_matmul.py): one dispatch (the matmul with
    the bias and ReLU at its store), bit-identical to ``fusion(False)``, NumPy within a bound
    scaled by ``|a| @ |w|``."""
    a = rand(rng, "float32", (40, 24))
    w = rand(rng, "float32", (24, 36))
    b = rand(rng, "float32", (36,))
    got = run_py(PRELUDE + f"""
from pyaccel.ops import fusion as F
res = {{}}
out({send(a)} @ {send(w)})  # (the first product of this size class autotunes the kernel)
for on in (True, False):
    with pyaccel.fusion(on):
        a, w, b = {send(a)}, {send(w)}, {send(b)}
        {poison((40, 36), "float32")}
        dev.synchronize()
        f0, d0 = F.STATS.get("fused_matmuls", 0), dev.memory_stats()["dispatches"]
        y = pyaccel.maximum(a @ w + b, 0.0)
        r = out(y)
        res[on] = (r, F.STATS.get("fused_matmuls", 0) - f0, dev.memory_stats()["dispatches"] - d0)
(res[True], res[False])
""")
    (fused, nf, df), (eager, ne, de) = got
    assert fused == eager  # bit for bit
    assert (nf, df, ne, de) == (1, 1, 0, 3), (nf, df, ne, de)
    want = np.maximum(a.astype(np.float64) @ w + b, 0)
    scale = np.abs(a.astype(np.float64)) @ np.abs(w) + 1
    assert (np.abs(back(fused) - want) / scale).max() < 5e-5


# ---------------------------------------------------------------- pyaccel.jit
def test_jit_sync_and_async(array_api, run_py, rng):
    """``pyaccel.jit`` in the page (docs/jit.md): a trace, then replays on fresh inputs with the
    pool poisoned at the trace's allocation sizes, read back synchronously (JSPI) and with the
    async twins while JSPI is off; bit for bit the un-jitted function, NumPy within tolerance;
    a host read inside a traced function raises JitError (not AsyncRequiredError) even with
    JSPI off, and the device stays usable."""
    x0, y0, x1, y1 = (rand(rng, "float32", (33, 17)) for _ in range(4))
    w = rand(rng, "float32", (17, 5))
    got = run_py(PRELUDE + f"""
import pyodide.ffi as ffi
from pyaccel.jit import _ALLOC

@pyaccel.jit
def f(x, y, w):
    a = pyaccel.tanh(x * 0.5 + y)
    return pyaccel.matmul(a, w), pyaccel.sum(a * a, axis=0)

w = {send(w)}
x0, y0 = {send(x0)}, {send(y0)}
x1, y1 = {send(x1)}, {send(y1)}
first = [out(r) for r in f(x0, y0, w)]
for t in f.traces():
    for ev in t.events:
        if ev[0] == _ALLOC:
            poison_pool(max(ev[2], 4), {POISON_F32})
s0 = dev.memory_stats()
r1 = f(x1, y1, w)
s1 = dev.memory_stats()
second = [out(r) for r in r1]
plain = [out(r) for r in f.__wrapped__(x1, y1, w)]
orig = ffi.can_run_sync
ffi.can_run_sync = lambda: False
try:
    r2 = f(x0, y0, w)
    third = [await r.tobytes_async() for r in r2]
    g = pyaccel.jit(lambda v: v + float(pyaccel.sum(v)))
    try:
        g(x0)
        err = None
    except pyaccel.JitError as e:
        err = str(e)
    after = await (pyaccel.exp(x0) - 1).tobytes_async()
finally:
    ffi.can_run_sync = orig
(first, second, plain, third, err, after, f.trace_count, f.replay_count,
 s1["dispatches"] - s0["dispatches"], f.traces()[0].ndispatches)
""")
    first, second, plain, third, err, after, traces, replays, disp, traced = got

    def ref(x, y):
        a = np.tanh(x * np.float32(0.5) + y)
        return a @ w, (a * a).sum(axis=0)

    for res, (x, y) in ((first, (x0, y0)), (second, (x1, y1))):
        mm, s = ref(x, y)
        assert_allclose_dtype(back(res[0]), mm, "float32", rtol=2e-5, atol=2e-5, what="jit matmul")
        assert_allclose_dtype(back(res[1]), s, "float32", rtol=2e-5, atol=2e-5, what="jit sum")
    for a, b in zip(second, plain, strict=True):
        assert a == b  # bit for bit the un-jitted function
    assert third[0] == first[0][2] and third[1] == first[1][2]
    assert (traces, replays) == (1, 2) and disp == traced > 0
    assert err is not None and "float(x)" in err and "Fix:" in err
    assert_allclose_dtype(np.frombuffer(after, np.float32).reshape(x0.shape), np.exp(x0) - 1, "float32",
                          rtol=1e-5, atol=1e-6)
