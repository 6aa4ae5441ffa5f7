"""What is decided when a kernel compiles, checks and hints: `ct.static_eval`, `ct.static_assert`
(decided here, or by the launcher before it compiles), `ct.ensure_constant`, `ct.assert_` (Tile
IR's assert, on the GPU), and `ct.assume_divisible_by` (a hint that changes no result)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ... import ir
from ...rust_syntax import string_literal
from ..bindings import Value
from .registry import ct_op

if TYPE_CHECKING:
    from ..walker import Walker


@ct_op("static_assert")
def ct_static_assert(w: Walker, node: ast.Call, out, hint) -> Value:
    """Decided here where the condition is known, else checked by the launcher (it is made of
    ct.Constant values and tests of arrays' dtypes, which the launcher has before it compiles
    anything)."""
    args = w.call_args(node, ["condition", "message"], 1)
    cond = w.sem.as_condition(w.expr(args["condition"], out))
    try:
        message = str(w.eval_static(args["message"])) if "message" in args else "static_assert failed"
    except Exception:  # e.g. an f-string of the constants
        message = ast.unparse(args["message"])
    source = f"{w.state.src.display_file}:{node.lineno}: {ast.unparse(args['condition'])}"
    if cond.kind == "const":
        if not cond.py:
            raise w.error(node, f"ct.static_assert fails: {message}")
        return Value("const", py=None)
    if cond.kind != "scalar" or cond.dtype != "bool" or not w.state.compile_time(cond.expr):
        raise w.error(node, "ct.static_assert needs a condition made of ct.Constant values and dtypes")
    if not w.state.on_constants(cond.expr):
        # The launcher evaluates the condition: it has the constants, not what the kernel computes.
        raise w.error(node, "ct.static_assert of this condition is not supported yet: the launcher checks "
                            "comparisons of ct.Constant values and arithmetic Rust writes as Python does (+, -, *)")
    w.state.launch_check(cond.expr, f"ct.static_assert fails at {source} ({message})")
    return Value("const", py=None)


@ct_op("assert_")
def ct_assert(w: Walker, node: ast.Call, out, hint) -> Value:
    """Tile IR's assert (`cuda_tile_assert!`), as cuTile Python emits it: every element of a bool
    tile or scalar must be true, else the kernel stops with the message."""
    args = w.call_args(node, ["cond", "message"], 1)
    cond = w.expr(args["cond"], out)
    if cond.kind == "const" and isinstance(cond.py, bool):
        cond = Value("scalar", ir.ScalarType("bool"), ir.Lit("true" if cond.py else "false"))
    if cond.kind not in ("tile", "scalar") or cond.dtype != "bool":
        raise w.error(node, "ct.assert_ takes a bool tile or scalar (cuTile Python rejects any other)")
    if not isinstance(cond.expr, ir.Var):  # cutile's JIT types no expression inside the macro
        cond = w.sem.bind_temp(out, "condition", cond.type, cond.expr)
    message = w.eval_static(args["message"]) if "message" in args else None
    if not isinstance(message, (str, type(None))):
        raise w.error(node, "ct.assert_'s message must be a constant string")
    out.append(ir.Eval(ir.Call("cuda_tile_assert!", (cond.expr, string_literal(message or ""))), node.lineno))
    return Value("const", py=None)


@ct_op("ensure_constant")
def ct_ensure_constant(w: Walker, node: ast.Call, out, hint) -> Value:
    """The value itself, where cuTile Python knows it when it compiles (a literal, a module
    constant, ct.Constant parameters); anything else fails as it fails there."""
    args = w.call_args(node, ["value"], 1)
    value = w.expr(args["value"], out, hint)
    if value.kind not in ("const", "static") and not (value.kind == "scalar" and w.state.compile_time(value.expr)):
        raise w.error(node, "the argument of ct.ensure_constant is not a compile-time constant")
    return value


@ct_op("assume_divisible_by")
def ct_assume_divisible_by(w: Walker, node: ast.Call, out, hint) -> Value:
    """`x` itself: a hint that `x` divides by a constant lets cuTile Python's compiler vectorize
    more, and changes no result. The translation leaves it out (cutile's form is `unsafe`): the
    kernel computes the same, perhaps slower."""
    args = w.call_args(node, ["x", "divisor"], 2)
    x = w.expr(args["x"], out, hint)
    divisor = w.expr(args["divisor"], out)
    if divisor.kind != "const" or not isinstance(divisor.py, int) or isinstance(divisor.py, bool):
        raise w.error(node, "ct.assume_divisible_by needs a constant integer divisor")
    if divisor.py < 1:
        raise w.error(node, f"ct.assume_divisible_by requires a positive divisor, got {divisor.py}")
    if x.kind == "const" and isinstance(x.py, int) and not isinstance(x.py, bool):
        if x.py % divisor.py:
            raise w.error(node, f"{x.py} is not divisible by {divisor.py}: ct.assume_divisible_by contradicts a "
                                "known constant")
        return x
    if x.kind != "scalar" or x.dtype not in ("i32", "i64"):
        raise w.error(node, "ct.assume_divisible_by requires an integer scalar")
    return x


@ct_op("static_eval")
def ct_static_eval(w: Walker, node: ast.Call, out, hint) -> Value:
    """cuTile Python evaluates the expression as Python when it compiles. One of literals and
    module constants is evaluated here, as Python; one that reads the kernel's names (ct.Constant
    values, shapes, dtypes) is translated as written, which computes the same where it reads only
    what is known when compiling (the check against cuTile Python's front end compares types)."""
    args = w.call_args(node, ["expr"], 1)
    expr = args["expr"]
    if any(isinstance(n, ast.Name) and w.lookup(n.id) is not None for n in ast.walk(expr)):
        return w.expr(expr, out, hint)
    try:
        value = eval(compile(ast.Expression(expr), "<static_eval>", "eval"), dict(w.frame.globals))  # noqa: S307
    except Exception as e:  # noqa: BLE001 - cuTile Python fails to compile it the same way
        raise w.error(node, f"ct.static_eval fails: {type(e).__name__}: {e}") from None

    def as_value(v) -> Value:
        if isinstance(v, (bool, int, float)) or v is None:
            return Value("const", py=v)
        if isinstance(v, tuple):
            return Value("tuple", py=[as_value(item) for item in v])
        raise w.error(node, f"ct.static_eval of a {type(v).__name__} is not supported yet (numbers, bools and "
                            "tuples of them are)")

    return as_value(value)
