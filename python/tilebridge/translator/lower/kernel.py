"""A kernel as a whole: its signature and parameters, the ranks of its arrays, its body, and what is
decided once the body is lowered (dtype classes, unused parameters, in-place pairs), gathered
into the `ir.KernelIR` record."""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
import typing
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ... import dtypes
from .. import ir
from ..frontend import KernelSource
from ..rust_syntax import rust_name
from . import early_returns
from .bindings import ArrayUse, Binding, Value
from .branches import FollowPaths
from .dtype_classes import DTypeResolver, resolve_stmt, resolve_type
from .facts import (assignments, bound_per_trip, carried_names, loop_assigned, names_read, negation,
                    single_valued)
from .fusion import fuse_named_products

from .state import Frame, KernelState
from .walker import Walker

if TYPE_CHECKING:
    from . import Survey


def lower(src: KernelSource, dtypes: dict[str, typing.Sequence[str]] | None, lift_gathers: bool,
          survey: Survey | None = None) -> tuple[ir.KernelIR, KernelState]:
    """The kernel's IR and the state its lowering ended in; without `survey`, the first pass
    (which counts, and decides nothing on the counts)."""
    splits: dict[tuple, list] = {}
    total_order = False
    while True:
        state = KernelState(src, dtypes, lift_gathers, uses=survey and survey.uses,
                            int_arrays=survey and set(survey.int_arrays), computed=survey and set(survey.computed))
        state.promote = survey.promote if survey else True
        state.streamable = survey.streams if survey else frozenset()
        state.blocks_read = survey.block_axes if survey else None
        state.splits, state.total_order = splits, total_order
        walker = Walker(state, Frame(scopes=[{}], globals=src.globals))
        try:
            return lower_body(walker), state
        except FollowPaths as e:
            # A helper's result differs by the paths of an `if` on ct.Constant values: lowered
            # again, the statement that calls it goes down those paths (`branches.split_before`).
            if e.at is None or any(cond.expr == e.cond.expr for _, cond in splits.get(e.at, ())):
                raise e.error from None
            splits.setdefault(e.at, []).append((e.node, e.cond))
        except TotalOrder:
            total_order = True


def lower_body(w: Walker) -> ir.KernelIR:
    fn = w.state.src.func
    check_signature(w.state, fn)
    bind_parameters(w, fn)
    scan_ranks(w, fn)
    w.state.counted = {name: ArrayUse() for name in w.state.arrays}
    if w.state.survey:
        w.state.uses = {name: ArrayUse() for name in w.state.arrays}
    # Names a loop reassigns may hold any value there: no facts about them survive.
    w.frame.loop_assigned = loop_assigned(fn)
    w.frame.bound_per_trip = bound_per_trip(fn)
    w.state.single_valued = single_valued(fn)  # where a fact's expression may be read (`pointers`)
    w.frame.loop_carried = carried_names(fn)
    # A `return` inside a loop: a flag the loops carry, and a `break` (`early_returns`).
    stmts = early_returns.kernel_exits(fn.body)
    w.frame.loop_carried.add(early_returns.RETURNING)
    body: list[ir.Stmt] = []
    w.block(stmts, body, docstring_ok=True)
    if not w.state.survey:  # (the survey decides no store's form)
        check_token_orders(w.state)
        check_memory_orders(w.state)
    fuse_named_products(body, w.sem.float_only, traced=lambda cond: w.state.on_constants(cond) and any(
        v.name in w.state.dtype_flags for v in ir.variables(cond)))
    for item, listed in w.state.items.items():
        # A list whose items the kernel writes is an output, each item lent to the launch.
        w.state.arrays[listed].written |= w.state.arrays.pop(item).written
    read = names_read(fn.body)
    for p in list(w.state.arrays.values()):
        if p.rank == 0 and p.name in w.state.raw_arrays:
            p.rank = 1  # reached only through its base pointer: taken as 1-D (`ops.raw_memory`)
        if p.rank == 0 and p.name not in read:
            del w.state.arrays[p.name]
            w.state.params[w.state.params.index(p)] = ir.UnusedParam(p.name)
        elif p.rank == 0:
            raise w.error(fn, f"array parameter '{p.name}' is never loaded or stored")
    classes, names = dtype_classes(w.state)
    for p in w.state.arrays.values():
        p.dtype = names[p.dtype]
    promoted, same = promoted_dtypes(w.state, classes, names)
    derived = []
    for i, (name, (cls, when, then, other)) in enumerate(w.state.derived.items()):
        rust = f"DT{i}" if len(w.state.derived) > 1 else "DT"
        if isinstance(when, ir.Expr):  # chosen by a condition over dtype flags
            derived.append(ir.DerivedDType(rust, "", "", names[then], names[other], test=when))
        else:
            derived.append(ir.DerivedDType(rust, names[cls], when, names[then], names[other]))
        names[name] = rust
    resolved = [resolve_stmt(s, names) for s in w.state.partition_lets + body]
    # The verdict is the code's (an `unsafe` block anywhere in it), the reasons what each site noted.
    unsafe = any(isinstance(n, ir.Unsafe) for n in ir.nodes(resolved))
    safety = ir.SafetyNote(safe=not unsafe, reasons=list(dict.fromkeys(w.state.unsafe_reasons)))
    return ir.KernelIR(
        name=w.state.src.name,
        file=w.state.src.display_file,
        line=fn.lineno,
        signature=w.state.src.line_text(fn.lineno),
        params=w.state.params,
        dtype_classes=classes,
        body=resolved,
        line_text={n: w.state.src.line_text(n) for n in sorted(w.state.lines | {fn.lineno})},
        safety=safety,
        options=dict(w.state.src.options),
        derived=derived,
        promoted=promoted,
        same_promotions=same,
        launch_checks=list(w.state.launch_checks),
        shape_consts=[(name, expr, text) for name, (expr, text) in w.state.shape_consts.items()],
        dtype_flags=[ir.DTypeFlag(name, names[of], names[equals]) for name, (of, equals) in w.state.dtype_flags.items()],
        refusals=list(w.state.refusals),
        in_place=in_place_pairs(w.state),
        typed=[replace(t, type=resolve_type(t.type, names)) for t in w.state.typed],
    )


def check_signature(state: KernelState, fn: ast.FunctionDef) -> None:
    a = fn.args
    for bad, what in ((a.vararg, "*args"), (a.kwarg, "**kwargs")):
        if bad is not None:
            raise state.error(bad, f"kernel parameters cannot use {what}")
    if a.kwonlyargs or a.posonlyargs:
        raise state.error(fn, "kernel parameters must be plain positional parameters")
    # A default is never read: `ct.launch` passes every parameter (its `kernel_args`), and so
    # must a call of the launcher.


def annotations(src: KernelSource) -> dict[str, Any]:
    """Each annotated parameter's annotation as cuTile Python reads it
    (`typing.get_type_hints(include_extras=True)` of the kernel's function)."""
    func = getattr(src.kernel, "_pyfunc", None)
    if func is None:
        return {}
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception:  # noqa: BLE001 - a name only the module's own import resolves: read below, one by one
        return {}
    return {a.arg: hints[a.arg] for a in src.func.args.args if a.arg in hints}


def ignored_annotation(annotation: Any) -> bool:
    """An annotation that constrains nothing: cuTile Python reads only `Annotated` metadata and
    takes `ct.Array`, `ct.Tile`, `ct.Scalar` or `ct.TiledView` as no annotation at all (the
    parameter is what each launch passes)."""
    import cuda.tile as ct

    return any(annotation is t for t in (ct.Array, ct.Tile, ct.Scalar, ct.TiledView))


def unannotated(src: KernelSource) -> set[str]:
    """The parameters without an annotation, or with one cuTile Python ignores."""
    hints = annotations(src)
    return {a.arg for a in src.func.args.args if a.annotation is None or ignored_annotation(hints.get(a.arg))}


def scalar_parameters(src: KernelSource) -> set[str]:
    """The parameters without an annotation (or with one cuTile Python ignores) that are scalars:
    annotated `ct.Scalar`, or used as one."""
    import cuda.tile as ct

    stated = {name for name, hint in annotations(src).items() if hint is ct.Scalar}
    return stated | used_as_scalars(src.func, unannotated(src))


# cuTile Python's functional operators: their operands are tiles or scalars, never arrays.
OPERATOR_FUNCTIONS = frozenset((
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "minimum", "maximum", "atan2", "bitwise_and",
    "bitwise_or", "bitwise_xor", "bitwise_lshift", "bitwise_rshift", "equal", "not_equal", "greater",
    "greater_equal", "less", "less_equal"))


def used_as_scalars(fn: ast.FunctionDef, unannotated: set[str]) -> set[str]:
    """Unannotated parameters the kernel only uses in scalar arithmetic, comparisons (operators or
    their functions, `ct.mul(scalar, t)`), conditions (`if flag:`, `and`, `or`), ranges, `ct.cdiv`
    and `ct.Slice`, never as an array: cuTile Python takes a number for them (typed by each launch's
    value: `unstated_scalars`)."""
    scalar, other = set(), set()
    parents = {id(c): n for n in ast.walk(fn) for c in ast.iter_child_nodes(n)}
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Name) and node.id in unannotated and isinstance(node.ctx, ast.Load)):
            continue
        parent = parents.get(id(node))
        in_arith = isinstance(parent, (ast.BinOp, ast.Compare, ast.UnaryOp, ast.BoolOp)) or (
            isinstance(parent, (ast.If, ast.While, ast.IfExp)) and parent.test is node)
        in_range = (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name)
                    and parent.func.id in ("range", "min", "max"))
        in_call = (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute)
                   and (parent.func.attr in ("cdiv", "Slice")
                        or (parent.func.attr in OPERATOR_FUNCTIONS and node in parent.args[:2])))
        (scalar if in_arith or in_range or in_call else other).add(node.id)
    return scalar - other


def used_as_lists(fn: ast.FunctionDef, unannotated: set[str]) -> set[str]:
    """Unannotated parameters the kernel indexes (`As[g]`) or measures (`len(As)`): lists of
    arrays, as cuTile Python takes them."""
    found = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            found.add(node.value.id)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len"
              and len(node.args) == 1 and isinstance(node.args[0], ast.Name)):
            found.add(node.args[0].id)
    return found & unannotated


def is_torch_tensor(annotation: Any) -> bool:
    """`x: torch.Tensor`: cuTile Python constrains a parameter by no annotation but its own, and
    takes whatever array is launched; an array parameter, as an unannotated one used as one."""
    return isinstance(annotation, type) and annotation.__name__ == "Tensor" and annotation.__module__ == "torch"


def bind_parameters(w: Walker, fn: ast.FunctionDef) -> None:
    hints = annotations(w.state.src)
    blank = unannotated(w.state.src)
    scalars = scalar_parameters(w.state.src)
    lists = used_as_lists(fn, blank) - scalars
    reassigned = {name for _, name in assignments(fn)} | {
        n.id for loop in ast.walk(fn) if isinstance(loop, ast.For) for n in ast.walk(loop.target)
        if isinstance(n, ast.Name)}
    for arg in fn.args.args:
        name = arg.arg
        ann = None if name in blank else hints[name] if name in hints else w.eval_static(arg.annotation)
        meta = typing.get_args(ann)[1:] if typing.get_origin(ann) is typing.Annotated else ()
        base = typing.get_args(ann)[0] if meta else ann
        is_const = any(type(m).__name__ == "ConstantAnnotation" for m in meta)
        scalar_meta = next((m for m in meta if type(m).__name__ == "ScalarAnnotation"), None)
        array_meta = next((m for m in meta if type(m).__name__ == "ArrayAnnotation"), None)
        list_meta = next((m for m in meta if type(m).__name__ == "ListAnnotation"), None)
        for annotation in (array_meta, getattr(list_meta, "element", None)):
            index_dtype = getattr(annotation, "index_dtype", None)
            if index_dtype is not None and dtypes.of_object(index_dtype) != "i32":
                raise w.error(arg, f"an array indexed with {index_dtype} (ct.IndexedWithInt64) cannot be "
                                   "translated: cutile 0.5.0 indexes arrays with i32 only")
        rname = rust_name(name)
        if is_const and base is float:
            # cutile has no float const generics: the entry takes its f32 bits as an i32 const
            # generic (`ir.KernelIR.float_consts`), compiled in as cuTile Python compiles it.
            param = ir.ScalarParam(name, "f32", constant=True)
            val = Value("scalar", ir.ScalarType("f32"), ir.Var(rname), weak=True)
        elif is_const:
            # A bare `ct.Constant` (of any value in cuTile Python) is taken as an int's, the common
            # case: the launcher refuses another value with the reason.
            kind = "i32" if isinstance(base, typing.TypeVar) else {int: "i32", bool: "bool"}.get(base)
            if kind is None:
                raise w.error(arg, f"ct.Constant[{getattr(base, '__name__', base)}] is not supported yet; "
                                      "cutile const generics are i32 or bool")
            param = ir.ConstParam(name, kind)
            val = Value("scalar", ir.ScalarType(kind), ir.Var(rname), dim=name if kind == "i32" else None)
        elif scalar_meta is not None or base in (int, float, bool) or name in scalars:
            dtype = (dtypes.of_object(scalar_meta.dtype) if scalar_meta is not None else
                     "bool" if base is bool else dtypes.of_object(base)
                     if base in (int, float) else unannotated_scalar(w, arg))
            if dtype not in ("i32", "i64", "f32", "bool"):
                raise w.error(arg, f"scalar parameters of dtype {dtype} are not supported yet")
            param = ir.ScalarParam(name, dtype)
            val = Value("scalar", ir.ScalarType(dtype), ir.Var(rname))
        elif name in lists or list_meta is not None:
            # Static extents and strides an ArrayAnnotation states only let cuTile Python specialize
            # further; the kernel computes the same without them.
            param = ir.ArrayParam(name, rank=0, dtype=f"${name}", listed=True)
            w.state.arrays[name] = param
            val = Value("list", py=name, expr=ir.Var(rname))
        elif ann is None or array_meta is not None or is_torch_tensor(ann):
            param = ir.ArrayParam(name, rank=0, dtype=f"${name}")
            w.state.arrays[name] = param
            val = Value("array", py=name, expr=ir.Var(rname))
        else:
            raise w.error(arg, "unsupported parameter annotation")
        w.state.params.append(param)
        w.frame.scopes[0][name] = Binding(val, None, 0)
        if val.kind == "scalar" and val.dtype in ("i32", "i64") and name not in reassigned:
            w.state.fixed_int_params[rname] = name


def unstated_scalars(src: KernelSource, dtypes: dict[str, typing.Sequence[str]] | None) -> list[str]:
    """The scalar parameters cuTile Python types from each launch's value: unannotated, used as
    scalars, and no dtype stated for them."""
    scalars = scalar_parameters(src)
    return [a.arg for a in src.func.args.args if a.arg in scalars and a.arg not in (dtypes or {})]


def unannotated_scalar(w: Walker, arg: ast.arg) -> str:
    """The dtype of a scalar parameter without annotation: the one dtype stated for it
    (`dtypes={"eps": ["f32"]}`, `--dtype eps=f32`), else i32. cuTile Python types it from each
    launch's value; a launcher here takes one type, so a float one must be stated."""
    stated = [dtypes.stated(d) for d in w.state.user_dtypes.get(arg.arg, ())]
    if not stated:
        return "i32"
    if len(stated) != 1 or stated[0] not in ("i32", "i64", "f32"):
        raise w.error(arg, f"the scalar parameter '{arg.arg}' is stated as {', '.join(stated)}: a scalar takes "
                           "one dtype, i32, i64 or f32")
    return stated[0]


def scan_ranks(w: Walker, fn: ast.FunctionDef, names: dict[str, str] | None = None,
                globals_: dict[str, Any] | None = None, seen: frozenset = frozenset()) -> None:
    """An array's rank is the length of any tile shape or index the kernel uses it with, in
    its own body or in a helper it passes the array to (`names`: the helper's parameter ->
    the kernel's array)."""
    if names is None:
        names = {a: a for a in w.state.arrays}
        # `Ai = As[g]`: an item has the rank of its list.
        names |= {t.id: node.value.value.id for node in ast.walk(fn) if isinstance(node, ast.Assign)
                  for t in node.targets if isinstance(t, ast.Name) and isinstance(node.value, ast.Subscript)
                  and isinstance(node.value.value, ast.Name) and node.value.value.id in w.state.arrays
                  and w.state.arrays[node.value.value.id].listed}
        # `Ai = a.slice(...)`: a slice has the rank of its array (of a slice's too).
        slices = {t.id: node.value.func.value.id for node in ast.walk(fn) if isinstance(node, ast.Assign)
                  for t in node.targets if isinstance(t, ast.Name) and isinstance(node.value, ast.Call)
                  and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "slice"
                  and isinstance(node.value.func.value, ast.Name)}
        while grown := {t: names[a] for t, a in slices.items() if a in names and t not in names}:
            names |= grown
    globals_ = w.frame.globals if globals_ is None else globals_
    # What each name is bound to, where every binding is one plain assignment: an index that is
    # such a name bound to anything but a tuple is one index (`offs = b * T + ct.arange(T)`).
    bound: dict[str, list[ast.expr]] = {}
    for node in ast.walk(fn):
        for target in (node.targets if isinstance(node, ast.Assign) else
                       [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)) else []):
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    bound.setdefault(name.id, []).append(node.value if isinstance(node, ast.Assign) and
                                                          target is name else None)
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        helper = globals_.get(node.func.id) if isinstance(node.func, ast.Name) else None
        if isinstance(helper, types.FunctionType) and helper.__name__ not in seen:
            passed = {p: names[a.id] for p, a in zip(inspect.signature(helper).parameters, node.args)
                      if isinstance(a, ast.Name) and a.id in names}
            try:
                lines, _ = inspect.getsourcelines(helper)
                tree = ast.parse(textwrap.dedent("".join(lines)))
            except (OSError, TypeError, SyntaxError):
                continue
            if passed:
                scan_ranks(w, tree.body[0], passed, helper.__globals__, seen | {helper.__name__})
            continue
        if not isinstance(node.args[0], ast.Name) or node.args[0].id not in names:
            continue
        fname = node.func.attr if isinstance(node.func, ast.Attribute) else None
        target = names[node.args[0].id]
        key, pos = {"load": ("shape", 2), "store": ("index", 1), "num_tiles": ("shape", 2),
                    "gather": ("indices", 1), "scatter": ("indices", 1)}.get(fname, (None, 0))
        arg = next((k.value for k in node.keywords if k.arg == key), None) if key else None
        if key and arg is None and len(node.args) > pos:
            arg = node.args[pos]
        if target in w.state.arrays and isinstance(arg, ast.Tuple) and not w.state.arrays[target].rank:
            w.state.arrays[target].rank = len(arg.elts)
        elif target in w.state.arrays and fname in ("gather", "scatter") and isinstance(arg, ast.Name) and \
                not w.state.arrays[target].rank and bound.get(arg.id) and all(
                    v is not None and not isinstance(v, (ast.Tuple, ast.Name)) for v in bound[arg.id]):
            w.state.arrays[target].rank = 1


def in_place_pairs(state: KernelState) -> list[tuple[str, str]]:
    """(input, output) pairs that may be one array, as cuTile Python allows (TileGym's in-place
    dropout and state updates): the input is read at exactly the one place (tile and index) the
    output is written, and every load of it comes before the output's stores on the same path
    of branches on constants (a launch takes one path); a loop may hold both where each of its
    iterations moves that index to another tile (`idx + i` in `for i in range(..)`, as decode's
    state streams through V). So each block reads only what it writes, and each tile before it
    writes it."""
    def where(name: str, kind: str) -> tuple[list[tuple[int, tuple]], set[int]]:
        found = [(i, a) for i, a in enumerate(state.accesses) if (a.array, a.kind) == (name, kind)]
        return [(i, a.path) for i, a in found], {loop for _, a in found for loop in a.loops}

    pairs = []
    for output in (p for p in state.arrays.values() if p.written):
        stores, store_loops = where(output.name, "stores")
        for source in state.arrays.values():
            loads, load_loops = where(source.name, "loads")
            if source is output or source.written or not loads or not stores:
                continue
            read_at = state.sites.get((source.name, "loads"), set())
            stepping = state.site_steps.get((source.name, "loads"), set()) & \
                state.site_steps.get((output.name, "stores"), set())
            if len(read_at) == 1 and read_at == state.sites.get((output.name, "stores")) and \
                    all(i < j or exclusive(p, q) for i, p in loads for j, q in stores) and \
                    load_loops & store_loops <= stepping:
                pairs.append((source.name, output.name))
    return pairs


def check_token_orders(state: KernelState) -> None:
    """Refuses an array the kernel writes and accesses both through a partition of tiles and
    through pointers on one path of branches on constants: cutile orders a partition's accesses by
    its view's token and the pointer accesses by another, so nothing would keep the order cuTile
    Python's one token per array keeps between them (a gather after a store of the same elements
    could read what was there before). On paths no launch takes together (the persistent layer
    norm stores its statistics or gathers them, as a constant says), either is fine."""
    for i, later in enumerate(state.accesses):
        for earlier in state.accesses[:i]:
            if earlier.array == later.array and earlier.pointer != later.pointer and \
                    "stores" in (earlier.kind, later.kind) and not exclusive(earlier.path, later.path):
                raise state.error(later.node, (
                    f"'{later.array}' is written, and accessed both through tiles (ct.load, ct.store) and through "
                    "pointers (gathers, scatters, atomics, raw memory) on one path: cutile orders the two by separate "
                    "tokens, so the order cuTile Python keeps between them would be lost; not supported yet"))


ACQUIRES, RELEASES = ("Acquire", "AcqRel"), ("Release", "AcqRel")


class TotalOrder(Exception):  # noqa: N818 - not an error: the kernel is lowered again (`lower`)
    """Raised where an atomic acquires or releases across arrays: lowered again, every access
    of the kernel's that blocks see each other make goes in one token order."""


def check_memory_orders(state: KernelState) -> None:
    """An atomic that acquires, and whose old values the kernel reads, where it accesses another
    array after it, or that releases where it stores into another array before it (in a loop
    around both, either way): cuTile Python orders those accesses by the atomic (its token order
    joins every access after an acquire and every one before a release to it). The kernel is then
    lowered again (`TotalOrder`) with all its pointer accesses (gathers, scatters, atomics, raw
    memory) in one token order (`ops.memory.pointer_token`), and the tile accesses of an array
    it reads and writes through views made where they are used, from that token
    (`ops.memory._ordered_view`): a block that publishes data behind a flag, or reads it once a
    flag says it is there, sees it in that order (a split-k's "last block sums up" counter, a
    spin lock around a read-modify-write). An access that order could not reach is refused.
    Needing no order: the accesses of an array the kernel does not both read and write, an
    acquire whose old values go unread (the kernel cannot know what it acquired),
    `memory_order=ct.MemoryOrder.RELAXED`, and a release after loads only (a reduction's
    `ct.atomic_add`; not caught: other blocks that overwrite what a block loaded once they see
    its release, whose loads the order would keep before it)."""
    # Blocks see each other's accesses only of an array the kernel both reads and writes: the
    # order of the others' is seen by no block (an array only read is written by none, one only
    # written is read by none until the kernel ends).
    shared = {a.array for a in state.accesses if a.kind == "stores"} & {
        a.array for a in state.accesses if a.kind == "loads" or a.order is not None}
    for i, atomic in enumerate(state.accesses):
        if atomic.order not in ACQUIRES + RELEASES:
            continue
        for j, other in enumerate(state.accesses):
            if other.array == atomic.array or other.array not in shared or exclusive(atomic.path, other.path):
                continue
            around = bool(set(atomic.loops) & set(other.loops))
            acquired = (j > i or around) and atomic.order in ACQUIRES and atomic.read
            released = (j < i or around) and atomic.order in RELEASES and other.kind == "stores"
            if not (acquired or released):
                continue
            if not state.total_order:
                raise TotalOrder()
            if not other.pointer:
                shown = {"Acquire": "ACQUIRE", "Release": "RELEASE", "AcqRel": "ACQ_REL (an atomic's default)"}
                where = "after its acquire" if acquired else "before its release"
                raise state.error(atomic.node, (
                    f"an atomic with memory order {shown[atomic.order]} orders the kernel's accesses of other arrays "
                    f"('{other.array}' here, through tiles) in cuTile Python, {where}; this access is not made in "
                    "the order of the kernel's atomics, so that order would be lost: not supported yet "
                    "(memory_order=ct.MemoryOrder.RELAXED translates, where the kernel needs no such order)"))


def exclusive(path: tuple[ir.Expr, ...], other: tuple[ir.Expr, ...]) -> bool:
    """Whether no launch takes both paths of branches on constants: where they part, one takes a
    condition and the other its negation (`branches.assume`)."""
    for a, b in zip(path, other):
        if a != b:
            return negation(a) == b or negation(b) == a
    return False


def dtype_classes(state: KernelState) -> tuple[list[ir.DTypeClass], dict[str, str]]:
    """Groups the arrays whose dtypes the kernel ties together; one Rust type parameter each."""
    roots: dict[str, list[str]] = {}
    for name in state.arrays:
        roots.setdefault(state.union.find(f"${name}"), []).append(name)
    classes = []
    names: dict[str, str] = {}
    for i, members in enumerate(roots.values()):
        # Always numbered: cutile's kernel compiler resolves an unannotated `E` in its own generic
        # signatures (e.g. `broadcast_scalar<E, S>`) to a kernel type parameter of that name.
        rust = f"E{i}"
        classes.append(ir.DTypeClass(rust, members, state.allowed_dtypes(members), moved=state.moved(members),
                                     computed=bool(set(members) & (state.int_arrays | state.computed))))
        names.update({f"${m}": rust for m in members})
    return classes, DTypeResolver(names, state.union)


def promoted_dtypes(state: KernelState, classes: list[ir.DTypeClass],
                    names: dict[str, str]) -> tuple[list[ir.PromotedDType], list[ir.SamePromotion]]:
    """One Rust type parameter (`PT`, `PT0`, ...) per set of dtype classes whose tiles meet, and
    the conditions the launcher checks. Each promotion's name (`^n`) resolves to its parameter; to
    a class's where the kernel tied the classes together after all, or computes it in a class's
    dtype (`Promotions.keep_product`); promotions made one share one parameter."""
    order = [c.rust_name for c in classes]

    def class_set(members) -> tuple[str, ...]:  # classes in order, then concrete dtypes (`f16`)
        return tuple(sorted({names[state.union.find(m)] for m in members},
                            key=lambda n: (order.index(n), "") if n in order else (len(order), n)))

    groups: dict[str, list[str]] = {}
    for name in state.promoted:
        groups.setdefault(state.union.find(name), []).append(name)
    merged = {root: class_set(set().union(*(state.promoted[n] for n in group))) for root, group in groups.items()}
    sets = list(dict.fromkeys(m for root, m in merged.items() if not root.startswith("$") and len(m) > 1))
    promoted = {of: ir.PromotedDType(f"PT{i}" if len(sets) > 1 else "PT", list(of), []) for i, of in enumerate(sets)}
    same: list[ir.SamePromotion] = []

    def require(of: tuple[str, ...], equals: tuple[str, ...]) -> None:
        if of != equals and ir.SamePromotion(list(of), list(equals)) not in same:
            same.append(ir.SamePromotion(list(of), list(equals)))

    for root, group in groups.items():
        # the dtype they are computed in: a class's, or the promotion of them all
        whole = (names[root],) if root.startswith("$") else merged[root]
        for n in group:
            names[n] = whole[0] if len(whole) == 1 else promoted[whole].rust_name
            require(class_set(state.promoted[n]), whole)
    for array_class, name in state.promoted_stores:
        stored = names[state.union.find(array_class)]
        root = state.union.find(name)
        if root in merged and not root.startswith("$") and len(merged[root]) > 1:
            if stored not in promoted[merged[root]].stored_into:
                promoted[merged[root]].stored_into.append(stored)
        elif names[name] != stored:  # one class's tile into another's array: cuTile Python only widens
            require(class_set({name, array_class}), (stored,))
    return list(promoted.values()), same
