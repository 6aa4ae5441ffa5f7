"""A pass over a `for` loop with a `break`, as cuTile Python's `for_loop_break` pass makes it: Tile
IR's `for` cannot exit early, so the `break` sets a flag and ends the trip, and every later trip
skips its body while the flag is set. What runs is what Python runs; the trips after the `break`
only test the flag.

    for i in range(n):            broke = False
        if c(i):          ->      for i in range(n):
            break                     if broke:
        body(i)                           continue
                                      if c(i):
                                          broke = True
                                          continue
                                      body(i)

The flag's name ends in `@` (`rust_name` drops it), so no name of the kernel's can be it.
"""

from __future__ import annotations

import ast
import copy

_SCOPES = (ast.For, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def own_exits(body: list[ast.stmt]) -> list[ast.Break | ast.Continue]:
    """The `break` and `continue` statements of the loop whose body is `body`: those of loops and
    functions nested in it left out."""
    found, todo = [], list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Break, ast.Continue)):
            found.append(node)
        elif not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))
    return found


def with_break_flag(loop: ast.For, flag: str) -> list[ast.stmt]:
    """`flag = False` and `loop` with its own `break`s made `flag = True; continue`, its body
    skipped while `flag` is set."""

    def name(ctx: ast.expr_context) -> ast.Name:
        return ast.Name(id=flag, ctx=ctx)

    class Breaks(ast.NodeTransformer):
        def visit_Break(self, node: ast.Break) -> list[ast.stmt]:
            set_flag = ast.Assign(targets=[name(ast.Store())], value=ast.Constant(value=True))
            return [ast.copy_location(set_flag, node), ast.copy_location(ast.Continue(), node)]

        def generic_visit(self, node: ast.AST) -> ast.AST:
            return node if isinstance(node, _SCOPES) else super().generic_visit(node)

    holder = ast.Module(body=copy.deepcopy(loop.body), type_ignores=[])  # the kernel's own tree stays as it is
    body = Breaks().generic_visit(holder).body  # a `break` of the body itself becomes two statements there
    skip = ast.copy_location(ast.If(test=name(ast.Load()), body=[ast.copy_location(ast.Continue(), loop)],
                                    orelse=[]), loop)
    rewritten = ast.copy_location(ast.For(target=loop.target, iter=loop.iter, body=[skip, *body], orelse=[],
                                          type_comment=None), loop)
    start = ast.copy_location(ast.Assign(targets=[name(ast.Store())], value=ast.Constant(value=False)), loop)
    return [ast.fix_missing_locations(start), ast.fix_missing_locations(rewritten)]
