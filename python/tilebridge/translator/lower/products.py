"""Matrix products (`ct.mma`, `ct.matmul`, `@`) as cuTile Python types and lowers them
(`_ir/ops.py`: `_matmul_broadcast_shape`, `mma_impl`, `matmul_impl`): a 1-D operand of a matmul
taken as a row (on the left) or a column (on the right) and squeezed back out of the result, the
dimensions before the last two broadcast, one Tile IR mma. Rank 2 is cutile's `mma`; rank 3, a
batch of products, Tile IR's `mmaf` (floats) or `mmai` (8-bit integers, signed or unsigned as
the operands are), which cutile declares for up to three dimensions."""

from __future__ import annotations

import ast

from ... import dtypes
from ...errors import TranslationError
from .. import ir
from .bindings import Value
from .state import KernelState

Shape = tuple[ir.Dim, ...]
FP8 = {"f8e4m3fn", "f8e5m2"}  # the operands a fast-accumulating mma takes


class Products:
    """The matrix products of one kernel's lowering: a part of `Semantics`, whose `bind_temp`,
    `broadcast`, `reshaped`, `convert`, `splat`, `named`, `common_dtype`, `broadcast_shape`,
    `float_only`, `possible_dtypes`, `derive` and `error` they use."""

    state: KernelState

    def product_shapes(self, node: ast.AST, x: Shape, y: Shape) -> tuple[Shape, Shape, Shape]:
        """The operands' shapes once broadcast (each at least 2-D) and the product's, as cuTile
        Python's `_matmul_broadcast_shape` makes them."""
        x = (1, *x) if len(x) == 1 else x
        y = (*y, 1) if len(y) == 1 else y
        if self.dim_value(x[-1]) != self.dim_value(y[-2]):
            raise self.error(node, f"matrix product shapes do not match: {x} x {y}")
        try:
            batch = self.broadcast_shape(x[:-2], y[:-2], node) if len(x) > 2 or len(y) > 2 else ()
        except TranslationError:
            raise self.error(node, f"matrix product shapes do not match: {x} x {y}") from None
        if len(batch) > 1:
            raise self.error(node, "a matrix product of more than three dimensions: Tile IR's mma takes two or "
                                   "three")
        return (*batch, *x[-2:]), (*batch, *y[-2:]), (*batch, x[-2], y[-1])

    def mma_call(self, node: ast.AST, a: Value, b: Value, acc: Value, fast_acc: bool = False) -> ir.Expr:
        """The mma of operands and an accumulator of matching shapes; with `fast_acc`, of fp8
        operands, Tile IR's fast accumulation (`mmaf` with its flag)."""
        if fast_acc:
            return ir.Unsafe(ir.Call("mmaf_with_fast_acc", (a.expr, b.expr, acc.expr, ir.Lit("fast_acc::Enabled"))),
                             "the operands are fp8, which fast accumulation takes: the launcher takes no other "
                             "dtype for them")
        if len(acc.shape) == 2:
            return ir.Call("mma", (a.expr, b.expr, acc.expr))
        if self.float_only(a.dtype):
            return ir.Call("mmaf", (a.expr, b.expr, acc.expr))
        operand = {"i8": "Signed", "u8": "Unsigned"}
        kinds = {operand.get(d) for d in self.possible_dtypes(self.state.union.find(a.dtype))}
        if len(kinds) != 1 or None in kinds:
            raise self.error(node, "a batched (3-D) matrix product of tiles that may be floats or integers here, "
                                   "which Tile IR multiplies by different operations: state the dtypes (--dtype)")
        sign = ir.Lit(f"signedness::{kinds.pop()}")
        return ir.Call("mmai", (a.expr, b.expr, acc.expr, sign, sign))

    def mma(self, node: ast.AST, a: Value, b: Value, acc: Value, out: list[ir.Stmt], hint: str,
            fast_acc: bool = False) -> Value:
        """`ct.mma(a, b, acc)`: operands of at least two dimensions, broadcast along the others;
        the accumulator of the product's shape. `use_fast_acc=True` takes fp8 operands only, as
        cuTile Python does: arrays of their dtype take only fp8 at launch."""
        if len(a.shape) < 2 or len(b.shape) < 2:
            raise self.error(node, f"ct.mma takes operands of at least two dimensions, not {a.shape} x {b.shape}")
        x, y, shape = self.product_shapes(node, a.shape, b.shape)
        if tuple(map(self.dim_value, acc.shape)) != tuple(map(self.dim_value, shape)):
            raise self.error(node, f"ct.mma shapes do not match: {a.shape} x {b.shape} -> {acc.shape}")
        dtype = self.common_dtype(a.dtype, b.dtype, node, pin=True)
        if fast_acc:
            self.fp8_only(node, dtype)
            self.state.unsafe("multiplies with fast accumulation (`ct.mma(use_fast_acc=True)`)",
                              "the operands are fp8", checked=True)
        # the identity, but where an array's dtype is pinned
        a, b = (self.broadcast(self.convert(v, dtype, out, hint), s, out, hint) for v, s in ((a, x), (b, y)))
        self.state.observe(node, "@mma", acc.type)
        return Value("tile", acc.type, self.mma_call(node, a, b, acc, fast_acc))

    def fp8_only(self, node: ast.AST, dtype: str) -> None:
        """Operands of `dtype` for a fast-accumulating mma: fp8 at every launch (the arrays of its
        class take only fp8), else refused as cuTile Python refuses them."""
        if self.state.union.find(dtype).startswith("$"):
            self.state.narrow(dtype, lambda d: d in FP8)
        can_be = self.state.at_launch(dtype)
        if not self.state.survey and not (can_be and can_be <= FP8):
            raise self.error(node, "ct.mma(use_fast_acc=True) takes fp8 operands (float8_e4m3fn or float8_e5m2), as "
                                   f"cuTile Python does; these can be {', '.join(sorted(can_be)) or 'no dtype'} "
                                   "(state the arrays' dtypes)")

    def matmul(self, node: ast.AST, a: Value, b: Value, out: list[ir.Stmt], hint: str) -> Value:
        """`ct.matmul(a, b)` or `a @ b`, as cuTile Python lowers it: an mma into a zero accumulator
        of `matmul_accumulator`'s dtype, cast back to the operands' common dtype, the dimensions a
        1-D operand gained taken back out."""
        x, y, shape = self.product_shapes(node, a.shape, b.shape)
        result = shape[:-2] + (() if len(a.shape) == 1 else shape[-2:-1]) + (() if len(b.shape) == 1 else shape[-1:])
        dtype = self.common_dtype(a.dtype, b.dtype, node, promote=True)
        a, b = self.convert(a, dtype, out, hint), self.convert(b, dtype, out, hint)
        if len(b.shape) == 1:  # a column, reshaped before any batch is broadcast (`matmul_impl`)
            b = self.reshaped(b, (b.shape[0], 1), out, hint)
        a, b = self.broadcast(a, x, out, hint), self.broadcast(b, y, out, hint)
        acc_dtype = self.matmul_accumulator(dtype, node)
        zero = self.named(self.splat(Value("const", py=0), acc_dtype, shape, out, hint, node), out, f"{hint}_acc")
        product = self.bind_temp(out, hint, zero.type, self.mma_call(node, a, b, zero))
        self.state.observe(node, "@mma", product.type)
        product = self.convert(product, dtype, out, hint)
        return product if result == shape else self.reshaped(product, result, out, hint)

    def matmul_accumulator(self, dtype: str, node: ast.AST) -> str:
        """The accumulator cuTile Python's matmul takes for operands of `dtype` (f16 for f16 and fp8,
        f32 for bf16, f32 and tf32, f64, i32 for 8-bit integers: `dtypes.DType.mma_accumulator`). For
        an array's dtype, a dtype the launcher binds per dispatched dtype (`derive`); where no one
        choice between two accumulators tells them apart, the dtypes must be stated."""
        root = self.state.union.find(dtype)
        if not self.generic(root):
            acc = dtypes.mma_accumulator(root)
            if acc is None:
                raise self.error(node, f"ct.matmul of {root} tiles: cuTile Python has no mma for them")
            return acc
        classes = self.classes_of(root)
        members = [a for a in self.state.arrays if self.state.union.find(f"${a}") in classes]
        allowed = self.possible_dtypes(root)
        accs = {d: dtypes.mma_accumulator(d) for d in allowed}
        kinds = set(accs.values())
        if len(kinds) == 1 and None not in kinds:
            return kinds.pop()
        if len(kinds) == 2 and None not in kinds:
            for acc in sorted(kinds):
                these = [d for d, a in accs.items() if a == acc]
                if len(these) == 1:
                    return self.derive(root, these[0], acc, (kinds - {acc}).pop())
        raise self.error(node, f"ct.matmul of tiles of {', '.join(members)}, which may be {', '.join(allowed)}: "
                               "cuTile Python accumulates these differently; state the dtypes (tb.build(..., "
                               "dtypes=...), --dtype)")
