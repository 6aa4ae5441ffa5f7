"""Conditional expressions, `a if c else b`, as cuTile Python computes them: folded where `c` is
known at translation; a choice of dtypes or of scalars on a runtime condition; tiles chosen by an
`if` whose branches each evaluate their side (a memory access on one side happens only where it is
chosen); and a compile-time object (an enum member, None) chosen by a condition known per launch,
the statement written in each branch of an `if` on it, as cuTile Python traces one per launch."""

from __future__ import annotations

import ast
import copy
from typing import TYPE_CHECKING, Any

from ... import dtypes
from ...errors import TranslationError
from .. import ir
from ..rust_syntax import runtime_literal, rust_name
from . import branches
from .bindings import Value

if TYPE_CHECKING:
    from .walker import Walker


def ifexp(w: Walker, node: ast.IfExp, out: list[ir.Stmt], hint: str) -> Value:
    cond = w.expr(node.test, out, hint)
    if cond.kind == "const":
        return w.expr(node.body if cond.py else node.orelse, out, hint)
    mark = w.checkpoint(out)
    w.state.guarded += 1
    w.state.guarded_at_run_time += 1
    a, b = w.expr(node.body, out, hint), w.expr(node.orelse, out, hint)
    w.state.guarded -= 1
    w.state.guarded_at_run_time -= 1
    if cond.kind == "dtype_test" and "dtype" in (a.kind, b.kind):
        return w.sem.derived_dtype(node, cond, a, b)
    cond = w.sem.as_condition(cond)
    if "dtype" in (a.kind, b.kind):
        return w.sem.chosen_dtype(node, cond, a, b)
    if "tile" in (a.kind, b.kind):
        w.rollback(mark, out)  # each side is evaluated again, in its branch only
        return tile_choice(w, node, cond, out, hint)
    if cond.kind != "scalar":
        raise w.error(node, "a conditional expression must choose between scalars or tiles here")
    dtype = a.dtype if a.kind == "scalar" else b.dtype if b.kind == "scalar" else None
    if dtype is None:
        # Two numbers of one kind under a runtime condition (`1 if found else 0`): a runtime value
        # of the type cuTile Python gives such a number.
        kinds = {type(a.py), type(b.py)}
        if len(kinds) != 1 or not kinds <= {bool, int, float} or (
                kinds == {int} and not all(-2 ** 31 <= v.py < 2 ** 31 for v in (a, b))):
            raise w.error(node, "a conditional expression of two constants under a runtime condition "
                                "takes two bools, two i32 integers or two floats")
        (dtype, then), (_, other) = runtime_literal(a.py), runtime_literal(b.py)
        return Value("scalar", ir.ScalarType(dtype), ir.If(cond.expr, then, other))
    typed = w.sem.scalar_binop(node, "+", a, b)  # checks and types both sides alike
    return Value("scalar", ir.ScalarType(dtype), ir.If(cond.expr, typed.expr.lhs, typed.expr.rhs))


def tile_choice(w: Walker, node: ast.IfExp, cond: Value, out: list[ir.Stmt], hint: str) -> Value:
    """`a if c else b` choosing a tile on a runtime condition: an `if` whose branches each
    evaluate their side and assign one variable, as cuTile Python lowers it."""
    cond = w.sem.tested(cond, out)
    if cond.kind != "scalar" or cond.dtype != "bool":
        raise w.error(node.test, "a conditional expression's condition must be a bool, a scalar comparison "
                                 "or a constant")
    name = w.state.fresh(rust_name(hint)) + "@"  # a name of the pass's own (no Python name ends in @)
    sides = [[ast.fix_missing_locations(ast.copy_location(
        ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=side), side))] for side in (node.body,
                                                                                               node.orelse)]
    arms, scopes = branches.lower_branches(w, cond, sides)
    unmerged = branches.merge_branches(w, node, scopes, arms, out)
    if name in unmerged:
        raise w.error(node, unmerged[name].replace(f"'{name}'", "its value"))
    out.append(ir.IfElse(cond.expr, arms[0], arms[1], node.lineno))
    return w.frame.scopes[-1].pop(name).val


def static_choice(w: Walker, node: ast.stmt) -> ast.stmt:
    """`rm = ct.RoundingMode.APPROX if approx else None`: an assignment or expression statement
    whose conditional expression chooses between two compile-time objects (neither a number nor a
    dtype) becomes an `if` on its condition with the statement in each branch; any other
    statement is returned as it is."""
    if not isinstance(node, (ast.Assign, ast.Expr)):
        return node
    choice = next((n for n in ast.walk(node) if isinstance(n, ast.IfExp) and
                   all(_compile_time_object(w, side) for side in (n.body, n.orelse))), None)
    if choice is None:
        return node
    sides = [ast.fix_missing_locations(_replaced(node, choice, side)) for side in (choice.body, choice.orelse)]
    return ast.copy_location(ast.If(test=choice.test, body=[sides[0]], orelse=[sides[1]]), node)


def _compile_time_object(w: Walker, node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value is None
    if not isinstance(node, (ast.Name, ast.Attribute)) or (isinstance(node, ast.Name) and w.lookup(node.id)):
        return False
    try:
        obj = w.eval_static(node)
    except TranslationError:
        return False
    return not isinstance(obj, (bool, int, float)) and dtypes.of_object(obj) is None and not callable(obj)


def _replaced(stmt: ast.stmt, old: ast.expr, new: ast.expr) -> ast.stmt:
    """A copy of `stmt` with the expression `old` in it replaced by a copy of `new`."""
    memo: dict[int, Any] = {}
    copied = copy.deepcopy(stmt, memo)
    target = memo[id(old)]

    class Replace(ast.NodeTransformer):
        def visit(self, node: ast.AST) -> ast.AST:
            return copy.deepcopy(new) if node is target else self.generic_visit(node)

    return Replace().visit(copied)
