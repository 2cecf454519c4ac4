"""The matmul variant pin: pyaccel.set_matmul_variant and $PYACCEL_MATMUL_VARIANT."""

from __future__ import annotations

import pytest

import pyaccel
from pyaccel import dtypes
from pyaccel.ops import gpu_kernels as gk


@pytest.fixture(autouse=True)
def _unpin(monkeypatch):
    monkeypatch.delenv(gk.MATMUL_VARIANT_ENV, raising=False)
    yield
    pyaccel.set_matmul_variant(None)


def test_default_choice():  # (device None: the static choice, no tuning)
    assert gk.matmul_variant(None, 256, 256, 256) == "u16x8"
    assert gk.matmul_variant(None, 256, 255, 256) == "tiled"  # K not a multiple of 4
    assert gk.matmul_variant(None, 256, 256, 256, dtypes.float16) == "tiled"
    assert gk.matmul_variant(None, 8, 256, 256) == "naive"


def test_pin_and_unpin():
    pyaccel.set_matmul_variant("reg4x4")
    assert gk.matmul_variant(None, 256, 256, 256) == "reg4x4"
    pyaccel.set_matmul_variant("v8x4")
    assert gk.matmul_variant(None, 256, 256, 256) == "v8x4"
    assert gk.matmul_variant(None, 256, 3, 256) == "tiled"  # vec4 kernel cannot take K = 3
    pyaccel.set_matmul_variant(None)
    assert gk.matmul_variant(None, 256, 256, 256) == "u16x8"


def test_env_var(monkeypatch):
    monkeypatch.setenv(gk.MATMUL_VARIANT_ENV, "tiled")
    assert gk.matmul_variant(None, 256, 256, 256) == "tiled"
    pyaccel.set_matmul_variant("naive")  # the API pin wins over the environment
    assert gk.matmul_variant(None, 256, 256, 256) == "naive"
    pyaccel.set_matmul_variant(None)
    monkeypatch.setenv(gk.MATMUL_VARIANT_ENV, "bogus")
    with pytest.raises(ValueError, match="v8x4"):
        gk.matmul_variant(None, 256, 256, 256)


def test_unknown_name_lists_variants():
    with pytest.raises(ValueError) as e:
        pyaccel.set_matmul_variant("fastest")
    for name in gk.MATMUL_VARIANTS:
        assert name in str(e.value)
