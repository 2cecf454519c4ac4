"""Device capabilities as data: a flag set and a frozen table of limits."""

from __future__ import annotations

import enum
from dataclasses import dataclass, fields


class Capability(enum.Flag):
    """Optional features a device may have. Test with ``Capability.F16 in device.capabilities``."""

    NONE = 0
    F16 = enum.auto()  # WGSL f16 (WebGPU feature "shader-f16")
    SUBGROUPS = enum.auto()  # subgroup operations ("subgroups"/"subgroup")
    TIMESTAMP_QUERY = enum.auto()  # GPU timestamps ("timestamp-query")
    FLOAT64 = enum.auto()  # float64 arrays (native on cpu; emulated over u32 words on WebGPU devices)
    INT64 = enum.auto()  # int64/uint64 arrays (native on cpu; emulated on WebGPU devices)
    UNIFIED_MEMORY = enum.auto()  # host and device share memory (cpu, software adapters)
    SOFTWARE = enum.auto()  # a CPU implementation of a GPU API (lavapipe, llvmpipe, SwiftShader)
    DATA_DEPENDENT_SHAPES = enum.auto()  # unique/nonzero/boolean masks produce arrays
    KERNELS_RUN_REFERENCE = enum.auto()  # custom kernels run their NumPy reference (cpu)
    COMPLEX = enum.auto()  # complex64/complex128 arrays
    # the 64-bit dtypes are emulated in WGSL (WebGPU devices): exact, but several times
    # slower than their 32-bit peers. With FLOAT64 it makes float32 / complex64 the default
    # floats under the default dtype policy ("fast"; pyaccel.set_dtype_policy("exact")
    # restores float64); pyaccel.set_dtype_policy("downcast") maps every 64-bit dtype to 32 bits
    EMULATED_64 = enum.auto()

    # Aliases in the spelling the issue/docs use.
    f16 = F16
    subgroups = SUBGROUPS
    timestamp_query = TIMESTAMP_QUERY
    float64 = FLOAT64
    int64 = INT64
    unified_memory = UNIFIED_MEMORY

    def names(self) -> list[str]:
        """Lower-case names of the set flags."""
        return [m.name.lower() for m in Capability if m.value and m in self and m.name.isupper()]


# WebGPU feature names -> capability flags (wgpu-native spells subgroups "subgroup").
FEATURE_FLAGS: dict[str, Capability] = {
    "shader-f16": Capability.F16,
    "subgroups": Capability.SUBGROUPS,
    "subgroup": Capability.SUBGROUPS,
    "timestamp-query": Capability.TIMESTAMP_QUERY,
}


@dataclass(frozen=True)
class Limits:
    """Hard limits of a device (bytes and counts). Fields mirror WebGPU limit names."""

    max_buffer_size: int = 256 * 2**20
    max_storage_binding_size: int = 128 * 2**20
    max_uniform_binding_size: int = 64 * 2**10
    max_storage_buffers_per_stage: int = 8
    max_workgroup_size_x: int = 256
    max_workgroup_size_y: int = 256
    max_workgroup_size_z: int = 64
    max_invocations_per_workgroup: int = 256
    max_workgroups_per_dimension: int = 65535
    max_workgroup_storage_size: int = 16384
    min_storage_offset_alignment: int = 256
    min_uniform_offset_alignment: int = 256

    # WebGPU limit key -> field name
    _WEBGPU_KEYS = {
        "max-buffer-size": "max_buffer_size",
        "max-storage-buffer-binding-size": "max_storage_binding_size",
        "max-uniform-buffer-binding-size": "max_uniform_binding_size",
        "max-storage-buffers-per-shader-stage": "max_storage_buffers_per_stage",
        "max-compute-workgroup-size-x": "max_workgroup_size_x",
        "max-compute-workgroup-size-y": "max_workgroup_size_y",
        "max-compute-workgroup-size-z": "max_workgroup_size_z",
        "max-compute-invocations-per-workgroup": "max_invocations_per_workgroup",
        "max-compute-workgroups-per-dimension": "max_workgroups_per_dimension",
        "max-compute-workgroup-storage-size": "max_workgroup_storage_size",
        "min-storage-buffer-offset-alignment": "min_storage_offset_alignment",
        "min-uniform-buffer-offset-alignment": "min_uniform_offset_alignment",
    }

    @classmethod
    def from_webgpu(cls, limits: dict) -> Limits:
        """Build from a WebGPU limits mapping (kebab-case or camelCase keys)."""
        kw = {}
        for key, name in cls._WEBGPU_KEYS.items():
            camel = key.split("-")[0] + "".join(w.capitalize() for w in key.split("-")[1:])
            for k in (key, camel, key.replace("-", "_")):
                if k in limits:
                    kw[name] = int(limits[k])
                    break
        return cls(**kw)

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


# Unbounded-ish limits for the NumPy backend (host memory is the real limit).
CPU_LIMITS = Limits(
    max_buffer_size=2**62,
    max_storage_binding_size=2**62,
    max_uniform_binding_size=2**62,
    max_storage_buffers_per_stage=2**31 - 1,
    max_workgroup_size_x=2**31 - 1,
    max_workgroup_size_y=2**31 - 1,
    max_workgroup_size_z=2**31 - 1,
    max_invocations_per_workgroup=2**31 - 1,
    max_workgroups_per_dimension=2**31 - 1,
    max_workgroup_storage_size=2**31 - 1,
    min_storage_offset_alignment=1,
    min_uniform_offset_alignment=1,
)
