"""Spelling things in Rust: names that must not be keywords, and literals of a dtype."""

from __future__ import annotations

from . import ir
from ..dtypes import FLOAT_RANK

RUST_KEYWORDS = frozenset(
    "as break const continue crate else enum extern false fn for if impl in let loop match mod move mut "
    "pub ref return self Self static struct super trait true type unsafe use where while async await dyn "
    "abstract become box do final macro override priv typeof unsized virtual yield try".split()
)


def rust_name(name: str) -> str:
    """A Python name as a Rust identifier (`type` -> `type_`); a name a pass made ends in `@`, which
    no Python name can (`broke@` -> `broke`)."""
    name = name.removesuffix("@")
    return name + "_" if name in RUST_KEYWORDS else name


def float_literal(value: float, dtype: str = "f32", dense: bool = False) -> ir.Lit | ir.Binary:
    """A float as Rust. cutile's kernel compiler reads `f32::INFINITY` only as the value of a
    dense constant (`constant(v, shape)`); elsewhere infinities and NaN are spelled as the
    divisions that make them, which fold to constants (parenthesized only where Rust needs it)."""
    if dense and value in (float("inf"), float("-inf")):
        return ir.Lit(f"{dtype}::{'NEG_' if value < 0 else ''}INFINITY")
    if value != value:
        return ir.Binary("/", ir.Lit(f"0.0{dtype}"), ir.Lit(f"0.0{dtype}"))
    if value in (float("inf"), float("-inf")):
        return ir.Binary("/", ir.Lit(f"{'-' if value < 0 else ''}1.0{dtype}"), ir.Lit(f"0.0{dtype}"))
    text = repr(float(value))
    return ir.Lit(f"{text}{dtype}")


def constant_value(value: int | float, dtype: str) -> float:
    """The value cuTile Python gives the Python number `value` as a constant of float dtype `dtype`:
    a float literal is an f32 before it meets a dtype, so at f64 it is the f32 nearest it (0.1 is
    0.10000000149011612 there, 1e-50 is 0), as its Tile IR shows; an integer is exact."""
    if isinstance(value, float) and dtype == "f64":
        import numpy

        with numpy.errstate(over="ignore"):
            return float(numpy.float32(value))
    return float(value)


def runtime_literal(value: bool | int | float) -> tuple[str, ir.Lit | ir.Binary]:
    """A Python bool, int or float as the runtime scalar cuTile Python makes of it where it must be
    one (a loop carries it, a runtime condition chooses it): its dtype (bool, i32, f32) and literal."""
    if isinstance(value, bool):
        return "bool", ir.Lit("true" if value else "false")
    dtype = "i32" if isinstance(value, int) else "f32"
    return dtype, number_literal(value, dtype)


def number_literal(value: int | float, dtype: str) -> ir.Lit | ir.Binary:
    """A Python number as a Rust literal of a scalar dtype (`3i32`, `0.5f32`)."""
    return float_literal(constant_value(value, dtype), dtype) if dtype in FLOAT_RANK else int_literal(int(value), dtype)


def int_literal(value: int, dtype: str) -> ir.Lit | ir.Binary:
    """An integer as a Rust literal of `dtype` (`3i32`); the type's minimum as `-2147483647i32 - 1i32`,
    as `-2147483648i32` is the negation of a literal out of range (cutile's JIT fails to parse it);
    an i64 beyond the i32 range as a sum of products of i32-sized literals (below)."""
    if dtype == "i64" and not -2 ** 31 < value < 2 ** 31:
        # cutile 0.5.0's JIT reads every integer literal as an i32 (compile_expression.rs): a wider one
        # is built from 16-bit pieces, which tileiras folds back into one constant.
        high, middle, low = value >> 32, (value >> 16) & 0xFFFF, value & 0xFFFF
        top = ir.Binary("-", ir.Lit("-2147483647i64"), ir.Lit("1i64")) if high == -2 ** 31 else ir.Lit(f"{high}i64")
        piece = ir.Binary("*", ir.Binary("*", top, ir.Lit("65536i64")), ir.Lit("65536i64"))
        return ir.Binary("+", ir.Binary("+", piece, ir.Binary("*", ir.Lit(f"{middle}i64"), ir.Lit("65536i64"))),
                         ir.Lit(f"{low}i64"))
    if dtype[0] == "i" and value == -2 ** (int(dtype[1:]) - 1):
        return ir.Binary("-", ir.Lit(f"{value + 1}{dtype}"), ir.Lit(f"1{dtype}"))
    return ir.Lit(f"{value}{dtype}")



_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def string_literal(text: str) -> ir.Lit:
    """`text` as a Rust string literal (`"..."`), escaped as Rust reads it."""
    escaped = "".join(_ESCAPES.get(c) or (c if c.isprintable() else f"\\u{{{ord(c):x}}}") for c in text)
    return ir.Lit(f'"{escaped}"')
