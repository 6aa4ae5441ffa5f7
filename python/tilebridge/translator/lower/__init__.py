"""Lowering: a kernel's Python AST -> the typed kernel IR (`ir.KernelIR`).

Every value gets a dtype and a shape (shapes in terms of ``ct.Constant`` parameters), every
implicit step of cuTile Python is made explicit (broadcasting, literal typing, keepdims, negative
axes), and each array parameter is classified: read, or written one tile per block at the block's
own index (a safe cutile partition). Anything else is a `TranslationError` naming file:line:column.

The parts: `walker` (statements, scopes, loops, expressions, inlining) with `branches` (`if`),
`semantics` (promotion, broadcasting, literals, Python's integer rules) with `promotions` (arrays'
dtypes promoted per launch), the op table `ops` (one handler per `ct.*` name), `kernel`
(parameters, ranks, dtype classes, the IR record), and the records they share: `state` (per
kernel and per inlined helper), `bindings`, `dtype_classes`, `facts` (pure queries), `loop_split`
(a pass over loops).
"""

from __future__ import annotations

import math
import typing
from dataclasses import dataclass, replace

from ...errors import TranslationError
from .. import ir
from ..frontend import KernelSource
from . import kernel
from .bindings import ArrayUse

__all__ = ["lower_kernel", "survey", "Survey", "unstated_scalars"]

unstated_scalars = kernel.unstated_scalars


@dataclass(frozen=True)
class Survey:
    """What a first pass over a kernel finds before anything is decided on it: how often each array
    is loaded and stored once constant branches are folded and helpers inlined, and which arrays'
    values the kernel uses as integers (index arrays), and which it computes with (the others it
    only moves, and takes in any dtype: `KernelState.default_dtypes`)."""

    uses: dict[str, ArrayUse]
    int_arrays: frozenset[str]
    computed: frozenset[str] = frozenset()
    promote: bool = True  # False: arrays whose tiles meet share one dtype class (see `lower_kernel`)
    streams: frozenset[tuple[int, int]] = frozenset()  # loops whose one store may stream (`streams.py`)
    block_axes: frozenset[int] = frozenset()  # the axes of ct.bid the kernel reads


# The most dtype combinations a kernel's arrays may have before arrays that meet are tied into one
# dtype class instead of promoted per launch (3^9: each array of nine its own class).
MAX_COMBINATIONS = 3 ** 9


def survey(src: KernelSource, dtypes: dict[str, typing.Sequence[str]] | None = None,
           lift_gathers: bool = False) -> Survey:
    _, state = kernel.lower(src, dtypes, lift_gathers)
    return Survey(state.counted, frozenset(state.int_arrays), frozenset(state.computed_seen),
                  streams=frozenset(state.stream_loops), block_axes=frozenset(state.block_axes))


def lower_kernel(src: KernelSource, dtypes: dict[str, typing.Sequence[str]] | None = None,
                 lift_gathers: bool = False) -> ir.KernelIR:
    """Lowers one kernel into the typed IR in two passes: the survey counts the array accesses,
    the lowering decides on those counts which outputs are safe partitions and which arrays are
    updated in place. A kernel whose arrays' dtypes, each promoted apart, would have more than
    MAX_COMBINATIONS combinations is lowered again with the arrays that meet tied together, and
    past that limit still is refused, asking for its dtypes."""
    first = survey(src, dtypes, lift_gathers)
    lowered, state = kernel.lower(src, dtypes, lift_gathers, first)
    while state.computed_seen - first.computed:
        # an array the survey saw only moved is computed with on the way the lowering took (a value
        # a moved array's dtype let it choose): lowered again with its values as computed ones, until
        # no more are (each round adds one array at least)
        first = replace(first, computed=first.computed | state.computed_seen)
        lowered, state = kernel.lower(src, dtypes, lift_gathers, first)
    if lowered.promoted and _combinations(lowered) > MAX_COMBINATIONS:
        # so many dtypes apart that their combinations cannot be checked: tied, as launched together
        lowered, _ = kernel.lower(src, dtypes, lift_gathers, replace(first, promote=False))
    if _combinations(lowered) > MAX_COMBINATIONS:
        free = [c for c in lowered.dtype_classes if len(c.allowed) > 1 and not c.moved]
        arrays = ", ".join("/".join(c.arrays) for c in free)
        raise TranslationError.at(src.display_file, src.func, (
            f"kernel '{lowered.name}' has {len(free)} arrays of independent dtypes ({_combinations(lowered):,} "
            f"combinations, more than the {MAX_COMBINATIONS:,} a build checks): state their dtypes "
            f"(tb.build(..., dtypes=...), --dtype) for {arrays}"))
    return lowered


def _combinations(kir: ir.KernelIR) -> int:
    """The dtype combinations of the classes a check must try together: the moved ones vary apart
    (`ir.DTypeClass.moved`), and are checked each at each of its dtypes."""
    return math.prod(len(c.allowed) for c in kir.dtype_classes if not c.moved)
