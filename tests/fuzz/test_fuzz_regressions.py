"""Fixed-input regressions for what the differential fuzzer found (tests/fuzz/FINDINGS.md).

Each case is a minimal program from FINDINGS.md, run on every device and checked against
NumPy. Hypothesis may not regenerate a rare case in a short CI run, but these tests always
run it.
"""

from __future__ import annotations

import numpy as np
import pytest

import pyaccel as xp

pytestmark = pytest.mark.fuzz


@pytest.mark.parametrize(("target", "value", "key"), [
    ((1, 0), (2, 0), [0]),          # A1: size-0 target, integer-array key
    ((2, 0), (3, 0), [0, 1]),
    ((1, 5), (2, 5), []),           # A1: an empty key selects (0, 5)
    ((1, 3), (2, 3), [0]),          # the same with data (already refused on f0dbc06)
])
def test_setitem_integer_key_checks_value_shape(device, target, value, key) -> None:
    """``x[[0]] = v`` with ``v`` not broadcastable to ``x[[0]]`` raises ValueError, as NumPy does,
    and leaves the device usable (A1: accepted silently on GPUs for size-0 shapes on f0dbc06)."""
    a = np.zeros(target, np.int32)
    with pytest.raises(ValueError):
        a[key] = np.ones(value, np.int32)
    x = xp.zeros(target, dtype=xp.int32, device=device)
    v = xp.ones(value, dtype=xp.int32, device=device)
    with pytest.raises(ValueError, match=r"shape|broadcast"):
        x[key] = v
    y = xp.asarray(np.arange(6, dtype=np.int32), device=device)
    assert (y * 2).to_numpy().tolist() == [0, 2, 4, 6, 8, 10]
