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
# The operations that only move their operands' values (a load, a store, a reshape, an `astype`, an
# mma's operands): the arrays whose values nothing else takes are "moved", and their launchers take
# any dtype (`KernelState.default_dtypes`); every other operation computes with its operands.
MOVES: set[str] = set()


def register(name: str, handler: Handler, moves: bool = False) -> None:
    if name in OPS:
        raise ValueError(f"ct.{name} has two handlers")
    OPS[name] = handler
    if moves:
        MOVES.add(name)


def ct_op(name: str, moves: bool = False) -> Callable[[Handler], Handler]:
    """Registers the decorated function as the handler of `ct.<name>`; `moves`: the operation only
    moves its operands' values, whatever their dtype (see `MOVES`)."""
    def decorate(handler: Handler) -> Handler:
        register(name, handler, moves)
        return handler
    return decorate
