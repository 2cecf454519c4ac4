// pyaccel playground: boots Pyodide, loads the pyaccel wheel, runs user code.
//
// Page contract (stable: tests/browser and docs rely on these):
//   #code      the editor's content element (CodeMirror 6, Python highlighting; contenteditable,
//              so Playwright's fill("#code", text) replaces the code); read/write the code
//              with pyaccelPlayground.getCode() / setCode(text)
//   #view      <canvas>    WebGPU canvas: fields drawn from GPU buffers (draw.js), hidden until used
//   #chart     <canvas>    2-D line charts (draw.js), hidden until used
//   #examples  <select>    example picker; option value = example id (examples.js)
//   #run       <button>    runs #code (also Ctrl/Cmd+Enter inside #code);
//                          disabled until Pyodide + pyaccel are loaded
//   #output    <pre>       stdout/stderr of the last run, then its result or traceback
//   #devices   <pre>       device report: WebGPU adapter seen by JS + pyaccel.devices()
//   #elapsed   <span>      wall time of the last run ("12.3 ms")
//   #banner    <div>       hidden unless WebGPU is unavailable (text says why, and
//                          which device pyaccel falls back to)
//   #status    <span>      boot progress ("ready", "failed: ...")
//   #numpy-check <input type=checkbox>  "check with NumPy": before a run, load numpy
//                          (await pyodide.loadPackage("numpy"); needs the network) so
//                          check_with_numpy(...) in the examples compares with NumPy;
//                          a failed load is reported and the run goes on without it
//
// Globals:
//   window.pyodide          the Pyodide instance, once loaded
//   window.pyaccelReady     Promise<PyodideAPI>: resolves once loadPackage("pyaccel")
//                           is done; rejects (with the reason) if booting fails
//   window.pyaccelWebGPU    Promise<{available, navigatorGpu, secureContext, reason, adapter}>
//                           what JS sees of WebGPU (adapter = {vendor, architecture,
//                           device, description, features} or null)
//   window.pyaccelPlayground {examples, run(code) -> Promise<{ok, output, elapsedMs}>,
//                           setExample(id), getCode(), setCode(text), editor (the EditorView)}
//   window.pyaccelCanvas    drawField / plot / nextFrame / last / lastChart (draw.js); Python
//                           reaches it as js.pyaccelCanvas
//
// Query string: ?example=<id> preselects an example (default: mandelbrot); ?autorun=1 runs it once ready;
// ?device=<uri list> sets PYACCEL_DEVICE for Python (loadPyodide({env})), e.g. ?device=webgpu:0.
//
// Globals available to the code that Run executes (besides the usual __name__):
//   check_with_numpy(label, actual, expected_fn, rtol=1e-5, atol=1e-6)
//       when "check with NumPy" is on and numpy loaded: compares actual (list / bytes-like)
//       with expected_fn(numpy) and prints the verdict; otherwise prints why it is skipped.
//   NUMPY_CHECK   True when numpy is loaded for this run; NUMPY_STATE "off" / "loaded" / "failed: ...".
//
// Pyodide's runtime files are served from "<page base>/pyodide/" (web/public/pyodide,
// filled by `python wasm/build.py`), so the built site works from any static path.
import { python } from "@codemirror/lang-python";
import { indentWithTab } from "@codemirror/commands";
import { keymap } from "@codemirror/view";
import { basicSetup, EditorView } from "codemirror";
import { loadPyodide } from "pyodide";
import { createCanvasHelpers } from "./draw.js";
import { EXAMPLES } from "./examples.js";

const $ = (id) => document.getElementById(id);
const el = {
  editor: $("editor"),
  examples: $("examples"),
  run: $("run"),
  output: $("output"),
  devices: $("devices"),
  elapsed: $("elapsed"),
  banner: $("banner"),
  status: $("status"),
  numpy: $("numpy-check"),
};
const INDEX_URL = new URL("pyodide/", document.baseURI).href;
const params = new URLSearchParams(location.search);

function setStatus(text) {
  el.status.textContent = text;
}

function appendOutput(text, cls) {
  const span = document.createElement("span");
  if (cls) span.className = cls;
  span.textContent = text.endsWith("\n") ? text : text + "\n";
  el.output.appendChild(span);
  el.output.scrollTop = el.output.scrollHeight;
}

// -------------------------------------------------------------------- editor
const editor = new EditorView({
  parent: el.editor,
  extensions: [
    basicSetup,
    python(),
    keymap.of([
      {
        key: "Mod-Enter",
        preventDefault: true,
        run: () => {
          if (!el.run.disabled) el.run.click();
          return true;
        },
      },
      indentWithTab,
    ]),
    EditorView.contentAttributes.of({ id: "code", "aria-label": "Python code", spellcheck: "false" }),
    EditorView.theme({
      "&": { color: "var(--fg)", backgroundColor: "var(--panel)" },
      ".cm-gutters": { backgroundColor: "var(--panel)", color: "var(--muted)", borderRight: "1px solid var(--muted)" },
      ".cm-activeLine, .cm-activeLineGutter": { backgroundColor: "color-mix(in srgb, var(--accent) 8%, transparent)" },
      "&.cm-focused .cm-cursor": { borderLeftColor: "var(--fg)" },
    }),
  ],
});

function getCode() {
  return editor.state.doc.toString();
}

function setCode(text) {
  editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: text } });
}

// ------------------------------------------------------------------ pictures
const canvas = createCanvasHelpers($("view"), $("chart"));
window.pyaccelCanvas = canvas;

// ------------------------------------------------------------------ examples
for (const ex of EXAMPLES) {
  const opt = document.createElement("option");
  opt.value = ex.id;
  opt.textContent = ex.title;
  el.examples.appendChild(opt);
}

function setExample(id) {
  const ex = EXAMPLES.find((e) => e.id === id) ?? EXAMPLES[0];
  el.examples.value = ex.id;
  setCode(ex.code);
  return ex;
}

el.examples.addEventListener("change", () => setExample(el.examples.value));
setExample(params.get("example") ?? "mandelbrot");

// ------------------------------------------------------------------- WebGPU
async function probeWebGPU() {
  const res = {
    available: false,
    navigatorGpu: "gpu" in navigator && !!navigator.gpu,
    secureContext: window.isSecureContext,
    reason: "",
    adapter: null,
  };
  if (!res.navigatorGpu) {
    res.reason = res.secureContext
      ? "navigator.gpu is undefined: this browser has no WebGPU (or it is disabled)."
      : "navigator.gpu is undefined: WebGPU needs a secure context (https:// or http://localhost).";
    return res;
  }
  try {
    const adapter = await navigator.gpu.requestAdapter();
    if (!adapter) {
      res.reason = "navigator.gpu.requestAdapter() returned null: WebGPU is present but no adapter is usable (blocklisted or no GPU).";
      return res;
    }
    // pyaccel's webgpu backend picks this up, so discovery needs no await in Python.
    globalThis.pyaccelAdapter = adapter;
    const info = adapter.info ?? {};
    res.adapter = {
      vendor: info.vendor ?? "",
      architecture: info.architecture ?? "",
      device: info.device ?? "",
      description: info.description ?? "",
      features: [...adapter.features].sort(),
      maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
      maxComputeWorkgroupSizeX: adapter.limits.maxComputeWorkgroupSizeX,
      maxComputeInvocationsPerWorkgroup: adapter.limits.maxComputeInvocationsPerWorkgroup,
    };
    res.available = true;
  } catch (err) {
    res.reason = `navigator.gpu.requestAdapter() failed: ${err}`;
  }
  return res;
}

const COMPUTE_FEATURES = ["shader-f16", "subgroups", "timestamp-query"];

function renderWebGPU(gpu) {
  if (gpu.available) {
    const a = gpu.adapter;
    return [
      `WebGPU adapter (JS): ${a.vendor || "?"} / ${a.architecture || "?"}` +
        (a.description ? ` — ${a.description}` : ""),
      // the features a compute user cares about, then how many others there are
      `  compute features: ${COMPUTE_FEATURES.filter((f) => a.features.includes(f)).join(", ") || "(none)"}` +
        ` (${a.features.length} features in all)`,
      `  maxStorageBufferBindingSize: ${a.maxStorageBufferBindingSize}`,
      `  maxComputeInvocationsPerWorkgroup: ${a.maxComputeInvocationsPerWorkgroup}`,
    ].join("\n");
  }
  return `WebGPU: unavailable\n  ${gpu.reason}`;
}

const webgpuPromise = probeWebGPU().then((gpu) => {
  el.devices.textContent = renderWebGPU(gpu);
  if (!gpu.available) {
    el.banner.textContent =
      "WebGPU is not available in this browser, so pyaccel cannot use the GPU here. " +
      gpu.reason +
      " Try a recent Chrome/Edge (or Firefox/Safari with WebGPU enabled).";
    el.banner.hidden = false;
  }
  return gpu;
});

// Appends pyaccel's own view to the banner: its reason, and the device it falls back to.
const FALLBACK_PY = `
def _pyaccel_fallback():
    import pyaccel
    info = {b.name: b for b in pyaccel.backends()}
    web = info.get("webgpu")
    reason = web.reason.split("; ")[0] if web is not None and not web.available else "?"
    uri = pyaccel.default_device_uri()
    if uri is not None:
        fallback = f"pyaccel falls back to {uri}."
    else:
        fallback = ("pyaccel has no device to fall back to: its cpu device needs NumPy "
                    "(await pyodide.loadPackage('numpy'), which needs the network).")
    return f"pyaccel: webgpu unavailable ({reason}). {fallback}"
_pyaccel_fallback()
`;

async function reportFallback(pyodide) {
  let text;
  try {
    text = await pyodide.runPythonAsync(FALLBACK_PY, { globals: pyodide.toPy({}) });
  } catch (err) {
    text = `pyaccel could not report its fallback: ${err?.message ?? err}`;
  }
  const p = document.createElement("div");
  p.id = "fallback";
  p.textContent = text;
  el.banner.appendChild(p);
}
window.pyaccelWebGPU = webgpuPromise;

// ------------------------------------------------------------------- Pyodide
// stdout/stderr go to #output while a playground run is active, else console.
let sink = null;

async function boot() {
  const t0 = performance.now();
  setStatus("loading Pyodide…");
  const env = {};
  if (params.get("device")) env.PYACCEL_DEVICE = params.get("device");
  const pyodide = await loadPyodide({
    indexURL: INDEX_URL,
    env,
    stdout: (s) => (sink ? sink(s, null) : console.log(s)),
    stderr: (s) => (sink ? sink(s, "err") : console.warn(s)),
  });
  window.pyodide = pyodide;
  setStatus("loading pyaccel…");
  await pyodide.loadPackage("pyaccel", {
    messageCallback: (m) => console.log(m),
    errorCallback: (m) => console.warn(m),
  });
  const version = pyodide.runPython("import pyaccel; pyaccel.__version__");
  const ms = performance.now() - t0;
  window.pyaccelBootMs = ms;
  setStatus(`ready — Pyodide ${pyodide.version}, pyaccel ${version} (${(ms / 1000).toFixed(1)} s)`);
  return pyodide;
}

// Ready = Pyodide booted, pyaccel loaded, and the WebGPU probe done (its adapter is handed to pyaccel).
const ready = boot().then(async (pyodide) => {
  await webgpuPromise;
  return pyodide;
});
window.pyaccelReady = ready;

ready.then(
  async (pyodide) => {
    el.run.disabled = false;
    const gpu = await webgpuPromise;
    await reportDevices(pyodide);
    if (!gpu.available) await reportFallback(pyodide);
    window.pyaccelReported = true;
    if (params.get("autorun")) el.run.click();
  },
  (err) => {
    setStatus("failed");
    appendOutput(`Pyodide failed to start: ${err?.message ?? err}`, "err");
    console.error(err);
  },
);

const DEVICES_PY = `
def _pyaccel_devices_report():
    import pyaccel
    if not callable(getattr(pyaccel, "devices", None)):
        return "pyaccel.devices(): not available in pyaccel " + pyaccel.__version__
    try:
        devs = pyaccel.devices()
    except Exception as e:
        return f"pyaccel.devices() failed: {type(e).__name__}: {e}"
    lines = ["pyaccel.devices():"]
    lines += [f"  {d.uri:26s} {d.name} ({d.api}, {d.adapter_type})" for d in devs] or ["  (none)"]
    lines.append("backends:")
    for b in pyaccel.backends():
        state = "available" if b.available else "unavailable: " + b.reason.splitlines()[0]
        lines.append(f"  {b.name:8s} {state}")
    # default_device_uri() opens nothing: the examples open the device themselves
    uri = pyaccel.default_device_uri()
    lines.append("default device: " + (uri or "none (see the reasons above)"))
    return "\\n".join(lines)
_pyaccel_devices_report()
`;

async function reportDevices(pyodide) {
  let text;
  try {
    text = await pyodide.runPythonAsync(DEVICES_PY, { globals: pyodide.toPy({}) });
  } catch (err) {
    text = `pyaccel.devices() failed: ${err?.message ?? err}`;
  }
  el.devices.textContent += "\n\n" + text;
}

// ----------------------------------------------------------------------- run
// Drop Pyodide's own frames (_pyodide/_base.py: eval_code_async, run_async)
// from tracebacks so the user's frames stand out.
function cleanTraceback(text) {
  const out = [];
  let skipping = false;
  for (const line of text.split("\n")) {
    if (/^ {2}File "\/lib\/python[^"]*\/_pyodide\//.test(line)) {
      skipping = true;
      continue;
    }
    if (skipping && line.startsWith("    ")) continue;
    skipping = false;
    out.push(line);
  }
  return out.join("\n");
}

// check_with_numpy(...) for the examples; NumPy is imported lazily (not a static import,
// so loadPackagesFromImports does not try to fetch numpy for every run).
const HELPERS_PY = `
def check_with_numpy(label, actual, expected_fn, rtol=1e-5, atol=1e-6):
    \"\"\"Compare actual (list or bytes-like of float32) with expected_fn(numpy); print the verdict.\"\"\"
    if not NUMPY_CHECK:
        why = ("numpy could not be loaded" if NUMPY_STATE.startswith("failed")
               else "tick 'check with NumPy' to load numpy")
        print(f"NumPy check of {label}: skipped ({why})")
        return None
    import importlib
    np = importlib.import_module("numpy")
    expected = np.asarray(expected_fn(np))
    if isinstance(actual, (bytes, bytearray, memoryview)):
        got = np.frombuffer(bytes(actual), dtype=expected.dtype).reshape(expected.shape)
    else:
        got = np.asarray(actual, dtype=expected.dtype)
    ok = bool(np.allclose(got, expected, rtol=rtol, atol=atol))
    err = float(np.max(np.abs(got.astype("float64") - expected.astype("float64")))) if got.size else 0.0
    print(f"NumPy check of {label}: {'ok' if ok else 'MISMATCH'} (max |diff| {err:.3g})")
    return ok
`;

let numpyState = "not loaded"; // "loaded" | "failed: ..."
async function ensureNumpy(pyodide) {
  if (numpyState === "loaded") return true;
  const errors = [];
  try {
    // loadPackage reports fetch failures through errorCallback; the import tells for sure
    await pyodide.loadPackage("numpy", { messageCallback: () => {}, errorCallback: (m) => errors.push(m) });
    pyodide.runPython("import numpy");
    numpyState = "loaded";
    return true;
  } catch (err) {
    const lines = String(err?.message ?? err).split("\n");
    const exc = lines.find((l) => /^\w+(Error|Exception):/.test(l)) ?? lines.find((l) => l.trim()) ?? "";
    numpyState = `failed: ${errors.length ? errors[0].split("\n")[0] + " — " : ""}${exc}`;
    return false;
  }
}

async function run(code) {
  const pyodide = await ready;
  el.output.textContent = "";
  canvas.reset();
  el.elapsed.textContent = "running…";
  el.run.disabled = true;
  const chunks = [];
  sink = (s, cls) => {
    chunks.push(s);
    appendOutput(s, cls);
  };
  let numpyOk = false;
  if (el.numpy?.checked) {
    numpyOk = await ensureNumpy(pyodide);
    if (!numpyOk) {
      sink(
        `note: NumPy could not be loaded (${numpyState}); pyodide.loadPackage("numpy") fetches ` +
          "the wheel from the Pyodide CDN, so it needs the network. Running without the NumPy check.",
        "note",
      );
    }
  }
  const globals = pyodide.toPy({
    __name__: "__main__",
    NUMPY_CHECK: numpyOk,
    NUMPY_STATE: el.numpy?.checked ? numpyState : "off",
  });
  pyodide.runPython(HELPERS_PY, { globals });
  let ok = true;
  const t0 = performance.now();
  let ms = 0;
  try {
    // Fetch packages the code imports (e.g. numpy) when they are reachable;
    // offline this fails for CDN-only packages, and the import error says so.
    try {
      await pyodide.loadPackagesFromImports(code, { messageCallback: () => {} });
    } catch (err) {
      appendOutput(`note: could not load the imported packages: ${err?.message ?? err}`, "note");
    }
    const result = await pyodide.runPythonAsync(code, { globals });
    if (result !== undefined) {
      let text;
      if (result && typeof result === "object" && typeof result.toString === "function" && pyodide.isPyProxy?.(result)) {
        text = result.toString();
        result.destroy();
      } else {
        text = String(result);
      }
      sink(text.length > 4000 ? text.slice(0, 4000) + " …" : text, null);
    }
  } catch (err) {
    ok = false;
    sink(cleanTraceback(String(err?.message ?? err)), "err");
  } finally {
    ms = performance.now() - t0;
    el.elapsed.textContent = `${ms.toFixed(1)} ms`;
    sink = null;
    globals.destroy();
    el.run.disabled = false;
  }
  return { ok, output: chunks.join("\n"), elapsedMs: ms };
}

el.run.addEventListener("click", () => run(getCode()));

window.pyaccelPlayground = { examples: EXAMPLES, run, setExample, getCode, setCode, editor };
