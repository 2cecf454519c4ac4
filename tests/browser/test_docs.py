"""The minimal page of docs/browser.md works when copied next to the built pyodide/ folder."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "browser.md"


def snippet() -> str:
    section = re.search(r"\n## 2\. A minimal page.*?(?=\n## )", DOC.read_text(), re.S)
    assert section, "docs/browser.md has no section 2 (the minimal page)"
    blocks = re.findall(r"```html\n(.*?)```", section.group(0), re.S)
    assert len(blocks) == 1, "section 2 of docs/browser.md should hold exactly one ```html block (the minimal page)"
    return blocks[0]


def test_minimal_page_from_the_docs(browser_site, site_url, chromium_webgpu):
    # served next to web/dist/pyodide/, exactly as the docs say
    name = "_docs_minimal_page.html"
    (browser_site / name).write_text(snippet())
    page = chromium_webgpu.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(site_url + name, wait_until="load")
        page.wait_for_function(
            "() => /y = \\[|Error/.test(document.getElementById('out').textContent)", timeout=120_000)
        text = page.inner_text("#out")
    finally:
        page.close()
        (browser_site / name).unlink(missing_ok=True)
    assert not errors, errors
    assert "<pyaccel.Device webgpu:0" in text and "swiftshader" in text, text
    assert "y = [3.0, 5.0, 7.0, 9.0]" in text, text


def test_no_numpy_io_examples_from_the_docs(run_py):
    """The data-in/data-out lines of section 5, without NumPy in the page."""
    got = run_py("""
import array, struct, sys
import pyaccel
raw_bytes = struct.pack("<3i", 7, -8, 9)
x = pyaccel.asarray([[1, 2], [3, 4]], dtype=pyaccel.float32, device="webgpu")
y = pyaccel.asarray(array.array("f", range(1000)), device="webgpu")
z = pyaccel.asarray(memoryview(raw_bytes).cast("i"), device="webgpu")
mv = x.memoryview()
buf = pyaccel.device("webgpu").malloc(4096)
buf.write(struct.pack("<4f", 1, 2, 3, 4))
(x.tolist(), y.dtype.name, bytes(y)[:8], z.dtype.name, z.tolist(), mv.format, mv.shape,
 mv.tolist(), buf.read(16), "numpy" in sys.modules)
""")
    xl, ydt, yb, zdt, zl, fmt, shape, mvl, raw, has_numpy = got
    assert xl == [[1.0, 2.0], [3.0, 4.0]]
    assert ydt == "float32" and yb == struct_pack_f(0.0, 1.0)
    assert zdt == "int32" and zl == [7, -8, 9]
    assert (fmt, shape, mvl) == ("f", [2, 2], [[1.0, 2.0], [3.0, 4.0]])
    assert raw == struct_pack_f(1.0, 2.0, 3.0, 4.0)
    assert has_numpy is False


def struct_pack_f(*vals: float) -> bytes:
    import struct

    return struct.pack(f"<{len(vals)}f", *vals)
