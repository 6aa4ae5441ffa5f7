"""Grid-stride loops over an output's tiles, stored through cutile's checked persistent loop.

`for r in range(ct.bid(0), STOP, ct.num_blocks(0))` whose body stores one output at `(r, 0, ...)`
(softmax's TMA kernel, persistent row kernels) visits each tile index below STOP once, block by
block: the tiles blocks store are disjoint. cutile 0.5.0 proves the same schedule itself: a
`MappedPartitionMut` output with map `[1, 0, ...]` (axis 0 streamed, the others owned: index 0)
and `for idx in y.iter_indices()` lowers to `for %i in (bid.0 to tiles(y), step num_blocks.0)`
with a plain store (no trap, no test), safe. The loops agree where the output's tile count along
axis 0 is STOP: the launcher narrows the output to its first STOP tiles there (more tiles than
STOP are left untouched, as cuTile Python leaves them; fewer stop the loop where cuTile Python's
later trips store nothing), and requires a 1-D grid (blocks of another `bid(1)` would store the
same tiles). So the body may have no other effect: a trip past the output's end that cuTile
Python runs and the narrowed loop does not may store nothing else. Whether a candidate loop's
body has exactly the one store is seen by the survey (`Survey.streams`), decided by the lowering.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import ir
from ..rust_syntax import rust_name
from .bindings import Value

if TYPE_CHECKING:
    from .walker import Walker

NUM_BLOCKS_0 = ir.Field(ir.Call("get_num_tile_blocks"), "0")


@dataclass
class StreamLoop:
    """A candidate loop while its body is lowered: its id in `KernelState.loops`, the loop
    variable (Rust), the index `iter_indices` mints (Rust), the stop parameter (Python)."""

    loop: int
    var: str
    index: str
    stop: str
    where: tuple[int, int]  # the loop's line and column: how the survey names it
    array: ir.ArrayParam | None = None  # the output stored through it, once found


def candidate(w: Walker, node: ast.For, bounds: list[Value], loop: int) -> StreamLoop | None:
    """The loop as a stream over an output's tiles, if its shape allows: at the kernel's top level
    (not in a helper or another loop), `range(ct.bid(0), P, ct.num_blocks(0))` with P an integer
    parameter the kernel never reassigns, the loop variable never reassigned, and no `break`,
    `continue`, `return` or print in the body."""
    if len(bounds) != 3 or w.frame.helpers or w.state.loops[:-1]:
        return None
    start, stop, step = bounds
    stop_node = node.iter.args[1]
    if start.bid_axis != 0 or NUM_BLOCKS_0 not in (step.expr, step.defn):
        return None
    if not isinstance(stop_node, ast.Name) or w.state.fixed_int_params.get(rust_name(stop_node.id)) != stop_node.id:
        return None
    if stop.expr != ir.Var(rust_name(stop_node.id)) and stop.dim != stop_node.id:
        return None  # a local of the parameter's name
    target = node.target.id
    for n in ast.walk(ast.Module(body=node.body, type_ignores=[])):
        if isinstance(n, (ast.Break, ast.Continue, ast.Return)):
            return None
        if isinstance(n, ast.Name) and n.id == target and isinstance(n.ctx, ast.Store):
            return None
        if isinstance(n, ast.Call) and ast.unparse(n.func).split(".")[-1] in ("print", "printf"):
            return None
    var = rust_name(target)
    return StreamLoop(loop, var, w.state.fresh(f"{var}_tile"), stop_node.id, (node.lineno, node.col_offset))


def survey_approves(w: Walker, stream: StreamLoop, first_access: int) -> None:
    """In the survey: notes the loop if the one store its body makes is all the body does."""
    stores = [a for a in w.state.accesses[first_access:] if a.kind == "stores" and stream.loop in a.loops]
    if len(stores) == 1:
        w.state.stream_loops.add(stream.where)


def claim(w: Walker, array: ir.ArrayParam, index: list[Value]) -> str | None:
    """The index the loop mints, where this store is the loop's own: the output's one store, at
    `(r, 0, ...)` with r the loop variable, inside the stream loop itself (then `array` is
    streamed); None otherwise."""
    stream = w.state.stream
    if stream is None or w.state.loops[-1:] != [stream.loop] or stream.array not in (None, array):
        return None  # (the same array again: a branch around the store lowered a second time)
    use = w.state.uses[array.name]
    if use.stores != 1 or use.loads or array.view is not None or not 1 <= len(index) <= 3:
        return None
    if array.listed or array.name in w.state.items:
        return None  # an item of a list of arrays: each has its own view, no partition parameter
    if index[0].expr != ir.Var(stream.var) or not all(v.kind == "const" and v.py == 0 for v in index[1:]):
        return None
    stream.array = array
    array.streamed = stream.stop
    return stream.index


def loop(stream: StreamLoop, body: list[ir.Stmt], line: int) -> ir.TileLoop:
    """`for idx in y.iter_indices() { let r = idx.coords()[0]; ... }`."""
    coord = ir.Subscript(ir.Method(ir.Var(stream.index), "coords"), 0)
    return ir.TileLoop(stream.index, rust_name(stream.array.name),
                       [ir.Let(stream.var, ir.ScalarType("i32"), coord, line), *body], line)
