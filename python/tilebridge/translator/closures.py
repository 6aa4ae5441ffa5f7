"""Functions defined inside a kernel or helper (`def` and `lambda`), their locals renamed apart.

cuTile Python compiles a nested function as a closure: its parameters and the names it assigns
are its own, and the names it only reads are the enclosing function's, read when it is called.
The walker inlines a call of one where it is made (`Walker.call_closure`), reading the enclosing
function's names there; so that none of the closure's own names can be taken for, or overwrite,
one of the enclosing function's, `rename_apart` gives them names used nowhere else first (on
the function's AST, before anything reads it).
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field
from typing import Any

NESTED = (ast.FunctionDef, ast.Lambda)


@dataclass
class Closure:
    """A nested function, as the walker binds it: its definition (a lambda as a one-`return`
    function), its defaults as evaluated where it was defined, and the frame that defined it."""

    fdef: ast.FunctionDef
    defaults: dict[str, Any] = field(default_factory=dict)  # parameter -> walker Value
    frame: Any = None


def as_function(node: ast.Lambda) -> ast.FunctionDef:
    """A lambda as the function it stands for: `lambda a: e` is `def <lambda>(a): return e`."""
    fdef = ast.FunctionDef(name="<lambda>", args=node.args, body=[ast.Return(value=node.body)],
                           decorator_list=[], returns=None, type_params=[])
    return ast.fix_missing_locations(ast.copy_location(fdef, node))


def rename_apart(fdef: ast.FunctionDef) -> ast.FunctionDef:
    """`fdef` with the parameters and assigned names of every function nested in it renamed to
    names used nowhere else (a copy; `fdef` itself where nothing is nested)."""
    if not any(isinstance(n, NESTED) and n is not fdef for n in ast.walk(fdef)):
        return fdef
    fdef = copy.deepcopy(fdef)
    taken = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name)} | {
        a.arg for a in ast.walk(fdef) if isinstance(a, ast.arg)}
    # Each function renames its own names in its body, where no function nested in it binds them
    # again (lexical scope); those nested ones then rename theirs.
    for node in [n for n in ast.walk(fdef) if isinstance(n, NESTED) and n is not fdef]:
        prefix = node.name.lstrip("_") if isinstance(node, ast.FunctionDef) else "lambda"
        renamed = {name: fresh_name(f"_{prefix}_{name}", taken) for name in sorted(own_names(node))}
        # What a call's keywords name (`f(t, by=2)`), beside the parameters' new names.
        node.args.written = [a.arg for a in node.args.args]
        for a in _params(node.args):
            a.arg = renamed[a.arg]
        Renamer(renamed).body(node)
    return fdef


def own_names(node: ast.FunctionDef | ast.Lambda) -> set[str]:
    """The names a function binds in its own scope: its parameters, what its body assigns and the
    functions it defines (not what functions nested in it bind)."""
    own = {a.arg for a in _params(node.args)}
    todo = list(node.body) if isinstance(node, ast.FunctionDef) else []
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            own.add(n.id)
        if isinstance(n, ast.FunctionDef):
            own.add(n.name)
            todo += [*n.args.defaults, *(d for d in n.args.kw_defaults if d is not None), *n.decorator_list]
        elif isinstance(n, ast.Lambda):
            todo += [*n.args.defaults, *(d for d in n.args.kw_defaults if d is not None)]
        else:
            todo += list(ast.iter_child_nodes(n))
    return own


def fresh_name(name: str, taken: set[str]) -> str:
    """`name`, or `name` numbered from 2 where it is taken; taken from now on."""
    fresh, n = name, 2
    while fresh in taken:
        fresh, n = f"{name}{n}", n + 1
    taken.add(fresh)
    return fresh


def written_names(args: ast.arguments) -> list[str]:
    """The names a nested function's parameters have in its source, which a call's keywords use."""
    return getattr(args, "written", None) or [a.arg for a in args.args]


def _params(args: ast.arguments) -> list[ast.arg]:
    return [*args.posonlyargs, *args.args, *([args.vararg] if args.vararg else []), *args.kwonlyargs,
            *([args.kwarg] if args.kwarg else [])]


class Renamer(ast.NodeTransformer):
    """Renames names inside a function's body; inside a function nested in it, only the names
    that one does not bind itself (its defaults and decorators are read in this body)."""

    def __init__(self, names: dict[str, str]):
        self.names = names

    def body(self, node: ast.FunctionDef | ast.Lambda) -> None:
        for part in (node.body if isinstance(node, ast.FunctionDef) else [node.body]):
            self.visit(part)

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.names.get(node.id, node.id)
        return node

    def _nested(self, node: ast.FunctionDef | ast.Lambda) -> ast.AST:
        if isinstance(node, ast.FunctionDef):  # its name is bound in this body
            node.name = self.names.get(node.name, node.name)
        for d in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None),
                  *getattr(node, "decorator_list", [])]:
            self.visit(d)
        own = own_names(node)
        Renamer({k: v for k, v in self.names.items() if k not in own}).body(node)
        return node

    visit_FunctionDef = _nested
    visit_Lambda = _nested
