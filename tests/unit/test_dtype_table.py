"""The dtype table (pyaccel/dtypes.py DTYPE_TABLE) is the one source of what each device
kind holds and how: supported dtypes from capability flags, storage layouts, WGSL types and
function files."""

from __future__ import annotations

from pathlib import Path

import pyaccel
from pyaccel.capabilities import Capability
from pyaccel.dtypes import (
    ALL_DTYPES,
    DTYPE_TABLE,
    HOST_LAYOUT,
    WGSL_FUNCTIONS,
    WGSL_LAYOUT,
    dtypes_for,
)

OPS_DIR = Path(__file__).resolve().parents[2] / "pyaccel" / "ops"


def test_every_dtype_has_a_row() -> None:
    assert set(DTYPE_TABLE) == set(ALL_DTYPES)


def test_supported_dtypes_follow_capabilities() -> None:
    gpu = [d.name for d in dtypes_for(Capability.NONE)]
    assert gpu == ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32"]
    assert pyaccel.float16 in dtypes_for(Capability.F16)
    assert dtypes_for(Capability.FLOAT64 | Capability.INT64 | Capability.F16
                      | Capability.COMPLEX) == ALL_DTYPES
    assert pyaccel.float64 in dtypes_for(Capability.FLOAT64)
    assert pyaccel.int64 not in dtypes_for(Capability.FLOAT64)


def test_storage_layouts() -> None:
    assert (WGSL_LAYOUT[pyaccel.bool_].itemsize, WGSL_LAYOUT[pyaccel.bool_].char) == (4, "I")
    assert WGSL_LAYOUT[pyaccel.int8].numpy == "int32"
    assert WGSL_LAYOUT[pyaccel.uint16].numpy == "uint32"
    assert WGSL_LAYOUT[pyaccel.float16].itemsize == 2
    # emulated 64-bit and complex: bit-identical to NumPy's bytes, in 32-bit lanes
    assert (WGSL_LAYOUT[pyaccel.float64].itemsize, WGSL_LAYOUT[pyaccel.float64].lanes) == (8, 2)
    assert (WGSL_LAYOUT[pyaccel.complex128].itemsize, WGSL_LAYOUT[pyaccel.complex128].lanes) == (16, 4)
    for d in ALL_DTYPES:
        assert (HOST_LAYOUT[d].itemsize, HOST_LAYOUT[d].char, HOST_LAYOUT[d].numpy) == (d.itemsize, d.char, d.name)
        if d in WGSL_LAYOUT:
            assert d.storage_itemsize == WGSL_LAYOUT[d].itemsize
            assert d.wgsl == DTYPE_TABLE[d].wgsl_storage


def test_wgsl_function_files_exist() -> None:
    assert WGSL_FUNCTIONS == {"f32": "ew_float", "i32": "ew_sint", "u32": "ew_uint"}
    for row in DTYPE_TABLE.values():
        if row.functions is not None and row.prefix is None:
            assert (OPS_DIR / f"{row.functions}.wgsl").is_file()
            assert row.wgsl_compute in WGSL_FUNCTIONS
