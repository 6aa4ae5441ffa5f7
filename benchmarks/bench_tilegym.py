"""TileGym's operators, their Rust twins vs cuTile Python: kernel time side by side in one run.

    PYTHONPATH=<tilegym>/src python benchmarks/bench_tilegym.py --ext tilebridge_tilegym

Each case calls one TileGym operator once while recording its `ct.launch` calls (kernel,
grid, arguments: TileGym's own specialization and tiles), then times every recorded launch
whose kernel the extension has, Rust vs cuTile Python, on the same arguments
(`tilebridge.bench.time_case`: CUDA events behind a GPU sleep, 3 interleaved rounds).
Prints a table with the geometric mean of the ratios; nothing here passes or fails.
"""

from __future__ import annotations

import argparse
import json
import os

import torch

import tilebridge as tb
from tilebridge.bench import print_table, time_case


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


def recorded_launches(op):
    """Runs `op` once; returns its ct.launch calls as (stream, grid, kernel, args)."""
    import cuda.tile as ct

    calls, original = [], ct.launch

    def record(stream, grid, kernel, args):
        calls.append((grid, kernel, tuple(args)))
        return original(stream, grid, kernel, args)

    ct.launch = record
    try:
        op()
    finally:
        ct.launch = original
    return calls


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ext", default="tilebridge_tilegym")
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    ext = tb.load(args.ext)
    ours = {(info["file"], name) for name, info in json.loads(ext.__tilebridge__)["kernels"].items()}
    print(f"GPU: {torch.cuda.get_device_name()}; {args.runs} timed launches per side, 3 interleaved rounds")
    rows = []
    for label, op in cases():
        try:
            launches = recorded_launches(op)
        except Exception as e:  # an operator that does not run here is reported, not hidden
            print(f"{label}: the operator failed in cuTile Python: {type(e).__name__}: {str(e)[:200]}")
            continue
        for grid, kernel, launch_args in launches:
            fn = kernel._pyfunc
            if (os.path.basename(fn.__code__.co_filename), fn.__name__) not in ours:
                print(f"{label}: {fn.__name__} is not translated; not timed")
                continue
            try:
                row = time_case(ext, kernel, grid, launch_args, runs=args.runs)
            except Exception as e:
                print(f"{label}: {fn.__name__} failed in Rust: {type(e).__name__}: {str(e)[:300]}")
                continue
            row.description = f"{label}: {row.description}"
            rows.append(row)
    print_table(rows)


if __name__ == "__main__":
    main()
