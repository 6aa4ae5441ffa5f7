#!/bin/bash
# One GPU round on the device machine, from the repo root, after ../shared/gpu/pack.sh filled .gpu/
# (or the folder GPU_DIR names, packed the same way) with the toolchain, cuda-tile, tilebridge's
# wheel and the example extension's wheel:
#   run(command="bash tests/gpu/run.sh", carry=[".gpu"])
# Logs go to $OUT (they come back); BENCH=0 leaves the benchmarks out; the benchmark runs first, in a fresh process, so its
# first-launch column is JIT time. Every step's failure fails the round (the capture probe, a
# report, aside).
set -uo pipefail
source "${GPU_DIR:-.gpu}/env.sh" || exit 1
# tilebridge itself from this checkout, so the tests can check each extension's build key against it.
export PYTHONPATH=$PWD/python:$PYTHONPATH
OUT=${OUT:-/tmp/tilebridge-out}; mkdir -p "$OUT"
status=0
step() { local log=$1; shift; "$@" 2>&1 | tee -a "$OUT/$log"; [ "${PIPESTATUS[0]}" = 0 ] || { echo "FAILED: $*" | tee -a "$OUT/status.txt"; status=1; }; }
step gpu.txt nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
step doctor.txt python3 -m tilebridge.cli doctor
if [ "${BENCH:-1}" = 1 ]; then  # BENCH=0: a round for correctness alone
  step bench.txt python3 benchmarks/bench_examples.py --runs "${BENCH_RUNS:-50}" --out "$OUT/examples-h200"
  step profile.txt env TILEBRIDGE_PROFILE=1 python3 benchmarks/launch_profile.py
  step torch_compile.txt python3 benchmarks/torch_compile.py
fi
# A failed capture leaves torch's RNG in capture mode: graph tests get a process of their own.
step pytest.txt python3 -m pytest tests/gpu -q -rA -p no:cacheprovider -n 8 -k "not graph"
step pytest.txt python3 -m pytest tests/gpu -q -rA -p no:cacheprovider -k graph
python3 benchmarks/capture_probe.py 2>&1 | tee "$OUT/capture.txt"
step check.txt python3 -m tilebridge.cli check examples/*.py -m tilebridge_examples -j 4
echo "round status: $status" | tee -a "$OUT/status.txt"
exit $status
