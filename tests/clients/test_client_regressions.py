"""Small pyaccel behaviours SciPy's own array-API suite relies on (issue 19, the re-measured
client tables in docs/clients.md), each checked against NumPy / array-api-strict on every device:

* ``result_type`` of Python scalars only raises ``ValueError``, as array-api-strict does
  (``scipy.signal._filter_design._logspace`` catches exactly that: ``TestFreqs::test_freq_range``);
* an out-of-range axis is reported in NumPy's ``AxisError`` words, "axis 10 is out of bounds for
  array of dimension 1", which SciPy's input-validation tests match
  (``TestSpearmanRho`` / ``TestChatterjeeXi::test_input_validation``);
* a list of typed scalars (NumPy scalars, 0-d NumPy arrays, 0-d pyaccel Arrays) keeps NumPy's
  inferred dtype, ``int32`` included (``TestNSum::test_vectorization`` compares
  ``xp.asarray([xp.asarray(np.int32(0)), ...])`` with an int32 result).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import pyaccel as xp


def test_result_type_of_python_scalars_only_is_a_value_error(device) -> None:
    strict = pytest.importorskip("array_api_strict")
    with pytest.raises(ValueError):
        strict.result_type(-2, 1, 10.0)
    with pytest.raises(ValueError, match="besides Python scalars"):
        xp.result_type(-2, 1, 10.0)
    with pytest.raises(ValueError, match="at least one array or dtype"):
        xp.result_type()
    x = xp.asarray([1.0], device=device)
    assert xp.result_type(x, 1, 2.0) == x.dtype


def test_axis_errors_use_numpys_words(device) -> None:
    x = xp.asarray([1.0, 2.0], device=device)
    scipy_regex = "...axis 10 is out of bounds for array...|out of range"
    with pytest.raises(IndexError) as ei:
        xp.moveaxis(x, 10, 0)
    assert re.search(scipy_regex, str(ei.value)), str(ei.value)
    with pytest.raises(np.exceptions.AxisError) as en:
        np.moveaxis(np.asarray([1.0, 2.0]), 10, 0)
    assert re.search(scipy_regex, str(en.value))
    with pytest.raises(IndexError, match="axis 0 is out of bounds for array of dimension 0"):
        xp.sum(xp.asarray(1.0, device=device), axis=0)
    with pytest.raises(IndexError, match=r"^flip: axis 3 is out of bounds for array of dimension 1 \(valid: -1..0\)$"):
        xp.flip(x, axis=3)


@pytest.mark.parametrize("make", ["numpy scalar", "numpy 0-d", "pyaccel 0-d"])
@pytest.mark.parametrize("dtype", ["int8", "int32", "uint16", "float32", "float64", "bool"])
def test_list_of_typed_scalars_keeps_numpys_dtype(device, make, dtype) -> None:
    if dtype not in {d.name for d in xp.__array_namespace_info__().dtypes(device=device).values()}:
        pytest.skip(f"{device.uri} does not hold {dtype}")
    vals = [np.asarray(v).astype(dtype) for v in (0, 1, 3)]
    if make == "numpy scalar":
        items = [v[()] for v in vals]
    elif make == "numpy 0-d":
        items = vals
    else:
        items = [xp.asarray(v, device=device) for v in vals]
    ref = np.asarray([np.asarray(v) for v in vals])
    out = xp.asarray(items, device=device)
    assert out.dtype.name == ref.dtype.name == dtype
    np.testing.assert_array_equal(np.asarray(out.to_device("cpu")), ref)
    # nested, and mixed with Python scalars: NumPy's inference on the same values
    nested = xp.asarray([items[:2], items[1:]], device=device)
    assert nested.dtype.name == dtype and nested.shape == (2, 2)
    mixed_ref = np.asarray([vals[0], 2])
    assert xp.asarray([items[0], 2], device=device).dtype.name == mixed_ref.dtype.name


def test_python_lists_keep_the_default_dtypes(device) -> None:
    info = xp.__array_namespace_info__().default_dtypes(device=device)
    assert xp.asarray([1, 2], device=device).dtype == info["integral"]
    assert xp.asarray([1.5, 2], device=device).dtype == info["real floating"]
