"""The fft family of the NumPy op provider (:class:`NumpyFFT`, a component ``NumpyOps`` holds
as ``ops.fft`` and forwards as ``ops.fft_c2c`` etc.): NumPy's
``np.fft`` (pocketfft; single precision stays single precision since NumPy 2.0), also the
host path of the WGSL provider for dtypes without kernels (:mod:`pyaccel.ops.host_path`).

The provider methods' three kinds map to NumPy as follows (1-D: exactly NumPy's own
definitions of ``ihfft`` and ``hfft``):

* ``c2c``: ``fftn`` (forward) / ``ifftn``;
* ``r2c``: ``rfftn`` (forward) / ``conj(rfftn(x, norm=swapped))`` (ihfft);
* ``c2r``: ``irfftn`` (inverse) / ``irfftn(conj(x), norm=swapped)`` (hfft).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..array import Array
from ..dtypes import COMPLEX_OF, REAL_OF, DType

if TYPE_CHECKING:
    from ..device import Device

_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def numpy_fft(np: Any, kind: str, a: Any, s: Sequence[int], axes: Sequence[int], forward: bool,
              norm: str, out_dtype: str) -> Any:
    """The transform ``kind`` (c2c, r2c, c2r) of NumPy array ``a``, as ``out_dtype``."""
    s, axes = list(s), list(axes)
    f = np.fft
    if kind == "c2c":
        if not axes:
            r = a.copy()
        else:
            r = (f.fftn if forward else f.ifftn)(a, s=s, axes=axes, norm=norm)
    elif kind == "r2c":
        r = f.rfftn(a, s=s, axes=axes, norm=norm) if forward else \
            np.conj(f.rfftn(a, s=s, axes=axes, norm=_SWAP[norm]))
    elif kind == "c2r":
        r = f.irfftn(np.conj(a), s=s, axes=axes, norm=_SWAP[norm]) if forward else \
            f.irfftn(a, s=s, axes=axes, norm=norm)
    else:
        raise ValueError(f"numpy_fft: unknown kind {kind!r}")
    return np.ascontiguousarray(r.astype(np.dtype(out_dtype), copy=False))


def view(x: Array) -> Any:
    """A NumPy view of a cpu array's buffer (as ``numpy_ops.view``, which imports this module)."""
    np = x.device.ops.np
    return x._buf.handle[:x.size * x.dtype.itemsize].view(np.dtype(x.dtype.name)).reshape(x.shape)


class NumpyFFT:
    """fft methods of the cpu device (module docstring). Depends on the device and NumPy only."""

    def __init__(self, device: Device, np: Any) -> None:
        self.device = device
        self.np = np

    def _fft_run(self, kind: str, x: Array, s: tuple[int, ...], axes: tuple[int, ...],
                 forward: bool, norm: str, out: DType) -> Array:
        r = numpy_fft(self.np, kind, view(x), s, axes, forward, norm, out.name)
        res = Array._output(self.device, tuple(r.shape), out)
        if r.size:
            view(res)[...] = r
        return res

    def fft_c2c(self, x: Array, s: tuple[int, ...], axes: tuple[int, ...], forward: bool,
                norm: str) -> Array:
        """Complex-to-complex transform over ``axes`` (lengths ``s``): fftn / ifftn."""
        return self._fft_run("c2c", x, s, axes, forward, norm, x.dtype)

    def fft_r2c(self, x: Array, s: tuple[int, ...], axes: tuple[int, ...], forward: bool,
                norm: str) -> Array:
        """Real-to-complex transform, the last axis halved to ``s[-1] // 2 + 1``: rfftn
        (``forward``) or the inverse direction with the inverse norm (ihfft)."""
        return self._fft_run("r2c", x, s, axes, forward, norm, COMPLEX_OF[x.dtype])

    def fft_c2r(self, x: Array, s: tuple[int, ...], axes: tuple[int, ...], forward: bool,
                norm: str) -> Array:
        """Complex (Hermitian half spectrum on the last axis) to real of length ``s[-1]``:
        irfftn (not ``forward``) or the forward direction with the forward norm (hfft)."""
        return self._fft_run("c2r", x, s, axes, forward, norm, REAL_OF[x.dtype])
