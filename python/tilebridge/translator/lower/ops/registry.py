"""The op table: each public `cuda.tile` name the translator lowers, with its handler.

A handler takes the walker, the call's AST node, the statement list to append to and a name hint,
and returns the call's `Value`. Adding an operation is one `@ct_op("name")` function; a name with
no handler is refused where it is called (`Walker.call`).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable

from ... import ir
from ..bindings import Value

if TYPE_CHECKING:
    from ..walker import Walker

Handler = Callable[["Walker", ast.Call, list[ir.Stmt], str], Value]

OPS: dict[str, Handler] = {}


def register(name: str, handler: Handler) -> None:
    if name in OPS:
        raise ValueError(f"ct.{name} has two handlers")
    OPS[name] = handler


def ct_op(name: str) -> Callable[[Handler], Handler]:
    """Registers the decorated function as the handler of `ct.<name>`."""
    def decorate(handler: Handler) -> Handler:
        register(name, handler)
        return handler
    return decorate
