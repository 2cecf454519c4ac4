"""Mandelbrot set as a custom WGSL kernel (with its NumPy reference), written as a PNG.

    python examples/mandelbrot.py [--device URI] [--width 800] [--height 600] [--out mandelbrot.png]
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

import pyaccel

from _common import parse_args, print_times, timed, verdict

WGSL = """
struct View { width: u32, height: u32, max_iter: u32, _pad: u32, x0: f32, y0: f32, dx: f32, dy: f32 }
@group(0) @binding(0) var<storage, read_write> counts: array<u32>;
@group(0) @binding(1) var<uniform> v: View;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= v.width || gid.y >= v.height) { return; }
    let cx = v.x0 + f32(gid.x) * v.dx;
    let cy = v.y0 + f32(gid.y) * v.dy;
    var x = 0.0;
    var y = 0.0;
    var i = 0u;
    loop {
        if (i >= v.max_iter || x * x + y * y > 4.0) { break; }
        let xt = x * x - y * y + cx;
        y = 2.0 * x * y + cy;
        x = xt;
        i = i + 1u;
    }
    counts[gid.y * v.width + gid.x] = i;
}
"""


def reference(counts, v):  # noqa: ANN001, ANN201 - NumPy views
    """The same iteration in NumPy, float32 like the kernel, writing ``counts`` in place."""
    w, h, max_iter = int(v["width"]), int(v["height"]), int(v["max_iter"])
    cx = (np.float32(v["x0"]) + np.arange(w, dtype=np.float32) * np.float32(v["dx"]))[None, :]
    cy = (np.float32(v["y0"]) + np.arange(h, dtype=np.float32) * np.float32(v["dy"]))[:, None]
    cx, cy = np.broadcast_to(cx, (h, w)), np.broadcast_to(cy, (h, w))
    x = np.zeros((h, w), np.float32)
    y = np.zeros((h, w), np.float32)
    out = np.zeros((h, w), np.uint32)
    active = np.ones((h, w), bool)
    for _ in range(max_iter):
        active &= x * x + y * y <= 4
        if not active.any():
            break
        xt = x * x - y * y + cx
        y = np.where(active, np.float32(2) * x * y + cy, y)
        x = np.where(active, xt, x)
        out += active
    counts[: w * h] = out.reshape(-1)


def write_png(path: str, counts: np.ndarray, max_iter: int) -> None:
    """Grayscale PNG with zlib only (no imaging library needed)."""
    h, w = counts.shape
    img = (255 - (counts.astype(np.float64) * 255 / max_iter)).astype(np.uint8)
    raw = b"".join(b"\0" + img[r].tobytes() for r in range(h))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def main() -> int:
    args = parse_args(__doc__.splitlines()[0], width=(int, 800, "image width"), height=(int, 600, "image height"),
                      max_iter=(int, 200, "iterations"), out=(str, "mandelbrot.png", "PNG path"))
    dev = pyaccel.device(args.device) if args.device else pyaccel.get_device()
    kernel = pyaccel.Kernel(WGSL, reference=reference, name="mandelbrot")
    w, h = args.width, args.height
    view = {"width": w, "height": h, "max_iter": args.max_iter, "_pad": 0,
            "x0": -2.5, "y0": -1.25, "dx": 3.5 / w, "dy": 2.5 / h}
    counts = dev.malloc(w * h * 4)
    counts.write(np.full(w * h, 0xDEADBEEF, np.uint32))  # poison: an unwritten pixel shows

    def run() -> np.ndarray:
        kernel(counts, view, grid=(w, h))
        return np.frombuffer(counts.read(), np.uint32).reshape(h, w)

    got, t_dev = timed(run, args.repeat)
    expected = np.empty(w * h, np.uint32)
    rec = np.array([tuple(view.values())], dtype=kernel.bindings[1].struct.numpy_dtype())[0]
    _, t_np = timed(lambda: reference(expected, rec), 1)
    write_png(args.out, got, args.max_iter)
    print(f"wrote {args.out} ({w}x{h})")
    print_times(f"Mandelbrot {w}x{h}, {args.max_iter} iterations", dev, t_dev, t_np)
    # float32 rounding (FMA contraction on GPUs) can change the escape step of pixels on the
    # set's boundary; every pixel must be written, and at most 0.2% may differ by > 1 step.
    diff = np.abs(got.astype(np.int64) - expected.reshape(h, w))
    frac = float(np.mean(diff > 1))
    ok = bool(got.max() <= args.max_iter and frac <= 0.002)
    return verdict(ok, f"pixels differing by > 1 iteration: {frac:.4%} (limit 0.2%), "
                   f"max count {int(got.max())} <= {args.max_iter}")


if __name__ == "__main__":
    raise SystemExit(main())
