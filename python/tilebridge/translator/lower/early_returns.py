"""A pass over a helper's body: early `return`s become branches that assign one result, so the
helper has a single exit, as inlining needs (`Walker.inline`).

    if flag:                      if flag:
        return t * 2        ->        returned = t * 2
    u = t + 1                     else:
    return u                          u = t + 1
                                      returned = u
                                  return returned

The statements after an `if` that may return are repeated in the branch that goes on: what Python
runs on each path, nothing more. A `return` inside a loop, as cuTile Python makes it, sets the
result and a flag and leaves the loop (`break`, and again after each enclosing loop); the
statements after the loop run where the flag is not set:

    for i in range(n):            returning = False
        if c(i):          ->      returned = <typed by the first value the loop returns>
            return i              for i in range(n):
    return -1                         if c(i):
                                          returned = i
                                          returning = True
                                          break
                                  if not returning:
                                      returned = -1
                                  return returned

The names end in `@` (`rust_name` drops it), so no name of the helper's can be one of them.
"""

from __future__ import annotations

import ast
import copy

RESULT = "returned@"
RETURNING = "returning@"


class Undefined(ast.expr):
    """The result before a loop that may return: the walker types it by the first value the loop
    returns (`Walker.bind`); no path reads it before."""

    _fields = ()


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


def returns_in_loops(stmts: list[ast.stmt]) -> bool:
    """Whether a loop of `stmts` holds a `return`."""
    return any(isinstance(node, (ast.For, ast.While)) and returns_in(node.body + node.orelse)
               for st in stmts for node in ast.walk(st))


def single_exit(body: list[ast.stmt]) -> list[ast.stmt]:
    """`body` with one `return` at its end."""
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
        if isinstance(st, (ast.For, ast.While)) and returns_in([st]):
            start = [_set(RETURNING, ast.Constant(value=False), st), _set(RESULT, Undefined(), st)]
            return [*stmts[:i], *start, _leaving(st), _unless_returning(_assigning(stmts[i + 1:]), st)]
    none = ast.Assign(targets=[ast.Name(id=RESULT, ctx=ast.Store())], value=ast.Constant(value=None))
    return [*stmts, ast.copy_location(none, stmts[-1]) if stmts else none]


def kernel_exits(body: list[ast.stmt]) -> list[ast.stmt]:
    """The kernel's `body` with each `return` inside a loop made the flag and a `break` out of the
    loop (and each enclosing one), what follows such a loop running where the flag is not set. A
    `return` outside loops stays: the walker's early exit (`branches.lower_paths`)."""
    if not returns_in_loops(body):
        return body
    docstring = body[:1] if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else []
    start = _set(RETURNING, ast.Constant(value=False), body[0])
    module = ast.Module(body=[*docstring, start, *_exiting(body[len(docstring):])], type_ignores=[])
    if not any(isinstance(n, ast.Name) and n.id == RETURNING and isinstance(n.ctx, ast.Load) for n in ast.walk(module)):
        _Unflagged().visit(module)  # nothing follows the loop: the `break` alone leaves it
    return ast.fix_missing_locations(module).body


class _Unflagged(ast.NodeTransformer):
    """Drops the assignments of the flag, where nothing reads it."""

    def visit_Assign(self, node: ast.Assign) -> ast.Assign | None:
        target = node.targets[0]
        return None if isinstance(target, ast.Name) and target.id == RETURNING else node


def _exiting(stmts: list[ast.stmt]) -> list[ast.stmt]:
    for i, st in enumerate(stmts):
        if not returns_in_loops([st]):
            continue
        if isinstance(st, (ast.For, ast.While)):
            st = _leaving(st, result=False)
        elif isinstance(st, ast.If):
            st = copy.deepcopy(st)
            st.body, st.orelse = _exiting(st.body), _exiting(st.orelse)
        rest = _exiting(stmts[i + 1:])
        return [*stmts[:i], st, *([_unless_returning(rest, st)] if rest else [])]
    return list(stmts)


def _unless_returning(rest: list[ast.stmt], where: ast.stmt) -> ast.If:
    """`if not returning: rest`: what follows a loop that may return, where it did not."""
    going_on = ast.UnaryOp(op=ast.Not(), operand=ast.Name(id=RETURNING, ctx=ast.Load()))
    return ast.copy_location(ast.If(test=going_on, body=rest, orelse=[]), where)


def _leaving(loop: ast.For | ast.While, result: bool = True) -> ast.For | ast.While:
    """A copy of `loop` whose `return`s set the result (a helper's) and the flag and leave it."""
    loop = copy.deepcopy(loop)
    loop.body = _leaving_body(loop.body, result)
    return loop


def _leaving_body(stmts: list[ast.stmt], result: bool) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for st in stmts:
        if isinstance(st, ast.Return):
            value = st.value if st.value is not None else ast.Constant(value=None)
            out += [*([_set(RESULT, value, st)] if result else []), _set(RETURNING, ast.Constant(value=True), st),
                    ast.copy_location(ast.Break(), st)]
            return out  # nothing after a `return` runs
        if isinstance(st, ast.If) and returns_in([st]):
            st.body, st.orelse = _leaving_body(st.body, result), _leaving_body(st.orelse, result)
        elif isinstance(st, (ast.For, ast.While)) and returns_in([st]):
            st.body = _leaving_body(st.body, result)
            leave = ast.If(test=ast.Name(id=RETURNING, ctx=ast.Load()), body=[ast.copy_location(ast.Break(), st)],
                           orelse=[])
            out += [st, ast.copy_location(leave, st)]
            continue
        out.append(st)
    return out


def _set(name: str, value: ast.expr, where: ast.stmt) -> ast.Assign:
    return ast.copy_location(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=value), where)
