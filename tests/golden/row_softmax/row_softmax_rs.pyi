"""Launchers for the cuTile Rust kernels translated by tilebridge from row_softmax.py.

Each launcher takes the grid and the arguments as `ct.launch` does, with the
`ct.Constant` values by keyword. Arrays are torch tensors, CuPy arrays or anything
with `__cuda_array_interface__`; they cross without a copy. The launch runs on
`stream` (default: the current stream of the arrays' framework) and, unless
`sync=False`, waits for the kernel. `hints=(occupancy, num_ctas, num_worker_warps)`
(each int or None) overrides the kernel's own hints for this launch. `after=[...]`
(what ownership-tracked handles pass) makes the launch follow those earlier launches
where they ran on another stream, and returns the launch's own `Completion`.
"""

from collections.abc import Sequence
from typing import Any, Protocol, Union

Grid = Union[int, tuple[int], tuple[int, int], tuple[int, int, int]]
CudaArray = Any


class Completion(Protocol):
    """When a launch's work has run (an event recorded on its stream after it)."""

    stream: int
    device: int
    captured: bool

    def done(self) -> bool: ...
    def wait(self) -> None: ...
    def block(self, stream: int) -> None: ...

def row_softmax(grid: Grid, x: CudaArray, y: CudaArray, *, TILE_N: int, stream: object | None = None, sync: bool = True, hints: tuple[int | None, int | None, int | None] | None = None, after: Sequence[Completion] | None = None) -> Completion | None:
    """Launches `row_softmax` (row_softmax.py:7); see the module docstring."""

def _compile_only(kernel: str, generics: list[str], strides: list[tuple[str, list[int]]], target: str = "sm_90",
                  hints: tuple[int | None, int | None, int | None] | None = None,
                  arrays: list[tuple[str, list[int], list[int], int, int]] | None = None) -> tuple[str, bytes]: ...
def _profile() -> tuple[int, list[tuple[str, int]]]: ...
