"""Tiles rearranged: reshaped, joined (`ct.cat`), permuted, broadcast, cut into blocks and put
back (`ct.extract`, `ct.insert`), made from tuples (`ct.astile`), reinterpreted (`ct.bitcast`) and
taken as bytes (`ct.pack_to_bytes`, `ct.unpack_from_bytes`)."""

from __future__ import annotations

import ast
import math
from typing import TYPE_CHECKING

from .... import dtypes
from ... import ir
from ..bindings import Value
from .registry import ct_op
from .tiles import number_as, permuted

if TYPE_CHECKING:
    from ..walker import Walker


@ct_op("reshape", moves=True)
def ct_reshape(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["x", "shape"], 2)
    x = w.tile_arg(args["x"], out, hint, numbers=True)
    shape = w.dims(args["shape"], out)
    return w.sem.reshaped(x, shape, out, hint)


@ct_op("cat", moves=True)
def ct_cat(w: Walker, node: ast.Call, out, hint) -> Value:
    """`ct.cat((a, b), axis)`: two tiles of one shape (cuTile Python's rule, as tile dimensions are
    powers of two) end to end along `axis`; a dimension that is a constant doubles into one more
    const generic (`2 * T`), which the launcher computes."""
    args = w.call_args(node, ["tiles", "axis"], 2)
    pair = w.expr(args["tiles"], out, hint)
    if pair.kind != "tuple" or len(pair.py) != 2:
        raise w.error(node, "ct.cat takes a pair of tiles")
    a, b = (w.as_tile(v, args["tiles"], out, hint) for v in pair.py)
    if a.shape != b.shape:
        raise w.error(node, f"ct.cat of tiles of shapes {a.shape} and {b.shape}: cuTile Python concatenates tiles "
                            "of one shape")
    rank = len(a.shape)
    axis = w.sem.int_const(w.expr(args["axis"], out), node)
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank:
        raise w.error(node, f"axis {axis} is out of range for a rank-{rank} tile")
    dtype = w.sem.common_dtype(a.dtype, b.dtype, node)
    a, b = w.sem.convert(a, dtype, out, hint), w.sem.convert(b, dtype, out, hint)
    dim = a.shape[axis]
    doubled = 2 * dim if isinstance(dim, int) else w.state.shape_const(
        ir.Binary("*", ir.Var(dim), ir.Lit("2i32")), f"2 * {dim}")
    shape = a.shape[:axis] + (doubled,) + a.shape[axis + 1:]
    return w.sem.bind_temp(out, hint, ir.TileType(dtype, shape), ir.Call("cat", (a.expr, b.expr, ir.Lit(f"{axis}i32"))))


@ct_op("expand_dims", moves=True)
def ct_expand_dims(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["x", "axis"], 2)
    x = w.tile_arg(args["x"], out, hint)
    axis = w.sem.int_const(w.expr(args["axis"], out), node)
    rank = len(x.shape) + 1
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank:
        raise w.error(node, f"axis {axis} is out of range for a rank-{rank} result")
    shape = x.shape[:axis] + (1,) + x.shape[axis:]
    return w.sem.reshaped(x, shape, out, hint)


@ct_op("permute", moves=True)
def ct_permute(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["x", "axes"], 2)
    x = w.tile_arg(args["x"], out, hint)
    axes_val = w.expr(args["axes"], out)
    axes = [w.sem.int_const(a, node) for a in (axes_val.py if axes_val.kind == "tuple" else [axes_val])]
    if sorted(axes) != list(range(len(x.shape))):
        raise w.error(node, f"axes {axes} are not a permutation of the tile's {len(x.shape)} axes")
    return permuted(w, x, axes, out, hint)


@ct_op("transpose", moves=True)
def ct_transpose(w: Walker, node: ast.Call, out, hint) -> Value:
    """Swaps two axes (a 2-D tile's two without axis0/axis1): `.transpose()` in 2-D, a permute else."""
    args = w.call_args(node, ["x", "axis0", "axis1"], 1)
    x = w.tile_arg(args["x"], out, hint)
    rank = len(x.shape)
    if "axis0" not in args and "axis1" not in args:
        if rank != 2:
            raise w.error(node, "ct.transpose of a tile that is not 2-D needs axis0 and axis1")
        axis0, axis1 = 0, 1
    else:
        axis0, axis1 = (w.sem.int_const(w.expr(args[k], out), node) if k in args else None
                        for k in ("axis0", "axis1"))
        if axis0 is None or axis1 is None:
            raise w.error(node, "ct.transpose needs both axis0 and axis1, or neither")
        axis0, axis1 = (a + rank if a < 0 else a for a in (axis0, axis1))
        if not (0 <= axis0 < rank and 0 <= axis1 < rank):
            raise w.error(node, f"transpose axes out of range for a rank-{rank} tile")
    axes = list(range(rank))
    axes[axis0], axes[axis1] = axes[axis1], axes[axis0]
    if axes == list(range(rank)):
        return x
    shape = tuple(x.shape[a] for a in axes)
    if rank == 2:
        return w.sem.bind_temp(out, hint, ir.TileType(x.dtype, shape), ir.Method(x.expr, "transpose"))
    return w.sem.bind_temp(out, hint, ir.TileType(x.dtype, shape),
                           ir.Call("permute", (x.expr, ir.Lit(f"const_array![{', '.join(map(str, axes))}]"))))


@ct_op("bitcast", moves=True)
def ct_bitcast(w: Walker, node: ast.Call, out, hint) -> Value:
    """The tile's bits as another dtype of the same width (not bool), as cuTile Python requires;
    both dtypes known here (an array's dtype is one of several widths)."""
    args = w.call_args(node, ["x", "dtype"], 2)
    x, dtype = w.tile_arg(args["x"], out, hint), w.dtype_arg(args["dtype"], out)
    src, dst = w.state.union.find(x.dtype), w.state.union.find(dtype)
    if src not in dtypes.DTYPES or dst not in dtypes.DTYPES:
        raise w.error(node, "ct.bitcast of or to an array's dtype is not supported yet; cast to a concrete dtype first")
    if "bool" in (src, dst) or dtypes.DTYPES[src].itemsize != dtypes.DTYPES[dst].itemsize:
        raise w.error(node, f"ct.bitcast from {src} to {dst}: cuTile Python bitcasts between dtypes of one width, "
                            "not bools")
    if src == dst:
        return x
    return w.sem.bind_temp(out, hint, ir.TileType(dst, x.shape), ir.Call("bitcast", (x.expr,)))


@ct_op("broadcast_to")
def ct_broadcast_to(w: Walker, node: ast.Call, out, hint) -> Value:
    """`x` (a tile, a scalar or a number) broadcast to `shape` (numpy's rules: leading axes added, axes
    of 1 stretched)."""
    args = w.call_args(node, ["x", "shape"], 2)
    x = w.tile_arg(args["x"], out, hint, numbers=True)
    shape = w.dims(args["shape"], out)
    if len(x.shape) > len(shape) or w.sem.broadcast_shape(x.shape, shape, node) != shape:
        raise w.error(node, f"a tile of shape {x.shape} does not broadcast to {shape}")
    return w.sem.broadcast(x, shape, out, hint)


@ct_op("extract")
def ct_extract(w: Walker, node: ast.Call, out, hint) -> Value:
    """The `index`-th block of `shape` in `x` (cutile's extract, with slice indices)."""
    args = w.call_args(node, ["x", "index", "shape"], 3)
    x = w.tile_arg(args["x"], out, hint)
    shape = w.dims(args["shape"], out)
    _, indices = _block_index(w, node, "extract", "a shape", args["index"], x, shape, out)
    return w.sem.bind_temp(out, hint, ir.TileType(x.dtype, shape), ir.Call("extract", (x.expr, indices)))


def _block_index(w: Walker, node: ast.Call, op: str, block_is: str, index_node: ast.expr, x: Value,
                 block: tuple, out) -> tuple[list[Value], ir.Lit]:
    """The block index of `ct.extract` and `ct.insert` (`op`): its items, and the array of 0-d i32
    tiles cutile takes; refused where it is not of the tile's rank or the block does not divide
    the tile."""
    index = w.expr(index_node, out, hint="index")
    items = index.py if index.kind == "tuple" else [index]
    if not len(items) == len(block) == len(x.shape):
        raise w.error(node, f"ct.{op} needs an index and {block_is} of the tile's rank")
    for have, part in zip(x.shape, block):
        if isinstance(have, int) and isinstance(part, int) and have % part:
            raise w.error(node, f"ct.{op} of shape {block} does not divide the tile's {x.shape}")
    tiles = [w.sem.bind_temp(out, "index", ir.TileType("i32", ()), ir.Call("scalar_to_tile", (
        w.sem.i32(i, index_node, out),))).expr for i in items]
    return items, ir.Lit(f"[{', '.join(t.name for t in tiles)}]")


@ct_op("astile")
def ct_astile(w: Walker, node: ast.Call, out, hint) -> Value:
    """A scalar as a 0-d tile of `dtype`, or a (nested) tuple of scalars as the tile its nesting
    shapes (lengths powers of two, siblings alike): each element cast to `dtype`, joined end to
    end by `cat` and reshaped, as cuTile Python builds it."""
    args = w.call_args(node, ["value", "dtype"], 2)
    value = w.expr(args["value"], out, hint)
    dtype = w.dtype_arg(args["dtype"], out)

    def element(v: Value) -> Value:
        if v.kind == "const" and isinstance(v.py, (bool, int, float)):
            tile = number_as(w, node, v, dtype, out, hint)
            return w.sem.splat(tile, w.state.union.find(dtype), (), out, hint, node) if tile.kind == "const" else tile
        if v.kind == "scalar" or (v.kind == "tile" and not v.shape):
            return w.sem.convert(w.as_tile(v, node, out, hint), dtype, out, hint)
        raise w.error(node, "ct.astile takes a scalar or a (nested) tuple of scalars")

    if value.kind != "tuple":
        return element(value)

    def shape_of(v: Value) -> tuple[int, ...]:
        if v.kind != "tuple":
            return ()
        inner = {shape_of(item) for item in v.py}
        if len(inner) != 1:
            raise w.error(node, "ct.astile needs sibling tuples of one length")
        if len(v.py) & (len(v.py) - 1):
            raise w.error(node, f"ct.astile of a tuple of {len(v.py)} items: lengths must be powers of two")
        return (len(v.py), *inner.pop())

    def leaves(v: Value) -> list[Value]:
        return [leaf for item in v.py for leaf in leaves(item)] if v.kind == "tuple" else [v]

    shape = shape_of(value)

    def joined(items: list[Value]) -> Value:
        if len(items) == 1:
            tile = element(items[0])
            return w.sem.reshaped(tile, (1,), out, hint)
        left, right = joined(items[:len(items) // 2]), joined(items[len(items) // 2:])
        return w.sem.bind_temp(out, hint, ir.TileType(left.dtype, (2 * left.shape[0],)),
                               ir.Call("cat", (left.expr, right.expr, ir.Lit("0i32"))))

    flat = joined(leaves(value))
    if len(shape) == 1:
        return flat
    return w.sem.reshaped(flat, shape, out, hint)


@ct_op("insert")
def ct_insert(w: Walker, node: ast.Call, out, hint) -> Value:
    """`x` with its `index`-th block of `value`'s shape replaced by `value` (a 0-d value is one
    element): cutile's insert, the inverse of extract. `unsafe`, as an index past the blocks is
    undefined there as in cuTile Python; an index known here is checked here."""
    args = w.call_args(node, ["x", "index", "value"], 3)
    x = w.tile_arg(args["x"], out, hint)
    value = w.tile_arg(args["value"], out, hint)
    dtype = w.sem.common_dtype(x.dtype, value.dtype, node)  # one class where both are arrays' dtypes
    if w.state.union.find(x.dtype) != w.state.union.find(value.dtype):
        # a concrete dtype and an array's: the same at the launches cuTile Python takes
        x, value = w.sem.convert(x, dtype, out, hint), w.sem.convert(value, dtype, out, hint)
    if not value.shape:
        value = w.sem.reshaped(value, (1,) * len(x.shape), out, hint)
    items, indices = _block_index(w, node, "insert", "a value", args["index"], x, value.shape, out)
    for have, part, item in zip(x.shape, value.shape, items):
        if isinstance(have, int) and isinstance(part, int) and item.kind == "const" and \
                not 0 <= item.py < have // part:
            raise w.error(node, f"ct.insert at block {item.py} of {have // part}")
    w.state.unsafe("inserts a block into a tile", "the block index is inside the tile")
    return w.sem.bind_temp(out, hint, ir.TileType(x.dtype, x.shape), ir.Unsafe(
        ir.Call("insert", (value.expr, x.expr, indices)), reason="the block index is inside the tile, as cuTile "
                                                                "Python requires"))


def _bytes_dim(w: Walker, dim, itemsize: int, packing: bool):
    """A 1-D tile's length in bytes from its length in elements of `itemsize` (`packing`), or back."""
    if isinstance(dim, int):
        return dim * itemsize if packing else dim // itemsize
    if itemsize == 1:
        return dim
    op = "*" if packing else "/"
    return w.state.shape_const(ir.Binary(op, ir.Var(dim), ir.Lit(f"{itemsize}i32")),
                               f"{dim} {op if packing else '//'} {itemsize}")


@ct_op("pack_to_bytes")
def ct_pack_to_bytes(w: Walker, node: ast.Call, out, hint) -> Value:
    """The tile's elements as bytes, flattened (cutile's pack; an 8-bit dtype is a bitcast), as
    cuTile Python packs them; not bools."""
    args = w.call_args(node, ["x"], 1)
    x = w.tile_arg(args["x"], out, hint)
    dtype = w.state.union.find(x.dtype)
    if dtype not in dtypes.DTYPES or dtype == "bool":
        raise w.error(node, f"ct.pack_to_bytes of a {dtype} tile: a concrete dtype other than bool is needed")
    length = _flat_length(w, x)
    flat = w.sem.bind_temp(out, hint, ir.TileType(dtype, (length,)),
                           ir.Method(x.expr, "reshape", (ir.Shape((length,)),))) if len(x.shape) != 1 else x
    itemsize = dtypes.DTYPES[dtype].itemsize
    type_ = ir.TileType("u8", (_bytes_dim(w, length, itemsize, packing=True),))
    if itemsize == 1:
        return flat if dtype == "u8" else w.sem.bind_temp(out, hint, type_, ir.Call("bitcast", (flat.expr,)))
    return w.sem.bind_temp(out, hint, type_, ir.Call("pack", (flat.expr,)))


@ct_op("unpack_from_bytes")
def ct_unpack_from_bytes(w: Walker, node: ast.Call, out, hint) -> Value:
    """A 1-D uint8 tile's bytes as elements of `dtype` (cutile's unpack; an 8-bit dtype is a
    bitcast), as cuTile Python unpacks them; not bools."""
    args = w.call_args(node, ["x", "dtype"], 2)
    x = w.tile_arg(args["x"], out, hint)
    dtype = w.state.union.find(w.dtype_arg(args["dtype"], out))
    if w.state.union.find(x.dtype) != "u8" or len(x.shape) != 1:
        raise w.error(node, "ct.unpack_from_bytes takes a 1-D uint8 tile")
    if dtype not in dtypes.DTYPES or dtype == "bool":
        raise w.error(node, f"ct.unpack_from_bytes to {dtype}: a concrete dtype other than bool is needed")
    itemsize = dtypes.DTYPES[dtype].itemsize
    (length,) = x.shape
    if isinstance(length, int) and length % itemsize:
        raise w.error(node, f"{length} bytes do not make whole {dtype} elements")
    type_ = ir.TileType(dtype, (_bytes_dim(w, length, itemsize, packing=False),))
    if itemsize == 1:
        return x if dtype == "u8" else w.sem.bind_temp(out, hint, type_, ir.Call("bitcast", (x.expr,)))
    return w.sem.bind_temp(out, hint, type_, ir.Call("unpack", (x.expr,)))


def _flat_length(w: Walker, x: Value):
    """The number of elements of the tile `x`: a number, or a const generic the launcher computes."""
    if len(x.shape) == 1:
        return x.shape[0]
    known = math.prod(d for d in x.shape if isinstance(d, int))
    symbols = [d for d in x.shape if not isinstance(d, int)]
    if not symbols:
        return known
    product = ir.Var(symbols[0]) if known == 1 else ir.Binary("*", ir.Lit(f"{known}i32"), ir.Var(symbols[0]))
    for d in symbols[1:]:
        product = ir.Binary("*", product, ir.Var(d))
    return w.state.shape_const(product, " * ".join([str(known)] * (known != 1) + symbols))
