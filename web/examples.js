// Playground examples: plain Python source strings, shown in #examples.
//
// Each entry: { id, title, code }. `id` is stable (tests and ?example=<id>
// links use it). The pyaccel examples follow the public API in
// docs/architecture.md / docs/browser.md; keep them in sync when the API changes.
// "vector-add", "matmul" and "softmax" use the Array API namespace
// (pyaccel.asarray, +, pyaccel.matmul, pyaccel.nn.softmax, .tolist()).
// Every example checks its own result in plain Python (numpy is not needed) and
// calls check_with_numpy(...) (a playground helper, see main.js), which compares
// with NumPy when "check with NumPy" is ticked and numpy could be loaded.
// "webgpu-raw" uses only pyodide.ffi + the browser's WebGPU (no pyaccel) and
// doubles as a check that Python can drive WebGPU on this page at all.

const py = (s) => s.replace(/^\n/, "");

export const EXAMPLES = [
  {
    id: "devices",
    title: "List backends and devices",
    code: py(`
import pyaccel

print("pyaccel", pyaccel.__version__)
print()
print("backends:")
for b in pyaccel.backends():
    print(" ", b)
print()
print("devices:")
for d in pyaccel.devices():
    print(" ", d)
print()
print("default device:", pyaccel.get_device())
`),
  },
  {
    id: "vector-add",
    title: "Vector add (Array API)",
    code: py(`
import pyaccel

dev = pyaccel.device()                  # webgpu:0 when the browser has WebGPU
n = 100_000
x_host = [float(i % 1000) for i in range(n)]
y_host = [0.5 * i for i in range(n)]
x = pyaccel.asarray(x_host, dtype=pyaccel.float32, device=dev)
y = pyaccel.asarray(y_host, dtype=pyaccel.float32, device=dev)
z = x + y                               # recorded on the device, no wait
out = z.tolist()                        # one read: waits for the result
print(f"z = x + y on {dev.uri}: {len(out)} values, z[:5] = {out[:5]}")
assert all(out[i] == x_host[i] + y_host[i] for i in range(0, n, 997))
print("ok")
check_with_numpy("x + y", out, lambda np: np.asarray(x_host, np.float32) + np.asarray(y_host, np.float32))
`),
  },
  {
    id: "matmul",
    title: "Matrix multiply (Array API)",
    code: py(`
import random
import pyaccel

dev = pyaccel.device()
M, K, N = 96, 80, 64
rnd = random.Random(1)
a_host = [[rnd.uniform(-1, 1) for _ in range(K)] for _ in range(M)]
b_host = [[rnd.uniform(-1, 1) for _ in range(N)] for _ in range(K)]
a = pyaccel.asarray(a_host, dtype=pyaccel.float32, device=dev)
b = pyaccel.asarray(b_host, dtype=pyaccel.float32, device=dev)
c = pyaccel.matmul(a, b)                # or a @ b
rows = c.tolist()
print(f"c = a @ b on {dev.uri}: {len(rows)} x {len(rows[0])}")
print("c[0][:4] =", [round(v, 4) for v in rows[0][:4]])
# spot-check a few entries in plain Python
for i, j in ((0, 0), (M - 1, N - 1), (M // 2, 7)):
    ref = sum(a_host[i][k] * b_host[k][j] for k in range(K))
    assert abs(rows[i][j] - ref) <= 1e-4 * (1 + abs(ref)), (i, j, rows[i][j], ref)
print("ok")
check_with_numpy("a @ b", rows, lambda np: np.asarray(a_host, np.float32) @ np.asarray(b_host, np.float32),
                 rtol=1e-4, atol=1e-5)
`),
  },
  {
    id: "kernel",
    title: "Custom WGSL kernel (saxpy)",
    code: py(`
import array
import pyaccel

saxpy = pyaccel.Kernel("""
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
override a: f32 = 2.0;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i < arrayLength(&y)) { y[i] = a * x[i] + y[i]; }
}
""", entry="main")
print(saxpy)

n = 1000
x = array.array("f", range(n))        # host data (numpy arrays work too)
y = array.array("f", [1.0] * n)       # read_write: the result is written back
saxpy(x, y, grid=(n,), constants={"a": 3.0})
print("device:", pyaccel.get_device())
print("y[:8] =", list(y[:8]))
assert all(y[i] == 3.0 * i + 1.0 for i in range(n))
print("ok")
check_with_numpy("saxpy", bytes(y), lambda np: 3.0 * np.arange(n, dtype=np.float32) + 1.0)
`),
  },
  {
    id: "softmax",
    title: "Softmax over rows (Array API, nn)",
    code: py(`
import math
import random
import pyaccel

dev = pyaccel.device()
rows, cols = 128, 1000
rnd = random.Random(2)
x_host = [[rnd.gauss(0, 3) for _ in range(cols)] for _ in range(rows)]
x = pyaccel.asarray(x_host, dtype=pyaccel.float32, device=dev)
p = pyaccel.nn.softmax(x, axis=-1)
out = p.tolist()
print(f"softmax over {rows} x {cols} on {dev.uri}")
print("row sums:", [round(sum(r), 5) for r in out[:4]], "...")
row = x_host[3]
m = max(row)
e = [math.exp(v - m) for v in row]
ref = [v / sum(e) for v in e]
assert max(abs(a - b) for a, b in zip(out[3], ref)) < 1e-5
assert all(abs(sum(r) - 1) < 1e-4 for r in out)
print("ok")

def _ref(np):
    xs = np.asarray(x_host, np.float32)
    ex = np.exp(xs - xs.max(axis=-1, keepdims=True))
    return ex / ex.sum(axis=-1, keepdims=True)

check_with_numpy("softmax", out, _ref, rtol=1e-4, atol=1e-6)
`),
  },
  {
    id: "async",
    title: "Async API (await; works without JSPI)",
    code: py(`
# Browsers without JSPI cannot wait synchronously: a sync call that must wait raises
# pyaccel.AsyncRequiredError naming its async twin. The await forms work everywhere.
import struct
import pyaccel

dev = await pyaccel.device_async()      # instead of pyaccel.device()
double = pyaccel.Kernel("""
@group(0) @binding(0) var<storage, read_write> v: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&v)) { v[id.x] = 2.0 * v[id.x]; }
}
""")
n = 10
buf = dev.malloc(4 * n)
buf.write(struct.pack(f"<{n}f", *range(n)))   # writes never wait
double(buf, grid=(n,))                        # recording never waits
double(buf, grid=(n,))
data = await buf.read_async()                 # instead of buf.read()
print(dev.uri, struct.unpack(f"<{n}f", data))
host = bytearray(struct.pack("<3f", 1, 2, 3))
await double.call_async(host, grid=(3,), device=dev)   # host write-back awaited
print("call_async:", struct.unpack("<3f", host))
await dev.synchronize_async()                 # instead of dev.synchronize()
assert struct.unpack(f"<{n}f", data) == tuple(4.0 * i for i in range(n))
print("ok")
`),
  },
  {
    id: "mandelbrot",
    title: "Mandelbrot zoom (WGSL kernel, drawn from the GPU buffer)",
    code: py(`
# A custom WGSL kernel computes the iteration counts into a pyaccel array, and each
# frame is drawn on the canvas straight from that array's GPU buffer: pyaccel.extras.webgpu
# hands the JS GPUBuffer to a small WebGPU render pass (no readback of the picture).
import json, time
import js
from pyodide.ffi import to_js
import pyaccel
from pyaccel.extras.webgpu import as_gpu_buffer, gpu_device

W, H, MAXIT, FRAMES = 384, 256, 200, 24
CX, CY = -0.743643887, 0.131825904       # zoom target (Seahorse Valley)
dev = pyaccel.device()

mandelbrot = pyaccel.Kernel("""
struct P { w: u32, h: u32, maxit: u32, cx: f32, cy: f32, scale: f32 }
@group(0) @binding(0) var<storage, read_write> counts: array<u32>;
@group(0) @binding(1) var<uniform> p: P;
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x >= p.w || g.y >= p.h) { return; }
    let c = vec2<f32>(p.cx + (f32(g.x) + 0.5 - 0.5 * f32(p.w)) * p.scale,
                      p.cy + (f32(g.y) + 0.5 - 0.5 * f32(p.h)) * p.scale);
    var z = vec2<f32>(0.0, 0.0);
    var n = 0u;
    for (var i = 0u; i < 1024u; i++) {   // bounded loop; stops at p.maxit
        if (i >= p.maxit) { break; }
        let x2 = z.x * z.x;
        let y2 = z.y * z.y;
        if (x2 + y2 > 4.0) { break; }
        z = vec2<f32>(x2 - y2 + c.x, 2.0 * z.x * z.y + c.y);
        n = n + 1u;
    }
    counts[g.y * p.w + g.x] = n;
}
""")

def opts(**kw):
    return to_js(kw, dict_converter=js.Object.fromEntries)

canvas = js.pyaccelCanvas                 # the page's drawing helpers (web/draw.js)
counts = pyaccel.empty((H, W), dtype=pyaccel.uint32, device=dev)
scale = 3.0 / W
t0 = time.perf_counter()
for frame in range(FRAMES):
    params = {"w": W, "h": H, "maxit": MAXIT, "cx": CX, "cy": CY, "scale": scale}
    mandelbrot(counts, params, grid=(W, H))              # recorded on the GPU
    canvas.drawField(gpu_device(dev), as_gpu_buffer(counts),   # drawn from the same buffer
                     opts(width=W, height=H, kind="u32", vmax=MAXIT, palette="cycle",
                          meta=json.dumps(params)))
    await canvas.nextFrame()                             # let the page show the frame
    scale *= 0.8
dev.synchronize()
dt = time.perf_counter() - t0
print(f"{FRAMES} frames of {W}x{H} on {dev.uri} in {dt:.2f} s ({FRAMES / dt:.1f} frames/s)")
print(f"zoomed {3.0 / W / params['scale']:.0f}x into ({CX}, {CY}); no pixel was read back")
`),
  },
  {
    id: "heat",
    title: "Live heat diffusion (Array API, drawn from the GPU buffer)",
    code: py(`
# 2-D heat diffusion with the Array API stencil of examples/heat_diffusion.py; the field is
# drawn every few steps straight from its GPU buffer (pyaccel.extras.webgpu, no readback).
import json, time
import js
from pyodide.ffi import to_js
import pyaccel
from pyaccel.extras.webgpu import as_gpu_buffer, gpu_device

N, STEPS, DRAW_EVERY, ALPHA = 128, 240, 12, 0.24     # explicit Euler: stable for ALPHA <= 0.25
dev = pyaccel.device()

def step(xp, u, alpha):
    """One explicit Euler step on the interior; the boundary stays fixed."""
    lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]
    inner = u[1:-1, 1:-1] + alpha * lap
    mid = xp.concat([u[1:-1, :1], inner, u[1:-1, -1:]], axis=1)
    return xp.concat([u[:1, :], mid, u[-1:, :]], axis=0)

# a hot top wall and a hot disc in a cold plate
u0 = [[1.0 if i == 0 or (i - 80) ** 2 + (j - 44) ** 2 < 196 else 0.0 for j in range(N)]
      for i in range(N)]
u = pyaccel.asarray(u0, dtype=pyaccel.float32, device=dev)

def opts(**kw):
    return to_js(kw, dict_converter=js.Object.fromEntries)

canvas = js.pyaccelCanvas
t0 = time.perf_counter()
for k in range(1, STEPS + 1):
    u = step(pyaccel, u, ALPHA)
    if k % DRAW_EVERY == 0:
        canvas.drawField(gpu_device(dev), as_gpu_buffer(u),
                         opts(width=N, height=N, kind="f32", vmin=0.0, vmax=1.0, palette="heat",
                              scale=3, meta=json.dumps({"steps": k, "alpha": ALPHA, "n": N})))
        await canvas.nextFrame()
dev.synchronize()
dt = time.perf_counter() - t0
print(f"{STEPS} steps of {N}x{N} on {dev.uri} in {dt:.2f} s ({STEPS / dt:.0f} steps/s), "
      f"{STEPS // DRAW_EVERY} frames drawn from the GPU buffer")
`),
  },
  {
    id: "kmeans",
    title: "k-means loss chart (Array API)",
    code: py(`
# k-means on 3000 points with the Array API (as examples/kmeans.py); the mean squared
# distance to the nearest centroid after each iteration is plotted on a line chart.
import random, time
import js
from pyodide.ffi import to_js
import pyaccel as xp

N, K, ITERS = 3000, 5, 12
dev = xp.device()
rnd = random.Random(7)
blobs = [(rnd.uniform(-8, 8), rnd.uniform(-8, 8)) for _ in range(K)]
pts = [(blobs[i % K][0] + rnd.gauss(0, 1.2), blobs[i % K][1] + rnd.gauss(0, 1.2)) for i in range(N)]
x = xp.asarray(pts, dtype=xp.float32, device=dev)
c = xp.asarray([pts[i] for i in range(0, 5 * K, 5)], dtype=xp.float32, device=dev)  # all in one blob

ids = xp.arange(K, dtype=xp.int32, device=dev)
x2 = xp.sum(x * x, axis=1, keepdims=True)
losses = []
t0 = time.perf_counter()
for it in range(ITERS):
    d = x2 - 2 * (x @ xp.matrix_transpose(c)) + xp.sum(c * c, axis=1)[None, :]
    labels = xp.argmin(d, axis=1)
    losses.append(xp.mean(xp.min(d, axis=1)).tolist())      # one scalar read per iteration
    onehot = xp.astype(labels[:, None] == ids[None, :], x.dtype)
    counts = xp.sum(onehot, axis=0)
    sums = xp.matrix_transpose(onehot) @ x
    c = xp.where(counts[:, None] > 0, sums / xp.maximum(counts, 1)[:, None], c)
    js.pyaccelCanvas.plot(to_js(losses), to_js({"title": f"k-means on {dev.uri}: mean squared distance",
                                                "xlabel": "iteration"}, dict_converter=js.Object.fromEntries))
    await js.pyaccelCanvas.nextFrame()
dt = time.perf_counter() - t0
print(f"k-means, {N} points, k={K}, {ITERS} iterations on {dev.uri} in {dt:.2f} s")
print("loss:", " ".join(f"{v:.3f}" for v in losses))
assert losses[-1] < losses[0]
print("ok")
`),
  },
  {
    id: "device-info",
    title: "Device report (capabilities, limits)",
    code: py(`
import pyaccel

dev = pyaccel.device("webgpu")
print(dev.info())
print()
print("capabilities:", dev.capabilities)
print("max storage binding:", dev.limits.max_storage_binding_size)
`),
  },
  {
    id: "buffer",
    title: "Buffer round trip (malloc / write / read)",
    code: py(`
import struct
import pyaccel

dev = pyaccel.device()          # default device (webgpu:0 when available)
n = 8
buf = dev.malloc(4 * n)
buf.write(struct.pack(f"{n}f", *[i * 0.5 for i in range(n)]))
print(dev, "->", struct.unpack(f"{n}f", buf.read()))
buf.free()
`),
  },
  {
    id: "webgpu-raw",
    title: "Raw WebGPU from Python (pyodide.ffi, no pyaccel)",
    code: py(`
# Talks to the browser's WebGPU directly through pyodide.ffi, the way
# pyaccel's browser backend does. run_sync() needs JSPI (Chromium 137+).
import struct, time
import js
from pyodide.ffi import jsnull, run_sync, to_js

def obj(**kw):
    return to_js(kw, dict_converter=js.Object.fromEntries)

if getattr(js.navigator, "gpu", None) is None:
    raise RuntimeError("navigator.gpu is undefined: this browser has no WebGPU")
adapter = run_sync(js.navigator.gpu.requestAdapter())
if adapter in (None, jsnull):
    raise RuntimeError("navigator.gpu.requestAdapter() returned null: no usable WebGPU adapter")
device = run_sync(adapter.requestDevice())
print("adapter:", adapter.info.vendor, adapter.info.architecture)

n = 4096
U = js.GPUBufferUsage
x_buf = device.createBuffer(obj(size=4 * n, usage=U.STORAGE | U.COPY_DST))
y_buf = device.createBuffer(obj(size=4 * n, usage=U.STORAGE | U.COPY_DST | U.COPY_SRC))
r_buf = device.createBuffer(obj(size=4 * n, usage=U.MAP_READ | U.COPY_DST))

def upload(buf, data: bytes):
    arr = js.Uint8Array.new(len(data))
    arr.assign(data)
    device.queue.writeBuffer(buf, 0, arr)

upload(x_buf, struct.pack(f"{n}f", *range(n)))
upload(y_buf, struct.pack(f"{n}f", *([1.0] * n)))

module = device.createShaderModule(obj(code="""
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i < arrayLength(&y)) { y[i] = 2.0 * x[i] + y[i]; }
}
"""))
pipeline = device.createComputePipeline(obj(layout="auto", compute=obj(module=module, entryPoint="main")))
group = device.createBindGroup(obj(
    layout=pipeline.getBindGroupLayout(0),
    entries=[obj(binding=0, resource=obj(buffer=x_buf)),
             obj(binding=1, resource=obj(buffer=y_buf))],
))

t0 = time.perf_counter()
enc = device.createCommandEncoder()
cpass = enc.beginComputePass()
cpass.setPipeline(pipeline)
cpass.setBindGroup(0, group)
cpass.dispatchWorkgroups((n + 63) // 64)
cpass.end()
enc.copyBufferToBuffer(y_buf, 0, r_buf, 0, 4 * n)
device.queue.submit(to_js([enc.finish()]))
run_sync(r_buf.mapAsync(js.GPUMapMode.READ))
out = js.Uint8Array.new(r_buf.getMappedRange()).to_bytes()
r_buf.unmap()
dt = time.perf_counter() - t0

y = struct.unpack(f"{n}f", out)
bad = [i for i in range(n) if y[i] != 2.0 * i + 1.0]
print(f"y = 2*x + y over {n} floats: {y[:4]} ... {y[-1]}")
print("mismatches:", len(bad), f"(dispatch + readback {dt * 1e3:.1f} ms)")
for b in (x_buf, y_buf, r_buf):
    b.destroy()
`),
  },
];
