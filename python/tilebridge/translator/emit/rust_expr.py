"""IR types and expressions as Rust text, parenthesized only where Rust's precedence needs it."""

from __future__ import annotations

from .. import ir

# Rust's binary operator precedence, tightest first; receivers of methods, fields and indexing bind tighter.
PRECEDENCE = {"*": 9, "/": 9, "%": 9, "+": 8, "-": 8, "<<": 7, ">>": 7, "&": 6, "^": 5, "|": 4,
              "<": 3, ">": 3, "<=": 3, ">=": 3, "==": 3, "!=": 3, "&&": 2, "||": 1}
POSTFIX = 10


def dims(shape: tuple[ir.Dim, ...]) -> str:
    return ", ".join(str(d) for d in shape)


def rust_type(t: ir.Type) -> str:
    if isinstance(t, ir.TileType):
        return f"Tile<{t.dtype}, {{ [{dims(t.shape)}] }}>"
    if isinstance(t, ir.PartitionType):
        return f"{'PartitionMut' if t.mutable else 'Partition'}<{t.dtype}, {{ [{dims(t.shape)}] }}>"
    if isinstance(t, ir.PointerTileType):
        return f"PointerTile<*{'mut' if t.mutable else 'const'} {t.dtype}, {{ [{dims(t.shape)}] }}>"
    if isinstance(t, ir.ExtentsType):
        return f"{t.kind}<{{ [{dims(t.dims)}] }}>"
    if isinstance(t, ir.TensorType):
        return f"Tensor<{t.dtype}, {{ [{dims(t.shape)}] }}>"
    if isinstance(t, ir.LoadedType):
        return f"({rust_type(t.tile)}, Token)"
    return t.dtype


def rust_expr(e: ir.Expr, parent_prec: int = 0, right: bool = False) -> str:
    if isinstance(e, (ir.Lit,)):
        return e.text
    if isinstance(e, ir.Var):
        return e.name
    if isinstance(e, ir.Shape):
        return f"const_shape![{dims(e.dims)}]"
    if isinstance(e, ir.Call):
        return f"{e.func}({', '.join(rust_expr(a) for a in e.args)})"
    if isinstance(e, ir.Method):
        return f"{rust_expr(e.recv, POSTFIX)}.{e.name}({', '.join(rust_expr(a) for a in e.args)})"
    if isinstance(e, ir.Field):
        return f"{rust_expr(e.recv, POSTFIX)}.{e.name}"
    if isinstance(e, ir.Binary):
        prec = PRECEDENCE[e.op]
        # Rust comparisons do not chain: a comparison operand of a comparison gets parentheses.
        child = prec + 1 if prec == PRECEDENCE["=="] else prec
        text = f"{rust_expr(e.lhs, child)} {e.op} {rust_expr(e.rhs, child, right=True)}"
        return f"({text})" if prec < parent_prec or (right and prec == parent_prec) else text
    if isinstance(e, ir.Subscript):
        return f"{rust_expr(e.recv, POSTFIX)}[{e.index}]"
    if isinstance(e, ir.If):
        text = f"if {rust_expr(e.cond)} {{ {rust_expr(e.then)} }} else {{ {rust_expr(e.other)} }}"
        return f"({text})" if parent_prec else text
    if isinstance(e, ir.Index):
        return f"[{', '.join(rust_expr(i) for i in e.items)}]"
    if isinstance(e, ir.Ref):
        return f"&{rust_expr(e.expr, POSTFIX)}"
    if isinstance(e, ir.Unsafe):
        return f"unsafe {{ {rust_expr(e.expr)} }}"
    if isinstance(e, ir.TypeConst):
        return f"{e.dtype}::{e.name}"
    raise TypeError(e)
