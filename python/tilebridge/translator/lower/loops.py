"""Loops: `for ... in range(...)` (a Tile IR `for`, a grid-stride `while`, or split in two around
the one branch on the loop variable), `ct.static_iter` unrolled, and `while` loops."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ...errors import TranslationError
from .. import ir
from ..rust_syntax import rust_name
from . import loop_exits, streams
from .bindings import Binding, Value
from .facts import assignments
from .loop_split import split_loop

if TYPE_CHECKING:
    from .walker import Walker


def lower_for(w: Walker, node: ast.For, out: list[ir.Stmt]) -> None:
    if node.orelse:
        raise w.error(node, "for-else is not supported")
    if not isinstance(node.target, ast.Name):
        raise w.error(node.target, "loop targets must be a single name")
    it = node.iter
    if is_static_iter(w, it):
        unroll(w, node, out)
        return
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
            and not it.keywords and 1 <= len(it.args) <= 3):
        raise w.error(it, "only `for ... in range(...)` loops are supported")
    if any(isinstance(x, ast.Break) for x in loop_exits.own_exits(node.body)):
        flag = w.state.fresh("broke") + "@"  # a name no Python code can have
        w.frame.loop_carried = w.frame.loop_carried | {flag}
        for st in loop_exits.with_break_flag(node, flag):
            w.stmt(st, out, [])
        return
    split = split_loop(node, {name for _, name in assignments(node)})
    if split is not None:
        for half in split[0]:
            w.stmt(half, out, [])
        return
    bound_vals = [w.expr(a, out) for a in it.args]
    if len(bound_vals) == 3 and bound_vals[2].kind == "const" and bound_vals[2].py <= 0:
        # cuTile Python rejects it too ("Step must be positive"); a Rust step_by would run nothing.
        raise w.error(it.args[2], "a range step must be positive, as cuTile Python requires")
    if all(v.kind == "const" and type(v.py) is int for v in bound_vals) and not range(*(v.py for v in bound_vals)):
        # No trip, as Python runs it: nothing to emit. cutile 0.5.0 would bound the index of a
        # loop of constant bounds by [start, stop - 1], which Tile IR rejects where it is empty.
        return
    bounds = [w.sem.i32(v, a, out) for v, a in zip(bound_vals, it.args)]
    if len(bounds) == 3 and bound_vals[2].kind == "scalar" and bound_vals[2].dim is not None:
        w.sem.require_positive(bound_vals[2])  # a ct.Constant step: the launcher checks it positive
    elif len(bounds) == 3 and bound_vals[2].kind == "scalar" and w.state.on_constants(bounds[2]):
        w.state.launch_check(ir.Binary(">", bounds[2], ir.Lit("0i32")),
                             f"{w.state.src.display_file}: the range step `{ast.unparse(it.args[2])}` "
                             "must be positive, as cuTile Python requires")
    start_nonneg = len(bound_vals) == 1 or w.sem.nonneg(bound_vals[0])
    start, stop, step = (ir.Lit("0i32"), bounds[0], None) if len(bounds) == 1 else (
        bounds[0], bounds[1], bounds[2] if len(bounds) == 3 else None)
    if step is not None and isinstance(step, ir.Lit) and step.text == "1i32":
        step = None
    var = rust_name(node.target.id)
    body: list[ir.Stmt] = []
    loop_var = Value("scalar", ir.ScalarType("i32"), ir.Var(var), nonneg=start_nonneg)
    w.frame.scopes.append({node.target.id: Binding(loop_var, None, w.depth + 1)})
    w.state.loop_count += 1
    w.state.loops.append(w.state.loop_count)
    w.state.loop_vars[w.state.loop_count] = var
    # A grid-stride loop (`range(ct.bid(0), n, NUM_SMS)`) to a bound known when cutile compiles:
    # cutile assumes block ids >= 0 and bounds a `for` loop's index, from which tileiras counts
    # at most n / NUM_SMS trips and unrolls them all (the persistent layer norm: 8 copies of
    # the body, 6x the SASS of cuTile Python's, registers spilled), where cuTile Python's loop
    # from an unbounded block id stays a loop. As a `while` loop it stays a loop here too.
    stride = len(bounds) == 3 and len(node.body) > 0 and not w.state.compile_time(start) and \
        w.state.compile_time(stop) and w.sem.positive_step(bound_vals[2], step)
    stream = streams.candidate(w, node, bound_vals, w.state.loop_count)
    if stream is not None and not w.state.survey and stream.where not in w.state.streamable:
        stream = None
    first_access = len(w.state.accesses)
    w.state.stream = stream
    try:
        w.block(node.body, body)
    finally:
        w.state.loops.pop()
        w.state.stream = None
    w.frame.scopes.pop()
    if stream is not None and w.state.survey:
        streams.survey_approves(w, stream, first_access)
    if stream is not None and stream.array is not None:
        out.append(streams.loop(stream, body, node.lineno))
        return
    if not stride:
        loop = ir.For(var, start, stop, step, body, node.lineno)
        if w.state.compile_time(start) and w.state.compile_time(stop) and not (
                isinstance(start, ir.Lit) and isinstance(stop, ir.Lit)):
            # Bounds cutile knows when it compiles (ct.Constant values): it bounds the index by
            # [start, stop - 1], which tileiras rejects at a specialization where the range is
            # empty. Under `if start < stop` such a loop is not compiled there; elsewhere
            # tileiras folds the test (the cubin is byte for byte the loop's alone).
            out.append(ir.IfElse(ir.Binary("<", start, stop), [loop], [], node.lineno))
        else:
            out.append(loop)
        return
    counter = w.state.fresh(f"{var}_next")
    out.append(ir.Let(counter, ir.ScalarType("i32"), start, node.lineno, mutable=True))
    advance = ir.Assign(counter, ir.Binary("+", ir.Var(counter), step or ir.Lit("1i32")), node.lineno)
    # A `continue` ends the trip before the body's end: the counter then moves on at its start.
    at_start = [advance] if loop_exits.own_exits(node.body) else []
    body[:0] = [ir.Let(var, ir.ScalarType("i32"), ir.Var(counter), node.lineno), *at_start]
    if not at_start:
        body.append(advance)
    out.append(ir.While(ir.Binary("<", ir.Var(counter), stop), body, node.lineno))


def is_static_iter(w: Walker, it: ast.expr) -> bool:
    """Whether a loop's iterable is `ct.static_iter(...)`."""
    if not (isinstance(it, ast.Call) and isinstance(it.func, (ast.Name, ast.Attribute))):
        return False
    try:
        func = w.eval_static(it.func)
    except TranslationError:
        return False
    return getattr(func, "__name__", None) == "static_iter" and \
        getattr(func, "__module__", "").startswith("cuda.tile")


def unroll(w: Walker, node: ast.For, out: list[ir.Stmt]) -> None:
    """`for x in ct.static_iter(items)`: the body once per item, in order, with `x` that item, as
    cuTile Python unrolls it. Items known here (a range of numbers, a tuple) are unrolled here; a
    range over ct.Constant bounds is a loop, which computes the same."""
    (items_node,) = w.call_args(node.iter, ["iterable"], 1).values()
    if any(isinstance(n, (ast.Break, ast.Continue)) for n in ast.walk(node)):
        raise w.error(node, "`break` and `continue` in a ct.static_iter loop are not supported")
    is_range = isinstance(items_node, ast.Call) and isinstance(items_node.func, ast.Name) and \
        items_node.func.id == "range"
    if is_range:
        bounds = [w.expr(a, out) for a in items_node.args]
        if not all(b.kind == "const" and isinstance(b.py, int) for b in bounds):
            plain = ast.copy_location(ast.For(target=node.target, iter=items_node, body=node.body, orelse=[]), node)
            lower_for(w, plain, out)
            return
        items = [Value("const", py=i) for i in range(*(b.py for b in bounds))]
    else:
        val = w.expr(items_node, out)
        if val.kind != "tuple":
            raise w.error(items_node, "ct.static_iter takes a range or a tuple here")
        items = val.py
    w.state.unrolling += 1
    try:
        for item in items:
            w.bind(node.target, item, out)
            w.block(node.body, out)
    finally:
        w.state.unrolling -= 1


def lower_while(w: Walker, node: ast.While, out: list[ir.Stmt]) -> None:
    if node.orelse:
        raise w.error(node, "while-else is not supported")
    test: list[ir.Stmt] = []
    mark = w.checkpoint(out)
    cond = w.sem.tested(w.expr(node.test, test, hint="cond"), test)
    if test and not (isinstance(node.test, ast.Constant) and node.test.value is True):
        # A condition that needs statements (`while ct.atomic_cas(lock, ...) == 1:`, a spin lock;
        # a 0-d tile of bools, made a scalar): evaluated at the top of each trip, as
        # `while True: if cond: pass / else: break`.
        w.rollback(mark, out)
        exit_ = ast.copy_location(ast.If(test=node.test, body=[ast.copy_location(ast.Pass(), node.test)],
                                         orelse=[ast.copy_location(ast.Break(), node.test)]), node.test)
        forever = ast.copy_location(ast.Constant(value=True), node.test)
        return lower_while(w, ast.copy_location(ast.While(test=forever, body=[exit_, *node.body], orelse=[]), node),
                           out)
    forever = cond.kind == "const" and cond.py is True  # `while True:`, left by a `break`
    if not forever and (test or cond.kind != "scalar" or cond.dtype != "bool"):
        raise w.error(node.test, "a while condition must be True or a comparison of scalars (or `and`/`or` "
                                 "of them)")
    if forever and not any(isinstance(n, ast.Break) for n in ast.walk(node)):
        raise w.error(node, "a `while True:` loop without a `break` never ends")
    body: list[ir.Stmt] = []
    w.frame.scopes.append({})
    w.state.loop_count += 1
    w.state.loops.append(w.state.loop_count)
    w.state.while_loops.add(w.state.loop_count)
    try:
        w.block(node.body, body)
    finally:
        w.state.loops.pop()
    w.frame.scopes.pop()
    out.append(ir.While(None if forever else cond.expr, body, node.lineno))
