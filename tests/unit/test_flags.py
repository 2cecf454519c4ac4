"""On/off switches refuse values that would flip them silently (pyaccel/_flags.py)."""

from __future__ import annotations

import numpy as np
import pytest

import pyaccel
from pyaccel._flags import env_flag
from pyaccel.ops import autotune, fusion


@pytest.mark.parametrize("bad", ["off", "0", 0, 1, None, [True]])
def test_set_fusion_and_fusion_refuse_non_bools(bad: object) -> None:
    before = fusion.enabled()
    with pytest.raises(TypeError, match=r"set_fusion\(on\): on must be True or False, got"):
        pyaccel.set_fusion(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"fusion\(on\): on must be True or False") as ei:
        with pyaccel.fusion(bad):  # type: ignore[arg-type]
            pass
    assert repr(bad) in str(ei.value)
    assert fusion.enabled() == before  # nothing changed


def test_fusion_switches_take_bools_and_numpy_bools() -> None:
    before = fusion.enabled()
    with pyaccel.fusion(np.False_):
        assert fusion.enabled() is False
    with pyaccel.fusion(True):
        assert fusion.enabled() is True
    assert fusion.enabled() == before


def test_set_matmul_autotune_refuses_non_bools() -> None:
    with pytest.raises(TypeError, match=r"set_matmul_autotune\(on\): on must be True, False or None, got str 'off'"):
        pyaccel.set_matmul_autotune("off")  # type: ignore[arg-type]
    pyaccel.set_matmul_autotune(None)  # back to the environment


@pytest.mark.parametrize(("raw", "want"), [("1", True), ("on", True), (" YES ", True), ("0", False),
                                           ("off", False), ("False", False), ("", True)])
def test_env_flag_values(monkeypatch: pytest.MonkeyPatch, raw: str, want: bool) -> None:
    monkeypatch.setenv("PYACCEL_TEST_FLAG", raw)
    assert env_flag("PYACCEL_TEST_FLAG") is want


def test_env_flag_typo_names_the_variable_and_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(autotune.AUTOTUNE_ENV, "of")
    with pytest.raises(ValueError, match=r"PYACCEL_AUTOTUNE='of' is not an on/off value: set it to 1 \(on\) or 0"):
        autotune.enabled()
    monkeypatch.delenv(autotune.AUTOTUNE_ENV)
    assert env_flag("PYACCEL_TEST_FLAG_UNSET", default=False) is False
