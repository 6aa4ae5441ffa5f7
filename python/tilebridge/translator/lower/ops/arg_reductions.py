"""ct.argmax and ct.argmin: the first index along an axis (over the whole tile: the first in
row-major order) of the largest (smallest) value.

cuTile Python reduces (value, index) pairs in one Tile IR reduction whose combiner prefers the
better value and, between equal ones, the lower index; NaN counts as the worst value, or with
`propagate_nan=True` as the best. cutile 0.5.0 reduces one tile at a time, so the same answer is
made of reductions it has: the extreme value (NaN replaced by the worst value first), then the
least index holding it, which is never NaN; where a row holds only NaN, index 0, as the pairs give
it. With `propagate_nan=True` the least index of a NaN comes first where there is one.

One answer differs from what cuTile Python's reduction may give: a row whose values other than NaN
are all -inf (argmax) or +inf (argmin), with a NaN before the first of them. Tile IR lets a
reduction combine its identity, (-inf, 0) here, any number of times, and where it does, index 0
wins the tie; this lowering answers the first -inf, as a reduction that combines it none.
"""

from __future__ import annotations

import ast
import math
from typing import TYPE_CHECKING

from ... import ir
from ..bindings import Value
from ..integers import HELD_BY_I32, HELD_BY_I64
from .registry import ct_op

if TYPE_CHECKING:
    from ..walker import Walker

_NONE = 2 ** 31 - 1  # the index of no element: more than any index of a tile


@ct_op("argmax")
def ct_argmax(w: Walker, node: ast.Call, out, hint) -> Value:
    return _arg_reduction(w, node, "max", out, hint)


@ct_op("argmin")
def ct_argmin(w: Walker, node: ast.Call, out, hint) -> Value:
    return _arg_reduction(w, node, "min", out, hint)


def _arg_reduction(w: Walker, node: ast.Call, which: str, out: list[ir.Stmt], hint: str) -> Value:
    args = w.call_args(node, ["x", "axis", "keepdims", "propagate_nan"], 1)
    x = w.tile_arg(args["x"], out, hint)
    given = args.get("axis")
    whole = given is None or (isinstance(given, ast.Constant) and given.value is None)
    axis = Value("const", py=None) if whole else w.expr(given, out)
    keep, propagate = (w.flag_arg(args, name, out) for name in ("keepdims", "propagate_nan"))
    rank = len(x.shape)
    is_float = w.sem.float_only(x.dtype)
    if not is_float:
        can_be = w.state.at_launch(x.dtype)
        wide = _compared_as(can_be)
        if wide is None:
            raise w.error(node, f"ct.arg{which} of a tile of {' or '.join(sorted(can_be))} is not supported yet (it "
                                "takes floats, or bool and integers up to 32 bits, or i64; state the array's dtypes)")
        if wide != "as is":
            x = w.sem.convert(x, wide, out, hint)
    if rank == 0 and axis.kind == "const" and axis.py is None:  # one element, at index 0: as a (1,) tile
        x, rank, keep = w.sem.reshaped(x, (1,), out, hint), 1, False
    if axis.kind == "const" and axis.py is None:
        axes = list(range(rank))  # over the whole tile, each element's row-major index
    else:
        a = w.sem.int_const(axis, node)
        a = a + rank if a < 0 else a
        if not 0 <= a < rank:
            raise w.error(node, f"axis out of range for a rank-{rank} tile")
        axes = [a]
    x = w.sem.named(x, out, hint)
    shape = x.shape
    kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
    reduced = tuple(d for i, d in enumerate(shape) if i not in axes)
    final = kept if keep else reduced

    def splat(value: float | int | Value, dtype: str, to: tuple[ir.Dim, ...]) -> ir.Expr:
        value = value if isinstance(value, Value) else Value("const", py=value)
        return w.sem.splat(value, dtype, to, out, hint, node).expr

    def reduce(name: str, func: str, tile: ir.Expr, dtype: str) -> ir.Expr:
        """`tile` reduced over the axes, one at a time, highest first."""
        dims = list(shape)
        for k in sorted(axes, reverse=True):
            del dims[k]
            tile = w.sem.bind_temp(out, name, ir.TileType(dtype, tuple(dims)),
                                   ir.Call(func, (tile, ir.Lit(f"{k}i32")))).expr
        return tile

    def spread(tile: ir.Expr, dtype: str) -> ir.Expr:
        """A reduced tile back at `shape`, repeated along the reduced axes."""
        back = w.sem.reshaped(Value("tile", ir.TileType(dtype, reduced), tile), kept, out, tile.name)
        return w.sem.broadcast(back, shape, out, hint).expr

    def select(name: str, cond: ir.Expr, a_: ir.Expr, b_: ir.Expr, dtype: str, to: tuple[ir.Dim, ...]) -> ir.Expr:
        return w.sem.bind_temp(out, name, ir.TileType(dtype, to), ir.Call("select", (cond, a_, b_))).expr

    # Each element's index: along the axis, an iota laid along it and repeated across the others;
    # over the whole tile, the sum of each axis' iota times the elements an index there steps over.
    index: ir.Expr | None = None
    for k in axes:
        lane = tuple(d if i == k else 1 for i, d in enumerate(shape))
        along = w.sem.bind_temp(out, "index", ir.TileType("i32", (shape[k],)),
                                ir.Call("iota", (ir.Shape((shape[k],)),)))
        if lane != along.shape:
            along = w.sem.reshaped(along, lane, out, "index")
        term = w.sem.broadcast(along, shape, out, hint).expr
        step = _product(w, shape[k + 1:]) if len(axes) > 1 else Value("const", py=1)
        if not (step.kind == "const" and step.py == 1):
            term = ir.Binary("*", term, splat(step, "i32", shape))
        index = term if index is None else w.sem.bind_temp(out, "index", ir.TileType("i32", shape),
                                                           ir.Binary("+", index, term)).expr
    assert index is not None
    nowhere = splat(_NONE, "i32", shape)
    worst = (-math.inf if which == "max" else math.inf) if is_float else None
    values = x.expr
    if is_float:
        nan = w.sem.bind_temp(out, "is_nan", ir.TileType("bool", shape),
                              w.tile_comparison("!=", x.expr, x.expr, x.dtype))
        values = select("ranked", nan.expr, splat(worst, x.dtype, shape), x.expr, x.dtype, shape)
    best = spread(reduce(which + "imum", f"reduce_{which}", values, x.dtype), x.dtype)
    holds = w.sem.bind_temp(out, f"is_{which}imum", ir.TileType("bool", shape),
                            w.tile_comparison("==", x.expr, best, x.dtype))
    first = reduce("first", "reduce_min", select("candidates", holds.expr, index, nowhere, "i32", shape), "i32")
    if is_float:
        # A row of NaN alone holds no best value: its first index, 0.
        none = w.tile_comparison("==", first, splat(_NONE, "i32", reduced), "i32")
        first = select("first", none, splat(0, "i32", reduced), first, "i32", reduced)
        if propagate:
            nan_candidates = select("nan_candidates", nan.expr, index, nowhere, "i32", shape)
            nan_first = reduce("first_nan", "reduce_min", nan_candidates, "i32")
            some = w.tile_comparison("<", nan_first, splat(_NONE, "i32", reduced), "i32")
            first = select("first", some, nan_first, first, "i32", reduced)
    result = Value("tile", ir.TileType("i32", reduced), first)
    return w.sem.reshaped(result, final, out, hint) if final != reduced else result


def _compared_as(can_be: set[str]) -> str | None:
    """How integer tiles that can be `can_be` at launch are compared: "as is" (i32 or i64 at every
    launch), widened to "i32" or "i64" (which hold every value they can have: cutile makes no 8- or
    16-bit constant, and its reductions of unsigned tiles are not checked against cuTile Python's),
    or None (unsigned 64-bit, a float at some launch)."""
    if len(can_be) == 1 and can_be <= {"i32", "i64"}:
        return "as is"
    if can_be <= HELD_BY_I32:
        return "i32"
    return "i64" if can_be <= HELD_BY_I64 else None


def _product(w: Walker, dims: tuple[ir.Dim, ...]) -> Value:
    """The number of elements of a tile of shape `dims`: a number, or the product of the constants
    that give its dimensions (an i32 scalar)."""
    numbers = math.prod(d for d in dims if isinstance(d, int))
    named = [w.sem.dim_val(d).expr for d in dims if not isinstance(d, int)]
    if not named:
        return Value("const", py=numbers)
    expr = named[0]
    for e in named[1:] + ([ir.Lit(f"{numbers}i32")] if numbers != 1 else []):
        expr = ir.Binary("*", expr, e)
    return Value("scalar", ir.ScalarType("i32"), expr)
