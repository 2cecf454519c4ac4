// pyaccel browser benchmark: pyaccel (Python in Pyodide) vs the same WGSL from plain JS.
//
// Served with the playground (web/public/bench/ -> web/dist/bench/); the runner
// benchmarks/browser/run.py opens it in headless Chromium and calls
// window.pyaccelBench.run({quick}) which resolves to the results object
// (also shown as a table). Open /bench/index.html and press Run to do the same by hand.
// {smoke: true} runs one tiny case of each kind (the test suite uses it).
//
// Measured (median of `repeat` timed runs after one warm-up):
//   chained:  N dispatches of `y[i] = y[i] + x[i]` on n floats, then one 4-byte read;
//             µs per op. pyaccel: Kernel(...)(x, y, grid=...) on device Buffers (and with
//             workgroups=, and the Array API `y = y + x` when pyaccel has it); JS: the same
//             pipeline, setPipeline/setBindGroup/dispatchWorkgroups, submitted every 256
//             dispatches (pyaccel's batch limit), like pyaccel does.
//   upload:   bytes -> GPU buffer, until the queue is idle (GB/s).
//             pyaccel Buffer.write(bytes) + synchronize(); JS queue.writeBuffer + onSubmittedWorkDone.
//   download: GPU buffer -> host memory (GB/s). pyaccel Buffer.read(); JS copy to a MAP_READ
//             staging buffer, mapAsync, copy out of the mapped range (slice), unmap.
//   ffi:      JS calls made by pyaccel's facade per op (device.memory_stats()["ffi_calls"]).
import { loadPyodide } from "../pyodide/pyodide.mjs";

const $ = (id) => document.getElementById(id);
const log = (s) => { $("log").textContent += s + "\n"; console.log(s); };
const status = (s) => { $("status").textContent = s; };

export const WGSL = `
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i < arrayLength(&y)) { y[i] = y[i] + x[i]; }
}
`;
const BATCH = 256; // pyaccel's webgpu_common.BATCH_LIMIT

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function timeIt(fn, repeat) {
  await fn(); // warm-up
  const ts = [];
  for (let r = 0; r < repeat; r++) {
    const t0 = performance.now();
    await fn();
    ts.push(performance.now() - t0);
  }
  return median(ts); // ms
}

// ------------------------------------------------------------------ plain JS
async function jsDevice() {
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) throw new Error("navigator.gpu.requestAdapter() returned null");
  const device = await adapter.requestDevice();
  return { adapter, device };
}

async function jsChained(device, n, N, repeat) {
  const U = GPUBufferUsage;
  const module = device.createShaderModule({ code: WGSL });
  const pipe = await device.createComputePipelineAsync({ layout: "auto", compute: { module, entryPoint: "main" } });
  const x = device.createBuffer({ size: 4 * n, usage: U.STORAGE | U.COPY_DST });
  const y = device.createBuffer({ size: 4 * n, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC });
  const st = device.createBuffer({ size: 256, usage: U.MAP_READ | U.COPY_DST });
  device.queue.writeBuffer(x, 0, new Float32Array(n).fill(1));
  device.queue.writeBuffer(y, 0, new Float32Array(n));
  const group = device.createBindGroup({
    layout: pipe.getBindGroupLayout(0),
    entries: [{ binding: 0, resource: { buffer: x } }, { binding: 1, resource: { buffer: y } }],
  });
  const wg = Math.ceil(n / 64);
  let last = 0;
  const run = async () => {
    let enc = device.createCommandEncoder();
    let pass = enc.beginComputePass();
    let k = 0;
    for (let i = 0; i < N; i++) {
      pass.setPipeline(pipe);
      pass.setBindGroup(0, group);
      pass.dispatchWorkgroups(wg);
      if (++k === BATCH) {
        pass.end();
        device.queue.submit([enc.finish()]);
        enc = device.createCommandEncoder();
        pass = enc.beginComputePass();
        k = 0;
      }
    }
    pass.end();
    enc.copyBufferToBuffer(y, 0, st, 0, 4);
    device.queue.submit([enc.finish()]);
    await st.mapAsync(GPUMapMode.READ, 0, 4);
    last = new Float32Array(st.getMappedRange(0, 4))[0];
    st.unmap();
  };
  const ms = await timeIt(run, repeat);
  for (const b of [x, y, st]) b.destroy();
  return { us_per_op: (ms * 1000) / N, check: last };
}

async function jsUpload(device, nbytes, repeat) {
  const buf = device.createBuffer({ size: nbytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  const data = new Uint8Array(nbytes).fill(7);
  const ms = await timeIt(async () => {
    device.queue.writeBuffer(buf, 0, data);
    await device.queue.onSubmittedWorkDone();
  }, repeat);
  buf.destroy();
  return nbytes / (ms / 1000) / 1e9;
}

async function jsDownload(device, nbytes, repeat) {
  const U = GPUBufferUsage;
  const buf = device.createBuffer({ size: nbytes, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC });
  const st = device.createBuffer({ size: nbytes, usage: U.MAP_READ | U.COPY_DST });
  device.queue.writeBuffer(buf, 0, new Uint8Array(nbytes).fill(7));
  let out = null;
  const ms = await timeIt(async () => {
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(buf, 0, st, 0, nbytes);
    device.queue.submit([enc.finish()]);
    await st.mapAsync(GPUMapMode.READ);
    out = st.getMappedRange().slice(0); // keep the data: one copy out, as pyaccel does
    st.unmap();
  }, repeat);
  buf.destroy();
  st.destroy();
  return { gbps: nbytes / (ms / 1000) / 1e9, ok: out.byteLength === nbytes };
}

// ------------------------------------------------------------------- pyaccel
let pyodidePromise = null;
function boot() {
  if (!pyodidePromise) {
    pyodidePromise = (async () => {
      const t0 = performance.now();
      const pyodide = await loadPyodide({ indexURL: new URL("../pyodide/", import.meta.url).href });
      await pyodide.loadPackage("pyaccel");
      const src = await (await fetch(new URL("./bench.py", import.meta.url))).text();
      await pyodide.runPythonAsync(src);
      status(`ready (boot ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
      return pyodide;
    })();
  }
  return pyodidePromise;
}

async function py(pyodide, call) {
  // bench.py defines the functions; each returns a JSON string
  return JSON.parse(await pyodide.runPythonAsync(call));
}

// ------------------------------------------------------------------- driver
export async function run({ quick = false, smoke = false, matmul = null } = {}) {
  const repeat = smoke ? 1 : quick ? 3 : 5;
  // [n floats, dispatches]: the large size is GPU-bound, fewer dispatches keep the run short
  const cases = smoke ? [[1024, 20]] : quick ? [[1024, 300], [65536, 50]]
    : [[1024, 1000], [16384, 1000], [262144, 200]];
  const xferBytes = smoke ? [1 << 16] : quick ? [1 << 20, 1 << 24] : [1 << 16, 1 << 20, 1 << 24];
  const pyodide = await boot();
  const { adapter, device } = await jsDevice();
  const info = adapter.info ?? {};
  const res = {
    when: new Date().toISOString(),
    userAgent: navigator.userAgent,
    adapter: { vendor: info.vendor ?? "", architecture: info.architecture ?? "", description: info.description ?? "" },
    pyodide: pyodide.version,
    crossOriginIsolated: self.crossOriginIsolated,
    repeat, batch: BATCH,
    chained: [], upload: [], download: [], ffi: {},
  };
  res.pyaccel = await py(pyodide, "bench_info()");
  for (const [n, N] of cases) {
    status(`chained ops, n=${n}…`);
    const js = await jsChained(device, n, N, repeat);
    const p = await py(pyodide, `bench_chained(${n}, ${N}, ${repeat}, ${JSON.stringify(WGSL)})`);
    // every timed run (and the warm-up) added x = 1 to y N times
    const row = { n, dispatches: N, js_us_per_op: js.us_per_op, js_check_ok: js.check === (repeat + 1) * N, ...p };
    row.ratio_kernel = p.kernel_us_per_op / js.us_per_op;
    if (p.array_us_per_op != null) row.ratio_array = p.array_us_per_op / js.us_per_op;
    if (p.array_eager_us_per_op != null) row.ratio_array_eager = p.array_eager_us_per_op / js.us_per_op;
    if (p.array_jit_us_per_op != null) row.ratio_array_jit = p.array_jit_us_per_op / js.us_per_op;
    res.chained.push(row);
    log(`chained n=${n} (${N} dispatches): js ${js.us_per_op.toFixed(1)} µs/op, pyaccel Kernel ${p.kernel_us_per_op.toFixed(1)} µs/op ` +
        `(x${row.ratio_kernel.toFixed(2)}), workgroups= ${p.kernel_wg_us_per_op.toFixed(1)}, ` +
        `dispatch floor ${p.dispatch_us_per_op.toFixed(1)}` +
        (p.array_us_per_op != null ? `, Array y = y + x ${p.array_us_per_op.toFixed(1)} (x${row.ratio_array.toFixed(2)})` : "") +
        (p.array_eager_us_per_op != null ? `, fusion off ${p.array_eager_us_per_op.toFixed(1)} (x${row.ratio_array_eager.toFixed(2)})` : "") +
        (p.array_jit_us_per_op != null ? `, jit ${p.array_jit_us_per_op.toFixed(1)} (x${row.ratio_array_jit.toFixed(2)})` : ""));
  }
  for (const nbytes of xferBytes) {
    status(`transfers, ${nbytes} bytes…`);
    const up = await jsUpload(device, nbytes, repeat);
    const down = await jsDownload(device, nbytes, repeat);
    const p = await py(pyodide, `bench_transfer(${nbytes}, ${repeat})`);
    res.upload.push({ bytes: nbytes, js_gbps: up, pyaccel_gbps: p.upload_gbps });
    res.download.push({ bytes: nbytes, js_gbps: down.gbps, pyaccel_gbps: p.download_gbps, pyaccel_into_gbps: p.download_into_gbps,
                        ok: p.ok && down.ok });
    log(`transfer ${nbytes} B: upload js ${up.toFixed(3)} / pyaccel ${p.upload_gbps.toFixed(3)} GB/s; ` +
        `download js ${down.gbps.toFixed(3)} / pyaccel ${p.download_gbps.toFixed(3)} (into ${p.download_into_gbps.toFixed(3)}) GB/s`);
  }
  res.ffi = await py(pyodide, "bench_ffi()");
  // float32 matmul per kernel variant: "tiled" is the kernel before issue 21, null the
  // automatic choice (autotuned in memory in the page)
  res.matmul = [];
  const mmSizes = smoke ? [] : matmul ?? (quick ? [256, 512] : [512, 1024]);
  for (const n of mmSizes) {
    status(`matmul ${n}…`);
    const r = await py(pyodide, `bench_matmul(${n}, ${Math.min(repeat, 3)}, ["tiled", "v4x4", "v8x4", "u16x4", "u16x8", "u16x16", None])`);
    res.matmul.push(r);
    log(`matmul ${n}: ` + Object.entries(r.ms).map(([k, v]) => `${k} ${v.toFixed(0)} ms (x${r.ratio_to_tiled[k].toFixed(2)})`).join(", ") +
        `; auto chose ${r.chosen}`);
  }
  log(`ffi calls per op: ${JSON.stringify(res.ffi)}`);
  device.destroy();
  render(res);
  status("done");
  return res;
}

function render(res) {
  const f = (v, d = 1) => (v == null ? "—" : v.toFixed(d));
  const rows = res.chained.map((r) =>
    `<tr><td>chained, n=${r.n}</td><td>${f(r.js_us_per_op)}</td><td>${f(r.kernel_us_per_op)}</td>` +
    `<td>${f(r.ratio_kernel, 2)}</td><td>${f(r.array_us_per_op)}</td></tr>`);
  const xf = res.upload.map((u, i) => {
    const d = res.download[i];
    return `<tr><td>${u.bytes} B</td><td>${f(u.js_gbps, 3)}</td><td>${f(u.pyaccel_gbps, 3)}</td>` +
      `<td>${f(d.js_gbps, 3)}</td><td>${f(d.pyaccel_gbps, 3)}</td></tr>`;
  });
  $("table").innerHTML =
    `<table><tr><th>µs per op</th><th>plain JS</th><th>pyaccel Kernel</th><th>ratio</th><th>pyaccel Array</th></tr>${rows.join("")}</table>` +
    `<table><tr><th>transfer</th><th>JS upload GB/s</th><th>pyaccel upload</th><th>JS download</th><th>pyaccel download</th></tr>${xf.join("")}</table>`;
}

window.pyaccelBench = { run, boot, WGSL };
window.pyaccelBenchReady = boot().then(() => {
  $("start").disabled = false;
  return true;
});
$("start").addEventListener("click", () => run({ quick: $("quick").checked }).catch((e) => log(`failed: ${e?.message ?? e}`)));
