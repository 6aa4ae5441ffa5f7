"""What names and expressions stand for while a kernel is lowered: a `Value` (a tile, scalar,
translation-time constant, array, dtype, ... with its type and Rust expression), a `Binding` (a
name's value and the `let` that holds it), the scope of one branch, and an array's access counts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import ir


@dataclass
class Value:
    """What a Python expression evaluates to at translation time."""

    kind: str  # tile | scalar | const | array | dtype | static | tuple
    type: ir.Type | None = None
    expr: ir.Expr | None = None
    py: Any = None  # const: the Python value; dtype: its name; static: the object; tuple: [Value]
    dim: ir.Dim | None = None  # a scalar that may stand in a tile shape (a Constant parameter)
    bid_axis: int | None = None  # this scalar is exactly ct.bid(axis)
    # This scalar is exactly ct.bid(axis) // P or ct.bid(axis) % P ("//" or "%"), P an integer
    # parameter the kernel never reassigns: (axis, op, P).
    bid_split: tuple[int, str, str] | None = None
    nonneg: bool = False  # a scalar provably >= 0 (block ids, counts, positive constants)
    iota_offset: "Value | None" = None  # a 1-D tile equal to ct.arange(n) + this scalar or constant
    splat: "Value | None" = None  # a tile every lane of which holds this scalar (ct.full of it)
    defn: "ir.Expr | None" = None  # for a scalar bound once to a name: the expression it names
    # A scalar cuTile Python knows at compile time (a ct.Constant[float], arithmetic of such and
    # numbers), which it types weakly, like a literal: beside a tile, the tile's dtype wins.
    weak: bool = False
    # a tile bound to a name by `x * y`: cuTile Python's rewrite takes a sum's left operand that
    # is a product before its right one (`Semantics.fused_mul_add`)
    product: bool = False

    @property
    def shape(self) -> tuple[ir.Dim, ...]:
        assert isinstance(self.type, ir.TileType)
        return self.type.shape

    @property
    def dtype(self) -> str:
        assert self.type is not None
        return self.type.dtype


@dataclass
class Binding:
    val: Value
    let: ir.Let | None
    depth: int


class BranchScope(dict):
    """The names one branch of a runtime `if` binds (a plain dict: the kernel's, a loop body's).
    `to_the_end`: the branch holds the rest of the kernel (`branches.lower_paths` at its top level),
    so a name it rebinds is its own from there on, never assigned back."""

    def __init__(self, to_the_end: bool = False):
        super().__init__()
        self.to_the_end = to_the_end


@dataclass
class ArrayUse:
    loads: int = 0
    stores: int = 0
    other: int = 0
    gathers: int = 0  # among the loads
    atomics: int = 0  # among the stores


def translation_time(*values: Value) -> tuple | None:
    """The Python objects that translation-time values stand for (numbers, statics such as enum
    members or dataclass constants, tuples of those), as Python compares them; None where any is
    known only at run time."""
    def known(v: Value) -> Any:
        if v.kind in ("const", "static"):
            return v.py
        if v.kind == "tuple":
            return tuple(known(item) for item in v.py)
        raise LookupError

    try:
        return tuple(known(v) for v in values)
    except LookupError:
        return None
