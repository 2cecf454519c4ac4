"""A small PNG decoder for screenshots (8-bit RGB/RGBA, no interlace), NumPy only."""

from __future__ import annotations

import struct
import zlib

import numpy as np


def _unfilter(raw: bytes, h: int, stride: int, ch: int) -> np.ndarray:
    out = np.zeros((h, stride), np.uint8)
    prev = np.zeros(stride, np.int64)
    for y in range(h):
        base = y * (stride + 1)
        f = raw[base]
        line = np.frombuffer(raw, np.uint8, stride, base + 1).astype(np.int64)
        if f == 0:
            cur = line
        elif f == 2:  # up
            cur = (line + prev) & 255
        else:  # sub, average, paeth: depend on the reconstructed left neighbour
            cur = np.zeros(stride, np.int64)
            lv, pv = line.tolist(), prev.tolist()
            cl = [0] * stride
            for x in range(stride):
                a = cl[x - ch] if x >= ch else 0
                b = pv[x]
                if f == 1:
                    p = a
                elif f == 3:
                    p = (a + b) >> 1
                else:
                    c = pv[x - ch] if x >= ch else 0
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                cl[x] = (lv[x] + p) & 255
            cur = np.asarray(cl, np.int64)
        out[y] = cur
        prev = cur
    return out


def decode_png(data: bytes) -> np.ndarray:
    """(height, width, 3) uint8 RGB pixels of a PNG (alpha dropped)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w, h, ct = 8, [], 0, 0, 0
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if typ == b"IHDR":
            w, h, depth, ct, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ct not in (2, 6) or interlace:
                raise ValueError(f"unsupported PNG: depth {depth}, colour type {ct}, interlace {interlace}")
        elif typ == b"IDAT":
            idat.append(body)
    ch = 3 if ct == 2 else 4
    px = _unfilter(zlib.decompress(b"".join(idat)), h, w * ch, ch).reshape(h, w, ch)
    return px[:, :, :3]
