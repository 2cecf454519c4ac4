// pyaccel in a dedicated *module* worker: Python runs off the page's main thread, so long
// host work never freezes the page. Protocol (one message in, one message out):
//   page -> worker  { id, code, inputs }   code: Python source; inputs: any structured-cloneable
//                                           value (typed arrays, ArrayBuffers, objects), seen by
//                                           the code as the global `inputs` (a JsProxy)
//   worker -> page  { id, ok: true, result } | { id, ok: false, error }
//                                           result: the value of the code's last expression,
//                                           converted with toJs (bytes -> Uint8Array)
// The code runs with runPythonAsync, so top-level `await` works and, with JSPI (Chromium 137+),
// so does pyaccel's sync API (pyaccel.device(), x.tolist(), kernels with host outputs).
// Start it with {type: "module"}: Pyodide 314 refuses classic workers
// ("Classic web workers are not supported").
import { loadPyodide } from "../pyodide/pyodide.mjs";

const ready = (async () => {
  const pyodide = await loadPyodide({ indexURL: new URL("../pyodide/", import.meta.url).href });
  await pyodide.loadPackage("pyaccel");
  return pyodide;
})();

function toMessage(pyodide, value) {
  if (!(value instanceof pyodide.ffi.PyProxy)) return value; // str, number, bool, None
  try {
    return value.toJs({ dict_converter: Object.fromEntries, create_pyproxies: false });
  } finally {
    value.destroy();
  }
}

self.onmessage = async ({ data: { id, code, inputs } }) => {
  try {
    const pyodide = await ready;
    pyodide.globals.set("inputs", inputs);
    const result = await pyodide.runPythonAsync(code);
    self.postMessage({ id, ok: true, result: toMessage(pyodide, result) });
  } catch (err) {
    self.postMessage({ id, ok: false, error: String(err?.message ?? err) });
  }
};
