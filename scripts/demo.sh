#!/usr/bin/env bash
# Set up (idempotent), list the devices, and run the main job on the best device here,
# checked against the NumPy oracle. Extra arguments go to the demo (e.g. --device vulkan:0).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
chmod 700 "$XDG_RUNTIME_DIR"
exec .venv/bin/python -m pyaccel demo "$@"
