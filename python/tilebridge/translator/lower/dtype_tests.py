"""Tests of dtypes (`A.dtype == ct.float32`, `A.dtype != B.dtype`). cuTile Python decides them when
it compiles a specialization, so tilebridge does too: a test of dtypes it knows is a constant; one
of an array's dtype, which the launcher binds, either chooses a dtype (`X if A.dtype == d else Y`,
a dtype the launcher picks) or is a `bool` const generic the launcher computes from the dtypes it
dispatches (`if`, `and`, `or`, `not`), which cutile folds like a ct.Constant[bool]."""

from __future__ import annotations

import ast

from ... import dtypes
from .. import ir
from .bindings import Value
from .state import KernelState


class DTypeTests:
    """The dtype tests of one kernel's lowering: a part of `Semantics`."""

    state: KernelState

    def dtype_test(self, node: ast.AST, a: Value, b: Value, negate: bool) -> Value:
        """`A.dtype == ct.float32` (or `!=`): a constant where both dtypes are known or the same
        class, else a test (kind "dtype_test", `py` = (class, the dtype or class compared with,
        negate)) that `derived_dtype` or `as_condition` takes."""
        ra, rb = self.state.union.find(a.py), self.state.union.find(b.py)
        if ra.startswith("@") or rb.startswith("@"):
            raise self.error(node, "comparing a dtype chosen by a test of dtypes is not supported yet")
        # an array's dtype class (`$x`), or the promotion of several (`^n`): bound by the launcher
        generic = [r for r in (ra, rb) if r not in dtypes.DTYPES]
        if not generic or ra == rb:
            return Value("const", py=(ra == rb) != negate)
        other = rb if ra == generic[0] else ra
        return Value("dtype_test", py=(generic[0], other, negate))

    def derived_dtype(self, node: ast.IfExp, test: Value, then: Value, other: Value) -> Value:
        """`X if A.dtype == d else Y` over dtypes: a dtype the launcher picks from A's."""
        if then.kind != "dtype" or other.kind != "dtype":
            raise self.error(node, "a test of an array's dtype can only choose between dtypes here")
        cls, when, negate = test.py
        if when not in dtypes.DTYPES:  # two arrays' dtypes compared: chosen by the flag of that test
            return self.chosen_dtype(node, self.as_condition(test), then, other)
        if negate:
            then, other = other, then
        return Value("dtype", py=self.derive(cls, when, self.state.union.find(then.py),
                                             self.state.union.find(other.py)))

    def chosen_dtype(self, node: ast.IfExp, test: Value, then: Value, other: Value) -> Value:
        """`X if A.dtype == d or B.dtype == d else Y` over dtypes: a dtype the launcher picks by the
        condition over dtype flags (`as_condition`) that `test` is."""
        if test.kind != "scalar" or then.kind != "dtype" or other.kind != "dtype" or any(
                v.name not in self.state.dtype_flags for v in ir.variables(test.expr)):
            raise self.error(node, "a conditional expression choosing a dtype must test dtypes only")
        return Value("dtype", py=self.derive("", test.expr, self.state.union.find(then.py),
                                             self.state.union.find(other.py)))

    def derive(self, cls: str, when: str | ir.Expr, then: str, other: str) -> str:
        """The name (`@n`) of a dtype the launcher picks from the dtype class `cls`: `then` where it
        is `when` (or where the condition `when` over dtype flags holds), else `other`; one per
        distinct choice."""
        key = (cls, when, then, other)
        for name, k in self.state.derived.items():
            if k == key:
                return name
        name = f"@{len(self.state.derived)}"
        self.state.derived[name] = key
        return name

    def as_condition(self, val: Value) -> Value:
        """`val` as a condition: a dtype test becomes its `bool` const generic (one per distinct
        test, named for it: `X_IS_F16`, `X_SAME_DTYPE_AS_Y`); anything else is itself."""
        if val.kind != "dtype_test":
            return val
        cls, other, negate = val.py
        key = (cls, other)
        name = next((n for n, k in self.state.dtype_flags.items() if k == key), None)
        if name is None:
            def spelled(d: str) -> str:
                return d[1:] if d.startswith("$") else "promoted" if d.startswith("^") else d

            hint = f"{spelled(cls)}_{'SAME_DTYPE_AS' if other not in dtypes.DTYPES else 'IS'}_{spelled(other)}"
            name = self.state.fresh(hint.upper())
            self.state.dtype_flags[name] = key
        flag: ir.Expr = ir.Var(name)
        return Value("scalar", ir.ScalarType("bool"), ir.Binary("==", flag, ir.Lit("false")) if negate else flag)
