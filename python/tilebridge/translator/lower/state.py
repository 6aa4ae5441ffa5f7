"""What a kernel's lowering knows and decides, in two records: `KernelState`, one per kernel (its
parameters, dtype classes, array accesses, the checks its launcher makes), and `Frame`, one per
function being walked (the kernel's body, or an inlined helper: its scopes and module globals).
A runtime `if` may be lowered twice: `checkpoint` and `rollback` undo the first try."""

from __future__ import annotations

import ast
import copy
import typing
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ... import dtypes
from ...dtypes import COMPUTED_ARRAY_DTYPES, INDEX_ARRAY_DTYPES, MOVED_ARRAY_DTYPES
from ...errors import TranslationError
from .. import ir
from ..frontend import KernelSource
from ..rust_syntax import rust_name
from .bindings import ArrayUse, Binding, Value
from .dtype_classes import DTypeUnion
from .facts import steps_with

if TYPE_CHECKING:
    from .streams import StreamLoop


@dataclass(frozen=True)
class Access:
    """An array access as translated: the array, "loads" or "stores", the loops around it, the
    path of branches on constants it is on, whether it goes through pointers (gathers, scatters,
    atomics, raw memory) or through a partition of tiles, where the source makes it, and an
    atomic's memory order (cutile's name: "Relaxed", "Acquire", "Release", "AcqRel") and whether
    the kernel reads the values it returns (an atomic made as a statement does not)."""

    array: str
    kind: str
    loops: tuple[int, ...]
    path: tuple[ir.Expr, ...]
    pointer: bool
    node: ast.AST
    order: str | None = None
    read: bool = True


@dataclass
class Frame:
    """The function being walked: the kernel's body, or one helper inlined into it."""

    scopes: list[dict[str, Binding]]  # innermost last
    globals: dict[str, Any]  # its module's names
    depth_base: int = 0  # the loop and branch depth of the call being inlined
    loop_carried: set[str] = field(default_factory=set)  # names its loops carry from one trip to the next
    helpers: list[str] = field(default_factory=list)  # the helpers being inlined, outermost first
    loop_assigned: set[str] = field(default_factory=set)  # names its loops assign: no facts survive there
    bound_per_trip: set[str] = field(default_factory=set)  # names only loops bind, afresh each trip (`facts`)
    outer: "Frame | None" = None  # a closure's: the frame it is called in, whose names it reads
    # A helper's `if`s on ct.Constant values whose branches leave names differing by path, and
    # their conditions (`branches.FollowPaths`).
    diverged: list = field(default_factory=list)


# What lowering an `if` may change, kept by `checkpoint` for `rollback` to lower it again: values
# restored whole, and lists that only grow (cut back to their length).
RESTORED = ("used_names", "guarded", "guarded_at_run_time", "facts", "path", "counted", "stored_dtypes", "derived",
            "promoted", "promoted_stores", "partitions", "mutable_views", "branch_conflicts", "sites", "site_steps",
            "pointer_tokens", "computed_seen", "narrowed", "shape_consts", "dtype_flags", "owners")
GROWN = ("unsafe_reasons", "launch_checks", "refusals", "partition_lets", "accesses", "typed")


class KernelState:
    """One kernel's facts and decisions while it is lowered."""

    def __init__(self, src: KernelSource, dtypes: dict[str, typing.Sequence[str]] | None = None,
                 lift_gathers: bool = False, uses: dict[str, ArrayUse] | None = None,
                 int_arrays: set[str] | None = None, computed: set[str] | None = None):
        self.src = src
        # How often each array is loaded and stored once constant branches are folded and helpers
        # inlined: counted by a first pass (`survey`, uses=None), which decides nothing on them.
        self.survey = uses is None
        self.uses: dict[str, ArrayUse] = dict(uses or {})
        self.counted: dict[str, ArrayUse] = {}
        # Arrays whose values the kernel uses as integers (indices, counts, ids): collected by the
        # survey, their launchers take int32 and int64 (see `Semantics.integer`).
        self.int_arrays: set[str] = set(int_arrays or ())
        # Arrays whose values the kernel computes with (`Semantics.computes_with`): collected by the
        # survey, as every array's were before it; the others the kernel only moves, and their
        # launchers take every dtype cutile converts as the kernel does (`narrowed`).
        self.computed: set[str] = set(computed or ())
        self.computed_seen: set[str] = set()  # as this pass finds them
        # Grid-stride loops over an output's tiles (`streams.py`): the one being lowered, those the
        # survey found whose body stores once and does nothing else, those the lowering may stream.
        self.stream: "StreamLoop | None" = None
        self.stream_loops: set[tuple[int, int]] = set()
        self.streamable: frozenset[tuple[int, int]] = frozenset()
        # The axes of ct.bid the kernel reads: as this pass finds them, and as the survey found them
        # (None in the survey), which decides whether a block owns the rows it scatters to
        # (`pointers._own_scatter`).
        self.block_axes: set[int] = set()
        self.blocks_read: frozenset[int] | None = None
        self.single_valued: set[str] = set()  # variables with one value wherever read (`facts.single_valued`)
        self.narrowed: dict[str, set[str]] = {}  # an array moved only -> the dtypes its conversions allow
        # The operation whose operands are being evaluated, innermost last (`Walker.operands`): None
        # for a helper's call, which passes its arguments on untouched.
        self.consumers: list[str | None] = []
        # Gathers/scatters at (scalars, arange(n) + k*n) as checked tile accesses instead of pointers:
        # safe, but padded tile loads can lower to per-element branches where a masked gather does not.
        self.lift_gathers = lift_gathers
        self.user_dtypes = dict(dtypes or {})
        self.params: list[ir.Param] = []
        self.arrays: dict[str, ir.ArrayParam] = {}
        self.union = DTypeUnion()
        self.partitions: dict[tuple, str] = {}
        self.partition_lets: list[ir.Let] = []
        # (array, tile shape) -> padding (None: as stores make it) -> mutable view variable
        self.mutable_views: dict[tuple, dict[str | None, str]] = {}
        self.used_names: set[str] = {n.id for n in ast.walk(src.func) if isinstance(n, ast.Name)}
        self.used_names |= {a.arg for a in src.func.args.args}
        self.src_names = frozenset(self.used_names)  # the kernel's own names
        self.unsafe_reasons: list[str] = []
        self.stored_dtypes: dict[str, set[str]] = {}  # concrete dtypes of tiles stored into each array
        self.derived: dict[str, tuple[str, str, str, str]] = {}  # "@n" -> (class, when, then, other)
        self.promote = True  # whether arrays' dtypes that meet are promoted per launch, or tied
        # "^n" -> the dtype classes (and concrete dtypes) it promotes (`Promotions.promotion`), and the
        # arrays each promotion is stored into: (array class, "^n").
        self.promoted: dict[str, frozenset[str]] = {}
        self.promoted_stores: list[tuple[str, str]] = []
        # The integer parameters the kernel never reassigns, by their Rust names: what a launcher
        # can read a divisor of a block index from (`Semantics.split_block_id`).
        self.fixed_int_params: dict[str, str] = {}
        self.launch_checks: list[tuple[ir.Expr, str]] = []  # conditions on ct.Constant values, and why
        self.refusals: list[str] = []  # the ct.Constant values the launcher refuses, as the report says them
        self.lines: set[int] = set()
        self.line = src.func.lineno
        self.guarded = 0  # > 0 while translating the branches of a runtime condition
        self.guarded_at_run_time = 0  # > 0 inside the branches of a condition not on ct.Constant values only
        self.loops: list[int] = []  # the loops whose bodies are being translated (a helper's too), innermost last
        self.loop_count = 0
        self.unrolling = 0  # ct.static_iter loops being unrolled around the statement lowered
        # Helpers' results bound before a loop that may return, not yet typed: the statement list
        # each one's `let` is in and the loops lowered before it, by the let's id (`Walker.define`).
        self.undefined: dict[int, tuple[list, int]] = {}
        self.while_loops: set[int] = set()  # the loops above that are `while` loops (`break` may leave them)
        self.loop_vars: dict[int, str] = {}  # a `for` loop's variable (Rust name), by loop
        # Every array access as translated, in order; and where each array is loaded and stored:
        # (tile shape, index expressions) per access.
        self.accesses: list[Access] = []
        self.sites: dict[tuple[str, str], set[tuple]] = {}
        self.site_steps: dict[tuple[str, str], set[int]] = {}  # loops that move every access's index
        self.scalar_defs: dict[str, ir.Expr] = {}  # a scalar `let` (not loop-carried) -> its value
        # tile dimensions computed from ct.Constant values: generic name -> (value, Python text)
        self.shape_consts: dict[str, tuple[ir.Expr, str]] = {}
        # tests of arrays' dtypes an `if` or `and`/`or` reads: const generic name -> (the array's dtype
        # class, the dtype or other class it is compared with), each a bool the launcher computes
        self.dtype_flags: dict[str, tuple[str, str]] = {}
        self.temp_defs: dict[str, ir.Expr] = {}  # a temporary -> its value (bound once, never reassigned)
        # What a branch knows of ct.Constant values: conditions on them (-> bool), and values
        # (`ir.Var` of the constant -> int) where a condition says `N == 1` or `N != 1` is false.
        self.facts: dict[ir.Expr, bool | int] = {}
        self.path: tuple[ir.Expr, ...] = ()  # the conditions on ct.Constant values of the branches we are in
        self.branch_conflicts: dict[str, str] = {}  # names an `if` could not carry past it, and why
        # Statements lowered once per path of a helper's condition (`branches.split_before`), as a
        # first lowering found: `branches.statement_key` -> [(the helper's `if`, its condition)].
        self.splits: dict[tuple, list[tuple[ast.If, Value]]] = {}
        # Every pointer access of every array in one token order (`kernel.check_memory_orders`).
        self.total_order = False
        self.temps: set[str] = set()
        self.items: dict[str, str] = {}  # tensor views of list items (`Ai = As[g]`) -> their list
        self.raw_arrays: set[str] = set()  # arrays reached through `get_raw_memory()` or `foreign_pointer`
        self.pointer_tokens: set[str] = set()  # the token variables of arrays gathered and scattered
        # How blocks own each array the module's safe writes write (`owns`): per dimension tied to
        # a block axis, (dimension, axis, the extent of what one block index owns along it).
        self.owners: dict[str, tuple] = {}
        # The type given to every name the source assigns, every expression and every mma's
        # accumulator, where the source has it (`observe`); `foreign` > 0 while a helper of another
        # file is inlined (its lines are the call's, so nothing there can be told apart).
        self.typed: list[ir.TypedValue] = []
        self.foreign = 0

    def checkpoint(self) -> tuple[dict[str, Any], dict[str, int]]:
        return {a: copy.deepcopy(getattr(self, a)) for a in RESTORED}, {a: len(getattr(self, a)) for a in GROWN}

    def rollback(self, mark: tuple[dict[str, Any], dict[str, int]]) -> None:
        saved, lengths = mark
        for attr, n in lengths.items():
            del getattr(self, attr)[n:]
        for attr, value in saved.items():
            setattr(self, attr, value)

    def observe(self, node: ast.AST, name: str, type_: ir.Type | None) -> None:
        """Records the type the translation gives a value the source names at `node`: a name it
        assigns, "@mma" for an mma's accumulator, "@expr" for the expression `node` itself (keyed
        by its span). `oracle` checks them against cuTile Python's."""
        if name == "@expr":
            name = f"@expr:{node.end_lineno}:{node.end_col_offset}"
        if not self.foreign and not self.survey and isinstance(type_, (ir.TileType, ir.ScalarType)):
            self.typed.append(ir.TypedValue(node.lineno, node.col_offset, name, type_, self.path))

    def error(self, node: ast.AST, message: str) -> TranslationError:
        return TranslationError.at(self.src.display_file, node, message)

    def fresh(self, hint: str) -> str:
        name, n = hint, 1
        while name in self.used_names:
            n += 1
            name = f"{hint}_{n}"
        self.used_names.add(name)
        return name

    def count(self, array: ir.ArrayParam, kind: str, node: ast.AST, via: str | None = None,
              pointer: bool = False, order: str | None = None) -> None:
        """Counts an access as translated (`kind` is "loads" or "stores"), and how it is made where
        that matters (`via`: "gathers", "atomics"; `pointer`: ordered by the array's pointer token,
        not by a partition's; `order`: an atomic's memory order)."""
        use = self.counted[array.name]
        setattr(use, kind, getattr(use, kind) + 1)
        if via:
            setattr(use, via, getattr(use, via) + 1)
        self.accesses.append(Access(array.name, kind, tuple(self.loops), self.path, pointer, node, order))

    def made_through(self, node: ast.AST, pointer: bool) -> None:
        """The access the source makes at `node` is ordered by the array's pointer token after all
        (`pointer`: an owned store takes it), or by a partition's (a gather or scatter lifted to the
        tile access it amounts to)."""
        i = max(i for i, a in enumerate(self.accesses) if a.node is node)
        self.accesses[i] = replace(self.accesses[i], pointer=pointer)

    def discarded(self, node: ast.AST) -> None:
        """The value of the access the source makes at `node` goes unread (a statement of its own)."""
        self.accesses[:] = [replace(a, read=False) if a.node is node else a for a in self.accesses]

    def site(self, array: ir.ArrayParam, kind: str, shape: tuple[ir.Dim, ...], index: list[Value]) -> None:
        """Notes where an access of `kind` ("loads" or "stores") touches `array`: its tile shape and
        index, and the loops around it whose every iteration the index moves to another tile (see
        `_in_place_pairs`)."""
        where = tuple(v.expr if v.expr is not None else ("const", v.py) for v in index)
        self.sites.setdefault((array.name, kind), set()).add((tuple(shape), where))
        def value(v: Value) -> ir.Expr | None:
            if v.defn is not None:
                return v.defn
            return self.scalar_defs.get(v.expr.name, v.expr) if isinstance(v.expr, ir.Var) else v.expr

        stepping = {loop for loop in self.loops if loop in self.loop_vars and any(
            steps_with(value(v), self.loop_vars[loop]) for v in index)}
        known = self.site_steps.get((array.name, kind))
        self.site_steps[(array.name, kind)] = stepping if known is None else known & stepping

    def unsafe(self, what: str, obligation: str, checked: bool = False, keeper: str | None = None) -> None:
        """Notes an `unsafe` block the kernel needs for the safety report: what it does, and the
        obligation it leaves, which the launcher checks at run time (`checked`), the translation
        keeps (`keeper` says how) or the kernel keeps, as cuTile Python leaves it to the kernel."""
        keeper = keeper or ("the launcher checks it" if checked else "the kernel keeps it, as cuTile Python requires")
        self.unsafe_reasons.append(f"{what} (obligation: {obligation}; {keeper})")

    def owns(self, array: ir.ArrayParam, ties: tuple) -> bool:
        """Whether blocks may own `array`'s elements as `ties` says, for one more safe write of it:
        block p owns the elements whose index along each tied dimension d lies in the extent-long
        run numbered p's axis a there, and writes only from the first block along the axes no
        dimension is tied to. Every safe write of one array must own it alike, or two blocks
        could each own one element."""
        return self.owners.setdefault(array.name, ties) == ties

    def read_and_written(self, array: ir.ArrayParam) -> bool:
        """Whether the kernel both reads and writes `array` (an in-place update)."""
        use = self.uses[array.name]
        return bool(use.loads and use.stores)

    def in_token_order(self, array: ir.ArrayParam) -> bool:
        """Whether the kernel orders its gathers from `array` by a token, as its scatters: where
        it also writes the array, and every array in a kernel whose atomics acquire or release
        across arrays (`total_order`)."""
        return self.total_order or self.read_and_written(array)

    def off_reads(self, array: ir.ArrayParam) -> str:
        """What an `unsafe` write of `array` adds to its obligation where the kernel also gathers
        from it: that no block writes what another reads, which makes the module's safe gathers
        from it race-free (`ops.pointers`)."""
        return ", none that another block reads" if self.uses[array.name].gathers else ""

    def allowed_dtypes(self, members: list[str]) -> list[str]:
        """The dtypes the launcher takes for arrays the kernel ties together: those stated for
        them, narrowed to what is stored into them, else the defaults for values or indices."""
        allowed: list[str] | None = None
        for m in members:
            if m in self.user_dtypes:
                stated = [dtypes.stated(d) for d in self.user_dtypes[m]]
                allowed = stated if allowed is None else [d for d in allowed if d in stated]
        if allowed == []:
            raise TranslationError(f"{self.src.display_file}: the dtypes stated for {', '.join(members)} "
                                   "have nothing in common, but the kernel ties these arrays together")
        defaults = self.default_dtypes(members)
        allowed_before = allowed
        stored = set().union(*(self.stored_dtypes.get(m, set()) for m in members))
        if stored:
            allowed = [d for d in (allowed or defaults) if d in stored]
            if not allowed and self.survey and allowed_before is None:
                # the survey takes every array for a float; one pinned to another dtype (a bool
                # condition) is that dtype, as the lowering after it finds
                allowed = sorted(stored)
            if not allowed:
                raise TranslationError(f"{self.src.display_file}: {', '.join(members)} receive "
                                       f"{' and '.join(sorted(stored))} tiles, which no dtype they may have "
                                       "takes without a narrowing cast")
        return list(defaults) if allowed is None else allowed

    def default_dtypes(self, members: list[str]) -> typing.Sequence[str]:
        """The dtypes the launcher takes for arrays the kernel ties together, none of them stated: an
        index array's integers, floats for values it computes with (and everywhere in the survey,
        which finds those), else every dtype that the conversions it makes of them allow."""
        if self.int_arrays & set(members):
            return INDEX_ARRAY_DTYPES
        if not self.moved(members):
            return COMPUTED_ARRAY_DTYPES
        allowed = [d for d in MOVED_ARRAY_DTYPES if all(d in self.narrowed.get(m, (d,)) for m in members)]
        if not allowed:
            raise TranslationError(f"{self.src.display_file}: {', '.join(members)} are converted to dtypes that "
                                   "no one dtype of theirs converts to with cutile; state their dtypes")
        return allowed

    def moved(self, members: list[str]) -> bool:
        """Whether the launcher takes these arrays in every dtype the kernel's conversions allow: none
        stated, none an index array, none computed with."""
        return not (self.survey or set(members) & (self.int_arrays | self.computed | set(self.user_dtypes)))

    def narrow(self, dtype: str, keep: typing.Callable[[str], bool]) -> None:
        """The arrays in the dtype class of `dtype` take at launch only those of the dtypes they
        could take that `keep` holds (`narrowed`: what conversions and operations allow)."""
        for a in self.members(dtype):
            self.narrowed[a] = {d for d in self.narrowed.get(a, MOVED_ARRAY_DTYPES) if keep(d)}

    def members(self, dtype: str) -> list[str]:
        """The arrays in the dtype class of `dtype` (those whose class has its root)."""
        root = self.union.find(dtype)
        return [a for a in self.arrays if self.union.find(f"${a}") == root]

    def stated_one(self, dtype: str) -> str | None:
        """The one dtype the user stated for the arrays of `dtype`'s class (`--dtype x=f16`), or None
        (none stated, several, or not an array's class). Unlike `pinned`, never what the kernel's
        own stores narrowed the class to: a rule that decides those stores may ask it."""
        if not self.union.find(dtype).startswith("$"):
            return None
        stated = None
        for a in self.members(dtype):
            if a in self.user_dtypes:
                these = {dtypes.stated(d) for d in self.user_dtypes[a]}
                stated = these if stated is None else stated & these
        return next(iter(stated)) if stated and len(stated) == 1 else None

    def pinned(self, dtype: str) -> str | None:
        """The one dtype `dtype` can be at launch (itself, if concrete), or None. Arrays tied to it
        later in the kernel can only narrow what is allowed, so an answer here stays true."""
        root = self.union.find(dtype)
        if not root.startswith("$"):
            return root
        can_be = self.at_launch(root) if self.members(root) else set()
        return next(iter(can_be)) if len(can_be) == 1 else None

    def at_launch(self, dtype: str) -> set[str]:
        """The dtypes values of `dtype` can have at launch (itself, if concrete); a class whose
        stated dtypes conflict: none (reported where the classes are made)."""
        root = self.union.find(dtype)
        if not root.startswith("$"):
            return {root}
        try:
            return set(self.allowed_dtypes(self.members(root)))
        except TranslationError:
            return set()

    def launch_check(self, cond: ir.Expr, why: str) -> None:
        """A condition on ct.Constant values for the launcher to check, on this branch's path only."""
        if self.path:
            taken = self.path[0]
            for c in self.path[1:]:
                taken = ir.Binary("&&", taken, c)
            cond = ir.Binary("||", ir.Binary("==", taken, ir.Lit("false")), cond)
        if (cond, why) not in self.launch_checks:
            self.launch_checks.append((cond, why))

    def shape_const(self, expr: ir.Expr, text: str) -> str | None:
        """The const generic standing for a tile dimension the kernel computes from ct.Constant values
        (`expr`, arithmetic on them through the scalar names bound to it), made where first seen;
        the launcher computes it and refuses a value that is not a positive power of two. None where
        `expr` is not such arithmetic."""
        expr = self.on_constants_through_names(expr)
        if expr is None:
            return None
        for name, (known, _) in self.shape_consts.items():
            if known == expr:
                return name
        words = {"+": "PLUS", "-": "MINUS", "*": "TIMES", "/": "DIV", "%": "MOD"}

        def spelled(e: ir.Expr) -> str:
            if isinstance(e, ir.Binary):
                return f"{spelled(e.lhs)}_{words[e.op]}_{spelled(e.rhs)}"
            return e.name if isinstance(e, ir.Var) else e.text.removesuffix("i32")

        name = self.fresh(spelled(expr).upper())
        self.shape_consts[name] = (expr, text)
        dim = ir.Var(name)
        self.launch_check(ir.Binary("&&", ir.Binary(">", dim, ir.Lit("0i32")), ir.Binary(
            "==", ir.Binary("&", dim, ir.Binary("-", dim, ir.Lit("1i32"))), ir.Lit("0i32"))),
                          f"the tile dimension {text} must be a positive power of two")
        return name

    def on_constants_through_names(self, expr: ir.Expr, depth: int = 0, check_divisors: bool = True) -> ir.Expr | None:
        """`expr` as arithmetic on ct.Constant values and literals (+, -, *, // and % by a literal
        or a constant, which the launcher then checks positive), through the scalar names and 0-d
        tiles it is bound to; None where it is anything else. Python's `//` (Tile IR's `divi`
        toward negative infinity) is written as Rust's truncating `/`: the two agree wherever the
        quotient is positive, the only values a tile dimension may take."""
        if depth > 24:
            return None
        if isinstance(expr, ir.Var) and expr.name in self.shape_consts:
            return self.shape_consts[expr.name][0]
        if isinstance(expr, ir.Var) and (expr.name in self.scalar_defs or expr.name in self.temp_defs):
            return self.on_constants_through_names(self.scalar_defs.get(expr.name, self.temp_defs.get(expr.name)),
                                                   depth + 1, check_divisors)
        if isinstance(expr, ir.Call) and expr.func in ("convert_scalar", "tile_to_scalar", "scalar_to_tile"):
            return self.on_constants_through_names(expr.args[0], depth + 1, check_divisors)
        if isinstance(expr, ir.Call) and expr.func == "divi" and expr.args[2] == ir.Lit("rounding::NegativeInf"):
            expr = ir.Binary("/", *expr.args[:2])
        if isinstance(expr, ir.Binary) and expr.op in ("+", "-", "*", "/", "%"):
            lhs = self.on_constants_through_names(expr.lhs, depth + 1, check_divisors)
            rhs = self.on_constants_through_names(expr.rhs, depth + 1, check_divisors)
            if lhs is None or rhs is None:
                return None
            if expr.op in ("/", "%"):
                divisors = [p for p in self.params if isinstance(p, ir.ConstParam) and ir.Var(rust_name(p.name)) == rhs]
                if not divisors and not (isinstance(rhs, ir.Lit) and rhs.text not in ("0i32", "-0i32")):
                    return None  # a divisor that could be zero
                for p in divisors:
                    p.positive |= check_divisors  # the launcher checks it before it divides
            return ir.Binary(expr.op, lhs, rhs)
        if isinstance(expr, ir.Lit) and expr.text.endswith("i32") or isinstance(expr, ir.Var) and self.on_constants(expr):
            return expr
        return None

    def condition_on_constants(self, expr: ir.Expr, check_divisors: bool = True) -> ir.Expr | None:
        """A condition (comparisons, `&&`, `||`) of arithmetic on ct.Constant values, written on
        them where it reads them through names (`on_constants_through_names`, which has the
        launcher check divisors unless `check_divisors` is off, for a condition only compared):
        what cuTile Python decides as it compiles. None where it reads anything else."""
        if self.on_constants(expr):
            return expr
        if isinstance(expr, ir.Binary) and expr.op in ("&&", "||"):
            sides = [self.condition_on_constants(e, check_divisors) for e in (expr.lhs, expr.rhs)]
        elif isinstance(expr, ir.Binary) and expr.op in ("==", "!=") and expr.rhs in (ir.Lit("true"), ir.Lit("false")):
            sides = [self.condition_on_constants(expr.lhs, check_divisors), expr.rhs]
        elif isinstance(expr, ir.Binary) and expr.op in ("==", "!=", "<", "<=", ">", ">="):
            sides = [self.on_constants_through_names(e, check_divisors=check_divisors) for e in (expr.lhs, expr.rhs)]
        else:
            return None
        return None if None in sides else ir.Binary(expr.op, *sides)

    def on_constants(self, expr: ir.Expr) -> bool:
        """Whether `expr` is made of literals, ct.Constant parameters and tests of arrays' dtypes
        only: what cutile knows when it compiles, and the launcher before it launches."""
        consts = {rust_name(c.name) for c in self.params if isinstance(c, ir.ConstParam)} | self.dtype_flags.keys()
        if isinstance(expr, ir.Lit):
            return True
        if isinstance(expr, ir.Var):
            return expr.name in consts
        if isinstance(expr, ir.Binary):
            return self.on_constants(expr.lhs) and self.on_constants(expr.rhs)
        return False

    def compile_time(self, expr: ir.Expr, depth: int = 0) -> bool:
        """Whether cutile knows `expr` when it compiles: literals and ct.Constant values, through
        arithmetic, ct.cdiv/min/max and the scalar names bound to them."""
        if isinstance(expr, ir.Var) and depth < 24 and (expr.name in self.scalar_defs or expr.name in self.temp_defs):
            return self.compile_time(self.scalar_defs.get(expr.name, self.temp_defs.get(expr.name)), depth + 1)
        if isinstance(expr, ir.Call) and expr.func in ("ceil_div", "min", "max", "divi", "scalar_to_tile",
                                                       "tile_to_scalar", "convert_scalar"):
            return all(self.compile_time(a, depth + 1) for a in expr.args)
        if isinstance(expr, ir.Binary):
            return self.compile_time(expr.lhs, depth + 1) and self.compile_time(expr.rhs, depth + 1)
        if isinstance(expr, ir.If):
            return all(self.compile_time(e, depth + 1) for e in (expr.cond, expr.then, expr.other))
        return self.on_constants(expr)

    def mark_tile_dims(self, shape: tuple[ir.Dim, ...]) -> None:
        """The constant parameters among `shape`'s dimensions are tile dimensions."""
        for d in shape:
            if isinstance(d, str):
                self.mark_tile_dim(d)

    def mark_tile_dim(self, name: str) -> None:
        for p in self.params:
            if isinstance(p, ir.ConstParam) and p.name == name:
                p.tile_dim = True
