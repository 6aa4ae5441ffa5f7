"""Pure queries over a kernel's Python AST and its IR, and arithmetic on translation-time numbers:
nothing here reads or changes the lowering's state."""

from __future__ import annotations

import ast
import operator
from typing import Any

from .. import ir
from ..rust_syntax import rust_name
from .early_returns import RESULT

# Python's comparisons, evaluated on translation-time values.
COMPARISONS = {ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
               ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b}


def fold(op: ast.operator, a: Any, b: Any) -> Any:
    """`a op b` on two translation-time numbers, as Python computes it."""
    apply = {ast.Mod: operator.mod, ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
             ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.BitAnd: operator.and_,
             ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift,
             ast.RShift: operator.rshift, ast.Pow: operator.pow}.get(type(op))
    if apply is None:
        raise TypeError(op)
    return apply(a, b)


def show_type(t: ir.Type | None) -> str:
    """A type as messages say it: `tile f32[128, 64]`, `i32`."""
    if isinstance(t, ir.TileType):
        return f"tile {t.dtype}{list(t.shape)}"
    if isinstance(t, ir.ScalarType):
        return t.dtype
    return "?"


def with_article(noun: str) -> str:
    """`noun` with its indefinite article, for messages: "an array", "a tile"."""
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


def assignments(tree: ast.AST) -> list[tuple[int, str]]:
    """(id of the statement, name) for every name an assignment in `tree` binds, tuples unpacked."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for n in t.elts if isinstance(t, ast.Tuple) else [t]:
                    if isinstance(n, ast.Name):
                        found.append((id(node), n.id))
    return found


def loop_assigned(fn: ast.FunctionDef) -> set[str]:
    """The names an assignment inside a loop of `fn` binds: they may hold any value there."""
    return {t.id for loop in ast.walk(fn) if isinstance(loop, (ast.For, ast.While))
            for st in ast.walk(loop) if isinstance(st, (ast.Assign, ast.AugAssign, ast.AnnAssign))
            for t in (st.targets if isinstance(st, ast.Assign) else [st.target])
            if isinstance(t, ast.Name)}


def path_after(branch: list[ast.stmt], rest: list[ast.stmt]) -> list[ast.stmt]:
    """The statements that run after a branch is taken: the branch, then `rest` unless the branch
    returns (the kernel's early exit) or leaves its loop's trip (`break`, `continue`)."""
    if branch and isinstance(branch[-1], ast.Return) and branch[-1].value is None:
        return branch[:-1]
    if branch and isinstance(branch[-1], (ast.Break, ast.Continue)):
        return branch  # the loop's next trip, or what follows the loop
    return branch + rest


def may_return(stmts: list[ast.stmt]) -> bool:
    """Whether `stmts` return from the kernel anywhere but inside a loop."""
    for st in stmts:
        if isinstance(st, ast.Return):
            return True
        if isinstance(st, ast.If) and (may_return(st.body) or may_return(st.orelse)):
            return True
    return False


def names_read(stmts: list[ast.stmt]) -> set[str]:
    """The names `stmts` read (augmented assignments read their target)."""
    found = set()
    for st in stmts:
        for n in ast.walk(st):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                found.add(n.id)
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                found.add(n.target.id)
    return found


def steps_with(expr: ir.Expr | None, var: str) -> bool:
    """Whether `expr` is `var` plus or minus terms without it: one-to-one in the loop variable."""
    if expr == ir.Var(var):
        return True
    if isinstance(expr, ir.Binary) and expr.op in ("+", "-"):
        lhs, rhs = mentions(expr.lhs, var), mentions(expr.rhs, var)
        return (lhs and not rhs and steps_with(expr.lhs, var)) or (rhs and not lhs and steps_with(expr.rhs, var))
    return False


def mentions(expr: Any, var: str) -> bool:
    if expr == ir.Var(var):
        return True
    if isinstance(expr, tuple):
        return any(mentions(e, var) for e in expr)
    return any(mentions(getattr(expr, f), var) for f in getattr(expr, "__dataclass_fields__", {}))


def carried_names(fn: ast.FunctionDef) -> set[str]:
    """Names a loop assigns that are also assigned before it (or elsewhere outside it): each
    iteration sees the last one's value, so a number bound to one is a runtime variable."""
    everywhere = assignments(fn)
    carried: set[str] = set()
    for loop in ast.walk(fn):
        if isinstance(loop, (ast.For, ast.While)):
            inside = {id(n) for n in ast.walk(loop)}
            carried |= ({name for i, name in everywhere if i in inside} &
                        {name for i, name in everywhere if i not in inside})
    return carried


def bound_per_trip(fn: ast.FunctionDef) -> set[str]:
    """Names only loops bind, each loop afresh on every trip: every binding of the name outside a
    loop that binds it lies in another loop, which does not contain that one (two loops one after
    the other). No value of such a name reaches a loop from outside it."""
    everywhere = assignments(fn)
    loops = [{id(n) for n in ast.walk(loop)} for loop in ast.walk(fn) if isinstance(loop, (ast.For, ast.While))]
    params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
    names = {name for _, name in everywhere} - params
    for loop in loops:
        inside = {name for i, name in everywhere if i in loop}
        for i, name in everywhere:
            if name in inside and i not in loop and not any(i in other and not loop <= other for other in loops):
                names.discard(name)  # bound outside every loop, or in one around this one
    return {name for name in names if all(any(i in loop for loop in loops) for i, n in everywhere if n == name)}


def negation(cond: ir.Expr) -> ir.Expr:
    """`cond == false`: how a path of branches on constants holds a condition as false
    (`branches.assume`), so `kernel.exclusive` can tell two paths apart."""
    return ir.Binary("==", cond, ir.Lit("false"))


def single_valued(fn: ast.FunctionDef) -> set[str]:
    """The variables (as Rust names) that hold one value wherever the kernel reads them: a
    parameter the kernel never binds, a name it binds once, or a `for` target no assignment binds
    and no loop inside a loop over it binds again (one value through each trip)."""
    assigned = [rust_name(name) for _, name in assignments(fn)]
    targets: list[str] = []
    for loop in ast.walk(fn):
        if isinstance(loop, ast.For):
            names = {rust_name(n.id) for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
            inner = {rust_name(n.id) for st in loop.body + loop.orelse for sub in ast.walk(st)
                     if isinstance(sub, ast.For) for n in ast.walk(sub.target) if isinstance(n, ast.Name)}
            targets += names
            assigned += list(names & inner)  # bound again inside its own loop
    params = {rust_name(a.arg) for a in fn.args.args}

    def one_value(v: str) -> bool:
        bindings = assigned.count(v) + targets.count(v)
        return (v in params and bindings == 0) or (v not in params and (
            bindings == 1 or (v in targets and v not in assigned)))
    return {v for v in {*params, *assigned, *targets} if one_value(v)}


def shown_name(name: str) -> str:
    """A name as a message shows it: quoted, or what a name a pass made (ending in `@`) stands for."""
    if name == RESULT:
        return "the helper's result"
    return f"'{name.removesuffix('@')}'"
