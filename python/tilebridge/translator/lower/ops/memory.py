"""Array accesses: ct.load/ct.store/ct.num_tiles as cutile partitions, ct.gather/ct.scatter
through pointers (or, with `lift_gathers`, as partitions), and which outputs are safe (one tile
per block at the block index) or unchecked. The items of lists of arrays are in `lists`."""

from __future__ import annotations

import ast
import typing
from typing import TYPE_CHECKING

from ... import ir
from ....errors import TranslationError
from ...rust_syntax import float_literal, rust_name
from ..bindings import Value
from ..facts import with_article
from .registry import ct_op

if TYPE_CHECKING:
    from ..state import KernelState
    from ..walker import Walker

# ct.PaddingMode -> cutile's padding marker (None: as the access pads anyway).
PADDING = {
    "ZERO": "padding::Zero",  # as the plain partition pads
    "UNDETERMINED": None,
    "NEG_INF": "padding::NegInf",
    "POS_INF": "padding::PosInf",
    "NAN": "padding::Nan",
    "NEG_ZERO": "padding::NegZero",
}


def _times(expr: ir.Expr, n: ir.Dim) -> ir.Expr | None:
    """`k` where `expr` is `k * n` or `n * k` (n a tile dimension), else None."""
    size = ir.Var(rust_name(n)) if isinstance(n, str) else ir.Lit(f"{n}i32")
    if expr is None:
        return None
    if isinstance(expr, ir.Binary) and expr.op == "*":
        if expr.rhs == size:
            return expr.lhs
        if expr.lhs == size:
            return expr.rhs
    return None

def array_arg(w: Walker, node: ast.expr, out: list[ir.Stmt]) -> ir.ArrayParam:
    val = w.expr(node, out)
    if val.kind != "array":
        raise w.error(node, "expected an array parameter")
    return w.state.arrays[val.py]


def _set_rank(state: KernelState, array: ir.ArrayParam, rank: int, node: ast.AST) -> None:
    if array.rank and array.rank != rank:
        raise state.error(node, f"array '{array.name}' is used with rank {rank} here and {array.rank} elsewhere")
    array.rank = rank


def _order(w: Walker, node: ast.expr | None, rank: int, out: list[ir.Stmt]) -> tuple[int, ...] | None:
    """A load's `order=`: a permutation of the tile's axes, None for the identity."""
    if node is None:
        return None
    val = w.expr(node, out)
    if val.kind == "static" and val.py in ("C", "F"):
        order = tuple(range(rank)) if val.py == "C" else tuple(reversed(range(rank)))
    else:
        items = val.py if val.kind == "tuple" else [val]
        order = tuple(w.sem.int_const(i, node) for i in items)
    if sorted(order) != list(range(rank)):
        raise w.error(node, f"order {order} is not a permutation of {rank} axes")
    return None if order == tuple(range(rank)) else order


def _partition(state: KernelState, array: ir.ArrayParam, shape: tuple[ir.Dim, ...], padding: str | None,
               order: tuple[int, ...] | None = None, out: list[ir.Stmt] | None = None) -> ir.Expr:
    key = (array.name, shape, padding, order)
    # A list item's view lives in the loop that makes it: its partitions are made where used.
    local = array.name in state.items
    if local or key not in state.partitions:
        name = state.fresh(f"{rust_name(array.name)}_part")
        source = ir.Var(rust_name(array.name))
        if order is not None:
            dim_map = ir.Lit(f"const_array![{', '.join(map(str, order))}]")
            value: ir.Expr = ir.Method(source, "partition_permuted", (ir.Shape(shape), dim_map))
        elif padding is None:
            value = ir.Method(source, "partition", (ir.Shape(shape),))
        else:
            value = ir.Unsafe(
                ir.Call("make_partition_view", (source, ir.Shape(shape), ir.Lit(padding), ir.Lit("dim_map::Identity"),
                                                ir.Call("get_tensor_token", (source,)))),
                reason=f"a read-only view of `{array.name}` that starts from the tensor's own ordering token",
            )
            state.unsafe_reasons.append(f"load from '{array.name}' padded with {padding.split('::')[1]} "
                                       "(cutile's safe partition pads with zero only)")
        if local:
            out.append(ir.Let(name, ir.PartitionType(f"${array.name}", shape), value, state.line))
            return ir.Var(name)
        state.partition_lets.append(ir.Let(name, ir.PartitionType(f"${array.name}", shape), value, state.line))
        state.partitions[key] = name
    return ir.Var(state.partitions[key])


def _index(w: Walker, node: ast.expr, out: list[ir.Stmt]) -> list[Value]:
    """A tile index: numbers and i32 scalars, as they are; other values (0-d tiles, an index
    array's values) as the i32 scalars they stand for."""
    val = w.expr(node, out, hint="index")
    items = val.py if val.kind == "tuple" else [val]
    return [item if item.kind == "const" or (item.kind == "scalar" and item.dtype == "i32") else
            Value("scalar", ir.ScalarType("i32"), w.sem.i32(item, node, out)) for item in items]


def _padding(w: Walker, node: ast.expr | None, out: list[ir.Stmt]) -> str | None:
    if node is None:
        return None
    val = w.expr(node, out)
    mode = getattr(val.py, "name", None) if val.kind == "static" else None
    if mode not in PADDING:
        raise w.error(node, "expected a ct.PaddingMode")
    return PADDING[mode]


@ct_op("load")
def ct_load(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["array", "index", "shape", "order", "padding_mode", "latency", "allow_tma"], 3)
    array = array_arg(w, args["array"], out)
    w.state.count(array, "loads")
    shape = w.dims(args["shape"], out)
    index = _index(w, args["index"], out)
    if shape == () and index:
        # One element, as a 0-d tile: the 1 x ... x 1 tile at that index, reshaped.
        one = _load(w, node, args, array, index, (1,) * len(index), out, hint)
        return w.sem.bind_temp(out, hint, ir.TileType(one.dtype, ()), ir.Method(one.expr, "reshape", (ir.Shape(()),)))
    return _load(w, node, args, array, index, shape, out, hint)


def _load(w: Walker, node: ast.Call, args: dict, array: ir.ArrayParam, index: list[Value], shape: tuple[ir.Dim, ...],
          out: list[ir.Stmt], hint: str) -> Value:
    if len(index) != len(shape):
        raise w.error(node, "the index and the tile shape of ct.load differ in rank")
    _set_rank(w.state, array, len(shape), node)
    w.state.site(array, "loads", shape, index)
    order = _order(w, args.get("order"), len(shape), out)
    padding = _padding(w, args.get("padding_mode"), out)
    if not w.state.read_and_written(array) and padding == "padding::Zero":
        padding = None  # the plain partition pads with zero
    if order is not None and padding is not None:
        raise w.error(node, "a load with both order= and a non-zero padding_mode is not supported yet")
    idx = ir.Index(tuple(w.sem.i32(i, node) for i in index))
    tile_type = ir.TileType(f"${array.name}", shape)
    latency = _latency_value(w, node, args.get("latency"), out)
    tma = _tma_value(w, node, args.get("allow_tma"), out)
    if w.state.read_and_written(array):
        if order is not None:
            raise w.error(node, "ct.load(..., order=...) of an array the kernel also writes is not "
                                   "supported yet")
        view = _mutable_view(w.state, array, shape, padding, "it is updated in place", out)
        # Bound to a typed name: cutile infers no type for a raw view load inside an expression.
        return w.sem.bind_temp(out, hint, tile_type, tile_load(w, view, idx, latency, tma, out, tile_type,
                                                                     mutable=True))
    part = _partition(w.state, array, shape, padding, order, out)
    return w.sem.bind_temp(out, hint, tile_type, tile_load(w, part, idx, latency, tma, out, tile_type))


def _latency_value(w: Walker, node: ast.Call, latency_node: ast.expr | None, out: list[ir.Stmt]) -> int | str | None:
    """A `latency=` hint: cycles, the Rust name of the ct.Constant giving them, or None."""
    if latency_node is None:
        return None
    latency = w.expr(latency_node, out)
    if latency.kind == "scalar" and latency.dim is not None:  # a ct.Constant: a const generic argument
        name = rust_name(latency.dim)
        w.state.launch_check(
            ir.Binary("&&", ir.Binary(">=", ir.Var(name), ir.Lit("1i32")), ir.Binary("<=", ir.Var(name), ir.Lit("10i32"))),
            f"{w.state.src.display_file}: `{latency.dim}` is a load or store latency, which cuTile Python requires "
            "between 1 and 10")
        return name
    if latency.kind != "const" or not (latency.py is None or isinstance(latency.py, int)):
        raise w.error(node, "latency must be an integer constant")
    if latency.py is not None and not 1 <= latency.py <= 10:
        raise w.error(latency_node, f"latency must be between 1 and 10, as cuTile Python requires; got {latency.py}")
    return latency.py


def _latency_option(latency: int | str | None) -> ir.Expr:
    """The hint as the `Option<i32>` of cutile's raw view loads and stores."""
    if latency is None:
        return ir.Lit("None")
    return ir.Lit(f"Some({latency}i32)" if isinstance(latency, int) else f"Some({latency})")


def _tma_value(w: Walker, node: ast.Call, tma_node: ast.expr | None, out: list[ir.Stmt]) -> bool | ir.Expr:
    """An `allow_tma=` switch: True or False, or the expression of a ct.Constant[bool]."""
    tma = w.expr(tma_node, out) if tma_node is not None else Value("const", py=True)
    if tma.kind == "scalar" and tma.dtype == "bool":
        return tma.expr
    if tma.kind != "const" or not isinstance(tma.py, bool):
        raise w.error(node, "allow_tma must be True or False")
    return tma.py


def tile_load(w: Walker, part: ir.Expr, idx: ir.Index, latency: int | str | None, tma: bool | ir.Expr,
               out: list[ir.Stmt], tile_type: ir.TileType | None = None, mutable: bool = False) -> ir.Expr:
    """A partition load with the optional latency hint and TMA switch of ct.load; from a
    mutable view (`mutable`) when the kernel also writes the array."""
    if not isinstance(tma, bool):
        # A ct.Constant[bool]: both loads, chosen by the const generic (cutile folds the branch).
        # They assign one variable, whose declared type tells cutile what the raw load returns.
        assert tile_type is not None
        name = w.state.fresh("loaded")
        zero = w.sem.zero(tile_type, out, name)
        out.append(ir.Let(name, tile_type, zero, w.state.line, mutable=True))
        branches: list[list[ir.Stmt]] = [[], []]
        for branch, flag in zip(branches, (True, False)):
            branch.append(ir.Assign(name, tile_load(w, part, idx, latency, flag, branch, mutable=mutable),
                                    w.state.line))
        out.append(ir.IfElse(tma, branches[0], branches[1], w.state.line))
        return ir.Var(name)
    # The view load itself, as cuTile Python makes it: a tile outside the array reads the padding
    # (cutile's `Partition::load` traps instead, and TileGym's split loops run past the end).
    idx = _named_index(w, idx.items, out)
    tma_mode = ir.Lit("tma::Enabled" if tma else "tma::Disabled")
    if mutable:
        # The view's own ordering token puts this load after the block's earlier stores to it.
        return ir.Unsafe(ir.Call("load_view_tko_mut", (
            ir.Ref(part), idx, ir.Lit("ordering::Weak"), ir.Lit("scope::TileBlock"), _latency_option(latency),
            tma_mode)),
            reason="a tile outside the array reads the padding; the kernel reads only what its own block "
                   "writes, as cuTile Python requires of an in-place update")
    return ir.Call("load_view_tko", (ir.Ref(part), idx, ir.Lit("ordering::Weak"), ir.Lit("scope::TileBlock"),
                                     _latency_option(latency), tma_mode))


def _named_index(w: Walker, items: typing.Iterable[ir.Expr], out: list[ir.Stmt]) -> ir.Index:
    """A tile index of typed names, as a raw view load or store needs it: cutile infers no type
    for an expression (e.g. a block id) inside the call."""
    return ir.Index(tuple(e if isinstance(e, (ir.Var, ir.Lit)) else
                          w.sem.bind_temp(out, "index", ir.ScalarType("i32"), e).expr for e in items))


@ct_op("store")
def ct_store(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["array", "index", "tile", "order", "latency", "allow_tma"], 3)
    array = array_arg(w, args["array"], out)
    w.state.count(array, "stores")
    index = _index(w, args["index"], out)
    tile = _stored(w, node, w.expr(args["tile"], out, hint=f"{rust_name(array.name)}_tile"), array, len(index), out)
    if tile.kind == "tile":
        w.state.site(array, "stores", tile.shape, index)
    if _order(w, args.get("order"), len(index), out) is not None:
        raise w.error(node, "ct.store(..., order=...) other than the identity is not supported yet")
    hints = _store_hints(w, node, args, out)
    if hints is not None:
        # cutile's checked stores take no hints: honouring TileGym's allow_tma=False (which it
        # measured at +30% for rms_norm) needs the raw store through an unchecked partition.
        if tile.kind != "tile" or len(index) != len(tile.shape):
            raise w.error(node, "the index and the tile of ct.store differ in rank")
        _set_rank(w.state, array, len(index), node)
        tile = as_array_dtype(w, tile, array, out)
        return _unchecked_store(w, node, array, index, tile, "a store with allow_tma or latency hints",
                                     out, hints=hints)
    return _store(w, node, args["tile"], array, index, tile, out)


def _stored(w: Walker, node: ast.Call, tile: Value, array: ir.ArrayParam, rank: int, out: list[ir.Stmt]) -> Value:
    """What ct.store stores: a scalar or a number as a 0-d tile (a number of the array's dtype), and
    a 0-d tile as a block of ones of the index's rank, as cuTile Python reshapes it."""
    hint = f"{rust_name(array.name)}_tile"
    if tile.kind == "scalar" or (tile.kind == "const" and type(tile.py) in (int, float)):
        tile = w.sem.splat(tile, tile.dtype if tile.kind == "scalar" else f"${array.name}", (), out, hint, node)
    if tile.kind != "tile" or tile.shape != () or not rank:
        return tile
    return w.sem.bind_temp(out, hint, ir.TileType(tile.dtype, (1,) * rank),
                           ir.Method(tile.expr, "reshape", (ir.Shape((1,) * rank),)))


def _store_hints(w: Walker, node: ast.Call, args: dict, out: list[ir.Stmt]) -> tuple[ir.Expr, ir.Expr] | None:
    """(latency, tma) arguments of a raw store for ct.store's hints; None without hints."""
    if "latency" not in args and "allow_tma" not in args:
        return None
    tma = _tma_value(w, node, args.get("allow_tma"), out)
    latency = _latency_value(w, node, args.get("latency"), out)
    if tma is True and latency is None:
        return None  # allow_tma=True alone is the default
    tma_choice = ir.Lit("tma::Enabled" if tma else "tma::Disabled") if isinstance(tma, bool) else tma
    return _latency_option(latency), tma_choice


def _store(w: Walker, node: ast.Call, tile_node: ast.expr, array: ir.ArrayParam, index: list[Value], tile: Value,
           out: list[ir.Stmt]) -> Value:
    if tile.kind != "tile":
        raise w.error(tile_node, "ct.store of a scalar is not supported yet; store a tile")
    if len(index) != len(tile.shape):
        raise w.error(node, "the index and the tile of ct.store differ in rank")
    tile = as_array_dtype(w, tile, array, out)
    _set_rank(w.state, array, len(index), node)
    reason = _unsafe_store_reason(w.state, array, index)
    if reason is not None:
        return _unchecked_store(w, node, array, index, tile, reason, out)
    array.written = True
    array.tile = tile.shape
    for d in tile.shape:
        if isinstance(d, str):
            w.state.mark_tile_dim(d)
    return Value("tile", None, ir.Method(ir.Var(rust_name(array.name)), "store", (tile.expr,)))


def check_unchecked_output(state: KernelState, node: ast.Call, array: ir.ArrayParam) -> None:
    """An output written anywhere (unchecked partition or pointers) is written nowhere per block."""
    if array.tile is not None:
        raise state.error(node, f"'{array.name}' is stored both per block and elsewhere")


def _unchecked_store(w: Walker, node: ast.Call, array: ir.ArrayParam, index: list[Value], tile: Value, reason: str,
                     out: list[ir.Stmt], hints: tuple[ir.Expr, ir.Expr] | None = None) -> Value:
    """A store cutile cannot prove disjoint across blocks: through a mutable partition of the
    whole tensor, the tile index kept inside the grid and the tiles disjoint by the kernel, as
    cuTile Python requires (a tile outside the grid is undefined there). No runtime test: on the
    H200, cutile's checked store (a trap) cost the persistent bmm 1.17x and the persistent layer
    norm 1.04x, and an `if` on the index cost the persistent layer norm and rms norm 1.3x, where
    the plain store is within 1% of cuTile Python; the trap also doubled the persistent matmul's
    HGMMA and made it spill."""
    check_unchecked_output(w.state, node, array)
    array.written = True
    part = _mutable_view(w.state, array, tile.shape, None, reason, out)
    idx = _named_index(w, [w.sem.i32(i, node) for i in index], out)
    latency, tma = hints if hints is not None else (ir.Lit("None"), ir.Lit("tma::Enabled"))

    def raw_store(tma_mode: ir.Expr) -> ir.Expr:
        return ir.Call("store_view_tko_mut", (ir.Lit(f"&mut {part.name}"), tile.expr, idx, ir.Lit("ordering::Weak"),
                                              ir.Lit("scope::TileBlock"), latency, tma_mode))

    store = raw_store(tma) if isinstance(tma, ir.Lit) else ir.If(
        tma, raw_store(ir.Lit("tma::Enabled")), raw_store(ir.Lit("tma::Disabled")))
    return Value("tile", None, ir.Unsafe(store, reason=(
        f"the kernel stores inside the grid of `{array.name}`'s partition, and blocks store disjoint tiles of "
        "it, as cuTile Python requires")))


def _mutable_view(state: KernelState, array: ir.ArrayParam, shape: tuple[ir.Dim, ...], padding: str | None,
                  reason: str, out: list[ir.Stmt] | None = None) -> ir.Var:
    """The mutable partition of the whole of `array` in tiles of `shape` through which the
    kernel stores (and, updating in place, loads) tiles cutile cannot prove disjoint. Loads
    without a padding_mode share the stores' view, and so its ordering token; a padded load
    gets a view of its own (tileiras refuses stores through a padded view). A second view of an
    array updated in place is made where it is used, its token joined with the other views'
    tokens, as cuTile Python orders every access of an array by one token: ordered only by the
    data flowing from load to store, tileiras split the in-place scaled_silu's load in two
    guarded halves (1.055x cuTile Python's time on bf16)."""
    views = state.mutable_views.setdefault((array.name, shape), {})
    if array.name in state.items:
        assert out is not None
        views.clear()  # made where used, as a list item's partitions are
    view = views.get(padding)
    if view is None:
        view = state.fresh(f"{rust_name(array.name)}_out")
        source = ir.Var(rust_name(array.name))
        why = (f"cutile cannot prove that blocks store disjoint tiles of `{array.name}` ({reason}); the kernel "
               "guarantees it, as cuTile Python requires")
        siblings = [v for k, v in views.items() if k != padding]
        at_site = bool(siblings) and state.read_and_written(array) and out is not None
        if state.read_and_written(array):
            token: ir.Expr = ir.Call("get_tensor_token", (source,))
            if at_site:
                # after the accesses through the array's other views (the padded load of an in-place update)
                tokens = [f"get_tensor_token({source.name})", *(f"get_partition_token_mut(&{v})" for v in siblings)]
                token = ir.Call("join_tokens", (ir.Lit(f"&[{', '.join(tokens)}]"),))
            value: ir.Expr = ir.Call("make_partition_view_mut", (
                source, ir.Shape(shape), ir.Lit(padding or "padding::None"), token))
            state.unsafe_reasons.append(f"updates '{array.name}' in place through an unchecked partition")
        else:
            value = ir.Method(source, "partition_full_mut", (ir.Shape(shape),))
            state.unsafe_reasons.append(f"stores to '{array.name}' through an unchecked partition ({reason})")
        (out if array.name in state.items or at_site else state.partition_lets).append(
            ir.Let(view, ir.PartitionType(f"${array.name}", shape, mutable=True), ir.Unsafe(value, reason=why),
                   state.line, mutable=True))
        if not at_site:
            views[padding] = view  # a view made at its access site is not reused elsewhere
    for d in shape:
        if isinstance(d, str):
            state.mark_tile_dim(d)
    return ir.Var(view)


def _unsafe_store_reason(state: KernelState, array: ir.ArrayParam, index: list[Value]) -> str | None:
    """None when a store is one tile per block at the block's own index: a safe partition."""
    use = state.uses[array.name]
    if use.stores != 1:
        return f"'{array.name}' is stored more than once"
    if use.loads:
        return f"'{array.name}' is also read"
    if state.loops:
        return "the store is inside a loop"
    if len(index) > 3:
        return f"'{array.name}' has rank {len(index)}; checked outputs are at most rank 3"
    for axis, item in enumerate(index):
        if item.bid_axis == axis or (item.kind == "const" and item.py == 0):
            continue
        return f"index component {axis} is not ct.bid({axis})"
    return None


def _row_access(w: Walker, node: ast.Call, indices: ast.expr, out: list[ir.Stmt]) -> tuple[list[Value], ir.Dim]:
    """Reads a gather/scatter index tuple `(s0, ..., arange(n) + k*n)`: scalars, then one ramp.
    Returns the tile-space index of the equivalent 1 x ... x n tile access, and n."""
    val = w.expr(indices, out, hint="index")
    items = val.py if val.kind == "tuple" else [val]
    *scalars, ramp = items
    if ramp.kind != "tile" or ramp.iota_offset is None or len(ramp.shape) != 1:
        raise w.error(indices, "ct.gather/ct.scatter are supported where the last index is "
                                  "ct.arange(n) (plus a whole number of tiles) and the others are scalars")
    for s in scalars:
        w.sem.i32(s, indices, out)
    n, offset = ramp.shape[0], ramp.iota_offset
    if offset.kind == "const" and offset.py == 0:
        column = Value("const", py=0)
    elif offset.kind == "const" and isinstance(n, int) and offset.py % n == 0:
        column = Value("const", py=offset.py // n)
    elif offset.kind == "scalar" and (k := _times(offset.expr, n) or _times(offset.defn, n)) is not None:
        column = _known_scalar(w, k)  # k * n + arange(n): tile k
    else:
        raise w.error(indices, "ct.gather/ct.scatter at an offset that is not a whole number of tiles "
                                  "is not supported yet")
    return [*scalars, column], n


def _row_access_or_none(w: Walker, node: ast.Call, indices: ast.expr,
                        out: list[ir.Stmt]) -> tuple[list[Value], ir.Dim] | None:
    """`_row_access`, or None (and nothing emitted) where the indices are not of that form."""
    scratch: list[ir.Stmt] = []
    try:
        row = _row_access(w, node, indices, scratch)
    except TranslationError:
        return None
    out.extend(scratch)
    return row


def _known_scalar(w: Walker, expr: ir.Expr) -> Value:
    """The bound scalar that `expr` names, with what is known of it (e.g. that it is ct.bid(0))."""
    for scope in reversed(w.frame.scopes):
        for b in scope.values():
            if b.val.kind == "scalar" and b.val.expr == expr:
                return b.val
    return Value("scalar", ir.ScalarType("i32"), expr)


@ct_op("gather")
def ct_gather(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["array", "indices", "mask", "padding_value", "check_bounds", "latency"], 2)
    array = array_arg(w, args["array"], out)
    w.state.count(array, "loads")
    pad = w.expr(args["padding_value"], out) if "padding_value" in args else Value("const", py=0)
    if not (pad.kind == "const" and isinstance(pad.py, (int, float))) and pad.kind != "scalar":
        raise w.error(node, "padding_value must be a number or a scalar")
    if w.state.lift_gathers and pad.kind == "const" and "mask" not in args and not w.state.read_and_written(array) and (
            lifted := _lifted_gather(w, node, args, array, pad, out, hint)):
        return lifted
    shape, ptrs, mask = pointers(w, node, array, args, write=False, out=out, hint=hint)
    padding = _gather_padding(w, pad, array, shape, out) if mask is not None else None
    w.state.unsafe_reasons.append(f"gathers from '{array.name}' through pointers")
    why = ("every lane's address lies inside `{a}`: lanes outside its shape are masked off" if mask else
           "the kernel promises, as cuTile Python's check_bounds=False does, that every index is inside `{a}`")
    token = pointer_token(w.state, array)
    # A padding of the result's shape goes through `load_ptr_tko_padded`, which the kernel module
    # declares (templates/kernels.rs.j2): cutile 0.5.0 broadcasts a scalar padding from rank 1,
    # which Tile IR rejects above rank 1.
    load = ir.Unsafe(ir.Call("load_ptr_tko_padded" if padding is not None and shape else "load_ptr_tko", (
        ptrs, ir.Lit("ordering::Weak"), ir.Lit("None::<scope::Device>"), ir.Call("Some", (mask,)) if mask else
        ir.Lit("None"), ir.Call("Some", (padding,)) if padding is not None else ir.Lit("None"),
        ir.Call("Some", (token,)) if token else ir.Lit("None"),
        _latency(w, node, args.get("latency"), out))),
        reason=why.format(a=array.name) + ("; what this block reads, no other block writes, as cuTile Python "
                                           "requires" if w.state.read_and_written(array) else
                                           "; it is only read in this kernel"))
    return bind_loaded(w, ir.TileType(f"${array.name}", shape), load, token, out, hint)


def bind_loaded(w: Walker, tile_type: ir.TileType, access: ir.Expr, token: ir.Var | None, out: list[ir.Stmt],
                hint: str) -> Value:
    """A pointer access that returns (tile, token) bound to a name; the array's token, where it has
    one, moves on to the access's."""
    name = w.state.fresh(hint)
    out.append(ir.Let(name, ir.LoadedType(tile_type), access, w.state.line))
    if token:
        out.append(ir.Assign(token.name, ir.Var(f"_{name}_token"), w.state.line))
    else:
        w.state.temps.add(name)
    return Value("tile", tile_type, ir.Var(name))


def _gather_padding(w: Walker, pad: Value, array: ir.ArrayParam, shape: tuple[ir.Dim, ...], out: list[ir.Stmt]) -> ir.Expr:
    """What a masked-off lane of a gather reads: a scalar for a 0-d gather, else a tile of its
    shape. Zero is a Tile IR constant (`E::ZERO`, the one constant cutile's ElementType names),
    as cuTile Python makes it: tileiras turns a masked load padded with a constant zero into
    zero-filling async copies, but selects lane by lane where the padding is a converted value."""
    x = rust_name(array.name)
    if pad.kind == "const" and pad.py == 0 and shape:
        return w.sem.bind_temp(out, f"{x}_padding", ir.TileType(f"${array.name}", shape), ir.Call(
            "constant", (ir.TypeConst(f"${array.name}", "ZERO"), ir.Shape(shape)))).expr
    given = pad.expr if pad.kind == "scalar" else float_literal(float(pad.py))
    if pad.kind == "scalar" and w.sem.int_tile(pad.dtype) and w.sem.int_tile(f"${array.name}"):
        # no integer-to-integer conversion in cutile 0.5.0 (see `_convert`): through f64
        given = w.sem.bind_temp(out, f"{x}_padding", ir.ScalarType("f64"), ir.Call("convert_scalar", (given,))).expr
    scalar = w.sem.bind_temp(out, f"{x}_padding", ir.ScalarType(f"${array.name}"),
                             ir.Call("convert_scalar", (given,)))
    if not shape:
        return scalar.expr
    return w.sem.bind_temp(out, f"{x}_padding", ir.TileType(f"${array.name}", shape),
                           ir.Call("broadcast_scalar", (scalar.expr, ir.Shape(shape)))).expr


def pointer_token(state: KernelState, array: ir.ArrayParam, scatter: bool = False) -> ir.Var | None:
    """The token that orders the accesses of an array through pointers in program order, as
    cuTile Python's token order does: the scatters of every array (`scatter`), and the gathers
    of an array the kernel also writes. Without it a gather may run before the scatter it must
    see (moe_align's per-expert counts, read, incremented and written back in a loop), and
    scatters in a loop go unordered, which tileiras pipelines differently from cuTile Python's
    chain (moe_align's stage 3 took twice the instructions per iteration, 1.25x the time). None
    for the gathers of an array only read."""
    if not (scatter or state.read_and_written(array)):
        return None
    name = f"{rust_name(array.name)}_token"
    if name not in state.pointer_tokens:
        state.pointer_tokens.add(name)
        state.partition_lets.append(ir.Let(name, ir.ScalarType("Token"), ir.Call("new_token_unordered"),
                                          state.line, mutable=True))
    return ir.Var(name)


@ct_op("scatter")
def ct_scatter(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["array", "indices", "value", "mask", "check_bounds", "latency"], 3)
    array = array_arg(w, args["array"], out)
    w.state.count(array, "stores")
    if w.state.lift_gathers and "mask" not in args and "latency" not in args:
        lifted = _lifted_scatter(w, node, args, array, out)
        if lifted is not None:
            return lifted
    check_unchecked_output(w.state, node, array)
    shape, ptrs, mask = pointers(w, node, array, args, write=True, out=out, hint=hint)
    hint = f"{rust_name(array.name)}_value"
    value = as_scattered(w, node, w.expr(args["value"], out, hint=hint), array, shape, out, hint)
    array.written = True
    w.state.unsafe_reasons.append(f"scatters to '{array.name}' through pointers")
    why = lanes_inside(array, mask)
    token = pointer_token(w.state, array, scatter=True)
    store = ir.Unsafe(ir.Call("store_ptr_tko", (
        ptrs, value.expr, ir.Lit("ordering::Weak"), ir.Lit("None::<scope::Device>"),
        ir.Call("Some", (mask,)) if mask else ir.Lit("None"), ir.Call("Some", (token,)) if token else ir.Lit("None"),
        _latency(w, node, args.get("latency"), out))),
        reason=why + ", and blocks write disjoint elements, which cuTile Python leaves to the kernel too")
    if token:
        out.append(ir.Assign(token.name, store, w.state.line))
        return Value("tile", None, None)
    return Value("tile", None, store)


def as_scattered(w: Walker, node: ast.AST, value: Value, array: ir.ArrayParam, shape: tuple[ir.Dim, ...],
                 out: list[ir.Stmt], hint: str) -> Value:
    """What a scatter (or an atomic) writes at each address: a tile cast to the array's dtype and
    broadcast to the addresses' shape, or a number or scalar splat to it."""
    if value.kind == "tile":
        return w.sem.broadcast(as_array_dtype(w, value, array, out), shape, out, hint)
    return w.sem.splat(value, f"${array.name}", shape, out, hint, node)


def lanes_inside(array: ir.ArrayParam, mask: ir.Expr | None) -> str:
    """Why a write through pointers stays inside `array`: its mask, or the kernel's own promise."""
    return (f"every lane's address lies inside `{array.name}` (lanes outside its shape are masked off)" if mask
            else f"the kernel promises, as cuTile Python's check_bounds=False does, that every index is inside "
                 f"`{array.name}`")


def as_array_dtype(w: Walker, tile: Value, array: ir.ArrayParam, out: list[ir.Stmt]) -> Value:
    """`tile` as a tile of `array`'s dtype: cuTile Python casts what it stores implicitly. Two
    arrays' dtypes that meet here are tied together instead (the launcher requires them equal),
    and an array that receives a promotion of arrays' dtypes is of that dtype at launch (the
    conversion is the identity there)."""
    td = w.state.union.find(tile.dtype)
    if td == w.state.union.find(f"${array.name}"):
        return tile
    if td.startswith("$"):
        w.state.union.union(f"${array.name}", td)
        return tile
    if td in w.state.promoted:
        w.state.promoted_stores.append((f"${array.name}", td))
        return w.sem.bind_temp(out, f"{rust_name(array.name)}_cast", ir.TileType(f"${array.name}", tile.shape),
                               ir.Call("convert_tile", (tile.expr,)))
    # cuTile Python casts a stored tile only where no precision is lost; an f32 tile stored into an
    # array needs an f32 array: the launcher is built for that dtype only. An array that receives
    # integers holds integers (counts, offsets, ids).
    w.state.stored_dtypes.setdefault(array.name, set()).add(td)
    if td in ("i32", "i64"):
        w.sem.integer(f"${array.name}")
    return w.sem.bind_temp(out, f"{rust_name(array.name)}_cast", ir.TileType(f"${array.name}", tile.shape),
                           ir.Call("convert_tile", (tile.expr,)))


def _latency(w: Walker, node: ast.Call, latency_node: ast.expr | None, out: list[ir.Stmt]) -> ir.Expr:
    """The `Latency::<cycles>` argument of a pointer load or store (0: no hint)."""
    latency = _latency_value(w, node, latency_node, out)
    if latency is None and latency_node is not None:
        raise w.error(node, "latency must be an integer constant")
    return ir.Lit(f"Latency::<{0 if latency is None else latency}>")


def pointers(w: Walker, node: ast.Call, array: ir.ArrayParam, args: dict, *, write: bool, out: list[ir.Stmt],
              hint: str) -> tuple[tuple[ir.Dim, ...], ir.Expr, ir.Expr | None]:
    """The addresses of a gather/scatter as cuTile Python forms them: each index broadcast to
    one shape, times its axis' stride, summed onto the array's base pointer; and, with
    check_bounds, the mask of lanes whose every index lies inside the array."""
    val = w.expr(args["indices"], out, hint="index")
    items = val.py if val.kind == "tuple" else [val]
    if not items:
        raise w.error(args["indices"], "ct.gather and ct.scatter take one index per axis of the array, and arrays "
                                       "have at least one axis")
    _set_rank(w.state, array, len(items), node)
    w.state.site(array, "stores" if write else "loads", ("pointers",), items)
    shape: tuple[ir.Dim, ...] = ()
    for item in items:
        if item.kind == "tile":
            if not w.sem.integer(item.dtype):
                raise w.error(args["indices"], f"gather/scatter indices must be integers, not {item.dtype}")
            shape = w.sem.broadcast_shape(shape, item.shape, node)
        elif item.kind not in ("scalar", "const"):
            raise w.error(args["indices"], f"{with_article(item.kind)} cannot index an array")
    if array.name in w.state.items:
        raise w.error(node, f"ct.gather/ct.scatter on an array of the list '{w.state.items[array.name]}' is "
                               "not supported yet; ct.load and ct.store are")
    x = rust_name(array.name)
    array.strided = True
    check = w.expr(args["check_bounds"], out) if "check_bounds" in args else Value("const", py=True)
    if check.kind not in ("const", "scalar") or (check.kind == "scalar" and check.dtype != "bool"):
        raise w.error(args["check_bounds"], "check_bounds must be a bool")
    lanes: list[Value] = []
    offsets: Value | None = None
    mask: Value | None = None
    for axis, item in enumerate(items):
        if item.kind == "tile":
            lane = w.sem.broadcast(w.sem.convert(item, "i32", out, "index"), shape, out, "index")
        else:
            lane = w.sem.splat(Value("scalar", ir.ScalarType("i32"), w.sem.i32(item, node, out), nonneg=w.sem.nonneg(item)),
                               "i32", shape, out, "index", node)
        lanes.append(lane)
        term = lane
        if axis != len(items) - 1:
            stride = w.sem.splat(Value("scalar", ir.ScalarType("i32"), ir.Var(f"{x}_stride_{axis}")), "i32", shape,
                                 out, f"{x}_stride", node)
            term = Value("tile", ir.TileType("i32", shape), ir.Binary("*", lane.expr, stride.expr))
        offsets = term if offsets is None else Value("tile", ir.TileType("i32", shape),
                                                   ir.Binary("+", offsets.expr, term.expr))
        if check.kind == "scalar" or bool(check.py):
            extent = w.sem.splat(Value("scalar", ir.ScalarType("i32"),
                                     ir.Subscript(ir.Method(ir.Var(x), "shape"), axis)), "i32", shape, out,
                                 f"{x}_extent", node)
            if w.sem.nonneg(item):
                inside = Value("tile", ir.TileType("bool", shape), ir.Call("lt_tile", (lane.expr, extent.expr)))
            else:
                # 0 <= i < n as one unsigned comparison (a negative index wraps past n), as cuTile
                # Python writes it: two predicates per lane keep tileiras from vectorizing the access.
                unsigned = [w.sem.bind_temp(out, f"{x}_{what}_bits", ir.TileType("u32", shape), ir.Call(
                    "bitcast", (w.sem.named(v, out, f"{x}_{what}").expr,))).expr
                    for v, what in ((lane, "index"), (extent, "extent"))]
                inside = Value("tile", ir.TileType("bool", shape), ir.Call("lt_tile", tuple(unsigned)))
            mask = inside if mask is None else Value("tile", inside.type, ir.Binary("&", mask.expr, inside.expr))
    if mask is not None and check.kind == "scalar":
        # check_bounds decided at run time (e.g. `TILE != N`, which cutile folds): lanes are
        # inside, or bounds are not checked.
        off = Value("scalar", ir.ScalarType("bool"), ir.Binary("==", check.expr, ir.Lit("false")))
        unchecked = w.sem.splat(off, "bool", shape, out, "unchecked", node)
        mask = Value("tile", mask.type, ir.Binary("|", mask.expr, unchecked.expr))
    if "mask" in args:
        user = w.expr(args["mask"], out, hint="mask")
        if user.kind != "tile" or w.state.union.find(user.dtype) != "bool":
            raise w.error(args["mask"], "mask must be a tile of booleans")
        user = w.sem.broadcast(user, shape, out, "mask")
        mask = user if mask is None else Value("tile", user.type, ir.Binary("&", mask.expr, user.expr))
    base: ir.Expr = ir.Method(ir.Var(x), "as_ptr")
    if write:
        base = ir.Call("cast_mut", (base,))
    ptr_type = lambda s: ir.PointerTileType(f"${array.name}", s, mutable=write)  # noqa: E731
    ptrs = w.sem.bind_temp(out, f"{x}_ptr", ptr_type(()), ir.Call("pointer_to_tile", (base,)))
    if shape:
        ones = (1,) * len(shape)
        ptrs = w.sem.bind_temp(out, f"{x}_ptrs", ptr_type(ones), ir.Method(ptrs.expr, "reshape", (ir.Shape(ones),)))
        if ones != shape:
            ptrs = w.sem.bind_temp(out, f"{x}_ptrs", ptr_type(shape),
                                   ir.Method(ptrs.expr, "broadcast", (ir.Shape(shape),)))
        offsets = w.sem.bind_temp(out, f"{x}_offsets", ir.TileType("i32", shape), offsets.expr)
        ptrs = w.sem.bind_temp(out, f"{x}_ptrs", ptr_type(shape), ir.Method(ptrs.expr, "offset_tile", (offsets.expr,)))
    else:
        ptrs = w.sem.bind_temp(out, f"{x}_ptr", ptr_type(()), ir.Method(ptrs.expr, "offset", (
            ir.Call("tile_to_scalar", (offsets.expr,)),)))
    if mask is not None:
        mask = w.sem.bind_temp(out, f"{x}_inside", ir.TileType("bool", shape), mask.expr)
    return shape, ptrs.expr, mask.expr if mask is not None else None


def _lifted_gather(w: Walker, node: ast.Call, args: dict, array: ir.ArrayParam, pad: Value, out, hint) -> Value | None:
    """A gather at `(scalars, arange(n) + k*n)` as the checked tile load it amounts to, or None."""
    if (row := _row_access_or_none(w, node, args["indices"], out)) is None:
        return None
    index, n = row
    padding = {0: None, float("-inf"): "padding::NegInf", float("inf"): "padding::PosInf"}.get(pad.py, "?")
    if padding == "?":
        return None
    # Out-of-bounds lanes read the padding either way, so check_bounds needs nothing here.
    shape = (1,) * (len(index) - 1) + (n,)
    _set_rank(w.state, array, len(index), node)
    part = _partition(w.state, array, shape, padding, out=out)
    idx = ir.Index(tuple(w.sem.i32(i, node) for i in index))
    row = w.sem.bind_temp(out, hint, ir.TileType(f"${array.name}", shape), tile_load(w,
        part, idx, _latency_value(w, node, args.get("latency"), out), True, out))
    if len(shape) == 1:
        return row
    return w.sem.bind_temp(out, hint, ir.TileType(row.dtype, (n,)), ir.Method(row.expr, "reshape", (ir.Shape((n,)),)))


def _lifted_scatter(w: Walker, node: ast.Call, args: dict, array: ir.ArrayParam, out) -> Value | None:
    """A scatter at `(scalars, arange(n) + k*n)` as the (checked where provable) tile store, or None."""
    if (row := _row_access_or_none(w, node, args["indices"], out)) is None:
        return None
    index, n = row
    tile = w.expr(args["value"], out, hint=f"{rust_name(array.name)}_tile")
    if tile.kind != "tile" or tile.shape != (n,):
        raise w.error(args["value"], f"ct.scatter of a value shaped other than the index ({n},) is not "
                                        "supported yet")
    shape = (1,) * (len(index) - 1) + (n,)
    if len(shape) > 1:
        tile = w.sem.bind_temp(out, f"{rust_name(array.name)}_tile", ir.TileType(tile.dtype, shape),
                               ir.Method(tile.expr, "reshape", (ir.Shape(shape),)))
    return _store(w, node, args["value"], array, index, tile, out)


@ct_op("num_tiles")
def ct_num_tiles(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["array", "axis", "shape"], 3)
    array = array_arg(w, args["array"], out)
    shape = w.dims(args["shape"], out)
    axis = w.sem.int_const(w.expr(args["axis"], out), node)
    _set_rank(w.state, array, len(shape), node)
    if axis < 0:
        axis += len(shape)
    part = _partition(w.state, array, shape, None, out=out)
    return Value("scalar", ir.ScalarType("i32"), ir.Call("num_tiles", (ir.Ref(part), ir.Lit(f"{axis}i32"))),
               nonneg=True)
