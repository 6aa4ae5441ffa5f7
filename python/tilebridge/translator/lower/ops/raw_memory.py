"""`x.get_raw_memory()` and its `load_offset`/`store_offset`: loads and stores at element offsets
from the array's base pointer, with no shape, strides or bounds, as cuTile Python makes them (its
offsets 64-bit: an int32 one sign-extended, an unsigned one zero-extended): cutile's unsafe pointer
load and store, the kernel keeping every offset inside the array, as cuTile Python leaves it to.

An array the kernel reaches only this way has no rank to be taken at: it is taken as 1-D (the
launcher refuses another rank with the reason)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ... import ir, module_items
from ...rust_syntax import rust_name
from ..bindings import Value
from .memory import array_arg, check_unchecked_output, latency_value, pointer_token
from .pointers import as_scattered, base_pointers, bind_loaded, gather_padding, pointer_latency, user_mask

if TYPE_CHECKING:
    from ..walker import Walker


def raw_memory(w: Walker, node: ast.Call, array_node: ast.expr, out: list[ir.Stmt]) -> Value:
    """`x.get_raw_memory()`: what its methods load from and store to."""
    if node.args or node.keywords:
        raise w.error(node, "get_raw_memory takes no arguments")
    array = array_arg(w, array_node, out)
    w.state.raw_arrays.add(array.name)
    return Value("raw", py=array.name)


def raw_method(w: Walker, node: ast.Call, raw: Value, name: str, out: list[ir.Stmt], hint: str) -> Value:
    """`mem.load_offset(offset, mask=, padding_value=, latency=)`, `mem.store_offset(offset, value,
    mask=, latency=)`."""
    array = w.state.arrays[raw.py]
    if name == "load_offset":
        args = w.call_args(node, ["offset", "mask", "padding_value", "latency"], 1)
    elif name == "store_offset":
        args = w.call_args(node, ["offset", "value", "mask", "latency"], 2)
    else:
        raise w.error(node, f"raw array memory has no method '{name}' (load_offset and store_offset)")
    write = name == "store_offset"
    w.state.count(array, "stores" if write else "loads", node, pointer=True)
    offset = w.expr(args["offset"], out, hint="offset")
    if (offset.kind == "const" and type(offset.py) is int) or (offset.kind == "scalar" and w.sem.integer(offset.dtype)):
        offset = w.sem.splat(offset, "i64", (), out, "offset", node)
    elif not (offset.kind == "tile" and w.sem.integer(offset.dtype)):
        raise w.error(args["offset"], "an offset is an integer, or a tile of integers")
    shape = offset.shape
    w.state.site(array, "stores" if write else "loads", ("pointers",), [offset])  # as a gather's or scatter's
    offsets = w.sem.convert(offset, "i64", out, "offset")
    x = rust_name(array.name)
    ptrs = base_pointers(w, array, shape, write, out)
    ptrs = w.sem.bind_temp(out, f"{x}_ptrs", ptrs.type, ir.Method(ptrs.expr, "offset_tile", (offsets.expr,)))
    mask = user_mask(w, args, shape, out)
    latency = pointer_latency(w, node, args.get("latency"), latency_value(w, node, args.get("latency"), out))
    token = pointer_token(w.state, array, scatter=write)
    some = lambda e: ir.Call("Some", (e,)) if e is not None else ir.Lit("None")  # noqa: E731
    if write:
        check_unchecked_output(w.state, node, array)
        value = as_scattered(w, node, w.expr(args["value"], out, hint=f"{x}_value"), array, shape, out, f"{x}_value")
        array.written = True
        w.state.unsafe(f"stores to '{array.name}' at raw element offsets", "every offset lies inside it, and blocks "
                       "write disjoint elements of it" + w.state.off_reads(array))
        store = ir.Unsafe(ir.Call("store_ptr_tko", (ptrs.expr, value.expr, ir.Lit("ordering::Weak"),
                                                    ir.Lit("None::<scope::Device>"), some(mask), some(token), latency)),
                          reason=f"the kernel promises, as cuTile Python's raw memory leaves it to, that every offset "
                                 f"lies inside `{array.name}` and that blocks write disjoint elements")
        out.append(ir.Assign(token.name, store, w.state.line))
        return Value("tile", None, None)
    pad = w.expr(args["padding_value"], out) if "padding_value" in args else Value("const", py=0)
    if not (pad.kind == "const" and isinstance(pad.py, (int, float))) and pad.kind != "scalar":
        raise w.error(node, "padding_value must be a number or a scalar")
    padding = gather_padding(w, node, pad, array, shape, out) if mask is not None else None
    w.state.unsafe(f"loads from '{array.name}' at raw element offsets", "every offset lies inside it")
    load = ir.Unsafe(ir.Call(module_items.PADDED_GATHER if padding is not None and shape else "load_ptr_tko", (
        ptrs.expr, ir.Lit("ordering::Weak"), ir.Lit("None::<scope::Device>"), some(mask), some(padding), some(token),
        latency)), reason=f"the kernel promises, as cuTile Python's raw memory leaves it to, that every offset lies "
                          f"inside `{array.name}`")
    return bind_loaded(w, ir.TileType(f"${array.name}", shape), load, token, out, hint)
