"""`x.slice(axis, start, stop)`: a view of part of an array along one axis, made as cuTile Python
makes it: the base pointer moved by `start` times the axis' stride, the axis' extent `stop -
start`, the strides kept. Loads through the view pad, and stores drop, what lies past its end.

cutile 0.5.0 makes such a view from a pointer only (`make_tensor_view`, unsafe). cuTile Python
requires `0 <= start <= stop <= N` and checks nothing; tilebridge clamps start and stop into the
array (which changes nothing where the requirement holds), so the view lies inside the array
whatever the kernel is given."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ... import ir
from ...rust_syntax import rust_name
from ..bindings import Value
from .pointers import base_pointers, stride_param
from .views import make_view, signed_integer_scalar, view_name

if TYPE_CHECKING:
    from ..walker import Walker


def array_slice(w: Walker, node: ast.Call, array_value: Value, out: list[ir.Stmt], hint: str) -> Value:
    array = w.state.arrays[array_value.py]
    if array.name in w.state.items:
        raise w.error(node, f"a slice of '{array.name}', a view made in the kernel (a list's item, a slice), is not "
                            "supported yet")
    args = w.call_args(node, ["axis", "start", "stop"], 3)
    rank = array.rank
    if not rank:
        raise w.error(node, f"the rank of '{array.name}' is not known; load or store it or its slice")
    axis = w.sem.int_const(w.expr(args["axis"], out), args["axis"])
    if not -rank <= axis < rank:
        raise w.error(args["axis"], f"axis {axis} is out of range for an array of rank {rank}")
    axis %= rank
    bounds = []
    for what in ("start", "stop"):
        val = w.expr(args[what], out)
        if val.kind == "const" and (not isinstance(val.py, int) or isinstance(val.py, bool)):
            raise w.error(args[what], f"the slice's {what} must be an integer")
        if val.kind == "const" and val.py < 0:
            raise w.error(args[what], f"Slice {what} must be non-negative")  # as cuTile Python says it
        if val.kind != "const" and not signed_integer_scalar(w, val):
            raise w.error(args[what], f"the slice's {what} must be a signed integer scalar or 0-d tile")
        bounds.append(val)
    if all(b.kind == "const" for b in bounds) and bounds[1].py < bounds[0].py:
        raise w.error(node, "Slice stop must be greater than or equal to start")
    x = rust_name(array.name)
    name = view_name(w, hint, f"{x}_slice")  # `Ai = a.slice(...)`: named Ai

    def scalar(expr: ir.Expr, what: str) -> ir.Expr:
        return w.sem.bind_temp(out, f"{name}_{what}", ir.ScalarType("i32"), expr).expr

    extents = [scalar(ir.Subscript(ir.Method(ir.Var(x), "shape"), i), f"extent_{i}") for i in range(rank)]
    start, stop = (w.sem.i32(b, node, out) for b in bounds)
    # clamped into the array: 0 <= start <= stop <= N (the identity where cuTile Python's requirement holds)
    start = scalar(ir.Call("min", (ir.Call("max", (start, ir.Lit("0i32"))), extents[axis])), "start")
    stop = scalar(ir.Call("min", (ir.Call("max", (stop, start)), extents[axis])), "stop")
    array.strided = rank > 1
    stride = ir.Lit("1i32") if axis == rank - 1 else stride_param(array, axis)
    base = base_pointers(w, array, (), True, out)
    pointer_type = ir.PointerTileType(f"${array.name}", (), mutable=True)
    moved = w.sem.bind_temp(out, f"{name}_base", pointer_type, ir.Method(base.expr, "offset", (
        scalar(ir.Binary("*", start, stride), "offset"),)))
    extents[axis] = scalar(ir.Binary("-", stop, start), "length")
    view = make_view(w, name, array, moved.expr, [e.name for e in extents],
                     [stride_param(array, i).name for i in range(rank - 1)],
                     f"the view lies inside `{array.name}` (its start and stop clamped into the array), which the "
                     "launcher admitted and keeps alive until the launch completes", out)
    w.state.unsafe(f"slices '{array.name}' (a tensor view made from a pointer)", "the view lies inside the array",
                   keeper="the translation keeps it: start and stop are clamped into the array")
    return view
