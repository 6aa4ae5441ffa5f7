"""Launches recorded from a library's own tests: what each kernel was launched with.

A launch log (`tests/gpu/tilegym_plugin.py --launch-log`) has one JSON line per distinct launch:
the kernel's file and name, each argument by parameter name (an array's dtype, shape and
strides, or a number), and the kernel object's hints. A build given them (`translate(...,
launches=...)`, `tilebridge build --launches LOG`) makes each kernel's launcher for the dtype
combinations its launches used, so kernels whose arrays have many independent dtypes build;
`tilebridge coverage` compiles each recorded specialization.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from . import ir

# torch's dtype names, as the log has them -> cutile's
TORCH_DTYPES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64", "int32": "i32",
                "int64": "i64", "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "bool",
                "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2"}


@dataclass(frozen=True)
class Launch:
    file: str  # the kernel's file name
    kernel: str
    args: dict[str, Any]  # parameter -> {"dtype", "shape", "strides"} for an array, else its value
    hints: dict[str, Any] = field(default_factory=dict)

    def dtype(self, param: str) -> str | None:
        """The cutile dtype of an array argument, None for anything else."""
        arg = self.args.get(param)
        return TORCH_DTYPES.get(arg.get("dtype")) if isinstance(arg, dict) else None


def read(paths: Iterable[str | Path]) -> list[Launch]:
    """The launches in log files (JSON lines), duplicates dropped."""
    seen: dict[str, Launch] = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                seen.setdefault(json.dumps(record, sort_keys=True), Launch(record["file"], record["kernel"],
                                                                           record["args"], record.get("hints", {})))
    return list(seen.values())


def of_kernel(launches: Iterable[Launch], kernel: ir.KernelIR) -> list[Launch]:
    """The launches of `kernel`: same file, same name, same parameters."""
    names = [p.name for p in kernel.params]
    return [l for l in launches if (l.file, l.kernel) == (kernel.file, kernel.name) and list(l.args) == names]


def dtype_combos(kernel: ir.KernelIR, launches: Iterable[Launch]) -> list[tuple[str, ...]]:
    """The dtypes of the kernel's dtype classes in each of its launches, in class order, once each;
    launches whose arrays of one class disagree, or that the classes do not allow, are left out."""
    combos: list[tuple[str, ...]] = []
    for launch in of_kernel(launches, kernel):
        combo = []
        for c in kernel.dtype_classes:
            seen = {launch.dtype(a) for a in c.arrays}
            if len(seen) != 1 or next(iter(seen)) not in c.allowed:
                break
            combo.append(seen.pop())
        else:
            if tuple(combo) not in combos:
                combos.append(tuple(combo))
    return combos


def restrict(kernel: ir.KernelIR, launches: Iterable[Launch]) -> None:
    """Builds `kernel`'s launcher for the dtype combinations its recorded launches used, if any."""
    combos = dtype_combos(kernel, launches)
    if not combos:
        return
    kernel.dtype_combos = combos
    for i, c in enumerate(kernel.dtype_classes):
        c.allowed = [d for d in c.allowed if any(combo[i] == d for combo in combos)]
