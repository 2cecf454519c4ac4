"""The bits of 2/pi and pi/2 in the WGSL libraries (Payne-Hanek reduction of sin / cos / tan:
F64__2OPI and the pi/2 words of f64__rem_pio2_large in ew_f64.wgsl, C64_2OPI in ew_c64.wgsl)
equal the bits regenerated here with Python integers (pi from Machin's formula)."""

from __future__ import annotations

import re
from pathlib import Path

OPS_DIR = Path(__file__).resolve().parents[2] / "pyaccel" / "ops"


def pi_scaled(m: int) -> int:
    """pi * 2^m within a few units: 16 atan(1/5) - 4 atan(1/239) in integers, 32 guard bits
    (each truncated term errs by < 1 unit of 2^-(m + 32))."""
    g = m + 32

    def atan_inv(x: int) -> int:
        s, t, k = 0, (1 << g) // x, 0
        while t:
            s += (-1) ** k * (t // (2 * k + 1))
            t //= x * x
            k += 1
        return s

    return (16 * atan_inv(5) - 4 * atan_inv(239)) >> 32


def two_over_pi_bits(n: int) -> int:
    """floor(2^n * 2/pi), checked at both ends of the error bound of pi_scaled."""
    m = n + 64
    p = pi_scaled(m)
    lo, hi = (1 << (n + 1 + m)) // (p + 8), (1 << (n + 1 + m)) // (p - 8)
    assert lo == hi
    return lo


def pi_over_2_bits(n: int) -> int:
    """floor(2^n * pi/2), checked likewise."""
    p = pi_scaled(n + 64)
    lo, hi = (p - 8) >> 65, (p + 8) >> 65
    assert lo == hi
    return lo


def _words(text: str, name: str) -> list[int]:
    m = re.search(rf"var<private> {name}: array<u32, (\d+)> = array<u32, \d+>\(([^)]*)\);", text)
    assert m, name
    words = [int(w.strip().rstrip("u"), 0) for w in m.group(2).split(",") if w.strip()]
    assert len(words) == int(m.group(1))
    return words


def test_machin_pi() -> None:
    assert pi_scaled(200) >> 136 == 0x3243F6A8885A308D3  # pi = 3.243f6a8885a308d3...h
    assert two_over_pi_bits(64) == 0xA2F9836E4E441529  # fdlibm's ipio2 begins 0xa2f983 0x6e4e44


def test_f64_two_over_pi_table() -> None:
    words = _words((OPS_DIR / "ew_f64.wgsl").read_text(), "F64__2OPI")
    assert words[:2] == [0, 0]
    n = len(words) - 2
    t = two_over_pi_bits(32 * n)
    assert words[2:] == [(t >> (32 * (n - 1 - k))) & 0xFFFFFFFF for k in range(n)]
    # f64__rem_pio2_large reads 7 words from word (E + 32) / 32, E <= 971 (|x| < 2^1024)
    assert len(words) >= (971 + 32) // 32 + 8


def test_f64_pi_over_2_words() -> None:
    text = (OPS_DIR / "ew_f64.wgsl").read_text()
    body = text[text.index("fn f64__rem_pio2_large"):text.index("fn f64__rem_pio2(")]
    p = pi_over_2_bits(127)
    assert f"vec2<u32>(0x{(p >> 64) & 0xFFFFFFFF:08x}u, 0x{p >> 96:08x}u)" in body
    assert f"f64__mul32(h.y, 0x{(p >> 32) & 0xFFFFFFFF:08x}u)" in body  # the cross terms
    assert f"f64__mul32(l.y, 0x{p >> 96:08x}u)" in body


def test_c64_two_over_pi_table() -> None:
    words = _words((OPS_DIR / "ew_c64.wgsl").read_text(), "C64_2OPI")
    n = len(words) - 1
    t = two_over_pi_bits(32 * n)
    assert words == [0] + [(t >> (32 * (n - 1 - k))) & 0xFFFFFFFF for k in range(n)]
