"""PyScript (@pyscript/core from npm) with its default ``packages = ["pyaccel"]``, offline.

The page is exactly the PyScript page of docs/browser.md (section 2c), served next to
web/dist/pyodide/ and web/dist/pyscript/: one ``<script type="py">`` on the main thread (sync
API) and one ``<script type="py" worker>`` (async API), both installing pyaccel through
micropip from the local lock. It boots once for the module (two interpreters in one page
load); each script computes on fresh random data and the page shows inputs and outputs as
JSON, which are compared with NumPy here.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest
from _hosts import HostPage

np = pytest.importorskip("numpy")
pytestmark = pytest.mark.xdist_group("host-pyscript")  # one boot per host under --dist loadgroup

DOC = Path(__file__).resolve().parents[2] / "docs" / "browser.md"
BOOT_TIMEOUT_MS = 180_000


def pyscript_page() -> str:
    section = re.search(r"\n## 2c\. .*?(?=\n## )", DOC.read_text(), re.S)
    assert section, "docs/browser.md has no section 2c (PyScript)"
    blocks = re.findall(r"```html\n(.*?)```", section.group(0), re.S)
    assert len(blocks) == 1, "section 2c should hold exactly one ```html block (the PyScript page)"
    return blocks[0]


@pytest.fixture(scope="module")
def pyscript_run(chromium_webgpu, site_url, browser_site):
    assert (browser_site / "pyscript" / "core.js").is_file(), "web/dist/pyscript/ is missing"
    name = "_docs_pyscript_page.html"
    (browser_site / name).write_text(pyscript_page())
    hp = HostPage(chromium_webgpu, site_url, "PyScript page")
    t0 = time.perf_counter()
    try:
        hp.page.goto(site_url + name, wait_until="load")
        outs = {}
        for which in ("main-out", "worker-out"):
            try:
                hp.page.wait_for_function(
                    f"() => document.getElementById('{which}').textContent.startsWith('{{')",
                    timeout=BOOT_TIMEOUT_MS)
            except Exception as e:  # the script never ran: PyScript or the install failed
                hp.fail(f"#{which} never got its result ({type(e).__name__}); it shows "
                        f"{hp.page.inner_text('#' + which)!r}")
            outs[which] = json.loads(hp.page.inner_text("#" + which))
            outs[which + "-s"] = time.perf_counter() - t0
        hp.boot_seconds = time.perf_counter() - t0
        print(f"[browser tests] PyScript page: main thread ready in {outs['main-out-s']:.1f}s, "
              f"worker in {outs['worker-out-s']:.1f}s", file=sys.stderr)
        yield hp, outs
    finally:
        hp.close()
        (browser_site / name).unlink(missing_ok=True)


def _check(out: dict) -> None:
    x = np.asarray(out["x"], dtype=np.float32)
    assert x.size == 1000 and np.unique(x).size > 900  # fresh random data, not constants
    np.testing.assert_allclose(np.asarray(out["y"], dtype=np.float32), x * np.float32(2) + np.float32(1),
                               rtol=1e-6, atol=1e-7)


def test_pyscript_main_thread_with_packages_pyaccel(pyscript_run):
    hp, outs = pyscript_run
    _check(outs["main-out"])


def test_pyscript_worker_with_packages_pyaccel(pyscript_run):
    hp, outs = pyscript_run
    _check(outs["worker-out"])


def test_pyscript_installed_offline_through_micropip(pyscript_run):
    hp, _ = pyscript_run
    assert hp.offsite == [], hp.log()  # nothing left this machine
    text = "\n".join(hp.console)
    assert text.count("Loaded micropip") == 2 and text.count("Loaded pyaccel") == 2, hp.log()
    assert "integrity" not in text and "ModuleNotFoundError" not in text, hp.log()
    assert hp.errors == [], hp.log()
