// npm's prebuild / predev step: runs `python wasm/build.py` (the pyaccel wheel, the
// Pyodide runtime and lock file -> web/public/pyodide/, PyScript -> web/public/pyscript/)
// with the first Python that works:
//   $PYTHON, .venv/bin/python (the project's venv, when present), python3, python.
// wasm/build.py itself needs Python >= 3.11; it creates or reuses .venv-wasm (Python >= 3.12,
// wasm/requirements-build.lock: hatchling, pyodide-build, JupyterLite) for the tools it runs,
// and says what to install when it cannot.
// Arguments are passed on (`npm run build:jupyterlite` -> `wasm/build.py --jupyterlite`).
// Set PYACCEL_SKIP_WASM_BUILD=1 to skip it (web/public/pyodide/ is then used as it is).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const build = join(root, "wasm", "build.py");

if (process.env.PYACCEL_SKIP_WASM_BUILD === "1") {
  console.log("[prebuild] PYACCEL_SKIP_WASM_BUILD=1: not running wasm/build.py");
  process.exit(0);
}

const venv = join(root, ".venv", process.platform === "win32" ? "Scripts/python.exe" : "bin/python");
const candidates = [];
if (process.env.PYTHON) candidates.push(["$PYTHON", process.env.PYTHON]);
if (existsSync(venv)) candidates.push([".venv", venv]);
candidates.push(["python3", "python3"], ["python", "python"]);

const tried = [];
for (const [label, py] of candidates) {
  const probe = spawnSync(py, ["-c", "import sys, tomllib, zipfile, hashlib, venv; print(sys.version.split()[0])"], {
    encoding: "utf8",
  });
  if (probe.error || probe.status !== 0) {
    const why = probe.error
      ? probe.error.code === "ENOENT" ? "not found" : String(probe.error.message)
      : (probe.stderr.trim().split("\n").pop() || `exit status ${probe.status}`);
    tried.push(`  ${label} (${py}): ${why}`);
    continue;
  }
  console.log(`[prebuild] python wasm/build.py with ${py} (Python ${probe.stdout.trim()})`);
  const run = spawnSync(py, [build, ...process.argv.slice(2)], { stdio: "inherit", cwd: root });
  process.exit(run.status ?? 1);
}
console.error(
  [
    "[prebuild] ERROR: no usable Python to build the pyaccel wheel and the Pyodide lock file.",
    "wasm/build.py needs Python >= 3.11 to run, and a Python >= 3.12 for its build tools",
    "(it finds one: $PYACCEL_WASM_PYTHON, python3.12+, pyenv). Tried:",
    ...tried,
    "Install Python 3.11 or newer (Debian/Ubuntu: `apt-get install python3`; macOS: `brew install python`;",
    "Windows: https://www.python.org/downloads/), or point PYTHON at one: PYTHON=/path/to/python3 npm run build",
  ].join("\n"),
);
process.exit(1);
