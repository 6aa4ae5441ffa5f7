"""Loop splitting, as cuTile Python does it before it emits Tile IR.

A `for` loop with step 1 whose body holds, at its top level, exactly one `if` on a comparison of
the loop variable with a value the loop does not change (attention's `if ... and j >= mask_start`)
becomes two loops, one on each side of that value, each with the branch its iterations take and
no test left. cuTile Python's `loop_split` pass does this to the same kernels; without it the
masking of the causal diagonal runs in every iteration (fmha and gemma prefill ran 1.56x slower
in Rust on the H200). A condition `A and j >= m`, with `A` made of loop-invariant values (in
TileGym, `ct.Constant`s), splits on `j >= m` and keeps `if A` in the loop where the comparison
holds: the same iterations take the same branches for every value of `A`.
"""

from __future__ import annotations

import ast
import copy

# comparison of the loop variable with the split value -> (add 1 to the split value, whether the
# comparison holds in the first loop, the one below the split value)
_SPLITS = {ast.GtE: (False, False), ast.Gt: (True, False), ast.Lt: (False, True), ast.LtE: (True, True)}
_FLIPPED = {ast.GtE: ast.LtE, ast.Gt: ast.Lt, ast.Lt: ast.Gt, ast.LtE: ast.GtE}
_INVARIANT_NODES = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Attribute,
                    ast.Subscript, ast.Load, ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.Tuple)


def split_loop(loop: ast.For, assigned: set[str]) -> tuple[list[ast.stmt], ast.expr] | None:
    """The two loops `loop` splits into and the value it splits at, or None. `assigned`: every
    name the loop body assigns."""
    if getattr(loop, "_tilebridge_split", False) or not isinstance(loop.target, ast.Name):
        return None
    args = loop.iter.args if isinstance(loop.iter, ast.Call) else []
    if not 1 <= len(args) <= 3 or (len(args) == 3 and not _is_one(args[2])):
        return None
    var = loop.target.id
    found = [(i, st, how) for i, st in enumerate(loop.body) if isinstance(st, ast.If)
             for how in [_split_test(st.test, var, assigned)] if how is not None]
    if len(found) != 1:
        return None
    index, branch, (value, op, rest) = found[0]
    bump, holds_below = _SPLITS[op]
    at = ast.BinOp(left=value, op=ast.Add(), right=ast.Constant(1)) if bump else value
    start, stop = (ast.Constant(0), args[0]) if len(args) == 1 else (args[0], args[1])

    def taken(holds: bool) -> list[ast.stmt]:
        if not holds:
            return list(branch.orelse)
        if rest is None:
            return list(branch.body)
        # The rest of the condition is loop-invariant: left to the loop that may take the branch.
        return [ast.copy_location(ast.If(test=rest, body=branch.body, orelse=branch.orelse), branch)]

    loops: list[ast.stmt] = []
    for lo, hi, holds in ((start, _call("min", stop, at), holds_below), (_call("max", start, at), stop, not holds_below)):
        body = loop.body[:index] + taken(holds) + loop.body[index + 1:]
        new = ast.For(target=copy.deepcopy(loop.target), iter=_call("range", lo, hi), body=body or [ast.Pass()],
                      orelse=[], type_comment=None)
        new._tilebridge_split = True  # type: ignore[attr-defined]
        # Each half under `if lo < hi`: cutile bounds a `for` index by its bounds where it knows them
        # when it compiles, and a half empty there (`max(0, 1)..1`) would get an assume that
        # tileiras rejects (lower above upper); the `if` on those constants folds away first.
        guarded = ast.If(test=ast.Compare(left=copy.deepcopy(lo), ops=[ast.Lt()], comparators=[copy.deepcopy(hi)]),
                         body=[new], orelse=[])
        loops.append(ast.fix_missing_locations(ast.copy_location(guarded, loop)))
    return loops, at


def _split_test(test: ast.expr, var: str, assigned: set[str]) -> tuple[ast.expr, type, ast.expr | None] | None:
    """(split value, comparison with the loop variable on the left, the rest of an `and`) for a
    condition the loop can split on, else None."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    found = [(i, c) for i, p in enumerate(parts) for c in [_comparison(p, var, assigned)] if c is not None]
    if len(found) != 1:
        return None
    i, (value, op) = found[0]
    others = parts[:i] + parts[i + 1:]
    if not all(_invariant(p, var, assigned) for p in others):
        return None
    rest = None if not others else others[0] if len(others) == 1 else ast.BoolOp(op=ast.And(), values=others)
    return value, op, rest


def _comparison(node: ast.expr, var: str, assigned: set[str]) -> tuple[ast.expr, type] | None:
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _SPLITS):
        return None
    left, right, op = node.left, node.comparators[0], type(node.ops[0])
    if isinstance(left, ast.Name) and left.id == var and _invariant(right, var, assigned):
        return right, op
    if isinstance(right, ast.Name) and right.id == var and _invariant(left, var, assigned):
        return left, _FLIPPED[op]
    return None


def _invariant(node: ast.expr, var: str, assigned: set[str]) -> bool:
    """Made of names the loop does not assign (nor its variable) and plain operators: no calls."""
    return all(isinstance(n, _INVARIANT_NODES) for n in ast.walk(node)) and not any(
        isinstance(n, ast.Name) and (n.id == var or n.id in assigned) for n in ast.walk(node))


def _is_one(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == 1 and type(node.value) is int


def _call(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=list(args), keywords=[])
