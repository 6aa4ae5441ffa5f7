"""Rust extension vs cuTile Python on the examples' cases, side by side in one run.

    python benchmarks/bench_examples.py [--runs 50] [--out PREFIX]

Needs a GPU and the example extension installed (`tilebridge build examples/*.py
-m tilebridge_examples`). Run it in a fresh process: the first-launch columns are JIT
times only then. Prints ratios; it asserts nothing. `--out` also writes PREFIX.md, .json
and .png (`tilebridge.verifier.report`), with the copy bandwidth and matmul rate measured in
the same run.
"""

import argparse
import os
import statistics
from pathlib import Path

# First launches compile from scratch on both sides: both disk caches off.
os.environ.setdefault("CUDA_TILE_CACHE_DIR", "off")
os.environ.setdefault("TILEBRIDGE_CACHE_DIR", "off")

import cuda.tile as ct
import torch

import tilebridge as tb
from tilebridge.verifier.bench import host_costs_us, print_table, time_case
from tilebridge.verifier.report import Run, measure_roofline
from tilebridge.verifier.check import load_cases
from tilebridge.translator.frontend import import_file

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--out", help="write the run to OUT.md, OUT.json and OUT.png")
    args = parser.parse_args()
    ext = tb.load("tilebridge_examples")
    print(f"GPU: {torch.cuda.get_device_name()}; {args.runs} timed launches per side, 3 interleaved rounds")
    rows = [time_case(ext, k, g, a, runs=args.runs) for path in EXAMPLES for k, g, a in load_cases(path)]
    print_table(rows)
    vector_add = import_file(EXAMPLES[0].parent / "vector_add.py").vector_add
    n = 4096
    a, b, c = torch.ones(n, device="cuda"), torch.ones(n, device="cuda"), torch.empty(n, device="cuda")
    stream = torch.cuda.current_stream()
    kernels = tb.kernels(ext)
    ha, hb, hc = (tb.Tensor.from_torch(t) for t in (a, b, c))
    pendings = []

    def handle_launch():
        pendings.append(kernels.vector_add.launch((n // 1024,), ha, hb, hc, TILE=1024))
        if len(pendings) > 64:  # sync in batches, off the measured path's critical part
            pendings.pop(0).sync()

    def sync_handles():
        while pendings:
            pendings.pop().sync()

    costs = host_costs_us({
        "cuTile Python ct.launch": lambda: ct.launch(stream, (n // 1024,), vector_add, (a, b, c, 1024)),
        "Rust via tb.launch (ct.launch)": lambda: tb.launch(ext, stream, (n // 1024,), vector_add, (a, b, c, 1024)),
        "Rust launcher called directly": lambda: ext.vector_add((n // 1024,), a, b, c, TILE=1024, sync=False),
        "Rust, ownership-tracked handles": handle_launch,
        "torch.add(out=), for scale": lambda: torch.add(a, b, out=c),
    }, after_round=sync_handles)
    medians = {name: statistics.median(us) for name, us in costs.items()}
    reference = medians["cuTile Python ct.launch"]
    rounds = len(next(iter(costs.values())))
    print(f"host cost of one enqueued launch (vector_add, 3 torch arrays, 4 blocks, no syncs), median of {rounds} "
          "interleaved rounds of 1000 calls (min-max):")
    for name, us in costs.items():
        print(f"  {name:<34} {medians[name]:7.2f} us  ({medians[name] / reference:.2f}x ct.launch; "
              f"{min(us):.2f}-{max(us):.2f})")
    # A small launch end to end: enqueue it and wait for it (2^16 elements).
    n = 1 << 16
    a, b, c = torch.ones(n, device="cuda"), torch.ones(n, device="cuda"), torch.empty(n, device="cuda")
    sync = torch.cuda.synchronize
    end_to_end = host_costs_us({
        "cuTile Python ct.launch + sync": lambda: (ct.launch(stream, (n // 1024,), vector_add, (a, b, c, 1024)), sync()),
        "Rust launcher, sync=True": lambda: ext.vector_add((n // 1024,), a, b, c, TILE=1024),
        "torch.add(out=) + sync": lambda: (torch.add(a, b, out=c), sync()),
    }, launches=300)
    print(f"end to end, one launch of 2^16 elements and its wait, median of {rounds} rounds:")
    for name, us in end_to_end.items():
        print(f"  {name:<34} {statistics.median(us):7.2f} us")
    if args.out:
        run = Run.here(rows, roofline=measure_roofline(), host_us=costs, end_to_end_us=end_to_end)
        print("wrote", ", ".join(map(str, run.write(args.out))))

if __name__ == "__main__":
    main()
