#!/usr/bin/env bash
# Set up (idempotent) and run the whole test suite: unit tests, every backend here, the browser.
# Extra arguments go to the main pytest run (e.g. bash scripts/test.sh -k uri -x).
#
# Then two more runs of the backend tests (a few minutes), each on one device:
#  * wgpu-py's public API only (PYACCEL_WGPU_DIRECT=0: no private internals, see
#    pyaccel/runtime/_wgpu_direct.py): kernel, array-op and memory tests on vulkan:0;
#  * the test-only plugin backend `testgpu` (tests/plugin_backend, registered through the
#    pyaccel.backends entry point): kernel and array-op tests on testgpu:0, unchanged.
# The script fails if any run fails. SKIP_EXTRA_RUNS=1 runs only the main suite.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
chmod 700 "$XDG_RUNTIME_DIR"
.venv/bin/ruff check pyaccel tests benchmarks examples wasm conformance || exit 1
.venv/bin/python -m pytest "$@"
rc=$?
[ "${SKIP_EXTRA_RUNS:-0}" = "1" ] && exit $rc

# The reruns exercise the wgpu-py public path and the plugin backend; the 64-bit and complex
# dtype sweeps (emulated in WGSL, slow to compile on software GPUs) run in the main session on
# vulkan:0 and gl:0, so the reruns take the 8-, 16- and 32-bit dtypes.
NARROW=(-k "not int64 and not uint64 and not float64 and not complex")
BACKEND_TESTS=(tests/backends/test_kernels.py tests/backends/test_gpu_kernels.py
               tests/backends/test_array_core.py tests/backends/test_array_elementwise.py
               tests/backends/test_array_reductions.py)

echo "== backend tests again through wgpu-py's public API (PYACCEL_WGPU_DIRECT=0) on vulkan:0"
PYACCEL_WGPU_DIRECT=0 .venv/bin/python -m pytest -q "${BACKEND_TESTS[@]}" \
    tests/backends/test_memory.py --pyaccel-device vulkan:0 "${NARROW[@]}" || rc=1

echo "== kernel and array-op backend tests on the test-only plugin backend testgpu:0"
PYTHONPATH="$PWD/tests/plugin_backend${PYTHONPATH:+:$PYTHONPATH}" .venv/bin/python -m pytest -q \
    "${BACKEND_TESTS[@]}" --pyaccel-device testgpu:0 "${NARROW[@]}" || rc=1
exit $rc
