"""Browser test harness: the built playground (web/dist) in headless Chromium.

Every test in tests/browser gets ``pytest.mark.browser`` (deselect with
``-m "not browser"``).

Fixtures (session-scoped unless noted):

``browser_site`` -> Path
    web/dist, built first when missing or older than its sources
    (``python wasm/build.py`` when pyaccel/ or the Pyodide package changed,
    then ``npm run build``). Set PYACCEL_BROWSER_NO_REBUILD=1 to use web/dist
    as it is.
``site_url`` -> str
    ``http://127.0.0.1:<port>/`` serving web/dist from a thread (.mjs and .wasm
    with their proper MIME types). 127.0.0.1 is a secure context, so WebGPU works.
``chromium_webgpu`` / ``chromium_nogpu`` -> playwright Browser
    /usr/bin/chromium (or $PYACCEL_CHROMIUM) with / without the SwiftShader
    WebGPU flags.
``pyodide_page`` -> BrowserPage
    the playground opened once in ``chromium_webgpu``; ``window.pyaccelReady``
    awaited (Pyodide booted, pyaccel wheel loaded).
``nogpu_page`` -> BrowserPage
    the same in ``chromium_nogpu`` (WebGPU unavailable there).
``run_py`` / ``run_py_bytes`` (function scope)
    ``pyodide_page.run_py`` / ``pyodide_page.run_py_bytes``.

BrowserPage:
    run_py(code, *, timeout=60.0, shared=False) -> object
        runs ``code`` with ``pyodide.runPythonAsync`` (so JSPI ``run_sync`` works)
        in a fresh ``__main__`` namespace (``shared=True``: Pyodide's globals)
        and returns the value of its last expression converted to JSON-able
        data (tuples/sets -> lists, dict keys -> str, JS null -> None,
        bytes -> bytes, non-finite floats kept, JS proxies via to_py(),
        anything else -> repr()). Python errors raise PyodideError.
    run_py_bytes(code, *, timeout=60.0, shared=False) -> bytes
        same, the last expression must be bytes/bytearray/memoryview (any
        format; raw bytes are taken) or a JS typed array/ArrayBuffer.
    webgpu() -> dict       what the page's JS saw: window.pyaccelWebGPU
    evaluate(js, arg=None) page.evaluate passthrough
    reload()               reopen the page and boot again (after a crash)
    page, url, console (list[str]), errors (list[str]), boot_seconds (float)

When Chromium, Playwright, npm/node_modules or the built site are missing the
fixtures skip with the reason, except with CI=true, where they fail.
Console lines and page errors are attached to the report of a failing test.
"""

from __future__ import annotations

import base64
import functools
import http.server
import json
import os
import shutil
import socketserver
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WEB = ROOT / "web"
DIST = WEB / "dist"
PUBLIC_PYODIDE = WEB / "public" / "pyodide"
CHROMIUM = os.environ.get("PYACCEL_CHROMIUM", "/usr/bin/chromium")
BOOT_TIMEOUT_S = float(os.environ.get("PYACCEL_BROWSER_BOOT_TIMEOUT", "120"))

# Root on a closed network: no sandbox (root), no phoning home.
BASE_FLAGS = [
    "--no-sandbox",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
# Headless WebGPU on SwiftShader (no GPU needed); see shared/PLATFORM.md.
WEBGPU_FLAGS = [
    "--enable-unsafe-webgpu",
    "--enable-features=Vulkan",
    "--use-vulkan=swiftshader",
    "--use-webgpu-adapter=swiftshader",
    # WebGPU <canvas> presentation (the playground's pictures): with --disable-vulkan-surface,
    # headless Chromium 156 never composites the canvas (screenshots show nothing), and without
    # ANGLE on SwiftShader presenting it loses the device ("A valid external Instance reference
    # no longer exists"). These two together composite it, checked 3 of 3 runs each way.
    "--use-angle=swiftshader",
]


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def unavailable(reason: str):
    """Skip locally; fail under CI=true (a CI run must not silently skip)."""
    if in_ci():
        pytest.fail(f"browser tests unavailable under CI: {reason}", pytrace=False)
    pytest.skip(reason)


class PyodideError(Exception):
    """A Python exception raised inside Pyodide; ``.type`` is its class name."""

    def __init__(self, type_: str, message: str):
        super().__init__(f"{type_}: {message}")
        self.type = type_
        self.message = message


# --------------------------------------------------------------------- marks
def pytest_collection_modifyitems(config, items):
    for item in items:
        try:
            p = Path(str(item.fspath)).resolve()
        except Exception:
            continue
        if HERE == p.parent or HERE in p.parents:
            item.add_marker(pytest.mark.browser)


# --------------------------------------------------------------------- build
def _newest(paths) -> float:
    newest = 0.0
    for p in paths:
        try:
            newest = max(newest, p.stat().st_mtime)
        except FileNotFoundError:
            pass
    return newest


def _files(base: Path, exclude: tuple[Path, ...] = ()) -> list[Path]:
    out = []
    if not base.exists():
        return out
    for p in base.rglob("*"):
        if not p.is_file() or "__pycache__" in p.parts or p.suffix == ".pyc":
            continue
        if any(p == e or e in p.parents for e in exclude):
            continue
        out.append(p)
    return out


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except FileNotFoundError:
        return -1.0


def _run_build_step(cmd: list[str], what: str) -> None:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        unavailable(
            f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n"
            f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    print(f"[browser tests] {what}: {dt:.1f}s", file=sys.stderr)


def _ensure_site() -> Path:
    """web/dist, rebuilt first when stale. One xdist worker at a time decides and builds
    (an exclusive lock on web/.dist-build.lock): two workers building at once race, as
    Vite empties web/dist when it starts, so the other one would find no index.html."""
    import fcntl

    with open(WEB / ".dist-build.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            return _ensure_site_locked()
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _ensure_site_locked() -> Path:
    lock = PUBLIC_PYODIDE / "pyodide-lock.json"
    index = DIST / "index.html"
    wheel_sources = _files(ROOT / "pyaccel") + [
        ROOT / "pyproject.toml",
        ROOT / "wasm" / "build.py",
        ROOT / "node_modules" / "pyodide" / "package.json",
    ]
    # (web/dist-jupyterlite is another build's output: setup.sh writes it after web/dist)
    web_sources = _files(WEB, exclude=(DIST, PUBLIC_PYODIDE, WEB / "dist-jupyterlite",
                                       WEB / ".dist-build.lock")) + [
        ROOT / "vite.config.js",
        ROOT / "package.json",
        ROOT / "package-lock.json",
        lock,
    ]
    need_wasm = _mtime(lock) < _newest(wheel_sources)
    need_vite = need_wasm or _mtime(index) < _newest(web_sources)
    if not (need_wasm or need_vite):
        return DIST
    stale = "missing" if not index.exists() else "older than its sources"
    if os.environ.get("PYACCEL_BROWSER_NO_REBUILD") and index.exists():
        print(f"[browser tests] web/dist is {stale}; using it as is", file=sys.stderr)
        return DIST
    if not (ROOT / "node_modules" / "pyodide" / "pyodide.asm.wasm").exists() or not (
        ROOT / "node_modules" / ".bin" / "vite"
    ).exists():
        unavailable(
            f"web/dist is {stale} and node_modules is not installed: run `npm ci` then "
            "`python wasm/build.py` and `npm run build` at the repo root"
        )
    npm = shutil.which("npm")
    if npm is None:
        unavailable(f"web/dist is {stale} and npm is not on PATH (install Node.js >= 20)")
    if need_wasm:
        _run_build_step([sys.executable, str(ROOT / "wasm" / "build.py")], "python wasm/build.py")
    _run_build_step([npm, "run", "build"], "npm run build")
    if not index.exists():
        unavailable(f"`npm run build` did not produce {index}")
    return DIST


@pytest.fixture(scope="session")
def browser_site() -> Path:
    return _ensure_site()


# -------------------------------------------------------------------- server
class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".js": "application/javascript",
        ".mjs": "application/javascript",
        ".wasm": "application/wasm",
        ".json": "application/json",
        ".zip": "application/zip",
        ".whl": "application/zip",
        ".map": "application/json",
        "": "application/octet-stream",
    }
    log_lines: list[str] = []

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format, *args):  # noqa: A002 - http.server API
        _Handler.log_lines.append(format % args)


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


@pytest.fixture(scope="session")
def site_url(browser_site: Path):
    handler = functools.partial(_Handler, directory=str(browser_site))
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="web-dist-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


# ------------------------------------------------------------------- browser
@pytest.fixture(scope="session")
def playwright_instance():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as e:
        unavailable(f"playwright is not installed ({e}): pip install playwright (no `playwright install` needed)")
    if not Path(CHROMIUM).exists():
        unavailable(f"Chromium not found at {CHROMIUM}: apt-get install -y chromium (or set PYACCEL_CHROMIUM)")
    pw = sync_playwright().start()
    try:
        yield pw
    finally:
        pw.stop()


def _launch(pw, args: list[str]):
    try:
        return pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=args)
    except Exception as e:  # playwright.Error: binary broken, missing libs, ...
        unavailable(f"could not launch {CHROMIUM}: {e}")


@pytest.fixture(scope="session")
def chromium_webgpu(playwright_instance):
    browser = _launch(playwright_instance, BASE_FLAGS + WEBGPU_FLAGS)
    yield browser
    browser.close()


@pytest.fixture(scope="session")
def chromium_nogpu(playwright_instance):
    browser = _launch(playwright_instance, BASE_FLAGS)
    yield browser
    browser.close()


# ---------------------------------------------------------------- page helper
_RUN_JS = """
async ([code, shared, mode, timeoutMs]) => {
  const py = window.pyodide;
  if (!py) return {ok: false, type: "HarnessError", message: "window.pyodide is not set"};
  if (!window.__pyaccelTestConv) {
    window.__pyaccelTestConv = py.runPython(`
def _conv():
    import base64, json, math

    try:
        from pyodide.ffi import jsnull
    except ImportError:
        jsnull = None

    def jsonable(x, depth=0):
        if depth > 50:
            return repr(x)
        if x is jsnull:  # JS null (undefined already arrives as None)
            return None
        if x is None or isinstance(x, (bool, int, str)):
            return x
        if isinstance(x, float):
            return x if math.isfinite(x) else {"__float__": repr(x)}
        if isinstance(x, (bytes, bytearray, memoryview)):
            return {"__bytes__": base64.b64encode(bytes(x)).decode()}
        if isinstance(x, (list, tuple)):
            return [jsonable(v, depth + 1) for v in x]
        if isinstance(x, (set, frozenset)):
            return sorted((jsonable(v, depth + 1) for v in x), key=repr)
        if isinstance(x, dict):
            return {str(k): jsonable(v, depth + 1) for k, v in x.items()}
        if type(x).__name__.startswith("Js"):
            try:
                return jsonable(x.to_py(), depth + 1)
            except Exception:
                return repr(x)
        return repr(x)

    def to_bytes(x):
        if isinstance(x, (bytes, bytearray, memoryview)):
            return bytes(x)
        if type(x).__name__.startswith("Js") and hasattr(x, "to_bytes"):
            return x.to_bytes()  # JS typed array / ArrayBuffer
        raise TypeError(f"run_py_bytes: last expression must be bytes-like, got {type(x).__name__}")

    def conv(x, mode):
        if mode == "bytes":
            return base64.b64encode(to_bytes(x)).decode()
        return json.dumps(jsonable(x))

    return conv
_conv()
`);
  }
  const globals = shared ? py.globals : py.toPy({__name__: "__main__"});
  let timer;
  try {
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`timed out after ${timeoutMs} ms`), {type: "TimeoutError"})), timeoutMs);
    });
    const result = await Promise.race([py.runPythonAsync(code, {globals}), timeout]);
    try {
      return {ok: true, value: window.__pyaccelTestConv(result, mode)};
    } finally {
      if (result && typeof result.destroy === "function") result.destroy();
    }
  } catch (err) {
    return {ok: false, type: err?.type ?? err?.name ?? "Error", message: String(err?.message ?? err)};
  } finally {
    clearTimeout(timer);
    if (!shared) globals.destroy();
  }
}
"""


class BrowserPage:
    """The playground page in one browser, booted; see the module docstring."""

    Error = PyodideError  # so tests can `pytest.raises(pyodide_page.Error)` without imports

    def __init__(self, browser, url: str, name: str):
        self.browser = browser
        self.url = url
        self.name = name
        self.console: list[str] = []
        self.errors: list[str] = []
        self.boot_seconds = float("nan")
        self.page = None
        self._open()

    def _open(self) -> None:
        if self.page is not None:
            self.page.close()
        self.page = self.browser.new_page()
        self.page.on("console", lambda m: self.console.append(f"[{m.type}] {m.text}"))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("crash", lambda *_: self.errors.append("page crashed"))
        t0 = time.perf_counter()
        self.page.goto(self.url, wait_until="load")
        try:
            self.page.wait_for_function("() => window.pyaccelReady !== undefined", timeout=30_000)
            res = self.page.evaluate(
                """async (ms) => {
                     const timeout = new Promise((_, rej) => setTimeout(() => rej(new Error(`not ready after ${ms} ms`)), ms));
                     try { await Promise.race([window.pyaccelReady, timeout]); return {ok: true}; }
                     catch (e) { return {ok: false, message: String(e?.message ?? e)}; }
                   }""",
                BOOT_TIMEOUT_S * 1000,
            )
        except Exception as e:  # playwright timeout / crash
            res = {"ok": False, "message": str(e)}
        self.boot_seconds = time.perf_counter() - t0
        if not res["ok"]:
            pytest.fail(
                f"{self.name}: Pyodide/pyaccel did not boot at {self.url}: {res['message']}\n"
                + self.log_text(),
                pytrace=False,
            )

    def reload(self) -> None:
        self._open()

    def log_text(self, since: int = 0, since_err: int = 0) -> str:
        lines = [f"--- {self.name} console ---", *self.console[since:]]
        if self.errors[since_err:]:
            lines += [f"--- {self.name} page errors ---", *self.errors[since_err:]]
        return "\n".join(lines)

    def evaluate(self, js: str, arg: Any = None) -> Any:
        return self.page.evaluate(js, arg)

    def webgpu(self) -> dict:
        return self.page.evaluate("async () => await window.pyaccelWebGPU")

    def _run(self, code: str, mode: str, timeout: float, shared: bool) -> str:
        res = self.page.evaluate(_RUN_JS, [code, shared, mode, int(timeout * 1000)])
        if not res["ok"]:
            raise PyodideError(res.get("type") or "Error", res.get("message") or "")
        return res["value"]

    def run_py(self, code: str, *, timeout: float = 60.0, shared: bool = False) -> Any:
        def hook(d):
            if set(d) == {"__bytes__"}:
                return base64.b64decode(d["__bytes__"])
            if set(d) == {"__float__"}:
                return float(d["__float__"])
            return d

        return json.loads(self._run(code, "json", timeout, shared), object_hook=hook)

    def run_py_bytes(self, code: str, *, timeout: float = 60.0, shared: bool = False) -> bytes:
        return base64.b64decode(self._run(code, "bytes", timeout, shared))


@pytest.fixture(scope="session")
def pyodide_page(chromium_webgpu, site_url) -> BrowserPage:
    bp = BrowserPage(chromium_webgpu, site_url, "webgpu page")
    print(f"[browser tests] webgpu page booted in {bp.boot_seconds:.1f}s", file=sys.stderr)
    yield bp
    bp.page.close()


@pytest.fixture(scope="session")
def nogpu_page(chromium_nogpu, site_url) -> BrowserPage:
    bp = BrowserPage(chromium_nogpu, site_url, "no-WebGPU page")
    print(f"[browser tests] no-WebGPU page booted in {bp.boot_seconds:.1f}s", file=sys.stderr)
    yield bp
    bp.page.close()


@pytest.fixture
def run_py(pyodide_page):
    return pyodide_page.run_py


@pytest.fixture
def run_py_bytes(pyodide_page):
    return pyodide_page.run_py_bytes


# ----------------------------------------------- console output on failures
_PAGE_FIXTURES = ("pyodide_page", "nogpu_page")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    funcargs = getattr(item, "funcargs", {}) or {}
    pages = [funcargs[n] for n in _PAGE_FIXTURES if isinstance(funcargs.get(n), BrowserPage)]
    if not pages:
        return
    marks = item.stash.setdefault(_MARKS, {})
    if call.when == "setup":
        for bp in pages:
            marks[id(bp)] = (len(bp.console), len(bp.errors))
    if report.failed:
        for bp in pages:
            since, since_err = marks.get(id(bp), (0, 0))
            if bp.console[since:] or bp.errors[since_err:]:
                report.sections.append((f"browser log: {bp.name}", bp.log_text(since, since_err)))


_MARKS = pytest.StashKey[dict]()
