"""ct.printf, ct.print and the builtin print: Tile IR's print, through cutile's `cuda_tile_print!`.

cutile 0.5.0's macro takes a string with a `{}` per argument and writes each as `%` and the first
letter of the argument's element type: `%f` for floats, `%i` for signed integers. So what cuTile
Python prints with `%d`/`%i` (integers) and `%f` (floats) prints the same here; bf16 (whose letter
is `b`), bool and unsigned 8- and 16-bit integers are printed as the f32 or i32 that holds their
value. A specifier with a flag, a width, a precision or a length, another conversion (`%x`, `%e`,
`%g`, ...), and 64-bit or unsigned 32-bit integers are refused with the reason."""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from ... import ir
from ...rust_syntax import string_literal
from ..bindings import Value
from ..integers import HELD_BY_I32
from .registry import ct_op

if TYPE_CHECKING:
    from ..walker import Walker

# The dtypes cutile's macro prints as cuTile Python does, and the conversions that print them.
_PRINTED = {"i8": "int", "i16": "int", "i32": "int", "f16": "float", "f32": "float", "f64": "float"}
_CONVERSIONS = {"d": "int", "i": "int", "f": "float"}
# C's %[flags][width][.precision][length]specifier, as cuTile Python reads a printf format.
_SPECIFIER = re.compile(r"%([0 #+-])?([0-9]+)?(\.[0-9]+)?(hh|h|ll|l)?([diuoxXeEfFgGaAcspn])")


@ct_op("printf")
def ct_printf(w: Walker, node: ast.Call, out, hint) -> Value:
    """`ct.printf(format, *tiles)`, each specifier checked against its argument's dtype."""
    if node.keywords or not node.args:
        raise w.error(node, "ct.printf takes a format string and the tiles it prints")
    fmt = _constant_string(w, node.args[0], "ct.printf's format")
    values = [_printed(w, a, out) for a in node.args[1:]]
    pieces, pos, taken = [], 0, 0
    while (start := fmt.find("%", pos)) != -1:
        pieces.append(_text(w, node, fmt[pos:start], escaped=True))
        if fmt.startswith("%%", start):
            pieces.append("%%")
            pos = start + 2
            continue
        m = _SPECIFIER.match(fmt, start)
        if m is None:
            raise w.error(node, "ct.printf: invalid format string (cuTile Python rejects it)")
        if taken == len(values):
            raise w.error(node, "ct.printf: not enough arguments for the format string")
        _check_conversion(w, node, m, values[taken])
        pieces.append("{}")
        taken, pos = taken + 1, m.end()
    pieces.append(_text(w, node, fmt[pos:], escaped=True))
    if taken != len(values):
        raise w.error(node, "ct.printf: too many arguments for the format string")
    return _print(w, node, "".join(pieces), [v for v, _ in values], out)


@ct_op("print")
def ct_print(w: Walker, node: ast.Call, out, hint) -> Value:
    """`ct.print(*args, sep=" ", end="\\n")` (the builtin print too): strings, f-strings and tiles,
    each tile as cuTile Python infers its format (`%d` for integers, `%f` for floats)."""
    options = {k.arg: _constant_string(w, k.value, f"print's {k.arg}") for k in node.keywords if k.arg in ("sep", "end")}
    if len(options) != len(node.keywords):
        raise w.error(node, "print takes sep= and end= here")
    pieces: list[str] = []
    values: list[ir.Expr] = []

    def add(arg: ast.expr) -> None:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            pieces.append(_text(w, node, arg.value))
        elif isinstance(arg, ast.JoinedStr):
            for part in arg.values:
                if isinstance(part, ast.FormattedValue):
                    if part.format_spec is not None or part.conversion != -1:
                        raise w.error(part, "print: a format spec or conversion in an f-string is not supported yet "
                                            "(cutile's print writes %i or %f)")
                    add(part.value)
                else:
                    add(part)
        else:
            val = w.expr(arg, out)
            if val.kind in ("const", "static") and isinstance(val.py, (bool, int, float, str)):
                pieces.append(_text(w, node, str(val.py)))  # a compile-time value, as Python's str writes it
                return
            expr, _ = _printed(w, arg, out, val)
            pieces.append("{}")
            values.append(expr)

    for i, arg in enumerate(node.args):
        if i:
            pieces.append(_text(w, node, options.get("sep", " ")))
        add(arg)
    pieces.append(_text(w, node, options.get("end", "\n")))
    return _print(w, node, "".join(pieces), values, out)


def _print(w: Walker, node: ast.Call, fmt: str, values: list[ir.Expr], out: list[ir.Stmt]) -> Value:
    if fmt.count("{}") != len(values):  # text meeting text across a value or a separator: `{` then `}`
        raise w.error(node, "print: the text `{}` is not supported (cutile's print macro reads it as an argument)")
    out.append(ir.Eval(ir.Call("cuda_tile_print!", (string_literal(fmt), *values)), node.lineno))
    return Value("const", py=None)


def _text(w: Walker, node: ast.AST, text: str, escaped: bool = False) -> str:
    """Literal text of the format: `%` doubled where cuTile Python doubles it (print's text; a
    printf format's is already C's), and no `{}`, which cutile's macro would take for an argument."""
    if "{}" in text:
        raise w.error(node, "print: the text `{}` is not supported (cutile's print macro reads it as an argument)")
    return text if escaped else text.replace("%", "%%")


def _constant_string(w: Walker, node: ast.expr, what: str) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    try:
        value = w.eval_static(node)
    except Exception:
        value = None
    if not isinstance(value, str):
        raise w.error(node, f"{what} must be a constant string")
    return value


def _printed(w: Walker, node: ast.expr, out: list[ir.Stmt], val: Value | None = None) -> tuple[ir.Expr, str]:
    """An argument of print: a tile or a scalar under a name (cutile's macro types no expression),
    with "int" or "float", the conversion that prints it."""
    val = w.expr(node, out) if val is None else val
    if val.kind not in ("tile", "scalar"):
        raise w.error(node, "print takes tiles, scalars, strings and constants")
    can_be = w.state.at_launch(val.dtype)
    kinds = {_PRINTED.get(d) for d in can_be}
    if None in kinds or len(kinds) != 1:
        # Printed as the wider dtype that holds each value exactly: the same digits.
        wider = "f32" if can_be <= {"f16", "bf16", "f32"} else "i32" if can_be <= HELD_BY_I32 else None
        if not can_be or wider is None:
            raise w.error(node, f"print of {' or '.join(sorted(can_be))} is not supported yet (cutile's print writes "
                                "%i or %f: i64, u32, u64 and mixes of floats and integers are not)")
        val, kinds = w.sem.convert(val, wider, out, "printed"), {_PRINTED[wider]}
    if not isinstance(val.expr, ir.Var):
        val = w.sem.bind_temp(out, "printed", val.type, val.expr)
    return val.expr, kinds.pop()


def _check_conversion(w: Walker, node: ast.Call, m: re.Match, value: tuple[ir.Expr, str]) -> None:
    flags, width, precision, length, conversion = m.groups()
    kind = _CONVERSIONS.get(conversion)
    if flags or width or precision or length or kind is None:
        raise w.error(node, f"ct.printf's `{m.group(0)}` is not supported yet (cutile's print writes a plain %i or "
                            "%f: %d, %i and %f are)")
    if kind != value[1]:
        raise w.error(node, f"ct.printf's `{m.group(0)}` prints {'an integer' if kind == 'int' else 'a float'}, "
                            "not this argument (cuTile Python rejects it)")

