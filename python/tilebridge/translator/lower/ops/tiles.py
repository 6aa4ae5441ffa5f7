"""Tile and scalar operations of cuTile Python (`ct.exp`, `ct.sum`, `ct.mma`, ...) as cutile calls,
and the Tile methods (`t.astype`, `t.reshape`, `t.item`, ...)."""

from __future__ import annotations

import ast
import math
import struct
from dataclasses import replace
from typing import TYPE_CHECKING

from ... import ir, module_items
from ....dtypes import DTYPES, FLOAT_RANK
from ...rust_syntax import constant_value, float_literal
from ..bindings import Binding, Value
from ..facts import fold
from .registry import OPS, ct_op, register

if TYPE_CHECKING:
    from ..walker import Walker

# Float math with one operand and no modes, same name in cuTile Python and cutile.
UNARY_MATH = ("log", "log2", "sin", "cos", "tan", "sinh", "cosh", "tanh", "floor", "ceil")
REDUCTIONS = {"sum": "reduce_sum", "max": "reduce_max", "min": "reduce_min", "prod": "reduce_prod"}
# cuTile Python's Tile methods that are the ct function of the same name with the tile first.
TILE_METHODS = ("permute", "transpose", "extract", "insert")

def _rounding(w: Walker, node: ast.expr | None, out) -> str | None:
    """The cutile rounding marker for a ct.RoundingMode, or None for the default."""
    if node is None:
        return None
    val = w.expr(node, out)
    if val.kind == "const" and val.py is None:
        return None
    mode = getattr(val.py, "value", None) if val.kind == "static" else None
    names = {"nearest_even": "NearestEven", "zero": "Zero", "negative_inf": "NegativeInf",
             "positive_inf": "PositiveInf", "nearest_away": "NearestAway", "full": "Full", "approx": "Approx",
             "nearest_int_to_zero": "NearestIntToZero"}
    if mode not in names:
        raise w.error(node, "expected a ct.RoundingMode")
    return f"rounding::{names[mode]}"


def _arith(w: Walker, node: ast.Call, out, hint: str, op: str, func: str) -> Value:
    """ct.add/sub/mul/truediv with optional rounding_mode and flush_to_zero."""
    args = w.call_args(node, ["x", "y", "rounding_mode", "flush_to_zero"], 2)
    lhs, rhs = w.expr(args["x"], out, hint), w.expr(args["y"], out, hint)
    rounding = _rounding(w, args.get("rounding_mode"), out)
    ftz = _ftz(w, args.get("flush_to_zero"), out)
    if lhs.kind == "const" and rhs.kind == "const":
        return Value("const", py=fold({"+": ast.Add(), "-": ast.Sub(), "*": ast.Mult(), "/": ast.Div()}[op],
                                     lhs.py, rhs.py))
    if "tile" not in (lhs.kind, rhs.kind):
        if rounding is not None or ftz != "ftz::Disabled":
            raise w.error(node, "rounding modes on scalars are not supported yet")
        return w.sem.scalar_binop(node, op, *w.sem.promote_float_literal(lhs, rhs, out, hint))
    type_, a, b = w.sem.tile_operands(node, lhs, rhs, out, hint)
    if w.sem.int_tile(type_.dtype):
        if rounding is not None or ftz != "ftz::Disabled" or op == "/":
            raise w.error(node, "rounding modes and true division apply to float tiles")
        return Value("tile", type_, ir.Binary(op, a, b))
    if rounding is None and ftz == "ftz::Disabled":
        return Value("tile", type_, ir.Binary(op, a, b))
    # Bound to a typed let: the JIT infers these intrinsics' types poorly inside larger expressions.
    return w.sem.bind_temp(out, hint, type_,
                           ir.Call(func, (a, b, ir.Lit(rounding or "rounding::NearestEven"), ir.Lit(ftz))))


def _arithmetic(op: str, func: str):
    """The handler of ct.add/sub/mul/truediv: the operator `op`, or cutile's `func` with modes."""
    def handler(w: Walker, node: ast.Call, out, hint) -> Value:
        return _arith(w, node, out, hint, op, func)
    return handler


for _name, _op, _func in (("add", "+", "addf"), ("sub", "-", "subf"), ("mul", "*", "mulf"),
                          ("truediv", "/", "divf")):
    register(_name, _arithmetic(_op, _func))


def minmax(w: Walker, node: ast.Call, out, hint: str, which: str) -> Value:
    args = w.call_args(node, ["x", "y", "flush_to_zero", "propagate_nan"], 2)
    lhs, rhs = w.expr(args["x"], out, hint), w.expr(args["y"], out, hint)
    if lhs.kind == "const" and rhs.kind == "const":
        return Value("const", py=(min if which == "min" else max)(lhs.py, rhs.py))
    if "tile" not in (lhs.kind, rhs.kind):
        lhs, rhs = w.sem.promote_float_literal(lhs, rhs, out, hint)
        typed = w.sem.scalar_binop(node, "+", lhs, rhs)  # types both sides alike
        return Value("scalar", typed.type, ir.Call(which, (typed.expr.lhs, typed.expr.rhs)),
                   nonneg=(w.sem.nonneg(lhs) or w.sem.nonneg(rhs)) if which == "max" else
                   (w.sem.nonneg(lhs) and w.sem.nonneg(rhs)))
    type_, a, b = w.sem.tile_operands(node, lhs, rhs, out, hint)
    if w.sem.int_tile(type_.dtype):
        return Value("tile", type_, ir.Call(f"{which}i", (a, b)))
    nan_mode = w.expr(args["propagate_nan"], out).py if "propagate_nan" in args else False
    return w.sem.bind_temp(out, hint, type_, ir.Call(f"{which}f", (
        a, b, ir.Lit("nan::Enabled" if nan_mode else "nan::Disabled"), ir.Lit(_ftz(w, args.get("flush_to_zero"), out)))))


@ct_op("minimum")
def ct_minimum(w: Walker, node, out, hint):
    return minmax(w, node, out, hint, "min")


@ct_op("maximum")
def ct_maximum(w: Walker, node, out, hint):
    return minmax(w, node, out, hint, "max")


@ct_op("bid")
def ct_bid(w: Walker, node: ast.Call, out, hint) -> Value:
    axis = w.sem.int_const(w.expr(w.call_args(node, ["axis"], 1)["axis"], out), node)
    if axis not in (0, 1, 2):
        raise w.error(node, "ct.bid axis must be 0, 1 or 2")
    w.state.block_axes.add(axis)
    return Value("scalar", ir.ScalarType("i32"), ir.Field(ir.Call("get_tile_block_id"), str(axis)), bid_axis=axis,
               nonneg=True)


@ct_op("num_blocks")
def ct_num_blocks(w: Walker, node: ast.Call, out, hint) -> Value:
    axis = w.sem.int_const(w.expr(w.call_args(node, ["axis"], 1)["axis"], out), node)
    if axis not in (0, 1, 2):
        raise w.error(node, "ct.num_blocks axis must be 0, 1 or 2")
    return Value("scalar", ir.ScalarType("i32"), ir.Field(ir.Call("get_num_tile_blocks"), str(axis)), nonneg=True)


@ct_op("astype", moves=True)
def ct_astype(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["x", "dtype"], 2)
    x, dtype = w.expr(args["x"], out, hint), w.dtype_arg(args["dtype"], out)
    if x.kind == "const":
        return number_as(w, node, x, dtype, out, hint)
    return w.sem.convert(w.as_tile(x, args["x"], out, hint), dtype, out, hint)


def scalar_astype(w: Walker, node: ast.Call, x: Value, out, hint) -> Value:
    """`n.astype(dtype)` of a scalar or a number, as `ct.astype(n, dtype)`: cuTile Python's scalars
    are 0-d tiles."""
    if len(node.args) != 1 or node.keywords:
        raise w.error(node, "astype takes one dtype")
    dtype = w.dtype_arg(node.args[0], out)
    if x.kind == "const":
        return number_as(w, node, x, dtype, out, hint)
    return w.sem.convert(w.as_tile(x, node, out, hint), dtype, out, hint)


def number_as(w: Walker, node: ast.Call, x: Value, dtype: str, out, hint) -> Value:
    """`ct.astype(7, ct.float16)` as cuTile Python computes it: a number already of the dtype it
    types the literal (an int is i32, a float f32) is left a number; any other becomes a constant
    of that dtype (`int()` truncates), which then promotes as a tile of it does. Where the dtype
    does not hold the value exactly, where cuTile Python rounds it is not known: refused."""
    root = w.state.union.find(dtype)
    root = w.state.stated_one(root) or root  # an array stated as one dtype: that dtype
    if not isinstance(x.py, (bool, int, float)) or root.startswith("$"):
        raise w.error(node, "ct.astype of a number to an array's dtype is not supported yet")
    literal = "bool" if isinstance(x.py, bool) else "i32" if isinstance(x.py, int) else "f32"
    if root == literal:
        return x
    if root == "bool":
        return w.sem.scalar_tile(ir.Lit("true" if x.py else "false"), "bool", (), out, hint)
    if root in ("i32", "i64"):
        value = int(x.py)
        if not -2 ** (int(root[1:]) - 1) <= value < 2 ** (int(root[1:]) - 1):
            raise w.error(node, f"{value} does not fit in {root}")
        return w.sem.splat(Value("const", py=value), root, (), out, hint, node)
    if root not in ("f32", "f16", "bf16", "f64") or not _exact_in(float(x.py), root):
        raise w.error(node, f"ct.astype({x.py!r}, {root}) of a number is not supported yet (it rounds the "
                            "number, or the dtype is not one tried here)")
    return w.sem.convert(w.sem.splat(Value("const", py=float(x.py)), "f32" if root != "f64" else "f64", (), out,
                                     hint, node), root, out, hint)


def _exact_in(value: float, dtype: str) -> bool:
    """Whether a float dtype holds `value` exactly (f64, f32, f16, bf16)."""
    if dtype == "f64":
        return True
    try:
        if dtype == "f16":
            return struct.unpack("<e", struct.pack("<e", value))[0] == value
        if dtype in ("f32", "bf16"):
            bits = struct.unpack("<I", struct.pack("<f", value))[0]
            exact = struct.unpack("<f", struct.pack("<I", bits))[0] == value
            return exact and (dtype == "f32" or not bits & 0xFFFF)  # bf16: an f32 with its low 16 bits zero
    except (OverflowError, struct.error):
        return False
    return False


def tile_method(w: Walker, node: ast.Call, recv: Value, name: str, out, hint) -> Value:
    if name == "astype":
        if len(node.args) != 1 or node.keywords:
            raise w.error(node, "astype takes one dtype")
        return w.sem.convert(recv, w.dtype_arg(node.args[0], out), out, hint)
    if name == "reshape":
        shape = w.dims(node.args[0] if len(node.args) == 1 else ast.Tuple(elts=node.args), out)
        return w.sem.reshaped(recv, shape, out, hint)
    if name == "item":
        if any(d != 1 for d in recv.shape):
            raise w.error(node, ".item() needs a tile of one element")
        if w.sem.index_class(recv.dtype):  # an index array's value, as the kernel's integers
            recv = w.sem.convert(recv, "i32", out, hint)
        scalar = w.sem.reshaped(recv, (), out, hint)
        if w.state.union.find(recv.dtype) not in DTYPES and not w.state.survey:
            # of an array's dtype (the survey has seen whether the kernel uses it as an integer):
            # a 0-d tile, as cuTile Python's scalars are; Rust has no scalar of a type parameter
            return scalar
        return w.sem.scalar_of(scalar, out, hint)
    if name in TILE_METHODS:
        # `t.permute(axes)` is `ct.permute(t, axes)`: the receiver, bound to a name, goes first.
        receiver = w.state.fresh("_receiver")
        w.frame.scopes[-1][receiver] = Binding(recv, None, w.depth)
        call = ast.copy_location(ast.Call(func=ast.Attribute(value=ast.Name(id="ct", ctx=ast.Load()), attr=name),
                                          args=[ast.Name(id=receiver, ctx=ast.Load()), *node.args],
                                          keywords=node.keywords), node)
        ast.fix_missing_locations(call)
        return OPS[name](w, call, out, hint)
    raise w.error(node, f"tile method '.{name}()' is not supported yet")


def _float_tile(w: Walker, node: ast.expr, out, hint, integers: bool = True) -> Value:
    """The operand of a float function: integers become f32, as cuTile Python converts them (not
    for `ct.floor`/`ct.ceil`, `integers=False`, which it refuses for them)."""
    val = w.tile_arg(node, out, hint)
    dtype = w.state.union.find(val.dtype)
    if dtype == "bool" or (not integers and w.sem.int_tile(val.dtype)):
        raise w.error(node, "expected a floating-point tile")
    if w.sem.int_tile(val.dtype) and (dtype in ("i32", "i64") or not w.state.survey):
        return w.sem.convert(val, "f32", out, hint)
    return val


# The math functions cuTile Python evaluates itself when given a number (`ct.exp(2.0)` is a constant,
# weakly typed like a literal; `ct.floor(2.5)` the int 2), each as Python computes it.
FOLDED = {"abs": abs, "exp": math.exp, "exp2": lambda x: 2 ** x, "sin": math.sin, "sinh": math.sinh,
          "cos": math.cos, "cosh": math.cosh, "tan": math.tan, "tanh": math.tanh, "log": math.log,
          "log2": math.log2, "sqrt": math.sqrt, "rsqrt": lambda x: x ** -0.5, "floor": math.floor,
          "ceil": math.ceil}


def folded(w: Walker, node: ast.Call, name: str, out, hint) -> Value | None:
    """`ct.<name>(number)` as the number cuTile Python makes of it; None where the call is not that."""
    if name not in FOLDED or len(node.args) != 1 or node.keywords:
        return None
    mark = w.checkpoint(out)
    arg = w.expr(node.args[0], out, hint)
    if arg.kind != "const" or type(arg.py) not in (int, float):
        w.rollback(mark, out)
        return None
    try:
        value = FOLDED[name](arg.py)
    except (ValueError, OverflowError, ZeroDivisionError) as e:
        raise w.error(node, f"ct.{name} of {arg.py!r}: {e}") from None
    if isinstance(value, complex):  # ct.rsqrt(-1)
        raise w.error(node, f"ct.{name} of {arg.py!r} is not a real number")
    return Value("const", py=value)


@ct_op("abs")
def ct_abs(w: Walker, node: ast.Call, out, hint) -> Value:
    x = w.tile_arg(w.call_args(node, ["x"], 1)["x"], out, hint)
    func = "absi" if w.sem.int_tile(x.dtype) else "absf"
    return Value("tile", x.type, ir.Call(func, (x.expr,)))


@ct_op("exp")
def ct_exp(w: Walker, node: ast.Call, out, hint) -> Value:
    return _rounded_math(w, node, "exp", out, hint)


@ct_op("tanh")
def ct_tanh(w: Walker, node: ast.Call, out, hint) -> Value:
    return _rounded_math(w, node, "tanh", out, hint)


def _rounded_math(w: Walker, node: ast.Call, func: str, out, hint) -> Value:
    """ct.exp / ct.tanh with an optional rounding_mode (APPROX or FULL, on f32 tiles)."""
    args = w.call_args(node, ["x", "rounding_mode"], 1)
    x = _float_tile(w, args["x"], out, hint)
    rounding = _rounding(w, args.get("rounding_mode"), out)
    if rounding is None:
        return Value("tile", x.type, ir.Call(func, (x.expr,)))
    if rounding not in ("rounding::Approx", "rounding::Full") or w.state.union.find(x.dtype) != "f32":
        raise w.error(node, f"ct.{func} takes rounding_mode APPROX or FULL, on f32 tiles")
    # The module's safe wrapper for f32 with this rounding, the pair Tile IR defines (module_items.py).
    return w.sem.bind_temp(out, hint, x.type, ir.Call(module_items.rounded(func, rounding.split("::")[1]), (x.expr,)))


def _ftz(w: Walker, node: ast.expr | None, out) -> str:
    if node is None:
        return "ftz::Disabled"
    val = w.expr(node, out)
    if val.kind != "const" or not isinstance(val.py, bool):
        raise w.error(node, "flush_to_zero must be True or False")
    return "ftz::Enabled" if val.py else "ftz::Disabled"


@ct_op("exp2")
def ct_exp2(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["x", "flush_to_zero"], 1)
    x = _float_tile(w, args["x"], out, hint)
    return Value("tile", x.type, ir.Call("exp2", (x.expr, ir.Lit(_ftz(w, args.get("flush_to_zero"), out)))))


@ct_op("sqrt")
def ct_sqrt(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["x", "flush_to_zero"], 1)
    x = _float_tile(w, args["x"], out, hint)
    return Value("tile", x.type, ir.Call("sqrt", (x.expr, ir.Lit("rounding::NearestEven"),
                                                ir.Lit(_ftz(w, args.get("flush_to_zero"), out)))))


@ct_op("rsqrt")
def ct_rsqrt(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["x", "flush_to_zero"], 1)
    x = _float_tile(w, args["x"], out, hint)
    return Value("tile", x.type, ir.Call("rsqrt", (x.expr, ir.Lit(_ftz(w, args.get("flush_to_zero"), out)))))


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _reduce(w: Walker, node: ast.Call, func: str, out, hint) -> Value:
    args = w.call_args(node, ["x", "axis", "keepdims"], 1)
    x = w.tile_arg(args["x"], out, hint)
    if w.state.union.find(x.dtype).startswith("$"):  # an array's dtype: cutile reduces from its identity
        w.sem.needs_constants(x.dtype, node, "a reduction's identity")
    rank = len(x.shape)
    given = args.get("axis")
    axis_val = Value("const", py=None) if given is None or _is_none(given) else w.expr(given, out)
    keep = w.expr(args["keepdims"], out).py if "keepdims" in args else False
    axes = list(range(rank)) if axis_val.py is None else (
        [w.sem.int_const(a, node) for a in axis_val.py] if axis_val.kind == "tuple" else [w.sem.int_const(axis_val, node)])
    axes = sorted({a + rank if a < 0 else a for a in axes}, reverse=True)
    if any(not 0 <= a < rank for a in axes):
        raise w.error(node, f"axis out of range for a rank-{rank} tile")
    shape = list(x.shape)
    cur = x
    for a in axes:  # one axis at a time, highest first, so no shape needs a product of dims
        del shape[a]
        cur = w.sem.bind_temp(out, hint, ir.TileType(x.dtype, tuple(shape)), ir.Call(func, (cur.expr, ir.Lit(f"{a}i32"))))
    if keep:
        kept = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        cur = w.sem.reshaped(cur, kept, out, hint)
    return cur


@ct_op("full")
def ct_full(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["shape", "fill_value", "dtype"], 3)
    return _filled(w, node, args["shape"], w.expr(args["fill_value"], out), args["dtype"], out, hint)


@ct_op("zeros")
def ct_zeros(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["shape", "dtype"], 2)
    return _filled(w, node, args["shape"], Value("const", py=0), args["dtype"], out, hint)


@ct_op("ones")
def ct_ones(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["shape", "dtype"], 2)
    return _filled(w, node, args["shape"], Value("const", py=1), args["dtype"], out, hint)


def _filled(w: Walker, node, shape_node, fill: Value, dtype_node, out, hint) -> Value:
    shape = w.dims(shape_node, out)
    dtype = w.dtype_arg(dtype_node, out)
    if fill.kind == "const" and dtype in ("f32", "i32", "i64", "f64"):
        lit = float_literal(constant_value(fill.py, dtype), dtype, dense=True) if dtype in FLOAT_RANK else \
            ir.Lit(f"{int(fill.py)}{dtype}")
        return w.sem.bind_temp(out, hint, ir.TileType(dtype, shape), ir.Call("constant", (lit, ir.Shape(shape))))
    tile = w.sem.splat(fill, dtype, shape, out, hint, node)
    if not isinstance(tile.expr, ir.Var):
        tile = w.sem.bind_temp(out, hint, tile.type, tile.expr)
    if fill.kind == "scalar" and fill.dtype == dtype:
        return replace(tile, splat=fill)  # every lane holds it (a scatter may own it: `pointers._own_scatter`)
    return tile


@ct_op("mma", moves=True)
def ct_mma(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["x", "y", "acc", "use_fast_acc"], 3)
    a, b, acc = (w.tile_arg(args[k], out, hint) for k in ("x", "y", "acc"))
    return w.sem.mma(node, a, b, acc, out, hint, fast_acc=w.flag_arg(args, "use_fast_acc", out))


@ct_op("matmul")
def ct_matmul(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["x", "y"], 2)
    return w.sem.matmul(node, w.tile_arg(args["x"], out, hint), w.tile_arg(args["y"], out, hint), out, hint)


@ct_op("arange")
def ct_arange(w: Walker, node: ast.Call, out, hint) -> Value:
    """`start + step * [0, 1, ..., size - 1]` of `dtype`, as cuTile Python makes it: an integer iota
    converted to `dtype`, times `step` and plus `start` (each converted to `dtype`) where they are
    not the defaults."""
    args = w.call_args(node, ["size", "dtype", "start", "step"], 1)
    shape = w.dims(ast.copy_location(ast.Tuple(elts=[args["size"]], ctx=ast.Load()), node), out)
    dtype = w.dtype_arg(args["dtype"], out) if "dtype" in args else "i32"
    start = w.expr(args["start"], out) if "start" in args else Value("const", py=0)
    step = w.expr(args["step"], out) if "step" in args else Value("const", py=1)
    for v, name in ((start, "start"), (step, "step")):
        if v.kind not in ("const", "scalar") or (v.kind == "const" and type(v.py) not in (int, float)):
            raise w.error(node, f"ct.arange's {name} must be a number or a scalar")
    if dtype not in ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64", "f16", "bf16"):
        raise w.error(node, f"ct.arange of dtype {dtype} is not supported yet")
    iota_dtype = dtype if dtype in ("i32", "i64") else "i32"  # other widths: the i32 iota converted
    iota = w.sem.bind_temp(out, hint, ir.TileType(iota_dtype, shape), ir.Call("iota", (ir.Shape(shape),)))
    if iota_dtype != dtype:
        iota = w.sem.convert(iota, dtype, out, hint)
    if (start.kind, step.kind) == ("const", "const") and (start.py, step.py) == (0, 1):
        iota.iota_offset = Value("const", py=0)
        iota.nonneg = True
        return iota
    result = iota.expr
    if not (step.kind == "const" and step.py == 1):
        result = ir.Binary("*", result, w.sem.splat(step, dtype, shape, out, hint, node).expr)
    if not (start.kind == "const" and start.py == 0):
        result = ir.Binary("+", result, w.sem.splat(start, dtype, shape, out, hint, node).expr)
    return w.sem.bind_temp(out, hint, ir.TileType(dtype, shape), result)


@ct_op("where")
def ct_where(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["cond", "x", "y"], 3)
    with w.operands(None):  # the condition only chooses: an array's tile there is not computed with
        cond = w.tile_arg(args["cond"], out, hint, numbers=True)
    if w.state.union.find(cond.dtype).startswith("$"):
        # A tile of an array launched as the condition (a dropout's keep mask): the array takes
        # bool alone (cuTile Python converts a numeric condition, which is not checked here).
        w.sem.common_dtype(cond.dtype, "bool", args["cond"], pin=True)
        cond = w.sem.convert(cond, "bool", out, hint)
    if w.state.union.find(cond.dtype) != "bool":
        raise w.error(args["cond"], "ct.where needs a bool tile (a comparison) as its condition")
    x, y = w.expr(args["x"], out, hint), w.expr(args["y"], out, hint)
    if "tile" not in (x.kind, y.kind):
        # Two numbers: a tile of the condition's shape, of their common dtype (an integer scalar
        # beside a float is an f32, as cuTile Python promotes it).
        x, y = w.sem.promote_float_literal(x, y, out, hint)
        scalars = [v for v in (x, y) if v.kind == "scalar"]
        dtype = (w.sem.scalar_binop(node, "+", x, y).dtype if scalars else
                 "f32" if any(isinstance(v.py, float) for v in (x, y)) else "i32")
        x = w.sem.splat(x, dtype, cond.shape, out, hint, node)
    type_, a, b = w.sem.tile_operands(node, x, y, out, hint)
    shape = w.sem.broadcast_shape(cond.shape, type_.shape, node)
    cond = w.sem.broadcast(cond, shape, out, hint)
    va = w.sem.broadcast(Value("tile", type_, a), shape, out, hint)
    vb = w.sem.broadcast(Value("tile", type_, b), shape, out, hint)
    return w.sem.bind_temp(out, hint, ir.TileType(type_.dtype, shape), ir.Call("select", (cond.expr, va.expr, vb.expr)))


def _bitwise(op: type[ast.operator]):
    """The handler of ct.bitwise_and/or/xor/lshift/rshift: the operator `&`, `|`, `^`, `<<` or `>>`."""
    def handler(w: Walker, node: ast.Call, out, hint) -> Value:
        args = w.call_args(node, ["x", "y"], 2)
        return w.expr(ast.copy_location(ast.BinOp(left=args["x"], op=op(), right=args["y"]), node), out, hint)
    return handler


for _name, _op in (("bitwise_and", ast.BitAnd), ("bitwise_or", ast.BitOr), ("bitwise_xor", ast.BitXor),
                   ("bitwise_lshift", ast.LShift), ("bitwise_rshift", ast.RShift)):
    register(_name, _bitwise(_op))


@ct_op("bitwise_not")
def ct_bitwise_not(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["x"], 1)
    return w.expr(ast.copy_location(ast.UnaryOp(op=ast.Invert(), operand=args["x"]), node), out, hint)


@ct_op("negative")
def ct_negative(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["x"], 1)
    return w.expr(ast.copy_location(ast.UnaryOp(op=ast.USub(), operand=args["x"]), node), out, hint)


def _as_operator(op: ast.operator | ast.cmpop):
    """The handler of a function cuTile Python documents as an operator's (`ct.floordiv(x, y)` is
    `x // y`, `ct.less(x, y)` is `x < y`): the operator's lowering, on the same operands."""
    def handler(w: Walker, node: ast.Call, out, hint) -> Value:
        args = w.call_args(node, ["x", "y"], 2)
        if isinstance(op, ast.operator):
            expr = ast.BinOp(left=args["x"], op=op, right=args["y"])
        else:
            expr = ast.Compare(left=args["x"], ops=[op], comparators=[args["y"]])
        return w.expr(ast.copy_location(expr, node), out, hint)
    return handler


for _name, _op in (("pow", ast.Pow()), ("floordiv", ast.FloorDiv()), ("mod", ast.Mod()), ("equal", ast.Eq()),
                   ("not_equal", ast.NotEq()), ("less", ast.Lt()), ("less_equal", ast.LtE()),
                   ("greater", ast.Gt()), ("greater_equal", ast.GtE())):
    register(_name, _as_operator(_op))


@ct_op("atan2")
def ct_atan2(w: Walker, node: ast.Call, out, hint) -> Value:
    """The quadrant-correct arc tangent of `x1 / x2`, of float tiles promoted together."""
    args = w.call_args(node, ["x1", "x2"], 2)
    x1, x2 = (w.as_tile(w.expr(args[k], out, hint), args[k], out, hint, numbers=True) for k in ("x1", "x2"))
    type_, a, b = w.sem.tile_operands(node, x1, x2, out, hint)
    if not w.sem.float_only(type_.dtype):
        raise w.error(node, "ct.atan2 takes float tiles")
    return w.sem.bind_temp(out, hint, type_, ir.Call("atan2", (a, b)))


@ct_op("isnan")
def ct_isnan(w: Walker, node: ast.Call, out, hint) -> Value:
    """Whether each element is NaN: `x != x` (unordered), as cuTile Python lowers it (a number:
    folded)."""
    args = w.call_args(node, ["x"], 1)
    x = w.expr(args["x"], out, hint)
    if x.kind == "const" and isinstance(x.py, (int, float)):
        return Value("const", py=math.isnan(x.py))
    x = w.as_tile(x, args["x"], out, hint)
    if not w.sem.float_only(x.dtype):
        raise w.error(node, "ct.isnan takes a float tile")
    x = w.sem.named(x, out, hint)
    return w.sem.bind_temp(out, hint, ir.TileType("bool", x.shape),
                           w.tile_comparison("!=", x.expr, x.expr, x.dtype))


@ct_op("divmod")
def ct_divmod(w: Walker, node: ast.Call, out, hint) -> Value:
    """`(x // y, x % y)`, each operand evaluated once."""
    args = w.call_args(node, ["x", "y"], 2)
    x, y = (w.expr(args[k], out, hint) for k in ("x", "y"))
    x, y = (w.sem.named(v, out, hint) if v.kind in ("tile", "scalar") else v for v in (x, y))
    return Value("tuple", py=[w.sem.binop(ast.copy_location(ast.BinOp(left=args["x"], op=op, right=args["y"]), node),
                                          x, y, out, hint) for op in (ast.FloorDiv(), ast.Mod())])


def permuted(w: Walker, x: Value, axes: list[int], out, hint) -> Value:
    """`x` with its axes in the order `axes`."""
    shape = tuple(x.shape[a] for a in axes)
    return w.sem.bind_temp(out, hint, ir.TileType(x.dtype, shape),
                           ir.Call("permute", (x.expr, ir.Lit(f"const_array![{', '.join(map(str, axes))}]"))))


@ct_op("cumsum")
def ct_cumsum(w: Walker, node: ast.Call, out, hint) -> Value:
    """An inclusive prefix sum along one axis: cutile's scan_sum, from the dtype's zero."""
    args = w.call_args(node, ["x", "axis", "reverse", "rounding_mode", "flush_to_zero"], 1)
    x = w.tile_arg(args["x"], out, hint)
    if _rounding(w, args.get("rounding_mode"), out) is not None or _ftz(w, args.get("flush_to_zero"), out) \
            != "ftz::Disabled":
        raise w.error(node, "ct.cumsum with rounding_mode or flush_to_zero is not supported yet")
    rank = len(x.shape)
    axis = w.sem.int_const(w.expr(args["axis"], out), node) if "axis" in args else 0
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank:
        raise w.error(node, f"axis out of range for a rank-{rank} tile")
    reverse = w.expr(args["reverse"], out) if "reverse" in args else Value("const", py=False)
    if reverse.kind != "const" or not isinstance(reverse.py, bool):
        raise w.error(node, "reverse must be True or False")
    dtype = w.state.union.find(x.dtype)
    if dtype == "bool":
        raise w.error(node, "ct.cumsum of a bool tile is not supported yet")
    if dtype.startswith("$"):
        w.sem.needs_constants(x.dtype, node, "a scan's zero")
    zero = ir.Lit(f"0{dtype}") if dtype in ("i32", "i64") else float_literal(0.0, dtype) if dtype in (
        "f32", "f64") else w.sem.bind_temp(out, f"{hint}_zero", ir.ScalarType(x.dtype),
                                           ir.Call("convert_scalar", (float_literal(0.0),))).expr
    # cutile 0.5.0's scan_sum writes `dim = 0` into the Tile IR whatever axis it is given
    # (compile_scan_op): another axis is brought to the front, scanned, and put back. Integer
    # sums come out the same in any order; float ones do not: tileiras associates a scan along the
    # leading axis of the permuted tile otherwise than along the axis cuTile Python scans (8 of 48
    # fuzz kernels with such scans differed on the H100, up to 4 f16 ulps).
    if axis != 0 and not w.state.survey and not w.sem.int_tile(x.dtype):
        raise w.error(node, f"ct.cumsum of a float tile along axis {axis} of {rank} is not supported: cutile 0.5.0 "
                            "scans axis 0 only, and through a permute a float scan rounds otherwise than cuTile "
                            "Python's")
    order = [axis] + [a for a in range(rank) if a != axis]
    if axis != 0:
        x = permuted(w, x, order, out, hint)
    scanned = w.sem.bind_temp(out, hint, x.type, ir.Call("scan_sum", (
        x.expr, ir.Lit("0i32"), ir.Lit("reverse::Reverse" if reverse.py else "reverse::Forward"), zero)))
    return permuted(w, scanned, [order.index(a) for a in range(rank)], out, hint) if axis != 0 else scanned


@ct_op("cdiv")
def ct_cdiv(w: Walker, node: ast.Call, out, hint) -> Value:
    args = w.call_args(node, ["a", "b"], 2)
    a, b = w.expr(args["a"], out), w.expr(args["b"], out)
    if a.kind == "const" and b.kind == "const":
        return Value("const", py=-(-a.py // b.py))
    return Value("scalar", ir.ScalarType("i32"), ir.Call("ceil_div", (w.sem.i32(a, node, out), w.sem.i32(b, node, out))))


def _unary_math(name: str):
    """The handler of a float function of one tile and no modes (`ct.log`, `ct.sin`, ...)."""
    def handler(w: Walker, node: ast.Call, out, hint) -> Value:
        args = w.call_args(node, ["x"], 1)
        x = _float_tile(w, args["x"], out, hint, integers=name not in ("floor", "ceil"))
        return Value("tile", x.type, ir.Call(name, (x.expr,)))
    return handler


def _reduction(func: str):
    """The handler of a reduction (`ct.sum`, `ct.max`, ...): cutile's `func` over the axes given."""
    def handler(w: Walker, node: ast.Call, out, hint) -> Value:
        return _reduce(w, node, func, out, hint)
    return handler


for _name in UNARY_MATH:
    if _name not in OPS:  # ct.tanh has rounding modes: a handler of its own
        register(_name, _unary_math(_name))
for _name, _func in REDUCTIONS.items():
    register(_name, _reduction(_func))
