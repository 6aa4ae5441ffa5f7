"""TileGym's operators, their Rust twins vs cuTile Python: kernel time side by side in one run.

    PYTHONPATH=<tilegym>/src python benchmarks/bench_tilegym.py --ext tilebridge_tilegym

Each case calls one TileGym operator once while recording its `ct.launch` calls (kernel,
grid, arguments: TileGym's own specialization and tiles), then times every recorded launch
whose kernel the extension has, Rust vs cuTile Python, on the same arguments
(`tilebridge.verifier.bench.time_case`: CUDA events behind a GPU sleep, 3 interleaved rounds).
Prints a table with the geometric mean of the ratios; nothing here passes or fails.
"""

from __future__ import annotations

import argparse
import json
import os
from unittest import mock

# First launches compile from scratch on both sides: both disk caches off.
os.environ.setdefault("CUDA_TILE_CACHE_DIR", "off")
os.environ.setdefault("TILEBRIDGE_CACHE_DIR", "off")

import torch  # noqa: E402

import tilebridge as tb  # noqa: E402
from tilebridge.verifier.bench import Timing, print_table, time_case  # noqa: E402
from tilebridge.verifier.check import copies, describe  # noqa: E402
from tilebridge.verifier.report import Run, measure_roofline  # noqa: E402


def cases():
    import tilegym
    from tilegym.ops import get_swiglu

    tilegym.set_backend("cutile")
    f16, f32 = torch.float16, torch.float32

    def rand(*shape, dtype=f16):
        return torch.randn(*shape, device="cuda", dtype=dtype)

    yield "softmax f16 4096x4096", lambda: tilegym.ops.softmax(rand(4096, 4096))
    yield "softmax f32 4096x4096", lambda: tilegym.ops.softmax(rand(4096, 4096, dtype=f32))
    yield "softmax tma f16 4096x4096", lambda: tilegym.ops.softmax(rand(4096, 4096), use_tma=True)
    yield "softmax multi-wave f16 4096x4096", lambda: tilegym.ops.softmax(rand(4096, 4096), use_multi_wave=True)
    yield "bmm f16 8x2048^3", lambda: tilegym.ops.bmm(rand(8, 2048, 2048), rand(8, 2048, 2048),
                                                       static_persistent=False)
    yield "bmm persistent f16 8x2048^3", lambda: tilegym.ops.bmm(rand(8, 2048, 2048), rand(8, 2048, 2048),
                                                                  static_persistent=True)
    yield "matmul f16 4096^3", lambda: tilegym.ops.matmul(rand(4096, 4096), rand(4096, 4096), static_persistent=False)
    yield "matmul persistent f16 4096^3", lambda: tilegym.ops.matmul(rand(4096, 4096), rand(4096, 4096),
                                                                      static_persistent=True)
    yield "matmul f32 (tf32) 4096^3", lambda: tilegym.ops.matmul(rand(4096, 4096, dtype=f32), rand(4096, 4096, dtype=f32),
                                                                  static_persistent=False)
    yield "swiglu f16 8192x4096", lambda: get_swiglu()(rand(8192, 4096), rand(8192, 4096))
    w = torch.randn(4096, device="cuda", dtype=f16)
    yield "rms_norm f16 8192x4096", lambda: tilegym.ops.rms_norm(rand(8192, 4096), (4096,), w, 1e-6)
    yield "rms_norm multi-wave f16 8192x4096", lambda: tilegym.ops.rms_norm(rand(8192, 4096), (4096,), w, 1e-6,
                                                                            mode="multi_wave_cached")
    yield "layer_norm_legacy f16 8192x4096", lambda: tilegym.ops.layer_norm_legacy(
        rand(8192, 4096), (4096,), w, torch.zeros_like(w), 1e-5)
    yield "silu_and_mul f16 8192x(2x4096)", lambda: tilegym.ops.silu_and_mul(rand(8192, 8192))
    yield "gelu f16 2^26", lambda: tilegym.ops.activation.gelu(rand(1 << 26))
    yield "relu f16 2^26", lambda: tilegym.ops.activation.relu(rand(1 << 26))
    yield "dropout f16 2^26", lambda: tilegym.ops.dropout(rand(1 << 26), seed=7, p=0.5)
    cos, sin = rand(4, 2048, 128), rand(4, 2048, 128)  # (batch, seq, head_dim), as LlamaRotaryEmbedding gives
    yield "rope (in place) f16 4x32x2048x128", lambda: tilegym.ops.apply_rope_base(
        rand(4, 2048, 32, 128).transpose(1, 2), rand(4, 2048, 8, 128).transpose(1, 2), cos, sin)
    yield "fmha causal f16 4x32x2048x128", lambda: tilegym.ops.fmha(rand(4, 32, 2048, 128), rand(4, 32, 2048, 128),
                                                                     rand(4, 32, 2048, 128), is_causal=True)
    yield "fmha_decode f16 16x32 heads, 8192 keys", lambda: tilegym.ops.fmha_decode(
        rand(16, 32, 1, 128), rand(16, 8, 8192, 128), rand(16, 8, 8192, 128), 1 / 128 ** 0.5)
    bf16 = torch.bfloat16
    wb = torch.randn(4096, device="cuda", dtype=bf16)
    yield "persistent layer_norm bf16 8192x4096", lambda: tilegym.ops.persistent_layer_norm(
        rand(8192, 4096, dtype=bf16), (4096,), wb, torch.zeros_like(wb), 1e-5)
    yield "gemma_attention causal f16 4x32x2048x128", lambda: tilegym.ops.gemma_attention(
        rand(4, 32, 2048, 128), rand(4, 32, 2048, 128), rand(4, 32, 2048, 128), is_causal=True)
    yield "attention_sink bf16 2x1024 queries, 8x8 heads, d64", lambda: tilegym.ops.attention_sink(
        rand(2, 1024, 8, 8, 64, dtype=bf16), rand(2, 1024, 8, 64, dtype=bf16), rand(2, 1024, 8, 64, dtype=bf16),
        torch.randn(64, device="cuda", dtype=torch.float32), sliding_window=128)

    def gated_delta(op, t, dtype=bf16):
        q, k = rand(1, t, 16, 128, dtype=dtype) * 0.1, rand(1, t, 16, 128, dtype=dtype) * 0.1
        g = -torch.abs(rand(1, t, 16, dtype=dtype)) * 0.5
        return op(q, k, rand(1, t, 16, 128, dtype=dtype) * 0.1, g, torch.sigmoid(rand(1, t, 16, dtype=dtype)))

    yield "chunk_gated_delta_rule bf16 T=4096 16 heads", lambda: gated_delta(tilegym.ops.chunk_gated_delta_rule, 4096)
    yield "recurrent_gated_delta_rule bf16 T=1024", lambda: gated_delta(tilegym.ops.recurrent_gated_delta_rule, 1024)

    def moe(tokens=512, hidden=2048, inter=1408, experts=64, top_k=6):
        from tilegym.ops.moe_interface import fused_moe

        weights = torch.softmax(torch.randn(tokens, top_k, device="cuda"), dim=-1).to(f16)
        ids = torch.randint(0, experts, (tokens, top_k), dtype=torch.long, device="cuda")
        return fused_moe(rand(tokens, hidden), rand(experts, 2 * inter, hidden) * 0.05,
                         rand(experts, hidden, inter) * 0.05, weights, ids)

    yield "fused_moe f16 512 tokens, 64 experts top-6", moe

    def group_gemm(groups=((4096, 4096, 4096), (2048, 4096, 4096), (1024, 4096, 4096), (512, 4096, 4096))):
        # Its kernel launched directly with the search's first sm_90 configuration: the operator
        # autotunes through cuTile Python's own benchmark, which records no ct.launch.
        import cuda.tile as ct
        from tilegym.ops.cutile.group_gemm import _group_gemm_kernel

        sms = torch.cuda.get_device_properties(0).multi_processor_count
        As, Bs = [rand(m, k) for m, k, _ in groups], [rand(k, n) for _, k, n in groups]
        Cs = [torch.empty(m, n, device="cuda", dtype=f16) for m, _, n in groups]
        ct.launch(torch.cuda.current_stream(), (sms, 1, 1), _group_gemm_kernel, (As, Bs, Cs, 128, 128, 128, sms, False))

    yield "group_gemm f16 4 groups (M 4096..512) x 4096^2", group_gemm

    # The kernels the launches above do not reach: other modes, backward passes, decoding.
    yield "softmax chunked f16 1024x32768", lambda: tilegym.ops.softmax(rand(1024, 32768), use_chunked=True)
    yield "rms_norm gather f16 8192x4096", lambda: tilegym.ops.rms_norm(rand(8192, 4096), (4096,), w, 1e-6,
                                                                        mode="multi_wave_reload")
    yield "rms_norm backward f16 8192x4096", lambda: backward(
        lambda x: tilegym.ops.rms_norm(x, (4096,), w, 1e-6), rand(8192, 4096))
    yield "swiglu backward f16 8192x4096", lambda: backward(get_swiglu(), rand(8192, 4096), rand(8192, 4096))
    yield "silu_and_mul backward f16 8192x(2x4096)", lambda: backward(tilegym.ops.silu_and_mul, rand(8192, 8192))
    yield "geglu forward and backward f16 256x64x16x128", lambda: backward(
        lambda x: tilegym.ops.activation.geglu(x, 3, "none"), rand(256, 64, 16, 128))

    def fmha_backward():
        from tilegym.ops.cutile.attention import tile_fmha_with_backward

        backward(lambda q, k, v: tile_fmha_with_backward(q, k, v, is_causal=True),
                 rand(2, 16, 2048, 128), rand(2, 16, 2048, 128), rand(2, 16, 2048, 128))

    yield "fmha backward f16 2x16x2048x128", fmha_backward
    yield "mla prefill bf16 4x16x2048, d128+64", lambda: tilegym.ops.mla(
        rand(4, 16, 2048, 128, dtype=bf16), rand(4, 16, 2048, 128, dtype=bf16), rand(4, 16, 2048, 128, dtype=bf16),
        rand(4, 16, 2048, 64, dtype=bf16), rand(4, 1, 2048, 64, dtype=bf16), True, None)

    def mla_decoding(op):
        q, qpe = rand(2, 32, 512), rand(2, 32, 64)
        return op(q, qpe, rand(2, 8192, 512), rand(2, 8192, 64), 1 / (512 + 64) ** 0.5)

    yield "mla decoding f16 2x32 heads, 8192 keys", lambda: mla_decoding(tilegym.ops.mla_decoding)
    yield "mla decoding split kv f16 2x32 heads, 8192 keys", lambda: mla_decoding(tilegym.ops.mla_decoding_split_kv)
    yield "gemma_attention decoding bf16 32x8 heads, 16384 keys", lambda: tilegym.ops.gemma_attention_decode(
        rand(1, 32, 1, 128, dtype=bf16), rand(1, 8, 16384, 128, dtype=bf16), rand(1, 8, 16384, 128, dtype=bf16),
        soft_cap=50.0)
    yield "attention_sink decoding bf16 4x64 heads, 8192 keys", lambda: tilegym.ops.attention_sink_decode(
        rand(4, 1, 8, 8, 64, dtype=bf16), rand(4, 8192, 8, 64, dtype=bf16), rand(4, 8192, 8, 64, dtype=bf16),
        torch.randn(64, device="cuda", dtype=torch.float32), 0.125, None,
        torch.tensor([8191], dtype=torch.int32, device="cuda"))

    def gated_delta_decode(b=32, h=16, d=128):
        q, k = rand(b, 1, h, d, dtype=bf16) * 0.1, rand(b, 1, h, d, dtype=bf16) * 0.1
        g = -torch.abs(rand(b, 1, h, dtype=bf16)) * 0.5
        state = torch.randn(b, h, d, d, device="cuda", dtype=torch.float32) * 0.1
        return tilegym.ops.recurrent_gated_delta_rule(q, k, rand(b, 1, h, d, dtype=bf16) * 0.1, g,
                                                      torch.sigmoid(rand(b, 1, h, dtype=bf16)), state, True, True)

    # Without the autotuner, as TileGym's tests run them: its choice between kernels is the point.
    yield "recurrent_gated_delta_rule decoding bf16 32x16 heads", lambda: without_autotune(gated_delta_decode)
    yield "recurrent_gated_delta_rule persistent bf16 T=1024", lambda: without_autotune(
        lambda: gated_delta(lambda *a: tilegym.ops.recurrent_gated_delta_rule(*a, persistent=True), 1024))


def backward(forward, *inputs):
    """Runs `forward` on `inputs` (made leaves that need gradients) and its backward pass."""
    y = forward(*(x.requires_grad_() for x in inputs))
    y.backward(torch.randn_like(y))


def without_autotune(op):
    """Runs `op` with TileGym's autotuner off (its fixed configuration, as in TileGym's tests)."""
    with mock.patch.dict(os.environ, {"TILEGYM_DISABLE_AUTOTUNE": "1"}):
        return op()


def recorded_launches(op):
    """Runs `op` once; returns its ct.launch calls as (grid, kernel, args), each launch's arrays
    copied as it found them: timing a launch runs it hundreds of times, and one that updates an
    array a later launch reads (moe_align's counts and sorted ids, read by the fused moe kernel)
    would otherwise hand that launch what no real call gives it."""
    import cuda.tile as ct

    calls, original = [], ct.launch

    def record(stream, grid, kernel, args):
        calls.append((grid, kernel, tuple(copies(args))))
        return original(stream, grid, kernel, args)

    ct.launch = record
    try:
        op()
    finally:
        ct.launch = original
    return calls


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ext", default="tilebridge_tilegym", help="extensions, comma-separated")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("-k", "--only", action="append", default=[], metavar="WORD",
                        help="only the cases whose label contains this word; repeatable")
    parser.add_argument("--out", help="write the run to OUT.md, OUT.json and OUT.png")
    args = parser.parse_args()
    roofline = measure_roofline() if args.out else None
    exts = {(info["file"], name): ext for ext in map(tb.load, args.ext.split(","))
            for name, info in json.loads(ext.__tilebridge__)["kernels"].items()}
    print(f"GPU: {torch.cuda.get_device_name()}; {args.runs} timed launches per side, 3 interleaved rounds")
    rows, timed = [], set()
    for label, op in cases():
        if args.only and not any(word in label for word in args.only):
            continue
        try:
            launches = recorded_launches(op)
        except Exception as e:  # an operator that does not run here is reported, not hidden
            print(f"{label}: the operator failed in cuTile Python: {type(e).__name__}: {str(e)[:200]}")
            continue
        for grid, kernel, launch_args in launches:
            fn = kernel._pyfunc
            key = (fn.__name__, tuple(grid), describe(launch_args))
            if key in timed:  # a backward case's forward launch, timed in its own case
                continue
            timed.add(key)
            ext = exts.get((os.path.basename(fn.__code__.co_filename), fn.__name__))
            if ext is None:  # listed in the table, not dropped
                rows.append(Timing(fn.__name__, label, error="not translated: not timed"))
                continue
            row = time_case(ext, kernel, grid, launch_args, runs=args.runs)
            row.description = f"{label}: {row.description}"
            rows.append(row)
            # each row as it comes: a run cut short keeps what it measured
            print(f"measured {label}: {row.kernel} " + (f"rs/py {row.ratio:.3f} ({row.py_ms:.4f} vs {row.rs_ms:.4f} "
                  f"ms), outputs {row.agreement}" if row.timed else row.error), flush=True)
            if args.out:  # written after every launch: a run cut short keeps what it measured
                Run.here(rows, roofline=roofline).write(args.out, draw=False)
    print_table(rows)
    if args.out:
        print("wrote", ", ".join(map(str, Run.here(rows, roofline=roofline).write(args.out))))


if __name__ == "__main__":
    main()
