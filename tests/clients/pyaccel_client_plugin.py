"""A pytest plugin that adds pyaccel to the namespaces scikit-learn's and SciPy's own array-API
tests are parametrized over, without patching a file of either library.

Load it with ``-p pyaccel_client_plugin`` (``tests/clients`` on ``PYTHONPATH``) when running
their suites, e.g.::

    SCIPY_ARRAY_API=1 PYACCEL_CLIENT_DEVICES=cpu:0,vulkan:0 \\
        python -m pytest -p pyaccel_client_plugin --pyargs sklearn -k "array_api or pyaccel"
    SCIPY_ARRAY_API=1 PYACCEL_DEVICE=vulkan:0 \\
        python -m pytest -p pyaccel_client_plugin --pyargs scipy.special -m array_api_backends

scikit-learn
    ``sklearn.utils._array_api.yield_namespace_device_dtype_combinations`` (and
    ``yield_namespaces``) are replaced, at plugin load, before any test module or
    ``estimator_checks`` imports them, by generators that yield everything the originals yield
    plus ``("pyaccel", uri, "float64")`` and ``("pyaccel", uri, "float32")`` for each URI of
    ``PYACCEL_CLIENT_DEVICES`` (default ``cpu:0``). scikit-learn resolves ``"pyaccel"`` with
    ``importlib`` and passes the URI as ``device=``, as it does for torch's ``"cuda"``.

SciPy
    SciPy's ``xp`` fixture is parametrized over the backends its ``conftest.py`` found at import
    (numpy, array_api_strict, ...). The plugin appends ``pyaccel`` to that fixture's params (in
    ``pytest_generate_tests``, before pytest expands fixture params), and registers the name in
    SciPy's ``xp_known_backends`` so its ``skip_xp_backends`` / ``xfail_xp_backends`` markers
    (``np_only``, ``cpu_only``, named backends) apply to pyaccel as to any backend. The device is
    the process default, ``PYACCEL_DEVICE`` — the way SciPy runs torch on a GPU
    (``SCIPY_DEVICE`` → ``torch.set_default_device``); on a device that is not ``cpu:*`` pyaccel
    joins ``xp_skip_cpu_only_backends``, as SciPy does for torch with ``SCIPY_DEVICE != "cpu"``.

Its default float is SciPy's too: SciPy's conftest sets torch's default dtype to float64
    (unless ``SCIPY_DEFAULT_DTYPE=float32``) and enables JAX's x64, so the plugin sets pyaccel's
    ``"exact"`` dtype policy for SciPy runs (float64 defaults on GPUs, whose own default under
    ``"fast"`` is float32) unless ``PYACCEL_DTYPE_POLICY`` is set.

``PYACCEL_CLIENT_KEEP`` (comma-separated backend ids, e.g. ``array_api_strict,pyaccel``)
deselects SciPy items whose ``xp`` backend is not listed (SciPy's own ``SCIPY_ARRAY_API='[...]'``
selection only knows the backends its conftest found, so it cannot name pyaccel).
``PYACCEL_CLIENT_SAMPLE=N`` keeps the SciPy test functions whose name hashes (CRC-32 of the node
id without its parameters) to 0 modulo N: a fixed 1-in-N sample of functions, all their cases.
"""

from __future__ import annotations

import os
import re
import sys
import zlib
from collections.abc import Iterator
from typing import Any

import pytest

os.environ.setdefault("SCIPY_ARRAY_API", "1")

NAMESPACE = "pyaccel"


def client_devices() -> list[str]:
    """The pyaccel device URIs scikit-learn's parametrization gets (``PYACCEL_CLIENT_DEVICES``)."""
    raw = os.environ.get("PYACCEL_CLIENT_DEVICES", "cpu:0")
    return [u.strip() for u in raw.split(",") if u.strip()]


def install_sklearn() -> None:
    """Extend scikit-learn's namespace generators with pyaccel (idempotent)."""
    try:
        import sklearn.utils._array_api as aa
    except ImportError:
        return
    if getattr(aa, "_pyaccel_extended", False):
        return
    orig_namespaces = aa.yield_namespaces
    orig_combos = aa.yield_namespace_device_dtype_combinations

    def yield_namespaces(include_numpy_namespaces: bool = True) -> Iterator[str]:
        """scikit-learn's namespaces, then ``"pyaccel"``."""
        yield from orig_namespaces(include_numpy_namespaces=include_numpy_namespaces)
        yield NAMESPACE

    def yield_namespace_device_dtype_combinations(
        include_numpy_namespaces: bool = True,
    ) -> Iterator[tuple[str, str | None, str | None]]:
        """scikit-learn's combinations, then pyaccel on each client device in float64/float32."""
        yield from orig_combos(include_numpy_namespaces=include_numpy_namespaces)
        for uri in client_devices():
            yield NAMESPACE, uri, "float64"
            yield NAMESPACE, uri, "float32"

    aa.yield_namespaces = yield_namespaces
    aa.yield_namespace_device_dtype_combinations = yield_namespace_device_dtype_combinations
    aa._pyaccel_extended = True
    # modules that bound the originals with `from ... import` before the plugin loaded (e.g.
    # estimator_checks imported by another test module in the same session)
    for name, mod in list(sys.modules.items()):
        if not name.startswith("sklearn.") or mod is aa or mod is None:
            continue
        for attr, orig, new in (("yield_namespaces", orig_namespaces, yield_namespaces),
                                ("yield_namespace_device_dtype_combinations", orig_combos,
                                 yield_namespace_device_dtype_combinations)):
            if getattr(mod, attr, None) is orig:
                setattr(mod, attr, new)


install_sklearn()


def _scipy_conftest() -> Any | None:
    return sys.modules.get("scipy.conftest")


def _pyaccel_param() -> Any:
    import pyaccel

    return pytest.param(pyaccel, id=NAMESPACE, marks=pytest.mark.array_api_backends)


def _extend_scipy_xp(fixturedefs: Any) -> None:
    conf = _scipy_conftest()
    if conf is None:
        return
    for fd in fixturedefs:
        if getattr(fd, "_pyaccel_extended", False) or fd.params is None:
            continue
        if getattr(fd.func, "__module__", None) != "scipy.conftest":
            continue
        import pyaccel

        conf.xp_known_backends.add(NAMESPACE)
        if not pyaccel.get_device().uri.startswith("cpu:"):
            conf.xp_skip_cpu_only_backends.add(NAMESPACE)
        scipy_default_dtype()
        params = list(fd.params)
        ids = list(fd.ids) if fd.ids is not None else None
        if not any(getattr(p, "id", None) == NAMESPACE for p in params):
            params.append(_pyaccel_param())
            if ids is not None and not callable(fd.ids):
                ids.append(NAMESPACE)
        fd.params = tuple(params)
        if ids is not None and not callable(fd.ids):
            fd.ids = tuple(ids)
        fd._pyaccel_extended = True


def scipy_default_dtype() -> str:
    """Give pyaccel the default float SciPy's conftest gives its other backends, and return the
    dtype policy in force. SciPy runs torch with ``torch.set_default_dtype(torch.float64)``
    unless ``SCIPY_DEFAULT_DTYPE=float32``, and JAX with ``jax_enable_x64``; pyaccel's twin is
    the ``"exact"`` dtype policy (float64 / complex128 defaults on GPUs too). An explicit
    ``PYACCEL_DTYPE_POLICY`` wins (``fast`` measures pyaccel's own GPU default, float32)."""
    import pyaccel

    if not os.environ.get("PYACCEL_DTYPE_POLICY", "").strip() and \
            os.environ.get("SCIPY_DEFAULT_DTYPE", "float64") == "float64":
        pyaccel.set_dtype_policy("exact")
    return pyaccel.get_dtype_policy()


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    defs = metafunc._arg2fixturedefs.get("xp")  # noqa: SLF001 (pytest has no public accessor)
    if defs:
        _extend_scipy_xp(defs)


def _xp_id(item: pytest.Item) -> str | None:
    cs = getattr(item, "callspec", None)
    if cs is None or "xp" not in cs.params:
        return None
    p = cs.params["xp"]
    return NAMESPACE if getattr(p, "__name__", "") == NAMESPACE else getattr(p, "__name__", str(p))


def in_sample(nodeid: str, n: int) -> bool:
    """Whether the test function of ``nodeid`` is in the fixed 1-in-``n`` sample."""
    return zlib.crc32(function_key(nodeid).encode()) % n == 0


def function_key(nodeid: str) -> str:
    """``scipy/.../test_x.py::Class::test_f`` of a node id, whatever the rootdir."""
    base = nodeid.split("[", 1)[0]
    m = re.search(r"(?:^|/)((?:scipy|sklearn)/.*)$", base)
    return m.group(1) if m else base


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep_raw = os.environ.get("PYACCEL_CLIENT_KEEP")
    if not keep_raw or _scipy_conftest() is None:
        return
    keep = {k.strip() for k in keep_raw.split(",") if k.strip()}
    n = int(os.environ.get("PYACCEL_CLIENT_SAMPLE") or 1)
    selected, deselected = [], []
    for it in items:
        xid = _xp_id(it)
        ok = xid is None or xid in keep
        if ok and n > 1:
            ok = in_sample(it.nodeid, n)
        (selected if ok else deselected).append(it)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = selected


def pytest_report_header(config: pytest.Config) -> list[str]:
    import pyaccel

    return [f"pyaccel client plugin: sklearn devices {client_devices()}, "
            f"process default device {pyaccel.default_device_uri()}, "
            f"dtype policy {pyaccel.get_dtype_policy()} (SciPy runs: see scipy_default_dtype)"]
