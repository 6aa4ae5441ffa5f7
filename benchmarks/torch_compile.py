"""A small model calling three translated kernels through `tb.torch_ops`, timed side by side:
eager, torch.compile(fullgraph=True), torch.compile(mode="reduce-overhead") (CUDA-graph replay),
and the same computation written in plain torch, eager and compiled. Each variant's output is
compared with the plain-torch one before it is timed.

    python benchmarks/torch_compile.py [--runs 200]     (GPU, example extension installed)
"""

import argparse
import time

import torch

import tilebridge as tb


class Model(torch.nn.Module):
    """softmax(x + bias) row by row, then 1.5 * silu(.) - 0.25, times 2."""

    def __init__(self, ops):
        super().__init__()
        self.ops = ops

    def forward(self, x, bias):
        rows, cols = x.shape
        summed = torch.empty_like(x)
        self.ops.vector_add((rows * cols // 1024,), x.view(-1), bias.expand(rows, cols).reshape(-1),
                            summed.view(-1), TILE=1024)
        probs = torch.empty_like(x)
        self.ops.row_softmax((rows,), summed, probs, TILE_N=1 << (cols - 1).bit_length())
        self.ops.scaled_silu_in_place(((rows * cols + 511) // 512,), probs.view(-1), 1.5, -0.25, TILE=512)
        return probs * 2


class TorchModel(torch.nn.Module):
    def forward(self, x, bias):
        return (1.5 * torch.nn.functional.silu(torch.softmax(x + bias, dim=1)) - 0.25) * 2


def per_call_ms(fn, runs: int) -> float:
    """Milliseconds per call, host and device: `runs` calls, then one synchronize."""
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(runs):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e3 / runs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    ops = tb.torch_ops(tb.load("tilebridge_examples"))
    print(f"{'shape':>12} {'variant':<34} {'ms/call':>9} {'vs eager':>9}")
    for rows, cols in ((64, 1024), (4096, 1024), (16384, 4096)):
        torch._dynamo.reset()  # each shape compiled for itself
        x = torch.randn(rows, cols, device="cuda")
        bias = torch.randn(cols, device="cuda")
        expected = TorchModel()(x, bias)
        variants = {
            "tilebridge ops, eager": Model(ops),
            "tilebridge ops, compile fullgraph": torch.compile(Model(ops), fullgraph=True),
            "tilebridge ops, reduce-overhead": torch.compile(Model(ops), mode="reduce-overhead", fullgraph=True),
            "plain torch, eager": TorchModel(),
            "plain torch, compile": torch.compile(TorchModel(), fullgraph=True),
        }
        eager = None
        for name, model in variants.items():
            out = model(x, bias).clone()
            out = model(x, bias).clone()  # reduce-overhead records on its second call
            torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)
            ms = per_call_ms(lambda: model(x, bias), args.runs)
            eager = eager or ms
            print(f"{rows:>6}x{cols:<5} {name:<34} {ms:>9.4f} {ms / eager:>9.3f}")


if __name__ == "__main__":
    main()
