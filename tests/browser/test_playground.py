"""The playground page: every example runs from the Run button; screenshots are kept.

Screenshots go to ``artifacts/browser/`` (gitignored; CI can upload the folder).
The drawing examples (mandelbrot, heat, kmeans) are screenshotted and their pixels checked:
not blank, and the WebGPU canvas matches a NumPy rendering of the same field (iteration
counts / diffusion steps recomputed here, coloured with the page's palettes).
Examples that use the Array API (vector-add, matmul, softmax) are skipped while
``pyaccel.asarray`` / ``pyaccel.matmul`` / ``pyaccel.nn.softmax`` are missing in the page.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from _png import decode_png

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "browser"

# example id -> text its output must contain
EXPECTED = {
    "devices": ["webgpu:0", "default device: <pyaccel.Device webgpu:0"],
    "vector-add": ["z = x + y on webgpu:0", "ok"],
    "matmul": ["c = a @ b on webgpu:0: 96 x 64", "ok"],
    "kernel": ["device: <pyaccel.Device webgpu:0", "ok"],
    "softmax": ["softmax over 128 x 1000 on webgpu:0", "ok"],
    "async": ["webgpu:0 (0.0, 4.0, 8.0", "call_async: (2.0, 4.0, 6.0)", "ok"],
    "device-info": ["Device webgpu:0", "swiftshader", "max storage binding:"],
    "buffer": ["webgpu:0", "(0.0, 0.5, 1.0, 1.5"],
    "webgpu-raw": ["mismatches: 0"],
}
ARRAY_API = {"vector-add": "asarray", "matmul": "matmul", "softmax": "nn.softmax"}
# drawing examples -> text their output must contain (their pictures are checked below)
PICTURES = {
    "mandelbrot": ["24 frames of 384x256 on webgpu:0", "no pixel was read back"],
    "heat": ["240 steps of 128x128 on webgpu:0", "20 frames drawn from the GPU buffer"],
    "kmeans": ["k-means, 3000 points, k=5, 12 iterations on webgpu:0", "ok"],
}

HAS_ARRAY_API_PY = """
import pyaccel
def _has(path):
    obj = pyaccel
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return False
    return callable(obj)
{name: _has(name) for name in ("asarray", "matmul", "nn.softmax")}
"""


def shot(page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def click_run(page, example: str | None = None, timeout_ms: float = 90_000) -> tuple[str, str, bool]:
    """Select ``example`` (if given), click Run, wait for the run to end; (output, elapsed, had_error)."""
    if example is not None:
        page.select_option("#examples", example)
    page.evaluate("() => { document.getElementById('elapsed').textContent = ''; }")
    page.click("#run")
    page.wait_for_function(
        "() => /^[0-9.]+ ms$/.test(document.getElementById('elapsed').textContent)"
        " && !document.getElementById('run').disabled",
        timeout=timeout_ms,
    )
    out = page.inner_text("#output")
    err = page.evaluate("() => !!document.querySelector('#output .err')")
    return out, page.inner_text("#elapsed"), err


def test_every_example_is_listed(pyodide_page):
    ids = pyodide_page.evaluate("() => [...document.querySelectorAll('#examples option')].map((o) => o.value)")
    assert set(EXPECTED) | set(PICTURES) <= set(ids), f"missing examples: {set(EXPECTED) - set(ids)}"
    assert ids[:6] == ["devices", "vector-add", "matmul", "kernel", "softmax", "async"]


@pytest.mark.parametrize("example", list(EXPECTED))
def test_example_runs(pyodide_page, example):
    if example in ARRAY_API:
        have = pyodide_page.run_py(HAS_ARRAY_API_PY)
        if not have[ARRAY_API[example]]:
            pytest.skip(f"pyaccel.{ARRAY_API[example]} is not in this pyaccel yet (Array API)")
    page = pyodide_page.page
    page.uncheck("#numpy-check")
    out, elapsed, err = click_run(page, example)
    path = shot(page, f"playground-{example}")
    assert not err, f"{example} failed:\n{out}"
    for text in EXPECTED[example]:
        assert text in out, f"{example}: {text!r} not in the output:\n{out}"
    if "check_with_numpy" in page.evaluate("() => window.pyaccelPlayground.getCode()"):
        assert "NumPy check of" in out and "skipped" in out
    assert re.fullmatch(r"[0-9.]+ ms", elapsed)
    print(f"{example}: {elapsed}; screenshot {path}")


def test_numpy_toggle_reports_failure_gracefully(pyodide_page):
    """Offline, loadPackage("numpy") fails: the run says so and goes on without the check."""
    page = pyodide_page.page
    page.check("#numpy-check")
    try:
        out, _, err = click_run(page, "kernel")
        shot(page, "playground-numpy-toggle")
    finally:
        page.uncheck("#numpy-check")
    assert not err, out
    assert "ok" in out
    if "NumPy check of saxpy: ok" in out:  # online: numpy loaded and the check passed
        return
    assert "NumPy could not be loaded" in out and "network" in out, out
    assert "NumPy check of saxpy: skipped (numpy could not be loaded)" in out
    assert "Traceback" not in out.split("\n")[0]  # the note gives the error, not a traceback header


def test_device_report(pyodide_page):
    page = pyodide_page.page
    page.wait_for_function("() => window.pyaccelReported === true", timeout=30_000)
    text = page.inner_text("#devices")
    assert "WebGPU adapter (JS): google / swiftshader" in text
    assert re.search(r"webgpu:0\s+google swiftshader \(webgpu, cpu\)", text), text
    assert "cpu      unavailable:" in text and "loadPackage('numpy')" in text
    assert "default device: webgpu:0" in text


def test_python_error_shows_traceback(pyodide_page):
    page = pyodide_page.page
    page.fill("#code", "import pyaccel\npyaccel.device('webgpu:7')")
    out, _, err = click_run(page)
    assert err
    assert "DeviceNotFoundError" in out and "webgpu:7" in out
    assert "_pyodide/_base.py" not in out  # Pyodide's own frames are trimmed


def test_nogpu_banner_says_why_and_the_fallback(nogpu_page):
    page = nogpu_page.page
    page.wait_for_function("() => window.pyaccelReported === true", timeout=30_000)
    banner = page.inner_text("#banner")
    shot(page, "playground-no-webgpu")
    assert "WebGPU is not available" in banner
    assert "pyaccel: webgpu unavailable (" in banner
    # offline there is no numpy, so there is nothing to fall back to, and the banner says how to fix it
    assert ("pyaccel falls back to cpu:0" in banner
            or ("no device to fall back to" in banner and "loadPackage('numpy')" in banner)), banner
    out, _, err = click_run(page, "devices")
    shot(page, "playground-no-webgpu-devices")
    assert err and "DeviceNotFoundError" in out
    assert "webgpu: " in out and "loadPackage('numpy')" in out  # every backend's reason is listed


# ------------------------------------------------------------------ pictures
def run_picture(pyodide_page, example: str) -> tuple[str, dict | None, dict | None]:
    page = pyodide_page.page
    page.uncheck("#numpy-check")
    out, _, err = click_run(page, example, timeout_ms=120_000)
    shot(page, f"playground-{example}")
    assert not err, f"{example} failed:\n{out}"
    for text in PICTURES[example]:
        assert text in out, f"{example}: {text!r} not in the output:\n{out}"
    last, chart = page.evaluate("() => [window.pyaccelCanvas.last, window.pyaccelCanvas.lastChart]")
    return out, last, chart


def element_pixels(page, selector: str, name: str) -> np.ndarray:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.locator(selector).screenshot(path=str(path))
    return decode_png(path.read_bytes())


def field_pixels(page, last: dict, name: str) -> np.ndarray:
    """The #view canvas as (height, width, 3): one sample per field element."""
    rect = page.evaluate("() => { const r = document.getElementById('view').getBoundingClientRect();"
                         " return [r.x, r.y]; }")
    assert all(v == int(v) for v in rect), f"#view is not on the pixel grid: {rect} (page layout)"
    px = element_pixels(page, "#view", name)
    s = int(last["scale"])
    assert px.shape[:2] == (last["height"] * s, last["width"] * s), px.shape
    return px[s // 2::s, s // 2::s]


def assert_not_blank(px: np.ndarray, min_colours: int) -> None:
    colours = len(np.unique(px.reshape(-1, 3), axis=0))
    assert px.astype(np.float64).std() > 20, "the picture is (nearly) uniform"
    assert colours >= min_colours, f"only {colours} distinct colours"


def assert_close_picture(got: np.ndarray, want: np.ndarray, max_bad: float, what: str) -> float:
    diff = np.abs(got.astype(np.int16) - want.astype(np.int16)).max(axis=-1)
    bad = float((diff > 3).mean())
    assert bad <= max_bad, f"{what}: {bad:.2%} of the pixels differ from NumPy's rendering (> {max_bad:.0%})"
    return bad


def to_u8(rgb: np.ndarray) -> np.ndarray:
    return np.round(np.clip(rgb, 0, 1) * 255).astype(np.uint8)


def palette_cycle(v: np.ndarray, vmax: float) -> np.ndarray:
    """draw.js's "cycle" palette: black at vmax, else 0.5 + 0.5 cos(2 pi (v/32 + (0, .1, .2)))."""
    rgb = 0.5 + 0.5 * np.cos(2 * np.pi * (v[..., None] / 32.0 + np.array([0.0, 0.1, 0.2])))
    rgb[v >= vmax] = 0.0
    return to_u8(rgb)


def palette_heat(v: np.ndarray, vmin: float, vmax: float) -> np.ndarray:
    """draw.js's "heat" palette: clamp(3t), clamp(3t - 1), clamp(3t - 2)."""
    t = np.clip((v.astype(np.float64) - vmin) / (vmax - vmin), 0, 1)[..., None]
    return to_u8(3 * t - np.array([0.0, 1.0, 2.0]))


def mandelbrot_counts(p: dict) -> np.ndarray:
    """The example's WGSL kernel in float32 NumPy, same operation order."""
    f = np.float32
    w, h, maxit = p["w"], p["h"], p["maxit"]
    cx, cy, scale = f(p["cx"]), f(p["cy"]), f(p["scale"])
    cre = cx + (np.arange(w, dtype=f) + f(0.5) - f(0.5) * f(w)) * scale
    cim = cy + (np.arange(h, dtype=f) + f(0.5) - f(0.5) * f(h)) * scale
    cre, cim = np.broadcast_to(cre[None, :], (h, w)), np.broadcast_to(cim[:, None], (h, w))
    x = np.zeros((h, w), f)
    y = np.zeros((h, w), f)
    n = np.zeros((h, w), np.uint32)
    active = np.ones((h, w), bool)
    for _ in range(maxit):
        x2, y2 = x * x, y * y
        active &= ~(x2 + y2 > f(4))
        if not active.any():
            break
        x, y = np.where(active, x2 - y2 + cre, x), np.where(active, f(2) * x * y + cim, y)
        n += active
    return n


def test_mandelbrot_zoom_picture_matches_numpy(pyodide_page):
    _, last, _ = run_picture(pyodide_page, "mandelbrot")
    assert last is not None and last["frames"] == 24  # every frame drawn (live zoom)
    params = json.loads(last["meta"])
    px = field_pixels(pyodide_page.page, last, "picture-mandelbrot")
    assert_not_blank(px, 20)  # the palette has 32 bands plus black
    counts = mandelbrot_counts(params)
    assert 0.05 < (counts >= params["maxit"]).mean() < 0.95  # the frame shows the set's edge
    bad = assert_close_picture(px, palette_cycle(counts, last["vmax"]), 0.02, "mandelbrot")
    print(f"mandelbrot: {bad:.3%} of the pixels differ from NumPy (set boundary, float32 rounding)")


def heat_reference(n: int, steps: int, alpha: float) -> np.ndarray:
    u = np.array([[1.0 if i == 0 or (i - 80) ** 2 + (j - 44) ** 2 < 196 else 0.0 for j in range(n)]
                  for i in range(n)], np.float32)
    for _ in range(steps):
        lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]
        inner = u[1:-1, 1:-1] + alpha * lap
        mid = np.concatenate([u[1:-1, :1], inner, u[1:-1, -1:]], axis=1)
        u = np.concatenate([u[:1, :], mid, u[-1:, :]], axis=0)
    return u


def test_heat_diffusion_picture_matches_numpy(pyodide_page):
    _, last, _ = run_picture(pyodide_page, "heat")
    assert last is not None and last["frames"] == 20
    meta = json.loads(last["meta"])
    assert meta["steps"] == 240
    px = field_pixels(pyodide_page.page, last, "picture-heat")
    assert_not_blank(px, 50)
    want = palette_heat(heat_reference(meta["n"], meta["steps"], meta["alpha"]), last["vmin"], last["vmax"])
    # the initial field drawn instead of the final one would differ a lot: make sure it would fail
    start = palette_heat(heat_reference(meta["n"], 0, meta["alpha"]), last["vmin"], last["vmax"])
    assert (np.abs(start.astype(int) - want.astype(int)).max(axis=-1) > 3).mean() > 0.05
    bad = assert_close_picture(px, want, 0.005, "heat diffusion")
    print(f"heat: {bad:.3%} of the pixels differ from NumPy after {meta['steps']} steps")


def kmeans_losses(iters: int = 12, n: int = 3000, k: int = 5) -> list[float]:
    import random

    rnd = random.Random(7)
    blobs = [(rnd.uniform(-8, 8), rnd.uniform(-8, 8)) for _ in range(k)]
    pts = [(blobs[i % k][0] + rnd.gauss(0, 1.2), blobs[i % k][1] + rnd.gauss(0, 1.2)) for i in range(n)]
    x = np.asarray(pts, np.float32)
    c = x[0:5 * k:5].copy()
    x2 = np.sum(x * x, axis=1, keepdims=True)
    losses = []
    for _ in range(iters):
        d = x2 - 2 * (x @ c.T) + np.sum(c * c, axis=1)[None, :]
        labels = np.argmin(d, axis=1)
        losses.append(float(np.mean(np.min(d, axis=1))))
        onehot = (labels[:, None] == np.arange(k)[None, :]).astype(np.float32)
        counts = onehot.sum(axis=0)
        c = np.where(counts[:, None] > 0, (onehot.T @ x) / np.maximum(counts, 1)[:, None], c)
    return losses


def test_kmeans_loss_chart(pyodide_page):
    _, _, chart = run_picture(pyodide_page, "kmeans")
    assert chart is not None
    np.testing.assert_allclose(chart["values"], kmeans_losses(), rtol=2e-3)
    page = pyodide_page.page
    px = element_pixels(page, "#chart", "picture-kmeans-chart")
    assert_not_blank(px, 8)
    accent = page.evaluate("() => getComputedStyle(document.documentElement).getPropertyValue('--accent').trim()")
    rgb = np.array([int(accent[i:i + 2], 16) for i in (1, 3, 5)])
    ys, xs = np.nonzero(np.abs(px.astype(int) - rgb).max(axis=-1) <= 8)
    assert xs.size > 200, "the loss line is not drawn"
    # the line falls: its leftmost points are higher on the canvas than its rightmost ones
    left, right = ys[xs <= xs.min() + 3].mean(), ys[xs >= xs.max() - 3].mean()
    assert left < right - 50, (left, right)
