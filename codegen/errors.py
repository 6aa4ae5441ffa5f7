"""The one error the translator raises."""

from __future__ import annotations

import ast


class TranslationError(Exception):
    """A Python construct that tilebridge cannot translate, with where it is.

    `location` is ``file:line:column``; `construct` names what was found there.
    """

    def __init__(self, message: str, *, location: str | None = None, construct: str | None = None):
        self.location = location
        self.construct = construct
        self.reason = message
        super().__init__(f"{location}: {message}" if location else message)

    @classmethod
    def at(cls, filename: str, node: ast.AST, message: str) -> "TranslationError":
        line = getattr(node, "lineno", 0)
        col = getattr(node, "col_offset", -1) + 1
        if isinstance(node, (ast.expr, ast.stmt, ast.arg)):
            construct = ast.unparse(node).splitlines()[0]
        else:
            construct = type(node).__name__
        if len(construct) > 60:
            construct = construct[:57] + "..."
        return cls(f"{message}: `{construct}`", location=f"{filename}:{line}:{col}", construct=construct)
