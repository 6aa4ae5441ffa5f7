"""`ct.load_advanced_indexing` and `ct.store_advanced_indexing`: one axis of an array indexed by a
1-D tile of integers (the sparse axis), every other by a `ct.Slice(start, length)` (a dense range).

cuTile Python lowers them to a Tile IR gather/scatter view, whose elements outside the array read
the padding (a load) or are not written (a store). cutile 0.5.0 has no such view, so each is the
gather or scatter it amounts to, with its bounds checked: along the sparse axis the index tile, along
each dense axis `start + ct.arange(length)`, each laid along its own axis and broadcast together.
A load from an array the kernel only reads is therefore the module's safe gather."""

from __future__ import annotations

import ast
import math
from typing import TYPE_CHECKING

from ... import ir
from ..bindings import Binding, Value
from .memory import PADDING
from .registry import OPS, ct_op

if TYPE_CHECKING:
    from ..walker import Walker

# What a padded lane reads, per ct.PaddingMode (UNDETERMINED: any value; zero, as a plain load pads).
PADDING_VALUES = {"UNDETERMINED": 0, "ZERO": 0, "NEG_ZERO": -0.0, "NAN": math.nan, "POS_INF": math.inf,
                  "NEG_INF": -math.inf}
assert set(PADDING_VALUES) >= set(PADDING)


@ct_op("Slice")
def ct_slice(w: Walker, node: ast.Call, out, hint) -> Value:
    """`ct.Slice(start, length)`: the dense range of one axis, `start` an integer scalar or number,
    `length` a compile-time power of two. Only advanced indexing takes it."""
    args = w.call_args(node, ["start", "length"], 2)
    start = w.expr(args["start"], out, hint="start")
    if not (start.kind == "const" and type(start.py) is int) and not (
            start.kind == "scalar" and w.sem.integer(start.dtype)):
        raise w.error(args["start"], "ct.Slice's start must be an integer")
    length = w.expr(args["length"], out)
    if length.kind == "const" and (type(length.py) is not int or length.py <= 0):
        raise w.error(args["length"], f"ct.Slice's length must be a positive integer, got {length.py!r}")
    if length.kind != "const" and length.dim is None:
        raise w.error(args["length"], "ct.Slice's length must be a compile-time constant (a number or a "
                                      "ct.Constant[int] parameter)")
    return Value("slice", py=(start, length.py if length.kind == "const" else length.dim))


def _index_tiles(w: Walker, node: ast.Call, indices: ast.expr, out: list[ir.Stmt]
                 ) -> tuple[tuple[ir.Dim, ...], list[Value]]:
    """The tile shape the indices select, and one integer tile per axis laid along that axis (the
    sparse axis' tile as given, each dense axis' `start + arange(length)` as i32). The gather or
    scatter they go to holds their number to the array's rank."""
    val = w.expr(indices, out, hint="index")
    items = val.py if val.kind == "tuple" else [val]
    if len(items) < 2:
        op = node.func.attr if isinstance(node.func, ast.Attribute) else "advanced indexing"
        raise w.error(node, f"{op} takes an array of rank 2 or more, one index per axis (ct.gather and "
                            "ct.scatter index a 1-D one)")
    sparse = [axis for axis, item in enumerate(items) if item.kind == "tile"]
    for axis, item in enumerate(items):
        if item.kind == "tile" and (len(item.shape) != 1 or not w.sem.integer(item.dtype)):
            raise w.error(indices, f"the index of axis {axis} must be a 1-D tile of integers or a ct.Slice")
        if item.kind not in ("tile", "slice"):
            raise w.error(indices, f"the index of axis {axis} must be a 1-D tile of integers (the sparse axis) or "
                                   "ct.Slice(start, length) (a dense one)")
    if len(sparse) != 1:
        raise w.error(indices, f"exactly one index must be a 1-D tile of integers (the sparse axis); found "
                               f"{len(sparse)}")
    shape = tuple(item.shape[0] if item.kind == "tile" else item.py[1] for item in items)
    for axis, n in enumerate(shape):
        if isinstance(n, int) and n & (n - 1):
            raise w.error(indices, f"the index of axis {axis} selects {n} elements; it must be a power of two")
    tiles = []
    for axis, item in enumerate(items):
        laid = tuple(n if a == axis else 1 for a, n in enumerate(shape))
        if item.kind == "slice":
            start, length = item.py
            ramp = w.sem.bind_temp(out, "ramp", ir.TileType("i32", (length,)), ir.Call("iota", (ir.Shape((length,)),)))
            if not (start.kind == "const" and start.py == 0):
                offset = Value("scalar", ir.ScalarType("i32"), w.sem.i32(start, node, out))
                ramp = w.sem.bind_temp(out, "ramp", ramp.type, ir.Binary(
                    "+", ramp.expr, w.sem.splat(offset, "i32", (length,), out, "start", node).expr))
            item = ramp
        tiles.append(w.sem.reshaped(item, laid, out, "index"))
    return shape, tiles


def _as_call(w: Walker, node: ast.Call, op: str, args: list[Value | ast.expr], keywords: dict[str, Value | ast.expr]
             ) -> ast.Call:
    """A call of `ct.<op>` at `node`'s place whose arguments are the given AST nodes, or values
    bound to fresh names for it."""
    def named(arg: Value | ast.expr) -> ast.expr:
        if isinstance(arg, ast.expr):
            return arg
        name = w.state.fresh("_advanced")
        w.frame.scopes[-1][name] = Binding(arg, None, w.depth)
        return ast.Name(id=name, ctx=ast.Load())

    func = ast.Attribute(value=ast.Name(id="ct", ctx=ast.Load()), attr=op, ctx=ast.Load())
    call = ast.Call(func=func, args=[named(a) for a in args],
                    keywords=[ast.keyword(arg=k, value=named(v)) for k, v in keywords.items()])
    return ast.fix_missing_locations(ast.copy_location(call, node))


def _hints(w: Walker, args: dict, out: list[ir.Stmt]) -> dict[str, ast.expr]:
    """`latency` goes on to the gather or scatter; `allow_tma` (a bool) has no pointer form."""
    if "allow_tma" in args:
        tma = w.expr(args["allow_tma"], out)
        if tma.kind != "const" or (tma.py is not None and not isinstance(tma.py, bool)):
            raise w.error(args["allow_tma"], "allow_tma must be True, False or None")
    return {"latency": args["latency"]} if "latency" in args else {}


@ct_op("load_advanced_indexing")
def ct_load_advanced_indexing(w: Walker, node: ast.Call, out, hint) -> Value:
    """The tile at the sparse axis' indices and the dense axes' ranges: a gather with its bounds
    checked, padded by `padding_mode` outside the array."""
    args = w.call_args(node, ["array", "indices", "padding_mode", "latency", "allow_tma"], 2)
    mode = "UNDETERMINED"
    if "padding_mode" in args:
        val = w.expr(args["padding_mode"], out)
        mode = getattr(val.py, "name", None) if val.kind == "static" else None
        if mode not in PADDING_VALUES:
            raise w.error(args["padding_mode"], "expected a ct.PaddingMode")
    _, tiles = _index_tiles(w, node, args["indices"], out)
    gather = _as_call(w, node, "gather", [args["array"], Value("tuple", py=tiles)],
                      {"padding_value": Value("const", py=PADDING_VALUES[mode]), **_hints(w, args, out)})
    return OPS["gather"](w, gather, out, hint)


@ct_op("store_advanced_indexing")
def ct_store_advanced_indexing(w: Walker, node: ast.Call, out, hint) -> Value:
    """The tile written at the sparse axis' indices and the dense axes' ranges: a scatter with its
    bounds checked (what lies outside the array is not written). The tile's shape is the one the
    indices select."""
    args = w.call_args(node, ["array", "indices", "tile", "latency", "allow_tma"], 3)
    shape, tiles = _index_tiles(w, node, args["indices"], out)
    tile = w.expr(args["tile"], out, hint="value")
    if tile.kind != "tile":
        raise w.error(args["tile"], "ct.store_advanced_indexing stores a tile")
    if tile.shape != shape:
        raise w.error(args["tile"], f"the tile's shape {tile.shape} is not {shape}, the shape the indices select")
    scatter = _as_call(w, node, "scatter", [args["array"], Value("tuple", py=tiles), tile], _hints(w, args, out))
    return OPS["scatter"](w, scatter, out, hint)
