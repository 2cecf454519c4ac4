#!/usr/bin/env bash
# Run the public array-api-tests suite (data-apis/array-api-tests) against pyaccel on one device,
# exactly as its README says: ARRAY_API_TESTS_MODULE=pyaccel, ARRAY_API_TESTS_VERSION=2024.12
# (pyaccel's __array_api_version__; set ARRAY_API_TESTS_VERSION=2023.12 for the earlier one),
# every extension and every dtype enabled, no patch to the suite. Writes a JSON report,
# conformance/results/<device>-<version>.json.
# The suite is not part of this repository: pass a checkout of it (with its array-api spec
# submodule) as AAT_DIR. Usage:
#   AAT_DIR=/path/to/array-api-tests bash conformance/run.sh cpu:0 [extra pytest args]
#   AAT_DIR=... bash conformance/run.sh vulkan:0
#   AAT_DIR=... bash conformance/run.sh numpy          # the reference: NumPy itself, same run
#   ARRAY_API_TESTS_VERSION=2023.12 AAT_DIR=... bash conformance/run.sh cpu:0
#   MAX_EXAMPLES=2 ...                                   # the reduced form (default 10)
# Then: .venv/bin/python conformance/summarize.py  (writes docs/conformance.md)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DEV=${1:?device URI (cpu:0, vulkan:0, gl:0) or numpy}; shift || true
AAT_DIR=${AAT_DIR:?set AAT_DIR to a checkout of data-apis/array-api-tests (with its submodule)}
if ! "$ROOT/.venv/bin/python" -c "import pytest_jsonreport, ndindex" 2>/dev/null; then
  "$ROOT/.venv/bin/python" -m pip install -q --disable-pip-version-check -r conformance/requirements.txt
fi
mkdir -p conformance/results
export ARRAY_API_TESTS_VERSION=${ARRAY_API_TESTS_VERSION:-2024.12}
OUT=$ROOT/conformance/results/${RESULT_NAME:-${DEV//:/_}-$ARRAY_API_TESTS_VERSION}.json
unset ARRAY_API_TESTS_SKIP_DTYPES
if [ "$DEV" = "numpy" ]; then
  export ARRAY_API_TESTS_MODULE=numpy
else
  export ARRAY_API_TESTS_MODULE=pyaccel PYACCEL_DEVICE=$DEV
fi
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
export PYTHONPATH=$ROOT${PYTHONPATH:+:$PYTHONPATH}  # this checkout's pyaccel (the venv's may be another)
cd "$AAT_DIR"
if ! git diff --quiet 2>/dev/null; then
  echo "conformance/run.sh: $AAT_DIR has local changes; the run must use the suite unpatched" >&2
  exit 2
fi
set +e
"$ROOT/.venv/bin/python" -m pytest array_api_tests/ -p no:cacheprovider -q --tb=line \
  --max-examples "${MAX_EXAMPLES:-10}" --disable-deadline \
  --json-report --json-report-file="$OUT" --json-report-omit collectors keywords \
  -o addopts="" "$@" | tail -5
rc=${PIPESTATUS[0]}
set -e
echo "report: $OUT"
# pytest exits 1 when tests fail (expected while conformance < 100 %); 2+ is a broken run
[ "$rc" -le 1 ] || exit "$rc"
