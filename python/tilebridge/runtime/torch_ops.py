"""Runtime: a built extension's kernels as PyTorch custom operators, for `torch.compile` and
CUDA graphs.

    ops = tb.torch_ops(ext)                       # torch.ops.<extension module name>
    ops.vector_add((n // 1024,), a, b, c, TILE=1024)

Each kernel becomes `torch.ops.<namespace>.<kernel>(grid, *arrays_and_scalars, *, constants)
-> ()`. Launches are destination-passing, as the launcher's are: the schema marks every array the
kernel writes as mutated (`Tensor(a!)`), so functionalization keeps the op in order with the
code around it, and the fake implementation has nothing to compute (the op returns nothing).
The op runs on PyTorch's current stream (under graph capture, the capturing one). Parameters the
kernel never uses are left out of the op.
"""

from __future__ import annotations

import string
from typing import Any

from ..errors import ArgumentError
from ..metadata import KernelMetadata, ParamMetadata
from .launch import extension_metadata

# One library per namespace, kept alive (a dropped torch.library.Library unregisters its ops).
_LIBRARIES: dict[str, tuple[str, Any]] = {}


def torch_ops(ext, namespace: str | None = None):
    """Registers every kernel of `ext` as a custom operator in `namespace` (default: the
    extension's module name) and returns `torch.ops.<namespace>`. Registering the same extension
    again returns the same operators; another extension in a taken namespace is an error."""
    import torch

    namespace = namespace or ext.__name__.rpartition(".")[2]
    taken = _LIBRARIES.get(namespace)
    if taken is not None:
        if taken[0] != ext.__name__:
            raise ArgumentError(f"the torch namespace '{namespace}' already holds the kernels of {taken[0]}; "
                                f"give {ext.__name__} another (torch_ops(ext, namespace=...))")
        return getattr(torch.ops, namespace)
    lib = torch.library.Library(namespace, "DEF")
    for name, kernel in sorted(extension_metadata(ext).kernels.items()):
        lib.define(schema(name, kernel))
        lib.impl(name, _launcher(getattr(ext, name), kernel), "CUDA")
        torch.library.register_fake(f"{namespace}::{name}", _nothing_to_compute, lib=lib)
    _LIBRARIES[namespace] = (ext.__name__, lib)
    return getattr(torch.ops, namespace)


def schema(name: str, kernel: KernelMetadata) -> str:
    """The operator schema of one kernel: the grid, then its parameters in order, `ct.Constant`s
    keyword-only; a written array is mutated (an alias set of its own), a runtime scalar any
    Python number."""
    letters = iter(string.ascii_lowercase)
    args, constants = [f"int[] {grid_name(kernel)}"], []
    for p in kernel.params:
        if p.kind == "unused":
            continue
        if p.is_array:
            mutated = f"({next(letters)}!)" if p.written else ""
            args.append(f"Tensor{mutated}{'[]' if p.kind == 'array_list' else ''} {p.name}")
        elif p.kind == "scalar":
            args.append(f"Scalar {p.name}")
        else:
            constants.append(f"{_constant_type(p)} {p.name}")
    return f"{name}({', '.join(args + (['*'] + constants if constants else []))}) -> ()"


def grid_name(kernel: KernelMetadata) -> str:
    """`grid`, or `grid_` where a parameter has that name."""
    names = {p.name for p in kernel.params}
    name = "grid"
    while name in names:
        name += "_"
    return name


def _constant_type(p: ParamMetadata) -> str:
    if p.dtype == "bool":
        return "bool"
    if p.dtype is not None and p.dtype.startswith(("f", "bf")):
        return "float"
    return "int"


def _launcher(fn, kernel: KernelMetadata):
    """The CUDA implementation: the schema's arguments onto the launcher (unused parameters None),
    enqueued on PyTorch's current stream."""
    grid = grid_name(kernel)
    positional = [p for p in kernel.params if not p.by_keyword]
    order = [grid] + [p.name for p in positional if p.kind != "unused"]

    def launch(*args, **kwargs):
        given = dict(zip(order, args), **kwargs)
        fn(tuple(given.pop(grid)), *[given.pop(p.name, None) for p in positional], sync=False, **given)

    return launch


def _nothing_to_compute(*args, **kwargs) -> None:
    """The fake (meta) implementation: the kernel writes only its arguments, and returns nothing."""
    return None
