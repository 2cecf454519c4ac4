// Pictures for the playground: a GPU field on a WebGPU <canvas>, a line chart on a 2-D one.
//
// window.pyaccelCanvas (Python reaches it as js.pyaccelCanvas):
//   drawField(gpuDevice, gpuBuffer, opts)
//       draws a 2-D field straight from a GPUBuffer (no readback): one render pass whose
//       fragment shader reads the buffer as storage, one pixel per element.
//       gpuDevice / gpuBuffer: pyaccel.extras.webgpu.gpu_device(dev) / as_gpu_buffer(x)
//       (as_gpu_buffer submits pyaccel's recorded work first, so the pass sees x's values).
//       opts: {width, height,                  the field's shape is (height, width), C order
//              kind: "f32" | "u32" | "i32",    element type of the buffer
//              vmin, vmax,                     value range mapped onto the palette
//              palette: "heat" | "cycle",      see PALETTES below (tests recompute them)
//              scale: 1,                       CSS pixels per element (pixelated)
//              meta: "..."}                    free text kept in .last (the examples put JSON)
//   plot(values, opts)   line chart of numbers on #chart; opts {title, xlabel, ylabel}
//   nextFrame()          Promise resolved at the next animation frame (for live examples)
//   reset()              hides both canvases (the playground calls it before each run)
//   last / lastChart     what was drawn last (options, frame count; the chart's values)
//
// Palettes (t = clamp((v - vmin) / (vmax - vmin), 0, 1)):
//   heat:  rgb = clamp(3t, 0, 1), clamp(3t - 1, 0, 1), clamp(3t - 2, 0, 1)   (black-red-yellow-white)
//   cycle: v >= vmax -> black (e.g. points inside the Mandelbrot set); else
//          rgb = 0.5 + 0.5 cos(2 pi (v / 32 + (0, 0.1, 0.2)))                (iteration bands)

const FIELD_WGSL = /* wgsl */ `
struct P { w: u32, h: u32, vmin: f32, vmax: f32, kind: u32, palette: u32, pad0: u32, pad1: u32 }
@group(0) @binding(0) var<storage, read> data: array<u32>;
@group(0) @binding(1) var<uniform> p: P;

@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4f {
  let xy = vec2f(f32((i << 1u) & 2u), f32(i & 2u)) * 2.0 - 1.0;   // one full-screen triangle
  return vec4f(xy, 0.0, 1.0);
}

@fragment fn fs(@builtin(position) pos: vec4f) -> @location(0) vec4f {
  let x = min(u32(pos.x), p.w - 1u);
  let y = min(u32(pos.y), p.h - 1u);
  let word = data[y * p.w + x];
  var v: f32;
  if (p.kind == 0u) { v = bitcast<f32>(word); }
  else if (p.kind == 1u) { v = f32(word); }
  else { v = f32(bitcast<i32>(word)); }
  if (p.palette == 1u) {
    if (v >= p.vmax) { return vec4f(0.0, 0.0, 0.0, 1.0); }
    let c = 0.5 + 0.5 * cos(6.283185307 * (v / 32.0 + vec3f(0.0, 0.1, 0.2)));
    return vec4f(c, 1.0);
  }
  let t = clamp((v - p.vmin) / (p.vmax - p.vmin), 0.0, 1.0);
  return vec4f(clamp(3.0 * t, 0.0, 1.0), clamp(3.0 * t - 1.0, 0.0, 1.0), clamp(3.0 * t - 2.0, 0.0, 1.0), 1.0);
}
`;

const KINDS = { f32: 0, u32: 1, i32: 2 };
const PALETTES = { heat: 0, cycle: 1 };

export function createCanvasHelpers(view, chart) {
  let state = null; // {device, context, format, pipeline, uniform}
  const api = { last: null, lastChart: null, frames: 0 };

  function setup(device) {
    if (state && state.device === device) return state;
    const context = view.getContext("webgpu");
    const format = navigator.gpu.getPreferredCanvasFormat();
    context.configure({ device, format, alphaMode: "opaque" });
    const module = device.createShaderModule({ code: FIELD_WGSL });
    const pipeline = device.createRenderPipeline({
      layout: "auto",
      vertex: { module, entryPoint: "vs" },
      fragment: { module, entryPoint: "fs", targets: [{ format }] },
      primitive: { topology: "triangle-list" },
    });
    const uniform = device.createBuffer({ size: 32, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    state = { device, context, format, pipeline, uniform };
    return state;
  }

  api.drawField = (device, buffer, opts) => {
    const o = Object.fromEntries(Object.entries(opts ?? {}));
    const width = o.width | 0;
    const height = o.height | 0;
    if (!(width > 0 && height > 0)) throw new Error(`drawField: width and height must be > 0, got ${width} x ${height}`);
    const kind = KINDS[o.kind ?? "f32"];
    const palette = PALETTES[o.palette ?? "heat"];
    if (kind === undefined) throw new Error(`drawField: kind must be one of ${Object.keys(KINDS)}, got ${o.kind}`);
    if (palette === undefined) throw new Error(`drawField: palette must be one of ${Object.keys(PALETTES)}, got ${o.palette}`);
    if (buffer.size < width * height * 4) {
      throw new Error(`drawField: the buffer has ${buffer.size} bytes, ${width} x ${height} elements need ${width * height * 4}`);
    }
    const vmin = o.vmin ?? 0;
    const vmax = o.vmax ?? 1;
    const scale = o.scale ?? 1;
    const s = setup(device);
    view.hidden = false;
    if (view.width !== width || view.height !== height) {
      view.width = width;
      view.height = height;
    }
    view.style.width = `${width * scale}px`;
    view.style.height = `${height * scale}px`;
    const params = new ArrayBuffer(32);
    new Uint32Array(params, 0, 2).set([width, height]);
    new Float32Array(params, 8, 2).set([vmin, vmax]);
    new Uint32Array(params, 16, 4).set([kind, palette, 0, 0]);
    device.queue.writeBuffer(s.uniform, 0, params);
    const group = device.createBindGroup({
      layout: s.pipeline.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer, offset: 0, size: width * height * 4 } },
        { binding: 1, resource: { buffer: s.uniform } },
      ],
    });
    const enc = device.createCommandEncoder();
    const pass = enc.beginRenderPass({
      colorAttachments: [{ view: s.context.getCurrentTexture().createView(), loadOp: "clear", storeOp: "store",
                           clearValue: { r: 0, g: 0, b: 0, a: 1 } }],
    });
    pass.setPipeline(s.pipeline);
    pass.setBindGroup(0, group);
    pass.draw(3);
    pass.end();
    device.queue.submit([enc.finish()]);
    api.frames += 1;
    api.last = { width, height, kind: o.kind ?? "f32", palette: o.palette ?? "heat", vmin, vmax, scale,
                 meta: o.meta ?? null, frames: api.frames };
  };

  api.plot = (values, opts) => {
    const ys = Array.from(values, Number);
    const o = Object.fromEntries(Object.entries(opts ?? {}));
    chart.hidden = false;
    const dpr = 1;
    const W = chart.width = 480 * dpr;
    const H = chart.height = 260 * dpr;
    const g = chart.getContext("2d");
    const css = getComputedStyle(document.documentElement);
    const fg = css.getPropertyValue("--fg").trim() || "#222";
    const muted = css.getPropertyValue("--muted").trim() || "#888";
    const accent = css.getPropertyValue("--accent").trim() || "#2b6cb0";
    g.fillStyle = css.getPropertyValue("--panel").trim() || "#f5f6f8";
    g.fillRect(0, 0, W, H);
    const L = 64, R = 16, T = 30, B = 40;
    const n = ys.length;
    const finite = ys.filter(Number.isFinite);
    let lo = Math.min(...finite), hi = Math.max(...finite);
    if (!(hi > lo)) { hi = lo + 1; lo -= 1; }
    const pad = 0.05 * (hi - lo);
    lo -= pad; hi += pad;
    const X = (i) => L + (n > 1 ? (i / (n - 1)) * (W - L - R) : 0);
    const Y = (v) => T + (1 - (v - lo) / (hi - lo)) * (H - T - B);
    g.font = "12px system-ui, sans-serif";
    g.strokeStyle = muted; g.fillStyle = muted; g.lineWidth = 1;
    for (let k = 0; k <= 4; k++) {            // horizontal grid lines + value labels
      const v = lo + (k / 4) * (hi - lo);
      const y = Math.round(Y(v)) + 0.5;
      g.globalAlpha = 0.35; g.beginPath(); g.moveTo(L, y); g.lineTo(W - R, y); g.stroke(); g.globalAlpha = 1;
      g.textAlign = "right"; g.textBaseline = "middle"; g.fillText(v.toPrecision(4), L - 6, y);
    }
    g.textAlign = "center"; g.textBaseline = "top";
    for (const i of [0, Math.floor((n - 1) / 2), n - 1]) if (n > 0) g.fillText(String(i), X(i), H - B + 6);
    g.fillText(o.xlabel ?? "step", (L + W - R) / 2, H - 18);
    g.fillStyle = fg; g.textAlign = "left"; g.textBaseline = "top";
    g.font = "600 13px system-ui, sans-serif";
    g.fillText(o.title ?? "", L, 8);
    g.strokeStyle = accent; g.lineWidth = 2.5; g.beginPath();
    ys.forEach((v, i) => (i ? g.lineTo(X(i), Y(v)) : g.moveTo(X(i), Y(v))));
    g.stroke();
    g.fillStyle = accent;
    ys.forEach((v, i) => { g.beginPath(); g.arc(X(i), Y(v), 3, 0, 2 * Math.PI); g.fill(); });
    api.lastChart = { values: ys, title: o.title ?? "" };
  };

  api.nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));

  api.reset = () => {
    view.hidden = true;
    chart.hidden = true;
    api.frames = 0;
    api.last = null;
    api.lastChart = null;
  };

  return api;
}
