#!/usr/bin/env python3
"""Build the Pyodide distribution of pyaccel: standard library only, offline.

Run from anywhere with Python >= 3.11 (no virtualenv and no package needed):

    python wasm/build.py            # wheel + runtime files + lock file
    python wasm/build.py --check    # only verify web/public/pyodide is complete

``npm run build`` / ``npm run dev`` run it first (``wasm/prebuild.mjs`` finds the
Python), so ``npm ci && npm run build`` alone gives the complete site.

What it does (each step prints one line):

1. Builds the pure ``py3-none-any`` wheel of ``pyaccel/`` into ``wasm/dist/``
   from ``pyproject.toml`` (name, version, dependencies, entry points), with
   ``zipfile`` and a RECORD of sha256 hashes: the same files and metadata as
   ``pip wheel .`` (hatchling), reproducible (fixed timestamps, sorted).
2. Copies the Pyodide runtime files from ``node_modules/pyodide/`` (the npm
   package pinned in package.json; ``npm ci`` first) into
   ``web/public/pyodide/``, which Vite copies to ``web/dist/pyodide/``.
3. Writes ``web/public/pyodide/pyodide-lock.json`` = Pyodide's lock file plus
   a ``pyaccel`` entry (the fields ``pyodide lockfile add-wheels`` writes for a
   pure wheel), without the native-only dependencies (numpy and wgpu carry
   ``sys_platform != 'emscripten'`` markers), then checks it.

Afterwards a page can ``loadPyodide({indexURL: "<base>/pyodide/"})`` and
``await pyodide.loadPackage("pyaccel")`` from its own server, offline.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re
import shutil
import sys
import time
import zipfile
from pathlib import Path

if sys.version_info < (3, 11):  # noqa: UP036 - tomllib; npm may find an older python
    sys.exit(f"[wasm/build] ERROR: Python >= 3.11 is needed (this is {sys.version.split()[0]}); "
             "install python3.11 or newer, or set PYTHON=/path/to/python3.11 for npm")

import tomllib  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
WHEEL_DIR = ROOT / "wasm" / "dist"
PYODIDE_NPM = ROOT / "node_modules" / "pyodide"
OUT = ROOT / "web" / "public" / "pyodide"
PACKAGE = "pyaccel"

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
ZIP_DATE = (2020, 2, 2, 0, 0, 0)  # fixed timestamp: the same sources give the same wheel


def log(msg: str) -> None:
    print(f"[wasm/build] {msg}", flush=True)


def die(msg: str) -> None:
    print(f"[wasm/build] ERROR: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


# --------------------------------------------------------------- step 1: wheel
def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _metadata(project: dict, readme: str | None) -> str:
    lines = ["Metadata-Version: 2.4", f"Name: {project['name']}", f"Version: {project['version']}"]
    if project.get("description"):
        lines.append(f"Summary: {project['description']}")
    if isinstance(project.get("license"), str):
        lines.append(f"License-Expression: {project['license']}")
    if project.get("requires-python"):
        lines.append(f"Requires-Python: {project['requires-python']}")
    for dep in project.get("dependencies", []):
        lines.append(f"Requires-Dist: {dep}")
    for extra, deps in sorted(project.get("optional-dependencies", {}).items()):
        lines.append(f"Provides-Extra: {extra}")
        for dep in sorted(deps):
            req, _, marker = dep.partition(";")
            cond = f"({marker.strip()}) and extra == '{extra}'" if marker else f"extra == '{extra}'"
            lines.append(f"Requires-Dist: {req.strip()}; {cond}")
    text = "\n".join(lines) + "\n"
    if readme is not None:
        text += "Description-Content-Type: text/markdown\n\n" + readme
    return text


def _entry_points(project: dict) -> str:
    groups: dict[str, dict[str, str]] = {}
    if project.get("scripts"):
        groups["console_scripts"] = project["scripts"]
    groups.update(project.get("entry-points", {}))
    return "".join(
        f"[{g}]\n" + "".join(f"{k} = {v}\n" for k, v in sorted(eps.items())) + "\n"
        for g, eps in groups.items()
    )


def package_files() -> list[Path]:
    """The files of ``pyaccel/`` that go into the wheel (sources and package data)."""
    return sorted(
        p for p in (ROOT / PACKAGE).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo")
    )


def build_wheel() -> Path:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    name, version = project["name"], project["version"]
    readme_path = ROOT / str(project.get("readme", "README.md"))
    readme = readme_path.read_text() if readme_path.exists() else None
    dist_info = f"{name}-{version}.dist-info"
    files: list[tuple[str, bytes]] = [
        (p.relative_to(ROOT).as_posix(), p.read_bytes()) for p in package_files()
    ]
    if not files:
        die(f"no files under {ROOT / PACKAGE}")
    files += [
        (f"{dist_info}/METADATA", _metadata(project, readme).encode()),
        (f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: pyaccel wasm/build.py\n"
                               b"Root-Is-Purelib: true\nTag: py3-none-any\n"),
        (f"{dist_info}/entry_points.txt", _entry_points(project).encode()),
    ]
    record = "".join(f"{n},{_record_hash(d)},{len(d)}\n" for n, d in files)
    record += f"{dist_info}/RECORD,,\n"
    files.append((f"{dist_info}/RECORD", record.encode()))

    WHEEL_DIR.mkdir(parents=True, exist_ok=True)
    for old in WHEEL_DIR.glob(f"{name}-*.whl"):
        old.unlink()
    whl = WHEEL_DIR / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for arcname, data in files:
            info = zipfile.ZipInfo(arcname, date_time=ZIP_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    log(f"built {whl.relative_to(ROOT)} ({whl.stat().st_size} bytes, {len(files)} files)")
    return whl


# ----------------------------------------------------- step 2: runtime files
def same_file(a: Path, b: Path) -> bool:
    if not b.exists():
        return False
    sa, sb = a.stat(), b.stat()
    return sa.st_size == sb.st_size and int(sa.st_mtime) == int(sb.st_mtime)


def copy_runtime() -> None:
    if not (PYODIDE_NPM / "pyodide.asm.wasm").exists():
        die(f"{PYODIDE_NPM} is missing: run `npm ci` at the repository root first")
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


# ------------------------------------------------------------ step 3: lockfile
def sha256(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


_MARKER_NATIVE_ONLY = re.compile(r"""sys_platform\s*!=\s*['"]emscripten['"]""")


def pyodide_depends(requires: list[str]) -> list[str]:
    """Runtime dependencies inside Pyodide: Requires-Dist without extras and without
    the ``sys_platform != 'emscripten'`` ones (any other marker is refused: unsupported)."""
    out = []
    for dep in requires:
        req, _, marker = dep.partition(";")
        name = re.match(r"[A-Za-z0-9._-]+", req.strip()).group(0).lower()
        if marker.strip():
            if "extra" in marker or _MARKER_NATIVE_ONLY.search(marker):
                continue
            die(f"wasm/build.py cannot evaluate the marker of dependency {dep!r}; "
                "extend pyodide_depends()")
        out.append(name)
    return sorted(out)


def lock_entry(whl: Path) -> dict:
    """The lock entry ``pyodide lockfile add-wheels`` writes for this pure wheel."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    with zipfile.ZipFile(whl) as zf:
        tops = sorted({n.split("/", 1)[0] for n in zf.namelist()
                       if "/" in n and not n.split("/", 1)[0].endswith(".dist-info")})
    return {
        "name": project["name"],
        "version": project["version"],
        "file_name": whl.name,
        "install_dir": "site",
        "sha256": sha256(whl),
        "package_type": "package",
        "imports": tops,
        "depends": pyodide_depends(project.get("dependencies", [])),
        "unvendored_tests": False,
        "tool": {},
    }


def write_lock(whl: Path) -> None:
    for old in OUT.glob(f"{PACKAGE}-*.whl"):
        old.unlink()
    dst_whl = OUT / whl.name
    shutil.copy2(whl, dst_whl)
    data = json.loads((PYODIDE_NPM / "pyodide-lock.json").read_text())
    entry = lock_entry(dst_whl)
    data["packages"][PACKAGE] = entry
    lock = OUT / "pyodide-lock.json"
    tmp = lock.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True))
    tmp.replace(lock)
    log(
        f"lock {lock.relative_to(ROOT)}: {PACKAGE} {entry['version']} "
        f"file={entry['file_name']} depends={entry['depends']} "
        f"({len(data['packages'])} packages, python {data['info']['python']})"
    )


def check() -> int:
    problems = []
    for name in RUNTIME_FILES + ["pyodide-lock.json"]:
        if not (OUT / name).exists():
            problems.append(f"missing {OUT / name}")
    if not problems:
        entry = json.loads((OUT / "pyodide-lock.json").read_text())["packages"].get(PACKAGE)
        if not entry:
            problems.append(f"{PACKAGE} not in the lock file")
        elif not (OUT / entry["file_name"]).exists():
            problems.append(f"missing wheel {entry['file_name']}")
        elif sha256(OUT / entry["file_name"]) != entry["sha256"]:
            problems.append("wheel sha256 does not match the lock file")
        elif set(map(str.lower, entry["depends"])) & NATIVE_ONLY_DEPS:
            problems.append(f"{PACKAGE} depends on native-only packages: {entry['depends']}")
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
    whl = build_wheel()
    copy_runtime()
    write_lock(whl)
    rc = check()
    log(f"done in {time.perf_counter() - t0:.1f}s")
    return rc


if __name__ == "__main__":
    sys.exit(main())
