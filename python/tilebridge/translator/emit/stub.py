"""The `.pyi` stub of the extension: each launcher's Python signature, typed."""

from __future__ import annotations

from .. import ir
from ...dtypes import DTYPES
from .launcher import by_keyword


def pyi_signature(kernel: ir.KernelIR, numbers: tuple[str, ...] = ()) -> str:
    """`kernel`'s launcher signature; `numbers`: scalars it takes as int or float."""
    parts = ["grid: Grid"]
    for p in kernel.params:
        if not by_keyword(p):
            kind = ("list[CudaArray]" if isinstance(p, ir.ArrayParam) and p.listed else
                    "CudaArray" if isinstance(p, ir.ArrayParam) else "object" if isinstance(p, ir.UnusedParam)
                    else "int | float" if p.name in numbers else DTYPES[p.dtype].python_scalar)
            parts.append(f"{p.name}: {kind}")
    parts.append("*")
    for p in kernel.params:
        if by_keyword(p):
            kind = p.kind if isinstance(p, ir.ConstParam) else p.dtype
            parts.append(f"{p.name}: {DTYPES[kind].python_scalar}")
    parts += ["stream: object | None = None", "sync: bool = True",
              "hints: tuple[int | None, int | None, int | None] | None = None",
              "after: Sequence[Completion] | None = None"]
    return ", ".join(parts)


def stub(kernel: ir.KernelIR) -> dict:
    """What the stub template needs of one kernel's launcher (of its first variant, for a kernel
    translated per type of its unannotated scalars: the launcher takes them as int or float)."""
    name = kernel.public or kernel.name
    return {"name": name, "signature": pyi_signature(kernel, tuple(kernel.scalar_variant) if kernel.public else ()),
            "doc": f"Launches `{name}` ({kernel.file}:{kernel.line}); see the module docstring."}
