"""Tile and scalar operations of cuTile Python (`ct.exp`, `ct.sum`, `ct.mma`, ...) as cutile calls."""

from __future__ import annotations

import ast

from .. import ir
from .values import _FLOATS, _UNARY_MATH, _REDUCTIONS, float_literal, rust_name, Val, _Binding, _fold


# cuTile Python's Tile methods that are the ct function of the same name with the tile first.
_TILE_METHODS = ("permute", "transpose", "extract")


class TileOps:
    """The `ct.*` operations half of `Translator` (a mixin: it uses the translator's state)."""

    def _rounding(self, node: ast.expr | None, out) -> str | None:
        """The cutile rounding marker for a ct.RoundingMode, or None for the default."""
        if node is None:
            return None
        val = self.expr(node, out)
        if val.kind == "const" and val.py is None:
            return None
        mode = getattr(val.py, "value", None) if val.kind == "static" else None
        names = {"nearest_even": "NearestEven", "zero": "Zero", "negative_inf": "NegativeInf",
                 "positive_inf": "PositiveInf", "nearest_away": "NearestAway", "full": "Full", "approx": "Approx",
                 "nearest_int_to_zero": "NearestIntToZero"}
        if mode not in names:
            raise self.error(node, "expected a ct.RoundingMode")
        return f"rounding::{names[mode]}"

    def _arith(self, node: ast.Call, out, hint: str, op: str, func: str) -> Val:
        """ct.add/sub/mul/truediv with optional rounding_mode and flush_to_zero."""
        args = self._args(node, ["x", "y", "rounding_mode", "flush_to_zero"], 2)
        lhs, rhs = self.expr(args["x"], out, hint), self.expr(args["y"], out, hint)
        rounding = self._rounding(args.get("rounding_mode"), out)
        ftz = self._ftz(args.get("flush_to_zero"), out)
        if lhs.kind == "const" and rhs.kind == "const":
            return Val("const", py=_fold({"+": ast.Add(), "-": ast.Sub(), "*": ast.Mult(), "/": ast.Div()}[op],
                                         lhs.py, rhs.py))
        if "tile" not in (lhs.kind, rhs.kind):
            if rounding is not None or ftz != "ftz::Disabled":
                raise self.error(node, "rounding modes on scalars are not supported yet")
            return self._scalar_binop(node, op, lhs, rhs)
        type_, a, b = self._tile_operands(node, lhs, rhs, out, hint)
        if self._int_tile(type_.dtype):
            if rounding is not None or ftz != "ftz::Disabled" or op == "/":
                raise self.error(node, "rounding modes and true division apply to float tiles")
            return Val("tile", type_, ir.Binary(op, a, b))
        if rounding is None and ftz == "ftz::Disabled":
            return Val("tile", type_, ir.Binary(op, a, b))
        # Bound to a typed let: the JIT infers these intrinsics' types poorly inside larger expressions.
        return self._bind_temp(out, hint, type_,
                               ir.Call(func, (a, b, ir.Lit(rounding or "rounding::NearestEven"), ir.Lit(ftz))))

    def _ct_add(self, node, out, hint):
        return self._arith(node, out, hint, "+", "addf")

    def _ct_sub(self, node, out, hint):
        return self._arith(node, out, hint, "-", "subf")

    def _ct_mul(self, node, out, hint):
        return self._arith(node, out, hint, "*", "mulf")

    def _ct_truediv(self, node, out, hint):
        return self._arith(node, out, hint, "/", "divf")

    def _minmax(self, node: ast.Call, out, hint: str, which: str) -> Val:
        args = self._args(node, ["x", "y", "flush_to_zero", "propagate_nan"], 2)
        lhs, rhs = self.expr(args["x"], out, hint), self.expr(args["y"], out, hint)
        if lhs.kind == "const" and rhs.kind == "const":
            return Val("const", py=(min if which == "min" else max)(lhs.py, rhs.py))
        if "tile" not in (lhs.kind, rhs.kind):
            typed = self._scalar_binop(node, "+", lhs, rhs)  # types both sides alike
            return Val("scalar", typed.type, ir.Call(which, (typed.expr.lhs, typed.expr.rhs)),
                       nonneg=(self._nonneg(lhs) or self._nonneg(rhs)) if which == "max" else
                       (self._nonneg(lhs) and self._nonneg(rhs)))
        type_, a, b = self._tile_operands(node, lhs, rhs, out, hint)
        if self._int_tile(type_.dtype):
            return Val("tile", type_, ir.Call(f"{which}i", (a, b)))
        nan_mode = self.expr(args["propagate_nan"], out).py if "propagate_nan" in args else False
        return self._bind_temp(out, hint, type_, ir.Call(f"{which}f", (
            a, b, ir.Lit("nan::Enabled" if nan_mode else "nan::Disabled"), ir.Lit(self._ftz(args.get("flush_to_zero"), out)))))

    def _ct_minimum(self, node, out, hint):
        return self._minmax(node, out, hint, "min")

    def _ct_maximum(self, node, out, hint):
        return self._minmax(node, out, hint, "max")

    def _ct_bid(self, node: ast.Call, out, hint) -> Val:
        axis = self._int_const(self.expr(self._args(node, ["axis"], 1)["axis"], out), node)
        if axis not in (0, 1, 2):
            raise self.error(node, "ct.bid axis must be 0, 1 or 2")
        return Val("scalar", ir.ScalarType("i32"), ir.Field(ir.Call("get_tile_block_id"), str(axis)), bid_axis=axis,
                   nonneg=True)

    def _ct_num_blocks(self, node: ast.Call, out, hint) -> Val:
        axis = self._int_const(self.expr(self._args(node, ["axis"], 1)["axis"], out), node)
        if axis not in (0, 1, 2):
            raise self.error(node, "ct.num_blocks axis must be 0, 1 or 2")
        return Val("scalar", ir.ScalarType("i32"), ir.Field(ir.Call("get_num_tile_blocks"), str(axis)), nonneg=True)

    def _ct_astype(self, node: ast.Call, out, hint) -> Val:
        args = self._args(node, ["x", "dtype"], 2)
        return self._convert(self._tile_arg(args["x"], out, hint), self._dtype_arg(args["dtype"], out), out, hint)

    def _tile_method(self, node: ast.Call, recv: Val, name: str, out, hint) -> Val:
        if name == "astype":
            if len(node.args) != 1 or node.keywords:
                raise self.error(node, "astype takes one dtype")
            return self._convert(recv, self._dtype_arg(node.args[0], out), out, hint)
        if name == "reshape":
            shape = self._dims(node.args[0] if len(node.args) == 1 else ast.Tuple(elts=node.args), out)
            return self._bind_temp(out, hint, ir.TileType(recv.dtype, shape), ir.Method(recv.expr, "reshape", (ir.Shape(shape),)))
        if name == "item":
            if any(d != 1 for d in recv.shape):
                raise self.error(node, ".item() needs a tile of one element")
            if self._index_class(recv.dtype):  # an index array's value, as the kernel's integers
                recv = self._convert(recv, "i32", out, hint)
            dtype = self.union.find(recv.dtype)
            if dtype.startswith("$") and not self.survey:
                raise self.error(node, ".item() of a tile of an array's dtype is not supported yet; cast it first")
            scalar = self._bind_temp(out, hint, ir.TileType(recv.dtype, ()), ir.Method(recv.expr, "reshape", (ir.Shape(()),)))
            return self._scalar_of(scalar, out, hint)
        if name in _TILE_METHODS:
            # `t.permute(axes)` is `ct.permute(t, axes)`: the receiver, bound to a name, goes first.
            receiver = self.fresh("_receiver")
            self.scopes[-1][receiver] = _Binding(recv, None, self.depth)
            call = ast.copy_location(ast.Call(func=ast.Attribute(value=ast.Name(id="ct", ctx=ast.Load()), attr=name),
                                              args=[ast.Name(id=receiver, ctx=ast.Load()), *node.args],
                                              keywords=node.keywords), node)
            ast.fix_missing_locations(call)
            return getattr(self, f"_ct_{name}")(call, out, hint)
        raise self.error(node, f"tile method '.{name}()' is not supported yet")

    def _float_tile(self, node: ast.expr, out, hint) -> Val:
        val = self._tile_arg(node, out, hint)
        if self.union.find(val.dtype) in ("i32", "i64", "bool"):
            raise self.error(node, "expected a floating-point tile")
        return val

    def _unary_math(self, name: str):
        def handler(node: ast.Call, out, hint) -> Val:
            args = self._args(node, ["x"], 1)
            x = self._float_tile(args["x"], out, hint)
            return Val("tile", x.type, ir.Call(name, (x.expr,)))
        return handler

    def _ct_abs(self, node: ast.Call, out, hint) -> Val:
        x = self._tile_arg(self._args(node, ["x"], 1)["x"], out, hint)
        func = "absi" if self._int_tile(x.dtype) else "absf"
        return Val("tile", x.type, ir.Call(func, (x.expr,)))

    def _ct_exp(self, node: ast.Call, out, hint) -> Val:
        return self._rounded_math(node, "exp", out, hint)

    def _ct_tanh(self, node: ast.Call, out, hint) -> Val:
        return self._rounded_math(node, "tanh", out, hint)

    def _rounded_math(self, node: ast.Call, func: str, out, hint) -> Val:
        """ct.exp / ct.tanh with an optional rounding_mode (APPROX or FULL, on f32 tiles)."""
        args = self._args(node, ["x", "rounding_mode"], 1)
        x = self._float_tile(args["x"], out, hint)
        rounding = self._rounding(args.get("rounding_mode"), out)
        if rounding is None:
            return Val("tile", x.type, ir.Call(func, (x.expr,)))
        if rounding not in ("rounding::Approx", "rounding::Full") or self.union.find(x.dtype) != "f32":
            raise self.error(node, f"ct.{func} takes rounding_mode APPROX or FULL, on f32 tiles")
        self.unsafe_reasons.append(f"{func} with {rounding.split('::')[1]} rounding (cutile marks nondefault "
                                   "rounding unsafe; f32 with it is a supported Tile IR pair)")
        return self._bind_temp(out, hint, x.type, ir.Unsafe(
            ir.Call(f"{func}_with_rounding", (x.expr, ir.Lit(rounding))),
            reason="f32 with this rounding is a supported Tile IR pair"))

    def _ct_static_assert(self, node: ast.Call, out, hint) -> Val:
        """Decided here where the condition is known, else checked by the launcher (it is made of
        ct.Constant values, which the launcher has before it compiles anything)."""
        args = self._args(node, ["condition", "message"], 1)
        cond = self.expr(args["condition"], out)
        try:
            message = str(self._eval_static(args["message"])) if "message" in args else "static_assert failed"
        except Exception:  # e.g. an f-string of the constants
            message = ast.unparse(args["message"])
        source = f"{self.src.display_file}:{node.lineno}: {ast.unparse(args['condition'])}"
        if cond.kind == "const":
            if not cond.py:
                raise self.error(node, f"ct.static_assert fails: {message}")
            return Val("const", py=None)
        consts = {rust_name(c.name) for c in self.params if isinstance(c, ir.ConstParam)}
        names = {n.id for n in ast.walk(args["condition"]) if isinstance(n, ast.Name)}
        if cond.kind != "scalar" or cond.dtype != "bool" or any(
                rust_name(n) not in consts and self.lookup(n) is not None and self.lookup(n).let is not None
                for n in names):
            raise self.error(node, "ct.static_assert needs a condition made of ct.Constant values")
        self.launch_check(cond.expr, f"ct.static_assert fails at {source} ({message})")
        return Val("const", py=None)

    def __getattr__(self, attr: str):
        if attr.startswith("_ct_") and attr[4:] in _UNARY_MATH:
            return self._unary_math(attr[4:])
        if attr.startswith("_ct_") and attr[4:] in _REDUCTIONS:
            return lambda node, out, hint: self._reduce(node, _REDUCTIONS[attr[4:]], out, hint)
        raise AttributeError(attr)

    def _ftz(self, node: ast.expr | None, out) -> str:
        if node is None:
            return "ftz::Disabled"
        val = self.expr(node, out)
        if val.kind != "const" or not isinstance(val.py, bool):
            raise self.error(node, "flush_to_zero must be True or False")
        return "ftz::Enabled" if val.py else "ftz::Disabled"

    def _ct_exp2(self, node: ast.Call, out, hint) -> Val:
        args = self._args(node, ["x", "flush_to_zero"], 1)
        x = self._float_tile(args["x"], out, hint)
        return Val("tile", x.type, ir.Call("exp2", (x.expr, ir.Lit(self._ftz(args.get("flush_to_zero"), out)))))

    def _ct_sqrt(self, node: ast.Call, out, hint) -> Val:
        args = self._args(node, ["x", "flush_to_zero"], 1)
        x = self._float_tile(args["x"], out, hint)
        return Val("tile", x.type, ir.Call("sqrt", (x.expr, ir.Lit("rounding::NearestEven"),
                                                    ir.Lit(self._ftz(args.get("flush_to_zero"), out)))))

    def _ct_rsqrt(self, node: ast.Call, out, hint) -> Val:
        args = self._args(node, ["x", "flush_to_zero"], 1)
        x = self._float_tile(args["x"], out, hint)
        return Val("tile", x.type, ir.Call("rsqrt", (x.expr, ir.Lit(self._ftz(args.get("flush_to_zero"), out)))))

    def _reduce(self, node: ast.Call, func: str, out, hint) -> Val:
        args = self._args(node, ["x", "axis", "keepdims"], 1)
        x = self._tile_arg(args["x"], out, hint)
        rank = len(x.shape)
        axis_val = self.expr(args["axis"], out) if "axis" in args else Val("const", py=None)
        keep = self.expr(args["keepdims"], out).py if "keepdims" in args else False
        axes = list(range(rank)) if axis_val.py is None else (
            [self._int_const(a, node) for a in axis_val.py] if axis_val.kind == "tuple" else [self._int_const(axis_val, node)])
        axes = sorted({a + rank if a < 0 else a for a in axes}, reverse=True)
        if any(not 0 <= a < rank for a in axes):
            raise self.error(node, f"axis out of range for a rank-{rank} tile")
        shape = list(x.shape)
        cur = x
        for a in axes:  # one axis at a time, highest first, so no shape needs a product of dims
            del shape[a]
            cur = self._bind_temp(out, hint, ir.TileType(x.dtype, tuple(shape)), ir.Call(func, (cur.expr, ir.Lit(f"{a}i32"))))
        if keep:
            kept = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
            cur = self._bind_temp(out, hint, ir.TileType(x.dtype, kept), ir.Method(cur.expr, "reshape", (ir.Shape(kept),)))
        return cur

    def _ct_full(self, node: ast.Call, out, hint) -> Val:
        args = self._args(node, ["shape", "fill_value", "dtype"], 3)
        return self._filled(node, args["shape"], self.expr(args["fill_value"], out), args["dtype"], out, hint)

    def _ct_zeros(self, node: ast.Call, out, hint) -> Val:
        args = self._args(node, ["shape", "dtype"], 2)
        return self._filled(node, args["shape"], Val("const", py=0), args["dtype"], out, hint)

    def _ct_ones(self, node: ast.Call, out, hint) -> Val:
        args = self._args(node, ["shape", "dtype"], 2)
        return self._filled(node, args["shape"], Val("const", py=1), args["dtype"], out, hint)

    def _filled(self, node, shape_node, fill: Val, dtype_node, out, hint) -> Val:
        shape = self._dims(shape_node, out)
        dtype = self._dtype_arg(dtype_node, out)
        if fill.kind == "const" and dtype in ("f32", "i32", "i64", "f64"):
            lit = float_literal(float(fill.py), dtype, dense=True) if dtype in _FLOATS else ir.Lit(f"{int(fill.py)}{dtype}")
            return self._bind_temp(out, hint, ir.TileType(dtype, shape), ir.Call("constant", (lit, ir.Shape(shape))))
        tile = self._splat(fill, dtype, shape, out, hint, node)
        if isinstance(tile.expr, ir.Var):
            return tile
        return self._bind_temp(out, hint, tile.type, tile.expr)

    def _ct_mma(self, node: ast.Call, out, hint) -> Val:
        args = self._args(node, ["x", "y", "acc"], 3)
        a, b, acc = (self._tile_arg(args[k], out, hint) for k in ("x", "y", "acc"))
        if len(a.shape) != 2 or len(b.shape) != 2 or len(acc.shape) != 2:
            raise self.error(node, "only 2-D ct.mma is supported yet")
        if a.shape[1] != b.shape[0] or acc.shape != (a.shape[0], b.shape[1]):
            raise self.error(node, f"ct.mma shapes do not match: {a.shape} x {b.shape} -> {acc.shape}")
        self._common_dtype(a.dtype, b.dtype, node)
        return Val("tile", acc.type, ir.Call("mma", (a.expr, b.expr, acc.expr)))

    def _ct_matmul(self, node: ast.Call, out, hint) -> Val:
        args = self._args(node, ["x", "y"], 2)
        return self._matmul(node, self._tile_arg(args["x"], out, hint), self._tile_arg(args["y"], out, hint), out, hint)

    def _matmul(self, node: ast.AST, a: Val, b: Val, out, hint) -> Val:
        """`ct.matmul(a, b)` or `a @ b`, as cuTile Python lowers it: an mma into a zero accumulator
        (f32, or i32 for 8-bit integers), cast back to the operands' common dtype."""
        if len(a.shape) != 2 or len(b.shape) != 2:
            raise self.error(node, "only 2-D ct.matmul is supported yet")
        if a.shape[1] != b.shape[0]:
            raise self.error(node, f"ct.matmul shapes do not match: {a.shape} x {b.shape}")
        dtype = self._common_dtype(a.dtype, b.dtype, node)
        a, b = self._convert(a, dtype, out, hint), self._convert(b, dtype, out, hint)
        acc_dtype = "i32" if self.union.find(dtype) in ("i8", "u8") else "f32"
        shape = (a.shape[0], b.shape[1])
        zero = self._bind_temp(out, f"{hint}_acc", ir.TileType(acc_dtype, shape),
                               self._splat(Val("const", py=0), acc_dtype, shape, out, hint, node).expr)
        product = self._bind_temp(out, hint, zero.type, ir.Call("mma", (a.expr, b.expr, zero.expr)))
        return self._convert(product, dtype, out, hint)

    def _ct_arange(self, node: ast.Call, out, hint) -> Val:
        args = self._args(node, ["size", "dtype"], 1)
        shape = self._dims(ast.copy_location(ast.Tuple(elts=[args["size"]], ctx=ast.Load()), node), out)
        dtype = self._dtype_arg(args["dtype"], out) if "dtype" in args else "i32"
        if dtype not in ("i32", "i64"):
            raise self.error(node, "ct.arange of a float dtype is not supported yet")
        iota = self._bind_temp(out, hint, ir.TileType(dtype, shape), ir.Call("iota", (ir.Shape(shape),)))
        iota.iota_offset = Val("const", py=0)
        iota.nonneg = True
        return iota

    def _ct_where(self, node: ast.Call, out, hint) -> Val:
        args = self._args(node, ["cond", "x", "y"], 3)
        cond = self._tile_arg(args["cond"], out, hint)
        if self.union.find(cond.dtype) != "bool":
            raise self.error(args["cond"], "ct.where needs a bool tile (a comparison) as its condition")
        x, y = self.expr(args["x"], out, hint), self.expr(args["y"], out, hint)
        if "tile" not in (x.kind, y.kind):
            # Two numbers: a tile of the condition's shape, of their common dtype.
            scalars = [v for v in (x, y) if v.kind == "scalar"]
            dtype = (self._scalar_binop(node, "+", x, y).dtype if scalars else
                     "f32" if any(isinstance(v.py, float) for v in (x, y)) else "i32")
            x = self._splat(x, dtype, cond.shape, out, hint, node)
        type_, a, b = self._tile_operands(node, x, y, out, hint)
        shape = self._broadcast_shape(cond.shape, type_.shape, node)
        cond = self._broadcast(cond, shape, out, hint)
        va = self._broadcast(Val("tile", type_, a), shape, out, hint)
        vb = self._broadcast(Val("tile", type_, b), shape, out, hint)
        return self._bind_temp(out, hint, ir.TileType(type_.dtype, shape), ir.Call("select", (cond.expr, va.expr, vb.expr)))

    def _ct_reshape(self, node: ast.Call, out, hint) -> Val:
        args = self._args(node, ["x", "shape"], 2)
        x = self._tile_arg(args["x"], out, hint)
        shape = self._dims(args["shape"], out)
        return self._bind_temp(out, hint, ir.TileType(x.dtype, shape), ir.Method(x.expr, "reshape", (ir.Shape(shape),)))

    def _ct_expand_dims(self, node: ast.Call, out, hint) -> Val:
        args = self._args(node, ["x", "axis"], 2)
        x = self._tile_arg(args["x"], out, hint)
        axis = self._int_const(self.expr(args["axis"], out), node)
        rank = len(x.shape) + 1
        axis = axis + rank if axis < 0 else axis
        if not 0 <= axis < rank:
            raise self.error(node, f"axis {axis} is out of range for a rank-{rank} result")
        shape = x.shape[:axis] + (1,) + x.shape[axis:]
        return self._bind_temp(out, hint, ir.TileType(x.dtype, shape), ir.Method(x.expr, "reshape", (ir.Shape(shape),)))

    def _ct_permute(self, node: ast.Call, out, hint) -> Val:
        args = self._args(node, ["x", "axes"], 2)
        x = self._tile_arg(args["x"], out, hint)
        axes_val = self.expr(args["axes"], out)
        axes = [self._int_const(a, node) for a in (axes_val.py if axes_val.kind == "tuple" else [axes_val])]
        if sorted(axes) != list(range(len(x.shape))):
            raise self.error(node, f"axes {axes} are not a permutation of the tile's {len(x.shape)} axes")
        return self._permuted(x, axes, out, hint)

    def _permuted(self, x: Val, axes: list[int], out, hint) -> Val:
        """`x` with its axes in the order `axes`."""
        shape = tuple(x.shape[a] for a in axes)
        return self._bind_temp(out, hint, ir.TileType(x.dtype, shape),
                               ir.Call("permute", (x.expr, ir.Lit(f"const_array![{', '.join(map(str, axes))}]"))))

    def _ct_transpose(self, node: ast.Call, out, hint) -> Val:
        """Swaps two axes (a 2-D tile's two without axis0/axis1): `.transpose()` in 2-D, a permute else."""
        args = self._args(node, ["x", "axis0", "axis1"], 1)
        x = self._tile_arg(args["x"], out, hint)
        rank = len(x.shape)
        if "axis0" not in args and "axis1" not in args:
            if rank != 2:
                raise self.error(node, "ct.transpose of a tile that is not 2-D needs axis0 and axis1")
            axis0, axis1 = 0, 1
        else:
            axis0, axis1 = (self._int_const(self.expr(args[k], out), node) if k in args else None
                            for k in ("axis0", "axis1"))
            if axis0 is None or axis1 is None:
                raise self.error(node, "ct.transpose needs both axis0 and axis1, or neither")
            axis0, axis1 = (a + rank if a < 0 else a for a in (axis0, axis1))
            if not (0 <= axis0 < rank and 0 <= axis1 < rank):
                raise self.error(node, f"transpose axes out of range for a rank-{rank} tile")
        axes = list(range(rank))
        axes[axis0], axes[axis1] = axes[axis1], axes[axis0]
        if axes == list(range(rank)):
            return x
        shape = tuple(x.shape[a] for a in axes)
        if rank == 2:
            return self._bind_temp(out, hint, ir.TileType(x.dtype, shape), ir.Method(x.expr, "transpose"))
        return self._bind_temp(out, hint, ir.TileType(x.dtype, shape),
                               ir.Call("permute", (x.expr, ir.Lit(f"const_array![{', '.join(map(str, axes))}]"))))

    def _bitwise(self, node: ast.Call, op: ast.operator, out, hint) -> Val:
        """ct.bitwise_and/or/xor/lshift/rshift: the operators `&`, `|`, `^`, `<<`, `>>`."""
        args = self._args(node, ["x", "y"], 2)
        binop = ast.copy_location(ast.BinOp(left=args["x"], op=op, right=args["y"]), node)
        return self.expr(binop, out, hint)

    def _ct_bitwise_and(self, node, out, hint):
        return self._bitwise(node, ast.BitAnd(), out, hint)

    def _ct_bitwise_or(self, node, out, hint):
        return self._bitwise(node, ast.BitOr(), out, hint)

    def _ct_bitwise_xor(self, node, out, hint):
        return self._bitwise(node, ast.BitXor(), out, hint)

    def _ct_bitwise_lshift(self, node, out, hint):
        return self._bitwise(node, ast.LShift(), out, hint)

    def _ct_bitwise_rshift(self, node, out, hint):
        return self._bitwise(node, ast.RShift(), out, hint)

    def _ct_bitwise_not(self, node: ast.Call, out, hint) -> Val:
        args = self._args(node, ["x"], 1)
        return self.expr(ast.copy_location(ast.UnaryOp(op=ast.Invert(), operand=args["x"]), node), out, hint)

    def _ct_cumsum(self, node: ast.Call, out, hint) -> Val:
        """An inclusive prefix sum along one axis: cutile's scan_sum, from the dtype's zero."""
        args = self._args(node, ["x", "axis", "reverse", "rounding_mode", "flush_to_zero"], 1)
        x = self._tile_arg(args["x"], out, hint)
        if self._rounding(args.get("rounding_mode"), out) is not None or self._ftz(args.get("flush_to_zero"), out) \
                != "ftz::Disabled":
            raise self.error(node, "ct.cumsum with rounding_mode or flush_to_zero is not supported yet")
        rank = len(x.shape)
        axis = self._int_const(self.expr(args["axis"], out), node) if "axis" in args else 0
        axis = axis + rank if axis < 0 else axis
        if not 0 <= axis < rank:
            raise self.error(node, f"axis out of range for a rank-{rank} tile")
        reverse = self.expr(args["reverse"], out) if "reverse" in args else Val("const", py=False)
        if reverse.kind != "const" or not isinstance(reverse.py, bool):
            raise self.error(node, "reverse must be True or False")
        dtype = self.union.find(x.dtype)
        if dtype == "bool":
            raise self.error(node, "ct.cumsum of a bool tile is not supported yet")
        zero = ir.Lit(f"0{dtype}") if dtype in ("i32", "i64") else float_literal(0.0, dtype) if dtype in (
            "f32", "f64") else self._bind_temp(out, f"{hint}_zero", ir.ScalarType(x.dtype),
                                               ir.Call("convert_scalar", (float_literal(0.0),))).expr
        # cutile 0.5.0's scan_sum writes `dim = 0` into the Tile IR whatever axis it is given
        # (compile_scan_op): another axis is brought to the front, scanned, and put back.
        order = [axis] + [a for a in range(rank) if a != axis]
        if axis != 0:
            x = self._permuted(x, order, out, hint)
        scanned = self._bind_temp(out, hint, x.type, ir.Call("scan_sum", (
            x.expr, ir.Lit("0i32"), ir.Lit("reverse::Reverse" if reverse.py else "reverse::Forward"), zero)))
        return self._permuted(scanned, [order.index(a) for a in range(rank)], out, hint) if axis != 0 else scanned

    def _ct_extract(self, node: ast.Call, out, hint) -> Val:
        """The `index`-th block of `shape` in `x` (cutile's extract, with slice indices)."""
        args = self._args(node, ["x", "index", "shape"], 3)
        x = self._tile_arg(args["x"], out, hint)
        shape = self._dims(args["shape"], out)
        index = self.expr(args["index"], out, hint="index")
        items = index.py if index.kind == "tuple" else [index]
        if not len(items) == len(shape) == len(x.shape):
            raise self.error(node, "ct.extract needs an index and a shape of the tile's rank")
        for have, want in zip(x.shape, shape):
            if isinstance(have, int) and isinstance(want, int) and have % want:
                raise self.error(node, f"ct.extract of shape {shape} does not divide the tile's {x.shape}")
        indices = [self._bind_temp(out, "index", ir.TileType("i32", ()), ir.Call("scalar_to_tile", (
            self._i32(i, args["index"], out),))).expr for i in items]
        return self._bind_temp(out, hint, ir.TileType(x.dtype, shape),
                               ir.Call("extract", (x.expr, ir.Lit(f"[{', '.join(e.name for e in indices)}]"))))

    def _ct_cdiv(self, node: ast.Call, out, hint) -> Val:
        args = self._args(node, ["a", "b"], 2)
        a, b = self.expr(args["a"], out), self.expr(args["b"], out)
        if a.kind == "const" and b.kind == "const":
            return Val("const", py=-(-a.py // b.py))
        return Val("scalar", ir.ScalarType("i32"), ir.Call("ceil_div", (self._i32(a, node, out), self._i32(b, node, out))))
