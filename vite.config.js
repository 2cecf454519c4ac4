// Vite config for the pyaccel playground (web/).
//
// The Pyodide runtime files (pyodide.asm.wasm, python_stdlib.zip, the lock
// file with the pyaccel wheel, ...) are NOT handled by Vite: `wasm/build.py`
// puts them into web/public/pyodide/ (gitignored) and Vite copies publicDir
// verbatim into web/dist/pyodide/. npm runs wasm/build.py first, as the
// prebuild / predev script (wasm/prebuild.mjs finds the Python).
//
//   npm ci && npm run build   -> web/dist/
//   npm run dev               -> dev server
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  root: here("./web"),
  // Relative asset URLs: the built site works from any static server path.
  base: "./",
  publicDir: here("./web/public"),
  build: {
    outDir: here("./web/dist"),
    emptyOutDir: true,
    // top-level await in main.js; Chromium/Firefox/Safari all support it.
    target: "es2022",
    // one page script: the CodeMirror editor (~400 kB) plus pyodide.mjs's loader
    chunkSizeWarningLimit: 800,
  },
  // pyodide.mjs locates and imports its runtime itself; pre-bundling breaks it.
  optimizeDeps: { exclude: ["pyodide"] },
  server: { host: "127.0.0.1" },
});
