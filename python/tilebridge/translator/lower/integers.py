"""Integers: which dtypes hold integers (an integer dtype, an array's stated as one, an index
array's), what cutile 0.5.0 can make of them (its `convert_tile` converts no integer to another
width, its JIT makes no constant of 8- or 16-bit integers): widening, narrowing that wraps; and
Python's `//` and `%` (floored, the remainder taking the divisor's sign, of floats too), where
cutile's truncate."""

from __future__ import annotations

import ast

from ... import dtypes
from .. import ir
from .bindings import Value
from .state import KernelState

# The dtypes whose every value an i32 holds (widened exactly), and those an i64 holds.
HELD_BY_I32 = frozenset({"bool", "i8", "i16", "u8", "u16", "i32"})
HELD_BY_I64 = HELD_BY_I32 | {"u32", "i64"}


class Integers:
    """The integer rules of one kernel's lowering: a part of `Semantics`, whose `bind_temp`, `splat`,
    `tile_operands`, `scalar_binop` and `error` they use."""

    state: KernelState

    def integer(self, dtype: str) -> bool:
        """Whether values of `dtype` are integers. Of an array's dtype, asked where the kernel uses
        them as integers only (an index, a bound, `//`, `%`, bits, equality with integers): this
        makes the array an index array, which the launcher takes as int32 or int64."""
        root = self.state.union.find(dtype)
        if root.startswith("$"):
            members = self.state.members(root)
            stated = [dtypes.DTYPES.get(dtypes.stated(d)) for a in members for d in self.state.user_dtypes.get(a, ())]
            if stated and not any(d is not None and d.is_integer for d in stated):
                return False  # stated as floats only: no index array, whatever the kernel seems to use it as
            self.state.int_arrays.update(members)
            return True
        return root in dtypes.DTYPES and dtypes.DTYPES[root].is_integer

    def integers_as(self, val: Value, have: str, dtype: str, want: str, out: list[ir.Stmt], hint: str) -> Value:
        """`val`, integers that are `have` at launch, as `dtype` (integers that are `want`). cutile's
        convert_tile converts no integer to another integer type: widening is exti (signed or not
        as the source is), narrowing trunci (wrapping, as astype does), a change of sign at one
        width a bitcast; between one type it is the identity, and tileiras keeps what it knows of
        the value (its divisibility)."""
        if have == want:
            return self.bind_temp(out, hint, ir.TileType(dtype, val.shape), ir.Call("convert_tile", (val.expr,)))
        wider = dtypes.DTYPES[want].itemsize - dtypes.DTYPES[have].itemsize
        if wider < 0:
            return self.narrow_integers(val, have, dtype, out, hint)
        call = ir.Call("exti" if wider > 0 else "bitcast", (val.expr,))
        return self.bind_temp(out, hint, ir.TileType(dtype, val.shape), call)

    def integers_by_launch(self, val: Value, dtype: str, out: list[ir.Stmt], hint: str) -> Value | None:
        """An index array's values (i32 or i64, as launched) as a concrete integer type, or such
        integers as the index array's type: one conversion for each type the launch may bind,
        chosen by a `bool` const generic the launcher sets (`X_IS_I64`), whose `if` cutile folds,
        compiling only the branch taken, as cuTile Python compiles for the dtype it is launched
        with. None where neither side is such a class or both are (or in the survey)."""
        sides = [(self.state.union.find(d), self.state.pinned(d)) for d in (val.dtype, dtype)]
        launched = [root for root, pinned in sides if pinned is None]
        if self.state.survey or len(launched) != 1 or self.state.at_launch(launched[0]) != {"i32", "i64"}:
            return None
        flag = self.as_condition(Value("dtype_test", py=(launched[0], "i64", False))).expr
        name = self.state.fresh(hint)
        type_ = ir.TileType(dtype, val.shape)
        zero = (ir.TypeConst(dtype, "ZERO") if sides[1][1] is None else
                ir.Lit(f"0{sides[1][1]}"))
        out.append(ir.Let(name, type_, ir.Call("constant", (zero, ir.Shape(val.shape))), self.state.line,
                          mutable=True))
        arms: list[list[ir.Stmt]] = []
        for bound in ("i64", "i32"):
            have, want = (sides[0][1] or bound), (sides[1][1] or bound)
            arm: list[ir.Stmt] = []
            converted = self.integers_as(val, have, dtype, want, arm, hint)
            arm.append(ir.Assign(name, converted.expr, self.state.line))
            arms.append(arm)
        out.append(ir.IfElse(flag, arms[0], arms[1], self.state.line))
        return Value("tile", type_, ir.Var(name))

    def narrow_integers(self, val: Value, have: str, dtype: str, out: list[ir.Stmt], hint: str) -> Value:
        """`val` (integers of dtype `have`) as the narrower integer `dtype`, wrapping as astype does.
        cutile 0.5.0 cannot write trunci without an overflow flag, and a flag makes a value that does
        not fit poison: the low bits are kept (and sign-extended for a signed target) first, so the
        value always fits."""
        want = self.state.pinned(dtype)
        if have not in dtypes.CONSTANT_DTYPES:
            raise self.error(self.state.src.func, f"astype from {have} to {want}: cutile 0.5.0 makes no "
                                                  f"constant of {have}, which narrowing it needs")
        if self.state.union.find(val.dtype) != have:  # the array's dtype, bound to `have` at launch
            val = self.bind_temp(out, hint, ir.TileType(have, val.shape), ir.Call("convert_tile", (val.expr,)))
        bits = 8 * dtypes.DTYPES[want].itemsize

        def constant(v: int) -> ir.Expr:
            return self.splat(Value("const", py=v), have, val.shape, out, hint, self.state.src.func).expr

        low: ir.Expr = ir.Call("andi", (val.expr, constant((1 << bits) - 1)))
        if want.startswith("u"):
            flag = "overflow::NoUnsignedWrap"
        else:
            half = constant(1 << (bits - 1))
            low, flag = ir.Binary("-", ir.Call("xori", (low, half)), half), "overflow::NoSignedWrap"
        kept = self.bind_temp(out, f"{hint}_low", ir.TileType(have, val.shape), low)
        return self.bind_temp(out, hint, ir.TileType(dtype, val.shape), ir.Call("trunci", (kept.expr, ir.Lit(flag))))

    def needs_constants(self, dtype: str, node: ast.AST, why: str = "a zero padding") -> None:
        """Notes that the kernel makes Tile IR constants of `dtype`: an array's dtype class is narrowed
        to the dtypes cutile makes constants of (`dtypes.CONSTANT_DTYPES`); one stated otherwise is
        refused."""
        root = self.state.union.find(dtype)
        members = self.state.members(root)
        stated = {dtypes.stated(d) for a in members for d in self.state.user_dtypes.get(a, ())}
        if (not root.startswith("$") and root in dtypes.DTYPES and root not in dtypes.CONSTANT_DTYPES) or \
                stated - set(dtypes.CONSTANT_DTYPES):
            bad = root if not root.startswith("$") else ", ".join(sorted(stated - set(dtypes.CONSTANT_DTYPES)))
            raise self.error(node, f"cutile 0.5.0 makes no constant of {bad}, which this kernel needs ({why})")
        self.state.narrow(root, lambda d: d in dtypes.CONSTANT_DTYPES)

    def int_tile(self, dtype: str) -> bool:
        """Whether tiles of `dtype` hold integers at every launch, of any width: an integer dtype, an
        index array's, or an array's whose every dtype at launch is an integer (one stated, or a
        family's: `translator.FAMILIES`). The integer operations (`negi`, `maxi`, `absi`, integers
        to f32 for `/` and the float functions) are chosen by it: a float one on integers is no
        Tile IR tileiras takes."""
        if self.index_class(dtype):
            return True
        can_be = self.state.at_launch(dtype)
        return bool(can_be) and all(d in dtypes.DTYPES and dtypes.DTYPES[d].is_integer for d in can_be)

    def index_class(self, dtype: str) -> bool:
        """Whether `dtype` is the dtype of an index array (see `integer`), without making it one."""
        root = self.state.union.find(dtype)
        return root.startswith("$") and any(self.state.union.find(f"${a}") == root for a in self.state.int_arrays)

    def floor_quotient(self, a: ir.Expr, b: ir.Expr, dt: str, hint: str, out: list[ir.Stmt]) -> Value:
        """`a // b` of two integer scalars as Python floors it, where cutile's integer `/` truncates:
        Tile IR's `divi` rounding toward negative infinity on 0-d tiles, as cuTile Python emits it,
        one operation and no branch in every trip of a persistent loop's tile-index arithmetic."""
        ta, tb = (self.bind_temp(out, f"{hint}_{what}", ir.TileType(dt, ()), ir.Call("scalar_to_tile", (v,))).expr
                  for v, what in ((a, "dividend"), (b, "divisor")))
        floor = self.bind_temp(out, f"{hint}_floor", ir.TileType(dt, ()),
                                ir.Call("divi", (ta, tb, ir.Lit("rounding::NegativeInf"))))
        return self.scalar_of(floor, out, hint)

    def require_positive(self, divisor: Value, scalar: bool = False) -> None:
        """A ct.Constant divisor is checked positive at launch, which makes quotients and
        remainders of non-negative values non-negative. Not a scalar division under a runtime
        condition (`h // G if G > 0 else h`): that one gets Python's floor correction instead."""
        if scalar and self.state.guarded:
            return
        if divisor.kind == "scalar" and divisor.dim is not None:
            for p in self.state.params:
                if isinstance(p, ir.ConstParam) and p.name == divisor.dim:
                    p.positive = True
            divisor.nonneg = True

    def tile_mod(self, node: ast.BinOp, lhs: Value, rhs: Value, out: list[ir.Stmt], hint: str) -> Value:
        type_, a, b = self.tile_operands(node, lhs, rhs, out, hint)
        dt = self.state.union.find(type_.dtype)
        if self.float_only(dt):
            return self.float_mod(type_, a, b, out, hint, node)
        self.require_positive(rhs)
        if not self.integer(dt):
            raise self.error(node, "% on tiles that may be floats or integers is not supported yet")
        if not self.nonneg(rhs):
            # Python's % takes the divisor's sign: a - (a // b) * b, with the floored quotient.
            dividend = self.named(Value("tile", type_, a), out, f"{hint}_dividend")
            divisor = self.named(Value("tile", type_, b), out, f"{hint}_divisor")
            quotient = self.bind_temp(out, f"{hint}_quot", type_, ir.Call("divi", (
                dividend.expr, divisor.expr, ir.Lit("rounding::NegativeInf"))))
            return self.bind_temp(out, f"{hint}_mod", type_, ir.Binary(
                "-", dividend.expr, ir.Binary("*", quotient.expr, divisor.expr)))
        rem = self.bind_temp(out, f"{hint}_rem", type_, ir.Call("remi", (a, b)))
        if self.nonneg(lhs) and self.nonneg(rhs):
            rem.nonneg = True
            return rem  # C's remainder equals Python's for non-negative operands
        # A positive divisor: Python adds it to a negative remainder.
        zero = self.splat(Value("const", py=0), dt, type_.shape, out, hint, node)
        negative = ir.Call("lt_tile", (rem.expr, zero.expr))
        return self.bind_temp(out, f"{hint}_mod", type_, ir.Call("select", (negative, ir.Binary("+", rem.expr, b),
                                                                             rem.expr)))

    def float_mod(self, type_: ir.TileType, a: ir.Expr, b: ir.Expr, out: list[ir.Stmt], hint: str,
                  node: ast.AST) -> Value:
        """Python's % of float tiles, as cuTile Python computes it: C's remainder, plus the divisor
        where the remainder is not zero and its sign differs from the divisor's."""
        divisor = self.named(Value("tile", type_, b), out, f"{hint}_divisor")
        rem = self.bind_temp(out, f"{hint}_rem", type_, ir.Call("remf", (a, divisor.expr)))
        zero = self.named(self.splat(Value("const", py=0), type_.dtype, type_.shape, out, hint, node), out, hint)
        signs_differ = ir.Call("xori", (ir.Call("lt_tile", (rem.expr, zero.expr)),
                                        ir.Call("lt_tile", (divisor.expr, zero.expr))))
        fix = self.bind_temp(out, f"{hint}_fix", ir.TileType("bool", type_.shape),
                             ir.Call("andi", (signs_differ, ir.Call("ne_tile", (rem.expr, zero.expr)))))
        return self.bind_temp(out, f"{hint}_mod", type_, ir.Call("select", (
            fix.expr, ir.Binary("+", rem.expr, divisor.expr), rem.expr)))

    def scalar_mod(self, node: ast.BinOp, lhs: Value, rhs: Value, out: list[ir.Stmt], hint: str) -> Value:
        if "tile" in (lhs.kind, rhs.kind):
            return self.tile_mod(node, lhs, rhs, out, hint)
        self.require_positive(rhs, scalar=True)
        rem = self.scalar_binop(node, "%", lhs, rhs)
        if rem.dtype not in ("i32", "i64"):
            raise self.error(node, "% of floats is not supported yet")
        if self.nonneg(lhs) and self.nonneg(rhs) and not (rhs.kind == "const" and rhs.py == 0):
            rem.nonneg = True
            return rem  # C's remainder equals Python's for non-negative operands
        # Python's % takes the sign of the divisor: a - (a // b) * b, with the floored quotient,
        # branch-free (a runtime `if` in Rust is a Tile IR `if` region).
        dividend, divisor = rem.expr.lhs, rem.expr.rhs
        quotient = self.floor_quotient(dividend, divisor, rem.dtype, f"{hint}_quot", out)
        return self.bind_temp(out, f"{hint}_mod", ir.ScalarType(rem.dtype),
                               ir.Binary("-", dividend, ir.Binary("*", quotient.expr, divisor)))
