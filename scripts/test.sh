#!/usr/bin/env bash
# Set up (idempotent) and run the whole test suite: unit tests, every backend here, the browser.
# Extra arguments go to the main pytest run (e.g. bash scripts/test.sh -k uri -x).
#
# The main session runs in parallel pytest-xdist workers (PYTEST_WORKERS, default: one per
# CPU core, at most 4; PYTEST_WORKERS=0 runs it in this process). Each worker opens every
# device once and boots the browser page once for the tests it is given.
#
# Then two more runs of the backend tests (a few minutes), each on one device:
#  * wgpu-py's public API only (PYACCEL_WGPU_DIRECT=0: no private internals, see
#    pyaccel/runtime/_wgpu_direct.py): kernel, array-op and memory tests on vulkan:0;
#  * the test-only plugin backend `testgpu` (tests/plugin_backend, registered through the
#    pyaccel.backends entry point): kernel and array-op tests on testgpu:0, unchanged.
# The script fails if any run fails. SKIP_EXTRA_RUNS=1 runs only the main suite.
#
# At the end it prints the wall time of every part, the calibration of this machine's
# software GPU (benchmarks/calibrate.py) and the peak resident memory of the test
# processes; docs/testing.md records these figures and how to scale them to another host.
set -uo pipefail
cd "$(dirname "$0")/.."
T0=$(date +%s%N)
PARTS=()
secs() { local ms=$(( ($(date +%s%N) - $1) / 1000000 )); printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)); }
part_done() {  # name start-time (from date +%s%N)
  PARTS+=("$(printf '%-58s %7s s' "$1" "$(secs "$2")")")
}
summary() {
  echo
  echo "== test.sh: wall time per part"
  for p in "${PARTS[@]}"; do echo "   $p"; done
  printf '   %-58s %7s s\n' "total" "$(secs "$T0")"
  [ -n "${CALIBRATION:-}" ] && echo "   $CALIBRATION"
}

t=$(date +%s%N)
bash scripts/setup.sh || exit 1
part_done "setup (scripts/setup.sh)" "$t"
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
chmod 700 "$XDG_RUNTIME_DIR"
PY=.venv/bin/python

t=$(date +%s%N)
.venv/bin/ruff check pyaccel tests benchmarks examples wasm conformance || exit 1
part_done "ruff" "$t"

t=$(date +%s%N)
CALIBRATION=$($PY benchmarks/calibrate.py --device vulkan:0 2>&1 | tail -1)
echo "$CALIBRATION"
part_done "calibration (benchmarks/calibrate.py)" "$t"

ncpu=$(nproc 2>/dev/null || echo 2)
WORKERS=${PYTEST_WORKERS:-$(( ncpu > 4 ? 4 : ncpu ))}
XDIST=()
[ "$WORKERS" -gt 1 ] && XDIST=(-n "$WORKERS" --dist loadgroup)

t=$(date +%s%N)
echo "== main session (${WORKERS} worker(s))"
mkdir -p artifacts
$PY -m pytest "${XDIST[@]}" --durations=15 --junitxml=artifacts/junit-main.xml "$@"
rc=$?
[ -f artifacts/junit-main.xml ] && $PY scripts/junit_summary.py artifacts/junit-main.xml 20
part_done "main pytest session (-n ${WORKERS})" "$t"
if [ "${SKIP_EXTRA_RUNS:-0}" = "1" ]; then summary; exit $rc; fi

# The reruns exercise the wgpu-py public path and the plugin backend; the 64-bit and complex
# dtype sweeps (emulated in WGSL, slow to compile on software GPUs) run in the main session on
# vulkan:0 and gl:0, so the reruns take the 8-, 16- and 32-bit dtypes.
NARROW=(-k "not int64 and not uint64 and not float64 and not complex")
BACKEND_TESTS=(tests/backends/test_kernels.py tests/backends/test_gpu_kernels.py
               tests/backends/test_array_core.py tests/backends/test_array_elementwise.py
               tests/backends/test_array_reductions.py)

t=$(date +%s%N)
echo "== backend tests again through wgpu-py's public API (PYACCEL_WGPU_DIRECT=0) on vulkan:0"
PYACCEL_WGPU_DIRECT=0 $PY -m pytest -q "${XDIST[@]}" "${BACKEND_TESTS[@]}" \
    tests/backends/test_memory.py --pyaccel-device vulkan:0 "${NARROW[@]}" || rc=1
part_done "rerun: wgpu-py public API on vulkan:0" "$t"

t=$(date +%s%N)
echo "== kernel and array-op backend tests on the test-only plugin backend testgpu:0"
PYTHONPATH="$PWD/tests/plugin_backend${PYTHONPATH:+:$PYTHONPATH}" $PY -m pytest -q "${XDIST[@]}" \
    "${BACKEND_TESTS[@]}" --pyaccel-device testgpu:0 "${NARROW[@]}" || rc=1
part_done "rerun: plugin backend testgpu:0" "$t"
summary
exit $rc
