#!/bin/bash
# TileGym's own correctness tests, with the kernels tilebridge translated running in Rust
# (tests/gpu/tilegym_plugin.py, tb.use_rust), then TileGym's operators timed Rust vs cuTile Python.
#   run(command="bash tests/gpu/tilegym.sh", carry=[".gpu", ".tilegym"])
# (GPU_DIR=.gpu-b: a second folder packed like .gpu, for a second call while the machine is warm.)
# .tilegym/tilegym.tar.xz holds src/ and tests/ of one TileGym snapshot; .gpu/wheels holds the
# extension built from that src/ (`tilebridge build --partial -m tilebridge_tilegym ...`).
set -uo pipefail
REPO=$PWD
source ${GPU_DIR:-.gpu}/env.sh || exit 1
OUT=${OUT:-/tmp/tilebridge-out}; mkdir -p "$OUT"
T=/tmp/tilegym-src; rm -rf $T; mkdir -p $T && tar -xJf .tilegym/tilegym.tar.xz -C $T || exit 1
TESTS=${TILEGYM_TESTS:-"tests/ops/test_softmax.py tests/ops/test_bmm.py tests/ops/test_matmul.py tests/ops/test_swiglu.py tests/ops/test_rms_norm.py
  tests/ops/test_layer_norm_legacy.py tests/ops/test_silu_and_mul.py tests/ops/activation/test_gelu.py
  tests/ops/activation/test_relu.py tests/ops/activation/test_geglu.py tests/ops/test_dropout.py tests/ops/test_rope.py
  tests/ops/test_attention.py tests/ops/test_flash_decode.py tests/ops/test_mla.py tests/ops/test_mla_decoding.py
  tests/ops/test_mla_decoding_split_kv.py tests/ops/test_gemma_attention_decode.py"}
# test_op cases only (test_perf is timing).
SELECT=${TILEGYM_SELECT:-"test_op"}
rm -f "$OUT/routing.jsonl"
(cd $T && PYTHONPATH=$T/src:$REPO/tests/gpu:$PYTHONPATH timeout ${TILEGYM_TIMEOUT:-300} python3 -m pytest $TESTS \
   -k "$SELECT" -n 16 -q -p no:cacheprovider -p tilegym_plugin --rust-ext ${TILEGYM_EXT:-tilebridge_tilegym} \
   --routing-log "$OUT/routing.jsonl" 2>&1 | tail -40 > "$OUT/tilegym_pytest.txt")
python3 tests/gpu/tilegym_summary.py "$OUT/routing.jsonl" 2>&1 | tee "$OUT/tilegym.txt"
for ext in ${TILEGYM_BENCH_EXTS:-${TILEGYM_EXT:-tilebridge_tilegym}}; do
  PYTHONPATH=$T/src:$PYTHONPATH timeout 200 python3 benchmarks/bench_tilegym.py --ext $ext 2>&1 | tee "$OUT/bench_$ext.txt"
done
# The fixtures with inputs (tests/fixtures/checked_ops.py), against cuTile Python, where their wheel came along.
python3 -m pytest tests/gpu/test_fixtures.py -q -rA -p no:cacheprovider 2>&1 | tee "$OUT/fixtures.txt"
