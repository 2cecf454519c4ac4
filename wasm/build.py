#!/usr/bin/env python3
"""Build pyaccel's browser distribution with the field's own tools.

Run from anywhere with Python >= 3.11 (it only orchestrates; the tools run in .venv-wasm):

    python wasm/build.py                 # web/public/pyodide/ (+ web/public/pyscript/)
    python wasm/build.py --check         # only verify web/public/pyodide/ is complete
    python wasm/build.py --jupyterlite   # the above, then the JupyterLite site -> web/dist-jupyterlite/
    python wasm/build.py --check-wheel   # the shipped wheel == a fresh `pip wheel .` (same backend)

``npm run build`` / ``npm run dev`` run it first (``wasm/prebuild.mjs`` finds a Python), and
``npm run build:jupyterlite`` runs it with ``--jupyterlite``, so ``npm ci && npm run build``
alone gives the complete site.

What it does (each step prints one line):

1. Creates or reuses ``.venv-wasm`` (or ``$PYACCEL_WASM_VENV``), a virtualenv of Python >= 3.12 (pyodide-build needs it:
   ``$PYACCEL_WASM_PYTHON``, this Python, ``python3.14``..``python3.12`` or a pyenv version),
   with exactly ``wasm/requirements-build.lock`` installed (hatchling, pyodide-build 0.39.2,
   pkginfo, jupyterlite-core and jupyterlite-pyodide-kernel 0.8.6). Reinstalled only when the
   lock file or the Python changes (a stamp inside the venv). Needs the package registry the
   first time only.
2. Builds the pure ``py3-none-any`` wheel with the project's build backend:
   ``pip wheel . --no-deps --no-build-isolation`` (hatchling from the venv; byte-identical to
   ``pip wheel .`` / ``python -m build --wheel`` with the same hatchling: ``--check-wheel``).
3. Downloads the pure wheels the offline folder ships beside it (``wasm/pyodide-wheels.lock``:
   micropip 0.11.1, which PyScript's ``packages = [...]`` and JupyterLite install through),
   hash-checked, into ``wasm/dist/wheels/`` (reused when present: offline afterwards).
4. Copies the Pyodide runtime from ``node_modules/pyodide/`` (``npm ci`` first) into
   ``web/public/pyodide/`` (Vite copies it to ``web/dist/pyodide/``), and PyScript
   (``node_modules/@pyscript/core/dist``) into ``web/public/pyscript/``.
5. Writes ``web/public/pyodide/pyodide-lock.json`` with ``pyodide lockfile add-wheels``: the
   npm package's lock plus the entries of pyaccel and micropip (file_name, sha256 and depends
   from the wheels; the native-only dependencies numpy and wgpu carry
   ``sys_platform != 'emscripten'`` markers, so they are not in pyaccel's ``depends``), then
   checks it. The packages the folder does not ship (numpy, ...) keep the npm lock's entries
   with their file_name pointed at the Pyodide CDN of the same release: Pyodide resolves a
   relative file_name against the lock's folder, where they would 404 even online.

``--jupyterlite`` then assembles the kernel's Pyodide folder (a copy of
``web/public/pyodide/`` plus the 15 wheels of ``wasm/jupyterlite-wheels.lock``: ipython and its
dependencies, jedi, parso, comm; lock entries again from ``add-wheels``) and runs
``jupyter lite build`` with ``wasm/jupyterlite/jupyter-lite.json`` (PyPI fallback off), offline.

Afterwards a page can ``loadPyodide({indexURL: "<base>/pyodide/"})`` and
``await pyodide.loadPackage("pyaccel")`` from its own server, offline.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

if sys.version_info < (3, 11):  # noqa: UP036 - npm may find an older python
    sys.exit(f"[wasm/build] ERROR: Python >= 3.11 is needed to run wasm/build.py (this is "
             f"{sys.version.split()[0]}); install python3.11 or newer, or set PYTHON=/path/to/python3 for npm")

ROOT = Path(__file__).resolve().parent.parent
WASM = ROOT / "wasm"
WHEEL_DIR = WASM / "dist"
WHEEL_CACHE = WHEEL_DIR / "wheels"  # downloaded third-party wheels (hash-checked)
VENV = Path(os.environ.get("PYACCEL_WASM_VENV") or ROOT / ".venv-wasm")
BUILD_LOCK = WASM / "requirements-build.lock"
SITE_WHEELS_LOCK = WASM / "pyodide-wheels.lock"
LITE_WHEELS_LOCK = WASM / "jupyterlite-wheels.lock"
LITE_CONFIG = WASM / "jupyterlite"
PYODIDE_NPM = ROOT / "node_modules" / "pyodide"
PYSCRIPT_NPM = ROOT / "node_modules" / "@pyscript" / "core" / "dist"
OUT = ROOT / "web" / "public" / "pyodide"
PYSCRIPT_OUT = ROOT / "web" / "public" / "pyscript"
LITE_SRC = WHEEL_DIR / "jupyterlite-src"  # the lite dir `jupyter lite build` reads
LITE_OUT = ROOT / "web" / "dist-jupyterlite"
PACKAGE = "pyaccel"
MIN_TOOL_PYTHON = (3, 12)  # pyodide-build 0.39.2

# Files of the npm package that the browser fetches (pyodide.mjs/.js are also
# bundled by Vite into the page; the copies here serve plain <script> users and workers).
RUNTIME_FILES = [
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide.mjs",
    "pyodide.js",
    "package.json",  # pyodide reads nothing from it, but it documents the version
]
# Dependencies that must never be pulled into Pyodide.
NATIVE_ONLY_DEPS = {"numpy", "wgpu"}
PYODIDE_EXPECTED_VERSION = "314.0.7"
# Where the wheels the folder does not ship (numpy, ...) load from, online only.
PYODIDE_CDN = "https://cdn.jsdelivr.net/pyodide/v{version}/full/"


def log(msg: str) -> None:
    print(f"[wasm/build] {msg}", flush=True)


def die(msg: str) -> None:
    print(f"[wasm/build] ERROR: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def run(cmd: list[str], what: str, **kw) -> subprocess.CompletedProcess:
    """Run a tool; on failure stop with its output and what to do."""
    proc = subprocess.run(cmd, cwd=kw.pop("cwd", ROOT), capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        out = "\n".join(
            line for line in (proc.stdout + "\n" + proc.stderr).splitlines()
            if line.strip() and "is ignored: it is neither a file nor a directory" not in line
        )
        die(f"{what} failed (exit {proc.returncode}): {' '.join(map(str, cmd))}\n{out[-4000:]}")
    return proc


def sha256(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


# ------------------------------------------------------------ step 1: the venv
def _probe(py: str) -> tuple[int, int, int] | None:
    try:
        proc = subprocess.run(
            [py, "-c", "import sys, venv, ensurepip; print(*sys.version_info[:3])"],
            capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    return tuple(int(x) for x in proc.stdout.split())  # type: ignore[return-value]


def _pyenv_pythons() -> list[str]:
    roots = []
    pyenv = shutil.which("pyenv")
    if pyenv:
        proc = subprocess.run([pyenv, "root"], capture_output=True, text=True)
        if proc.returncode == 0:
            roots.append(Path(proc.stdout.strip()))
    roots.append(Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")))
    found = []
    for r in roots:
        for exe in sorted((r / "versions").glob("3.*/bin/python3"), reverse=True):
            if str(exe) not in found:
                found.append(str(exe))
    return found


def find_tool_python() -> tuple[str, tuple[int, int, int]]:
    """A Python >= 3.12 with venv, for .venv-wasm; stop with what to install when none."""
    cands: list[tuple[str, str]] = []
    if os.environ.get("PYACCEL_WASM_PYTHON"):
        cands.append(("$PYACCEL_WASM_PYTHON", os.environ["PYACCEL_WASM_PYTHON"]))
    cands.append(("this Python", sys.executable))
    for v in ("3.14", "3.13", "3.12"):
        exe = shutil.which(f"python{v}")
        if exe:
            cands.append((f"python{v}", exe))
    cands += [("pyenv", exe) for exe in _pyenv_pythons()]
    tried = []
    for label, py in cands:
        ver = _probe(py)
        if ver is not None and ver[:2] >= MIN_TOOL_PYTHON:
            return py, ver
        tried.append(f"  {label} ({py}): " + ("not usable" if ver is None else ".".join(map(str, ver))))
    die("no Python >= 3.12 (with venv) for the build tools (pyodide-build 0.39.2 needs 3.12+). Tried:\n"
        + "\n".join(tried)
        + "\nInstall one (pyenv install 3.12; Debian 13 / Ubuntu 24.04: apt-get install python3 "
          "python3-venv; macOS: brew install python@3.12) or point PYACCEL_WASM_PYTHON at it.")
    raise AssertionError  # unreachable


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def venv_bin(name: str) -> Path:
    return VENV / ("Scripts" if os.name == "nt" else "bin") / name


def ensure_venv() -> Path:
    """.venv-wasm with exactly requirements-build.lock; reused while the stamp matches."""
    stamp_file = VENV / ".pyaccel-build-stamp"
    lock_hash = sha256(BUILD_LOCK)[:16]
    py = venv_python()
    if py.exists() and stamp_file.exists():
        ver = _probe(str(py))
        if ver and stamp_file.read_text().strip() == f"{lock_hash}-{'.'.join(map(str, ver))}":
            log(f"build tools: {VENV.relative_to(ROOT) if VENV.is_relative_to(ROOT) else VENV} "
                f"up to date (Python {'.'.join(map(str, ver))})")
            return py
    t0 = time.perf_counter()
    if py.exists() and (_probe(str(py)) or (0, 0))[:2] >= MIN_TOOL_PYTHON:
        ver = _probe(str(py))
    else:
        base, ver = find_tool_python()
        if VENV.exists():
            shutil.rmtree(VENV)
        run([base, "-m", "venv", str(VENV)], f"creating {VENV} with {base}")
    pip = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", "--no-compile",
           "-r", str(BUILD_LOCK)]
    proc = subprocess.run(pip, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join(ln for ln in proc.stderr.splitlines() if "is ignored:" not in ln)[-3000:]
        die(f"could not install the build tools into {VENV} (exit {proc.returncode}):\n{tail}\n"
            f"They come from the package registry (PyPI) the first time: check that it is reachable, "
            f"or install them yourself: {py} -m pip install -r {BUILD_LOCK.relative_to(ROOT)}")
    run([str(py), "-m", "pip", "check"], "pip check of the build tools")
    stamp_file.write_text(f"{lock_hash}-{'.'.join(map(str, ver))}\n")
    log(f"build tools: installed {BUILD_LOCK.relative_to(ROOT)} into {VENV.name} "
        f"(Python {'.'.join(map(str, ver))}) in {time.perf_counter() - t0:.1f}s")
    return py


# --------------------------------------------------------------- step 2: wheel
def build_wheel(py: Path, dest: Path = WHEEL_DIR) -> Path:
    """``pip wheel . --no-deps --no-build-isolation`` with the venv's pinned hatchling."""
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pyaccel-wheel-") as tmp:
        run([str(py), "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation",
             "--disable-pip-version-check", "-q", "-w", tmp], "pip wheel . (hatchling)")
        built = list(Path(tmp).glob(f"{PACKAGE}-*-py3-none-any.whl"))
        if len(built) != 1:
            die(f"pip wheel produced {[p.name for p in Path(tmp).iterdir()]}, expected one pure wheel")
        for old in dest.glob(f"{PACKAGE}-*.whl"):
            old.unlink()
        whl = dest / built[0].name
        shutil.move(str(built[0]), whl)
    with zipfile.ZipFile(whl) as zf:
        n = len(zf.namelist())
    log(f"built {whl.relative_to(ROOT)} with hatchling ({whl.stat().st_size} bytes, {n} files)")
    return whl


# ---------------------------------------------------------- step 3: downloads
def _pinned(lock: Path) -> list[tuple[str, str, set[str]]]:
    """(name, version, sha256 hashes) of each ``name==version --hash=sha256:...`` line."""
    out = []
    for raw in lock.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.match(r"([A-Za-z0-9._-]+)==(\S+)", line)
        hashes = set(re.findall(r"--hash=sha256:([0-9a-f]{64})", line))
        if not m or not hashes:
            die(f"{lock.name}: every line must be `name==version --hash=sha256:...`, got {raw!r}")
        out.append((m.group(1), m.group(2), hashes))
    return out


def fetch_wheels(py: Path, lock: Path, python_version: str) -> list[Path]:
    """The pinned pure wheels of ``lock``, from the cache or downloaded (hash-checked)."""
    pins = _pinned(lock)
    WHEEL_CACHE.mkdir(parents=True, exist_ok=True)
    have = {sha256(p): p for p in WHEEL_CACHE.glob("*.whl")}
    missing = [p for p in pins if not (p[2] & have.keys())]
    if missing:
        t0 = time.perf_counter()
        proc = subprocess.run(
            [str(py), "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
             "--only-binary=:all:", "--python-version", python_version, "--require-hashes",
             "-r", str(lock), "-d", str(WHEEL_CACHE)], cwd=ROOT, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = "\n".join(ln for ln in proc.stderr.splitlines() if "is ignored:" not in ln)[-3000:]
            die(f"could not download the wheels of {lock.relative_to(ROOT)} "
                f"({', '.join(f'{n}=={v}' for n, v, _ in missing)}) (exit {proc.returncode}):\n{tail}\n"
                f"They come from PyPI at build time: check that it is reachable, or put those exact "
                f"files (the hashes in {lock.name}) into {WHEEL_CACHE.relative_to(ROOT)}/")
        have = {sha256(p): p for p in WHEEL_CACHE.glob("*.whl")}
        log(f"downloaded {len(missing)} wheel(s) of {lock.name} in {time.perf_counter() - t0:.1f}s")
    out = []
    for name, version, hashes in pins:
        hit = next((have[h] for h in hashes if h in have), None)
        if hit is None:
            die(f"{name}=={version}: no wheel with the pinned sha256 in {WHEEL_CACHE}")
        out.append(hit)
    return out


# ----------------------------------------------------- step 4: runtime files
def same_file(a: Path, b: Path) -> bool:
    if not b.exists():
        return False
    sa, sb = a.stat(), b.stat()
    return sa.st_size == sb.st_size and int(sa.st_mtime) == int(sb.st_mtime)


def copy_tree_files(src_files: list[Path], src_root: Path, dst: Path) -> tuple[int, int]:
    copied = skipped = 0
    for src in src_files:
        target = dst / src.relative_to(src_root)
        if same_file(src, target):
            skipped += 1
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
        copied += 1
    return copied, skipped


def pyodide_version() -> str:
    return json.loads((PYODIDE_NPM / "package.json").read_text())["version"]


def copy_runtime() -> None:
    if not (PYODIDE_NPM / "pyodide.asm.wasm").exists():
        die(f"{PYODIDE_NPM} is missing: run `npm ci` at the repository root first")
    ver = pyodide_version()
    if ver != PYODIDE_EXPECTED_VERSION:
        log(f"warning: node_modules/pyodide is {ver}, expected {PYODIDE_EXPECTED_VERSION}")
    OUT.mkdir(parents=True, exist_ok=True)
    for name in RUNTIME_FILES:
        if not (PYODIDE_NPM / name).exists():
            die(f"runtime file missing from the npm package: {PYODIDE_NPM / name}")
    copied, skipped = copy_tree_files([PYODIDE_NPM / n for n in RUNTIME_FILES], PYODIDE_NPM, OUT)
    log(f"pyodide {ver} runtime -> {OUT.relative_to(ROOT)}/ ({copied} copied, {skipped} up to date)")


def copy_pyscript() -> None:
    """@pyscript/core's dist (no source maps) -> web/public/pyscript/ (served as /pyscript/)."""
    if not (PYSCRIPT_NPM / "core.js").exists():
        die(f"{PYSCRIPT_NPM} is missing: run `npm ci` at the repository root first")
    files = sorted(p for p in PYSCRIPT_NPM.rglob("*") if p.is_file() and p.suffix != ".map")
    wanted = {p.relative_to(PYSCRIPT_NPM) for p in files}
    if PYSCRIPT_OUT.exists():  # a new @pyscript/core has other chunk names: drop the old ones
        for p in PYSCRIPT_OUT.rglob("*"):
            if p.is_file() and p.relative_to(PYSCRIPT_OUT) not in wanted:
                p.unlink()
    copied, skipped = copy_tree_files(files, PYSCRIPT_NPM, PYSCRIPT_OUT)
    ver = json.loads((PYSCRIPT_NPM.parent / "package.json").read_text())["version"]
    log(f"pyscript {ver} -> {PYSCRIPT_OUT.relative_to(ROOT)}/ ({copied} copied, {skipped} up to date)")


# ------------------------------------------------------------ step 5: lockfile
def add_wheels(py: Path, input_lock: Path, folder: Path, wheels: list[Path]) -> dict:
    """``pyodide lockfile add-wheels`` for ``wheels`` (already in ``folder``) -> folder's lock."""
    out = folder / "pyodide-lock.json"
    tmp = folder / "pyodide-lock.json.tmp"
    run([str(venv_bin("pyodide")), "lockfile", "add-wheels", "--input", str(input_lock),
         "--output", str(tmp), "--base-path", str(folder), *map(str, wheels)],
        "pyodide lockfile add-wheels")
    tmp.replace(out)  # always (a new mtime): tests/browser/conftest.py compares it with the sources
    return json.loads(out.read_text())


def place(wheels: list[Path], folder: Path, keep: set[str] = frozenset()) -> list[Path]:
    """Copy ``wheels`` into ``folder``; drop other versions of pyaccel there."""
    placed = []
    for old in folder.glob(f"{PACKAGE}-*.whl"):
        if old.name not in {w.name for w in wheels} | keep:
            old.unlink()
    for w in wheels:
        dst = folder / w.name
        if not dst.exists() or sha256(dst) != sha256(w):
            shutil.copy2(w, dst)
        placed.append(dst)
    return placed


def cdn_linked_lock() -> Path:
    """The npm package's lock with each file_name an absolute Pyodide-CDN URL.

    Pyodide resolves a relative file_name against the lock's own folder, and the npm package
    ships none of the 350 packages' wheels (numpy included): in the self-hosted folder they
    would 404 even online. Pointed at the CDN of the same release (same sha256), they load in
    a page that has the network; the wheels the folder ships get relative names again from
    ``add-wheels``."""
    data = json.loads((PYODIDE_NPM / "pyodide-lock.json").read_text())
    base = PYODIDE_CDN.format(version=data["info"].get("version") or pyodide_version())
    for entry in data["packages"].values():
        if "://" not in entry["file_name"]:
            entry["file_name"] = base + entry["file_name"]
    out = WHEEL_DIR / "pyodide-lock.cdn.json"
    WHEEL_DIR.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, sort_keys=True)
    if not out.exists() or out.read_text() != text:
        out.write_text(text)
    return out


def write_lock(py: Path, whl: Path, extra: list[Path]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    placed = place([whl, *extra], OUT)
    data = add_wheels(py, cdn_linked_lock(), OUT, placed)
    entry = data["packages"][PACKAGE]
    log(
        f"lock {(OUT / 'pyodide-lock.json').relative_to(ROOT)} (pyodide lockfile add-wheels): "
        f"{PACKAGE} {entry['version']} depends={entry['depends']}, "
        + ", ".join(f"{p.name.split('-')[0]}" for p in placed[1:])
        + f" ({len(data['packages'])} packages, python {data['info']['python']}; the others load "
        f"from the Pyodide CDN, online only)"
    )


def check_folder(folder: Path, names: list[str]) -> list[str]:
    """Every runtime file, and each named package's wheel present with the lock's sha256."""
    problems = [f"missing {folder / n}" for n in RUNTIME_FILES + ["pyodide-lock.json"]
                if not (folder / n).exists()]
    if problems:
        return problems
    pkgs = json.loads((folder / "pyodide-lock.json").read_text())["packages"]
    for name in names:
        entry = pkgs.get(name)
        if not entry:
            problems.append(f"{name} not in {folder.name}/pyodide-lock.json")
        elif not (folder / entry["file_name"]).exists():
            problems.append(f"missing wheel {folder / entry['file_name']}")
        elif sha256(folder / entry["file_name"]) != entry["sha256"]:
            problems.append(f"{entry['file_name']}: sha256 does not match the lock file")
        elif name == PACKAGE and set(map(str.lower, entry["depends"])) & NATIVE_ONLY_DEPS:
            problems.append(f"{PACKAGE} depends on native-only packages: {entry['depends']}")
    return problems


def site_packages() -> list[str]:
    return [PACKAGE] + [n.lower() for n, _, _ in _pinned(SITE_WHEELS_LOCK)]


def check() -> int:
    problems = check_folder(OUT, site_packages())
    if not (PYSCRIPT_OUT / "core.js").exists():
        problems.append(f"missing {PYSCRIPT_OUT / 'core.js'}")
    for p in problems:
        log("check: " + p)
    log("check: ok" if not problems else "check: FAILED")
    return 1 if problems else 0


# ----------------------------------------------------------------- JupyterLite
def build_jupyterlite(py: Path) -> int:
    """The kernel's Pyodide folder (pyaccel's + the kernel's wheels) and ``jupyter lite build``."""
    t0 = time.perf_counter()
    lock = json.loads((OUT / "pyodide-lock.json").read_text())
    kernel_wheels = fetch_wheels(py, LITE_WHEELS_LOCK, lock["info"]["python"])
    static = LITE_SRC / "static" / "pyodide"
    if LITE_SRC.exists():
        shutil.rmtree(LITE_SRC)
    static.mkdir(parents=True)
    ours = sorted(p for p in OUT.iterdir() if p.is_file() and p.name != "pyodide-lock.json")
    copy_tree_files(ours, OUT, static)
    placed = place(kernel_wheels, static, keep={p.name for p in ours})
    data = add_wheels(py, OUT / "pyodide-lock.json", static, placed)
    for src in sorted(LITE_CONFIG.rglob("*")):
        if src.is_file():
            dst = LITE_SRC / src.relative_to(LITE_CONFIG)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    problems = check_folder(static, site_packages() + [n.lower() for n, _, _ in _pinned(LITE_WHEELS_LOCK)])
    if problems:
        die("the kernel's Pyodide folder is incomplete:\n  " + "\n  ".join(problems))
    log(f"jupyterlite: kernel Pyodide folder {static.relative_to(ROOT)}/ "
        f"(+{len(placed)} wheels, {len(data['packages'])} packages)")
    if LITE_OUT.exists():
        shutil.rmtree(LITE_OUT)
    jupyter = venv_bin("jupyter")
    env = {**os.environ, "JUPYTERLITE_NO_LIBARCHIVE": "1"}
    env.pop("JUPYTERLITE_PYODIDE_URL", None)
    run([str(jupyter), "lite", "build", "--lite-dir", str(LITE_SRC), "--output-dir", str(LITE_OUT),
         "--no-sourcemaps"], "jupyter lite build", cwd=LITE_SRC, env=env)
    problems = check_jupyterlite()
    for p in problems:
        log("jupyterlite check: " + p)
    if not problems:
        LITE_STAMP.write_text(lite_stamp() + "\n")
    log(f"jupyterlite: {LITE_OUT.relative_to(ROOT)}/ in {time.perf_counter() - t0:.1f}s "
        f"(open /repl/index.html?kernel=python or /lab/index.html on a local server)")
    return 1 if problems else 0


def lite_stamp() -> str:
    """What the JupyterLite site is built from (the tests compare it with the site's stamp)."""
    h = hashlib.sha256()
    inputs = [OUT / "pyodide-lock.json", LITE_WHEELS_LOCK, BUILD_LOCK, Path(__file__).resolve(),
              *sorted(p for p in LITE_CONFIG.rglob("*") if p.is_file())]
    for p in inputs:
        h.update(p.name.encode() + b"\0" + (p.read_bytes() if p.exists() else b"<missing>") + b"\0")
    return h.hexdigest()[:32]


LITE_STAMP = LITE_OUT / ".pyaccel-build-stamp"


def check_jupyterlite() -> list[str]:
    cfg_path = LITE_OUT / "jupyter-lite.json"
    if not cfg_path.exists():
        return [f"missing {cfg_path}"]
    cfg = json.loads(cfg_path.read_text())["jupyter-config-data"]
    kernel = cfg.get("litePluginSettings", {}).get("@jupyterlite/pyodide-kernel-extension:kernel", {})
    problems = []
    if kernel.get("pyodideUrl") != "./static/pyodide/pyodide.mjs":
        problems.append(f"the kernel's pyodideUrl is {kernel.get('pyodideUrl')!r}, not the local folder")
    if kernel.get("disablePyPIFallback") is not True:
        problems.append("the kernel's PyPI fallback is not disabled")
    problems += check_folder(LITE_OUT / "static" / "pyodide",
                             site_packages() + [n.lower() for n, _, _ in _pinned(LITE_WHEELS_LOCK)])
    return problems


# ----------------------------------------------------------------- wheel check
def wheel_members(whl: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(whl) as zf:
        return {i.filename: zf.read(i) for i in zf.infolist()}


def check_wheel(py: Path) -> int:
    """The shipped wheel vs a fresh ``pip wheel .`` and ``python -m build --wheel``."""
    entry = json.loads((OUT / "pyodide-lock.json").read_text())["packages"][PACKAGE]
    shipped = OUT / entry["file_name"]
    rc = 0
    with tempfile.TemporaryDirectory(prefix="pyaccel-wheelcheck-") as tmp:
        fresh = {
            "pip wheel .": build_wheel_to(py, Path(tmp) / "pip", ["-m", "pip", "wheel", str(ROOT), "--no-deps",
                                                                   "--no-build-isolation", "-q", "-w"]),
            "python -m build --wheel": build_wheel_to(py, Path(tmp) / "build", ["-m", "build", "--wheel",
                                                                                 "--no-isolation", str(ROOT), "-o"]),
        }
        ref = wheel_members(shipped)
        for what, whl in fresh.items():
            got = wheel_members(whl)
            diff = sorted(n for n in ref.keys() | got.keys() if ref.get(n) != got.get(n))
            same = sha256(whl) == sha256(shipped)
            log(f"check-wheel: {shipped.name} vs `{what}`: {len(got)} members, "
                f"{'identical' if not diff else f'{len(diff)} differ: {diff[:8]}'}"
                f"{', byte-identical file' if same else ', file bytes differ'}")
            rc |= bool(diff)
    return rc


def build_wheel_to(py: Path, dest: Path, args: list[str]) -> Path:
    dest.mkdir(parents=True)
    run([str(py), *args, str(dest)], " ".join(args[:3]))
    (whl,) = dest.glob(f"{PACKAGE}-*.whl")
    return whl


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only verify web/public/pyodide")
    ap.add_argument("--jupyterlite", action="store_true", help="also build web/dist-jupyterlite/")
    ap.add_argument("--check-wheel", action="store_true",
                    help="compare the shipped wheel with a fresh `pip wheel .` / `python -m build`")
    args = ap.parse_args()
    if args.check:
        return check()
    t0 = time.perf_counter()
    py = ensure_venv()
    if args.check_wheel:
        return check_wheel(py)
    if not (PYODIDE_NPM / "pyodide-lock.json").exists():
        die(f"{PYODIDE_NPM} is missing: run `npm ci` at the repository root first")
    py_version = json.loads((PYODIDE_NPM / "pyodide-lock.json").read_text())["info"]["python"]
    whl = build_wheel(py)
    extra = fetch_wheels(py, SITE_WHEELS_LOCK, py_version)
    copy_runtime()
    copy_pyscript()
    write_lock(py, whl, extra)
    rc = check()
    log(f"done in {time.perf_counter() - t0:.1f}s")
    if rc == 0 and args.jupyterlite:
        rc = build_jupyterlite(py)
    return rc


if __name__ == "__main__":
    sys.exit(main())
