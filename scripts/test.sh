#!/bin/bash
# The test suite (CPU): translation, golden Rust, real maturin builds, Tile IR and sm_90 cubins.
# GPU tests (tests/gpu) skip themselves without a GPU; tests/gpu/run.sh runs them on one.
source "$(dirname "$0")/install.sh"
python -m pytest tests -q "$@"
