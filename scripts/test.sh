#!/usr/bin/env bash
# Set up (idempotent) and run the whole test suite: unit tests, every backend here, the browser.
# Extra arguments go to pytest (e.g. bash scripts/test.sh -k uri -x).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
chmod 700 "$XDG_RUNTIME_DIR"
.venv/bin/ruff check pyaccel tests benchmarks examples wasm conformance
exec .venv/bin/python -m pytest "$@"
