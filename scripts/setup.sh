#!/usr/bin/env bash
# Set up everything pyaccel's demo and tests need on a fresh Debian/Ubuntu machine.
# Idempotent: each step is skipped when its inputs have not changed (stamps in .stamps/).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
STAMPS=$ROOT/.stamps
mkdir -p "$STAMPS"
log() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"

# 1. System packages: software Vulkan (lavapipe) + loader, Chromium for the browser tests,
APT_PKGS=(mesa-vulkan-drivers libvulkan1 chromium)
missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
else
  log "apt packages present"
fi

# 2. Python virtualenv from the pinned lock file.
PY=${PYACCEL_PYTHON:-python3}
want="$(sha256sum requirements.lock pyproject.toml | sha256sum | cut -c1-16)-$($PY -c 'import sys;print(sys.version.split()[0])')"
if [ ! -x .venv/bin/python ] || [ "$(cat "$STAMPS/venv" 2>/dev/null)" != "$want" ]; then
  log "creating .venv ($($PY --version)) from requirements.lock"
  [ -x .venv/bin/python ] || $PY -m venv .venv
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.lock
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -e .
  echo "$want" > "$STAMPS/venv"
else
  log ".venv up to date"
fi

# 3. Node packages (Vite, Pyodide runtime) from package-lock.json.
if [ -f package-lock.json ]; then
  want="$(sha256sum package-lock.json | cut -c1-16)"
  if [ ! -d node_modules ] || [ "$(cat "$STAMPS/npm" 2>/dev/null)" != "$want" ]; then
    log "npm ci"
    npm ci --no-audit --no-fund --loglevel=error
    echo "$want" > "$STAMPS/npm"
  else
    log "node_modules up to date"
  fi
fi

# 4. The browser distribution (pyaccel wheel + Pyodide lock, built with hatchling and pyodide-build in
#    .venv-wasm, which wasm/build.py creates from wasm/requirements-build.lock) and the static site.
if [ -f wasm/build.py ] && [ -f package.json ]; then
  want="$(cat pyproject.toml package-lock.json vite.config.js $(git ls-files -co --exclude-standard pyaccel web wasm | grep -v '^web/dist' | sort) 2>/dev/null | sha256sum | cut -c1-16)"
  if [ ! -f web/dist/index.html ] || [ "$(cat "$STAMPS/web" 2>/dev/null)" != "$want" ]; then
    log "building the browser distribution (npm run build: wasm/build.py as prebuild, then vite build)"
    PYTHON=.venv/bin/python npm run --silent build
    echo "$want" > "$STAMPS/web"
  else
    log "web/dist up to date"
  fi
  # 5. The JupyterLite site (pyaccel's Pyodide folder + the kernel's wheels), for the browser tests.
  lite_want="$want-$(sha256sum web/public/pyodide/pyodide-lock.json 2>/dev/null | cut -c1-16)"
  if [ ! -f web/dist-jupyterlite/jupyter-lite.json ] || [ "$(cat "$STAMPS/jupyterlite" 2>/dev/null)" != "$lite_want" ]; then
    log "building the JupyterLite site (npm run build:jupyterlite -> web/dist-jupyterlite/)"
    PYTHON=.venv/bin/python npm run --silent build:jupyterlite
    echo "$want-$(sha256sum web/public/pyodide/pyodide-lock.json | cut -c1-16)" > "$STAMPS/jupyterlite"
  else
    log "web/dist-jupyterlite up to date"
  fi
fi
log "done"
