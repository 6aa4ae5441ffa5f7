"""Products a name holds, fused into the one sum that uses them, as cuTile Python fuses them.

cuTile Python's `fuse_mul_addsub` rewrite works on its SSA IR: a float multiply whose only use is
an add or a subtract becomes one fma, whether or not the source named the product. tileiras does
not contract a multiply and an add by itself, so a translation that keeps them apart rounds twice
where cuTile Python rounds once (TileGym's gelu, `coeff_x_cubed = coeff * x_cubed` then
`x + coeff_x_cubed`: 1 f16 ulp apart on 42 of all f16 inputs). `Semantics.fused_mul_add` fuses
unnamed products while the kernel is lowered; this pass, run on the lowered body, fuses the named
ones: `let p = x * y` (a float tile, declared once, never reassigned, its operands never
reassigned) whose one use is an operand of `+` or `-` moves into that use as `fma(x, y, c)`.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, Callable

from .. import ir

_NESTED = ("body", "then", "other")  # the fields of statements that hold statements


def fuse_named_products(body: list[ir.Stmt], float_only: Callable[[str], bool],
                        traced: Callable[[ir.Expr], bool] = lambda cond: False) -> None:
    """Rewrites `body` in place; `float_only(dtype)`: whether tiles of `dtype` are floats at every
    launch (an fma of integers is no fma). `traced(cond)`: whether cuTile Python decides an `if` on
    `cond` as it traces (a test of dtypes), seeing one branch only: a product's uses are then
    counted along each path, and it fuses into a sum that is its one use on the paths through it."""
    declared: Counter[str] = Counter()
    assigned: set[str] = set()
    lets: dict[str, tuple[ir.Let, list[ir.Stmt]]] = {}

    def collect(stmts: list[ir.Stmt]) -> None:
        for s in stmts:
            if isinstance(s, ir.Let):
                lets[s.name] = (s, stmts)
                declared[s.name] += 1
            elif isinstance(s, ir.Assign):
                assigned.add(s.name)
            for f in dataclasses.fields(s):
                if f.name in _NESTED:
                    collect(getattr(s, f.name))

    collect(body)
    products = {name: let for name, (let, _) in lets.items()
                if declared[name] == 1 and not let.mutable and name not in assigned
                and isinstance(let.value, ir.Binary) and let.value.op == "*"
                and isinstance(let.type, ir.TileType) and float_only(let.type.dtype)
                and not assigned.intersection(v.name for v in ir.variables(let.value))}
    fused: set[str] = set()

    def path_uses(stmts: list[ir.Stmt]) -> Counter[str]:
        """Each name's uses on the path through `stmts` that uses it most."""
        return sum((statement_uses(s) for s in stmts), Counter())

    def statement_uses(s: ir.Stmt) -> Counter[str]:
        uses = Counter(v.name for f in dataclasses.fields(s) if f.name not in _NESTED
                       for v in ir.variables(getattr(s, f.name)))
        if isinstance(s, ir.IfElse) and traced(s.cond):
            return uses + (path_uses(s.then) | path_uses(s.other))  # `|`: the larger count of the two
        for f in dataclasses.fields(s):
            if f.name in _NESTED:
                uses.update(path_uses(getattr(s, f.name)))
        return uses

    def rewrite_expr(e: Any, fusable: set[str]) -> Any:
        if isinstance(e, ir.Binary) and e.op in ("+", "-"):
            lhs, rhs = rewrite_expr(e.lhs, fusable), rewrite_expr(e.rhs, fusable)
            # cuTile Python's rewrite takes a left operand that is a product, and only that one:
            # where it has other uses, the sum stays unfused even if the right one is a product.
            left_product = isinstance(lhs, ir.Var) and lhs.name in products
            for product_first, p, acc in ((True, lhs, rhs),) + (() if left_product else ((False, rhs, lhs),)):
                if isinstance(p, ir.Var) and p.name in fusable:
                    x, y = products[p.name].value.lhs, products[p.name].value.rhs
                    if e.op == "-" and product_first:
                        acc = ir.Call("negf", (acc,))  # x * y - c = x * y + (-c)
                    elif e.op == "-":
                        x = ir.Call("negf", (x,))  # c - x * y = (-x) * y + c
                    fused.add(p.name)
                    return ir.Call("fma", (x, y, acc, ir.Lit("rounding::NearestEven"), ir.Lit("ftz::Disabled")))
            return dataclasses.replace(e, lhs=lhs, rhs=rhs)
        if isinstance(e, (tuple, list)):
            return type(e)(rewrite_expr(x, fusable) for x in e)
        if dataclasses.is_dataclass(e) and not isinstance(e, (type, ir.Var)):
            changed = {f.name: rewrite_expr(getattr(e, f.name), fusable) for f in dataclasses.fields(e)}
            return dataclasses.replace(e, **changed) if any(changed[k] is not getattr(e, k) for k in changed) else e
        return e

    def rewrite(stmts: list[ir.Stmt], outside: Counter[str]) -> None:
        """`outside`: each name's uses on the most-using path through the statements around `stmts`."""
        each = [statement_uses(s) for s in stmts]
        total = sum(each, Counter())
        for s, own in zip(stmts, each):
            if isinstance(s, ir.IfElse) and traced(s.cond):
                around = outside + total - own + Counter(v.name for v in ir.variables(s.cond))
                rewrite(s.then, around)
                rewrite(s.other, around)
            else:
                on_path = outside + total
                rewrite_within([s], {name for name in products if on_path[name] == 1})

    def rewrite_within(stmts: list[ir.Stmt], fusable: set[str]) -> None:
        """Inside a statement other than a traced `if` every use counts (both branches of an `if`
        cutile runs, a loop's body): `fusable` is decided for the whole statement."""
        for s in stmts:
            for f in dataclasses.fields(s):
                if f.name in _NESTED:
                    rewrite_within(getattr(s, f.name), fusable)
                elif f.name in ("value", "expr", "cond", "start", "stop", "step"):
                    setattr(s, f.name, rewrite_expr(getattr(s, f.name), fusable))

    rewrite(body, Counter())
    left = path_uses(body)
    for name in fused:
        if not left[name]:  # fused into its every use (one on each path)
            let, stmts = lets[name]
            stmts.remove(let)
