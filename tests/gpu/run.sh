#!/bin/bash
# One GPU round on the device machine, from the repo root, after ../shared/gpu/pack.sh filled .gpu/
# with the toolchain, cuda-tile, tilebridge's wheel and the example extension's wheel:
#   run(command="bash tests/gpu/run.sh", carry=[".gpu"])
# Logs go to $OUT (they come back); the benchmark runs first, in a fresh process, so its
# first-launch column is JIT time.
set -uo pipefail
source .gpu/env.sh || exit 1
OUT=${OUT:-/tmp/tilebridge-out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
python3 benchmarks/bench_examples.py --runs 50 2>&1 | tee "$OUT/bench.txt"
TILEBRIDGE_PROFILE=1 python3 benchmarks/launch_profile.py 2>&1 | tee "$OUT/profile.txt"
# A failed capture leaves torch's RNG in capture mode: graph tests get a process of their own.
python3 -m pytest tests/gpu -q -rA -p no:cacheprovider -k "not graph" 2>&1 | tee "$OUT/pytest.txt"
status=${PIPESTATUS[0]}
python3 -m pytest tests/gpu -q -rA -p no:cacheprovider -k graph 2>&1 | tee -a "$OUT/pytest.txt"
[ ${PIPESTATUS[0]} = 0 ] || status=1
python3 benchmarks/capture_probe.py 2>&1 | tee "$OUT/capture.txt"
python3 -m tilebridge.cli check examples/*.py -m tilebridge_examples 2>&1 | tee "$OUT/check.txt"
exit $status
