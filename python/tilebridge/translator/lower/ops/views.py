"""Tensor views a kernel makes from a pointer (cutile 0.5.0's `make_tensor_view`, unsafe): a list's
item (`lists`), an array's slice (`array_slices`) and `ct.Array.from_foreign` (`foreign_pointers`).
From there on each is an array of the kernel, loaded and stored through as any; what the kernel
writes through it, it writes into the array it views (`lower.kernel` merges the two)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ... import ir
from ...rust_syntax import rust_name
from ..bindings import ArrayUse, Value

if TYPE_CHECKING:
    from ..walker import Walker


def view_name(w: Walker, hint: str, fallback: str) -> str:
    """The name a view takes: the one it is bound to (`Ai = ...`), once; else `fallback`, made fresh."""
    name = rust_name(hint) if hint in w.state.src_names else fallback
    name = w.state.fresh(name) if name in w.state.items or hint not in w.state.src_names else name
    w.state.used_names.add(name)
    return name


def signed_integer_scalar(w: Walker, v: Value) -> bool:
    """Whether `v` is a signed integer scalar, or a 0-d tile of one (an array's values taken as
    integers): what a view's start, extent or stride may be besides a number."""
    return ((v.kind == "scalar" or (v.kind == "tile" and v.shape == ())) and w.sem.integer(v.dtype)
            and not w.state.union.find(v.dtype).startswith("u"))


def make_view(w: Walker, name: str, of: ir.ArrayParam, base: ir.Expr, extents: list[str], strides: list[str],
              reason: str, out: list[ir.Stmt]) -> Value:
    """`let name = make_tensor_view(base, extents, strides)` (i32 scalars by name; the last stride 1,
    as `strides` leaves it out), a view of `of`, unsafe for `reason`; registered as an array."""
    rank = len(extents)
    # Typed names: cutile reads the static extents from the declared types.
    extents_type = ir.ExtentsType("Shape", (-1,) * rank)
    strides_type = ir.ExtentsType("Array", (-1,) * (rank - 1) + (1,))
    shape = w.sem.bind_temp(out, f"{name}_shape", extents_type, ir.Lit(
        f"Shape::<{{ [{', '.join(map(str, extents_type.dims))}] }}> {{ dims: &[{', '.join(extents)}] }}"))
    stride = w.sem.bind_temp(out, f"{name}_strides", strides_type, ir.Lit(
        f"Array::<{{ [{', '.join(map(str, strides_type.dims))}] }}> {{ dims: &[{', '.join(strides)}] }}"))
    view = ir.Call("make_tensor_view", (base, shape.expr, stride.expr, ir.Call("new_token_unordered")))
    out.append(ir.Let(name, ir.TensorType(f"${name}", (-1,) * rank), ir.Unsafe(view, reason=reason), w.state.line))
    w.state.arrays[name] = ir.ArrayParam(name, rank, f"${name}")
    w.state.items[name] = of.name
    w.state.union.union(f"${of.name}", f"${name}")
    for uses in (w.state.uses, w.state.counted):
        uses.setdefault(name, ArrayUse())
    return Value("array", py=name, expr=ir.Var(name))
