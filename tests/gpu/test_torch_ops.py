"""The example extension's kernels as PyTorch custom operators: opcheck, a model under
`torch.compile(fullgraph=True)` and under CUDA-graph replay, each against eager and torch."""

from pathlib import Path

import pytest
import torch

import tilebridge as tb
from tilebridge.translator.frontend import import_file


@pytest.fixture(scope="module")
def ops(ext):
    return tb.torch_ops(ext)


def test_registering_again_gives_the_same_operators(ext, ops):
    assert tb.torch_ops(ext) is ops
    with pytest.raises(tb.ArgumentError, match="already holds the kernels of tilebridge_examples"):
        tb.torch_ops(type("other", (), {"__name__": "other_ext"}), namespace="tilebridge_examples")


def test_opcheck_passes(ops):
    x = torch.randn(4096, device="cuda")
    y = torch.randn(4096, device="cuda")
    torch.library.opcheck(ops.vector_add, ((4,), x, y, torch.empty_like(x)), {"TILE": 1024})
    rows = torch.randn(64, 1000, device="cuda", dtype=torch.float16)
    torch.library.opcheck(ops.row_softmax, ((64,), rows, torch.empty_like(rows)), {"TILE_N": 1024})
    torch.library.opcheck(ops.scaled_silu_in_place, ((8,), x.clone(), 1.5, -0.25), {"TILE": 512})


# The model benchmarks/torch_compile.py times: three translated kernels and torch ops.
BENCHMARK = import_file(Path(__file__).resolve().parents[2] / "benchmarks" / "torch_compile.py")
Model = BENCHMARK.Model


def reference(x, bias):
    return BENCHMARK.TorchModel()(x, bias)


def test_a_model_under_torch_compile_fullgraph_matches_eager(ops):
    torch._dynamo.reset()
    x = torch.randn(256, 1024, device="cuda")
    bias = torch.randn(1024, device="cuda")
    model = Model(ops)
    eager = model(x, bias)
    compiled = torch.compile(model, fullgraph=True)(x, bias)
    torch.testing.assert_close(compiled, eager, rtol=0, atol=0)
    torch.testing.assert_close(eager, reference(x, bias), rtol=1e-5, atol=1e-6)


def test_a_compiled_model_replays_as_a_cuda_graph(ops):
    torch._dynamo.reset()
    x = torch.randn(128, 1024, device="cuda")
    bias = torch.randn(1024, device="cuda")
    model = torch.compile(Model(ops), mode="reduce-overhead", fullgraph=True)
    for _ in range(3):  # warm-up runs, then recorded, then replayed
        out = model(x, bias)
    x.copy_(torch.randn_like(x))
    torch.testing.assert_close(model(x, bias).clone(), reference(x, bias), rtol=1e-5, atol=1e-6)


def test_the_eager_ops_capture_into_a_cuda_graph(ops):
    x = torch.randn(64, 1024, device="cuda")
    bias = torch.randn(1024, device="cuda")
    model = Model(ops)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        model(x, bias)  # compiled before capture
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = model(x, bias)
    x.copy_(torch.randn_like(x))
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, reference(x, bias), rtol=1e-5, atol=1e-6)
