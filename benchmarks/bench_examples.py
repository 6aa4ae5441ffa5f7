"""Rust extension vs cuTile Python on the examples' cases, side by side in one run.

    python benchmarks/bench_examples.py [--runs 50]

Needs a GPU and the example extension installed (`tilebridge build examples/*.py
-m tilebridge_examples`). Run it in a fresh process: the first-launch columns are JIT
times only then. Prints ratios; it asserts nothing.
"""

import argparse
import os
from pathlib import Path

# First launches compile from scratch on both sides: both disk caches off.
os.environ.setdefault("CUDA_TILE_CACHE_DIR", "off")
os.environ.setdefault("TILEBRIDGE_CACHE_DIR", "off")

import torch

import tilebridge as tb
from tilebridge.verifier.bench import host_overhead_direct_us, host_overhead_us, print_table, time_case
from tilebridge.verifier.check import load_cases
from tilebridge.translator.frontend import import_file

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    ext = tb.load("tilebridge_examples")
    print(f"GPU: {torch.cuda.get_device_name()}; {args.runs} timed launches per side, 3 interleaved rounds")
    rows = [time_case(ext, k, g, a, runs=args.runs) for path in EXAMPLES for k, g, a in load_cases(path)]
    print_table(rows)
    vector_add = import_file(EXAMPLES[0].parent / "vector_add.py").vector_add
    n = 4096
    a, b, c = torch.ones(n, device="cuda"), torch.ones(n, device="cuda"), torch.empty(n, device="cuda")
    py_us, rs_us = host_overhead_us(ext, vector_add, (n // 1024,), (a, b, c, 1024))
    direct_us = host_overhead_direct_us(lambda: ext.vector_add((n // 1024,), a, b, c, TILE=1024, sync=False))
    print("host cost of one enqueued launch (vector_add, 3 torch arrays, 4 blocks, no syncs):")
    print(f"  cuTile Python ct.launch          {py_us:7.2f} us")
    print(f"  Rust via tb.launch (ct.launch)   {rs_us:7.2f} us  ({rs_us / py_us:.2f}x)")
    print(f"  Rust launcher called directly    {direct_us:7.2f} us  ({direct_us / py_us:.2f}x)")
    kernels = tb.kernels(ext)
    ha, hb, hc = (tb.Tensor.from_torch(t) for t in (a, b, c))
    pendings = []

    def handle_launch():
        pendings.append(kernels.vector_add.launch((n // 1024,), ha, hb, hc, TILE=1024))
        if len(pendings) > 64:  # sync in batches, off the measured path's critical part
            pendings.pop(0).sync()

    handle_us = host_overhead_direct_us(handle_launch)
    for p in pendings:
        p.sync()
    print(f"  Rust, ownership-tracked handles  {handle_us:7.2f} us  ({handle_us / py_us:.2f}x; lending and "
          f"an event cost {handle_us - direct_us:.2f} us)")


if __name__ == "__main__":
    main()
