"""Element accesses: ct.gather/ct.scatter through pointers as cuTile Python lowers them, a checked
gather through the kernel module's safe gather (`module_items`), and, with `lift_gathers`, a gather
or scatter of a whole row at the block's index as the tile access it amounts to."""

from __future__ import annotations

import ast
import math
from typing import TYPE_CHECKING

from ... import ir, module_items
from ....errors import TranslationError
from ...rust_syntax import float_literal, rust_name
from ..bindings import Value
from ..facts import with_article
from .memory import (array_arg, as_array_dtype, check_unchecked_output, latency_value, partition, pointer_token,
                     set_rank, store_tile, tile_load)
from .registry import ct_op

if TYPE_CHECKING:
    from ..state import KernelState
    from ..walker import Walker


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


def _row_access(w: Walker, node: ast.Call, indices: ast.expr, out: list[ir.Stmt]
                ) -> tuple[list[Value], ir.Dim, list[Value]]:
    """Reads a gather/scatter index tuple `(s0, ..., arange(n) + k*n)`: scalars, then one ramp.
    Returns the tile-space index of the equivalent 1 x ... x n tile access, n, and the indices."""
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
    elif offset.kind == "scalar" and _bound_once(w, offset.expr) and \
            (k := _times(offset.expr, n) or _times(offset.defn, n)) is not None:
        column = _known_scalar(w, k)  # k * n + arange(n): tile k
    else:
        raise w.error(indices, "ct.gather/ct.scatter at an offset that is not a whole number of tiles "
                                  "is not supported yet")
    return [*scalars, column], n, items


def _row_access_or_none(w: Walker, node: ast.Call, indices: ast.expr,
                        out: list[ir.Stmt]) -> tuple[list[Value], ir.Dim, list[Value]] | None:
    """`_row_access`, or None (and nothing emitted) where the indices are not of that form."""
    scratch: list[ir.Stmt] = []
    try:
        row = _row_access(w, node, indices, scratch)
    except TranslationError:
        return None
    out.extend(scratch)
    return row


def _known_scalar(w: Walker, expr: ir.Expr) -> Value:
    """The scalar `expr`, with what is known of it (e.g. that it is ct.bid(0)): a block id itself,
    or a bound scalar it names."""
    if isinstance(expr, ir.Field) and expr.recv == ir.Call("get_tile_block_id"):
        return Value("scalar", ir.ScalarType("i32"), expr, bid_axis=int(expr.name), nonneg=True)
    for scope in reversed(w.frame.scopes):
        for b in scope.values():
            if b.val.kind == "scalar" and b.val.expr == expr:
                return b.val
    return Value("scalar", ir.ScalarType("i32"), expr)


@ct_op("gather")
def ct_gather(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["array", "indices", "mask", "padding_value", "check_bounds", "latency"], 2)
    array = array_arg(w, args["array"], out)
    w.state.count(array, "loads", node, via="gathers", pointer=True)
    pad = w.expr(args["padding_value"], out) if "padding_value" in args else Value("const", py=0)
    if not (pad.kind == "const" and isinstance(pad.py, (int, float))) and pad.kind != "scalar":
        raise w.error(node, "padding_value must be a number or a scalar")
    if w.state.lift_gathers and pad.kind == "const" and "mask" not in args and not w.state.in_token_order(array) and (
            lifted := _lifted_gather(w, node, args, array, pad, out, hint)):
        w.state.made_through(node, pointer=False)
        return lifted
    indices = _indices(w, node, array, args, False, out)
    shape, items, check = indices
    latency = latency_value(w, node, args.get("latency"), out)
    unsafe = _unsafe_gather_reason(w.state, array, check, shape, len(items), latency)
    if unsafe is not None and _unchecked_safely(w.state, array, args, check, items, latency):
        if not shape:  # one element: its one lane masked is the whole access checked at once
            unsafe = None
        elif (span := _span(w, node, items, shape, out)) is not None:
            return _span_gather(w, node, array, pad, span, check, shape, latency or 0, out, hint)
    if unsafe is None and not shape:  # one element: the safe gather of a tile of one, as a 0-d tile
        one = _checked_gather(w, node, args, array, pad, ((1,), items, check), latency or 0, out, f"{hint}_one")
        return w.sem.reshaped(one, (), out, hint)
    if unsafe is None:
        return _checked_gather(w, node, args, array, pad, indices, latency or 0, out, hint)
    shape, ptrs, mask = pointers(w, node, array, args, write=False, out=out, hint=hint, indices=indices)
    padding = gather_padding(w, node, pad, array, shape, out) if mask is not None else None
    w.state.unsafe(*unsafe)
    why = ("every lane's address lies inside `{a}`: lanes outside its shape are masked off" if mask else
           "the kernel promises, as cuTile Python's check_bounds=False does, that every index is inside `{a}`")
    token = pointer_token(w.state, array)
    # A padding of the result's shape goes through `load_ptr_tko_padded`, which the kernel module
    # declares (module_items.py): cutile 0.5.0 broadcasts a scalar padding from rank 1, which
    # Tile IR rejects above rank 1.
    load = ir.Unsafe(ir.Call(module_items.PADDED_GATHER if padding is not None and shape else "load_ptr_tko", (
        ptrs, ir.Lit("ordering::Weak"), ir.Lit("None::<scope::Device>"), ir.Call("Some", (mask,)) if mask else
        ir.Lit("None"), ir.Call("Some", (padding,)) if padding is not None else ir.Lit("None"),
        ir.Call("Some", (token,)) if token else ir.Lit("None"),
        pointer_latency(w, node, args.get("latency"), latency))),
        reason=why.format(a=array.name) + ("; what this block reads, no other block writes, as cuTile Python "
                                           "requires" if w.state.read_and_written(array) else
                                           "; it is only read in this kernel"))
    return bind_loaded(w, ir.TileType(f"${array.name}", shape), load, token, out, hint)


def _unsafe_gather_reason(state: KernelState, array: ir.ArrayParam, check: Value, shape: tuple, rank: int,
                          latency: int | str | None) -> tuple[str, str] | None:
    """Why a gather goes through cutile's unsafe pointer load, and the obligation the kernel keeps;
    None where the module's safe gather takes it."""
    a, inside = array.name, "every index lies inside the array"
    if state.uses[a].atomics and state.read_and_written(array):
        return f"gathers from '{a}', which it also updates atomically", "no other block writes what one reads"
    if check.kind == "scalar":
        return f"gathers from '{a}' with check_bounds decided at launch", f"where it is false, {inside}"
    if not (check.kind == "const" and check.py):
        return f"gathers from '{a}' with check_bounds=False", inside
    if rank > 4 or len(shape) > 4:
        return f"gathers from '{a}' above rank 4 (the safe gather is made for ranks up to 4)", inside
    if isinstance(latency, str):
        return (f"gathers from '{a}' with a latency hint a ct.Constant gives (the safe gather takes a hint only "
                "as a number)", inside)
    return None


def _unchecked_safely(state: KernelState, array: ir.ArrayParam, args: dict, check: Value, items: list[Value],
                      latency: int | str | None) -> bool:
    """Whether a gather or scatter whose bounds are unchecked, or checked where the launch says,
    may still go through a safe access masked inside (what it reads or writes there is what
    cuTile Python does wherever its own access is defined): of an array the kernel does not
    both read and write, without a mask of the caller's, with a latency hint that is a number."""
    return (not (check.kind == "const" and check.py) and not state.in_token_order(array) and "mask" not in args
            and not isinstance(latency, str) and len(items) <= 4)


def _span(w: Walker, node: ast.Call, items: list[Value], shape: tuple[ir.Dim, ...], out: list[ir.Stmt]
          ) -> tuple[list[ir.Expr], ir.Expr] | None:
    """The scalar indices and the run's start, where every index but the last is a scalar and the
    last is `start + ct.arange(T)` (the indices' shape `(T,)`); else None, nothing emitted."""
    *scalars, run = items
    if run.kind != "tile" or run.iota_offset is None or tuple(run.shape) != tuple(shape) or len(shape) != 1 \
            or any(s.kind not in ("scalar", "const") for s in scalars):
        return None
    start = run.iota_offset
    if not ((start.kind == "scalar" and _bound_once(w, start.expr)) or (start.kind == "const" and
                                                                        isinstance(start.py, int))):
        return None
    return ([w.sem.i32(s, node, out) for s in scalars],
            w.sem.i32(start, node, out) if start.kind == "scalar" else ir.Lit(f"{start.py}i32"))


def _bound_once(w: Walker, expr: ir.Expr) -> bool:
    """Whether every variable `expr` reads names one value wherever the kernel reads it
    (`facts.single_valued`). A fact's expression, e.g. a ramp's start, is read where the ramp is
    used: a name bound again in between would read as its new value there."""
    return all(v.name in w.state.single_valued for v in ir.variables(expr))


def _check_flag(check: Value) -> ir.Expr:
    """check_bounds as the `bool` a span access takes: given at launch, or a constant."""
    return check.expr if check.kind == "scalar" else ir.Lit("true" if check.py else "false")


def _span_gather(w: Walker, node: ast.Call, array: ir.ArrayParam, pad: Value, span: tuple, check: Value,
                 shape: tuple[ir.Dim, ...], latency: int, out: list[ir.Stmt], hint: str) -> Value:
    """A gather of a run of lanes with check_bounds given at launch (or False), through the
    module's safe `gather_span_<rank>d`: the lanes read whole or not at all where unchecked."""
    scalars, start = span
    array.strided = True
    padding = gather_padding(w, node, pad, array, shape, out)
    gather = ir.Call(module_items.span_gather(len(scalars) + 1, latency), (
        ir.Var(rust_name(array.name)), *(stride_param(array, a) for a in range(len(scalars))), *scalars, start,
        _check_flag(check), padding))
    name = w.state.fresh(hint)
    tile_type = ir.TileType(f"${array.name}", shape)
    out.append(ir.Let(name, tile_type, gather, w.state.line))
    w.state.temps.add(name)
    return Value("tile", tile_type, ir.Var(name))


def _checked_gather(w: Walker, node: ast.Call, args: dict, array: ir.ArrayParam, pad: Value, indices: tuple,
                    latency: int, out: list[ir.Stmt], hint: str) -> Value:
    """A gather with its bounds checked, through the module's safe `gather_<rank>d`
    (module_items.py), which masks the lanes to the array's own bounds itself: no `unsafe` in the
    kernel. From an array the kernel also writes, the gather is ordered by the array's pointer
    token, and its writes' `unsafe` blocks take on that no block writes what another reads
    (`KernelState.off_reads`)."""
    shape, items, _ = indices
    array.strided = True
    lanes = [_lane(w, node, item, shape, out).expr for item in items]
    mask = user_mask(w, args, shape, out)
    padding = gather_padding(w, node, pad, array, shape, out)
    token = pointer_token(w.state, array)
    gather = ir.Call(module_items.gather(len(items), len(shape), mask is not None, latency, ordered=bool(token)), (
        ir.Var(rust_name(array.name)), *(stride_param(array, a) for a in range(len(items) - 1)), *lanes,
        *([mask] if mask is not None else []), padding, *([token] if token else [])))
    tile_type = ir.TileType(f"${array.name}", shape)
    if token:
        return bind_loaded(w, tile_type, gather, token, out, hint)
    name = w.state.fresh(hint)
    out.append(ir.Let(name, tile_type, gather, w.state.line))
    w.state.temps.add(name)
    return Value("tile", tile_type, ir.Var(name))


def user_mask(w: Walker, args: dict, shape: tuple[ir.Dim, ...], out: list[ir.Stmt]) -> ir.Expr | None:
    """The `mask` of a gather/scatter, broadcast to the indices' shape; None without one."""
    if "mask" not in args:
        return None
    user = w.expr(args["mask"], out, hint="mask")
    if user.kind != "tile" or w.state.union.find(user.dtype) != "bool":
        raise w.error(args["mask"], "mask must be a tile of booleans")
    return w.sem.broadcast(user, shape, out, "mask").expr


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


def gather_padding(w: Walker, node: ast.Call, pad: Value, array: ir.ArrayParam, shape: tuple[ir.Dim, ...],
                    out: list[ir.Stmt]) -> ir.Expr:
    """What a masked-off lane of a gather reads: a scalar for a 0-d gather, else a tile of its
    shape. Zero is a Tile IR constant (`E::ZERO`, the one constant cutile's ElementType names),
    as cuTile Python makes it: tileiras turns a masked load padded with a constant zero into
    zero-filling async copies, but selects lane by lane where the padding is a converted value."""
    x = rust_name(array.name)
    if pad.kind == "const" and pad.py == 0 and shape:
        w.sem.needs_constants(f"${array.name}", node)
        return w.sem.bind_temp(out, f"{x}_padding", ir.TileType(f"${array.name}", shape), ir.Call(
            "constant", (ir.TypeConst(f"${array.name}", "ZERO"), ir.Shape(shape)))).expr
    if pad.kind == "const" and shape and math.isinf(pad.py):
        # An infinity as a dense constant, which Tile IR holds as one: spelled as the division
        # that makes it (`-1.0 / 0.0`), tileiras keeps the division, and its slow path, in the kernel.
        dense = w.sem.bind_temp(out, f"{x}_padding", ir.TileType("f32", shape), ir.Call(
            "constant", (float_literal(float(pad.py), dense=True), ir.Shape(shape))))
        return w.sem.bind_temp(out, f"{x}_padding", ir.TileType(f"${array.name}", shape),
                               ir.Call("convert_tile", (dense.expr,))).expr
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


@ct_op("scatter")
def ct_scatter(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["array", "indices", "value", "mask", "check_bounds", "latency"], 3)
    array = array_arg(w, args["array"], out)
    w.state.count(array, "stores", node, pointer=True)
    if "mask" not in args and "latency" not in args and w.state.lift_gathers and not w.state.total_order:
        # A whole row as the tile store it amounts to (checked where cutile can prove it): safe, but
        # 6 to 11% slower than the masked pointer store on the H200 for silu_and_mul, swiglu and gelu
        # (docs/measurements/2026-12-05-safety.md), so only with --lift-gathers.
        w.state.made_through(node, pointer=False)  # a tile store, unless it is an owned store (`memory`)
        lifted = _lifted_scatter(w, node, args, array, out)
        if lifted is not None:
            return lifted
        w.state.made_through(node, pointer=True)
    check_unchecked_output(w.state, node, array)
    indices = _indices(w, node, array, args, True, out)
    latency = latency_value(w, node, args.get("latency"), out)
    owned = _own_scatter(w, node, args, array, indices, latency, out)
    if owned is not None:
        return owned
    shape, ptrs, mask = pointers(w, node, array, args, write=True, out=out, hint=hint, indices=indices)
    hint = f"{rust_name(array.name)}_value"
    value = as_scattered(w, node, w.expr(args["value"], out, hint=hint), array, shape, out, hint)
    array.written = True
    w.state.unsafe(f"scatters to '{array.name}' through pointers",
                   "blocks write disjoint elements of it" + ("" if mask else ", each inside it") +
                   w.state.off_reads(array))
    why = lanes_inside(array, mask)
    token = pointer_token(w.state, array, scatter=True)
    store = ir.Unsafe(ir.Call("store_ptr_tko", (
        ptrs, value.expr, ir.Lit("ordering::Weak"), ir.Lit("None::<scope::Device>"),
        ir.Call("Some", (mask,)) if mask else ir.Lit("None"), ir.Call("Some", (token,)) if token else ir.Lit("None"),
        pointer_latency(w, node, args.get("latency"), latency))),
        reason=why + ", and blocks write disjoint elements, which cuTile Python leaves to the kernel too")
    if token:
        out.append(ir.Assign(token.name, store, w.state.line))
        return Value("tile", None, None)
    return Value("tile", None, store)


def _own_scatter(w: Walker, node: ast.Call, args: dict, array: ir.ArrayParam, indices: tuple,
                 latency: int | str | None, out: list[ir.Stmt]) -> Value | None:
    """A scatter with its bounds checked into what the block owns, through the module's safe
    scatters (`module_items`), which mask every lane to it themselves: no `unsafe` in the kernel.
    In a kernel that reads no block index, every block computes the same: the first block owns the
    array (`first_block_scatter`). Else, in a kernel that reads no block index but `ct.bid(0)`
    (its blocks along grid axes 1 and 2 compute the same, and the first of them writes), the block
    owns row `ct.bid(0)` (the first index that scalar, or a tile of it), or, of a 1-D array, the
    tile `ct.bid(0) * T + ct.arange(T)` (`own_scatter`). None (nothing emitted) for any other
    scatter: a grid-stride loop's rows among them (docs/translation.md says why)."""
    shape, items, check = indices
    if w.state.blocks_read is None or isinstance(latency, str) or len(items) > 5 or len(shape) > 4 or \
            w.state.uses[array.name].gathers:  # safe gathers from it rest on its writes' obligations
        return None
    if w.state.blocks_read - {0} or len(items) > 4:
        return _owned_scatter(w, node, args, array, indices, latency, out)
    if not (check.kind == "const" and check.py):
        return _own_span_scatter(w, node, args, array, indices, latency, out)
    rank, masked = len(items), "mask" in args
    x = rust_name(array.name)
    if not w.state.blocks_read:
        mark, scratch = w.state.checkpoint(), []  # a refusal leaves no trace
        value = w.expr(args["value"], scratch, hint=f"{x}_value")
        if _read_where_written(w.state, array) or not w.state.owns(array, ()):
            w.state.rollback(mark)
            return None  # an input may be this very array (`in_place_pairs`), which the other blocks read
        out.extend(scratch)
        lanes = shape or (1,)
        name = module_items.first_block_scatter(rank, len(lanes), masked, latency or 0)
        return _safe_scatter(w, node, args, array, value, lanes, name, items, out)
    first = items[0]
    row = first if first.kind == "scalar" else first.splat if first.kind == "tile" else None
    if rank == 1 and first.kind == "tile" and first.iota_offset is not None and len(first.shape) == 1:
        row, lanes = _run_start(w, first), first.shape
    elif rank == 1:
        lanes = (1,)
        if shape not in ((), (1,)):
            return None  # lanes of one row: one element written by many
    else:
        lanes = shape or (1,)
    if row is None or row.bid_axis != 0 or not w.state.owns(array, ((0, 0, lanes[0] if rank == 1 else 1),)):
        return None
    name = module_items.own_scatter(rank, len(lanes), masked, latency or 0)
    value = w.expr(args["value"], out, hint=f"{x}_value")
    return _safe_scatter(w, node, args, array, value, lanes, name, [w.sem.i32(row, node, out), *items[1:]], out)


def _owned_scatter(w: Walker, node: ast.Call, args: dict, array: ir.ArrayParam, indices: tuple,
                   latency: int | None, out: list[ir.Stmt]) -> Value | None:
    """A scatter with its bounds checked whose indices include block indices (`ct.bid(a)`, each
    axis once, every axis the kernel reads among them) or a block's run of lanes
    (`ct.bid(a) * T + ct.arange(T)`, the scatter's T lanes), through the module's safe
    `scatter_owned_*`, which writes only the elements whose components there are the block's own
    (flash decoding's `(batch, head, lanes, split, lanes)`, MLA decoding split KV's `(batch, heads
    of the block, split)`). None (nothing emitted) otherwise."""
    shape, items, check = indices
    lanes = shape or (1,)
    parts = tuple(f"b{i.bid_axis}" if i.kind == "scalar" and i.bid_axis is not None else
                  f"r{a}" if (a := _run_axis(w, i, lanes)) is not None else "x" for i in items)
    tied = [int(p[1:]) for p in parts if p != "x"]
    if not (check.kind == "const" and check.py) or len(set(tied)) != len(tied) or \
            not w.state.blocks_read <= set(tied) or not w.state.owns(array, tuple(
                (d, int(p[1:]), lanes[0] if p[0] == "r" else 1) for d, p in enumerate(parts) if p != "x")):
        return None
    name = module_items.owned_scatter(parts, len(lanes), "mask" in args, latency or 0)
    value = w.expr(args["value"], out, hint=f"{rust_name(array.name)}_value")
    return _safe_scatter(w, node, args, array, value, lanes, name,
                         [i if p == "x" else w.sem.i32(i, node, out) for i, p in zip(items, parts) if p[0] != "r"], out)


def _run_axis(w: Walker, item: Value, lanes: tuple[ir.Dim, ...]) -> int | None:
    """`a` where `item` is `ct.bid(a) * T + ct.arange(T)` and the scatter's lanes are those T."""
    if item.kind != "tile" or item.iota_offset is None or len(lanes) != 1 or item.shape != lanes:
        return None
    start = _run_start(w, item)
    return None if start is None else start.bid_axis


def _run_start(w: Walker, item: Value) -> Value | None:
    """`k` (with what is known of it) where the 1-D tile `item` is `k * T + ct.arange(T)`, T its
    length: the run of lanes numbered `k`."""
    offset, n = item.iota_offset, item.shape[0]
    k = _times(offset.expr, n) or _times(offset.defn, n) if offset.kind == "scalar" else None
    return None if k is None else _known_scalar(w, k)


def _own_span_scatter(w: Walker, node: ast.Call, args: dict, array: ir.ArrayParam, indices: tuple,
                      latency: int | None, out: list[ir.Stmt]) -> Value | None:
    """A scatter of a run of lanes into row `ct.bid(0)` of an array of two axes or more, with
    check_bounds given at launch (or False), through the module's safe `scatter_own_row_span`:
    the lanes written whole or not at all where unchecked. None (nothing emitted) otherwise."""
    shape, items, check = indices
    if len(items) < 2 or items[0].kind != "scalar" or items[0].bid_axis != 0 or \
            not _unchecked_safely(w.state, array, args, check, items, latency):
        return None
    scratch: list[ir.Stmt] = []
    span = _span(w, node, items, shape, scratch)
    if span is None or not w.state.owns(array, ((0, 0, 1),)):
        return None
    out.extend(scratch)
    scalars, start = span
    value = w.expr(args["value"], out, hint=f"{rust_name(array.name)}_value")
    return _safe_scatter(w, node, args, array, value, shape, module_items.own_span_scatter(len(items), latency or 0),
                         [*scalars, start, _check_flag(check)], out)


def _read_where_written(state: KernelState, array: ir.ArrayParam) -> bool:
    """Whether another array is read where `array` is written: the launcher may then pass them as
    one array (`kernel.in_place_pairs`)."""
    stores = state.sites.get((array.name, "stores"), set())
    return any(state.sites.get((other, "loads"), set()) & stores for other in state.arrays if other != array.name)


def _safe_scatter(w: Walker, node: ast.Call, args: dict, array: ir.ArrayParam, value: Value,
                  lanes: tuple[ir.Dim, ...], name: str, indices: list[Value | ir.Expr], out: list[ir.Stmt]) -> Value:
    """`y_token = name(y, strides, indices, value, [mask], y_token)`, the module's safe scatter
    `name`: the value broadcast to `lanes`, and each index that is a Value too (a tile of lanes),
    the others (scalars the function takes as they are) passed on."""
    x = rust_name(array.name)
    array.strided = array.written = True
    value = as_scattered(w, node, value, array, lanes, out, f"{x}_value")
    index_args = [_lane(w, node, i, lanes, out).expr if isinstance(i, Value) else i for i in indices]
    mask = user_mask(w, args, lanes, out)
    token = pointer_token(w.state, array, scatter=True)
    call = ir.Call(name, (
        ir.Var(x), *(stride_param(array, a) for a in range(array.rank - 1)), *index_args,
        value.expr, *([mask] if mask is not None else []), token))
    out.append(ir.Assign(token.name, call, w.state.line))
    return Value("tile", None, None)


def as_scattered(w: Walker, node: ast.AST, value: Value, array: ir.ArrayParam, shape: tuple[ir.Dim, ...],
                 out: list[ir.Stmt], hint: str) -> Value:
    """What a scatter (or an atomic) writes at each address: a tile cast to the array's dtype and
    broadcast to the addresses' shape, or a number or scalar splat to it."""
    if value.kind == "tile":
        if w.sem.broadcast_shape(value.shape, shape, node) != shape:  # a value of more axes than the indices
            raise w.error(node, f"the value's shape {value.shape} does not broadcast to the indices' shape {shape}")
        return w.sem.broadcast(as_array_dtype(w, value, array, out, node), shape, out, hint)
    return w.sem.splat(value, f"${array.name}", shape, out, hint, node)


def lanes_inside(array: ir.ArrayParam, mask: ir.Expr | None) -> str:
    """Why a write through pointers stays inside `array`: its mask, or the kernel's own promise."""
    return (f"every lane's address lies inside `{array.name}` (lanes outside its shape are masked off)" if mask
            else f"the kernel promises, as cuTile Python's check_bounds=False does, that every index is inside "
                 f"`{array.name}`")


def pointer_latency(w: Walker, node: ast.Call, latency_node: ast.expr | None, latency: int | str | None) -> ir.Expr:
    """The `Latency::<cycles>` argument of a pointer load or store (0: no hint), of the hint
    `latency_value` read from `latency_node`."""
    if latency is None and latency_node is not None:
        raise w.error(node, "latency must be an integer constant")
    return ir.Lit(f"Latency::<{0 if latency is None else latency}>")


def _indices(w: Walker, node: ast.Call, array: ir.ArrayParam, args: dict, write: bool, out: list[ir.Stmt]
             ) -> tuple[tuple[ir.Dim, ...], list[Value], Value]:
    """The indices of a gather/scatter (or an atomic) as cuTile Python reads them: their common
    shape, the indices, and check_bounds."""
    val = w.expr(args["indices"], out, hint="index")
    items = val.py if val.kind == "tuple" else [val]
    if not items:
        raise w.error(args["indices"], "ct.gather and ct.scatter take one index per axis of the array, and arrays "
                                       "have at least one axis")
    set_rank(w.state, array, len(items), node)
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
        raise w.error(node, f"ct.gather/ct.scatter on a view of '{w.state.items[array.name]}' made in the kernel (a "
                               "list's item, a slice) is not supported yet; ct.load and ct.store are")
    check = w.expr(args["check_bounds"], out) if "check_bounds" in args else Value("const", py=True)
    if check.kind not in ("const", "scalar") or (check.kind == "scalar" and check.dtype != "bool"):
        raise w.error(args["check_bounds"], "check_bounds must be a bool")
    return shape, items, check


def _lane(w: Walker, node: ast.Call, item: Value, shape: tuple[ir.Dim, ...], out: list[ir.Stmt]) -> Value:
    """One index as a tile of i32 of the indices' common shape."""
    if item.kind == "tile":
        return w.sem.broadcast(w.sem.convert(item, "i32", out, "index"), shape, out, "index")
    return w.sem.splat(Value("scalar", ir.ScalarType("i32"), w.sem.i32(item, node, out), nonneg=w.sem.nonneg(item)),
                       "i32", shape, out, "index", node)


def stride_param(array: ir.ArrayParam, axis: int) -> ir.Var:
    """The kernel parameter that holds `array`'s element stride along `axis` (all but the last):
    the launcher fills it from the array itself."""
    return ir.Var(f"{rust_name(array.name)}_stride_{axis}")


def pointers(w: Walker, node: ast.Call, array: ir.ArrayParam, args: dict, *, write: bool, out: list[ir.Stmt],
              hint: str, indices: tuple | None = None) -> tuple[tuple[ir.Dim, ...], ir.Expr, ir.Expr | None]:
    """The addresses of a gather/scatter as cuTile Python forms them: each index broadcast to
    one shape, times its axis' stride, summed onto the array's base pointer; and, with
    check_bounds, the mask of lanes whose every index lies inside the array. `indices`: what
    `_indices` read, where the caller has read them."""
    shape, items, check = indices or _indices(w, node, array, args, write, out)
    x = rust_name(array.name)
    array.strided = True
    offsets: Value | None = None
    mask: Value | None = None
    for axis, item in enumerate(items):
        lane = _lane(w, node, item, shape, out)
        term = lane
        if axis != len(items) - 1:
            stride = w.sem.splat(Value("scalar", ir.ScalarType("i32"), stride_param(array, axis)),
                                 "i32", shape, out, f"{x}_stride", node)
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
    if (user := user_mask(w, args, shape, out)) is not None:
        given = Value("tile", ir.TileType("bool", shape), user)
        mask = given if mask is None else Value("tile", given.type, ir.Binary("&", mask.expr, user))
    ptrs = base_pointers(w, array, shape, write, out)
    if shape:
        offsets = w.sem.bind_temp(out, f"{x}_offsets", ir.TileType("i32", shape), offsets.expr)
        ptrs = w.sem.bind_temp(out, f"{x}_ptrs", ptrs.type, ir.Method(ptrs.expr, "offset_tile", (offsets.expr,)))
    else:
        ptrs = w.sem.bind_temp(out, f"{x}_ptr", ptrs.type, ir.Method(ptrs.expr, "offset", (
            ir.Call("tile_to_scalar", (offsets.expr,)),)))
    if mask is not None:
        mask = w.sem.bind_temp(out, f"{x}_inside", ir.TileType("bool", shape), mask.expr)
    return shape, ptrs.expr, mask.expr if mask is not None else None


def base_pointers(w: Walker, array: ir.ArrayParam, shape: tuple[ir.Dim, ...], write: bool, out: list[ir.Stmt]
                  ) -> Value:
    """`array`'s base pointer in every lane of a pointer tile of `shape` (mutable for a write)."""
    x = rust_name(array.name)
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
    return ptrs


def _lifted_gather(w: Walker, node: ast.Call, args: dict, array: ir.ArrayParam, pad: Value, out, hint) -> Value | None:
    """A gather at `(scalars, arange(n) + k*n)` as the checked tile load it amounts to, or None."""
    if (row := _row_access_or_none(w, node, args["indices"], out)) is None:
        return None
    index, n, _ = row
    padding = {0: None, float("-inf"): "padding::NegInf", float("inf"): "padding::PosInf"}.get(pad.py, "?")
    if padding == "?":
        return None
    # Out-of-bounds lanes read the padding either way, so check_bounds needs nothing here.
    shape = (1,) * (len(index) - 1) + (n,)
    set_rank(w.state, array, len(index), node)
    part = partition(w.state, array, shape, padding, out=out)
    idx = ir.Index(tuple(w.sem.i32(i, node) for i in index))
    row = w.sem.bind_temp(out, hint, ir.TileType(f"${array.name}", shape), tile_load(w,
        part, idx, latency_value(w, node, args.get("latency"), out), True, out))
    if len(shape) == 1:
        return row
    return w.sem.reshaped(row, (n,), out, hint)


def _lifted_scatter(w: Walker, node: ast.Call, args: dict, array: ir.ArrayParam, out) -> Value | None:
    """A scatter at `(scalars, arange(n) + k*n)` as the (checked where provable) tile store, or None
    (and nothing lowered): where it is the block's own tile of a partitioned output, cutile's checked
    store, writing the elements cuTile Python's masked scatter writes, with no `unsafe`."""
    mark = w.state.checkpoint()  # a failed match leaves no trace (names, types the oracle checks)
    if (row := _row_access_or_none(w, node, args["indices"], out)) is None:
        w.state.rollback(mark)
        return None
    index, n, items = row
    tile = w.expr(args["value"], out, hint=f"{rust_name(array.name)}_tile")
    if tile.kind != "tile" or tile.shape != (n,):
        raise w.error(args["value"], f"ct.scatter of a value shaped other than the index ({n},) is not "
                                        "supported yet")
    # Where the scatter writes, as a gather at the same indices reads (`in_place_pairs`: TileGym's
    # in-place activations and dropout read and write one array at one ramp).
    w.state.site(array, "stores", ("pointers",), items)
    shape = (1,) * (len(index) - 1) + (n,)
    if len(shape) > 1:
        tile = w.sem.reshaped(tile, shape, out, f"{rust_name(array.name)}_tile")
    return store_tile(w, node, args["value"], array, index, tile, out)
