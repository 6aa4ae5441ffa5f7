#!/bin/bash
# Installs what tilebridge needs on a fresh Debian/Ubuntu machine with Rust and Python 3.10+:
# libclang (cutile's bindgen), a virtual environment with tilebridge and NVIDIA's CUDA wheels.
# Sourced by demo.sh and test.sh; safe to run again (each step is skipped when done).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export TILEBRIDGE_VENV=${TILEBRIDGE_VENV:-$HOME/.cache/tilebridge/venv}
# One cargo target folder outside the checkout, shared by every build: cutile compiles once.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/tilebridge/target}

command -v cargo >/dev/null || { echo "install.sh: cargo not found; install Rust (https://rustup.rs)" >&2; exit 1; }
command -v rustfmt >/dev/null || rustup component add rustfmt
if ! ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1; then
  SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq libclang-dev >/dev/null
fi
[ -x "$TILEBRIDGE_VENV/bin/python" ] || python3 -m venv "$TILEBRIDGE_VENV"
"$TILEBRIDGE_VENV/bin/python" -m pip install -q --upgrade pip
"$TILEBRIDGE_VENV/bin/python" -m pip install -q -e "$ROOT[dev]"
# TileGym's kernels are the translator's benchmark; read from where pip puts them, never run
# (without its dependencies: torch is not needed to translate).
"$TILEBRIDGE_VENV/bin/python" -m pip install -q --no-deps "tilegym==1.5.1"
export PATH="$TILEBRIDGE_VENV/bin:$PATH"
cd "$ROOT"
