"""wgpu-py's error capture is kept on the direct wgpu-native path (issue 8, item 4).

The facade queues a compute pass's dispatches and records them when the pass ends, in one
capture of wgpu-py's ``ErrorHandler`` (``_wgpu_direct.Direct.record``). An error wgpu-native
reports during those native calls must be raised as the ``wgpu.GPUError`` subclass wgpu-py
would raise (not only logged), the handler's capture stack must stay balanced, and the
device must stay usable afterwards.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pyaccel
from pyaccel.device import Device

STEP = """
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&dst)) { dst[g.x] = src[g.x] + 1.0; }
}
"""


def _direct_facade(device: Device) -> Any:
    from pyaccel.runtime.wgpu_native import WgpuFacade

    f = getattr(device.impl, "f", None)
    if not isinstance(f, WgpuFacade) or f._direct is None:
        pytest.skip("the direct wgpu-native path only (wgpu devices, PYACCEL_WGPU_DIRECT unset)")
    return f


def _stack_depth() -> int:
    from wgpu.backends.wgpu_native._api import libf

    return len(libf._error_handler._get_proxy_stack())


def test_queued_dispatch_errors_raise_through_wgpu_capture(gpu_device: Device) -> None:
    import wgpu

    f = _direct_facade(gpu_device)
    impl = gpu_device.impl
    a, b = gpu_device.malloc(4096), gpu_device.malloc(4096)
    with impl.lock:
        impl.flush()  # (no pass of pyaccel's own is open while this test drives the facade)
        pipeline = impl.pipeline(STEP, "main")
        group = f.create_bind_group(pipeline, [(0, a._handle.buf, 0, 4096), (1, b._handle.buf, 0, 4096)])
        depth = _stack_depth()
        enc = f.create_encoder()
        cpass = f.begin_pass(enc)
        f.dispatch(cpass, pipeline, group, 16, 1, 1)
        cpass.end()  # behind the facade's back: recording the queued dispatch now fails
        with pytest.raises(wgpu.GPUValidationError, match="(?i)ended"):
            f.end_pass(cpass)
        assert _stack_depth() == depth  # capture released
        # and Direct.record itself raises what wgpu-native reports (one capture, several calls)
        with pytest.raises(wgpu.GPUValidationError, match="(?i)ended"):
            f._direct.record(cpass, [(None, group, 1, 1, 1), (None, None, 1, 1, 1)])
        assert _stack_depth() == depth
    # the device stays usable: a fresh computation is right
    x = np.random.default_rng(8).uniform(-1, 1, 4096).astype(np.float32)
    y = pyaccel.asarray(x, device=gpu_device)
    np.testing.assert_array_equal((y + y).to_numpy(), x + x)


def test_queued_dispatches_run_in_order(gpu_device: Device) -> None:
    # pipeline and bind-group changes queued between dispatches keep their order
    _direct_facade(gpu_device)
    x = np.random.default_rng(9).uniform(1, 2, 1024).astype(np.float32)
    k_add = pyaccel.Kernel(STEP, name="step")
    k_mul = pyaccel.Kernel(STEP.replace("src[g.x] + 1.0", "src[g.x] * 2.0"), name="double")
    a, b = gpu_device.malloc(x.nbytes), gpu_device.malloc(x.nbytes)
    a.write(x)
    want = x.copy()
    for i in range(40):
        k = k_add if i % 3 else k_mul
        src, dst = (a, b) if i % 2 == 0 else (b, a)
        k(src, dst, grid=x.size)
        want = want + np.float32(1) if i % 3 else want * np.float32(2)
    got = np.frombuffer(b.read() if 40 % 2 else a.read(), np.float32)
    np.testing.assert_array_equal(got, want)
