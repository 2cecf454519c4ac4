"""Backend runtimes: one small module per backend (cpu, wgpu_native, browser) plus the
WebGPU logic both GPU backends share (webgpu_common). Importing this package loads nothing."""
