"""The host path of WebGPU devices: an (op, dtype) pair with no WGSL kernel
yet reads its operands back, runs the cpu provider's same method on them (NumPy: exact, the
same code as cpu:0) and uploads the result; never a downcast.

One table for :class:`~pyaccel.ops.wgsl_provider.WgslOps` and its family components, keyed by
(op, dtype name). The op is the provider method (``matmul``, ``linalg_eigh``, ``fft_c2c``) or,
for a method shared by several ops, the op it runs (``sum`` of ``reduce``, an elementwise
row's name); the dtype is any one of the input or computation dtypes. The tests pin it through
the per-family views ``wgsl_provider.HOST_PATH``, ``linalg_wgsl.HOST_PATH`` and
``fft_wgsl.FFT_HOST_PATH`` and check that exactly these pairs take it, so it only shrinks
knowingly. Documented in docs/arrays.md, docs/linalg.md and docs/fft.md.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import _host
from ..array import Array
from ..errors import UnsupportedDTypeError
from .primitives import upload

if TYPE_CHECKING:
    from ..device import Device
    from ..dtypes import DType

_C = ("complex64", "complex128")
HOST_PATH: frozenset[tuple[str, str]] = frozenset({
    *((f"linalg_{op}", dt) for op in ("cholesky", "solve", "det", "slogdet", "qr", "eigh", "svd")
      for dt in ("float64", *_C)),
    ("fft_c2c", "complex128"), ("fft_r2c", "float64"), ("fft_c2r", "complex128"),
    # linalg.eig / eigvals (general eigenproblems): no GPU kernel for any dtype yet
    *(("linalg_eig", dt) for dt in ("float32", "float64", *_C)),
})
HOST_CALLS: collections.Counter[tuple[str, str]] = collections.Counter()
"""(op, dtype name) -> host-path calls taken (the tests check the table against what runs)."""


def run(device: Device, op: str, dtypes: Sequence[DType], *args: Any, method: str = "") -> Any:
    """None when no dtype of ``dtypes`` puts ``op`` on the host path (a WGSL kernel runs). Else
    the cpu provider's ``method`` (default: ``op``) on host copies of the arrays in ``args``,
    its array results (also inside a tuple) uploaded to ``device``."""
    dt = next((d.name for d in dtypes if (op, d.name) in HOST_PATH), None)
    if dt is None:
        return None
    if _host.numpy() is None:
        raise UnsupportedDTypeError(
            f"{op} of {dt} data on {device.uri} runs on the host through NumPy (no WGSL kernel "
            "yet), which is not installed: install numpy or use another dtype")
    from ..registry import device as _device

    HOST_CALLS[(op, dt)] += 1
    cpu = _device("cpu")
    return _move(getattr(cpu.ops, method or op)(*_move(args, cpu)), device)


def _move(a: Any, dev: Device) -> Any:
    """``a`` with its arrays (also inside tuples and lists) copied to ``dev``."""
    if isinstance(a, Array):
        return upload(dev, a.to_numpy(), a.dtype)
    if isinstance(a, (list, tuple)):
        return type(a)(_move(v, dev) for v in a)
    return a
