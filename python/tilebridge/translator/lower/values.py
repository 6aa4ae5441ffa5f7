"""Values during analysis, dtype classes, and the small tables and folds the translator uses."""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any, get_args

from .. import ir

from ...dtypes import DEFAULT_ARRAY_DTYPES as DEFAULT_DTYPES, INDEX_ARRAY_DTYPES as INDEX_DTYPES, FLOAT_RANK as _FLOATS
from ...dtypes import of_object as dtype_name, stated as _cutile_dtype
from ..rust_syntax import float_literal, number_literal, rust_name


_PADDING = {
    "ZERO": "padding::Zero",  # as the plain partition pads
    "UNDETERMINED": None,
    "NEG_INF": "padding::NegInf",
    "POS_INF": "padding::PosInf",
    "NAN": "padding::Nan",
    "NEG_ZERO": "padding::NegZero",
}


# Float math with one operand and no modes, same name in cuTile Python and cutile.
_UNARY_MATH = {"log", "log2", "sin", "cos", "tan", "sinh", "cosh", "tanh", "floor", "ceil"}


_REDUCTIONS = {"sum": "reduce_sum", "max": "reduce_max", "min": "reduce_min", "prod": "reduce_prod"}


_RUST_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "/", ast.BitAnd: "&",
             ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}


def _a(noun: str) -> str:
    """`noun` with its indefinite article, for messages: "an array", "a tile"."""
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


@dataclass
class Val:
    """What a Python expression evaluates to at translation time."""

    kind: str  # tile | scalar | const | array | dtype | static | tuple
    type: ir.Type | None = None
    expr: ir.Expr | None = None
    py: Any = None  # const: the Python value; dtype: its name; static: the object; tuple: [Val]
    dim: ir.Dim | None = None  # a scalar that may stand in a tile shape (a Constant parameter)
    bid_axis: int | None = None  # this scalar is exactly ct.bid(axis)
    nonneg: bool = False  # a scalar provably >= 0 (block ids, counts, positive constants)
    iota_offset: "Val | None" = None  # a 1-D tile equal to ct.arange(n) + this scalar or constant
    defn: "ir.Expr | None" = None  # for a scalar bound once to a name: the expression it names

    @property
    def shape(self) -> tuple[ir.Dim, ...]:
        assert isinstance(self.type, ir.TileType)
        return self.type.shape

    @property
    def dtype(self) -> str:
        assert self.type is not None
        return self.type.dtype


@dataclass
class _Binding:
    val: Val
    let: ir.Let | None
    depth: int


class _BranchScope(dict):
    """The names one branch of a runtime `if` binds (a plain dict: the kernel's, a loop body's)."""


@dataclass
class _ArrayUse:
    loads: int = 0
    stores: int = 0
    other: int = 0


class _DTypeUnion:
    """Union-find over dtype classes (``$a``) of array parameters."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, d: str) -> str:
        while d.startswith("$") and self.parent.get(d, d) != d:
            d = self.parent[d]
        return d

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


class _Resolver(dict):
    """Maps every dtype class variable to its Rust type parameter."""

    def __init__(self, names: dict[str, str], union: _DTypeUnion):
        super().__init__(names)
        self.union = union

    def __missing__(self, key: str) -> str:
        if key.startswith("$"):
            root = self.union.find(key)
            return self[root] if root != key else key
        return key


def _times(expr: ir.Expr, n: ir.Dim) -> ir.Expr | None:
    """`k` where `expr` is `k * n` or `n * k` (n a tile dimension), else None."""
    size = ir.Var(rust_name(n)) if isinstance(n, str) else ir.Lit(f"{n}i32")
    if expr is None:
        return None
    if isinstance(expr, ir.Binary) and expr.op == "*":
        if expr.rhs == size:
            return expr.lhs
        if expr.lhs == size:
            return expr.rhs
    return None


_COMPARE = {ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
            ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b}


def _fold(op: ast.operator, a: Any, b: Any) -> Any:
    """`a op b` on two translation-time numbers, as Python computes it."""
    fold = {ast.Mod: operator.mod, ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
            ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.BitAnd: operator.and_,
            ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift,
            ast.RShift: operator.rshift, ast.Pow: operator.pow}.get(type(op))
    if fold is None:
        raise TypeError(op)
    return fold(a, b)


def _show(t: ir.Type | None) -> str:
    if isinstance(t, ir.TileType):
        return f"tile {t.dtype}{list(t.shape)}"
    if isinstance(t, ir.ScalarType):
        return t.dtype
    return "?"


def _resolve_type(t: ir.Type | None, names: dict[str, str]) -> ir.Type | None:
    if isinstance(t, (ir.TileType, ir.PartitionType, ir.ScalarType, ir.PointerTileType, ir.TensorType)):
        return replace(t, dtype=names[t.dtype])
    if isinstance(t, ir.LoadedType):
        return ir.LoadedType(replace(t.tile, dtype=names[t.tile.dtype]))
    return t


def _resolve_expr(e: Any, names: dict[str, str]) -> Any:
    """`e` with the dtype classes its type constants name resolved to Rust types."""
    if isinstance(e, ir.TypeConst):
        return replace(e, dtype=names[e.dtype])
    if isinstance(e, tuple):
        return tuple(_resolve_expr(x, names) for x in e)
    if is_dataclass(e) and not isinstance(e, type):
        changed = {f.name: _resolve_expr(getattr(e, f.name), names) for f in fields(e)
                   if isinstance(getattr(e, f.name), (tuple, *get_args(ir.Expr)))}
        return replace(e, **changed) if changed else e
    return e


def _resolve_stmt(s: ir.Stmt, names: dict[str, str]) -> ir.Stmt:
    if isinstance(s, ir.Let):
        s.type = _resolve_type(s.type, names)
        s.value = _resolve_expr(s.value, names)
    elif isinstance(s, (ir.For, ir.While)):
        s.body = [_resolve_stmt(b, names) for b in s.body]
    elif isinstance(s, ir.IfElse):
        s.then = [_resolve_stmt(b, names) for b in s.then]
        s.other = [_resolve_stmt(b, names) for b in s.other]
    return s
