"""Launches recorded from a library's own tests: what each kernel was launched with.

A launch log (`tests/gpu/tilegym_plugin.py --launch-log`) has one JSON line per distinct launch:
the kernel's file and name, each argument by parameter name (an array's dtype, shape and
strides, or a number), and the kernel object's hints. A build given them (`translate(...,
launches=...)`, `tilebridge build --launches LOG`) makes each kernel's launcher take the dtype
combinations its launches used, so kernels whose arrays have many independent dtypes build
(`cover`); `tilebridge coverage` compiles each recorded specialization.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from . import ir
from ..errors import TranslationError
from ..dtypes import DTYPES, FLOAT_RANK, from_torch


@dataclass(frozen=True)
class Launch:
    file: str  # the kernel's file name
    kernel: str
    args: dict[str, Any]  # parameter -> {"dtype", "shape", "strides"} for an array, else its value
    hints: dict[str, Any] = field(default_factory=dict)

    def dtype(self, param: str) -> str | None:
        """The cutile dtype of an array argument (the log has torch's name), None for anything else."""
        arg = self.args.get(param)
        return from_torch(arg.get("dtype")) if isinstance(arg, dict) else None

    def record(self) -> dict[str, Any]:
        return {"file": self.file, "kernel": self.kernel, "args": self.args, "hints": self.hints}

    def specialization(self) -> "Launch":
        """What decides the compiled code: dtypes, values, and which strides are 1 (as cutile's
        compile-only API spells them: 1, else -1); shapes and hints dropped."""
        args = {name: {"dtype": a["dtype"], "strides": [1 if s == 1 else -1 for s in a["strides"]]}
                if isinstance(a, dict) else a for name, a in self.args.items()}
        return Launch(self.file, self.kernel, args)


def read(paths: Iterable[str | Path]) -> list[Launch]:
    """The launches in logs (JSON lines), or in a document of them ({"launches": [...]}),
    duplicates dropped."""
    seen: dict[str, Launch] = {}
    for path in paths:
        try:
            text = Path(path).read_text()
            try:
                document = json.loads(text)
                # a document of launches, or a log of one line
                records = document["launches"] if "launches" in document else [document]
            except json.JSONDecodeError:  # JSON lines
                records = [json.loads(line) for line in text.splitlines() if line.strip()]
            for r in records:
                seen.setdefault(json.dumps(r, sort_keys=True),
                                Launch(r["file"], r["kernel"], r["args"], r.get("hints", {})))
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise TranslationError(f"{path}: not a launch log (JSON lines of file, kernel, args, as "
                                   f"tests/gpu/tilegym_plugin.py writes them): {type(e).__name__}: {e}") from None
    return list(seen.values())


def distill(launches: Iterable[Launch], source: str) -> str:
    """The specializations of `launches`, once each, as a JSON document for `read`."""
    records = {json.dumps(l.specialization().record(), sort_keys=True) for l in launches}
    return json.dumps({"source": source, "launches": [json.loads(r) for r in sorted(records)]}, indent=1) + "\n"


def of_kernel(launches: Iterable[Launch], kernel: ir.KernelIR) -> list[Launch]:
    """The launches of `kernel`: same file, same name (its launcher's, for a variant), same
    parameter names."""
    names = {p.name for p in kernel.params}
    return [l for l in launches if (l.file, l.kernel) == (kernel.file, kernel.public or kernel.name)
            and set(l.args) == names]


def taken_by(kernel: ir.KernelIR, launches: Iterable[Launch]) -> list[Launch]:
    """The launches of `kernel` whose dtypes its launcher takes."""
    return [l for l in of_kernel(launches, kernel) if any(map(kernel.takes, dtype_combos(kernel, [l])))]


def dtype_combos(kernel: ir.KernelIR, launches: Iterable[Launch]) -> list[tuple[str, ...]]:
    """The dtypes of the kernel's dtype classes in each of its launches, in class order, once each;
    launches whose arrays of one class disagree are left out. A recorded dtype need not be one the
    translation inferred (an array the kernel only copies may hold integers): cuTile Python
    compiled the kernel for it."""
    combos: list[tuple[str, ...]] = []
    for launch in of_kernel(launches, kernel):
        combo = []
        for c in kernel.dtype_classes:
            seen = {launch.dtype(a) for a in c.arrays}
            if len(seen) != 1 or None in seen:
                break
            combo.append(seen.pop())
        else:
            if tuple(combo) not in combos:
                combos.append(tuple(combo))
    return combos


# The most dtype combinations a launcher lists one by one (where recorded launches add some to
# those it takes anyway); beyond, each class takes the dtypes recorded for it besides its own.
MAX_LISTED_COMBOS = 81


def _computed_alike(kernel: ir.KernelIR, c: ir.DTypeClass, dtype: str) -> bool:
    """Whether the translation of class `c` computes at `dtype` what it computes at the dtypes it
    was translated for: any dtype for arrays it does not compute with; for those, another float
    that computes (`FLOAT_RANK`: not fp8) where those are floats (the float operations are the
    same), else none (an integer's operations
    are chosen by its kind, `Integers.int_tile`, and cutile computes with no 8- or 16-bit one), and
    none for a family's variant (an f64 one's literals are f64): other dtypes are the families' to
    take, `translator.FAMILIES`."""
    kinds = {DTYPES[d].python_scalar for d in c.allowed if d in DTYPES}
    if not c.computed or len(kinds) != 1:
        return True
    return dtype in c.allowed or (not kernel.family and kinds == {"float"} and dtype in FLOAT_RANK)


def cover(kernel: ir.KernelIR, launches: Iterable[Launch]) -> None:
    """Makes `kernel`'s launcher take the dtype combinations its recorded launches used, besides
    the ones it takes anyway, where its translation computes at them what it computes at its own
    (`_computed_alike`): listed one by one where they number at most MAX_LISTED_COMBOS, else
    each class widened by the dtypes recorded for it (every combination of those is checked
    against cuTile Python class by class, `oracle.covering`)."""
    recorded = [combo for combo in dtype_combos(kernel, launches)
                if all(_computed_alike(kernel, c, d) for c, d in zip(kernel.dtype_classes, combo))]
    if not recorded or all(kernel.takes(c) for c in recorded):
        return
    if kernel.combo_count() > ir.MAX_ENUMERATED_COMBOS:  # moved arrays' dtypes: widened, not listed
        for i, c in enumerate(kernel.dtype_classes):
            c.allowed = list(dict.fromkeys(c.allowed + [combo[i] for combo in recorded]))
        return
    usual = kernel.launcher_combos()
    combos = usual + [c for c in recorded if c not in usual]
    if len(combos) <= MAX_LISTED_COMBOS:
        kernel.dtype_combos = combos
    for i, c in enumerate(kernel.dtype_classes):
        c.allowed = list(dict.fromkeys(combo[i] for combo in combos))
