"""Atomic read-modify-writes of array elements (`ct.atomic_add`, `atomic_xchg`, `atomic_min`,
`atomic_max`, `atomic_and`, `atomic_or`, `atomic_xor`, `atomic_cas`), as cuTile Python lowers them:
the addresses and bounds mask of a scatter (`pointers.pointers`), the update broadcast to them and
cast to the array's dtype, one Tile IR atomic per call (`atomic_rmw_tko`, `atomic_cas_tko`), ordered
after the array's earlier pointer accesses by its token. Each returns the values it replaced."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ... import ir
from ...rust_syntax import rust_name
from ..bindings import Value
from .memory import array_arg, check_unchecked_output, pointer_token
from .pointers import as_scattered, bind_loaded, lanes_inside, pointers
from .registry import register

if TYPE_CHECKING:
    from ..walker import Walker

# ct.atomic_<op>: the Tile IR mode for signed integers, for floats (None: integers only), and whether
# the update must already have the array's dtype (the bitwise ones). Unsigned arrays are not taken.
RMW = {"add": ("Add", "AddF", False), "xchg": ("Xchg", "Xchg", False), "min": ("Min", None, False),
       "max": ("Max", None, False), "and": ("And", None, True), "or": ("Or", None, True),
       "xor": ("Xor", None, True)}
ORDERS = {"relaxed": "Relaxed", "acquire": "Acquire", "release": "Release", "acq_rel": "AcqRel"}
SCOPES = {"block": "TileBlock", "device": "Device", "sys": "System"}


def _enum(w: Walker, node: ast.expr | None, names: dict[str, str], default: str, what: str,
          out: list[ir.Stmt]) -> str:
    """The cutile marker of a ct.MemoryOrder / ct.MemoryScope argument."""
    if node is None:
        return default
    val = w.expr(node, out)
    value = getattr(val.py, "value", None) if val.kind == "static" else None
    if value not in names:
        raise w.error(node, f"expected a ct.{what} ({', '.join(k.upper() for k in names)})")
    return names[value]


def _operand(w: Walker, node: ast.expr, array: ir.ArrayParam, shape: tuple[ir.Dim, ...], exact: bool,
             out: list[ir.Stmt], hint: str) -> Value:
    """An update (or compared) value as a scatter writes it (`pointers.as_scattered`); a bitwise
    atomic's tile must already have the array's dtype, as cuTile Python requires."""
    val = w.expr(node, out, hint=hint)
    if val.kind == "tile" and exact:
        own = w.state.union.find(val.dtype) == w.state.union.find(f"${array.name}")
        if not own and not w.state.union.find(val.dtype).startswith("$"):
            raise w.error(node, "a bitwise atomic takes an update of the array's own dtype, as cuTile Python "
                                "requires")
    return as_scattered(w, node, val, array, shape, out, hint)


def _atomic(w: Walker, node: ast.Call, op: str, out: list[ir.Stmt], hint: str) -> Value:
    cas = op == "cas"
    values = ["expected", "desired"] if cas else ["update"]
    args = w.call_args(node, ["array", "indices", *values, "check_bounds", "memory_order", "memory_scope"],
                       2 + len(values))
    array = array_arg(w, args["array"], out)
    order = _enum(w, args.get("memory_order"), ORDERS, "AcqRel", "MemoryOrder", out)
    w.state.count(array, "stores", node, via="atomics", pointer=True, order=order)
    check_unchecked_output(w.state, node, array)
    int_mode, float_mode, exact = RMW.get(op, ("", "", False))
    dtype = f"${array.name}"
    if not cas and float_mode is None:
        w.sem.integer(dtype)  # min, max and the bitwise ones take integer arrays only
    members = w.state.members(dtype)
    ints = w.sem.int_tile(dtype) or all(d in ("i32", "i64") for d in w.state.allowed_dtypes(members))
    if not cas and float_mode != int_mode and not ints and not w.sem.float_only(dtype):
        raise w.error(node, f"ct.atomic_{op} on '{array.name}', whose dtype may be a float or an integer here: "
                            f"state its dtypes (--dtype {array.name}=i32, say)")
    mode = int_mode if ints else float_mode
    scope = _enum(w, args.get("memory_scope"), SCOPES, "Device", "MemoryScope", out)
    shape, ptrs, mask = pointers(w, node, array, args, write=True, out=out, hint=hint)
    x = rust_name(array.name)
    operands = [_operand(w, args[v], array, shape, exact, out, f"{x}_{v}").expr for v in values]
    array.written = True
    w.state.unsafe(f"updates '{array.name}' atomically through pointers",
                   "every lane its mask leaves on lies inside the array")
    token = pointer_token(w.state, array, scatter=True)
    call = ir.Call("atomic_cas_tko" if cas else "atomic_rmw_tko", (
        ptrs, *operands, *(() if cas else (ir.Lit(f"atomic::{mode}"),)), ir.Lit(f"ordering::{order}"),
        ir.Lit(f"scope::{scope}"), ir.Call("Some", (mask,)) if mask else ir.Lit("None"),
        ir.Call("Some", (token,)) if token else ir.Lit("None")))
    return bind_loaded(w, ir.TileType(f"${array.name}", shape), ir.Unsafe(call, reason=lanes_inside(array, mask)),
                       token, out, hint)


def _handler(op: str):
    def handler(w: Walker, node: ast.Call, out, hint) -> Value:
        return _atomic(w, node, op, out, hint)
    return handler


for _op in (*RMW, "cas"):
    register(f"atomic_{_op}", _handler(_op))
