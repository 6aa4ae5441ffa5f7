"""The `.pyi` stub of the extension: each launcher's Python signature, typed."""

from __future__ import annotations

from .. import ir
from ...dtypes import DTYPES
from .launcher import by_keyword


def pyi_signature(kernel: ir.KernelIR) -> str:
    parts = ["grid: Grid"]
    for p in kernel.params:
        if not by_keyword(p):
            kind = ("list[CudaArray]" if isinstance(p, ir.ArrayParam) and p.listed else
                    "CudaArray" if isinstance(p, ir.ArrayParam) else "object" if isinstance(p, ir.UnusedParam)
                    else DTYPES[p.dtype].python_scalar)
            parts.append(f"{p.name}: {kind}")
    parts.append("*")
    for p in kernel.params:
        if by_keyword(p):
            kind = p.kind if isinstance(p, ir.ConstParam) else p.dtype
            parts.append(f"{p.name}: {DTYPES[kind].python_scalar}")
    parts += ["stream: object | None = None", "sync: bool = True",
              "hints: tuple[int | None, int | None, int | None] | None = None"]
    return ", ".join(parts)


def stub(kernel: ir.KernelIR) -> dict:
    """What the stub template needs of one kernel."""
    return {"name": kernel.name, "signature": pyi_signature(kernel),
            "doc": f"Launches `{kernel.name}` ({kernel.file}:{kernel.line}); see the module docstring."}
