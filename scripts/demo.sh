#!/bin/bash
# The main job: install, then translate the examples, build them into one extension,
# import it and, on a machine with a GPU, run each example's cases through cuTile Python and
# the Rust extension and compare.
source "$(dirname "$0")/install.sh"
tilebridge doctor || true
tilebridge check examples/*.py -m tilebridge_examples
