# Python half of the browser benchmark (loaded by bench.js with runPythonAsync, so JSPI
# makes the sync API usable). Each bench_* function returns a JSON string.
import json
import statistics
import struct
import time

import pyaccel

DEV = pyaccel.device("webgpu")


def _median_ms(fn, repeat):
    fn()  # warm-up (pipeline compile, pool)
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def _ffi():
    return DEV.memory_stats()["ffi_calls"]


def bench_info():
    return json.dumps({"version": pyaccel.__version__, "device": DEV.uri, "name": DEV.name,
                       "has_array_api": callable(getattr(pyaccel, "asarray", None))})


def bench_chained(n, N, repeat, wgsl):
    k = pyaccel.Kernel(wgsl)
    x = DEV.malloc(4 * n)
    y = DEV.malloc(4 * n)
    x.write(struct.pack(f"<{n}f", *([1.0] * n)))
    y.write(bytes(4 * n))
    wg = ((n + 63) // 64,)
    out = {}

    def kernel_grid():
        for _ in range(N):
            k(x, y, grid=(n,))
        y.read(4)

    def kernel_wg():
        for _ in range(N):
            k(x, y, workgroups=wg)
        y.read(4)

    impl = DEV.impl
    pipe = impl.pipeline(k.source, k.entry, {}, k.name)
    entries = [(0, x.handle, 0, 4 * n), (1, y.handle, 0, 4 * n)]
    wg3 = (wg[0], 1, 1)

    def dispatch_floor():  # the shared WebGPU layer + facade, no Kernel argument handling
        for _ in range(N):
            impl.dispatch(pipe, entries, wg3)
        y.read(4)

    out["kernel_us_per_op"] = _median_ms(kernel_grid, repeat) * 1e3 / N
    out["kernel_wg_us_per_op"] = _median_ms(kernel_wg, repeat) * 1e3 / N
    out["dispatch_us_per_op"] = _median_ms(dispatch_floor, repeat) * 1e3 / N
    expect = float(N * (3 * repeat + 3))  # three timed functions, each warm-up + repeat runs
    got = struct.unpack("<f", y.read(4))[0]
    out["check_ok"] = got == expect
    # Python-side recording cost alone (no read, no wait inside the timed region)
    DEV.synchronize()
    t0 = time.perf_counter()
    for _ in range(N):
        k(x, y, grid=(n,))
    out["kernel_record_us_per_op"] = (time.perf_counter() - t0) * 1e6 / N
    DEV.synchronize()
    out["array_us_per_op"] = None
    if callable(getattr(pyaccel, "asarray", None)):
        try:
            xa = pyaccel.asarray([1.0] * n, dtype=pyaccel.float32, device=DEV)
            ya = pyaccel.zeros((n,), dtype=pyaccel.float32, device=DEV)

            def last(z):  # read one element (the whole array when slicing is missing)
                try:
                    return bytes(z[:1])
                except Exception:
                    return bytes(z)

            def array_chain():
                z = ya
                for _ in range(N):
                    z = z + xa
                last(z)

            # fusion on (the default on GPU devices: trees of up to 32 adds per kernel) and
            # off (one dispatch per op, what PYACCEL_FUSION=0 runs)
            out["array_us_per_op"] = _median_ms(array_chain, repeat) * 1e3 / N
            fusion = getattr(pyaccel, "fusion", None)
            if fusion is not None:
                d0 = DEV.memory_stats()["dispatches"]
                array_chain()
                out["array_dispatches"] = DEV.memory_stats()["dispatches"] - d0
                with fusion(False):
                    out["array_eager_us_per_op"] = _median_ms(array_chain, repeat) * 1e3 / N
                    d0 = DEV.memory_stats()["dispatches"]
                    array_chain()
                    out["array_eager_dispatches"] = DEV.memory_stats()["dispatches"] - d0
            jit = getattr(pyaccel, "jit", None)
            if jit is not None and N <= 1000:
                def chain_fn(z, x):
                    for _ in range(N):
                        z = z + x
                    return z

                traced = jit(chain_fn)
                traced(ya, xa)  # the trace

                def array_jit():
                    last(traced(ya, xa))

                out["array_jit_us_per_op"] = _median_ms(array_jit, repeat) * 1e3 / N
        except Exception as e:  # the Array API is young; report, do not fail the benchmark
            out["array_error"] = f"{type(e).__name__}: {e}"
    x.free()
    y.free()
    return json.dumps(out)


def bench_transfer(nbytes, repeat):
    buf = DEV.malloc(nbytes)
    data = bytes(range(256)) * (nbytes // 256)
    out = bytearray(nbytes)

    def up():
        buf.write(data)
        DEV.synchronize()

    def down():
        buf.read()

    def down_into():
        DEV.impl.read(buf.handle, 0, nbytes, memoryview(out))

    res = {
        "upload_gbps": nbytes / _median_ms(up, repeat) / 1e6,
        "download_gbps": nbytes / _median_ms(down, repeat) / 1e6,
        "download_into_gbps": nbytes / _median_ms(down_into, repeat) / 1e6,
    }
    res["ok"] = buf.read() == data and bytes(out) == data
    buf.free()
    return json.dumps(res)


def bench_ffi():
    """JS calls per op, steady state (pipelines, bind groups and staging buffers cached)."""
    n = 4096
    k = pyaccel.Kernel("""
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i < arrayLength(&y)) { y[i] = y[i] + x[i]; }
}
""")
    x = DEV.malloc(4 * n)
    y = DEV.malloc(4 * n)
    data = bytes(4 * n)
    x.write(data)
    y.write(data)
    k(x, y, grid=(n,))
    y.read()
    res = {}
    N = 100
    c = _ffi()
    for _ in range(N):
        k(x, y, grid=(n,))
    DEV.impl.flush()
    res["kernel_call_chained"] = (_ffi() - c) / N
    DEV.synchronize()
    c = _ffi()
    x.write(data)
    res["buffer_write"] = _ffi() - c
    c = _ffi()
    y.read()
    res["buffer_read"] = _ffi() - c
    c = _ffi()
    DEV.synchronize()
    res["synchronize"] = _ffi() - c
    if callable(getattr(pyaccel, "asarray", None)):
        try:
            xa = pyaccel.asarray([1.0] * n, dtype=pyaccel.float32, device=DEV)
            fusion = getattr(pyaccel, "fusion", None)

            def chain():
                z = xa + xa
                for _ in range(N):
                    z = z + xa
                if getattr(z, "_lazy", None) is not None:  # a fused chain: lazy until needed,
                    from pyaccel.ops import fusion as F  # so compute it (one kernel per tree)
                    F.materialize(z)  # before the flush, which submits recorded work only
                DEV.impl.flush()

            def count(key):
                chain()  # warm: the chain's kernels compiled, buffers pooled
                DEV.synchronize()
                c = _ffi()
                chain()
                res[key] = (_ffi() - c) / N
                DEV.synchronize()

            if fusion is None:
                count("array_add_chained")
            else:
                with fusion(False):  # one dispatch per op, as kernel_call_chained
                    count("array_add_chained")
                count("array_add_chained_fused")  # the default: a fused kernel per tree of adds
        except Exception as e:
            res["array_error"] = f"{type(e).__name__}: {e}"
    x.free()
    y.free()
    return json.dumps(res)


def bench_matmul(n, repeat, variants):
    """float32 n x n matmul per kernel variant (ms, median of ``repeat`` after a warm-up
    call), ``None`` = the automatic choice. Inputs made on the device (the page has no
    NumPy); each result checked at 8 entries against a float64 dot product in Python."""
    import math

    def data(seed):
        i = pyaccel.arange(n * n, dtype=pyaccel.float32, device=DEV)
        return pyaccel.reshape(pyaccel.sin(i * (0.7 + seed) + seed), (n, n))

    a, b = data(0.0), data(1.3)
    picks = [((7 * k + 3) % n, (13 * k + 5) % n) for k in range(8)]
    rows = {i: a[i, :].tolist() for i, _ in picks}
    cols = {j: b[:, j].tolist() for _, j in picks}
    out = {"n": n, "ms": {}, "chosen": None, "max_scaled_err": {}}
    for v in variants:
        pyaccel.set_matmul_variant(v)
        try:
            def run():
                return pyaccel.matmul(a, b).block_until_ready()

            key = v or "auto"
            out["ms"][key] = _median_ms(run, repeat)
            c = run()
            err = 0.0
            for i, j in picks:
                want = math.fsum(x * y for x, y in zip(rows[i], cols[j]))
                scale = math.fsum(abs(x * y) for x, y in zip(rows[i], cols[j]))
                err = max(err, abs(float(c[i, j]) - want) / scale)
            out["max_scaled_err"][key] = err
            if v is None:
                from pyaccel.ops import gpu_kernels
                out["chosen"] = gpu_kernels.matmul_variant(DEV, n, n, n)
        finally:
            pyaccel.set_matmul_variant(None)
    t = out["ms"].get("tiled")
    out["ratio_to_tiled"] = {k: v / t for k, v in out["ms"].items()} if t else {}
    out["gflops"] = {k: 2 * n ** 3 / (v / 1e3) / 1e9 for k, v in out["ms"].items()}
    return json.dumps(out)
