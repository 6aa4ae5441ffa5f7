"""Dtype classes: the arrays whose dtypes a kernel ties together share one Rust type parameter.
Each array starts as its own class (`$name`); operations that make two arrays' dtypes meet unite
their classes, and the classes become `E0`, `E1`, ... in the Rust when the kernel is lowered."""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from typing import Any, get_args

from .. import ir


class DTypeUnion:
    """Union-find over dtype classes (``$a``) of array parameters, and promotions of them (``^n``)
    that the kernel computes in one dtype (see `Promotions.keep_product`)."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, d: str) -> str:
        while d[:1] in ("$", "^") and self.parent.get(d, d) != d:
            d = self.parent[d]
        return d

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


class DTypeResolver(dict):
    """Maps every dtype class variable to its Rust type parameter."""

    def __init__(self, names: dict[str, str], union: DTypeUnion):
        super().__init__(names)
        self.union = union

    def __missing__(self, key: str) -> str:
        if key.startswith("$"):
            root = self.union.find(key)
            return self[root] if root != key else key
        return key


def resolve_type(t: ir.Type | None, names: dict[str, str]) -> ir.Type | None:
    if isinstance(t, (ir.TileType, ir.PartitionType, ir.ScalarType, ir.PointerTileType, ir.TensorType)):
        return replace(t, dtype=names[t.dtype])
    if isinstance(t, ir.LoadedType):
        return ir.LoadedType(replace(t.tile, dtype=names[t.tile.dtype]))
    return t


def resolve_expr(e: Any, names: dict[str, str]) -> Any:
    """`e` with the dtype classes its type constants name resolved to Rust types."""
    if isinstance(e, ir.TypeConst):
        return replace(e, dtype=names[e.dtype])
    if isinstance(e, tuple):
        return tuple(resolve_expr(x, names) for x in e)
    if is_dataclass(e) and not isinstance(e, type):
        changed = {f.name: resolve_expr(getattr(e, f.name), names) for f in fields(e)
                   if isinstance(getattr(e, f.name), (tuple, *get_args(ir.Expr)))}
        return replace(e, **changed) if changed else e
    return e


def resolve_stmt(s: ir.Stmt, names: dict[str, str]) -> ir.Stmt:
    if isinstance(s, ir.Let):
        s.type = resolve_type(s.type, names)
        s.value = resolve_expr(s.value, names)
    elif isinstance(s, (ir.For, ir.TileLoop, ir.While)):
        s.body = [resolve_stmt(b, names) for b in s.body]
    elif isinstance(s, ir.IfElse):
        s.then = [resolve_stmt(b, names) for b in s.then]
        s.other = [resolve_stmt(b, names) for b in s.other]
    return s
