"""A field computed by pyaccel, drawn by a wgpu-py render pipeline straight from its GPU buffer.

    python examples/wgpu_render_field.py [--device vulkan:0] [--width 640] [--height 480]
                                         [--out field.png]

pyaccel computes a 2-D scalar field on a native GPU and normalises it to [0, 1] there.
``pyaccel.extras.wgpu.as_wgpu_buffer`` hands over the array's own storage buffer (no copy,
no readback of the array); a render pipeline on the same ``wgpu.GPUDevice`` binds it as a
read-only storage buffer, and its fragment shader colours each pixel from it into an
offscreen texture. Only the finished picture is read back, saved as a PNG (zlib + struct),
and checked against a NumPy rendering of the same field.
"""

from __future__ import annotations

import struct
import time
import zlib

import numpy as np

import pyaccel
from pyaccel.extras import wgpu as xw

from _common import parse_args, print_times, verdict

SHADER = """
struct View { width: u32, height: u32 }
@group(0) @binding(0) var<storage, read> field: array<f32>;
@group(0) @binding(1) var<uniform> view: View;

@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    // one triangle that covers the whole target
    let p = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(p * 2.0 - 1.0, 0.0, 1.0);
}

fn colormap(v: f32) -> vec3<f32> {
    // "jet": three clamped ramps (the NumPy rendering below is the same formula)
    return clamp(vec3<f32>(1.5 - abs(4.0 * v - 3.0), 1.5 - abs(4.0 * v - 2.0),
                           1.5 - abs(4.0 * v - 1.0)), vec3<f32>(0.0), vec3<f32>(1.0));
}

@fragment
fn fs_main(@builtin(position) pos: vec4<f32>) -> @location(0) vec4<f32> {
    let x = min(u32(pos.x), view.width - 1u);
    let y = min(u32(pos.y), view.height - 1u);
    return vec4<f32>(colormap(field[y * view.width + x]), 1.0);
}
"""


def compute_field(xp, h: int, w: int, device=None):  # noqa: ANN001, ANN201 - any namespace
    """The field, normalised to [0, 1] (the same code runs with pyaccel and with NumPy)."""
    kw = {} if device is None else {"device": device}
    y = xp.reshape(xp.linspace(-1.0, 1.0, h, dtype=xp.float32, **kw), (h, 1))
    x = xp.reshape(xp.linspace(-1.5, 1.5, w, dtype=xp.float32, **kw), (1, w))
    r2 = x * x + y * y
    f = xp.sin(x * 5.0) * xp.cos(y * 4.0) + xp.exp(r2 * -3.0) * 1.5
    lo, hi = xp.min(f), xp.max(f)
    return (f - lo) / (hi - lo)


def numpy_render(field: np.ndarray) -> np.ndarray:
    """The picture the shader draws, in NumPy: RGBA uint8 (unorm: round(v * 255))."""
    v = field.astype(np.float32)[..., None]
    k = np.array([3.0, 2.0, 1.0], np.float32)
    rgb = np.clip(1.5 - np.abs(4.0 * v - k), 0.0, 1.0)
    rgba = np.concatenate([rgb, np.ones_like(rgb[..., :1])], axis=-1)
    return np.floor(rgba * 255.0 + 0.5).astype(np.uint8)


def render(dev: pyaccel.Device, field: pyaccel.Array) -> np.ndarray:
    """Draw ``field`` (h, w) from its own storage buffer into a texture; read the texture."""
    import wgpu

    h, w = field.shape
    g = xw.wgpu_device(dev)
    fbuf = xw.as_wgpu_buffer(field)  # the array's storage: no copy (and pyaccel's work submitted)
    ubuf = g.create_buffer_with_data(data=struct.pack("<II", w, h), usage=wgpu.BufferUsage.UNIFORM)
    module = g.create_shader_module(code=SHADER)
    fmt = wgpu.TextureFormat.rgba8unorm
    pipe = g.create_render_pipeline(
        layout="auto",
        vertex={"module": module, "entry_point": "vs_main"},
        primitive={"topology": wgpu.PrimitiveTopology.triangle_list},
        fragment={"module": module, "entry_point": "fs_main", "targets": [{"format": fmt}]},
    )
    group = g.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=[
        {"binding": 0, "resource": {"buffer": fbuf, "offset": 0, "size": xw.storage_nbytes(field)}},
        {"binding": 1, "resource": {"buffer": ubuf, "offset": 0, "size": 8}},
    ])
    tex = g.create_texture(size=(w, h, 1), format=fmt,
                           usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)
    enc = g.create_command_encoder()
    rp = enc.begin_render_pass(color_attachments=[{
        "view": tex.create_view(), "load_op": wgpu.LoadOp.clear, "store_op": wgpu.StoreOp.store,
        "clear_value": (1.0, 0.0, 1.0, 1.0),  # magenta: an undrawn pixel shows
    }])
    rp.set_pipeline(pipe)
    rp.set_bind_group(0, group)
    rp.draw(3)
    rp.end()
    g.queue.submit([enc.finish()])
    row = (w * 4 + 255) // 256 * 256  # bytes_per_row must be a multiple of 256
    data = g.queue.read_texture({"texture": tex, "origin": (0, 0, 0), "mip_level": 0},
                                {"offset": 0, "bytes_per_row": row, "rows_per_image": h},
                                (w, h, 1))
    return np.frombuffer(data, np.uint8).reshape(h, row)[:, : w * 4].reshape(h, w, 4).copy()


def write_png(path: str, rgba: np.ndarray) -> None:
    """RGBA PNG with zlib + struct only (filter 0 on every row)."""
    h, w, _ = rgba.shape
    raw = b"".join(b"\0" + rgba[r].tobytes() for r in range(h))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def read_png(path: str) -> np.ndarray:
    """The RGBA pixels of a PNG written by :func:`write_png` (filter 0 rows only)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w, h = 8, b"", 0, 0
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos: pos + 4])
        tag, body = data[pos + 4: pos + 8], data[pos + 8: pos + 8 + n]
        if tag == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert (depth, ctype) == (8, 6), "RGBA8 only"
        elif tag == b"IDAT":
            idat += body
        pos += 12 + n
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + 4 * w)
    assert not rows[:, 0].any(), "filter 0 only"
    return rows[:, 1:].reshape(h, w, 4)


def main() -> int:
    args = parse_args(__doc__.splitlines()[0], width=(int, 640, "image width"),
                      height=(int, 480, "image height"), out=(str, "field.png", "PNG path"))
    dev = pyaccel.device(args.device or "wgpu")  # a native wgpu-py device (not cpu)
    w, h = args.width, args.height
    best_dev = best_np = float("inf")
    for _ in range(max(1, args.repeat)):
        t0 = time.perf_counter()
        field = compute_field(pyaccel, h, w, dev)
        img = render(dev, field)  # the only readback: the picture
        best_dev = min(best_dev, time.perf_counter() - t0)
        t0 = time.perf_counter()
        want = numpy_render(compute_field(np, h, w))
        best_np = min(best_np, time.perf_counter() - t0)
    write_png(args.out, img)
    print(f"wrote {args.out} ({w}x{h}), drawn from {dev.uri}'s buffer of the field")
    print_times(f"field {w}x{h}: compute + render + read the picture", dev, best_dev, best_np)
    diff = np.abs(img.astype(np.int16) - want)
    bad = float(np.mean(diff.max(axis=-1) > 2))
    ok = bool(img.shape == want.shape and bad <= 1e-3 and (img[..., 3] == 255).all())
    return verdict(ok, f"pixels off by > 2/255 from the NumPy rendering: {bad:.4%} (limit 0.1%), "
                   f"max {int(diff.max())}")


if __name__ == "__main__":
    raise SystemExit(main())
