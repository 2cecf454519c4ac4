"""scikit-learn as a real client: its own ``check_array_api_input`` on every estimator whose
tags declare ``array_api_support``, float32 and float64, on every device.

The check fits each estimator on pyaccel arrays (``sklearn.set_config(array_api_dispatch=True)``)
and compares namespace, device, shapes and dtypes of every fitted attribute and method output
with the same estimator fitted on NumPy arrays. ``SCIPY_ARRAY_API=1`` is set by
``tests/conftest.py`` before anything imports SciPy (scikit-learn requires it).

LabelEncoder is left out: it fails scikit-learn's own harness with NumPy itself (``fit()`` is
called with ``(X, y)``; LabelEncoder takes only ``y``) — see ``test_labelencoder_harness_bug``.
"""

from __future__ import annotations

import os
import warnings

import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.utils._tags import get_tags  # noqa: E402
from sklearn.utils._test_common.instance_generator import _tested_estimators  # noqa: E402
from sklearn.utils.estimator_checks import check_array_api_input  # noqa: E402

HARNESS_BUG = {"LabelEncoder"}


def _estimators() -> list:
    out, seen = [], {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for est in _tested_estimators():
            try:
                if not get_tags(est).array_api_support:
                    continue
            except Exception:  # estimators whose tags need a fitted sub-estimator
                continue
            name = type(est).__name__
            if name in HARNESS_BUG:
                continue
            seen[name] = seen.get(name, 0) + 1
            out.append(pytest.param(est, id=f"{name}-{seen[name]}" if seen[name] > 1 else name))
    return out


ESTIMATORS = _estimators()


def test_estimator_list_is_complete() -> None:
    # scikit-learn 1.9.1 declares array-API support on these (one instance each, two for the
    # search CVs); a new release changing the list shows here instead of silently shrinking
    names = {p.values[0].__class__.__name__ for p in ESTIMATORS}
    assert {"PCA", "Ridge", "LinearDiscriminantAnalysis", "StandardScaler", "MinMaxScaler",
            "GaussianNB", "Nystroem", "RidgeCV", "RidgeClassifierCV", "LogisticRegression"} <= names
    assert len(ESTIMATORS) >= 15


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_check_array_api_input(estimator, dtype_name: str, device) -> None:
    assert os.environ.get("SCIPY_ARRAY_API") == "1"
    name = type(estimator).__name__
    try:
        with sklearn.config_context(array_api_dispatch=True), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_array_api_input(name, estimator, "pyaccel", device_name=device.uri,
                                  dtype_name=dtype_name)
    except pytest.skip.Exception as exc:  # sklearn's SkipTest (e.g. "no float64 on device")
        pytest.fail(f"scikit-learn skipped its own check on {device.uri}: {exc}")


def test_labelencoder_harness_bug() -> None:
    """The client's fault, reproduced with NumPy alone: LabelEncoder fails the harness."""
    from sklearn.preprocessing import LabelEncoder

    with sklearn.config_context(array_api_dispatch=True), pytest.raises(TypeError, match="positional"):
        check_array_api_input("LabelEncoder", LabelEncoder(), "numpy", dtype_name="float64")
