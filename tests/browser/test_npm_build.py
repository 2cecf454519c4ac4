"""npm-first build: a fresh clone plus ``npm ci && npm run build`` gives the complete site.

The repository's HEAD is cloned into a temporary folder (no .venv, no node_modules, no
web/public/pyodide there), then exactly ``npm ci && npm run build`` runs in it: npm's
``prebuild`` script (``wasm/prebuild.mjs``) finds a Python and runs ``wasm/build.py``, which
creates the clone's own .venv-wasm (the pinned build tools, from the package registry or
pip's cache), builds the wheel with hatchling and the lock with ``pyodide lockfile
add-wheels``; Vite builds the page. The clone's ``web/dist`` must hold the page, the pyaccel wheel, the
Pyodide lock file listing it and the runtime files, and it must boot in Chromium far
enough for ``import pyaccel`` and an op on ``webgpu:0``.
Only committed files take part (uncommitted edits of the worktree are not in the clone).
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import os
import shutil
import socketserver
import subprocess
import threading
import time
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip"]


def _need(what: str, ok: bool) -> None:
    if ok:
        return
    if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
        pytest.fail(f"npm build test cannot run under CI: {what}", pytrace=False)
    pytest.skip(what)


@pytest.fixture(scope="module")
def clone_dist(tmp_path_factory) -> Path:
    _need("git is not on PATH", shutil.which("git") is not None)
    _need("npm is not on PATH (install Node.js >= 20)", shutil.which("npm") is not None)
    _need("not a git checkout", (ROOT / ".git").exists())
    clone = tmp_path_factory.mktemp("npm-clone") / "pyaccel"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)],
                   check=True, capture_output=True, text=True, timeout=120)
    assert not (clone / "node_modules").exists() and not (clone / ".venv").exists()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHON", "PYACCEL_SKIP_WASM_BUILD", "PYACCEL_WASM_VENV")}
    # The build tools' venv: the checkout's .venv-wasm when it holds exactly the clone's
    # wasm/requirements-build.lock (the prebuild then reuses it: `npm run build` "creates or
    # reuses" it; creating one costs ~15-45 s here and CI's setup.sh does it on a fresh
    # machine anyway), else a new one in the clone. PYACCEL_NPM_BUILD_FRESH_VENV=1 forces new.
    venv = ROOT / ".venv-wasm"
    stamp = venv / ".pyaccel-build-stamp"
    lock = clone / "wasm" / "requirements-build.lock"
    reuse = (not os.environ.get("PYACCEL_NPM_BUILD_FRESH_VENV") and stamp.is_file()
             and stamp.read_text().startswith(hashlib.sha256(lock.read_bytes()).hexdigest()[:16]))
    if reuse:
        env["PYACCEL_WASM_VENV"] = str(venv)
    t0 = time.perf_counter()
    proc = subprocess.run("npm ci && npm run build", shell=True, cwd=clone, env=env,
                          capture_output=True, text=True, timeout=600)
    dt = time.perf_counter() - t0
    assert proc.returncode == 0, (
        f"`npm ci && npm run build` failed ({proc.returncode}) in a fresh clone:\n"
        f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    print(f"fresh clone: npm ci && npm run build in {dt:.1f}s")
    # the prebuild ran wasm/build.py (not a stale copy: the clone had no web/public/pyodide)
    assert "[prebuild] python wasm/build.py with" in proc.stdout, proc.stdout[-2000:]
    assert "[wasm/build] check: ok" in proc.stdout, proc.stdout[-2000:]
    # with the field's tools, in the clone's own .venv-wasm (created or reused by the prebuild)
    assert "with hatchling" in proc.stdout and "pyodide lockfile add-wheels" in proc.stdout, proc.stdout[-2000:]
    assert (venv if reuse else clone / ".venv-wasm").joinpath(".pyaccel-build-stamp").is_file()
    print(f"build tools venv: {'reused ' + str(venv) if reuse else 'created in the clone'}")
    return clone / "web" / "dist"


def test_fresh_clone_builds_the_complete_site(clone_dist):
    assert (clone_dist / "index.html").is_file()
    pyo = clone_dist / "pyodide"
    for name in RUNTIME + ["pyodide-lock.json"]:
        assert (pyo / name).is_file() and (pyo / name).stat().st_size > 0, name
    lock = json.loads((pyo / "pyodide-lock.json").read_text())
    entry = lock["packages"]["pyaccel"]
    wheel = pyo / entry["file_name"]
    assert wheel.is_file() and wheel.name.endswith("-py3-none-any.whl")
    assert hashlib.sha256(wheel.read_bytes()).hexdigest() == entry["sha256"]
    assert entry["depends"] == [] and entry["imports"] == ["pyaccel"]
    # micropip (PyScript's and JupyterLite's installer) ships beside it, hash-matching
    mp = lock["packages"]["micropip"]
    assert (pyo / mp["file_name"]).is_file(), mp
    assert hashlib.sha256((pyo / mp["file_name"]).read_bytes()).hexdigest() == mp["sha256"]
    assert (clone_dist / "pyscript" / "core.js").is_file()
    assert (clone_dist / "worker" / "pyaccel-worker.mjs").is_file()
    # the wheel holds every file of the committed package (sources and .wgsl data)
    tracked = subprocess.run(["git", "ls-files", "pyaccel"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [t for t in tracked if t not in names]
    assert not missing, f"files missing from the wheel: {missing}"
    assert any(n.endswith(".wgsl") for n in names)
    # the runtime files are the npm package's own
    for name in RUNTIME:
        src = ROOT / "node_modules" / "pyodide" / name
        if src.exists():
            assert (pyo / name).stat().st_size == src.stat().st_size, name


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".js": "application/javascript", ".mjs": "application/javascript",
                      ".wasm": "application/wasm", ".json": "application/json",
                      ".whl": "application/zip", ".zip": "application/zip"}

    def log_message(self, *args):  # quiet
        pass


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def test_fresh_clone_site_imports_pyaccel_in_chromium(clone_dist, chromium_webgpu):
    server = _Server(("127.0.0.1", 0), functools.partial(_Handler, directory=str(clone_dist)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    page = chromium_webgpu.new_page()
    try:
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/", wait_until="load")
        page.wait_for_function("() => window.pyaccelReady !== undefined", timeout=30_000)
        res = page.evaluate(
            """async () => {
                 const py = await window.pyaccelReady;
                 return await py.runPythonAsync(`
import pyaccel
x = pyaccel.asarray([1.0, 2.0, 3.0], dtype=pyaccel.float32, device="webgpu")
'|'.join([pyaccel.__file__, str(x.device), repr((x * 2 + 1).tolist())])
`);
               }""")
    finally:
        page.close()
        server.shutdown()
        server.server_close()
    path, dev, values = res.split("|")
    assert "site-packages/pyaccel" in path  # installed from the clone's wheel
    assert dev.startswith("<pyaccel.Device webgpu:0")
    assert values == "[3.0, 5.0, 7.0]"
