"""A pass over a helper's body: early `return`s become branches that assign one result, so the
helper has a single exit, as inlining needs (`Walker.inline`).

    if flag:                      if flag:
        return t * 2        ->        returned = t * 2
    u = t + 1                     else:
    return u                          u = t + 1
                                      returned = u
                                  return returned

The statements after an `if` that may return are repeated in the branch that goes on: what Python
runs on each path, nothing more. A `return` inside a loop has no such form and is refused.
"""

from __future__ import annotations

import ast
import copy

RESULT = "returned"


def returns_in(stmts: list[ast.stmt]) -> list[ast.Return]:
    """The `return` statements of `stmts`, nested functions' left out."""
    found, todo = [], list(stmts)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return):
            found.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return found


def returning_loop(stmts: list[ast.stmt]) -> ast.stmt | None:
    """The first loop of `stmts` with a `return` inside; None where there is none."""
    for node in (n for st in stmts for n in ast.walk(st)):
        if isinstance(node, (ast.For, ast.While)) and returns_in(node.body + node.orelse):
            return node
    return None


def single_exit(body: list[ast.stmt]) -> list[ast.stmt]:
    """`body` (whose loops hold no `return`: `returning_loop`) with one `return` at its end."""
    module = ast.Module(body=[*_assigning(body), ast.Return(value=ast.Name(id=RESULT, ctx=ast.Load()))],
                        type_ignores=[])
    ast.copy_location(module.body[-1], body[-1])
    return ast.fix_missing_locations(module).body


def _assigning(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """`stmts` with each path ending in an assignment of its result (None where it falls off)."""
    for i, st in enumerate(stmts):
        if isinstance(st, ast.Return):
            value = st.value if st.value is not None else ast.Constant(value=None)
            return [*stmts[:i], ast.copy_location(ast.Assign(targets=[ast.Name(id=RESULT, ctx=ast.Store())],
                                                             value=value), st)]
        if isinstance(st, ast.If) and returns_in([st]):
            rest = stmts[i + 1:]  # on both paths: a copy on one, so that no node is in the tree twice
            branch = ast.If(test=st.test, body=_assigning([*st.body, *rest]),
                            orelse=_assigning([*st.orelse, *copy.deepcopy(rest)]))
            return [*stmts[:i], ast.copy_location(branch, st)]
    none = ast.Assign(targets=[ast.Name(id=RESULT, ctx=ast.Store())], value=ast.Constant(value=None))
    return [*stmts, ast.copy_location(none, stmts[-1]) if stmts else none]
