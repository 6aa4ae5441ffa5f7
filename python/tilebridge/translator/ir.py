"""The typed kernel IR, between the lowering (which writes it) and emit (which reads it).

Plain data: a test can build one by hand. Types carry dtypes as strings: concrete cutile names
(``f32``, ``f16``, ``bf16``, ``i32`` ...) or, while a kernel is lowered, a dtype class of its
arrays (``$a``: "the dtype of array parameter `a`"), which the lowering resolves to the kernel's
Rust type parameters (``E0``, ...) before it hands the IR on. Tile shapes are tuples of ints and
``ct.Constant`` parameter names. Expressions are already Rust-shaped: a `Lit` holds Rust text.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import struct
from dataclasses import dataclass, field
from typing import Any, Iterator, Union

from .. import dtypes

Dim = Union[int, str]


# ---- types -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TileType:
    dtype: str
    shape: tuple[Dim, ...]


@dataclass(frozen=True)
class ScalarType:
    dtype: str


@dataclass(frozen=True)
class PartitionType:
    dtype: str
    shape: tuple[Dim, ...]
    mutable: bool = False  # a PartitionMut over the whole tensor (cutile's unchecked output path)


@dataclass(frozen=True)
class PointerTileType:
    """A tile of element pointers into an array (a gather's or scatter's addresses)."""

    dtype: str
    shape: tuple[Dim, ...]
    mutable: bool = False  # `*mut` (scatter) rather than `*const` (gather)


@dataclass(frozen=True)
class TensorType:
    """A tensor view the kernel makes itself (an item of a list of arrays)."""

    dtype: str
    shape: tuple[Dim, ...]  # -1: dynamic


@dataclass(frozen=True)
class ExtentsType:
    """cutile's `Shape<{..}>` (a view's extents) or `Array<{..}>` (its strides): -1 where dynamic."""

    kind: str  # "Shape" or "Array"
    dims: tuple[int, ...]


@dataclass(frozen=True)
class LoadedType:
    """What a pointer load returns: the tile and its completion token."""

    tile: TileType


Type = Union[TileType, ScalarType, PartitionType, PointerTileType, TensorType, ExtentsType, LoadedType]


# ---- expressions -------------------------------------------------------------------------


@dataclass(frozen=True)
class Lit:
    text: str  # already Rust: `1024i32`, `0.5f32`, `true`


@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True)
class Shape:
    dims: tuple[Dim, ...]  # `const_shape![..]`


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple["Expr", ...] = ()


@dataclass(frozen=True)
class Method:
    recv: "Expr"
    name: str
    args: tuple["Expr", ...] = ()


@dataclass(frozen=True)
class Field:
    recv: "Expr"
    name: str


@dataclass(frozen=True)
class Binary:
    op: str
    lhs: "Expr"
    rhs: "Expr"


@dataclass(frozen=True)
class Index:
    items: tuple["Expr", ...]  # `[i, j]`


@dataclass(frozen=True)
class Subscript:
    recv: "Expr"
    index: int  # `recv[index]`


@dataclass(frozen=True)
class If:
    cond: "Expr"
    then: "Expr"
    other: "Expr"  # `if cond { then } else { other }`


@dataclass(frozen=True)
class Ref:
    expr: "Expr"


@dataclass(frozen=True)
class Unsafe:
    expr: "Expr"
    reason: str  # the SAFETY comment


@dataclass(frozen=True)
class TypeConst:
    dtype: str  # a dtype, or an array's dtype class (`$x`), resolved to its Rust type
    name: str  # a constant of cutile's ElementType (`ZERO`)


Expr = Union[Lit, Var, Shape, Call, Method, Field, Binary, Index, Subscript, If, Ref, Unsafe, TypeConst]


# ---- statements --------------------------------------------------------------------------


@dataclass
class Let:
    name: str
    type: Type | None
    value: Expr
    line: int
    mutable: bool = False


@dataclass
class Assign:
    name: str
    value: Expr
    line: int


@dataclass
class Eval:
    """An expression evaluated for its effect (a store, a scatter), its value unused."""

    expr: Expr
    line: int


@dataclass
class For:
    var: str
    start: Expr
    stop: Expr
    step: Expr | None
    body: list["Stmt"]
    line: int


@dataclass
class TileLoop:
    """`for index in array.iter_indices()`: cutile's persistent loop over a streamed output's
    tiles (`ArrayParam.streamed`), from `ct.bid(0)` by `ct.num_blocks(0)`."""

    index: str
    array: str
    body: list["Stmt"]
    line: int


@dataclass
class While:
    cond: Expr | None  # None: `loop`, left only by a `Break`
    body: list["Stmt"]
    line: int


@dataclass
class Break:
    """Leaves the innermost `While` (Tile IR's `for` has no early exit)."""

    line: int


@dataclass
class Continue:
    """Starts the innermost `While`'s next trip."""

    line: int


@dataclass
class IfElse:
    cond: Expr
    then: list["Stmt"]
    other: list["Stmt"]
    line: int


Stmt = Union[Let, Assign, Eval, For, TileLoop, While, IfElse, Break, Continue]


# ---- the kernel --------------------------------------------------------------------------


@dataclass
class ArrayParam:
    name: str
    rank: int
    dtype: str  # the dtype class, `$name` before resolution
    written: bool = False
    # For a safe output: the tile every block stores at its own index. None for an output
    # written through cutile's unchecked partition (any index, any number of stores).
    tile: tuple[Dim, ...] | None = None
    # A safe output stored at block indices in another order than the array's dimensions, or
    # split (`bid // H`, `bid % H`): the kernel takes the view the launcher makes (`BlockView`),
    # and `tile` is the view's.
    view: "BlockView | None" = None
    # A safe output stored by a grid-stride loop over its tiles (`lower/streams.py`): the stop
    # parameter's name. The kernel takes it as a `MappedPartitionMut` of `tile`; the launcher
    # narrows it to its first `stop` tiles along axis 0 and takes only 1-D grids.
    streamed: str | None = None
    # Accessed through pointers (ct.gather/ct.scatter): the kernel takes the element strides
    # of every axis but the last (`<name>_stride_<axis>`, which the launcher fills from the
    # array), and the launcher requires the last to be 1, as cuTile Python's specialization
    # for contiguous rows has it, and every element's offset to fit in 32 bits, as the kernel
    # computes offsets in i32.
    strided: bool = False
    # A list of arrays of this rank and dtype (group_gemm's `As`): the kernel takes a table with
    # one row per array, `list_row_words(rank)` i64 words each (base pointer, shape, strides), as
    # cuTile Python passes lists; each item it indexes becomes a tensor view of its own.
    listed: bool = False


@dataclass(frozen=True)
class BlockView:
    """How the kernel sees an output each block stores one tile of at its own block indices, where
    those stand in another order than the array's dimensions or one is split in two: view
    dimension i, tiled by block axis i, spans the array's dimensions `dims[i]`, one or two (outer
    first). Two are merged where the store indexes them by `bid // P` and `bid % P`: the launcher
    checks that P (`divisors[i]`, a parameter) is the inner dimension's extent and that the two
    are laid out as one (outer stride = P x inner stride), so the view addresses each element of
    the array once, and its tiles are the regions cuTile Python's store writes."""
    dims: tuple[tuple[int, ...], ...]
    divisors: tuple[str | None, ...]


def float_bits(value: float) -> int:
    """The bits of `value` rounded to f32 (past its range: infinite), read as an i32: what a float
    constant's generic holds."""
    try:
        packed = struct.pack("<f", value)
    except OverflowError:
        packed = struct.pack("<f", math.copysign(math.inf, value))
    return struct.unpack("<i", packed)[0]


def list_divisors(array: "ArrayParam") -> list[str]:
    """The const generics a list's kernel takes besides its ct.Constants: what every array of the
    list is divisible by (base pointer in bytes; each extent, and each stride but the last, in
    elements), which the launcher measures and the kernel assumes, as cuTile Python specializes
    a list on its arrays' divisibility. Without them tileiras cannot use TMA on the items."""
    base = array.name.upper()
    return ([f"{base}_PTR_DIV"] + [f"{base}_SHAPE{axis}_DIV" for axis in range(array.rank)]
            + [f"{base}_STRIDE{axis}_DIV" for axis in range(array.rank - 1)])


def list_row_words(rank: int) -> int:
    """The width of a list table's rows: 1 + 2 * rank words, rounded up to a power of two."""
    words = 1 + 2 * rank
    return 1 << (words - 1).bit_length()


@dataclass
class ScalarParam:
    name: str
    dtype: str  # i32, i64, f32, bool
    # a ct.Constant[float]: passed by keyword, and compiled in as cuTile Python does, as a const
    # generic holding its f32 bits (`float_consts`; cutile has no float const generics)
    constant: bool = False


@dataclass
class ConstParam:
    name: str
    kind: str  # "i32" or "bool"
    tile_dim: bool = False  # used as a tile dimension: must be a power of two
    positive: bool = False  # a divisor of % or //: checked > 0 at launch, so results are provably >= 0


@dataclass
class UnusedParam:
    """A parameter the kernel never reads (cuTile Python takes any value there, e.g. moe's
    scale arrays when no fp8 path is taken): the launcher takes it and passes nothing on."""

    name: str


Param = Union[ArrayParam, ScalarParam, ConstParam, UnusedParam]


# The most dtype combinations anything lists one by one (`KernelIR.launcher_combos`); past it they
# are counted (`KernelIR.product_count`) and covered class by class, never enumerated (arrays the
# kernel only moves take a dozen dtypes each).
MAX_ENUMERATED_COMBOS = 3 ** 9


@dataclass
class DTypeClass:
    """Arrays whose dtypes the kernel ties together: one Rust type parameter."""

    rust_name: str
    arrays: list[str]
    allowed: list[str]  # cutile dtype names the launcher is built for
    # The kernel only moves these arrays' values (`KernelState.default_dtypes`): their dtype meets
    # no other class's in a promotion, so it varies independently of every other class.
    moved: bool = False
    # The kernel computes with these arrays' values (arithmetic, comparisons, reductions) or uses
    # them as integers: its operations are chosen by their kind, float or integer.
    computed: bool = False


@dataclass
class DerivedDType:
    """A dtype the kernel picks from an array's, as `ct.tfloat32 if A.dtype == ct.float32 else
    A.dtype` does: one more Rust type parameter, which the launcher binds per dtype it dispatches."""

    rust_name: str
    of: str  # the rust_name of the DTypeClass it depends on
    when: str  # if that class is this dtype ...
    then: str  # ... this dtype, else `other`; each a cutile dtype name or a DTypeClass rust_name
    other: str
    # Or, where several tests choose it (`X if A.dtype == d or B.dtype == d else Y`), that
    # condition over `DTypeFlag`s (`of` and `when` are then empty).
    test: "Expr | None" = None

    def at(self, bound: dict[str, str], flags: dict[str, bool] | None = None) -> str:
        """The cutile dtype it stands for where the type parameters have the dtypes `bound` gives
        (and the dtype flags the values `flags` gives)."""
        taken = holds(self.test, flags or {}) if self.test is not None else bound[self.of] == self.when
        chosen = self.then if taken else self.other
        return bound.get(chosen, chosen)


def holds(test: "Expr", flags: dict[str, bool]) -> bool:
    """A condition over dtype flags (`&&`, `||`, `== false`), evaluated."""
    if isinstance(test, Var):
        return flags[test.name]
    if isinstance(test, Lit):
        return test.text == "true"
    assert isinstance(test, Binary), test
    if test.op == "&&":
        return holds(test.lhs, flags) and holds(test.rhs, flags)
    if test.op == "||":
        return holds(test.lhs, flags) or holds(test.rhs, flags)
    assert test.op == "==" and test.rhs == Lit("false"), test
    return not holds(test.lhs, flags)


@dataclass
class DTypeFlag:
    """A test of an array's dtype that an `if` reads (`if A.dtype == ct.float16:`): one more `bool`
    const generic, which the launcher computes from the dtypes it dispatches; cutile folds the
    branch, as cuTile Python compiles only the one its specialization takes."""

    rust_name: str
    of: str  # the rust_name of the DTypeClass tested, or a dtype where the kernel fixed it
    equals: str  # a cutile dtype name, or another DTypeClass's rust_name

    def at(self, bound: dict[str, str]) -> bool:
        """Its value where the type parameters have the dtypes `bound` gives."""
        return bound.get(self.of, self.of) == bound.get(self.equals, self.equals)


@dataclass
class PromotedDType:
    """The dtype cuTile Python computes in where tiles of several dtype classes meet (`x * w` of an
    f16 `x` and an f32 `w` is f32): one more Rust type parameter, which the launcher binds to the
    classes' promotion (`dtypes.promote`) at each launch, converting each operand to it (the
    identity where they are already equal)."""

    rust_name: str
    of: list[str]  # the rust_names of the DTypeClasses it promotes (and concrete dtypes, `f16`)
    stored_into: list[str]  # the DTypeClasses of arrays it is stored into

    def at(self, bound: dict[str, str]) -> str | None:
        """Its dtype where each class has the dtype `bound` gives it; None where cuTile Python
        refuses it: classes it cannot promote, or a store into an array of a narrower dtype (its
        implicit cast only widens)."""
        result = _promotion(self.of, bound)
        if result is None or any(dtypes.promote(result, bound[c]) != bound[c] for c in self.stored_into):
            return None
        return result


@dataclass
class SamePromotion:
    """A condition on a launch's dtypes that the kernel's one Rust type for several promotions
    stands on: cuTile Python's promotion of the classes `of` is the same dtype as of `equals`. The
    launcher takes only launches where it holds (see `Promotions.keep_product`)."""

    of: list[str]  # rust_names of DTypeClasses
    equals: list[str]

    def holds(self, bound: dict[str, str]) -> bool:
        return _promotion(self.of, bound) == _promotion(self.equals, bound) is not None


def _promotion(classes: list[str], bound: dict[str, str]) -> str | None:
    """cuTile Python's promotion of the dtypes `bound` gives `classes`; None where it refuses two of
    them (f16 and bf16: refused even where the kernel's operations would promote one with a wider
    third first, so that the answer does not depend on their order)."""
    found = [bound.get(c, c) for c in classes]  # a concrete dtype stands for itself
    if any(dtypes.promote(a, b) is None for a in found for b in found):
        return None
    result = found[0]
    for d in found[1:]:
        result = dtypes.promote(result, d)
    return result


@dataclass(frozen=True)
class TypedValue:
    """A value the kernel's source names, with the type the translation gives it: a name assigned at
    (line, col), or an mma's accumulator (`name` "@mma", at the call or the `@`). `oracle` holds
    them against the types cuTile Python's front end gives the same values."""

    line: int
    col: int
    name: str
    type: Type
    # The conditions on ct.Constant values it holds under (the branches of such an `if` it is in,
    # each translated with the rest of its block): only where they all hold is it the type.
    when: tuple["Expr", ...] = ()


@dataclass
class SafetyNote:
    safe: bool
    reasons: list[str] = field(default_factory=list)


@dataclass
class KernelIR:
    name: str
    file: str  # display name of the source file
    line: int  # the `def` line
    signature: str  # the Python `def` line, for the doc comment
    params: list[Param]
    dtype_classes: list[DTypeClass]
    body: list[Stmt]
    line_text: dict[int, str]  # Python source of every line the body refers to
    safety: SafetyNote
    options: dict[str, dict[str, int]] = field(default_factory=dict)  # hint -> {target: value}
    derived: list[DerivedDType] = field(default_factory=list)
    promoted: list[PromotedDType] = field(default_factory=list)
    same_promotions: list[SamePromotion] = field(default_factory=list)
    # Conditions on ct.Constant values the launcher checks before anything runs: (condition, the
    # message where it fails), from ct.static_assert and from branches that are not translated
    launch_checks: list[tuple["Expr", str]] = field(default_factory=list)
    # Tile dimensions the kernel computes from ct.Constant values (`N // 2`): each one more const
    # generic (name, its value as an expression over the constants, the Python it came from), after
    # every other generic, which the launcher computes from the constants it is given.
    shape_consts: list[tuple[str, "Expr", str]] = field(default_factory=list)
    dtype_flags: list[DTypeFlag] = field(default_factory=list)  # `bool` generics after all others
    refusals: list[str] = field(default_factory=list)  # those branches, for the coverage report
    # The dtype of each class (in order) for every launcher variant, where recorded launches chose
    # them (`launches.cover`); None: every combination of the classes' allowed dtypes.
    dtype_combos: list[tuple[str, ...]] | None = None
    # (input, output) pairs the launcher lets be the very same array: an in-place update, which
    # the kernel's order of accesses makes race-free (see analysis `_in_place_pairs`)
    in_place: list[tuple[str, str]] = field(default_factory=list)
    typed: list[TypedValue] = field(default_factory=list)
    checked: str = ""  # what the check against cuTile Python found (`oracle.Report.summary`)
    # One variant of a kernel with scalar parameters that cuTile Python types from each launch's
    # value (unannotated ones): the name of the Python launcher that picks the variant by the
    # values' types (`public`), and the dtype of each such parameter in this one.
    public: str | None = None
    scalar_variant: dict[str, str] = field(default_factory=dict)
    # One variant of a kernel whose arrays it computes with take f32, f16 and bf16 as translated:
    # the same kernel translated for another family of dtypes (`family`: "f64", "integers"), which
    # the launcher `public` calls where each array of `family_test` has one of its dtypes (an array
    # of each class the kernel computes with); "" for the kernel as translated.
    family: str = ""
    family_test: list[tuple[str, list[str]]] = field(default_factory=list)
    # The specializations a build compiles to cubins ahead of any launch, if asked
    # (`specializations.Specialization`: the ones the check against cuTile Python accepted).
    compiled_at: list = field(default_factory=list)
    # The specializations a build with `--aot` ships compiled (`specializations.Shipment`), and
    # why others are not.
    shipments: list = field(default_factory=list)
    not_shipped: list = field(default_factory=list)

    def launcher_combos(self) -> list[tuple[str, ...]]:
        """The dtype combinations the launcher is built for, one tuple (a dtype per class) each:
        those its promotions admit. Listed one by one: see `combo_count` first."""
        if self.dtype_combos is None:
            return self.all_combos()
        return [combo for combo in self.dtype_combos if self.admits(combo)]

    def all_combos(self) -> list[tuple[str, ...]]:
        """Every combination of the classes' allowed dtypes that its promotions admit."""
        return list(self.iter_combos())

    def iter_combos(self) -> Iterator[tuple[str, ...]]:
        """`all_combos`, one at a time, in order."""
        for combo in itertools.product(*(c.allowed for c in self.dtype_classes)):
            if self.admits(combo):
                yield combo

    def computed_combos(self) -> list[tuple[str, ...]]:
        """Every combination the promotions admit of the dtypes of the classes that are not moved
        (`DTypeClass.moved`), each moved class at its first dtype: the combinations of the classes
        whose dtypes meet, which promotions range over."""
        fixed = [c.allowed if not c.moved else c.allowed[:1] for c in self.dtype_classes]
        return [combo for combo in itertools.product(*fixed) if self.admits(combo)]

    def combo_count(self) -> int:
        """How many combinations the launcher takes (`launcher_combos`), without listing them."""
        return len(self.launcher_combos()) if self.dtype_combos is not None else self.product_count()

    def product_count(self) -> int:
        """How many combinations of the classes' allowed dtypes the promotions admit (`all_combos`),
        without listing them: the moved classes vary independently of the others."""
        return len(self.computed_combos()) * math.prod(len(c.allowed) for c in self.dtype_classes if c.moved)

    def takes(self, combo: tuple[str, ...]) -> bool:
        """Whether the launcher takes the dtype combination `combo`."""
        if self.dtype_combos is not None:
            return combo in self.dtype_combos and self.admits(combo)
        return all(d in c.allowed for d, c in zip(combo, self.dtype_classes)) and self.admits(combo)

    def admits(self, combo: tuple[str, ...]) -> bool:
        """Whether cuTile Python takes the promotions of the kernel at the classes' dtypes `combo`."""
        bound = self._classes_at(combo)
        return all(p.at(bound) is not None for p in self.promoted) and all(s.holds(bound) for s in self.same_promotions)

    def promotions(self, combo: tuple[str, ...]) -> dict[str, str | None]:
        """The dtype of each promotion (by rust_name) where the classes have the dtypes `combo`."""
        bound = self._classes_at(combo)
        return {p.rust_name: p.at(bound) for p in self.promoted}

    def dtypes_at(self, combo: tuple[str, ...]) -> dict[str, str | None]:
        """The dtype of each of the kernel's dtype type parameters, in the order its generics declare
        them (classes, promotions, derived dtypes), where the classes have the dtypes `combo`."""
        bound = self._classes_at(combo)
        bound.update({p.rust_name: p.at(bound) for p in self.promoted})
        flags = {f.rust_name: f.at(bound) for f in self.dtype_flags}
        bound.update({d.rust_name: d.at(bound, flags) for d in self.derived})
        return bound

    def _classes_at(self, combo: tuple[str, ...]) -> dict[str, str]:
        return dict(zip([c.rust_name for c in self.dtype_classes], combo))

    @property
    def arrays(self) -> list[ArrayParam]:
        return [p for p in self.params if isinstance(p, ArrayParam)]

    @property
    def consts(self) -> list[ConstParam]:
        return [p for p in self.params if isinstance(p, ConstParam)]

    @property
    def float_consts(self) -> list[ScalarParam]:
        """The ct.Constant[float] parameters: generics after all others, `<NAME>_BITS: i32`."""
        return [p for p in self.params if isinstance(p, ScalarParam) and p.constant]

    @property
    def runtime_params(self) -> list[Param]:
        """The entry's value parameters, in Python order (constants become generics)."""
        return [p for p in self.params if not isinstance(p, (ConstParam, UnusedParam))
                and not (isinstance(p, ScalarParam) and p.constant)]

    def class_of(self, dtype: str) -> DTypeClass | None:
        for c in self.dtype_classes:
            if dtype.startswith("$") and dtype[1:] in c.arrays:
                return c
        return None


# ---- walking the IR ----------------------------------------------------------------------------

def nodes(node: Any) -> Iterator[Any]:
    """`node` and every IR node inside it (statements, expressions, types), depth first."""
    yield node
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            yield from nodes(getattr(node, f.name))
    elif isinstance(node, (list, tuple)):
        for item in node:
            yield from nodes(item)


def variables(node: Any) -> list[Var]:
    """The variables `node` reads (every `Var` inside it)."""
    return [n for n in nodes(node) if isinstance(n, Var)]
