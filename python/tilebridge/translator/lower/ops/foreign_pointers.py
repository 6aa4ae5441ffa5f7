"""`x.foreign_pointer` and `ct.Array.from_foreign(pointer, shape, strides)`: an array made in the
kernel from another's base pointer and a shape and strides the kernel gives, as cuTile Python
makes it. cutile 0.5.0 makes such a view from a pointer only (`make_tensor_view`, unsafe), its
last stride 1 here; cuTile Python checks nothing of the shape and strides, and neither does this:
the kernel keeps the view inside the array the pointer came from, as cuTile Python requires. An
array the kernel reaches only through its pointer has no rank to be taken at: it is taken as 1-D
(the launcher refuses another rank with the reason), as one reached through `get_raw_memory()`."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ... import ir
from ...rust_syntax import rust_name
from ..bindings import Value
from .pointers import base_pointers
from .registry import ct_op
from .views import make_view, signed_integer_scalar, view_name

if TYPE_CHECKING:
    from ..walker import Walker


def foreign_pointer(w: Walker, node: ast.Attribute, array: ir.ArrayParam) -> Value:
    """`x.foreign_pointer`: x's base pointer, which only `ct.Array.from_foreign` takes here."""
    if array.name in w.state.items:
        raise w.error(node, f"the foreign pointer of '{array.name}', a view made in the kernel, is not supported yet")
    w.state.raw_arrays.add(array.name)  # reached only so: taken as 1-D (`lower.kernel`)
    return Value("foreign_pointer", py=array.name)


@ct_op("Array.from_foreign")
def ct_array_from_foreign(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["pointer", "shape", "strides"], 3)
    pointer = w.expr(args["pointer"], out)
    if pointer.kind != "foreign_pointer":
        raise w.error(args["pointer"], "ct.Array.from_foreign takes an array's `foreign_pointer` here")
    array = w.state.arrays[pointer.py]
    shape, strides = (_extents(w, args[what], what, out) for what in ("shape", "strides"))
    if len(shape) != len(strides):
        raise w.error(node, f"{len(shape)} extents and {len(strides)} strides: they must be as many")
    last = strides[-1]
    if not (last.kind == "const" and last.py == 1):
        raise w.error(args["strides"], "a last stride other than the number 1: cutile 0.5.0's views made from a "
                                       "pointer have a unit last stride here")
    name = view_name(w, hint, f"{rust_name(array.name)}_foreign")

    def scalar(v: Value, what: str) -> str:
        return w.sem.bind_temp(out, f"{name}_{what}", ir.ScalarType("i32"), w.sem.i32(v, node, out)).expr.name

    extents = [scalar(v, f"extent_{i}") for i, v in enumerate(shape)]
    steps = [scalar(v, f"stride_{i}") for i, v in enumerate(strides[:-1])]
    base = base_pointers(w, array, (), True, out)
    view = make_view(w, name, array, base.expr, extents, steps,
                     f"the kernel keeps the view inside `{array.name}`, whose base pointer it starts at, as cuTile "
                     "Python requires of `ct.Array.from_foreign`", out)
    w.state.unsafe(f"views '{array.name}' from its foreign pointer (`ct.Array.from_foreign`)",
                   "the shape and strides keep the view inside the array")
    return view


def _extents(w: Walker, node: ast.expr, what: str, out: list[ir.Stmt]) -> list[Value]:
    """A shape's or strides' tuple: numbers, or signed integer scalars (0-d tiles among them)."""
    items = w.expr(node, out)
    if items.kind != "tuple" or not items.py:
        raise w.error(node, f"the {what} must be a tuple of integers")
    for v in items.py:
        if v.kind == "const" and (type(v.py) is not int or v.py < 0):
            raise w.error(node, f"the {what} must be non-negative integers")
        if v.kind != "const" and not signed_integer_scalar(w, v):
            raise w.error(node, f"the {what} must be numbers or signed integer scalars")
    return list(items.py)
