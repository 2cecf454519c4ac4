#!/usr/bin/env python3
"""Browser benchmark runner: pyaccel in Pyodide vs plain-JS WebGPU, in headless Chromium.

    python benchmarks/browser/run.py [--quick] [--no-build] [--out PATH] [--headed]

Builds the site unless ``--no-build`` (``python wasm/build.py`` + ``npm run build``; a few
seconds), serves ``web/dist`` on ``http://127.0.0.1:<port>/``, opens ``/bench/index.html``
(``web/public/bench/``) in Chromium with the SwiftShader WebGPU flags, runs
``window.pyaccelBench.run()`` and prints a table; the full results go to
``benchmarks/results/browser.json``.

Needs: Debian ``chromium`` (or ``PYACCEL_CHROMIUM=/path``), the ``playwright`` Python
package (no ``playwright install``), Node/npm with ``npm ci`` done. No pytest.
"""

from __future__ import annotations

import argparse
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

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "web" / "dist"
RESULTS = ROOT / "benchmarks" / "results" / "browser.json"
CHROMIUM = os.environ.get("PYACCEL_CHROMIUM", "/usr/bin/chromium")
# same flags as tests/browser/conftest.py (see shared/PLATFORM.md)
FLAGS = [
    "--no-sandbox", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
    "--enable-unsafe-webgpu", "--enable-features=Vulkan", "--use-vulkan=swiftshader",
    "--use-webgpu-adapter=swiftshader", "--disable-vulkan-surface",
]


def build() -> None:
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("npm not found: install Node.js >= 20, run `npm ci`, or pass --no-build")
    for cmd in ([sys.executable, str(ROOT / "wasm" / "build.py")], [npm, "run", "build"]):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if proc.returncode:
            sys.exit(f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        print(f"[bench] {' '.join(Path(c).name for c in cmd)}: {time.perf_counter() - t0:.1f}s")


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".js": "application/javascript", ".mjs": "application/javascript",
                      ".wasm": "application/wasm", ".json": "application/json",
                      ".py": "text/plain", ".whl": "application/zip", ".zip": "application/zip"}

    def log_message(self, format, *args):  # noqa: A002 - quiet
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def serve(directory: Path) -> tuple[Server, str]:
    srv = Server(("127.0.0.1", 0), functools.partial(Handler, directory=str(directory)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}/"


def table(res: dict) -> str:
    lines = [f"adapter: {res['adapter']}  pyodide {res['pyodide']}  pyaccel {res['pyaccel']['version']}",
             f"chained: N dispatches then one read, median of {res['repeat']}",
             f"{'n':>8} {'N':>5} {'plain JS':>10} {'Kernel':>10} {'ratio':>6} {'workgroups=':>12} "
             f"{'dispatch':>9} {'record':>8} {'Array':>8} {'unfused':>8} {'jit':>8}  (µs per op)"]

    def f(v: float | None) -> str:
        return "—" if v is None else f"{v:.1f}"

    for r in res["chained"]:
        lines.append(f"{r['n']:>8} {r['dispatches']:>5} {r['js_us_per_op']:>10.1f} {r['kernel_us_per_op']:>10.1f} "
                     f"{r['ratio_kernel']:>6.2f} {r['kernel_wg_us_per_op']:>12.1f} "
                     f"{r['dispatch_us_per_op']:>9.1f} {r['kernel_record_us_per_op']:>8.1f} "
                     f"{f(r.get('array_us_per_op')):>8} {f(r.get('array_eager_us_per_op')):>8} "
                     f"{f(r.get('array_jit_us_per_op')):>8}")
    lines.append("Array: y = y + x chained with fusion on (the default; dispatches "
                 + ", ".join(str(r.get("array_dispatches", "?")) for r in res["chained"])
                 + "), unfused: pyaccel.fusion(False) (dispatches "
                 + ", ".join(str(r.get("array_eager_dispatches", "?")) for r in res["chained"])
                 + "), jit: the chain as one pyaccel.jit function")
    lines.append(f"{'bytes':>10} {'JS up':>8} {'py up':>8} {'JS down':>8} {'py down':>8} {'py into':>8}  (GB/s)")
    for u, d in zip(res["upload"], res["download"], strict=True):
        lines.append(f"{u['bytes']:>10} {u['js_gbps']:>8.3f} {u['pyaccel_gbps']:>8.3f} "
                     f"{d['js_gbps']:>8.3f} {d['pyaccel_gbps']:>8.3f} {d['pyaccel_into_gbps']:>8.3f}")
    lines.append(f"JS calls per op (ffi_calls): {json.dumps(res['ffi'])}")
    for m in res.get("matmul", []):
        lines.append(f"matmul float32 {m['n']}^2 (ms, x the pre-issue-21 `tiled` kernel; auto chose "
                     f"{m['chosen']}): " + ", ".join(
                         f"{k} {v:.0f} (x{m['ratio_to_tiled'].get(k, float('nan')):.2f}, "
                         f"{m['gflops'][k]:.2f} GFLOP/s)" for k, v in m["ms"].items()))
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer sizes and repeats")
    ap.add_argument("--no-build", action="store_true", help="use web/dist as it is")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--headed", action="store_true", help="show the browser window")
    ap.add_argument("--matmul", type=int, nargs="*", default=None,
                    help="matmul sizes (default 512 1024; 256 512 with --quick; none: --matmul)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds for the whole run")
    args = ap.parse_args()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sys.exit("pip install playwright (no `playwright install` needed; Debian chromium is used)")
    if not Path(CHROMIUM).exists():
        sys.exit(f"Chromium not found at {CHROMIUM}: apt-get install -y chromium or set PYACCEL_CHROMIUM")
    if not args.no_build:
        build()
    if not (DIST / "bench" / "index.html").exists():
        sys.exit(f"{DIST / 'bench' / 'index.html'} is missing: run `python wasm/build.py && npm run build`")
    srv, url = serve(DIST)
    console: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=not args.headed, args=FLAGS)
        page = browser.new_page()
        page.on("console", lambda m: console.append(f"[{m.type}] {m.text}"))
        page.set_default_timeout(args.timeout * 1000)
        t0 = time.perf_counter()
        page.goto(url + "bench/index.html", wait_until="load")
        page.wait_for_function("() => window.pyaccelBenchReady !== undefined")
        page.evaluate("async () => await window.pyaccelBenchReady")
        print(f"[bench] page ready in {time.perf_counter() - t0:.1f}s; running…", flush=True)
        try:
            res = page.evaluate("async ([quick, matmul]) => await window.pyaccelBench.run({quick, matmul})",
                                [args.quick, args.matmul])
        except Exception as e:
            print("\n".join(console[-40:]), file=sys.stderr)
            sys.exit(f"benchmark failed: {e}")
        res["chromium"] = browser.version
        res["wall_s"] = round(time.perf_counter() - t0, 1)
        browser.close()
    srv.shutdown()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=2) + "\n")
    print(table(res))
    print(f"[bench] wrote {args.out} ({res['wall_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
