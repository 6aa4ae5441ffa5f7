"""What the source's calls name and pass, read without running them: a name or attribute chain
looked up among a module's names (`ct.RoundingMode.APPROX`, a helper), and a call's arguments
bound to the parameters of the function it calls, as Python binds them. The walker and the
`with` rewrite (`context_managers`) both read calls so."""

from __future__ import annotations

import ast
import builtins
from typing import Any, Callable

from ..errors import TranslationError

ErrorAt = Callable[[ast.AST, str], TranslationError]


def static_value(node: ast.expr, globals_: dict[str, Any], error: ErrorAt) -> Any:
    """The object a name, attribute, subscript or constant chain names among `globals_` (then
    Python's builtins)."""
    if isinstance(node, ast.Name):
        if node.id in globals_:
            return globals_[node.id]
        if hasattr(builtins, node.id):
            return getattr(builtins, node.id)
        raise error(node, "unknown name")
    if isinstance(node, ast.Attribute):
        base = static_value(node.value, globals_, error)
        try:
            return getattr(base, node.attr)
        except AttributeError:
            raise error(node, "unknown attribute") from None
    if isinstance(node, ast.Subscript):
        return static_value(node.value, globals_, error)[static_value(node.slice, globals_, error)]
    if isinstance(node, ast.Constant):
        return node.value
    raise error(node, "expected a name")


def bind_arguments(call: ast.Call, params: list[str], required: int, error: ErrorAt) -> dict[str, ast.expr]:
    """The call's argument expressions by parameter name, as Python binds them: positional ones
    first, then keywords; the first `required` parameters must be given. Refused as Python
    refuses them: too many, an unknown or repeated keyword, a missing one; and `*`/`**` arguments,
    which the translation does not unpack."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise error(call, "`*` and `**` arguments are not supported yet")
    if len(call.args) > len(params):
        raise error(call, f"too many arguments: {len(call.args)} given, {len(params)} taken")
    bound = dict(zip(params, call.args))
    for kw in call.keywords:
        if kw.arg not in params:
            raise error(call, f"unsupported keyword argument '{kw.arg}'")
        if kw.arg in bound:
            raise error(call, f"argument '{kw.arg}' given twice")
        bound[kw.arg] = kw.value
    for n in params[:required]:
        if n not in bound:
            raise error(call, f"missing argument '{n}'")
    return bound
