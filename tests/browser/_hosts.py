"""Helpers for the host tests (module worker, PyScript, JupyterLite, no WebGPU).

Each host boots ONCE per test module (a module-scoped fixture in its test file); these helpers
open a page in a fresh browser context whose requests may only reach this machine's server
(anything else is aborted and recorded, so a host that tries the network fails loudly), and
serve extra folders (the JupyterLite site) from 127.0.0.1.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import socketserver
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
LITE_DIST = ROOT / "web" / "dist-jupyterlite"
PUBLIC_PYODIDE = ROOT / "web" / "public" / "pyodide"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".js": "application/javascript",
        ".mjs": "application/javascript",
        ".wasm": "application/wasm",
        ".json": "application/json",
        ".zip": "application/zip",
        ".whl": "application/zip",
        ".ipynb": "application/json",
        "": "application/octet-stream",
    }

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format, *args):  # noqa: A002 - http.server API
        line = format % args
        if '" 404' in line or '" 500' in line:
            self.server.misses.append(line)


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


@contextmanager
def serve(directory: Path):
    """``(url, misses)``: ``directory`` served on 127.0.0.1 (misses: 404/500 request lines)."""
    server = _Server(("127.0.0.1", 0), functools.partial(_Handler, directory=str(directory)))
    server.misses = []
    thread = threading.Thread(target=server.serve_forever, name=f"serve-{directory.name}", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", server.misses
    finally:
        server.shutdown()
        server.server_close()


class HostPage:
    """A page in its own context: console lines, page errors and refused off-machine requests."""

    def __init__(self, browser, origin: str, name: str):
        self.name = name
        self.console: list[str] = []
        self.errors: list[str] = []
        self.offsite: list[str] = []
        self.context = browser.new_context()
        self.context.route(lambda url: not url.startswith(origin), self._refuse)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: self.console.append(f"[{m.type}] {m.text}"))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("crash", lambda *_: self.errors.append("page crashed"))
        self.boot_seconds = float("nan")

    def _refuse(self, route) -> None:
        self.offsite.append(route.request.url)
        route.abort()

    def log(self) -> str:
        lines = [f"--- {self.name} console ---", *self.console[-80:]]
        if self.errors:
            lines += [f"--- {self.name} page errors ---", *self.errors]
        if self.offsite:
            lines += [f"--- {self.name} refused off-machine requests ---", *self.offsite]
        return "\n".join(lines)

    def fail(self, what: str) -> None:
        pytest.fail(f"{self.name}: {what}\n{self.log()}", pytrace=False)

    def evaluate(self, js: str, arg: Any = None) -> Any:
        return self.page.evaluate(js, arg)

    def close(self) -> None:
        self.context.close()


def _wasm_build():
    """wasm/build.py as a module (its lite_stamp() says what the site must be built from)."""
    spec = importlib.util.spec_from_file_location("_pyaccel_wasm_build", ROOT / "wasm" / "build.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ensure_jupyterlite() -> Path:
    """web/dist-jupyterlite, built (``wasm/build.py --jupyterlite``) when missing or stale."""
    build = _wasm_build()
    marker = LITE_DIST / "jupyter-lite.json"
    try:
        fresh = build.LITE_STAMP.read_text().strip() == build.lite_stamp()
    except FileNotFoundError:
        fresh = False
    if fresh or (os.environ.get("PYACCEL_BROWSER_NO_REBUILD") and marker.exists()):
        return LITE_DIST
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, str(ROOT / "wasm" / "build.py"), "--jupyterlite"],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0 or not marker.exists():
        msg = (f"the JupyterLite site could not be built (`python wasm/build.py --jupyterlite`, exit "
               f"{proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        if in_ci():
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
    print(f"[browser tests] python wasm/build.py --jupyterlite: {time.perf_counter() - t0:.1f}s",
          file=sys.stderr)
    return LITE_DIST
