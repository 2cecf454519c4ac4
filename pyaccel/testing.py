"""Test helpers and the ``pyaccel`` pytest plugin.

Helpers (usable outside pytest):

* :func:`assert_matches_oracle` runs a :class:`~pyaccel.Kernel` on a device and its
  NumPy ``reference`` on the host, on copies of the same inputs, and compares every
  ``read_write`` binding with per-dtype tolerances (:data:`TOLERANCES`);
* :func:`assert_allclose_dtype` compares two arrays with the tolerance of a dtype and
  reports the worst element;
* :func:`poison` fills a buffer or array with a recognisable garbage pattern (NaN for
  floats, ``0xDEADBEEF`` for integers) so elements a kernel forgot to write show up.

Plugin (registered through the ``pytest11`` entry point ``pyaccel = pyaccel.testing``):

* ``device`` fixture, parametrized over every device ``pyaccel.devices()`` lists
  (or over the ``--pyaccel-device URI`` options, repeatable); a device that cannot be
  opened skips with its reason;
* ``gpu_device`` fixture: the same, non-cpu devices only.

NumPy is imported when a helper runs; pytest when it is installed (for the fixtures).
"""

from __future__ import annotations

import sys
from typing import Any

from .capabilities import Capability
from .device import Buffer, Device
from .dtypes import ALL_DTYPES, DType, as_dtype
from .errors import BackendUnavailableError, DeviceNotFoundError, InvalidDeviceURIError
from .ops.table import TOLERANCES

# (rtol, atol) per dtype: the dtype rows of the one tolerance table (pyaccel/ops/table.py)
_DTYPE_NAMES = tuple(d.name for d in ALL_DTYPES)

POISON_U32 = 0xDEADBEEF
POISON_F32 = 0x7FC0DEAD  # a quiet NaN with a visible payload
POISON_F16 = 0x7E00  # NaN


def tolerance(dtype: Any) -> tuple[float, float]:
    """(rtol, atol) for a dtype (pyaccel DType, NumPy dtype or name)."""
    name = _dtype_name(dtype)
    if name not in _DTYPE_NAMES:
        raise TypeError(f"no tolerance for dtype {name!r}; known: {', '.join(_DTYPE_NAMES)}")
    return TOLERANCES[name]


def _dtype_name(dtype: Any) -> str:
    if isinstance(dtype, DType):
        return dtype.name
    try:
        return as_dtype(dtype).name
    except (TypeError, ValueError):
        import numpy as np

        return np.dtype(dtype).name


def _to_numpy(x: Any) -> Any:
    import numpy as np

    if isinstance(x, np.ndarray):
        return x
    for meth in ("to_numpy", "numpy"):
        f = getattr(x, meth, None)
        if callable(f) and not hasattr(x, "__array__"):
            return np.asarray(f())
    return np.asarray(x)


def assert_allclose_dtype(actual: Any, expected: Any, dtype: Any = None, *, rtol: float | None = None,
                          atol: float | None = None, what: str = "") -> None:
    """Assert ``actual`` matches ``expected`` within the tolerance of ``dtype``.

    ``dtype`` defaults to ``expected``'s dtype; floats use ``|a - e| <= atol + rtol * |e|``
    (NaN matches NaN, inf matches the same inf), complex values per component (real and
    imaginary parts each), integers and bool compare exactly. On failure the AssertionError names the number of bad elements, the worst index,
    both values and the tolerance.
    """
    import numpy as np

    a = _to_numpy(actual)
    e = _to_numpy(expected)
    name = _dtype_name(dtype if dtype is not None else e.dtype)
    r0, a0 = tolerance(name)
    rtol = r0 if rtol is None else rtol
    atol = a0 if atol is None else atol
    prefix = f"{what}: " if what else ""
    if a.shape != e.shape:
        raise AssertionError(f"{prefix}shape mismatch: actual {a.shape} vs expected {e.shape}")
    if a.size == 0:
        return
    if e.dtype.kind == "c" or a.dtype.kind == "c":
        # per component (the table's complex rows): astype(float64) would drop the imaginary
        # part; the worst index gets a last entry, 0 for the real part and 1 for the imaginary
        a = np.stack([a.real, a.imag if a.dtype.kind == "c" else np.zeros_like(a)], axis=-1)
        e = np.stack([e.real, e.imag if e.dtype.kind == "c" else np.zeros_like(e)], axis=-1)
    if e.dtype.kind in "fc" or a.dtype.kind in "fc":
        af = a.astype(np.float64)
        ef = e.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(af - ef)
            allowed = atol + rtol * np.abs(ef)
            same = (af == ef) | (np.isnan(af) & np.isnan(ef))
            excess = np.where(same, -np.inf, diff - allowed)
            excess = np.where(np.isnan(excess) & ~same, np.inf, excess)
        bad = excess > 0
    else:
        # exact: compare as Python-sized integers (no overflow for any int dtype)
        bad = a != e
        with np.errstate(over="ignore"):
            diff = np.abs(a.astype(np.float64) - e.astype(np.float64))
        excess = np.where(bad, diff, -np.inf)
        allowed = np.zeros(a.shape)
    nbad = int(np.count_nonzero(bad))
    if not nbad:
        return
    flat = int(np.argmax(excess))
    idx = np.unravel_index(flat, a.shape) if a.ndim else ()
    idx_s = ", ".join(map(str, idx)) if idx else ""
    av, ev = a[idx] if idx else a[()], e[idx] if idx else e[()]
    d = float(diff[idx]) if idx else float(diff)
    tol = (f"exact ({name})" if rtol == 0 and atol == 0
           else f"atol {atol:g} + rtol {rtol:g} * |expected| = {float(allowed[idx] if idx else allowed):g}")
    raise AssertionError(
        f"{prefix}{nbad} of {a.size} element(s) differ ({name}); worst at index [{idx_s}]: "
        f"actual {av!r}, expected {ev!r} (|diff| {d:g}; tolerance {tol})"
    )


def _host_copy(x: Any) -> Any:
    import numpy as np

    if isinstance(x, Buffer) or hasattr(x, "__pyaccel_buffer__"):
        raise TypeError(
            "assert_matches_oracle takes host inputs (NumPy arrays, bytes-like, numbers, dicts for "
            f"struct uniforms), got {type(x).__name__}; read it to the host first"
        )
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, (bytearray, memoryview)):
        return bytearray(x)
    if isinstance(x, dict):
        return dict(x)
    return x


def assert_matches_oracle(kernel: Any, *host_inputs: Any, grid: Any = None, workgroups: Any = None,
                          device: Any = None, rtol: float | None = None, atol: float | None = None,
                          constants: dict[str, Any] | None = None) -> None:
    """Run ``kernel`` on ``device`` and its NumPy ``reference`` on copies of ``host_inputs``
    and compare every ``read_write`` binding (per-dtype tolerances, see :data:`TOLERANCES`).

    The reference runs through the ``cpu:0`` device, so it sees exactly the typed NumPy
    views a cpu-device call gives it. Raises AssertionError naming the binding, the worst
    index, both values and the tolerance.
    """
    import numpy as np

    from .registry import as_device
    from .registry import device as open_device

    if getattr(kernel, "reference", None) is None:
        raise ValueError(
            f"assert_matches_oracle: kernel {getattr(kernel, 'name', kernel)!r} has no NumPy reference; "
            "pass reference=fn to pyaccel.Kernel"
        )
    dev = as_device(device)
    on_dev = [_host_copy(x) for x in host_inputs]
    on_ref = [_host_copy(x) for x in host_inputs]
    kernel(*on_dev, grid=grid, workgroups=workgroups, device=dev, constants=constants)
    kernel(*on_ref, grid=grid, workgroups=workgroups, device=open_device("cpu:0"), constants=constants)
    for b, got, want in zip(kernel.bindings, on_dev, on_ref, strict=True):
        if not b.writable:
            continue
        if isinstance(want, np.ndarray):
            dt = want.dtype
            g, w = got, want
        else:
            # bytes-like output: view it as the binding's storage type (bool/int8/... are stored
            # widened to 32 bits; unknown element types compare bytes exactly)
            d = b.dtype
            dt = np.dtype("uint8")
            if d is not None and d.itemsize == d.storage_itemsize:
                dt = np.dtype(d.name)
            elif d is not None and d.wgsl in ("u32", "i32"):
                dt = np.dtype("uint32" if d.wgsl == "u32" else "int32")
            g = np.frombuffer(bytes(got), dtype=np.uint8)
            w = np.frombuffer(bytes(want), dtype=np.uint8)
            if dt.itemsize > 1 and len(g) % dt.itemsize == 0:
                g, w = g.view(dt), w.view(dt)
            else:
                dt = np.dtype(np.uint8)
        assert_allclose_dtype(
            g, w, dt, rtol=rtol, atol=atol,
            what=f"kernel {kernel.name!r} on {dev.uri}, binding {b.index} {b.name!r} vs NumPy reference",
        )


def poison(obj: Any) -> Any:
    """Fill a NumPy array, bytearray, ``Buffer`` or pyaccel array with garbage; returns ``obj``.

    Floats get NaN (float32 ``0x7FC0DEAD``), integers ``0xDEADBEEF`` (truncated to the
    width), bool arrays 1, bytes 0xEF/0xBE/0xAD/0xDE; a buffer or array on a device is
    written through :meth:`Buffer.write`.
    """
    np = sys.modules.get("numpy")  # a NumPy array implies NumPy is loaded; never import it here
    if np is not None and isinstance(obj, np.ndarray):
        if obj.dtype.kind == "f":
            obj[...] = np.nan
        elif obj.dtype.kind == "b":
            obj[...] = True
        elif obj.dtype.kind in "iu":
            obj.view(np.uint8 if obj.dtype.itemsize == 1 else f"u{obj.dtype.itemsize}")[...] = (
                POISON_U32 & ((1 << (8 * obj.dtype.itemsize)) - 1)
            )
        else:
            obj.view(np.uint8)[...] = 0xEF
        return obj
    if isinstance(obj, bytearray):
        obj[:] = _pattern(POISON_U32.to_bytes(4, "little"), len(obj))
        return obj
    buf = obj if isinstance(obj, Buffer) else None
    unit = POISON_U32.to_bytes(4, "little")
    if buf is None:
        get = getattr(obj, "__pyaccel_buffer__", None)
        if get is None:
            raise TypeError(
                f"poison(): expected a NumPy array, bytearray, Buffer or pyaccel array, got {type(obj).__name__}"
            )
        buf = get()
        dt = getattr(obj, "dtype", None)
        name = _dtype_name(dt) if dt is not None else ""
        if name == "float32":
            unit = POISON_F32.to_bytes(4, "little")
        elif name == "float16":
            unit = POISON_F16.to_bytes(2, "little")
    buf.write(_pattern(unit, buf.nbytes))
    return obj


def _pattern(unit: bytes, n: int) -> bytes:
    return (unit * (n // len(unit) + 1))[:n]


# ---------------------------------------------------------------------------
# pytest plugin
# ---------------------------------------------------------------------------
def _device_uris(config: Any, gpu_only: bool) -> list[str]:
    opts = config.getoption("pyaccel_device", None) or []
    if opts:
        uris = [u.strip() for opt in opts for u in opt.split(",") if u.strip()]
    else:
        from .registry import devices

        try:
            uris = [d.uri for d in devices()]
        except Exception:  # devices() should not raise; never break collection
            uris = []
    if gpu_only:
        uris = [u for u in uris if not (u.startswith("cpu") or u.startswith("numpy"))]
    return uris


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("pyaccel")
    group.addoption(
        "--pyaccel-device", action="append", default=[], dest="pyaccel_device", metavar="URI",
        help="run `device` / `gpu_device` tests on this device URI (repeatable; comma lists allowed); "
             "default: every device pyaccel.devices() lists",
    )


def pytest_configure(config: Any) -> None:
    config.addinivalue_line("markers", "pyaccel_device(uri): device URI a test is parametrized with")


def pytest_generate_tests(metafunc: Any) -> None:
    for name, gpu_only in (("device", False), ("gpu_device", True)):
        if name not in metafunc.fixturenames or _parametrized_by_test(metafunc, name):
            continue
        defs = getattr(metafunc, "_arg2fixturedefs", {}).get(name)
        if defs and getattr(defs[-1].func, "__module__", __name__) != __name__:
            continue  # a conftest overrides the fixture: leave it alone
        uris = _device_uris(metafunc.config, gpu_only) or ["<none>"]
        metafunc.parametrize(name, uris, indirect=True, ids=uris)


def _parametrized_by_test(metafunc: Any, name: str) -> bool:
    for m in metafunc.definition.iter_markers("parametrize"):
        names = m.args[0] if m.args else m.kwargs.get("argnames", "")
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",")]
        if name in names:
            return True
    return False


def _open_or_skip(request: Any, gpu_only: bool) -> Device:
    import pytest

    from .registry import device as open_device

    uri = getattr(request, "param", None)
    if uri is None or uri == "<none>":
        pytest.skip("no " + ("GPU " if gpu_only else "") + "device available (pyaccel.devices() lists none"
                    + (" besides cpu)" if gpu_only else ")"))
    try:
        dev = open_device(uri)
    except InvalidDeviceURIError:
        raise
    except (DeviceNotFoundError, BackendUnavailableError) as exc:
        pytest.skip(f"device {uri} unavailable: {exc}")
    if gpu_only and Capability.KERNELS_RUN_REFERENCE in dev.capabilities:
        pytest.skip(f"{uri} is the NumPy cpu device; this test needs a GPU device")
    return dev


try:
    import pytest as _pytest
except ImportError:  # the helpers work without pytest; the fixtures need it
    _pytest = None

if _pytest is not None:

    @_pytest.fixture
    def device(request: Any) -> Device:
        """An open pyaccel device, one test per available device (``--pyaccel-device``)."""
        return _open_or_skip(request, False)

    @_pytest.fixture
    def gpu_device(request: Any) -> Device:
        """An open pyaccel GPU device (non-cpu), one test per device."""
        return _open_or_skip(request, True)


__all__ = ["TOLERANCES", "assert_allclose_dtype", "assert_matches_oracle", "poison", "tolerance"]
