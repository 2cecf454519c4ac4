#!/usr/bin/env python3
"""Build the Pyodide distribution of pyaccel, offline after the first run.

Run from anywhere with any Python >= 3.9 (normally the project's 3.11 venv):

    python wasm/build.py            # wheel + runtime files + lock file
    python wasm/build.py --check    # only verify web/public/pyodide is complete

What it does (each step prints one line):

1. Tool venv ``.venv-wasm/`` (Python 3.12, because pyodide-build needs >= 3.12)
   with the pinned ``pyodide-build``, ``pkginfo`` and ``hatchling``.
   Created once; later runs only check the installed versions.
2. Builds the pure ``py3-none-any`` wheel of the repo into ``wasm/dist/``
   with that venv's pip (``--no-build-isolation``, so no index is contacted).
   Rebuilt on every run (it is small and fast).
3. Copies the Pyodide runtime files from ``node_modules/pyodide/`` (the npm
   package pinned in package.json; run ``npm ci`` first) into
   ``web/public/pyodide/``, which Vite copies to ``web/dist/pyodide/``.
4. Writes ``web/public/pyodide/pyodide-lock.json`` = Pyodide's lock file plus
   the pyaccel wheel (``pyodide lockfile add-wheels``), then checks that the
   pyaccel entry does not depend on numpy/wgpu (they carry
   ``sys_platform != 'emscripten'`` markers) and that its sha256 matches.

Afterwards a page can ``loadPyodide({indexURL: "<base>/pyodide/"})`` and
``await pyodide.loadPackage("pyaccel")`` from its own server, offline.

Environment overrides: ``PYACCEL_PYTHON312`` (path to a python3.12 binary).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv-wasm"
WHEEL_DIR = ROOT / "wasm" / "dist"
PYODIDE_NPM = ROOT / "node_modules" / "pyodide"
OUT = ROOT / "web" / "public" / "pyodide"

# Pinned tool versions (pyodide-build 0.39.2 matches pyodide 314.x lock files).
TOOLS = {"pyodide-build": "0.39.2", "pkginfo": "2.0", "hatchling": "1.33.0"}
# The whole tool venv is pinned by wasm/requirements.lock (pip freeze of it).
LOCK = ROOT / "wasm" / "requirements.lock"

# Files of the npm package that the browser fetches (pyodide.mjs/.js are also
# bundled by Vite into the page; the copies here serve plain <script> users).
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


def log(msg: str) -> None:
    print(f"[wasm/build] {msg}", flush=True)


def die(msg: str) -> None:
    print(f"[wasm/build] ERROR: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)
    except subprocess.CalledProcessError as e:
        die(
            f"command failed ({e.returncode}): {' '.join(map(str, cmd))}\n"
            f"--- stdout ---\n{e.stdout}\n--- stderr ---\n{e.stderr}"
        )
        raise  # unreachable


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def venv_bin(name: str) -> Path:
    return VENV / ("Scripts" if os.name == "nt" else "bin") / name


# ---------------------------------------------------------------- step 1: venv
def find_python312() -> str:
    cands: list[str] = []
    if os.environ.get("PYACCEL_PYTHON312"):
        cands.append(os.environ["PYACCEL_PYTHON312"])
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    cands += sorted(glob.glob(str(pyenv_root / "versions" / "3.12*" / "bin" / "python3.12")), reverse=True)
    for name in ("python3.12", "python3.13"):
        p = shutil.which(name)
        if p:
            cands.append(p)
    for c in cands:
        env = dict(os.environ)
        env.setdefault("PYENV_VERSION", "3.12.1")  # for pyenv shims
        try:
            out = subprocess.run(
                [c, "-c", "import sys; print(sys.version_info >= (3, 12))"],
                capture_output=True, text=True, env=env, timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0 and out.stdout.strip() == "True":
            return c
    die(
        "no Python >= 3.12 found (pyodide-build needs it). Tried: "
        + (", ".join(cands) or "nothing")
        + ". Install one (e.g. `pyenv install 3.12`) or set PYACCEL_PYTHON312=/path/to/python3.12."
    )
    raise SystemExit(1)


def installed_versions() -> dict[str, str | None]:
    code = (
        "import json, importlib.metadata as m\n"
        "r = {}\n"
        f"for n in {list(TOOLS)!r}:\n"
        "    try: r[n] = m.version(n)\n"
        "    except m.PackageNotFoundError: r[n] = None\n"
        "print(json.dumps(r))\n"
    )
    out = subprocess.run([str(venv_python()), "-c", code], capture_output=True, text=True)
    if out.returncode != 0:
        return {n: None for n in TOOLS}
    return json.loads(out.stdout)


def ensure_venv() -> None:
    if venv_python().exists():
        have = installed_versions()
    else:
        py = find_python312()
        log(f"creating {VENV.relative_to(ROOT)} with {py}")
        env = dict(os.environ)
        env.setdefault("PYENV_VERSION", "3.12.1")
        run([py, "-m", "venv", str(VENV)], env=env)
        have = {n: None for n in TOOLS}
    missing = [
        f"{n}=={v}" if v else n
        for n, v in TOOLS.items()
        if have.get(n) is None or (v is not None and have[n] != v)
    ]
    if missing:
        log(f"installing into {VENV.relative_to(ROOT)}: {' '.join(missing)}")
        run([str(venv_python()), "-m", "pip", "install", "--disable-pip-version-check", "-q",
             "-r", str(LOCK), *missing])
        have = installed_versions()
    log(
        f"tool venv {VENV.relative_to(ROOT)} ok: "
        + ", ".join(f"{n} {have.get(n)}" for n in TOOLS)
    )


# --------------------------------------------------------------- step 2: wheel
def build_wheel() -> Path:
    WHEEL_DIR.mkdir(parents=True, exist_ok=True)
    for old in WHEEL_DIR.glob("pyaccel-*.whl"):
        old.unlink()
    src = ROOT
    tmp = None
    # hatchling refuses to build when the readme named in pyproject is absent;
    # build from a staged copy with a placeholder so the wasm build never
    # depends on documentation being present.
    if not (ROOT / "README.md").exists():
        tmp = tempfile.mkdtemp(prefix="pyaccel-wheel-")
        src = Path(tmp)
        shutil.copy2(ROOT / "pyproject.toml", src / "pyproject.toml")
        shutil.copytree(ROOT / "pyaccel", src / "pyaccel",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for extra in ("LICENSE", "LICENSE.txt", "LICENSE.md"):
            if (ROOT / extra).exists():
                shutil.copy2(ROOT / extra, src / extra)
        (src / "README.md").write_text("# pyaccel\n")
        log("README.md missing: building the wheel from a staged copy with a placeholder readme")
    try:
        run(
            [str(venv_python()), "-m", "pip", "wheel", "--disable-pip-version-check",
             "--no-deps", "--no-build-isolation", "--no-index", "-q",
             "-w", str(WHEEL_DIR), str(src)],
        )
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    wheels = sorted(WHEEL_DIR.glob("pyaccel-*-py3-none-any.whl"))
    if len(wheels) != 1:
        die(f"expected exactly one pure pyaccel wheel in {WHEEL_DIR}, found {[w.name for w in wheels]}")
    whl = wheels[0]
    log(f"built {whl.relative_to(ROOT)} ({whl.stat().st_size} bytes)")
    return whl


# ----------------------------------------------------- step 3: runtime files
def same_file(a: Path, b: Path) -> bool:
    if not b.exists():
        return False
    sa, sb = a.stat(), b.stat()
    return sa.st_size == sb.st_size and int(sa.st_mtime) == int(sb.st_mtime)


def copy_runtime() -> None:
    if not (PYODIDE_NPM / "pyodide.asm.wasm").exists():
        die(f"{PYODIDE_NPM.relative_to(ROOT)} is missing: run `npm ci` at the repo root first")
    ver = json.loads((PYODIDE_NPM / "package.json").read_text())["version"]
    if ver != PYODIDE_EXPECTED_VERSION:
        log(f"warning: node_modules/pyodide is {ver}, expected {PYODIDE_EXPECTED_VERSION}")
    OUT.mkdir(parents=True, exist_ok=True)
    copied = skipped = 0
    for name in RUNTIME_FILES:
        src = PYODIDE_NPM / name
        if not src.exists():
            die(f"runtime file missing from the npm package: {src}")
        dst = OUT / name
        if same_file(src, dst):
            skipped += 1
            continue
        shutil.copy2(src, dst)
        copied += 1
    log(f"pyodide {ver} runtime -> {OUT.relative_to(ROOT)}/ ({copied} copied, {skipped} up to date)")


# ------------------------------------------------------------ step 4: lockfile
def sha256(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def write_lock(whl: Path) -> None:
    for old in OUT.glob("pyaccel-*.whl"):
        old.unlink()
    dst_whl = OUT / whl.name
    shutil.copy2(whl, dst_whl)
    lock = OUT / "pyodide-lock.json"
    run(
        [str(venv_bin("pyodide")), "lockfile", "add-wheels",
         "--input", str(PYODIDE_NPM / "pyodide-lock.json"),
         "--output", str(lock),
         "--base-path", str(OUT),
         str(dst_whl)],
        cwd=str(OUT),
    )
    data = json.loads(lock.read_text())
    entry = data["packages"].get("pyaccel")
    if entry is None:
        die(f"pyodide lockfile add-wheels did not add pyaccel to {lock}")
    fixed = []
    deps = entry.get("depends", [])
    bad = [d for d in deps if d.lower() in NATIVE_ONLY_DEPS]
    if bad:
        entry["depends"] = [d for d in deps if d.lower() not in NATIVE_ONLY_DEPS]
        fixed.append(f"dropped native-only depends {bad}")
    if entry.get("file_name") != dst_whl.name:
        fixed.append(f"file_name {entry.get('file_name')!r} -> {dst_whl.name!r}")
        entry["file_name"] = dst_whl.name
    digest = sha256(dst_whl)
    if entry.get("sha256") != digest:
        fixed.append("sha256 refreshed")
        entry["sha256"] = digest
    if fixed:
        lock.write_text(json.dumps(data, indent=2, sort_keys=True))
        log("fixed lock entry: " + "; ".join(fixed))
    log(
        f"lock {lock.relative_to(ROOT)}: pyaccel {entry['version']} "
        f"file={entry['file_name']} depends={entry['depends']} "
        f"({len(data['packages'])} packages, python {data['info']['python']})"
    )


def check() -> int:
    problems = []
    for name in RUNTIME_FILES + ["pyodide-lock.json"]:
        if not (OUT / name).exists():
            problems.append(f"missing {OUT / name}")
    if not problems:
        entry = json.loads((OUT / "pyodide-lock.json").read_text())["packages"].get("pyaccel")
        if not entry:
            problems.append("pyaccel not in the lock file")
        elif not (OUT / entry["file_name"]).exists():
            problems.append(f"missing wheel {entry['file_name']}")
        elif sha256(OUT / entry["file_name"]) != entry["sha256"]:
            problems.append("wheel sha256 does not match the lock file")
        elif set(map(str.lower, entry["depends"])) & NATIVE_ONLY_DEPS:
            problems.append(f"pyaccel depends on native-only packages: {entry['depends']}")
    for p in problems:
        log("check: " + p)
    log("check: ok" if not problems else "check: FAILED")
    return 1 if problems else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only verify web/public/pyodide")
    args = ap.parse_args()
    if args.check:
        return check()
    t0 = time.perf_counter()
    ensure_venv()
    whl = build_wheel()
    copy_runtime()
    write_lock(whl)
    rc = check()
    log(f"done in {time.perf_counter() - t0:.1f}s; next: `npm run build` (or `npm run dev`)")
    return rc


if __name__ == "__main__":
    sys.exit(main())
