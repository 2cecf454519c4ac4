"""Backend-specific extras next to the portable API (like Iris' ``iris.backend.hip``).

* :mod:`pyaccel.extras.wgpu`: the wgpu-py ``GPUBuffer`` / ``GPUDevice`` behind an array
  or device, and arrays over existing wgpu buffers (zero-copy; native devices only);
* :mod:`pyaccel.extras.dask`: registers pyaccel Arrays as a Dask chunk type (done
  automatically when both are imported; ``register()`` does it explicitly).

Each submodule is imported on its own; importing ``pyaccel.extras`` loads none of them.
"""
