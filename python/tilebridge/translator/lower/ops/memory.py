"""Tile accesses: ct.load/ct.store/ct.num_tiles as cutile partitions, and which outputs are safe
(one tile per block at the block index) or unchecked. Element accesses (ct.gather/ct.scatter) are
in `pointers`, the items of lists of arrays in `lists`."""

from __future__ import annotations

import ast
import typing
from typing import TYPE_CHECKING

from .... import dtypes
from ....dtypes import DTYPES
from ... import ir, module_items
from ...rust_syntax import rust_name
from .. import streams
from ..bindings import Value
from .registry import ct_op
from .tiles import permuted

if TYPE_CHECKING:
    from ..state import KernelState
    from ..walker import Walker

# ct.PaddingMode -> cutile's padding marker (None: as the access pads anyway).
# A load without a padding mode, as cuTile Python's UNDETERMINED: a view with no padding value,
# whose lanes past the array's shape hold what the hardware gives (cutile's own partition pads
# with zero, which tileiras compiles to other code).
UNPADDED = "padding::None"

PADDING = {
    "ZERO": "padding::Zero",  # as the plain partition pads
    "UNDETERMINED": UNPADDED,
    "NEG_INF": "padding::NegInf",
    "POS_INF": "padding::PosInf",
    "NAN": "padding::Nan",
    "NEG_ZERO": "padding::NegZero",
}


def array_arg(w: Walker, node: ast.expr, out: list[ir.Stmt]) -> ir.ArrayParam:
    val = w.expr(node, out)
    if val.kind != "array":
        raise w.error(node, "expected an array parameter")
    return w.state.arrays[val.py]


def set_rank(state: KernelState, array: ir.ArrayParam, rank: int, node: ast.AST) -> None:
    if array.rank and array.rank != rank:
        raise state.error(node, f"array '{array.name}' is used with rank {rank} here and {array.rank} elsewhere")
    array.rank = rank


def _order(w: Walker, node: ast.expr | None, rank: int, out: list[ir.Stmt]) -> tuple[int, ...] | None:
    """A load's or a store's `order=`: a permutation of the tile's axes, None for the identity."""
    if node is None:
        return None
    val = Value("static", py=node.value) if isinstance(node, ast.Constant) and isinstance(node.value, str) \
        else w.expr(node, out)
    if val.kind == "static" and val.py in ("C", "F"):
        order = tuple(range(rank)) if val.py == "C" else tuple(reversed(range(rank)))
    else:
        items = val.py if val.kind == "tuple" else [val]
        order = tuple(w.sem.int_const(i, node) for i in items)
    if sorted(order) != list(range(rank)):
        raise w.error(node, f"order {order} is not a permutation of {rank} axes")
    return None if order == tuple(range(rank)) else order


def _array_axes(order: tuple[int, ...] | None, rank: int) -> list[int]:
    """Per axis of the array, the axis of a tile accessed through `order=` that lies along it (the
    inverse permutation: array axis order[k] is the tile's axis k); the identity without one."""
    return list(range(rank)) if order is None else [order.index(a) for a in range(rank)]


def partition(state: KernelState, array: ir.ArrayParam, shape: tuple[ir.Dim, ...], padding: str | None,
               order: tuple[int, ...] | None = None, out: list[ir.Stmt] | None = None) -> ir.Expr:
    key = (array.name, shape, padding, order)
    # A list item's view lives in the loop that makes it: its partitions are made where used.
    local = array.name in state.items
    if local or key not in state.partitions:
        name = state.fresh(f"{rust_name(array.name)}_part")
        source = ir.Var(rust_name(array.name))
        dim_map = ir.Lit(f"const_array![{', '.join(map(str, order))}]") if order is not None else None
        if padding == UNPADDED:
            # a view the kernel made (a list item, a slice) is a tensor of its own: lent by reference
            tensor = ir.Ref(source) if local else source
            value: ir.Expr = ir.Call(module_items.unpadded_partition(order is not None),
                                     (tensor, ir.Shape(shape)) + ((dim_map,) if order is not None else ()))
        elif order is not None:
            value = ir.Method(source, "partition_permuted", (ir.Shape(shape), dim_map))
        elif padding is None:
            value = ir.Method(source, "partition", (ir.Shape(shape),))
        else:
            # cutile's safe partition pads with zero only: the module's safe one with this padding
            value = ir.Call(module_items.padded_partition(padding.split("::")[1]), (source, ir.Shape(shape)))
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


# What ct.load/ct.store take beyond their hints; `_plain_access` reads them.
ACCESS_MODES = ["check_bounds", "memory_order", "memory_scope"]


def _plain_access(w: Walker, args: dict, out: list[ir.Stmt]) -> None:
    """`check_bounds`, `memory_order` and `memory_scope` of ct.load/ct.store. check_bounds=False
    promises that the tile lies inside the array, and cuTile Python then leaves the bounds
    unchecked: the checked access computes the same wherever the promise holds (and pads or masks
    where it does not, where cuTile Python's result is undefined). Only the default order and scope
    (a weak access) are taken."""
    if "check_bounds" in args:
        check = w.expr(args["check_bounds"], out)
        if not (check.kind == "const" and isinstance(check.py, bool)) and not (
                check.kind == "scalar" and check.dtype == "bool"):
            raise w.error(args["check_bounds"], "check_bounds must be True or False")
    for key, default in (("memory_order", "WEAK"), ("memory_scope", "NONE")):
        if key in args:
            val = w.expr(args[key], out)
            name = getattr(val.py, "name", None) if val.kind == "static" else None
            if name != default:
                raise w.error(args[key], f"{key}={ast.unparse(args[key])} on ct.load/ct.store is not supported yet "
                                         f"(only the default, a weak access)")


@ct_op("load", moves=True)
def ct_load(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["array", "index", "shape", "order", "padding_mode", "latency", "allow_tma",
                              *ACCESS_MODES], 3)
    _plain_access(w, args, out)
    array = array_arg(w, args["array"], out)
    w.state.count(array, "loads", node)
    shape = w.dims(args["shape"], out)
    index = _index(w, args["index"], out)
    if shape == () and index:
        # One element, as a 0-d tile: the 1 x ... x 1 tile at that index, reshaped.
        one = _load(w, node, args, array, index, (1,) * len(index), out, hint)
        return w.sem.reshaped(one, (), out, hint)
    return _load(w, node, args, array, index, shape, out, hint)


def _load(w: Walker, node: ast.Call, args: dict, array: ir.ArrayParam, index: list[Value], shape: tuple[ir.Dim, ...],
          out: list[ir.Stmt], hint: str) -> Value:
    if len(index) != len(shape):
        raise w.error(node, "the index and the tile shape of ct.load differ in rank")
    set_rank(w.state, array, len(shape), node)
    order = _order(w, args.get("order"), len(shape), out)
    # where it reads, in the array's own axes, as a store's site is (`in_place_pairs` compares them)
    back = _array_axes(order, len(shape))
    w.state.site(array, "loads", tuple(shape[k] for k in back), [index[k] for k in back])
    padding = _padding(w, args.get("padding_mode"), out) or UNPADDED  # none given: UNDETERMINED
    if not w.state.read_and_written(array) and padding == "padding::Zero":
        padding = None  # the plain partition pads with zero
    if w.state.read_and_written(array) and padding == UNPADDED:
        padding = None  # a view of an array updated in place keeps cutile's padding (zero)
    if padding not in (None, "padding::Zero", UNPADDED):  # NaN, an infinity, -0.0: a float's padding
        w.sem.computes_with_dtype(f"${array.name}")
        integers = sorted(d for d in w.state.at_launch(f"${array.name}") if dtypes.DTYPES[d].is_integer or d == "bool")
        if integers and not w.state.survey:  # cuTile Python's front end takes it; tileiras does not
            raise w.error(args["padding_mode"], f"padding_mode {padding.split('::')[1]} pads floats: Tile IR "
                                                f"takes it for no array of {integers[0]}, which '{array.name}' is")
    if order is not None and padding not in (None, UNPADDED):
        raise w.error(node, "a load with both order= and a non-zero padding_mode is not supported yet")
    idx = ir.Index(tuple(w.sem.i32(i, node) for i in index))
    tile_type = ir.TileType(f"${array.name}", shape)
    latency = latency_value(w, node, args.get("latency"), out)
    tma = _tma_value(w, node, args.get("allow_tma"), out)
    if w.state.read_and_written(array):
        if order is not None:
            raise w.error(node, "ct.load(..., order=...) of an array the kernel also writes is not "
                                   "supported yet")
        view = _mutable_view(w.state, array, shape, padding, "it is updated in place", out)
        # Bound to a typed name: cutile infers no type for a raw view load inside an expression.
        loaded = w.sem.bind_temp(out, hint, tile_type, tile_load(w, view, idx, latency, tma, out, tile_type,
                                                                       mutable=True))
        if w.state.total_order:
            _ordered_after(w, node, array, view, out)
        return loaded
    part = partition(w.state, array, shape, padding, order, out)
    return w.sem.bind_temp(out, hint, tile_type, tile_load(w, part, idx, latency, tma, out, tile_type))


def latency_value(w: Walker, node: ast.Call, latency_node: ast.expr | None, out: list[ir.Stmt]) -> int | str | None:
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


@ct_op("store", moves=True)
def ct_store(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["array", "index", "tile", "order", "latency", "allow_tma", *ACCESS_MODES], 3)
    _plain_access(w, args, out)
    array = array_arg(w, args["array"], out)
    w.state.count(array, "stores", node)
    index = _index(w, args["index"], out)
    tile = _stored(w, node, w.expr(args["tile"], out, hint=f"{rust_name(array.name)}_tile"), array, len(index), out)
    order = _order(w, args.get("order"), len(index), out)
    if order is not None:
        if tile.kind != "tile" or len(tile.shape) != len(index):
            raise w.error(node, "the index and the tile of ct.store differ in rank")
        # Index and tile live in the array's axes permuted by `order` (array axis order[k] is axis k
        # there): the same elements are the tile permuted back, at the index permuted back, in the
        # array's own axes (cutile 0.5.0 has no permuted mutable partition).
        back = _array_axes(order, len(order))
        tile = permuted(w, tile, back, out, f"{rust_name(array.name)}_tile")
        index = [index[k] for k in back]
    if tile.kind == "tile":
        w.state.site(array, "stores", tile.shape, index)
    hints = _store_hints(w, node, args, out)
    if hints is not None:
        # cutile's checked stores take no hints (TileGym measured allow_tma=False at +30% for
        # rms_norm): the block's own tile through the module's hinted store where the store is
        # one per block at its index, else the raw store through an unchecked partition.
        if tile.kind != "tile" or len(index) != len(tile.shape):
            raise w.error(node, "the index and the tile of ct.store differ in rank")
        set_rank(w.state, array, len(index), node)
        tile = as_array_dtype(w, tile, array, out, node)
        latency, tma = hints
        own = _own_tile(w.state, array, index, tile.shape)
        if isinstance(latency, str) and not isinstance(own, str):
            own = "a latency hint a ct.Constant gives"
        if isinstance(own, str):
            return _owned_store(w, node, array, index, tile, latency, out, tma) or _unchecked_store(
                w, node, array, index, tile, own, out, hints=(_latency_option(latency), _tma_choice(tma)))
        return _hinted_store(w, array, _as_own_tile(w, array, tile, own, out), latency, tma)
    return store_tile(w, node, args["tile"], array, index, tile, out)


def _hinted_store(w: Walker, array: ir.ArrayParam, tile: Value, latency: int | None, tma: bool | ir.Expr) -> Value:
    """The block's own tile of a partitioned output, stored with hints through the module's safe
    `store_tile_<rank>d_tma_<on|off>[_latency<n>]` (module_items.py); a TMA switch a
    ct.Constant[bool] gives picks one of two (cutile folds the branch)."""
    _partitioned_output(w.state, array, tile.shape)
    y = ir.Var(rust_name(array.name))

    def store(allow: bool) -> ir.Expr:
        return ir.Call(module_items.hinted_store(len(tile.shape), allow, latency), (y, tile.expr))
    return Value("tile", None, store(tma) if isinstance(tma, bool) else ir.If(tma, store(True), store(False)))


def _partitioned_output(state: KernelState, array: ir.ArrayParam, shape: tuple[ir.Dim, ...]) -> None:
    """`array` is an output the launcher partitions into tiles of `shape`, one per block."""
    array.written = True
    array.tile = shape
    state.mark_tile_dims(shape)


def _stored(w: Walker, node: ast.Call, tile: Value, array: ir.ArrayParam, rank: int, out: list[ir.Stmt]) -> Value:
    """What ct.store stores: a scalar or a number as a 0-d tile (a number of the array's dtype), and
    a 0-d tile as a block of ones of the index's rank, as cuTile Python reshapes it."""
    hint = f"{rust_name(array.name)}_tile"
    if tile.kind == "const":
        # a number of the array's dtype: the translation spells it as cuTile Python does for floats
        # narrower than f64 (an f32 literal), so the array is one the kernel computes with
        w.sem.computes_with_dtype(f"${array.name}")
    if tile.kind == "scalar" or (tile.kind == "const" and type(tile.py) in (int, float)):
        tile = w.sem.splat(tile, tile.dtype if tile.kind == "scalar" else f"${array.name}", (), out, hint, node)
    if tile.kind != "tile" or tile.shape != () or not rank:
        return tile
    return w.sem.reshaped(tile, (1,) * rank, out, hint)


def _store_hints(w: Walker, node: ast.Call, args: dict, out: list[ir.Stmt]
                 ) -> tuple[int | str | None, bool | ir.Expr] | None:
    """(latency, allow_tma) of ct.store's hints (`_latency_value`, `_tma_value`); None without."""
    if "latency" not in args and "allow_tma" not in args:
        return None
    tma = _tma_value(w, node, args.get("allow_tma"), out)
    latency = latency_value(w, node, args.get("latency"), out)
    if tma is True and latency is None:
        return None  # allow_tma=True alone is the default
    return latency, tma


def _tma_choice(tma: bool | ir.Expr) -> ir.Expr:
    """A raw store's `tma` argument: the mode, or the ct.Constant[bool] choosing it."""
    return ir.Lit("tma::Enabled" if tma else "tma::Disabled") if isinstance(tma, bool) else tma


def store_tile(w: Walker, node: ast.Call, tile_node: ast.expr, array: ir.ArrayParam, index: list[Value], tile: Value,
           out: list[ir.Stmt]) -> Value:
    if tile.kind != "tile":
        raise w.error(tile_node, "ct.store of a scalar is not supported yet; store a tile")
    if len(index) != len(tile.shape):
        raise w.error(node, "the index and the tile of ct.store differ in rank")
    tile = as_array_dtype(w, tile, array, out, node)
    set_rank(w.state, array, len(index), node)
    minted = streams.claim(w, array, index)
    if minted is not None:  # `y.store(tile, idx)` with the index the loop's `iter_indices` mints
        _partitioned_output(w.state, array, tile.shape)
        return Value("tile", None, ir.Method(ir.Var(rust_name(array.name)), "store", (tile.expr, ir.Var(minted))))
    own = _own_tile(w.state, array, index, tile.shape)
    if isinstance(own, str):
        return _owned_store(w, node, array, index, tile, None, out) or _unchecked_store(
            w, node, array, index, tile, own, out)
    tile = _as_own_tile(w, array, tile, own, out)
    _partitioned_output(w.state, array, tile.shape)
    return Value("tile", None, ir.Method(ir.Var(rust_name(array.name)), "store", (tile.expr,)))


def _as_own_tile(w: Walker, array: ir.ArrayParam, tile: Value, own: tuple[ir.BlockView | None, tuple[ir.Dim, ...]],
                 out: list[ir.Stmt]) -> Value:
    """`tile` as the block's own tile of `array`'s checked partition (`_own_tile`): reshaped to the
    view's tile where the kernel takes a view of the array (only dimensions of extent 1 move, so
    the elements keep their order)."""
    array.view, shape = own
    if array.view is None:
        return tile
    return w.sem.reshaped(tile, shape, out, f"{rust_name(array.name)}_view_tile")


def pointer_token(state: KernelState, array: ir.ArrayParam, scatter: bool = False) -> ir.Var | None:
    """The token that orders the accesses of an array through pointers in program order, as
    cuTile Python's token order does: the scatters of every array (`scatter`), and the gathers
    of an array the kernel also writes. Without it a gather may run before the scatter it must
    see (moe_align's per-expert counts, read, incremented and written back in a loop), and
    scatters in a loop go unordered, which tileiras pipelines differently from cuTile Python's
    chain (moe_align's stage 3 took twice the instructions per iteration, 1.25x the time). None
    for the gathers of an array only read. Where the kernel's atomics acquire or release across
    arrays, one token orders every pointer access of every array (`kernel.check_memory_orders`)."""
    if not (scatter or state.in_token_order(array)):
        return None
    name = "order_token" if state.total_order else f"{rust_name(array.name)}_token"
    if name not in state.pointer_tokens:
        state.pointer_tokens.add(name)
        state.partition_lets.append(ir.Let(name, ir.ScalarType("Token"), ir.Call("new_token_unordered"),
                                          state.line, mutable=True))
    return ir.Var(name)


def _owned_store(w: Walker, node: ast.Call, array: ir.ArrayParam, index: list[Value], tile: Value,
                 latency: int | str | None, out: list[ir.Stmt], tma: bool | ir.Expr = True) -> Value | None:
    """A store cutile's checked partition cannot take (several per block, of rank 4 or more, at
    block indices in another order than the array's dimensions) through the module's safe
    `store_owned_*`, which reads the block indices of the index itself, so that a block stores
    only at its own (`module_items.owned_store`): used where every block index the kernel reads is
    one of them (the others computing the same along the rest), outside any loop (a test per trip
    measured 1.3x in persistent kernels: `_unchecked_store`), into an array the kernel does not
    read, with a latency hint that is a number. None (nothing emitted) else."""
    ties = tuple(i.bid_axis if i.kind == "scalar" else None for i in index)
    tied = [a for a in ties if a is not None]
    if w.state.blocks_read is None or not w.state.blocks_read <= set(tied) or len(set(tied)) != len(tied) \
            or w.state.loops or w.state.read_and_written(array) or isinstance(latency, str) or len(index) > 5 \
            or not w.state.owns(array, tuple((d, a, tile.shape[d]) for d, a in enumerate(ties) if a is not None)):
        return None
    check_unchecked_output(w.state, node, array)
    array.written = True
    w.state.mark_tile_dims(tile.shape)
    parts = tuple(f"b{a}" if a is not None else "0" if i.kind == "const" and i.py == 0 and type(i.py) is int else "x"
                  for i, a in zip(index, ties))
    passed = [w.sem.i32(i, node) for i, p in zip(index, parts) if p == "x"]
    token = pointer_token(w.state, array, scatter=True)
    w.state.made_through(node, pointer=True)  # in the array's pointer-token chain, with its scatters

    def store(allow_tma: bool) -> ir.Expr:
        return ir.Call(module_items.owned_store(parts, latency, allow_tma, w.state.guarded_at_run_time > 0),
                       (ir.Var(rust_name(array.name)), tile.expr, *passed, token))
    out.append(ir.Assign(token.name, store(tma) if isinstance(tma, bool) else ir.If(tma, store(True), store(False)),
                         w.state.line))
    return Value("tile", None, None)


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
    stored = ir.Unsafe(store, reason=(
        f"the kernel stores inside the grid of `{array.name}`'s partition, and blocks store disjoint tiles of "
        "it, as cuTile Python requires"))
    if w.state.total_order and w.state.read_and_written(array):
        out.append(ir.Eval(stored, w.state.line))
        _ordered_after(w, node, array, part, out)
        return Value("const", py=None)
    return Value("tile", None, stored)


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
    if state.total_order and state.read_and_written(array) and out is not None:
        return _ordered_view(state, array, shape, padding, out)
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
            state.unsafe(f"updates '{array.name}' in place through an unchecked partition",
                         "each block loads and stores only its own tiles of it, inside its grid" + state.off_reads(array))
        else:
            value = ir.Method(source, "partition_full_mut", (ir.Shape(shape),))
            state.unsafe(f"stores to '{array.name}' through an unchecked partition ({reason})",
                         "blocks store disjoint tiles of it, inside its grid")
        (out if array.name in state.items or at_site else state.partition_lets).append(
            ir.Let(view, ir.PartitionType(f"${array.name}", shape, mutable=True), ir.Unsafe(value, reason=why),
                   state.line, mutable=True))
        if not at_site:
            views[padding] = view  # a view made at its access site is not reused elsewhere
    state.mark_tile_dims(shape)
    return ir.Var(view)


def _ordered_view(state: KernelState, array: ir.ArrayParam, shape: tuple[ir.Dim, ...], padding: str | None,
                  out: list[ir.Stmt]) -> ir.Var:
    """Where the kernel's atomics order its accesses across arrays (`KernelState.total_order`): a
    view of an array it reads and writes made where it is used, from the token of the kernel's
    one order (`pointer_token`), so that the access comes after the atomic that acquired before
    it; a load or store through it moves that token on to the view's (`_load`, `_unchecked_store`:
    cutile's view token after the access is the access's own), so that a release after it comes
    after the access."""
    view = state.fresh(f"{rust_name(array.name)}_out")
    token = pointer_token(state, array, scatter=True)
    state.unsafe(f"updates '{array.name}' in place through an unchecked partition, in the order of the kernel's "
                 "atomics", "each block loads and stores only its own tiles of it, inside its grid, while its "
                 "atomics exclude the other blocks" + state.off_reads(array))
    out.append(ir.Let(view, ir.PartitionType(f"${array.name}", shape, mutable=True), ir.Unsafe(
        ir.Call("make_partition_view_mut", (ir.Var(rust_name(array.name)), ir.Shape(shape),
                                            ir.Lit(padding or "padding::None"), token)),
        reason=f"the kernel's atomics order the blocks' accesses of `{array.name}`, as cuTile Python requires"),
        state.line, mutable=True))
    state.mark_tile_dims(shape)
    return ir.Var(view)


def _ordered_after(w: Walker, node: ast.Call, array: ir.ArrayParam, view: ir.Var, out: list[ir.Stmt]) -> None:
    """After a load or store through an `_ordered_view`: the access is in the kernel's one order,
    which moves on to the view's token (cutile's view token after an access is the access's own),
    so what follows, a release among it, comes after the access."""
    w.state.made_through(node, pointer=True)
    out.append(ir.Assign(pointer_token(w.state, array, scatter=True).name,
                         ir.Call("get_partition_token_mut", (ir.Ref(view),)), w.state.line))


def _own_tile(state: KernelState, array: ir.ArrayParam, index: list[Value], shape: tuple[ir.Dim, ...]
              ) -> tuple[ir.BlockView | None, tuple[ir.Dim, ...]] | str:
    """How a store of a tile of `shape` at `index` is each block's own tile of a checked partition:
    the view the kernel takes the output as (None: the array as it is) and the view's tile; or
    why it is not. Each index component must be a block index: ct.bid(axis), or ct.bid(axis)
    split by an integer parameter P into two dimensions (`bid // P`, `bid % P`, each of tile
    extent 1), or 0 (a dimension the tile covers, the grid 1 there). View dimension i is the one
    block axis i indexes (0s fill the axes no block index takes), so block (x, y, z) stores tile
    (x, y, z) of the view, as a checked partition has it."""
    use = state.uses[array.name]
    if use.stores != 1:
        return f"'{array.name}' is stored more than once"
    if use.loads:
        return f"'{array.name}' is also read"
    if state.loops:
        return "the store is inside a loop"
    by_axis: dict[int, tuple[tuple[int, ...], str | None]] = {}  # block axis -> (dimensions, P)
    zeros: list[int] = []
    d = 0
    while d < len(index):
        item, split = index[d], index[d].bid_split
        if item.bid_axis is not None:
            axis, group = item.bid_axis, ((d,), None)
        elif split is not None and split[1] == "//" and d + 1 < len(index) and \
                index[d + 1].bid_split == (split[0], "%", split[2]):
            if (shape[d], shape[d + 1]) != (1, 1):
                return (f"index components {d} and {d + 1} split ct.bid({split[0]}), but the tile's extents there "
                        "are not 1")
            axis, group = split[0], ((d, d + 1), split[2])
        elif item.kind == "const" and item.py == 0:
            zeros.append(d)
            d += 1
            continue
        else:
            return f"index component {d} is not a block index"
        if axis in by_axis:
            return f"ct.bid({axis}) indexes two of its dimensions"
        by_axis[axis] = group
        d += len(group[0])
    rank = len(by_axis) + len(zeros)
    if rank > 3:
        return f"'{array.name}' would be stored as a view of rank {rank}; checked outputs are at most rank 3"
    if any(axis >= rank for axis in by_axis):
        return f"ct.bid({max(by_axis)}) indexes it, but not every lower block axis does"
    fill = iter(zeros)
    groups = [by_axis[a] if a in by_axis else ((next(fill),), None) for a in range(rank)]
    dims = tuple(g for g, _ in groups)
    tile = tuple(1 if len(g) == 2 else shape[g[0]] for g in dims)
    moved = [g[0] for g in dims if len(g) == 1 and shape[g[0]] != 1]
    if moved != sorted(moved):
        return "its block indices stand in another order than its dimensions, and the tile would need a transpose"
    if dims == tuple((i,) for i in range(len(index))):
        return None, shape
    if dims[-1][-1] != len(index) - 1:
        # Measured on an H100: bmm's [Q, M, N] output stored as an [M, N, Q] view took 1.12x cuTile
        # Python's time; its rows must stay the view's rows.
        return "its last dimension would not be the last of the view its block indices make"
    return ir.BlockView(dims, tuple(p for _, p in groups)), tile


def as_array_dtype(w: Walker, tile: Value, array: ir.ArrayParam, out: list[ir.Stmt],
                   node: ast.AST | None = None) -> Value:
    """`tile` as a tile of `array`'s dtype: cuTile Python casts what it stores implicitly. Two
    arrays' dtypes that meet here are tied together instead (the launcher requires them equal),
    and an array that receives a promotion of arrays' dtypes is of that dtype at launch (the
    conversion is the identity there)."""
    td = w.state.union.find(tile.dtype)
    if td == w.state.union.find(f"${array.name}"):
        return tile
    have = td if td in DTYPES else w.state.stated_one(td)
    want = w.state.stated_one(f"${array.name}")
    if have in DTYPES and want in DTYPES and have != want and dtypes.promote(have, want) == want:
        # the array stated as one dtype, the tile of one: the cast cuTile Python makes, which loses nothing
        return w.sem.convert(tile, f"${array.name}", out, f"{rust_name(array.name)}_cast")
    if td.startswith("$") and w.state.promote and not w.state.survey and w.sem.float_only(td) and \
            set(w.state.members(td)) & w.state.computed:
        # a tile of another array's float dtype, computed with: cuTile Python casts it where the
        # promotion of the two is the array's (bf16 into f32), which the launcher checks
        # (`ir.SamePromotion`). A tile only moved keeps its array's dtype class for the other array
        # too, which so takes every dtype a move takes (bools, fp8, 8-bit integers).
        w.state.promoted_stores.append((f"${array.name}", td))
        w.sem.computes_with_dtype(f"${array.name}")
        return w.sem.bind_temp(out, f"{rust_name(array.name)}_cast", ir.TileType(f"${array.name}", tile.shape),
                               ir.Call("convert_tile", (tile.expr,)))
    if td.startswith("$"):
        w.state.union.union(f"${array.name}", td)
        return tile
    if td.startswith("@"):
        raise w.error(node or w.state.src.func, f"storing a tile whose dtype a test of dtypes chooses into "
                                                f"'{array.name}' is not supported yet: cast it first "
                                                f"(`.astype({array.name}.dtype)`)")
    if td in w.state.promoted:
        w.state.promoted_stores.append((f"${array.name}", td))
        w.sem.computes_with_dtype(f"${array.name}")  # its dtype takes part in the promotion
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


@ct_op("num_tiles")
def ct_num_tiles(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["array", "axis", "shape"], 3)
    array = array_arg(w, args["array"], out)
    shape = w.dims(args["shape"], out)
    axis = w.sem.int_const(w.expr(args["axis"], out), node)
    set_rank(w.state, array, len(shape), node)
    if axis < 0:
        axis += len(shape)
    part = partition(w.state, array, shape, None, out=out)
    return Value("scalar", ir.ScalarType("i32"), ir.Call("num_tiles", (ir.Ref(part), ir.Lit(f"{axis}i32"))),
               nonneg=True)


def tiled_view(w: Walker, node: ast.Call, array_node: ast.expr) -> Value:
    """`a.tiled_view(tile_shape, padding_mode=...)`: the array's tiles of that shape, as `ct.load`,
    `ct.store` and `ct.num_tiles` take them (its methods are those calls). Tiles that overlap or
    leave gaps (`traversal_steps` other than the tile shape) are refused."""
    args = w.call_args(node, ["tile_shape", "padding_mode", "traversal_steps"], 1)
    steps = args.get("traversal_steps")
    if steps is not None and not (isinstance(steps, ast.Constant) and steps.value is None) and \
            ast.dump(steps) != ast.dump(args["tile_shape"]):
        raise w.error(node, "a tiled view with traversal_steps other than its tile shape is not supported yet "
                            "(cutile 0.5.0 writes such views only with unsafe strided views)")
    return Value("view", py=(array_node, args["tile_shape"], args.get("padding_mode")))


def view_method(w: Walker, node: ast.Call, view: Value, name: str, out, hint) -> Value:
    """A method of a tiled view, as the `ct` call it stands for on the view's array and tile shape."""
    array_node, shape_node, padding = view.py
    known = {"load": ["index", "check_bounds", "latency", "allow_tma"],
             "store": ["index", "tile", "check_bounds", "latency", "allow_tma"],
             "num_tiles": ["axis"]}
    if name not in known:
        raise w.error(node, f"method '{name}' of a tiled view is not supported")
    args = w.call_args(node, known[name], 1 if name != "store" else 2)
    keywords = [ast.keyword(arg=k, value=v) for k, v in args.items() if k not in ("index", "tile", "axis")]
    if name == "load":
        call = ast.Call(func=node.func, args=[array_node, args["index"]], keywords=[
            ast.keyword(arg="shape", value=shape_node), *([ast.keyword(arg="padding_mode", value=padding)]
                                                          if padding is not None else []), *keywords])
    elif name == "store":
        call = ast.Call(func=node.func, args=[array_node, args["index"], args["tile"]], keywords=keywords)
    else:
        call = ast.Call(func=node.func, args=[array_node, args["axis"], shape_node], keywords=[])
    ast.copy_location(call, node)
    from .registry import OPS

    return OPS[name](w, call, out, hint)


def view_attribute(w: Walker, node: ast.Attribute, view: Value, out) -> Value:
    """`tv.tile_shape`, `tv.dtype`: the view's tile shape, its array's dtype."""
    array_node, shape_node, _ = view.py
    if node.attr == "tile_shape":
        return w.expr(shape_node, out)
    if node.attr == "dtype":
        return w.expr(ast.copy_location(ast.Attribute(value=array_node, attr="dtype", ctx=ast.Load()), node), out)
    raise w.error(node, f"attribute '{node.attr}' of a tiled view is not supported")
