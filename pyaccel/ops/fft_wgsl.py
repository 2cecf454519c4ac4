"""The fft family of the WGSL op provider: :class:`WgslFFT`, a component ``WgslOps`` holds
(``ops.fft``; its public methods are forwarded as ``ops.fft_c2c`` etc.), depending only on
:class:`FFTPrims` of the provider.

complex64 transforms run as WGSL kernels (``fft.wgsl``):

* **Powers of two**: Stockham autosort passes, radix 4 (a last radix-2 pass when log2 n is
  odd), one dispatch per pass over every line of the array at once (batched over the other
  axes), ping-ponging between two scratch buffers. Any axis is transformed where it lies:
  the kernels address the array as (outer, n, inner), so there is no transpose. Twiddles
  come from a table ``exp(-2 pi i m / n)`` computed in float64 on the host and rounded
  once to float32, uploaded once per (n, device) and cached. The inverse conjugates the
  twiddles (a sign in the kernel); the norm factor is applied in the last pass.
* **Any other length** (Bluestein / chirp-z): with ``w[k] = exp(-pi i (k^2 mod 2n) / n)``
  (the angle reduced exactly in integers on the host, then float64), the transform is
  ``X = w * IFFT_m(FFT_m(x * w) * FFT_m(conj(w) sym))`` for a power of two m >= 2n - 1.
  The chirp multiply is fused into the first pass of FFT_m, the product with the cached
  transform of the chirp (computed once per (n, device) with the same kernels: the third
  FFT) into its last pass, and the final chirp, the scale and the output trimming into
  the last pass of the inverse. Inverse transforms use conj(FFT(conj(x))).
* **Real input** (rfft, ihfft): the full complex FFT of the real line (the first pass reads
  f32 with a zero imaginary part), of which the last pass stores only ``n // 2 + 1``
  outputs. **Real output** (irfft, hfft): the first pass expands the half spectrum to its
  Hermitian full length (``X[n - k] = conj(X[k])``), the last pass stores the real part
  (the imaginary parts of X[0] and X[n/2] only reach the discarded imaginary part, as in
  NumPy's c2r). So a real transform costs a complex one of the same length.
* n-dimensional transforms are one-dimensional transforms along each axis in turn.

complex128 (and float64 input to rfft/ihfft) have no WGSL kernels yet: they take the host
path of contract 3 (:mod:`pyaccel.ops.host_path`: read back, the cpu device's ``fft_*``
method, upload; exact, never downcast), listed in :data:`FFT_HOST_PATH` and asserted by
tests/backends/test_fft_ext.py.

No kernel loops: every invocation does one butterfly (bounded work, whatever n).
"""

from __future__ import annotations

import math
from typing import Any, Protocol

from .. import _host
from .._shapes import prod
from ..array import Array
from ..device import Buffer, Device
from ..dtypes import DType, complex64, float32
from ..errors import UnsupportedDTypeError
from . import host_path as _hp
from .launch import device_lock, grid_1d, pack, pipeline, wgsl_source

# (provider method, input dtype) pairs computed on the host on WebGPU devices (contract 3)
FFT_HOST_PATH = frozenset(p for p in _hp.HOST_PATH if p[0].startswith("fft_"))

WG = 256
_TABLE_CACHE_BYTES = 64 << 20  # twiddle / chirp tables kept per device (least recently used go)

_PREFIX_SRC = {
    False: "alias SRC = vec2<f32>;\nfn ld_src(i: u32) -> vec2<f32> { return src[i]; }\n",
    True: "alias SRC = f32;\nfn ld_src(i: u32) -> vec2<f32> { return vec2<f32>(src[i], 0.0); }\n"}
_PREFIX_DST = {
    False: "alias DST = vec2<f32>;\nfn st_dst(i: u32, v: vec2<f32>) { dst[i] = v; }\n",
    True: "alias DST = f32;\nfn st_dst(i: u32, v: vec2<f32>) { dst[i] = v.x; }\n"}
_SOURCES: dict[tuple[bool, bool], str] = {}


def fft_source(real_in: bool, real_out: bool) -> str:
    """``fft.wgsl`` for complex or real input / output storage."""
    key = (real_in, real_out)
    src = _SOURCES.get(key)
    if src is None:
        src = _PREFIX_SRC[real_in] + _PREFIX_DST[real_out] + wgsl_source("fft")
        _SOURCES[key] = src
    return src


def norm_scale(n: int, forward: bool, norm: str) -> float:
    """The factor a transform of length ``n`` in direction ``forward`` gets under ``norm``."""
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    return 1.0 / n if (norm == "forward") == forward else 1.0


def radices(n: int) -> list[int]:
    """Stockham passes for a power of two ``n``: radix 16 (a 4 x 4 butterfly in registers),
    then one radix-4 and / or one radix-2 pass for the remaining factor."""
    if n == 1:
        return [1]
    bits = n.bit_length() - 1
    return [16] * (bits // 4) + {0: [], 1: [2], 2: [4], 3: [4, 2]}[bits % 4]


def _is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def bluestein_size(n: int) -> int:
    """The power of two m >= 2n - 1 Bluestein's convolution runs at."""
    return 1 << (2 * n - 2).bit_length()


# -- host tables (float64, rounded once to float32) ----------------------------------------
def _pack_c64(re: Any, im: Any) -> bytes:
    np = _host.numpy()
    if np is not None:
        out = np.empty(2 * len(re), dtype=np.float32)
        out[0::2] = re
        out[1::2] = im
        return out.tobytes()
    import struct

    flat = [v for pair in zip(re, im, strict=True) for v in pair]
    return struct.pack(f"<{len(flat)}f", *flat)


def twiddle_table(n: int) -> bytes:
    """``exp(-2 pi i m / n)`` for m < n as interleaved float32 (angles in float64)."""
    np = _host.numpy()
    if np is not None:
        ang = np.arange(n, dtype=np.float64) * (-2.0 * math.pi / n)
        return _pack_c64(np.cos(ang), np.sin(ang))
    ang = [-2.0 * math.pi * m / n for m in range(n)]
    return _pack_c64([math.cos(a) for a in ang], [math.sin(a) for a in ang])


def chirp_tables(n: int, m: int) -> tuple[bytes, bytes]:
    """Bluestein's chirp ``w[k] = exp(-pi i (k^2 mod 2n) / n)`` (k < n) and the sequence
    ``b`` of length m (``b[l] = conj(w[l])``, ``b[m - l] = conj(w[l])``, 0 between)."""
    np = _host.numpy()
    if np is not None:
        k = np.arange(n, dtype=np.int64)
        r = (k * k) % (2 * n)  # exact: k < 2**31
        ang = r.astype(np.float64) * (-math.pi / n)
        wr, wi = np.cos(ang), np.sin(ang)
        br = np.zeros(m)
        bi = np.zeros(m)
        br[:n], bi[:n] = wr, -wi
        br[m - n + 1:], bi[m - n + 1:] = wr[1:][::-1], -wi[1:][::-1]
        return _pack_c64(wr, wi), _pack_c64(br, bi)
    ang = [-math.pi * ((k * k) % (2 * n)) / n for k in range(n)]
    wr = [math.cos(a) for a in ang]
    wi = [math.sin(a) for a in ang]
    br = [0.0] * m
    bi = [0.0] * m
    for j in range(n):
        br[j], bi[j] = wr[j], -wi[j]
        if j:
            br[m - j], bi[m - j] = wr[j], -wi[j]
    return _pack_c64(wr, wi), _pack_c64(br, bi)


class FFTPrims(Protocol):
    """What :class:`WgslFFT` needs of its provider."""

    device: Device

    def copy(self, x: Array, shape: tuple[int, ...] | None = None) -> Array:
        """A fresh C-contiguous copy of ``x``."""


class WgslFFT:
    """The fft methods of a WebGPU device (module docstring): a component of ``WgslOps``
    holding the device's cached twiddle / chirp tables."""

    def __init__(self, prims: FFTPrims) -> None:
        self.prims = prims
        self.device = prims.device
        self._tables: dict[tuple, Buffer] = {}  # key -> table, least recently used first

    # -- provider methods ------------------------------------------------------------------
    def fft_c2c(self, x: Array, s: tuple[int, ...], axes: tuple[int, ...], forward: bool,
                norm: str) -> Array:
        """Complex-to-complex transform over ``axes`` (lengths ``s``): fftn / ifftn."""
        r = _hp.run(self.device, "fft_c2c", (x.dtype,), x, s, axes, forward, norm)
        if r is not None:
            return r
        self._fft_check(x, complex64)
        with device_lock(self.device):
            self._fft_trim()
            cur = x
            if not axes:
                return self.prims.copy(x)
            for ax, n in zip(axes, s, strict=True):
                cur = self._fft_axis(cur, ax, n, forward, norm, real_in=False, herm=False,
                                     out_len=n, real_out=False)
            return cur

    def fft_r2c(self, x: Array, s: tuple[int, ...], axes: tuple[int, ...], forward: bool,
                norm: str) -> Array:
        """Real-to-complex transform, the last axis halved to ``s[-1] // 2 + 1``: rfftn
        (``forward``) or the inverse direction with the inverse norm (ihfft)."""
        r = _hp.run(self.device, "fft_r2c", (x.dtype,), x, s, axes, forward, norm)
        if r is not None:
            return r
        self._fft_check(x, float32)
        with device_lock(self.device):
            self._fft_trim()
            n = s[-1]
            cur = self._fft_axis(x, axes[-1], n, forward, norm, real_in=True, herm=False,
                                 out_len=n // 2 + 1, real_out=False)
            for ax, m in zip(axes[:-1], s[:-1], strict=True):
                cur = self._fft_axis(cur, ax, m, forward, norm, real_in=False, herm=False,
                                     out_len=m, real_out=False)
            return cur

    def fft_c2r(self, x: Array, s: tuple[int, ...], axes: tuple[int, ...], forward: bool,
                norm: str) -> Array:
        """Complex (Hermitian half spectrum on the last axis) to real of length ``s[-1]``:
        irfftn (not ``forward``) or the forward direction with the forward norm (hfft)."""
        r = _hp.run(self.device, "fft_c2r", (x.dtype,), x, s, axes, forward, norm)
        if r is not None:
            return r
        self._fft_check(x, complex64)
        with device_lock(self.device):
            self._fft_trim()
            cur = x
            for ax, m in zip(axes[:-1], s[:-1], strict=True):
                cur = self._fft_axis(cur, ax, m, forward, norm, real_in=False, herm=False,
                                     out_len=m, real_out=False)
            n = s[-1]
            return self._fft_axis(cur, axes[-1], n, forward, norm, real_in=False, herm=True,
                                  out_len=n, real_out=True)

    # -- kernels ----------------------------------------------------------------------------
    def _fft_check(self, x: Array, want: DType) -> None:
        if x.dtype is not want:
            raise UnsupportedDTypeError(
                f"fft on {self.device.uri}: no kernel for {x.dtype.name} input (expected "
                f"{want.name}); cast with x.astype(pyaccel.{want.name})")

    def _fft_table(self, key: tuple, make: Any) -> Buffer:
        """A cached device table (twiddles, chirps) for this device, made by ``make()``."""
        cache = self._tables
        buf = cache.pop(key, None)
        if buf is None or buf.freed:
            data = make()
            buf = data if isinstance(data, Buffer) else self._fft_upload(data)
        cache[key] = buf  # most recently used last
        return buf

    def _fft_trim(self) -> None:
        """Free the least recently used tables past the cache budget (at the start of an op,
        so no table the op uses goes; queued work keeps a freed buffer alive)."""
        cache = self._tables
        total = sum(b.nbytes for b in cache.values())
        while cache and total > _TABLE_CACHE_BYTES:
            old = cache.pop(next(iter(cache)))
            total -= old.nbytes
            old.free()

    def _fft_upload(self, data: bytes) -> Buffer:
        buf = self.device.malloc(max(len(data), 16))
        buf.write(data)
        return buf

    def _fft_axis(self, x: Array, axis: int, n: int, forward: bool, norm: str, *, real_in: bool,
                  herm: bool, out_len: int, real_out: bool) -> Array:
        """One-dimensional transform of length ``n`` along ``axis`` (input padded / trimmed),
        keeping ``out_len`` outputs; a new array."""
        shape = x.shape
        outer, inner = prod(shape[:axis]), prod(shape[axis + 1:])
        out_shape = shape[:axis] + (out_len,) + shape[axis + 1:]
        out = Array._output(self.device, out_shape, float32 if real_out else complex64)
        if out.size == 0:
            return out
        scale = norm_scale(n, forward, norm)
        in_axis = shape[axis]
        in_valid = min(in_axis, n // 2 + 1 if herm else n)
        src = x._buf if x.size else None
        if _is_pow2(n):
            self._stockham(src, real_in, out._buf, real_out, outer, inner, n,
                           sign=-1.0 if forward else 1.0, scale=scale, in_axis=in_axis,
                           in_valid=in_valid, herm_n=n if herm else 0, in_flags=0, aux_in=None,
                           out_axis=out_len, out_valid=out_len, out_flags=0, aux_out=None)
            return out
        m = bluestein_size(n)
        chirp = self._fft_table(("chirp", n), lambda: chirp_tables(n, m)[0])
        bhat = self._fft_table(("bhat", n), lambda: self._bluestein_bhat(n, m))
        conj = 0 if forward else 1  # inverse: conj(FFT(conj(x)))
        tmp = self.device.malloc(outer * m * inner * 8)
        self._stockham(src, real_in, tmp, False, outer, inner, m, sign=-1.0, scale=1.0,
                       in_axis=in_axis, in_valid=in_valid, herm_n=n if herm else 0,
                       in_flags=conj | 2, aux_in=chirp, out_axis=m, out_valid=m, out_flags=2,
                       aux_out=bhat)
        self._stockham(tmp, False, out._buf, real_out, outer, inner, m, sign=1.0,
                       scale=scale / m, in_axis=m, in_valid=m, herm_n=0, in_flags=0, aux_in=None,
                       out_axis=out_len, out_valid=out_len, out_flags=conj | 2, aux_out=chirp)
        tmp.free()
        return out

    def _bluestein_bhat(self, n: int, m: int) -> Buffer:
        """FFT_m of Bluestein's b sequence, on the device (the cached third FFT)."""
        b = self._fft_upload(chirp_tables(n, m)[1])
        out = self.device.malloc(m * 8)
        self._stockham(b, False, out, False, 1, 1, m, sign=-1.0, scale=1.0, in_axis=m, in_valid=m,
                       herm_n=0, in_flags=0, aux_in=None, out_axis=m, out_valid=m, out_flags=0,
                       aux_out=None)
        b.free()
        return out

    def _stockham(self, src: Buffer | None, real_in: bool, dst: Buffer, real_out: bool, outer: int,
                  inner: int, n: int, *, sign: float, scale: float, in_axis: int, in_valid: int,
                  herm_n: int, in_flags: int, aux_in: Buffer | None, out_axis: int,
                  out_valid: int, out_flags: int, aux_out: Buffer | None) -> None:
        """Record the passes of one power-of-two transform of every (outer, inner) line of
        ``src`` into ``dst`` (the first pass reads the caller's layout, the last writes it)."""
        dev = self.device
        impl = dev.impl
        tw = self._fft_table(("tw", n), lambda: twiddle_table(n))
        if src is None:  # empty input (all padding): nothing is read
            src, in_valid, herm_n = tw, 0, 0
        rs = radices(n)
        tmps: list[Buffer] = []
        if len(rs) > 1:
            tmps = [dev.malloc(outer * n * inner * 8) for _ in range(min(2, len(rs) - 1))]
        cur, cur_real = src, real_in
        p = 1
        for j, R in enumerate(rs):
            first, last = j == 0, j == len(rs) - 1
            nxt = dst if last else tmps[j % 2]
            t = n // R
            total = outer * t * inner
            params = pack(
                "13I2fI", n, t, p, n // (p * R), inner, total,
                in_axis if first else n, in_valid if first else n, herm_n if first else 0,
                in_flags if first else 0,
                out_axis if last else n, out_valid if last else n, out_flags if last else 0,
                sign, scale if last else 1.0, t.bit_length() - 1)
            pipe = pipeline(impl, fft_source(cur_real, real_out and last), f"pass{R}", {"WG": WG},
                            f"fft.pass{R}")
            a_in = aux_in if (first and aux_in is not None) else tw
            a_out = aux_out if (last and aux_out is not None) else tw
            entries = [(b, _entry_size(buf)) for b, buf in
                       ((0, cur), (1, nxt), (2, tw), (3, a_in), (4, a_out))]
            ents = [(b, h, 0, size) for b, (h, size) in entries]
            ents.append((5, impl.uniform(params), 0, len(params)))
            impl.dispatch(pipe, ents, grid_1d(dev, total, WG))
            cur, cur_real = nxt, False
            p *= R
        for b in tmps:
            b.free()


def _entry_size(buf: Buffer) -> tuple[Any, int]:
    h = buf.handle
    return h, min(max(16, (buf.nbytes + 15) & ~15), h.size)


__all__ = ["FFT_HOST_PATH", "FFTPrims", "WgslFFT", "bluestein_size", "chirp_tables", "fft_source", "norm_scale",
           "radices", "twiddle_table"]
