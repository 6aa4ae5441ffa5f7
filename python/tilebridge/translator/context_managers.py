"""`with` blocks, written out where they stand.

cuTile Python runs a `with` over a helper made by `@contextlib.contextmanager`: the helper's
statements up to its one `yield` where the block starts (the yielded value bound to the `as`
target), the block, then the helper's statements after the `yield`. `expand` rewrites a
function's AST into that sequence before anything else reads it: the helper's parameters
become assignments of the call's arguments and its local names are renamed apart from the
function's, so the rest of the pipeline sees plain statements.

Refused with a `TranslationError` (cuTile Python refuses the first three too): a `with` over
anything else, a helper whose `yield` is not one statement of its own body, a `return` in the
helper; and, as tilebridge does not follow them, a block left by `return`, `break` or
`continue`, and a helper from another module (its names would be read in this one's).
"""

from __future__ import annotations

import ast
import contextlib
import copy
import inspect
import textwrap
from typing import Any

from . import calls
from .calls import ErrorAt
from .closures import Renamer, fresh_name, own_names


def generator_of(obj: Any) -> Any:
    """The generator function `@contextlib.contextmanager` made `obj` from, or None."""
    wrapped = getattr(obj, "__wrapped__", None)
    code = getattr(obj, "__code__", None)
    if wrapped is None or code is None or code.co_filename != contextlib.__file__:
        return None
    return wrapped if inspect.isgeneratorfunction(wrapped) else None


def expand(fdef: ast.FunctionDef, globals_: dict[str, Any], error: ErrorAt) -> ast.FunctionDef:
    """`fdef` with every `with` statement written out (a copy; `fdef` itself where it has none)."""
    if not any(isinstance(n, ast.With) for n in ast.walk(fdef)):
        return fdef
    fdef = copy.deepcopy(fdef)
    _Expander(globals_, error, fdef).rewrite(fdef)
    return fdef


class _Expander:
    def __init__(self, globals_: dict[str, Any], error: ErrorAt, fdef: ast.FunctionDef):
        self.globals = globals_
        self.error = error
        self.local = _local_names(fdef)  # the function's own: a helper's global of one name would be hidden
        # The names in use: a renamed local takes none of them.
        self.taken = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name)} | self.local

    def rewrite(self, node: ast.AST) -> None:
        """Writes out the `with` statements in every statement list under `node`."""
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                setattr(node, field, self.statements(stmts))

    def statements(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for st in stmts:
            if isinstance(st, ast.With):
                out += self.with_block(st, st.items)
            else:
                self.rewrite(st)
                out.append(st)
        return out

    def with_block(self, node: ast.With, items: list[ast.withitem]) -> list[ast.stmt]:
        if not items:
            _check_stays(node.body, self.error)
            return self.statements(node.body)
        item = items[0]
        helper = self.helper(item.context_expr)
        enter, value, leave = self.split(item.context_expr, helper)
        bound: list[ast.stmt] = []
        if item.optional_vars is not None:
            bound = [ast.copy_location(ast.Assign(targets=[item.optional_vars], value=value), item.context_expr)]
        elif value is not None and not isinstance(value, ast.Constant):
            bound = [ast.copy_location(ast.Expr(value=value), item.context_expr)]
        return [*enter, *bound, *self.with_block(node, items[1:]), *leave]

    def helper(self, call: ast.expr) -> Any:
        if not isinstance(call, ast.Call):
            raise self.error(call, "`with` takes a call of a @contextlib.contextmanager helper")
        obj = calls.static_value(call.func, self.globals, self.error)
        gen = generator_of(obj)
        if gen is None:
            raise self.error(call, "`with` takes a helper made by @contextlib.contextmanager (as cuTile Python "
                                   "does); this is not one")
        if gen.__globals__ is not self.globals:
            raise self.error(call, "a context manager from another module is not supported yet (define it in "
                                   "the kernel's module)")
        return gen

    def split(self, call: ast.Call, gen: Any) -> tuple[list[ast.stmt], ast.expr | None, list[ast.stmt]]:
        """The helper's statements before its `yield` (after its parameters are bound to the call's
        arguments), the yielded value, and the statements after, all renamed apart."""
        lines, first = inspect.getsourcelines(gen)
        tree = ast.parse(textwrap.dedent("".join(lines)))
        ast.increment_lineno(tree, first - 1)
        fdef = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
        a = fdef.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            raise self.error(call, "context managers with *args, **kwargs or keyword-only parameters are not "
                                   "supported yet")
        if any(isinstance(n, ast.Return) for n in ast.walk(fdef)):
            raise self.error(call, f"`{fdef.name}` returns: cuTile Python does not support returning from a "
                                   "generator-based context manager")
        body = fdef.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # docstring
        at = [i for i, st in enumerate(body) if isinstance(st, ast.Expr) and isinstance(st.value, ast.Yield)]
        yields = [n for n in ast.walk(fdef) if isinstance(n, (ast.Yield, ast.YieldFrom))]
        if len(at) != 1 or len(yields) != 1:
            raise self.error(call, f"`{fdef.name}` must yield once, as a statement of its own body (not inside "
                                   "a block or an expression)")
        params = [p.arg for p in a.args]
        args = self.arguments(call, fdef, params)
        local = own_names(fdef)
        hidden = sorted(({n.id for n in ast.walk(fdef) if isinstance(n, ast.Name)} - local) & self.local)
        if hidden:
            raise self.error(call, f"`{fdef.name}` reads the module's `{hidden[0]}`, which the kernel binds "
                                   "itself: rename one of them")
        renamed = {name: fresh_name(f"_{fdef.name}_{name}", self.taken) for name in sorted(local)}
        Renamer(renamed).body(fdef)  # in place: `body` holds the same statements
        enter = [ast.fix_missing_locations(ast.copy_location(
            ast.Assign(targets=[ast.Name(id=renamed[p], ctx=ast.Store())], value=args[p]), call)) for p in params]
        enter += self.statements(body[:at[0]])
        leave = self.statements(body[at[0] + 1:])
        value = body[at[0]].value.value
        return enter, value if value is not None else ast.copy_location(ast.Constant(value=None), call), leave

    def arguments(self, call: ast.Call, fdef: ast.FunctionDef, params: list[str]) -> dict[str, ast.expr]:
        """The call's argument expressions by parameter name, the helper's defaults where it
        gives none: those are read where the helper is defined, the module's names, which the
        kernel must not hide (`split` checks)."""
        defaults = dict(zip(params[len(params) - len(fdef.args.defaults):], fdef.args.defaults))
        args = calls.bind_arguments(call, params, len(params) - len(defaults), self.error)
        return {p: args[p] if p in args else ast.copy_location(defaults[p], call) for p in params}


def _check_stays(body: list[ast.stmt], error: ErrorAt) -> None:
    """Refuses a `return`, or a `break`/`continue` of a loop outside the block: the helper's
    statements after its `yield` would not run where cuTile Python's do."""
    def walk(stmts: list[ast.stmt], in_loop: bool) -> None:
        for st in stmts:
            if isinstance(st, ast.Return) or (isinstance(st, (ast.Break, ast.Continue)) and not in_loop):
                raise error(st, "leaving a `with` block early (return, break, continue) is not supported")
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            loop = isinstance(st, (ast.For, ast.While))
            for field in ("body", "orelse"):
                inner = getattr(st, field, None)
                if isinstance(inner, list):
                    walk(inner, in_loop or (loop and field == "body"))
    walk(body, False)


def _local_names(fdef: ast.FunctionDef) -> set[str]:
    """The names a function binds: its parameters and what it assigns."""
    return {a.arg for a in ast.walk(fdef.args) if isinstance(a, ast.arg)} | {
        n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
