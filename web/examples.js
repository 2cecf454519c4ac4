// Playground examples: plain Python source strings, shown in #examples.
//
// Each entry: { id, title, code }. `id` is stable (tests and ?example=<id>
// links use it). The pyaccel examples follow the public API in
// docs/architecture.md / DESIGN.md; keep them in sync when the API changes.
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
    id: "device-info",
    title: "Device report (capabilities, limits)",
    code: py(`
import pyaccel

dev = pyaccel.device("webgpu")
print(dev.info())
print()
print("capabilities:", dev.capabilities)
print("max storage binding:", dev.limits.max_storage_buffer_binding_size)
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
