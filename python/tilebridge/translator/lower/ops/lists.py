"""Lists of arrays (group_gemm's `As`): an item `As[g]` as a tensor view made from the g-th row of
the list's table, which the launcher fills (base pointer, shape, strides of every array)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ... import ir
from ...rust_syntax import rust_name
from ..bindings import Value
from .memory import tile_load
from .views import make_view, view_name

if TYPE_CHECKING:
    from ..walker import Walker


def list_item(w: Walker, node: ast.Subscript, base: Value, index: Value, out: list[ir.Stmt], hint: str) -> Value:
    """`As[g]`: the g-th array of a list, as a tensor view made from its row of the list's table
    (base pointer, shape, strides), read as cuTile Python reads it: one load of the row, its
    words extracted and narrowed to i32, the pointer cast from its integer."""
    listed = w.state.arrays[base.py]
    rank = listed.rank
    if not rank:
        raise w.error(node, f"the rank of the arrays in '{listed.name}' is not known; load or store an item")
    if index.kind not in ("const", "scalar") or not w.sem.integer(index.dtype if index.kind == "scalar" else "i32"):
        raise w.error(node.slice, "a list of arrays is indexed by an integer scalar")
    width = ir.list_row_words(rank)
    name = view_name(w, hint, rust_name(hint))  # `Ai = As[g]`: named Ai
    key = (listed.name, (1, width), None, None)
    if key not in w.state.partitions:
        table = w.state.fresh(f"{rust_name(listed.name)}_rows")
        w.state.partition_lets.append(ir.Let(table, ir.PartitionType("i64", (1, width)), ir.Method(
            ir.Var(rust_name(listed.name)), "partition", (ir.Shape((1, width)),)), w.state.line))
        w.state.partitions[key] = table
    row_type = ir.TileType("i64", (1, width))
    row_index = ir.Index((w.sem.i32(index, node, out), ir.Lit("0i32")))
    row = w.sem.bind_temp(out, f"{name}_row", row_type,
                          tile_load(w, ir.Var(w.state.partitions[key]), row_index, None, True, out))
    zero = w.sem.bind_temp(out, "word", ir.TileType("i32", ()), ir.Call("scalar_to_tile", (ir.Lit("0i32"),)))

    def word(k: int, what: str) -> ir.Expr:
        at = zero if k == 0 else w.sem.bind_temp(out, "word", ir.TileType("i32", ()),
                                                  ir.Call("scalar_to_tile", (ir.Lit(f"{k}i32"),)))
        one = w.sem.bind_temp(out, f"{name}_{what}", ir.TileType("i64", (1, 1)),
                              ir.Call("extract", (row.expr, ir.Lit(f"[{zero.expr.name}, {at.expr.name}]"))))
        return ir.Method(one.expr, "reshape", (ir.Shape(()),))

    divisors = iter(ir.list_divisors(listed))

    def assumed(value: ir.Expr, type_: ir.Type, what: str, bounds: bool) -> ir.Var:
        """`value` with what the launcher measured of every array in the list (and, for an
        extent or stride, that it is not negative) assumed, as cuTile Python assumes them."""
        if bounds:
            value = w.sem.bind_temp(out, f"{name}_{what}", type_, ir.Unsafe(
                ir.Call("assume_bounds_lower::<_, 0>", (value,)), reason="extents and strides are not negative")).expr
        return w.sem.bind_temp(out, f"{name}_{what}", type_, ir.Unsafe(
            ir.Call(f"assume_div_by::<_, {next(divisors)}>", (value,)),
            reason=f"the launcher measured this divisor on every array of `{listed.name}`")).expr

    def index_word(k: int, what: str) -> str:
        narrow = w.sem.bind_temp(out, f"{name}_{what}", ir.TileType("i32", ()),
                                 ir.Call("trunci", (word(k, what), ir.Lit("overflow::NoWrap"))))
        scalar = w.sem.scalar_of(narrow, out, f"{name}_{what}")
        return assumed(scalar.expr, ir.ScalarType("i32"), what, True).name

    pointer_type = ir.PointerTileType(f"${listed.name}", (), mutable=True)
    base_ptr = w.sem.bind_temp(out, f"{name}_base", pointer_type, ir.Call("int_to_ptr", (word(0, "base"),)))
    base_ptr = Value("tile", pointer_type, assumed(base_ptr.expr, pointer_type, "base", False))
    extents = [index_word(1 + axis, f"shape_{axis}") for axis in range(rank)]
    # The last stride is 1: the launcher requires every array of a list to have contiguous rows,
    # as cuTile Python's specialization for them has it.
    strides = [index_word(1 + rank + axis, f"stride_{axis}") for axis in range(rank - 1)]
    view = make_view(w, name, listed, base_ptr.expr, extents, strides, (
        f"the row describes an array of `{listed.name}` that the launcher admitted (device, dtype, contiguous rows, "
        "no output overlapping any other argument) and keeps alive until the launch completes"), out)
    w.state.unsafe(f"indexes the list of arrays '{listed.name}' (a tensor view made from a pointer)",
                   "each row of the list's table is the base pointer, shape and strides of a live array of its "
                   "dtype", checked=True)
    return view
