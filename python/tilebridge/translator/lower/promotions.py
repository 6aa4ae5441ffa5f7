"""Promotions: the dtype cuTile Python computes in where tiles of different arrays (or of an array
and a concrete dtype) meet, which the launcher binds per launch (`^n`, a Rust type parameter
`PT`), and the conditions under which several of them are computed as one (`ir.SamePromotion`)."""

from __future__ import annotations

from ... import dtypes
from .. import ir
from .bindings import Value
from .state import KernelState


class Promotions:
    """The promotion rules of one kernel's lowering: a part of `Semantics`, whose `float_only` they ask."""

    state: KernelState

    def generic(self, dtype: str) -> bool:
        """Whether `dtype` is bound at launch: an array's (a dtype class), or the promotion of several."""
        root = self.state.union.find(dtype)
        return root.startswith("$") or root in self.state.promoted

    def classes_of(self, dtype: str) -> frozenset[str]:
        """The dtype classes `dtype` follows: itself, or those a promotion promotes (every promotion
        made one with it, too)."""
        root = self.state.union.find(dtype)
        if root in self.state.promoted:
            return frozenset(self.state.union.find(m) for name, members in self.state.promoted.items()
                             if self.state.union.find(name) == root for m in members)
        return frozenset({root})

    def promotion(self, classes: frozenset[str]) -> str:
        """The dtype (`^n`) cuTile Python computes in where tiles of the dtype classes `classes`
        meet: the launcher binds it to their promotion (`dtypes.promote`) at each launch, and
        refuses dtypes it cannot promote (f16 with bf16). One per set of classes."""
        if len(classes) == 1:
            return next(iter(classes))
        for name in self.state.promoted:
            if self.classes_of(name) == classes:
                return name
        name = f"^{len(self.state.promoted)}"
        self.state.promoted[name] = classes
        return name

    def keep_product(self, val: Value, dtype: str) -> Value | None:
        """An unnamed product (`x * y`) that a sum takes in another dtype, where one of the two is a
        promotion of arrays' dtypes (`a * b + c` of three arrays): cuTile Python fuses the product
        into the sum at every launch where the conversion between them is the identity (its types
        are a launch's), and at no other. The two dtypes are made one (one Rust type, so the product
        stays fusable), and the launcher takes only the launches where cuTile Python's promotions
        make them equal (`ir.SamePromotion`), refusing the others. None where that does not apply."""
        if not (isinstance(val.expr, ir.Binary) and val.expr.op == "*") or not self.made_one(val.dtype, dtype):
            return None
        return Value("tile", ir.TileType(dtype, val.shape), val.expr)

    def made_one(self, a: str, b: str) -> bool:
        """Makes the dtypes `a` and `b` one Rust type where one is a promotion of arrays' (float)
        dtypes and the other an array's or another promotion, and cuTile Python types them alike
        at some launches: the launcher then takes only those (`ir.SamePromotion`). Whether it did."""
        a, b = self.state.union.find(a), self.state.union.find(b)
        if self.state.survey or a == b or not (a in self.state.promoted or b in self.state.promoted):
            return False
        if not (self.generic(a) and self.generic(b) and self.float_only(a) and self.float_only(b)):
            return False
        if a.startswith("$"):
            self.state.union.union(a, b)  # a class stays the root: it is a Rust type parameter already
        else:
            self.state.union.union(b, a)
        return True

    def possible_dtypes(self, dtype: str) -> list[str]:
        """The dtypes an array's dtype, or a promotion of several, may be at launch."""
        root = self.state.union.find(dtype)
        if not self.generic(root):
            return [root]
        if root not in self.state.promoted:
            members = self.state.members(root)
            return self.state.allowed_dtypes(members) if members else []
        first, *others = sorted(self.classes_of(root))
        results = set(self.possible_dtypes(first))
        for c in others:
            results = {dtypes.promote(r, d) for r in results for d in self.possible_dtypes(c)} - {None}
        return sorted(results)
