#!/usr/bin/env bash
# The main job: set up (idempotent), list the devices, run the MLP example (three dense layers +
# softmax, examples/mlp.py) on the best device here, then on every other GPU adapter for
# comparison; each run is checked against the NumPy oracle. Extra arguments go to the example
# (e.g. --device vulkan:0 --batch 1024).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
chmod 700 "$XDG_RUNTIME_DIR"
PY=.venv/bin/python
$PY -m pyaccel devices
echo
$PY examples/mlp.py "$@"
if [ $# -eq 0 ]; then
  best=$($PY -c 'import pyaccel; print(pyaccel.default_device_uri())')
  for uri in $($PY -c 'import pyaccel; print(" ".join(d.uri for d in pyaccel.devices() if d.api != "cpu"))'); do
    [ "$uri" = "$best" ] && continue
    echo
    $PY examples/mlp.py --device "$uri"
  done
fi
