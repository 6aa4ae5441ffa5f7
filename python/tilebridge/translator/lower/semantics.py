"""cuTile Python's rules, made explicit for Rust: promotion of dtypes and literals, broadcasting,
Python's integer semantics (`//` floors, `%` takes the divisor's sign), which arrays hold integers,
and the operators on tiles and scalars. It works on `Value`s and appends the statements a value
needs; evaluating Python expressions is the walker's job."""

from __future__ import annotations

import ast
from dataclasses import replace

from ... import dtypes
from ...dtypes import COMPUTED_ARRAY_DTYPES, FLOAT_RANK
from .. import ir
from ..rust_syntax import constant_value, float_literal, int_literal, number_literal, rust_name
from .bindings import Binding, Value, translation_time
from .dtype_tests import DTypeTests
from .facts import fold, show_type, with_article
from .integers import Integers
from .products import Products
from .promotions import Promotions
from .state import KernelState

# Python's binary operators as Rust's (`//` is corrected where it can differ: see `binop`).
RUST_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "/", ast.BitAnd: "&",
                  ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}


class Semantics(Promotions, Integers, DTypeTests, Products):
    """The typing rules of one kernel's lowering (its dtype classes and facts live in `state`)."""

    def __init__(self, state: KernelState):
        self.state = state
        self.error = state.error

    def as_carried(self, target: ast.Name, prev: Binding, val: Value, out: list[ir.Stmt]) -> Value:
        """`val` as the type of the variable it updates. Integers stay what the variable holds
        (an index array's dtype plus an i32 count, as Python's promotion keeps the wider)."""
        if prev.val.type == val.type:
            return val
        if prev.val.kind == val.kind == "tile" and prev.val.shape == val.shape and self.made_one(prev.val.dtype,
                                                                                                  val.dtype):
            # cuTile Python takes a loop whose variable keeps its dtype at this launch
            return Value("tile", prev.val.type, val.expr, nonneg=val.nonneg)
        was, now = self.state.union.find(prev.val.dtype), self.state.union.find(val.dtype)
        if prev.val.kind == val.kind == "tile" and prev.val.shape == val.shape and was.startswith("$") and \
                now.startswith("$") and was not in self.state.promoted and now not in self.state.promoted:
            # A tile of one array's dtype updated with one of another's: cuTile Python takes the loop
            # only where the two arrays have one dtype, so they are one class (the launcher takes them alike).
            self.state.union.union(was, now)
            return Value("tile", prev.val.type, val.expr, nonneg=val.nonneg)
        if prev.val.kind == val.kind == "tile" and prev.val.shape == val.shape and was.startswith("$") and \
                now in FLOAT_RANK and self.float_only(was):
            # An array's tile updated with an f32 one: cuTile Python takes the loop only where the
            # array is f32, so the launcher takes that dtype alone (the conversion is the identity).
            self.state.stored_dtypes.setdefault(was[1:], set()).add(now)
            return self.convert(val, prev.val.dtype, out, target.id)
        if prev.val.kind == val.kind == "tile" and prev.val.shape == val.shape:
            integers = self.int_tile(prev.val.dtype), self.int_tile(val.dtype)
            if integers[0] != integers[1]:  # an integer variable updated with an array's values, or the
                # reverse: that array holds integers, if it is an array's at all
                integers = (self.integer(val.dtype if integers[0] else prev.val.dtype),) * 2
            if all(integers):
                return self.convert(val, prev.val.dtype, out, target.id)
        raise self.error(target, f"'{target.id}' changes type inside the loop "
                                 f"({show_type(prev.val.type)} -> {show_type(val.type)})")

    def common_branch_dtype(self, a: ir.Type, b: ir.Type) -> ir.TileType | None:
        """Two branches bind one name to tiles of one shape, one of an array's dtype, the other of
        a concrete dtype (e.g. `mean = ct.sum(x) / D` or `mean = ct.gather(Mean, rows)` under a
        ct.Constant): cuTile Python traces one branch per specialization, Rust types both. The
        array's dtype is restricted to the concrete one (the launcher refuses others), so the
        conversion that makes the branches agree changes nothing. None where that does not apply."""
        if not (isinstance(a, ir.TileType) and isinstance(b, ir.TileType) and a.shape == b.shape):
            return None
        da, db = self.state.union.find(a.dtype), self.state.union.find(b.dtype)
        if da == db or da.startswith("$") == db.startswith("$"):
            return None
        generic, concrete = (da, db) if da.startswith("$") else (db, da)
        self.state.stored_dtypes.setdefault(generic[1:], set()).add(concrete)
        return ir.TileType(concrete, a.shape)

    def zero(self, type_: ir.Type, out: list[ir.Stmt], hint: str) -> ir.Expr | None:
        """A placeholder value of `type_` (overwritten by both branches before any use)."""
        if isinstance(type_, ir.ScalarType):
            return {"i32": ir.Lit("0i32"), "i64": ir.Lit("0i64"), "f32": ir.Lit("0.0f32"),
                    "bool": ir.Lit("false")}.get(type_.dtype)
        if isinstance(type_, ir.TileType) and self.state.union.find(type_.dtype) != "bool":
            tile = self.splat(Value("const", py=0), type_.dtype, type_.shape, out, f"{hint}_init", self.state.src.func)
            return tile.expr
        return None

    def positive_step(self, val: Value, step: ir.Expr | None) -> bool:
        """A loop step known positive: a positive literal, or a ct.Constant then checked so at launch."""
        if step is None or (val.kind == "const" and isinstance(val.py, int) and val.py > 0):
            return True
        if val.kind == "scalar" and val.dim is not None:
            self.require_positive(val)
            return True
        return False

    def new_axes(self, node: ast.Subscript, base: Value, out: list[ir.Stmt], hint: str) -> Value:
        """`t[:, None]`, `t[None, :]`: full slices and new axes, i.e. a reshape."""
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        shape, axis = [], 0
        for item in items:
            if isinstance(item, ast.Constant) and item.value is None:
                shape.append(1)
            elif isinstance(item, ast.Slice) and item.lower is item.upper is item.step is None:
                if axis >= len(base.shape):
                    raise self.error(node, "more axes than the tile has")
                shape.append(base.shape[axis])
                axis += 1
            else:
                raise self.error(node, "indexing a tile is supported with `:` and `None` only")
        if axis != len(base.shape):
            shape += list(base.shape[axis:])
        shape_t = tuple(shape)
        result = self.bind_temp(out, hint, ir.TileType(base.dtype, shape_t), ir.Method(base.expr, "reshape",
                                                                                        (ir.Shape(shape_t),)))
        result.nonneg = base.nonneg
        return result

    def integer_comparison(self, op: ast.cmpop, left: Value, right: Value) -> None:
        """An array's values compared for equality with integers, or ordered against an integer
        scalar (a count, a position), are integers (see `_integer`)."""
        for a, b in ((left, right), (right, left)):
            if a.kind in ("tile", "scalar") and b.kind in ("tile", "scalar") and \
                    self.state.union.find(a.dtype).startswith("$") and \
                    self.state.union.find(b.dtype) in ("i32", "i64") and \
                    (isinstance(op, (ast.Eq, ast.NotEq)) or b.kind == "scalar"):
                self.integer(a.dtype)

    def and_(self, a: Value, b: Value, op: str = "&&") -> Value:
        """`a and b` (`op` "&&" or "&"), `a or b` ("||" or "|") of bools."""
        conj = op in ("&&", "&")
        if a.kind == "const":
            return b if bool(a.py) == conj else a
        if b.kind == "const":
            return a if bool(b.py) == conj else b
        return Value("scalar", ir.ScalarType("bool"), ir.Binary(op, a.expr, b.expr))

    def dim_val(self, d: ir.Dim) -> Value:
        if isinstance(d, int):
            return Value("const", py=d)
        return Value("scalar", ir.ScalarType("i32"), ir.Var(rust_name(d)), dim=d)

    def i32(self, val: Value, node: ast.AST, out: list[ir.Stmt] | None = None) -> ir.Expr:
        """`val` where an i32 scalar is needed (an index, a bound, a count). A 0-d tile is a scalar
        in cuTile Python: its value, through `out`; an index array's values are converted."""
        if val.kind == "const" and isinstance(val.py, int) and not isinstance(val.py, bool):
            return ir.Lit(f"{val.py}i32")
        if val.kind == "scalar" and val.dtype == "i32":
            return val.expr
        if val.kind == "scalar" and self.state.survey and self.state.union.find(val.dtype).startswith("$"):
            self.integer(val.dtype)  # an array's value used as an index (survey only: see `.item()`)
            return val.expr
        if val.kind == "tile" and val.shape == () and out is not None and self.integer(val.dtype):
            return self.scalar_of(self.convert(val, "i32", out, "index"), out, "index").expr
        raise self.error(node, "expected an i32 scalar (an index, a bound or a count)")

    def int_const(self, val: Value, node: ast.AST) -> int:
        if val.kind == "const" and isinstance(val.py, int) and not isinstance(val.py, bool):
            return val.py
        raise self.error(node, "expected an integer constant")

    def bind_temp(self, out: list[ir.Stmt], hint: str, type_: ir.Type, value: ir.Expr) -> Value:
        name = self.state.fresh(hint)
        self.state.temps.add(name)
        self.state.temp_defs[name] = value
        out.append(ir.Let(name, type_, value, self.state.line))
        return Value("tile" if isinstance(type_, ir.TileType) else "scalar", type_, ir.Var(name))

    def scalar_of(self, tile: Value, out: list[ir.Stmt], hint: str) -> Value:
        """The value of a 0-d tile, as a scalar. cutile's tile_to_scalar leaves the JIT's own type
        of the value a tile, against which it cannot fold constants ("expected a scalar element
        type" for `v - (B - 1)`); convert_scalar after it gives the value a scalar's type."""
        type_ = ir.ScalarType(self.state.union.find(tile.dtype))
        raw = self.bind_temp(out, hint, type_, ir.Call("tile_to_scalar", (tile.expr,)))
        return self.bind_temp(out, hint, type_, ir.Call("convert_scalar", (raw.expr,)))

    def tested(self, cond: Value, out: list[ir.Stmt]) -> Value:
        """A condition as a Rust `if` or `while` tests it: a 0-d tile of bools as its scalar (cuTile
        Python's comparisons of 0-d tiles give one); anything else as it is."""
        if cond.kind == "tile" and cond.shape == () and self.state.union.find(cond.dtype) == "bool":
            return self.scalar_of(cond, out, "cond")
        return cond

    def computes_with(self, val: Value) -> None:
        """Notes that the kernel computes with `val` (it is an operand of an operation that does not
        only move values: `Walker.operands`): the arrays whose dtype it has are computed with, and
        their launchers take what the translation's rules for arithmetic hold for (floats)."""
        if val.kind in ("tile", "scalar") and val.type is not None:
            self.computes_with_dtype(val.dtype)

    def computes_with_dtype(self, dtype: str) -> None:
        """`computes_with` of a value of `dtype`: where it is an array's dtype, or a promotion of
        several, the arrays of those classes are computed with."""
        if not self.generic(dtype):
            return
        for root in self.classes_of(dtype):
            self.state.computed_seen.update(self.state.members(root))

    def narrow_conversion(self, val: Value, dtype: str) -> None:
        """Where a tile of an array's dtype is converted to a concrete one or back (`astype`, a
        store's cast), the arrays of that dtype take only the dtypes cutile converts so
        (`dtypes.cutile_converts`); between two dtypes bound at launch (arrays', promotions,
        dtypes derived from an array's), both are computed with."""
        src, dst = self.state.union.find(val.dtype), self.state.union.find(dtype)
        if src not in dtypes.DTYPES and dst not in dtypes.DTYPES:  # both bound at launch
            self.computes_with_dtype(src)
            self.computes_with_dtype(dst)
            return
        for root, ok in ((src, lambda d: dtypes.cutile_converts(d, dst)), (dst, lambda d: dtypes.cutile_converts(src, d))):
            if root.startswith("$"):
                self.state.narrow(root, ok)

    def convert(self, val: Value, dtype: str, out: list[ir.Stmt], hint: str) -> Value:
        if self.state.union.find(val.dtype) == self.state.union.find(dtype):
            return val
        self.narrow_conversion(val, dtype)
        if self.state.union.find(dtype) in ("i32", "i64"):
            self.integer(val.dtype)  # an array's values taken as integers
        if self.int_tile(val.dtype) and self.int_tile(dtype):
            have, want = self.state.pinned(val.dtype), self.state.pinned(dtype)
            if (have is not None and have == want) or (have in dtypes.DTYPES and want in dtypes.DTYPES):
                return self.integers_as(val, have, dtype, want, out, hint)
            if (launched := self.integers_by_launch(val, dtype, out, hint)) is not None:
                return launched
            # Integer types bound at launch on both sides: through f64, exact below 2**53.
            wide = self.bind_temp(out, hint, ir.TileType("f64", val.shape), ir.Call("convert_tile", (val.expr,)))
            return self.bind_temp(out, hint, ir.TileType(dtype, val.shape), ir.Call("convert_tile", (wide.expr,)))
        if self.state.union.find(val.dtype) == "bool":
            # cutile converts no bools: True and False are chosen as 1 and 0 of the target dtype.
            ones, zeros = (self.splat(Value("const", py=v), dtype, val.shape, out, hint, self.state.src.func)
                           for v in (1, 0))
            return self.bind_temp(out, hint, ir.TileType(dtype, val.shape),
                                   ir.Call("select", (val.expr, ones.expr, zeros.expr)))
        return self.bind_temp(out, hint, ir.TileType(dtype, val.shape), ir.Call("convert_tile", (val.expr,)))

    def splat(self, val: Value, dtype: str, shape: tuple[ir.Dim, ...], out: list[ir.Stmt], hint: str,
               node: ast.AST) -> Value:
        """A compile-time or scalar value as a tile of `dtype` and `shape`."""
        if val.kind == "const":
            pinned = self.state.pinned(dtype)
            wide_ints = ("i32", "i64", "u32", "u64")  # the integers cutile makes constants of
            # An array's dtype that is f64 at every launch takes an f64 literal of the value cuTile
            # Python gives it (`constant_value`); f16 and bf16 ones an f32 literal converted, as below.
            concrete = dtype if dtype in FLOAT_RANK or dtype in wide_ints else (
                pinned if pinned in wide_ints or pinned == "f64" else "i32" if self.index_class(dtype) else "f32")
            if concrete in ("f16", "bf16", "tf32"):
                concrete = "f32"
            if concrete == "f32" and type(val.py) is int and self.int_tile(dtype):
                # integers of a family's class (an integer of each width at launch): a float literal
                # converted, exact in f32 up to 2**24 and in f64 up to 2**53
                concrete = next((f for f, bits in (("f32", 24), ("f64", 53)) if exact_in(val.py, bits)), None)
                if concrete is None:
                    raise self.error(node, f"{val.py} as a constant of integers of every width is not supported "
                                           "(beyond 2**53); state the arrays' dtype (--dtype)")
            if concrete in FLOAT_RANK:
                lit = float_literal(constant_value(val.py, concrete), concrete)
            else:
                if isinstance(val.py, float):
                    raise self.error(node, "a float literal cannot combine with an integer tile")
                if concrete[0] == "u" and not 0 <= int(val.py) < 2 ** 31:
                    raise self.error(node, f"{int(val.py)} as a {concrete} constant is not supported yet (cutile "
                                           "0.5.0's JIT reads each literal as an i32)")
                lit = int_literal(int(val.py), concrete)
            tile = self.scalar_tile(lit, concrete, shape, out, hint)
            if concrete != dtype:
                return self.convert(self.named(tile, out, hint), dtype, out, hint)
            return tile
        if val.kind == "scalar":
            tile = self.scalar_tile(val.expr, val.dtype, shape, out, hint)
            if val.dtype != dtype:
                tile_is_float = dtype in FLOAT_RANK or self.generic(dtype)
                if not tile_is_float and self.state.survey and self.state.union.find(val.dtype).startswith("$"):
                    self.integer(val.dtype)  # an array's value (`.item()`) with an integer tile
                elif not tile_is_float and not (self.int_tile(val.dtype) and self.int_tile(dtype)):
                    # a float scalar with an integer tile (an integer one is converted: `convert`)
                    raise self.error(node, f"a {val.dtype} scalar cannot combine with a {dtype} tile")
                return self.convert(self.named(tile, out, hint), dtype, out, hint)
            return tile
        raise self.error(node, f"{with_article(val.kind)} cannot be used as a tile operand")

    def named(self, val: Value, out: list[ir.Stmt], hint: str) -> Value:
        """`val` bound to a typed name, unless it is one already."""
        return val if isinstance(val.expr, ir.Var) else self.bind_temp(out, hint, val.type, val.expr)

    def scalar_tile(self, value: ir.Expr, dtype: str, shape: tuple[ir.Dim, ...], out: list[ir.Stmt], hint: str) -> Value:
        """A tile of `shape` holding the scalar `value` everywhere. A 0-d one wraps the scalar (cutile's
        0-d broadcast breaks Tile IR's same-rank rule), under a typed name (rustc cannot infer it)."""
        if shape:
            return Value("tile", ir.TileType(dtype, shape), ir.Call("broadcast_scalar", (value, ir.Shape(shape))))
        return self.bind_temp(out, hint, ir.TileType(dtype, ()), ir.Call("scalar_to_tile", (value,)))

    def reshaped(self, val: Value, shape: tuple[ir.Dim, ...], out: list[ir.Stmt], hint: str) -> Value:
        """The tile `val` at `shape` (as many elements, in row-major order), bound to a name."""
        return self.bind_temp(out, hint, ir.TileType(val.dtype, shape),
                              ir.Method(val.expr, "reshape", (ir.Shape(shape),)))

    def broadcast(self, val: Value, shape: tuple[ir.Dim, ...], out: list[ir.Stmt], hint: str) -> Value:
        if val.shape == shape:
            return val
        if isinstance(val.expr, ir.Var):
            hint = f"{val.expr.name}_bcast"
        if len(val.shape) < len(shape):
            padded = (1,) * (len(shape) - len(val.shape)) + val.shape
            val = self.reshaped(val, padded, out, hint)
            if padded == shape:
                return val
        return self.bind_temp(out, hint, ir.TileType(val.dtype, shape),
                              ir.Method(val.expr, "broadcast", (ir.Shape(shape),)))

    def broadcast_shape(self, a: tuple, b: tuple, node: ast.AST) -> tuple:
        n = max(len(a), len(b))
        a = (1,) * (n - len(a)) + a
        b = (1,) * (n - len(b)) + b
        shape = []
        for x, y in zip(a, b):
            if x == y or self.dim_value(y) == 1:
                shape.append(x)
            elif self.dim_value(x) == 1:
                shape.append(y)
            else:
                raise self.error(node, f"tile shapes {a} and {b} do not broadcast")
        return tuple(shape)

    def dim_value(self, d: ir.Dim) -> ir.Dim:
        """A tile dimension, as a number where this branch knows the ct.Constant naming it."""
        return self.state.facts.get(ir.Var(rust_name(d)), d) if isinstance(d, str) else d

    def common_dtype(self, a: str, b: str, node: ast.AST, promote: bool = False, pin: bool = False) -> str:
        """The dtype tiles of dtypes `a` and `b` meet in. Where both are arrays' (float) dtypes and
        the operation converts its operands (`promote`: arithmetic, comparisons, `ct.where`,
        matmul), their promotion at each launch, as cuTile Python's; elsewhere they are tied into
        one class (the launcher requires them equal). With `pin` (an operation that takes equal
        dtypes, whose caller converts its operands to the result), an array's dtype meeting a
        concrete one is pinned to it: the launcher takes that dtype alone, as cuTile Python
        compiles the operation only there."""
        ra, rb = self.state.union.find(a), self.state.union.find(b)
        if ra == rb:
            return a
        pa, pb = self.state.stated_one(ra), self.state.stated_one(rb)
        if promote and self.generic(ra) and self.generic(rb) and pa in dtypes.DTYPES and pb in dtypes.DTYPES and \
                pa != pb and dtypes.promote(pa, pb) is not None:
            # arrays of one dtype each at every launch (stated): the promotion of the two
            return a if self.state.survey else dtypes.promote(pa, pb)
        if self.generic(ra) and self.generic(rb):
            classes = self.classes_of(ra) | self.classes_of(rb)
            if promote and self.state.promote and not self.state.survey and self.float_only(ra) and \
                    self.float_only(rb):
                return self.promotion(classes)
            if ra.startswith("$") and rb.startswith("$"):
                self.state.union.union(ra, rb)
                return a
            if any(not c.startswith("$") for c in classes):
                raise self.error(node, "this mixes tiles of arrays' dtypes with other dtypes where they cannot "
                                       "be promoted here; make the dtypes explicit with .astype()")
            first, *others = sorted(classes)
            for c in others:
                self.state.union.union(first, c)
            return self.state.union.find(first)
        concrete = rb if self.generic(ra) else ra
        generic = ra if self.generic(ra) else rb
        if concrete in ("i32", "i64") and self.index_class(generic):
            return concrete  # an index array's values, converted to the kernel's integers
        if concrete in ("i32", "i64") and self.state.survey:
            return generic  # the survey goes on: later uses may tell it is an index
        classes = self.classes_of(generic)
        stated = [d for a in self.state.arrays if self.state.union.find(f"${a}") in classes
                  for d in self.state.user_dtypes.get(a, ())]
        if concrete == "f32" and all(dtypes.stated(d) in COMPUTED_ARRAY_DTYPES for d in stated):
            # An array's dtype (f32, f16 or bf16 unless stated otherwise) with f32: cuTile Python promotes to f32.
            return "f32"
        if promote and self.state.promote and self.generic(generic) and self.float_only(generic) and \
                concrete in dtypes.DTYPES:
            # an array's float dtype with a concrete one (an f16 tile, an i32 count): their
            # promotion at each launch, as cuTile Python's (the survey goes on with the array's)
            return generic if self.state.survey else self.promotion(classes | {concrete})
        if promote and concrete in FLOAT_RANK and self.int_tile(generic):
            # integers of an array's dtype (an integer family's) with a float: the float, as cuTile
            # Python promotes an integer with a float
            return concrete
        one = self.state.stated_one(generic)
        if promote and one in dtypes.DTYPES and dtypes.promote(one, concrete) is not None:
            # an array stated as one dtype: the promotion of that dtype
            return generic if self.state.survey else dtypes.promote(one, concrete)
        if pin and concrete in dtypes.DTYPES and not self.state.path:  # (not for one branch on constants alone)
            for c in classes:
                self.state.stored_dtypes.setdefault(c[1:], set()).add(concrete)
            return concrete
        if self.generic(ra) or self.generic(rb):
            raise self.error(node, f"this mixes a tile of an array's dtype with a {concrete} tile; "
                                   "make the dtypes explicit with .astype()")
        promoted = dtypes.promote(ra, rb)  # an integer gives way to a float, the narrower to the wider
        if promoted is None:
            raise self.error(node, f"cuTile Python does not mix {ra} and {rb} tiles; cast one operand with .astype()")
        return promoted

    def nonneg(self, v: Value) -> bool:
        if v.kind == "const":
            return isinstance(v.py, (int, float)) and v.py >= 0
        return v.nonneg

    def binop(self, node: ast.BinOp, lhs: Value, rhs: Value, out: list[ir.Stmt], hint: str) -> Value:
        if "tuple" in (lhs.kind, rhs.kind):
            return self.tuple_binop(node, lhs, rhs)
        if lhs.kind == "const" and rhs.kind == "const":
            try:
                value = fold(node.op, lhs.py, rhs.py)
            except (ArithmeticError, TypeError, ValueError) as e:  # 1 / 0, a shift by -1 ...
                raise self.error(node, f"this cannot be computed ({type(e).__name__}: {e})") from None
            if isinstance(value, complex):  # (-1.5) ** 0.5
                raise self.error(node, "this is not a real number (Python computes a complex one)")
            return Value("const", py=value)
        lhs, rhs = self.promote_float_literal(lhs, rhs, out, hint)
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and "tile" not in (lhs.kind, rhs.kind) and any(
                (v.kind == "scalar" and v.dtype in FLOAT_RANK) or (v.kind == "const" and isinstance(v.py, float))
                for v in (lhs, rhs)):
            # Python's // and % of floats, as cuTile Python computes them: on 0-d tiles
            a, b = (self.zero_d(v, out, hint, node) for v in (lhs, rhs))
            tile = (self.tile_mod(node, a, b, out, hint) if isinstance(node.op, ast.Mod) else
                    self.tile_binop(node, "/", a, b, out, hint))
            return self.scalar_of(tile, out, hint)
        if isinstance(node.op, ast.Mod):
            return replace(self.scalar_mod(node, lhs, rhs, out, hint), bid_split=self.split_block_id("%", lhs, rhs))
        if isinstance(node.op, ast.MatMult) and lhs.kind == rhs.kind == "tile":
            return self.matmul(node, lhs, rhs, out, hint)
        if isinstance(node.op, ast.Pow):
            return self.power(node, lhs, rhs, out, hint)
        op = RUST_OPERATORS.get(type(node.op))
        if op is None:
            raise self.error(node, f"the operator {type(node.op).__name__} is not supported yet")
        if "tile" in (lhs.kind, rhs.kind):
            return self.tile_binop(node, op, lhs, rhs, out, hint)
        if isinstance(node.op, ast.Div):
            lhs, rhs = (self.as_f32(v, out, hint) for v in (lhs, rhs))
        if isinstance(node.op, ast.FloorDiv):
            self.require_positive(rhs, scalar=True)
        val = self.scalar_binop(node, op, lhs, rhs)
        if not isinstance(node.op, ast.Sub):
            val.nonneg = self.nonneg(lhs) and self.nonneg(rhs)
        if isinstance(node.op, ast.FloorDiv) and not val.nonneg:
            assert isinstance(val.expr, ir.Binary)
            val = self.floor_quotient(val.expr.lhs, val.expr.rhs, val.dtype, hint, out)
        if isinstance(node.op, ast.FloorDiv):
            val.bid_split = self.split_block_id("//", lhs, rhs)
        return val

    def split_block_id(self, op: str, lhs: Value, rhs: Value) -> tuple[int, str, str] | None:
        """`(axis, op, P)` where `lhs` is exactly ct.bid(axis), `rhs` an integer parameter P the kernel
        never reassigns: a block index split in two, which may index two dimensions of an output."""
        if lhs.bid_axis is None or rhs.kind != "scalar" or not isinstance(rhs.expr, ir.Var):
            return None
        param = self.state.fixed_int_params.get(rhs.expr.name)
        return None if param is None else (lhs.bid_axis, op, param)

    def power(self, node: ast.BinOp, base: Value, exponent: Value, out: list[ir.Stmt], hint: str) -> Value:
        """`x ** y` of tiles, as cuTile Python computes it: a float tile to an integer power (a
        number or an i32 scalar or tile) is Tile IR's `fpowi` with an i32 exponent (cuTile Python
        emits it for tileiras 13.4, the toolchain here); anything else float is `pow` of the operands
        promoted and broadcast as for `+`."""
        if "tile" not in (base.kind, exponent.kind):  # scalars are 0-d tiles to cuTile Python
            base, exponent = (self.zero_d(v, out, hint, node) for v in (base, exponent))
        int_exponent = (exponent.kind == "const" and isinstance(exponent.py, int) and not isinstance(exponent.py, bool)
                        ) or (exponent.kind in ("scalar", "tile") and self.state.union.find(exponent.dtype) == "i32")
        if int_exponent and base.kind != "tile" and (
                (base.kind == "const" and isinstance(base.py, float)) or (base.kind == "scalar" and base.dtype == "f32")):
            base = self.zero_d(base, out, hint, node)  # `2.0 ** i`: the float as an f32 tile, as cuTile Python takes it
        if base.kind == "tile" and self.float_only(base.dtype) and int_exponent:
            if exponent.kind == "const" and not -2**31 <= exponent.py < 2**31:
                raise self.error(node, f"the exponent {exponent.py} does not fit in an i32")
            shape = base.shape if exponent.kind != "tile" else self.broadcast_shape(base.shape, exponent.shape, node)
            x = self.broadcast(base, shape, out, hint)
            e = (self.broadcast(exponent, shape, out, f"{hint}_exp") if exponent.kind == "tile"
                 else self.splat(exponent, "i32", shape, out, f"{hint}_exp", node))
            self.state.unsafe("raises a float tile to integer powers (Tile IR's `fpowi`)",
                              "the exponent is an i32 tile", keeper="the translation keeps it (it makes the "
                              "exponent one)")
            return self.bind_temp(out, hint, ir.TileType(base.dtype, shape), ir.Unsafe(
                ir.Call("fpowi", (x.expr, e.expr)),
                "fpowi's exponent is an i32 tile, as it requires; the power's domain is Tile IR's, as in "
                "cuTile Python, which emits this operation for `**` of a float tile and an integer"))
        type_, a, b = self.tile_operands(node, base, exponent, out, hint)
        if not self.float_only(type_.dtype):
            raise self.error(node, "** of integer tiles is not supported yet")
        return self.bind_temp(out, hint, type_, ir.Call("pow", (a, b)))

    def zero_d(self, v: Value, out: list[ir.Stmt], hint: str, node: ast.AST) -> Value:
        """A scalar or a number as the 0-d tile cuTile Python takes it for: a number of the dtype it
        types the literal (bool, i32 or f32), a scalar of its own."""
        if v.kind == "scalar":
            return self.scalar_tile(v.expr, v.dtype, (), out, hint)
        if v.kind == "const" and isinstance(v.py, bool):
            return self.scalar_tile(ir.Lit("true" if v.py else "false"), "bool", (), out, hint)
        if v.kind == "const" and isinstance(v.py, (int, float)):
            return self.splat(v, "i32" if isinstance(v.py, int) else "f32", (), out, hint, node)
        raise self.error(node, f"{with_article(v.kind)} cannot be a tile here")

    def tuples_equal(self, node: ast.Compare, left: Value, right: Value, out: list[ir.Stmt], hint: str,
                     negate: bool) -> Value:
        """`==` (or, `negate`, `!=`) of two tuples of numbers and scalars, some known only at run
        time: of different lengths, unequal; else every pair of items equal."""
        if len(left.py) != len(right.py):
            return Value("const", py=negate)
        equal: Value = Value("const", py=True)
        for a, b in zip(left.py, right.py):
            if (known := translation_time(a, b)) is not None:
                pair = Value("const", py=known[0] == known[1])
            else:
                pair = Value("scalar", ir.ScalarType("bool"), self.scalar_binop(
                    node, "==", *self.promote_float_literal(a, b, out, hint)).expr)
            equal = self.and_(equal, pair)
        if equal.kind == "const":
            return Value("const", py=equal.py != negate)
        return Value("scalar", ir.ScalarType("bool"), ir.Binary("==", equal.expr, ir.Lit("false"))) if negate else equal

    def tuple_binop(self, node: ast.BinOp, lhs: Value, rhs: Value) -> Value:
        """Tuple arithmetic as cuTile Python has it: `+` of two tuples joins them (their items may
        be any values); nothing else (it refuses `*` by an integer, which Python would repeat by)."""
        if isinstance(node.op, ast.Add) and lhs.kind == rhs.kind == "tuple":
            return Value("tuple", py=[*lhs.py, *rhs.py])
        raise self.error(node, f"{type(node.op).__name__} of {with_article(lhs.kind)} and {with_article(rhs.kind)}: "
                               "cuTile Python takes + of two tuples only")

    @staticmethod
    def meets_float_literal(lhs: Value, rhs: Value) -> bool:
        """An integer scalar and a float (a literal, or an f32 scalar) in one operation."""
        def is_float(v: Value) -> bool:
            return (v.kind == "const" and isinstance(v.py, float)) or (v.kind == "scalar" and v.dtype == "f32")

        def is_int(v: Value) -> bool:
            return v.kind == "scalar" and v.dtype in ("i32", "i64")

        return (is_int(lhs) and is_float(rhs)) or (is_float(lhs) and is_int(rhs))

    def promote_float_literal(self, lhs: Value, rhs: Value, out: list[ir.Stmt], hint: str) -> tuple[Value, Value]:
        """cuTile Python types a float literal float32, and an integer scalar meeting it (or a float
        scalar) is promoted to float32 (`n * 0.5` is 1.5 for n = 3, `pid < 0.5` compares floats,
        `n * eps` is a float): the integer as an f32."""
        if not self.meets_float_literal(lhs, rhs):
            return lhs, rhs
        return self.as_f32(lhs, out, hint), self.as_f32(rhs, out, hint)

    def as_f32(self, v: Value, out: list[ir.Stmt], hint: str) -> Value:
        """An integer operand as the f32 it becomes in Python's true division, or beside a float
        literal (see `promote_float_literal`)."""
        if v.kind == "const" and isinstance(v.py, int) and not isinstance(v.py, bool):
            return Value("const", py=float(v.py))
        if v.kind == "scalar" and v.dtype in ("i32", "i64"):
            return self.bind_temp(out, f"{hint}_f32", ir.ScalarType("f32"), ir.Call("convert_scalar", (v.expr,)))
        return v

    def scalar_binop(self, node: ast.expr, op: str, lhs: Value, rhs: Value) -> Value:
        for v in (lhs, rhs):
            if v.kind not in ("scalar", "const"):
                raise self.error(node, f"{with_article(v.kind)} cannot be used in scalar arithmetic or comparisons")
        if lhs.kind == rhs.kind == "const":
            raise self.error(node, "this needs a runtime scalar on one side")
        if self.meets_float_literal(lhs, rhs):  # callers that can promote have (promote_float_literal)
            raise self.error(node, "an integer scalar with a float literal here is not supported yet (cuTile Python "
                                   "computes it in float32); convert the integer first")
        dtype = lhs.dtype if lhs.kind == "scalar" else rhs.dtype
        pyop = getattr(node, "op", None)
        if isinstance(pyop, ast.Div) and dtype in ("i32", "i64"):
            raise self.error(node, "true division of integers is not supported yet; use //")
        if isinstance(pyop, ast.FloorDiv) and dtype not in ("i32", "i64"):
            raise self.error(node, "floor division of floats is not supported yet")

        def operand(v: Value) -> ir.Expr:
            if v.kind == "scalar":
                generic = [d for d in (v.dtype, dtype) if self.state.union.find(d).startswith("$")]
                if v.dtype != dtype and self.state.survey and len(generic) == 1 and \
                        self.state.union.find(({v.dtype, dtype} - set(generic)).pop()) in ("i32", "i64"):
                    self.integer(generic[0])  # an array's value (`.item()`) in integer arithmetic
                elif v.dtype != dtype:
                    raise self.error(node, f"mixed scalar dtypes {lhs.dtype} and {rhs.dtype}")
                return v.expr
            if v.kind == "const":
                return number_literal(v.py, dtype)
            raise self.error(node, f"{with_article(v.kind)} cannot be used in scalar arithmetic")

        # For integers this is cutile's truncating `/`; `_binop` corrects `//` where it can differ.
        return Value("scalar", ir.ScalarType(dtype), ir.Binary(op, operand(lhs), operand(rhs)),
                     weak=all(v.kind == "const" or v.weak for v in (lhs, rhs)))

    def tile_binop(self, node: ast.BinOp, op: str, lhs: Value, rhs: Value, out: list[ir.Stmt], hint: str) -> Value:
        type_, a, b = self.tile_operands(node, lhs, rhs, out, hint, sum_=isinstance(node.op, (ast.Add, ast.Sub)))
        if isinstance(node.op, (ast.LShift, ast.RShift)) or (
                isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and self.state.union.find(type_.dtype) != "bool"):
            self.integer(type_.dtype)  # bits of an array's values
        if isinstance(node.op, ast.FloorDiv) and (self.state.union.find(type_.dtype) in FLOAT_RANK
                                                  or self.state.pinned(type_.dtype) in FLOAT_RANK):
            # cuTile Python's // of float tiles: the quotient, then floor (of an array's dtype, // is
            # taken as the array's holding integers: see `integer`)
            quotient = self.bind_temp(out, f"{hint}_quot", type_, ir.Binary("/", a, b))
            return self.bind_temp(out, hint, type_, ir.Call("floor", (quotient.expr,)))
        if isinstance(node.op, ast.FloorDiv):
            if not self.integer(type_.dtype):
                raise self.error(node, "// on float tiles is not supported yet")
            self.require_positive(rhs)
            # Python's // rounds toward negative infinity.
            q = self.bind_temp(out, hint, type_, ir.Call("divi", (a, b, ir.Lit("rounding::NegativeInf"))))
            q.nonneg = self.nonneg(lhs) and self.nonneg(rhs)
            return q
        if isinstance(node.op, ast.Div) and self.int_tile(type_.dtype):
            # cuTile Python divides integers in its default float dtype, f32
            a, b = (self.convert(Value("tile", type_, e), "f32", out, hint).expr for e in (a, b))
            type_ = ir.TileType("f32", type_.shape)
        if op in ("+", "-") and self.float_only(type_.dtype) and not (lhs.product and a == lhs.expr):
            # (a named product on the left: cuTile Python tries that one alone, `fusion.py`)
            fused = self.fused_mul_add(op, a, b, type_, out, hint)
            if fused is not None:
                return fused
        result = Value("tile", type_, ir.Binary(op, a, b))
        if isinstance(node.op, (ast.Add, ast.Mult)):
            result.nonneg = self.nonneg(lhs) and self.nonneg(rhs)
        # Keep track of `ct.arange(n) + offset`, which gather/scatter can turn into tile accesses.
        if isinstance(node.op, ast.Add):
            ramp, other = (lhs, rhs) if lhs.iota_offset is not None else (rhs, lhs)
            if ramp.iota_offset is not None and other.kind in ("const", "scalar"):
                base = ramp.iota_offset
                result.iota_offset = (Value("const", py=base.py + other.py) if base.kind == other.kind == "const"
                                      else other if base.kind == "const" and base.py == 0
                                      else self.scalar_binop(node, "+", base, other))
        return result

    def float_only(self, dtype: str) -> bool:
        """Whether tiles of `dtype` are floats at every launch: a float dtype, or the dtype of arrays
        the launcher takes as floats only."""
        root = self.state.union.find(dtype)
        if root in self.state.promoted:  # a float with anything numeric promotes to a float
            return any(self.float_only(c) for c in self.classes_of(root))
        if not root.startswith("$"):
            return root in FLOAT_RANK and root != "tf32"
        members = self.state.members(root)
        return bool(members) and not self.index_class(root) and all(
            d in FLOAT_RANK for d in self.state.allowed_dtypes(members))

    def fused_mul_add(self, op: str, a: ir.Expr, b: ir.Expr, type_: ir.TileType, out: list[ir.Stmt],
                       hint: str) -> Value | None:
        """`x * y + c` (in either order), `x * y - c` and `c - x * y` as one fma, where the product
        is used by the sum alone (an unnamed operand), as cuTile Python's rewrite fuses them:
        tileiras itself does not contract a multiply and an add (FFMA in cuTile Python's SASS of the
        layer norm and attention, FMUL + FADD without this)."""
        if isinstance(a, ir.Binary) and a.op == "*":
            (x, y), acc, product_first = (a.lhs, a.rhs), b, True
        elif isinstance(b, ir.Binary) and b.op == "*":
            (x, y), acc, product_first = (b.lhs, b.rhs), a, False
        else:
            return None
        if op == "-" and product_first:
            acc = ir.Call("negf", (acc,))  # x * y - c = x * y + (-c)
        elif op == "-":
            x = ir.Call("negf", (x,))  # c - x * y = (-x) * y + c
        return self.bind_temp(out, hint, type_, ir.Call("fma", (
            x, y, acc, ir.Lit("rounding::NearestEven"), ir.Lit("ftz::Disabled"))))

    def tile_operands(self, node: ast.AST, lhs: Value, rhs: Value, out: list[ir.Stmt],
                       hint: str, sum_: bool = False) -> tuple[ir.TileType, ir.Expr, ir.Expr]:
        """Both operands as tiles of one dtype and shape, as cuTile Python's promotion and
        broadcasting make them. In a sum (`sum_`: + or -), a product operand keeps what lets it
        fuse (`keep_product`)."""
        tiles = [v for v in (lhs, rhs) if v.kind == "tile"]
        if len(tiles) == 1:
            dtype = self.with_scalar(tiles[0].dtype, rhs if tiles[0] is lhs else lhs, node)
        else:
            dtype = self.common_dtype(lhs.dtype, rhs.dtype, node, promote=True)
        shape = tiles[0].shape if len(tiles) == 1 else self.broadcast_shape(lhs.shape, rhs.shape, node)
        operands = []
        for v in (lhs, rhs):
            if v.kind == "tile":
                kept = self.keep_product(v, dtype) if sum_ else None
                v = self.broadcast(kept or self.convert(v, dtype, out, hint), shape, out, hint)
            else:
                v = self.splat(v, dtype, shape, out, hint, node)
            operands.append(v.expr)
        return ir.TileType(dtype, shape), operands[0], operands[1]

    def with_scalar(self, tile: str, other: Value, node: ast.AST) -> str:
        """The dtype cuTile Python computes in where a tile of dtype `tile` meets a scalar. A number
        (or a ct.Constant[float]: `Value.weak`) is weakly typed: the tile's dtype. A runtime scalar
        (a parameter, a block id, a value computed from them) is a 0-d tile of its own dtype: an
        integer one takes the dtype of a float tile, a float one makes an integer tile float, and
        two floats or two integers promote (an f16 tile times a float parameter is f32)."""
        if other.kind == "const" and isinstance(other.py, float) and self.int_tile(tile):
            return "f32"  # a float number beside integers: the float category wins, as f32
        if other.kind != "scalar" or other.weak:
            return tile
        scalar_int = self.int_tile(other.dtype)
        if scalar_int != self.int_tile(tile):
            return tile if scalar_int else other.dtype
        if scalar_int and self.state.union.find(tile).startswith("$"):
            return tile  # an index array's values with an integer: the array's (i32 or i64, as wide)
        return self.common_dtype(tile, other.dtype, node, promote=True)

    def unary(self, node: ast.UnaryOp, val: Value, out: list[ir.Stmt], hint: str) -> Value:
        if isinstance(node.op, ast.UAdd):
            return val
        if isinstance(node.op, ast.Not):
            val = self.as_condition(val)
            if val.kind == "const":
                return Value("const", py=not val.py)
            if val.kind == "scalar" and val.dtype == "bool":  # the DSL has no unary `!`
                return Value("scalar", val.type, ir.Binary("==", val.expr, ir.Lit("false")))
            raise self.error(node, "`not` takes a bool here")
        if isinstance(node.op, ast.Invert):  # bitwise not, of integers
            if val.kind == "const" and isinstance(val.py, int):
                return Value("const", py=~val.py)
            if val.kind == "tile" and self.int_tile(val.dtype):
                return Value("tile", val.type, ir.Call("noti", (val.expr,)))
            if val.kind == "scalar" and val.dtype in ("i32", "i64"):
                return Value("scalar", val.type, ir.Binary("^", val.expr, ir.Lit(f"-1{val.dtype}")))
            raise self.error(node, "~ takes an integer here")
        if not isinstance(node.op, ast.USub):
            raise self.error(node, f"the operator {type(node.op).__name__} is not supported yet")
        if val.kind == "const":
            return Value("const", py=-val.py)
        if val.kind == "tile":
            if self.int_tile(val.dtype):
                return Value("tile", val.type, ir.Call("negi", (val.expr, ir.Lit("overflow::None"))))
            return Value("tile", val.type, ir.Call("negf", (val.expr,)))
        if val.kind == "scalar":
            zero = ir.Lit("0.0f32") if val.dtype == "f32" else ir.Lit(f"0{val.dtype}")
            return Value("scalar", val.type, ir.Binary("-", zero, val.expr))
        raise self.error(node, f"cannot negate a {val.kind}")


def exact_in(value: int, bits: int) -> bool:
    """Whether a float of `bits` significand bits holds the integer `value` exactly."""
    n = abs(value)
    return n.bit_length() <= bits or n % (1 << (n.bit_length() - bits)) == 0
