"""The PyTorch operator schema of each kernel (`tb.torch_ops`): written arrays mutated, constants
keyword-only, unused parameters left out. The operators themselves run in tests/gpu/test_torch_ops.py."""

import pytest

from tilebridge.metadata import KernelMetadata, ParamMetadata
from tilebridge.runtime.launch import extension_metadata
from tilebridge.runtime.torch_ops import schema

EXAMPLES = {
    "vector_add": "vector_add(int[] grid, Tensor a, Tensor b, Tensor(a!) c, *, int TILE) -> ()",
    "scaled_silu": "scaled_silu(int[] grid, Tensor x, Tensor(a!) y, Scalar alpha, Scalar beta, *, int TILE) -> ()",
    "scaled_silu_in_place": "scaled_silu_in_place(int[] grid, Tensor(a!) x, Scalar alpha, Scalar beta, *, int TILE) -> ()",
    "row_softmax": "row_softmax(int[] grid, Tensor x, Tensor(a!) y, *, int TILE_N) -> ()",
}


def test_the_examples_schemas(examples_ext):
    kernels = extension_metadata(examples_ext).kernels
    assert {name: schema(name, kernels[name]) for name in EXAMPLES} == EXAMPLES


def test_lists_two_outputs_unused_parameters_and_a_parameter_named_grid():
    kernel = KernelMetadata("k.py", 1, (
        ParamMetadata("grid", "array", rank=1, written=False, dtype_class="E0"),
        ParamMetadata("Xs", "array_list", rank=2, written=False, dtype_class="E0"),
        ParamMetadata("Ys", "array_list", rank=2, written=True, dtype_class="E0"),
        ParamMetadata("out", "array", rank=1, written=True, dtype_class="E0"),
        ParamMetadata("ignored", "unused"),
        ParamMetadata("n", "scalar", dtype="i32"),
        ParamMetadata("EPS", "constant", dtype="f32"),
        ParamMetadata("FLAG", "constant", dtype="bool"),
    ))
    assert schema("k", kernel) == ("k(int[] grid_, Tensor grid, Tensor[] Xs, Tensor(a!)[] Ys, Tensor(b!) out, "
                                   "Scalar n, *, float EPS, bool FLAG) -> ()")


def test_the_schemas_parse_in_torch(examples_ext):
    torch = pytest.importorskip("torch")
    for name, kernel in extension_metadata(examples_ext).kernels.items():
        parsed = torch._C.parse_schema(schema(name, kernel))
        written = {p.name for p in kernel.params if p.written}
        assert {a.name for a in parsed.arguments if a.alias_info and a.alias_info.is_write} == written
