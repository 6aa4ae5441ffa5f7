#!/bin/bash
# TileGym's own correctness tests, with the kernels tilebridge translated running in Rust
# (tests/gpu/tilegym_plugin.py, tb.use_rust), every launch's specialization logged, then TileGym's
# operators timed Rust vs cuTile Python.
#   run(command="bash tests/gpu/tilegym.sh", carry=[".gpu", ".tilegym"])
# .tilegym/tilegym.tar.xz holds src/ and tests/ of one TileGym snapshot; .gpu/wheels holds the
# extensions built from that src/ (TILEGYM_EXTS, comma-separated: kernels of one name from two
# files need two extensions; TILEGYM_EXTS= (empty) runs every kernel in cuTile Python and only
# records the launches). Parts of a round, for calls under the time limit:
#   GPU_DIR    a folder packed like .gpu (pack.sh --no-toolchain, for a second call while warm)
#   TILEGYM_TESTS  the test files;  TILEGYM_BENCH=0 skips the benchmark;  TILEGYM_FIXTURES=0 the fixtures
#   TILEGYM_TARBALL, TILEGYM_UNPACK, TILEGYM_WORKERS  another snapshot, where it unpacks, pytest's -n
set -uo pipefail
REPO=$PWD
source ${GPU_DIR:-.gpu}/env.sh || exit 1
OUT=${OUT:-/tmp/tilebridge-out}; mkdir -p "$OUT"
T=${TILEGYM_UNPACK:-/tmp/tilegym-src}; rm -rf $T; mkdir -p $T && tar -xJf ${TILEGYM_TARBALL:-.tilegym/tilegym.tar.xz} -C $T || exit 1
EXTS=${TILEGYM_EXTS-tilebridge_tilegym,tilebridge_tilegym_splitkv}
TESTS=${TILEGYM_TESTS:-"tests/ops/test_softmax.py tests/ops/test_bmm.py tests/ops/test_matmul.py tests/ops/test_swiglu.py tests/ops/test_rms_norm.py
  tests/ops/test_layer_norm_legacy.py tests/ops/test_silu_and_mul.py tests/ops/activation/test_gelu.py
  tests/ops/activation/test_relu.py tests/ops/activation/test_geglu.py tests/ops/test_dropout.py tests/ops/test_rope.py
  tests/ops/test_attention.py tests/ops/test_flash_decode.py tests/ops/test_mla.py tests/ops/test_mla_decoding.py
  tests/ops/test_mla_decoding_split_kv.py tests/ops/test_gemma_attention_decode.py tests/ops/test_gemma_attention.py
  tests/ops/test_attention_sink.py tests/ops/test_splitk_reduce.py tests/ops/test_moe.py
  tests/ops/test_recurrent_gated_delta_rule.py tests/ops/test_chunk_gated_delta_rule.py"}
# test_op cases only (test_perf is timing); TileGym's own switch keeps its autotuners to one configuration.
SELECT=${TILEGYM_SELECT:-"test_op"}
PART=${TILEGYM_PART:-all}
# Every step's status counts (pipes keep the command's, not tee's); a run cut off by its timeout
# (exit 124) is a failure, said so, not a short log.
status=0
check() { local rc=$1 what=$2; [ "$rc" = 0 ] && return; [ "$rc" = 124 ] && what="$what: cut off by its timeout"
  echo "FAILED ($rc): $what" | tee -a "$OUT/status.txt"; status=1; }
(cd $T && TILEGYM_DISABLE_AUTOTUNE=1 PYTHONPATH=$T/src:$REPO/tests/gpu:$PYTHONPATH timeout ${TILEGYM_TIMEOUT:-300} \
   python3 -m pytest $TESTS -k "$SELECT" -n ${TILEGYM_WORKERS:-16} -q -p no:cacheprovider -p tilegym_plugin --rust-ext "$EXTS" \
   --routing-log "$OUT/routing_$PART.jsonl" --launch-log "$OUT/launches_$PART.jsonl" > "$OUT/tilegym_pytest_$PART.txt" 2>&1)
check $? "TileGym's tests ($PART; whole log: tilegym_pytest_$PART.txt)"
tail -40 "$OUT/tilegym_pytest_$PART.txt"
python3 tests/gpu/tilegym_summary.py "$OUT/routing_$PART.jsonl" 2>&1 | tee "$OUT/tilegym_$PART.txt"
check "${PIPESTATUS[0]}" "tilegym_summary: a failed test or an empty log"
if [ "${TILEGYM_BENCH:-1}" = 1 ]; then
  PYTHONPATH=$T/src:$PYTHONPATH timeout ${TILEGYM_BENCH_TIMEOUT:-240} python3 benchmarks/bench_tilegym.py --ext "$EXTS" --out "$OUT/tilegym-h200" \
    ${TILEGYM_BENCH_ONLY:+$(printf -- '-k %s ' $TILEGYM_BENCH_ONLY)} 2>&1 \
    | tee "$OUT/bench_tilegym.txt"
  check "${PIPESTATUS[0]}" "bench_tilegym"
fi
# The fixtures with inputs (tests/fixtures/checked_ops.py), against cuTile Python, where their wheel came along.
# With them, the TileGym kernels whose own tests cannot reach Rust, launched directly (test_tilegym_direct.py).
if [ "${TILEGYM_FIXTURES:-1}" = 1 ]; then
  PYTHONPATH=$T/src:$PYTHONPATH python3 -m pytest tests/gpu/test_fixtures.py tests/gpu/test_tilegym_direct.py -q -rA \
    -p no:cacheprovider 2>&1 | tee "$OUT/fixtures.txt"
  check "${PIPESTATUS[0]}" "fixtures and direct TileGym launches"
fi
echo "round status: $status" | tee -a "$OUT/status.txt"
exit $status
