"""Analysis: a kernel's Python AST -> the typed kernel IR (`ir.KernelIR`).

Every value gets a dtype and a shape (shapes in terms of ``ct.Constant``
parameters), every implicit step of cuTile Python is made explicit (broadcasting,
literal typing, keepdims, negative axes), and each array parameter is classified:
read, or written one tile per block at the block's own index (a safe cutile
partition). Anything else is a `TranslationError` naming file:line:column.
"""

from __future__ import annotations

import ast
import builtins
import copy
import inspect
import textwrap
import types
import typing
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import ir
from ...errors import TranslationError
from ..frontend import KernelSource
from .values import (
    DEFAULT_DTYPES,
    INDEX_DTYPES,
    _FLOATS,
    _RUST_OPS,
    rust_name,
    dtype_name,
    float_literal,
    number_literal,
    Val,
    _Binding,
    _ArrayUse,
    _BranchScope,
    _DTypeUnion,
    _Resolver,
    _cutile_dtype,
    _COMPARE,
    _fold,
    _show,
    _resolve_stmt,
    _a,
)
from .access import ArrayAccess
from .loop_split import split_loop
from .tile_ops import TileOps

__all__ = ["lower_kernel", "Translator", "rust_name", "dtype_name", "float_literal", "DEFAULT_DTYPES"]


class Translator(ArrayAccess, TileOps):
    """Translates one kernel: parameters, statements, expressions and operators here; array
    accesses in `access`, the `ct.*` operations in `tile_ops`."""

    def __init__(self, src: KernelSource, dtypes: dict[str, typing.Sequence[str]] | None = None,
                 lift_gathers: bool = False, uses: dict[str, _ArrayUse] | None = None,
                 int_arrays: set[str] | None = None):
        self.src = src
        # How often each array is loaded and stored once constant branches are folded and helpers
        # inlined: counted by a first pass (`survey`, uses=None), which decides nothing on them.
        self.survey = uses is None
        self.uses: dict[str, _ArrayUse] = dict(uses or {})
        self.counted: dict[str, _ArrayUse] = {}
        # Arrays whose values the kernel uses as integers (indices, counts, ids): collected by the
        # survey, their launchers take int32 and int64 (see `_integer`).
        self.int_arrays: set[str] = set(int_arrays or ())
        # Gathers/scatters at (scalars, arange(n) + k*n) as checked tile accesses instead of pointers:
        # safe, but padded tile loads can lower to per-element branches where a masked gather does not.
        self.lift_gathers = lift_gathers
        self.user_dtypes = dict(dtypes or {})
        self.scopes: list[dict[str, _Binding]] = [{}]
        self.params: list[ir.Param] = []
        self.arrays: dict[str, ir.ArrayParam] = {}
        self.union = _DTypeUnion()
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
        self.launch_checks: list[tuple[ir.Expr, str]] = []  # conditions on ct.Constant values, and why
        self.refusals: list[str] = []  # the ct.Constant values the launcher refuses, as the report says them
        self.lines: set[int] = set()
        self.line = src.func.lineno
        self.loop_assigned: set[str] = set()
        self.loop_carried: set[str] = set()
        self.guarded = 0  # > 0 while translating the branches of a runtime condition
        self.loops: list[int] = []  # the loops whose bodies are being translated (a helper's too), innermost last
        self.loop_count = 0
        self.loop_vars: dict[int, str] = {}  # a `for` loop's variable (Rust name), by loop
        # Every array access as translated, in order: (array, "loads" | "stores", the loops around it);
        # and where each array is loaded and stored: (tile shape, index expressions) per access.
        self.accesses: list[tuple[str, str, tuple[int, ...]]] = []
        self.sites: dict[tuple[str, str], set[tuple]] = {}
        self.site_steps: dict[tuple[str, str], set[int]] = {}  # loops that move every access's index
        self.scalar_defs: dict[str, ir.Expr] = {}  # a scalar `let` (not loop-carried) -> its value
        self.temp_defs: dict[str, ir.Expr] = {}  # a temporary -> its value (bound once, never reassigned)
        # What a branch knows of ct.Constant values: conditions on them (-> bool), and values
        # (`ir.Var` of the constant -> int) where a condition says `N == 1` or `N != 1` is false.
        self.facts: dict[ir.Expr, bool | int] = {}
        self.path: tuple[ir.Expr, ...] = ()  # the conditions on ct.Constant values of the branches we are in
        self.branch_conflicts: dict[str, str] = {}  # names an `if` could not carry past it, and why
        self.temps: set[str] = set()
        self.globals: dict[str, Any] = src.globals  # the inlined helper's, while inlining one
        self.inlining: list[str] = []  # helpers being inlined, innermost last
        self.depth_base = 0  # loop depth of the call being inlined
        self.items: dict[str, str] = {}  # tensor views of list items (`Ai = As[g]`) -> their list
        self.pointer_tokens: set[str] = set()  # the token variables of arrays gathered and scattered

    def error(self, node: ast.AST, message: str) -> TranslationError:
        return TranslationError.at(self.src.display_file, node, message)

    def fresh(self, hint: str) -> str:
        name, n = hint, 1
        while name in self.used_names:
            n += 1
            name = f"{hint}_{n}"
        self.used_names.add(name)
        return name

    def run(self) -> ir.KernelIR:
        fn = self.src.func
        self._check_signature(fn)
        self._params(fn)
        self._scan_ranks(fn)
        self.counted = {name: _ArrayUse() for name in self.arrays}
        if self.survey:
            self.uses = {name: _ArrayUse() for name in self.arrays}
        # Names a loop reassigns may hold any value there: no facts about them survive.
        self.loop_assigned = {t.id for loop in ast.walk(fn) if isinstance(loop, (ast.For, ast.While))
                              for st in ast.walk(loop) if isinstance(st, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                              for t in (st.targets if isinstance(st, ast.Assign) else [st.target])
                              if isinstance(t, ast.Name)}
        self.loop_carried = _loop_carried(fn)
        body: list[ir.Stmt] = []
        self._block(fn.body, body, docstring_ok=True)
        for item, listed in self.items.items():
            # A list whose items the kernel writes is an output, each item lent to the launch.
            self.arrays[listed].written |= self.arrays.pop(item).written
        read = _names_read(fn.body)
        for p in list(self.arrays.values()):
            if p.rank == 0 and p.name not in read:
                del self.arrays[p.name]
                self.params[self.params.index(p)] = ir.UnusedParam(p.name)
            elif p.rank == 0:
                raise self.error(fn, f"array parameter '{p.name}' is never loaded or stored")
        classes, names = self._dtype_classes()
        for p in self.arrays.values():
            p.dtype = names[p.dtype]
        derived = []
        for i, (name, (cls, when, then, other)) in enumerate(self.derived.items()):
            rust = f"DT{i}" if len(self.derived) > 1 else "DT"
            derived.append(ir.DerivedDType(rust, names[cls], when, names[then], names[other]))
            names[name] = rust
        resolved = [_resolve_stmt(s, names) for s in self.partition_lets + body]
        safety = ir.SafetyNote(safe=not self.unsafe_reasons, reasons=list(dict.fromkeys(self.unsafe_reasons)))
        return ir.KernelIR(
            name=self.src.name,
            file=self.src.display_file,
            line=fn.lineno,
            signature=self.src.line_text(fn.lineno),
            params=self.params,
            dtype_classes=classes,
            body=resolved,
            line_text={n: self.src.line_text(n) for n in sorted(self.lines | {fn.lineno})},
            safety=safety,
            options=dict(self.src.options),
            derived=derived,
            launch_checks=list(self.launch_checks),
            refusals=list(self.refusals),
            in_place=self._in_place_pairs(),
        )

    def _check_signature(self, fn: ast.FunctionDef) -> None:
        a = fn.args
        for bad, what in ((a.vararg, "*args"), (a.kwarg, "**kwargs")):
            if bad is not None:
                raise self.error(bad, f"kernel parameters cannot use {what}")
        if a.kwonlyargs or a.posonlyargs or a.defaults:
            raise self.error(fn, "kernel parameters must be plain positional parameters without defaults")

    def _eval_static(self, node: ast.expr) -> Any:
        """Evaluates a name/attribute/subscript chain against the kernel's globals."""
        if isinstance(node, ast.Name):
            if node.id in self.globals:
                return self.globals[node.id]
            if hasattr(builtins, node.id):
                return getattr(builtins, node.id)
            raise self.error(node, "unknown name")
        if isinstance(node, ast.Attribute):
            base = self._eval_static(node.value)
            try:
                return getattr(base, node.attr)
            except AttributeError:
                raise self.error(node, "unknown attribute") from None
        if isinstance(node, ast.Subscript):
            base = self._eval_static(node.value)
            index = self._eval_static(node.slice)
            return base[index]
        if isinstance(node, ast.Constant):
            return node.value
        raise self.error(node, "expected a name")

    def _used_as_scalars(self, fn: ast.FunctionDef) -> set[str]:
        """Unannotated parameters the kernel only uses in scalar arithmetic, comparisons and
        ranges, never as an array: cuTile Python takes an int for them (here an i32)."""
        unannotated = {a.arg for a in fn.args.args if a.annotation is None}
        scalar, other = set(), set()
        parents = {id(c): n for n in ast.walk(fn) for c in ast.iter_child_nodes(n)}
        for node in ast.walk(fn):
            if not (isinstance(node, ast.Name) and node.id in unannotated and isinstance(node.ctx, ast.Load)):
                continue
            parent = parents.get(id(node))
            in_arith = isinstance(parent, (ast.BinOp, ast.Compare, ast.UnaryOp))
            in_range = (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name)
                        and parent.func.id in ("range", "min", "max"))
            in_cdiv = (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute)
                       and parent.func.attr == "cdiv")
            (scalar if in_arith or in_range or in_cdiv else other).add(node.id)
        return scalar - other

    @staticmethod
    def _used_as_lists(fn: ast.FunctionDef) -> set[str]:
        """Unannotated parameters the kernel indexes (`As[g]`) or measures (`len(As)`): lists of
        arrays, as cuTile Python takes them."""
        unannotated = {a.arg for a in fn.args.args if a.annotation is None}
        found = set()
        for node in ast.walk(fn):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
                found.add(node.value.id)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len"
                  and len(node.args) == 1 and isinstance(node.args[0], ast.Name)):
                found.add(node.args[0].id)
        return found & unannotated

    def _params(self, fn: ast.FunctionDef) -> None:
        scalars = self._used_as_scalars(fn)
        lists = self._used_as_lists(fn)
        for arg in fn.args.args:
            name = arg.arg
            ann = self._eval_static(arg.annotation) if arg.annotation is not None else None
            meta = typing.get_args(ann)[1:] if typing.get_origin(ann) is typing.Annotated else ()
            base = typing.get_args(ann)[0] if meta else ann
            is_const = any(type(m).__name__ == "ConstantAnnotation" for m in meta)
            scalar_meta = next((m for m in meta if type(m).__name__ == "ScalarAnnotation"), None)
            rname = rust_name(name)
            if is_const and base is float:
                # cutile has no float const generics: the value becomes a runtime f32, which
                # cuTile Python's launch passes the same way (by keyword here).
                param = ir.ScalarParam(name, "f32", constant=True)
                val = Val("scalar", ir.ScalarType("f32"), ir.Var(rname))
            elif is_const:
                kind = {int: "i32", bool: "bool"}.get(base)
                if kind is None:
                    raise self.error(arg, f"ct.Constant[{getattr(base, '__name__', base)}] is not supported yet; "
                                          "cutile const generics are i32 or bool")
                param = ir.ConstParam(name, kind)
                val = Val("scalar", ir.ScalarType(kind), ir.Var(rname), dim=name if kind == "i32" else None)
            elif scalar_meta is not None or base in (int, float) or name in scalars:
                dtype = (dtype_name(scalar_meta.dtype) if scalar_meta is not None else "i32" if name in scalars
                         else dtype_name(base))
                if dtype not in ("i32", "i64", "f32"):
                    raise self.error(arg, f"scalar parameters of dtype {dtype} are not supported yet")
                param = ir.ScalarParam(name, dtype)
                val = Val("scalar", ir.ScalarType(dtype), ir.Var(rname))
            elif name in lists:
                param = ir.ArrayParam(name, rank=0, dtype=f"${name}", listed=True)
                self.arrays[name] = param
                val = Val("list", py=name, expr=ir.Var(rname))
            elif ann is None or getattr(ann, "__name__", None) == "Array":
                param = ir.ArrayParam(name, rank=0, dtype=f"${name}")
                self.arrays[name] = param
                val = Val("array", py=name, expr=ir.Var(rname))
            else:
                raise self.error(arg, "unsupported parameter annotation")
            self.params.append(param)
            self.scopes[0][name] = _Binding(val, None, 0)

    def _scan_ranks(self, fn: ast.FunctionDef, names: dict[str, str] | None = None,
                    globals_: dict[str, Any] | None = None, seen: frozenset = frozenset()) -> None:
        """An array's rank is the length of any tile shape or index the kernel uses it with, in
        its own body or in a helper it passes the array to (`names`: the helper's parameter ->
        the kernel's array)."""
        if names is None:
            names = {a: a for a in self.arrays}
            # `Ai = As[g]`: an item has the rank of its list.
            names |= {t.id: node.value.value.id for node in ast.walk(fn) if isinstance(node, ast.Assign)
                      for t in node.targets if isinstance(t, ast.Name) and isinstance(node.value, ast.Subscript)
                      and isinstance(node.value.value, ast.Name) and node.value.value.id in self.arrays
                      and self.arrays[node.value.value.id].listed}
        globals_ = self.globals if globals_ is None else globals_
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
                    self._scan_ranks(tree.body[0], passed, helper.__globals__, seen | {helper.__name__})
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
            if target in self.arrays and isinstance(arg, ast.Tuple) and not self.arrays[target].rank:
                self.arrays[target].rank = len(arg.elts)

    def _count(self, array: ir.ArrayParam, kind: str) -> None:
        """Counts an access as translated (`kind` is "loads" or "stores")."""
        use = self.counted[array.name]
        setattr(use, kind, getattr(use, kind) + 1)
        self.accesses.append((array.name, kind, tuple(self.loops)))

    def _site(self, array: ir.ArrayParam, kind: str, shape: tuple[ir.Dim, ...], index: list[Val]) -> None:
        """Notes where an access of `kind` ("loads" or "stores") touches `array`: its tile shape and
        index, and the loops around it whose every iteration the index moves to another tile (see
        `_in_place_pairs`)."""
        where = tuple(v.expr if v.expr is not None else ("const", v.py) for v in index)
        self.sites.setdefault((array.name, kind), set()).add((tuple(shape), where))
        def value(v: Val) -> ir.Expr | None:
            if v.defn is not None:
                return v.defn
            return self.scalar_defs.get(v.expr.name, v.expr) if isinstance(v.expr, ir.Var) else v.expr

        stepping = {loop for loop in self.loops if loop in self.loop_vars and any(
            _steps_with(value(v), self.loop_vars[loop]) for v in index)}
        known = self.site_steps.get((array.name, kind))
        self.site_steps[(array.name, kind)] = stepping if known is None else known & stepping

    def _in_place_pairs(self) -> list[tuple[str, str]]:
        """(input, output) pairs that may be one array, as cuTile Python allows (TileGym's in-place
        dropout and state updates): the input is read at exactly the one place (tile and index) the
        output is written, and every load of it comes before the output's first store; a loop may
        hold both where each of its iterations moves that index to another tile (`idx + i` in
        `for i in range(..)`, as decode's state streams through V). So each block reads only what
        it writes, and each tile before it writes it."""
        def where(name: str, kind: str) -> tuple[list[int], set[int]]:
            found = [(i, loops) for i, (n, k, loops) in enumerate(self.accesses) if (n, k) == (name, kind)]
            return [i for i, _ in found], {loop for _, loops in found for loop in loops}

        pairs = []
        for output in (p for p in self.arrays.values() if p.written):
            stores, store_loops = where(output.name, "stores")
            for source in self.arrays.values():
                loads, load_loops = where(source.name, "loads")
                if source is output or source.written or not loads or not stores:
                    continue
                read_at = self.sites.get((source.name, "loads"), set())
                stepping = self.site_steps.get((source.name, "loads"), set()) & \
                    self.site_steps.get((output.name, "stores"), set())
                if len(read_at) == 1 and read_at == self.sites.get((output.name, "stores")) and \
                        max(loads) < min(stores) and load_loops & store_loops <= stepping:
                    pairs.append((source.name, output.name))
        return pairs

    def read_and_written(self, array: ir.ArrayParam) -> bool:
        """Whether the kernel both reads and writes `array` (an in-place update)."""
        use = self.uses[array.name]
        return bool(use.loads and use.stores)

    def _dtype_classes(self) -> tuple[list[ir.DTypeClass], dict[str, str]]:
        """Groups the arrays whose dtypes the kernel ties together; one Rust type parameter each."""
        roots: dict[str, list[str]] = {}
        for name in self.arrays:
            roots.setdefault(self.union.find(f"${name}"), []).append(name)
        classes = []
        names: dict[str, str] = {}
        for i, members in enumerate(roots.values()):
            # Always numbered: cutile's kernel compiler resolves an unannotated `E` in its own generic
            # signatures (e.g. `broadcast_scalar<E, S>`) to a kernel type parameter of that name.
            rust = f"E{i}"
            classes.append(ir.DTypeClass(rust, members, self._allowed_dtypes(members)))
            names.update({f"${m}": rust for m in members})
        return classes, _Resolver(names, self.union)

    def _allowed_dtypes(self, members: list[str]) -> list[str]:
        """The dtypes the launcher takes for arrays the kernel ties together: those stated for
        them, narrowed to what is stored into them, else the defaults for values or indices."""
        allowed: list[str] | None = None
        for m in members:
            if m in self.user_dtypes:
                stated = [_cutile_dtype(d) for d in self.user_dtypes[m]]
                allowed = stated if allowed is None else [d for d in allowed if d in stated]
        if allowed == []:
            raise TranslationError(f"{self.src.display_file}: the dtypes stated for {', '.join(members)} "
                                   "have nothing in common, but the kernel ties these arrays together")
        defaults = INDEX_DTYPES if self.int_arrays & set(members) else DEFAULT_DTYPES
        stored = set().union(*(self.stored_dtypes.get(m, set()) for m in members))
        if stored:
            allowed = [d for d in (allowed or defaults) if d in stored]
            if not allowed:
                raise TranslationError(f"{self.src.display_file}: {', '.join(members)} receive "
                                       f"{' and '.join(sorted(stored))} tiles, which no dtype they may have "
                                       "takes without a narrowing cast")
        return list(defaults) if allowed is None else allowed

    def _pinned(self, dtype: str) -> str | None:
        """The one dtype `dtype` can be at launch (itself, if concrete), or None. Arrays tied to it
        later in the kernel can only narrow what is allowed, so an answer here stays true."""
        root = self.union.find(dtype)
        if not root.startswith("$"):
            return root
        members = [a for a in self.arrays if self.union.find(f"${a}") == root]
        try:
            allowed = self._allowed_dtypes(members) if members else []
        except TranslationError:
            return None  # reported where the classes are made
        return allowed[0] if len(allowed) == 1 else None

    @property
    def depth(self) -> int:
        return self.depth_base + len(self.scopes) - 1

    def _inline(self, node: ast.Call, func: types.FunctionType, out: list[ir.Stmt], hint: str) -> Val:
        """Inlines a helper function: its body is translated in place, with its parameters
        bound to the call's values and its locals renamed apart from the caller's."""
        try:
            same_file = Path(inspect.getsourcefile(func) or "").resolve() == Path(self.src.filename).resolve()
            lines, first = inspect.getsourcelines(func)
        except (OSError, TypeError):
            raise self.error(node, "the source of this helper function is not available") from None
        if func.__name__ in self.inlining:
            raise self.error(node, "recursive helper functions cannot be inlined")
        tree = ast.parse(textwrap.dedent("".join(lines)))
        ast.increment_lineno(tree, first - 1)
        if not same_file:
            # A helper from another file: its statements are reported at the call, the line of
            # the kernel's file that brings them in.
            for n in ast.walk(tree):
                if hasattr(n, "lineno"):
                    n.lineno = n.end_lineno = node.lineno
                    n.col_offset, n.end_col_offset = node.col_offset, node.end_col_offset
        fdef = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
        a = fdef.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            raise self.error(node, "helpers with *args, **kwargs or keyword-only parameters are not supported yet")
        names = [p.arg for p in a.args]
        bound = self._args(node, names, len(names) - len(a.defaults))
        values = {n: self.expr(v, out, hint) for n, v in bound.items()}
        saved_globals = self.globals
        self.globals = func.__globals__
        for n, d in zip(names[len(names) - len(a.defaults):], a.defaults):
            values.setdefault(n, self.expr(d, out, hint))
        body = fdef.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # docstring
        if body and not isinstance(body[-1], ast.Return):
            body = [*body, ast.Return(value=None)]  # a helper run for its effects (stores)
        if any(isinstance(n, ast.Return) for st in body[:-1] for n in ast.walk(st)):
            self.globals = saved_globals
            raise self.error(node, "helpers with an early return are not supported yet")
        saved_scopes, saved_base, saved_line = self.scopes, self.depth_base, self.line
        self.depth_base = self.depth
        self.scopes = [{n: _Binding(v, None, self.depth_base) for n, v in values.items()}]
        self.inlining.append(func.__name__)
        reassigned = {name for _, name in _assignments(fdef)}
        saved_carried = self.loop_carried
        self.loop_carried = saved_carried | _loop_carried(fdef) | {
            n for n in names if n in reassigned and any(isinstance(x, (ast.For, ast.While)) for x in ast.walk(fdef))}
        try:
            for n in names:
                if n in reassigned and (values[n].kind in ("tile", "scalar") or n in self.loop_carried):
                    # A parameter the helper updates (e.g. in a loop): a local variable of its own.
                    self._bind(ast.copy_location(ast.Name(id=n, ctx=ast.Store()), node), values[n], out)
            self._block(body[:-1], out)
            ret = body[-1].value
            result = self.expr(ret, out, hint) if ret is not None else Val("const", py=None)
        finally:
            self.inlining.pop()
            self.loop_carried = saved_carried
            self.scopes, self.depth_base, self.globals = saved_scopes, saved_base, saved_globals
            self.line = saved_line
        return result

    def lookup(self, name: str) -> _Binding | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def _block(self, stmts: list[ast.stmt], out: list[ir.Stmt], docstring_ok: bool = False) -> None:
        for i, node in enumerate(stmts):
            self.line = node.lineno
            self.lines.add(node.lineno)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(
                    node.value.value, str) and i == 0 and docstring_ok:
                continue
            if self._stmt(node, out, stmts[i + 1:]):
                return  # the statements after it went into the branches of an `if`

    def _stmt(self, node: ast.stmt, out: list[ir.Stmt], rest: list[ast.stmt]) -> bool:
        """Translates one statement; True where it also took `rest`, the statements after it."""
        if isinstance(node, ast.If):
            return self._if(node, out, rest)
        if isinstance(node, ast.Assign):
            if len(node.targets) != 1:
                raise self.error(node, "chained assignment is not supported")
            self._assign(node.targets[0], node.value, out)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self._assign(node.target, node.value, out)
        elif isinstance(node, ast.AugAssign):
            target = ast.Name(id=node.target.id, ctx=ast.Load()) if isinstance(node.target, ast.Name) else None
            if target is None:
                raise self.error(node, "augmented assignment to this target is not supported")
            ast.copy_location(target, node.target)
            value = ast.copy_location(ast.BinOp(left=target, op=node.op, right=node.value), node)
            self._assign(node.target, value, out)
        elif isinstance(node, ast.Expr):
            val = self.expr(node.value, out)
            if val.kind in ("tile", "scalar") and val.expr is not None:
                out.append(ir.Do(val.expr, node.lineno))
        elif isinstance(node, ast.For):
            self._for(node, out)
        elif isinstance(node, ast.While):
            self._while(node, out)
        elif isinstance(node, ast.Pass):
            pass
        elif isinstance(node, ast.Return) and node.value is None and node is self.src.func.body[-1]:
            pass
        else:
            raise self.error(node, f"{type(node).__name__} statements are not supported yet")
        return False

    def _assign(self, target: ast.expr, value: ast.expr, out: list[ir.Stmt]) -> None:
        if isinstance(target, ast.Tuple):
            if isinstance(value, ast.Tuple) and len(value.elts) == len(target.elts):
                vals = [self.expr(v, out, hint=t.id if isinstance(t, ast.Name) else "v")
                        for t, v in zip(target.elts, value.elts)]
            else:
                whole = self.expr(value, out)  # e.g. `m, n = x.shape` or a helper returning a tuple
                if whole.kind != "tuple" or len(whole.py) != len(target.elts):
                    raise self.error(target, "tuple assignment needs a tuple of the same length on the right")
                vals = whole.py
            for t, v in zip(target.elts, vals):
                self._bind(t, v, out)
            return
        self._bind(target, self.expr(value, out, hint=target.id if isinstance(target, ast.Name) else "v"), out)

    def _bind(self, target: ast.expr, val: Val, out: list[ir.Stmt]) -> None:
        if not isinstance(target, ast.Name):
            raise self.error(target, "assignment to this target is not supported")
        name = target.id
        prev = self.lookup(name)
        if val.kind == "const" and type(val.py) in (int, float) and name in self.loop_carried:
            # `cnt = 0` before a loop that does `cnt += 1`: a runtime variable the loop carries.
            dt = "i32" if isinstance(val.py, int) else "f32"
            val = Val("scalar", ir.ScalarType(dt), number_literal(val.py, dt), nonneg=val.py >= 0)
        if val.kind not in ("tile", "scalar"):
            if prev is not None and prev.val.kind in ("tile", "scalar") and not self._branch_rebinds(prev):
                raise self.error(target, "rebinding a runtime value to a compile-time value is not supported")
            self.scopes[-1][name] = _Binding(val, None, self.depth)
            return
        if name in self.loop_assigned or self.inlining:
            val = replace(val, nonneg=False, bid_axis=None, iota_offset=None)
        rname = rust_name(name)
        # Rebound to something else inside a branch: a binding of the branch's own, which the `if`
        # reconciles with the outer one where the branch ends.
        branch_local = self._branch_rebinds(prev) and (prev.let is None or prev.val.type != val.type)
        if not branch_local and prev is not None and prev.let is not None and prev.depth < self.depth:
            val = self._as_carried(target, prev, val, out)
            # Assigned inside a loop, defined outside: a loop-carried `let mut`.
            prev.let.mutable = True
            self.scalar_defs.pop(prev.let.name, None)  # no one value any more
            out.append(ir.Assign(prev.let.name, val.expr, target.lineno))
            prev.val = replace(prev.val, bid_axis=None, nonneg=prev.val.nonneg and val.nonneg)
            return
        if prev is not None and prev.let is None and prev.val.kind == "array":
            raise self.error(target, f"assigning to the array parameter '{name}' is not supported")
        if prev is not None and prev.let is None and prev.depth < self.depth and not self._branch_rebinds(prev):
            raise self.error(target, f"reassigning '{name}' inside a loop or branch, where it has no binding of "
                                     "its own to update, is not supported yet")
        if self.inlining or branch_local or (
                isinstance(self.scopes[-1], _BranchScope) and any(name in s for s in self.scopes[:-1])):
            # A helper's locals must not shadow the caller's, nor a branch's the names the `if` may
            # assign back to when the branch ends.
            rname = self.fresh(rname)
        last = out[-1] if out else None
        if isinstance(last, ir.Let) and last.name in self.temps and val.expr == ir.Var(last.name):
            # The value was just bound to a temporary: give that binding the Python name.
            self.temps.discard(last.name)
            last.name, last.line, let = rname, target.lineno, last
        else:
            let = ir.Let(rname, val.type, val.expr, target.lineno)
            out.append(let)
        if val.kind == "scalar" and name not in self.loop_carried:
            self.scalar_defs[let.name] = let.value  # as evaluated where it is used (in this iteration)
        self.scopes[-1][name] = _Binding(
            Val(val.kind, val.type, ir.Var(rname), dim=val.dim, bid_axis=val.bid_axis, nonneg=val.nonneg,
                iota_offset=val.iota_offset, defn=val.expr if val.kind == "scalar" and name not in self.loop_assigned
                else None), let, self.depth)

    def _as_carried(self, target: ast.Name, prev: _Binding, val: Val, out: list[ir.Stmt]) -> Val:
        """`val` as the type of the variable it updates. Integers stay what the variable holds
        (an index array's dtype plus an i32 count, as Python's promotion keeps the wider)."""
        if prev.val.type == val.type:
            return val
        if prev.val.kind == val.kind == "tile" and prev.val.shape == val.shape:
            integers = self._int_tile(prev.val.dtype), self._int_tile(val.dtype)
            if integers[0] != integers[1]:  # an integer variable updated with an array's values, or the
                # reverse: that array holds integers, if it is an array's at all
                integers = (self._integer(val.dtype if integers[0] else prev.val.dtype),) * 2
            if all(integers):
                return self._convert(val, prev.val.dtype, out, target.id)
        raise self.error(target, f"'{target.id}' changes type inside the loop "
                                 f"({_show(prev.val.type)} -> {_show(val.type)})")

    def _if(self, node: ast.If, out: list[ir.Stmt], rest: list[ast.stmt]) -> bool:
        """Translates an `if`; True where `rest`, the statements after it in its block, went into
        its branches (see `_paths`)."""
        cond = self.expr(node.test, out, hint="cond")
        if cond.kind == "tile" and cond.shape == () and self.union.find(cond.dtype) == "bool":  # a 0-d tile
            cond = self._scalar_of(cond, out, "cond")
        if cond.kind == "scalar" and cond.dtype in ("i32", "i64"):  # `if FLAG:` on an int, as Python reads it
            cond = Val("scalar", ir.ScalarType("bool"), ir.Binary("!=", cond.expr, ir.Lit(f"0{cond.dtype}")))
        if cond.kind == "scalar" and cond.expr in self.facts:  # decided by an enclosing branch
            cond = Val("const", py=self.facts[cond.expr])
        if cond.kind == "const":  # decided at translation time: only the taken branch exists
            self._block(_path(node.body if cond.py else node.orelse, rest), out)
            return True
        if cond.kind != "scalar" or cond.dtype != "bool":
            raise self.error(node.test, "an if condition must be a scalar comparison, a bool or a constant")
        if not self.inlining and (_may_return(node.body) or _may_return(node.orelse)):
            return self._paths(node, cond, out, rest)  # an early exit: what follows runs on the other path
        mark = self._checkpoint(out)
        try:
            branches, scopes = self._branches(cond, [node.body, node.orelse])
            unmerged: dict[str, str] | None = self._merge_branches(node, scopes, branches, out)
        except TranslationError:
            if not self._on_constants(cond.expr):
                raise
            unmerged = None  # perhaps a branch these constants never take: see `_paths`
        if unmerged is not None and not unmerged.keys() & _names_read(rest):
            self.branch_conflicts.update(unmerged)
            out.append(ir.IfElse(cond.expr, branches[0], branches[1], node.lineno))
            return False
        self._rollback(mark, out)
        return self._paths(node, cond, out, rest)

    def _paths(self, node: ast.If, cond: Val, out: list[ir.Stmt], rest: list[ast.stmt]) -> bool:
        """cuTile Python traces one branch per specialization; Rust types both. Where the branches
        leave a name with types that cannot be merged and later code reads it, the code after the
        `if` is translated once in each branch, typed by that branch's bindings. Where a branch on
        ct.Constant values cannot be translated at all, only the other is, and the launcher
        refuses the values that take it, saying why (cuTile Python compiles it only for them)."""
        mark = self._checkpoint(out)
        try:
            branches, _ = self._branches(cond, [_path(node.body, rest), _path(node.orelse, rest)], paths=True)
            out.append(ir.IfElse(cond.expr, branches[0], branches[1], node.lineno))
            return True
        except TranslationError as e:
            if not self._on_constants(cond.expr):
                raise
            self._rollback(mark, out)
            failure = e
        negated = ir.Binary("==", cond.expr, ir.Lit("false"))
        enclosing = self.path
        for known, body in ((True, node.body), (False, node.orelse)):
            mark = self._checkpoint(out)
            self.facts = self._assume(cond.expr, known)
            try:
                self._block(_path(body, rest), out)
            except TranslationError:
                self._rollback(mark, out)
                continue
            self.path = enclosing  # the launcher decides this condition: the facts it gives hold from here on
            test = f"{self.src.display_file}:{node.lineno}: `{ast.unparse(node.test)}`"
            self.launch_check(cond.expr if known else negated,
                              f"{test} must be {known}: the other branch is not translated ({failure})")
            refusal = f"{test} {'false' if known else 'true'}: {failure}"
            if refusal not in self.refusals:
                self.refusals.append(refusal)
            return True
        raise failure

    def _branches(self, cond: Val, bodies: list[list[ast.stmt]],
                  paths: bool = False) -> tuple[list[list[ir.Stmt]], list[_BranchScope]]:
        """The two branches of an `if`, each in a scope of its own. Where the condition depends on
        ct.Constant values only, an `if` on the same condition inside a branch is decided. With
        `paths`, the bodies are whole paths through the rest of the block, and each array access
        counts once per path, not once per copy."""
        base = copy.deepcopy(self.counted)
        per_path = []
        branches, scopes = [], []
        self.guarded += 1
        for known, body in zip((True, False), bodies):
            if paths:
                self.counted = copy.deepcopy(base)
            saved_facts, saved_path = self.facts, self.path
            if self._on_constants(cond.expr):
                self.facts = self._assume(cond.expr, known)
            stmts: list[ir.Stmt] = []
            self.scopes.append(_BranchScope())
            self._block(body, stmts)
            scopes.append(self.scopes.pop())  # names first bound in a branch end with it, as in Rust...
            branches.append(stmts)
            self.facts, self.path = saved_facts, saved_path
            per_path.append(self.counted)
        self.guarded -= 1
        if paths:
            self.counted = {name: _ArrayUse(*(max(getattr(c[name], f) for c in per_path)
                                              for f in ("loads", "stores", "other"))) for name in base}
        return branches, scopes

    def launch_check(self, cond: ir.Expr, why: str) -> None:
        """A condition on ct.Constant values for the launcher to check, on this branch's path only."""
        if self.path:
            taken = self.path[0]
            for c in self.path[1:]:
                taken = ir.Binary("&&", taken, c)
            cond = ir.Binary("||", ir.Binary("==", taken, ir.Lit("false")), cond)
        if (cond, why) not in self.launch_checks:
            self.launch_checks.append((cond, why))

    def _assume(self, cond: ir.Expr, known: bool) -> dict[ir.Expr, bool | int]:
        """The facts inside a branch taken where `cond`, a condition on ct.Constant values, is `known`
        (`self.path` gains the condition as it holds there)."""
        negated = ir.Binary("==", cond, ir.Lit("false"))
        self.path = (*self.path, cond if known else negated)
        facts = {**self.facts, cond: known, negated: not known}
        if isinstance(cond, ir.Binary) and cond.op in ("==", "!=") and known == (cond.op == "==") and isinstance(
                cond.lhs, ir.Var) and isinstance(cond.rhs, ir.Lit) and cond.rhs.text.endswith("i32"):
            facts[cond.lhs] = int(cond.rhs.text[:-3])
        return facts

    def _on_constants(self, expr: ir.Expr) -> bool:
        """Whether `expr` is made of literals and ct.Constant parameters only."""
        consts = {rust_name(c.name) for c in self.params if isinstance(c, ir.ConstParam)}
        if isinstance(expr, ir.Lit):
            return True
        if isinstance(expr, ir.Var):
            return expr.name in consts
        if isinstance(expr, ir.Binary):
            return self._on_constants(expr.lhs) and self._on_constants(expr.rhs)
        return False

    def _branch_rebinds(self, prev: _Binding | None) -> bool:
        """Whether binding a name bound as `prev` happens inside branches of `if`s entered since,
        with no loop in between."""
        if prev is None or prev.depth >= self.depth:
            return False
        return all(isinstance(s, _BranchScope) for s in self.scopes[prev.depth - self.depth_base + 1:])

    # What translating an `if` may change, kept by `_checkpoint` for `_rollback` to translate it again.
    _RESTORED = ("used_names", "guarded", "facts", "path", "counted", "stored_dtypes", "derived", "partitions",
                 "mutable_views", "branch_conflicts", "sites", "site_steps", "pointer_tokens")
    _GROWN = ("scopes", "unsafe_reasons", "launch_checks", "refusals", "partition_lets", "accesses")

    def _checkpoint(self, out: list[ir.Stmt]) -> tuple:
        return (len(out), dict(self.scopes[-1]), {a: copy.deepcopy(getattr(self, a)) for a in self._RESTORED},
                {a: len(getattr(self, a)) for a in self._GROWN})

    def _rollback(self, mark: tuple, out: list[ir.Stmt]) -> None:
        n_out, scope, saved, lengths = mark
        del out[n_out:]
        for attr, n in lengths.items():
            del getattr(self, attr)[n:]
        for attr, value in saved.items():
            setattr(self, attr, value)
        self.scopes[-1].clear()
        self.scopes[-1].update(scope)

    def _merge_branches(self, node: ast.If, scopes: list[_BranchScope], branches: list[list[ir.Stmt]],
                        out: list[ir.Stmt]) -> dict[str, str]:
        """Makes what the branches bound visible after the `if`, as Python sees it. A name a branch
        rebinds to a value of its outer type is assigned back to the outer variable; a name only
        one branch rebinds keeps its outer value in the other. Returns the names left unmerged,
        with why."""
        for i, items in enumerate([list(scope.items()) for scope in scopes]):
            for name, b in items:
                outer = self.lookup(name)
                if outer is None:
                    continue
                if outer.let is not None and b.val.kind in ("tile", "scalar") and b.val.type == outer.val.type:
                    outer.let.mutable = True
                    branches[i].append(ir.Assign(outer.let.name, b.val.expr, node.lineno))
                    outer.val = replace(outer.val, bid_axis=None, nonneg=outer.val.nonneg and b.val.nonneg,
                                        iota_offset=None, defn=None)
                    del scopes[i][name]
                elif name not in scopes[1 - i]:
                    scopes[1 - i][name] = outer  # the other branch leaves it as it was
        return self._hoist_branch_names(node, scopes, branches, out)

    def _hoist_branch_names(self, node: ast.If, scopes: list[_BranchScope], branches: list[list[ir.Stmt]],
                            out: list[ir.Stmt]) -> dict[str, str]:
        """A name both branches bind once, to values of one type, lives on after the `if` in Python:
        declare it before (`let mut`, a zero), and make the branches assign it. Returns the names
        that could not live on this way, with why."""
        unmerged = {name: f"'{name}' is bound in one branch only of the if at line {node.lineno}"
                    for name in scopes[0].keys() ^ scopes[1].keys()}
        for name, first in scopes[0].items():
            second = scopes[1].get(name)
            if second is None:
                continue
            why = (f"'{name}' is {_show(first.val.type) if first.val.type else first.val.kind} in one branch of the if "
                   f"at line {node.lineno} and {_show(second.val.type) if second.val.type else second.val.kind} "
                   "in the other")
            consts = (first.val, second.val)
            if all(v.kind == "const" and type(v.py) in (int, float) for v in consts) and \
                    type(consts[0].py) is type(consts[1].py):
                # A constant that differs by branch becomes a runtime scalar.
                dt = "i32" if isinstance(consts[0].py, int) else "f32"
                var = self.fresh(rust_name(name))
                let = ir.Let(var, ir.ScalarType(dt), self._zero(ir.ScalarType(dt), out, var), node.lineno, mutable=True)
                out.append(let)
                for v, branch in zip(consts, branches):
                    branch.append(ir.Assign(var, number_literal(v.py, dt), node.lineno))
                self.scopes[-1][name] = _Binding(Val("scalar", ir.ScalarType(dt), ir.Var(var)), let, self.depth)
                continue
            if self._merge_number_and_scalar(node, name, first, second, branches, out):
                continue
            if first.let is None or second.let is None:
                unmerged[name] = why
                continue
            lets = (first.let, second.let)
            if not all(let in branch for let, branch in zip(lets, branches)):
                unmerged[name] = why
                continue  # bound inside a nested block of the branch
            converted = self._common_branch_dtype(first.val.type, second.val.type)
            if first.val.type != second.val.type and converted is None:
                unmerged[name] = why
                continue
            # Each branch's last binding of the name becomes an assignment to one variable declared
            # before the `if`; where a branch binds the name more than once (e.g. `a = load(..)`
            # then `a = transpose(a)`), that variable gets a name of its own, so the earlier
            # bindings cannot shadow it.
            shadowed = any(isinstance(st, ir.Let) and st.name in (lets[0].name, lets[1].name) and st not in lets
                           for branch in branches for st in branch)
            var = (self.fresh(lets[0].name) if shadowed or converted is not None or lets[0].name != lets[1].name
                   or any(l.mutable for l in lets) else lets[0].name)
            type_ = converted or first.val.type
            zero = self._zero(type_, out, var)
            if zero is None:
                unmerged[name] = why
                continue
            outer = ir.Let(var, type_, zero, node.lineno, mutable=True)
            out.append(outer)
            for let, val, branch in zip(lets, (first.val, second.val), branches):
                if converted is not None and val.type != converted:
                    branch.append(ir.Assign(var, ir.Call("convert_tile", (ir.Var(let.name),)), let.line))
                elif let.mutable or let.name != var:
                    # Later statements of the branch assign it, or read it under its own name: the
                    # binding stays, and is copied out at the end.
                    branch.append(ir.Assign(var, ir.Var(let.name), let.line))
                else:
                    branch[branch.index(let)] = ir.Assign(var, let.value, let.line)
            self.scopes[-1][name] = _Binding(Val(first.val.kind, type_, ir.Var(var)), outer, self.depth)
        return unmerged

    def _merge_number_and_scalar(self, node: ast.If, name: str, first: _Binding, second: _Binding,
                                 branches: list[list[ir.Stmt]], out: list[ir.Stmt]) -> bool:
        """`start = bid * T // M` in one branch and `start = 0` in the other: one runtime scalar
        after the `if`, each branch assigning it at its end."""
        vals = (first.val, second.val)
        scalar = next((v for v in vals if v.kind == "scalar"), None)
        number = next((v for v in vals if v.kind == "const" and type(v.py) in (int, float)), None)
        if scalar is None or number is None or scalar.dtype not in ("i32", "f32") or (
                isinstance(number.py, float) and scalar.dtype != "f32"):
            return False
        var = self.fresh(rust_name(name))
        type_ = ir.ScalarType(scalar.dtype)
        let = ir.Let(var, type_, self._zero(type_, out, var), node.lineno, mutable=True)
        out.append(let)
        for v, branch in zip(vals, branches):
            value = v.expr if v.kind == "scalar" else number_literal(v.py, scalar.dtype)
            branch.append(ir.Assign(var, value, node.lineno))
        self.scopes[-1][name] = _Binding(Val("scalar", type_, ir.Var(var), nonneg=all(self._nonneg(v) for v in vals)),
                                         let, self.depth)
        return True

    def _common_branch_dtype(self, a: ir.Type, b: ir.Type) -> ir.TileType | None:
        """Two branches bind one name to tiles of one shape, one of an array's dtype, the other of
        a concrete dtype (e.g. `mean = ct.sum(x) / D` or `mean = ct.gather(Mean, rows)` under a
        ct.Constant): cuTile Python traces one branch per specialization, Rust types both. The
        array's dtype is restricted to the concrete one (the launcher refuses others), so the
        conversion that makes the branches agree changes nothing. None where that does not apply."""
        if not (isinstance(a, ir.TileType) and isinstance(b, ir.TileType) and a.shape == b.shape):
            return None
        da, db = self.union.find(a.dtype), self.union.find(b.dtype)
        if da == db or da.startswith("$") == db.startswith("$"):
            return None
        generic, concrete = (da, db) if da.startswith("$") else (db, da)
        self.stored_dtypes.setdefault(generic[1:], set()).add(concrete)
        return ir.TileType(concrete, a.shape)

    def _zero(self, type_: ir.Type, out: list[ir.Stmt], hint: str) -> ir.Expr | None:
        """A placeholder value of `type_` (overwritten by both branches before any use)."""
        if isinstance(type_, ir.ScalarType):
            return {"i32": ir.Lit("0i32"), "i64": ir.Lit("0i64"), "f32": ir.Lit("0.0f32"),
                    "bool": ir.Lit("false")}.get(type_.dtype)
        if isinstance(type_, ir.TileType) and self.union.find(type_.dtype) != "bool":
            tile = self._splat(Val("const", py=0), type_.dtype, type_.shape, out, f"{hint}_init", self.src.func)
            return tile.expr
        return None

    def _for(self, node: ast.For, out: list[ir.Stmt]) -> None:
        if node.orelse:
            raise self.error(node, "for-else is not supported")
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "loop targets must be a single name")
        it = node.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
                and not it.keywords and 1 <= len(it.args) <= 3):
            raise self.error(it, "only `for ... in range(...)` loops are supported")
        split = split_loop(node, {name for _, name in _assignments(node)})
        if split is not None:
            for half in split[0]:
                self._stmt(half, out, [])
            return
        bound_vals = [self.expr(a, out) for a in it.args]
        bounds = [self._i32(v, a, out) for v, a in zip(bound_vals, it.args)]
        start_nonneg = len(bound_vals) == 1 or self._nonneg(bound_vals[0])
        start, stop, step = (ir.Lit("0i32"), bounds[0], None) if len(bounds) == 1 else (
            bounds[0], bounds[1], bounds[2] if len(bounds) == 3 else None)
        if step is not None and isinstance(step, ir.Lit) and step.text == "1i32":
            step = None
        var = rust_name(node.target.id)
        body: list[ir.Stmt] = []
        loop_var = Val("scalar", ir.ScalarType("i32"), ir.Var(var), nonneg=start_nonneg)
        self.scopes.append({node.target.id: _Binding(loop_var, None, self.depth + 1)})
        self.loop_count += 1
        self.loops.append(self.loop_count)
        self.loop_vars[self.loop_count] = var
        # A grid-stride loop (`range(ct.bid(0), n, NUM_SMS)`) to a bound known when cutile compiles:
        # cutile assumes block ids >= 0 and bounds a `for` loop's index, from which tileiras counts
        # at most n / NUM_SMS trips and unrolls them all (the persistent layer norm: 8 copies of
        # the body, 6x the SASS of cuTile Python's, registers spilled), where cuTile Python's loop
        # from an unbounded block id stays a loop. As a `while` loop it stays a loop here too.
        stride = len(bounds) == 3 and len(node.body) > 0 and not self._compile_time(start) and \
            self._compile_time(stop) and self._positive_step(bound_vals[2], step)
        try:
            self._block(node.body, body)
        finally:
            self.loops.pop()
        self.scopes.pop()
        if not stride:
            out.append(ir.For(var, start, stop, step, body, node.lineno))
            return
        counter = self.fresh(f"{var}_next")
        out.append(ir.Let(counter, ir.ScalarType("i32"), start, node.lineno, mutable=True))
        body.insert(0, ir.Let(var, ir.ScalarType("i32"), ir.Var(counter), node.lineno))
        body.append(ir.Assign(counter, ir.Binary("+", ir.Var(counter), step or ir.Lit("1i32")), node.lineno))
        out.append(ir.While(ir.Binary("<", ir.Var(counter), stop), body, node.lineno))

    def _compile_time(self, expr: ir.Expr, depth: int = 0) -> bool:
        """Whether cutile knows `expr` when it compiles: literals and ct.Constant values, through
        arithmetic, ct.cdiv/min/max and the scalar names bound to them."""
        if isinstance(expr, ir.Var) and depth < 24 and (expr.name in self.scalar_defs or expr.name in self.temp_defs):
            return self._compile_time(self.scalar_defs.get(expr.name, self.temp_defs.get(expr.name)), depth + 1)
        if isinstance(expr, ir.Call) and expr.func in ("ceil_div", "min", "max", "divi", "scalar_to_tile",
                                                       "tile_to_scalar", "convert_scalar"):
            return all(self._compile_time(a, depth + 1) for a in expr.args)
        if isinstance(expr, ir.Binary):
            return self._compile_time(expr.lhs, depth + 1) and self._compile_time(expr.rhs, depth + 1)
        if isinstance(expr, ir.If):
            return all(self._compile_time(e, depth + 1) for e in (expr.cond, expr.then, expr.other))
        return self._on_constants(expr)

    def _positive_step(self, val: Val, step: ir.Expr | None) -> bool:
        """A loop step known positive: a positive literal, or a ct.Constant then checked so at launch."""
        if step is None or (val.kind == "const" and isinstance(val.py, int) and val.py > 0):
            return True
        if val.kind == "scalar" and val.dim is not None:
            self._require_positive(val)
            return True
        return False

    def _while(self, node: ast.While, out: list[ir.Stmt]) -> None:
        if node.orelse:
            raise self.error(node, "while-else is not supported")
        test: list[ir.Stmt] = []
        cond = self.expr(node.test, test, hint="cond")
        if cond.kind == "tile" and cond.shape == () and self.union.find(cond.dtype) == "bool":
            cond = self._scalar_of(cond, test, "cond")
        if test or cond.kind != "scalar" or cond.dtype != "bool":
            raise self.error(node.test, "a while condition must be a comparison of scalars (or `and`/`or` of "
                                        "them) that needs no statements of its own")
        body: list[ir.Stmt] = []
        self.scopes.append({})
        self.loop_count += 1
        self.loops.append(self.loop_count)
        try:
            self._block(node.body, body)
        finally:
            self.loops.pop()
        self.scopes.pop()
        out.append(ir.While(cond.expr, body, node.lineno))

    def expr(self, node: ast.expr, out: list[ir.Stmt], hint: str = "v") -> Val:
        self.lines.add(getattr(node, "lineno", self.line))
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (bool, int, float)):
                return Val("const", py=node.value)
            raise self.error(node, "this literal is not supported in kernels")
        if isinstance(node, ast.Name):
            b = self.lookup(node.id)
            if b is not None:
                return b.val
            if node.id in self.branch_conflicts and node.id not in self.globals:
                raise self.error(node, f"{self.branch_conflicts[node.id]}, so it has no one value here")
            return self._static(self._eval_static(node), node)
        if isinstance(node, ast.Tuple):
            return Val("tuple", py=[self.expr(e, out, hint) for e in node.elts])
        if isinstance(node, ast.Attribute):
            return self._attribute(node, out)
        if isinstance(node, ast.BinOp):
            return self._binop(node, self.expr(node.left, out, hint), self.expr(node.right, out, hint), out, hint)
        if isinstance(node, ast.UnaryOp):
            return self._unary(node, self.expr(node.operand, out, hint), out, hint)
        if isinstance(node, ast.Call):
            return self._call(node, out, hint)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, out, hint)
        if isinstance(node, ast.Compare):
            return self._compare(node, out, hint)
        if isinstance(node, ast.BoolOp):
            return self._boolop(node, out, hint)
        if isinstance(node, ast.IfExp):
            return self._ifexp(node, out, hint)
        raise self.error(node, f"{type(node).__name__} expressions are not supported yet")

    def _tile_newaxis(self, node: ast.Subscript, base: Val, out: list[ir.Stmt], hint: str) -> Val:
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
        result = self._bind_temp(out, hint, ir.TileType(base.dtype, shape_t), ir.Method(base.expr, "reshape",
                                                                                        (ir.Shape(shape_t),)))
        result.nonneg = base.nonneg
        return result

    def _compare(self, node: ast.Compare, out: list[ir.Stmt], hint: str) -> Val:
        ops = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
        left = self.expr(node.left, out, hint)
        result: Val | None = None
        for op, comp in zip(node.ops, node.comparators):
            if type(op) not in ops:
                raise self.error(node, f"the comparison {type(op).__name__} is not supported")
            right = self.expr(comp, out, hint)
            if left.kind == "dtype" and right.kind == "dtype" and isinstance(op, (ast.Eq, ast.NotEq)):
                part = self._dtype_test(node, left, right, isinstance(op, ast.NotEq))
                if part.kind == "dtype_test" and len(node.ops) > 1:
                    raise self.error(node, "chained comparisons of dtypes are not supported")
                if part.kind == "dtype_test":
                    return part
            elif left.kind == "const" and right.kind == "const":
                part = Val("const", py=_COMPARE[type(op)](left.py, right.py))
            elif "tile" in (left.kind, right.kind):
                if len(node.ops) > 1:
                    raise self.error(node, "chained comparisons of tiles are not supported yet")
                self._integer_comparison(op, left, right)
                type_, a, b = self._tile_operands(node, left, right, out, hint)
                func = {"<": "lt_tile", "<=": "le_tile", ">": "gt_tile", ">=": "ge_tile", "==": "eq_tile",
                        "!=": "ne_tile"}[ops[type(op)]]
                return self._bind_temp(out, hint, ir.TileType("bool", type_.shape), ir.Call(func, (a, b)))
            else:
                typed = self._scalar_binop(node, ops[type(op)], left, right)
                part = Val("scalar", ir.ScalarType("bool"), typed.expr)
            result = part if result is None else self._and(result, part)
            left = right
        assert result is not None
        return result

    def _integer_comparison(self, op: ast.cmpop, left: Val, right: Val) -> None:
        """An array's values compared for equality with integers, or ordered against an integer
        scalar (a count, a position), are integers (see `_integer`)."""
        for a, b in ((left, right), (right, left)):
            if a.kind in ("tile", "scalar") and b.kind in ("tile", "scalar") and \
                    self.union.find(a.dtype).startswith("$") and self.union.find(b.dtype) in ("i32", "i64") and \
                    (isinstance(op, (ast.Eq, ast.NotEq)) or b.kind == "scalar"):
                self._integer(a.dtype)

    def _dtype_test(self, node: ast.AST, a: Val, b: Val, negate: bool) -> Val:
        """`A.dtype == ct.float32`: a constant where both dtypes are known, else a test of the
        dtype the launcher binds, which only a conditional expression choosing a dtype may use."""
        ra, rb = self.union.find(a.py), self.union.find(b.py)
        generic = [r for r in (ra, rb) if r.startswith("$")]
        if not generic:
            return Val("const", py=(ra == rb) != negate)
        if len(generic) == 2:
            if ra == rb:
                return Val("const", py=not negate)
            raise self.error(node, "comparing the dtypes of two arrays is not supported yet")
        concrete = rb if ra.startswith("$") else ra
        return Val("dtype_test", py=(generic[0], concrete, negate))

    def _derived_dtype(self, node: ast.IfExp, test: Val, then: Val, other: Val) -> Val:
        """`X if A.dtype == d else Y` over dtypes: a dtype the launcher picks from A's."""
        if then.kind != "dtype" or other.kind != "dtype":
            raise self.error(node, "a test of an array's dtype can only choose between dtypes here")
        cls, when, negate = test.py
        if negate:
            then, other = other, then
        key = (cls, when, self.union.find(then.py), self.union.find(other.py))
        for name, k in self.derived.items():
            if k == key:
                return Val("dtype", py=name)
        name = f"@{len(self.derived)}"
        self.derived[name] = key
        return Val("dtype", py=name)

    def _and(self, a: Val, b: Val, op: str = "&&") -> Val:
        if a.kind == "const":
            return b if bool(a.py) == (op == "&&") else a
        if b.kind == "const":
            return a if bool(b.py) == (op == "&&") else b
        return Val("scalar", ir.ScalarType("bool"), ir.Binary(op, a.expr, b.expr))

    def _boolop(self, node: ast.BoolOp, out: list[ir.Stmt], hint: str) -> Val:
        op = "&&" if isinstance(node.op, ast.And) else "||"
        vals = [self.expr(v, out, hint) for v in node.values]
        for v, n in zip(vals, node.values):
            if v.kind not in ("const", "scalar") or (v.kind == "scalar" and v.dtype != "bool"):
                raise self.error(n, "`and`/`or` take bools or comparisons here")
        result = vals[0]
        for v in vals[1:]:
            result = self._and(result, v, op)
        return result

    def _ifexp(self, node: ast.IfExp, out: list[ir.Stmt], hint: str) -> Val:
        cond = self.expr(node.test, out, hint)
        if cond.kind == "const":
            return self.expr(node.body if cond.py else node.orelse, out, hint)
        self.guarded += 1
        a, b = self.expr(node.body, out, hint), self.expr(node.orelse, out, hint)
        self.guarded -= 1
        if cond.kind == "dtype_test":
            return self._derived_dtype(node, cond, a, b)
        if cond.kind != "scalar" or "tile" in (a.kind, b.kind):
            raise self.error(node, "a conditional expression must choose between scalars here")
        dtype = a.dtype if a.kind == "scalar" else b.dtype if b.kind == "scalar" else None
        if dtype is None:
            raise self.error(node, "a conditional expression of two constants under a runtime condition is not "
                                   "supported yet")
        typed = self._scalar_binop(node, "+", a, b)  # checks and types both sides alike
        return Val("scalar", ir.ScalarType(dtype), ir.If(cond.expr, typed.expr.lhs, typed.expr.rhs))

    def _subscript(self, node: ast.Subscript, out: list[ir.Stmt], hint: str) -> Val:
        base = self.expr(node.value, out, hint)
        if base.kind == "tile":
            return self._tile_newaxis(node, base, out, hint)
        index = self.expr(node.slice, out)
        if base.kind == "list":
            return self._list_item(node, base, index, out, hint)
        if base.kind == "tuple" and index.kind == "const" and isinstance(index.py, int):
            try:
                return base.py[index.py]
            except IndexError:
                raise self.error(node, "tuple index out of range") from None
        if base.kind == "static":
            try:
                return self._static(base.py[index.py], node)
            except Exception:
                raise self.error(node, "cannot index this value") from None
        raise self.error(node, f"indexing a {base.kind} is not supported yet")

    def _static(self, obj: Any, node: ast.AST) -> Val:
        if isinstance(obj, (bool, int, float)):
            return Val("const", py=obj)
        d = dtype_name(obj)
        if d is not None and obj not in (int, float):
            return Val("dtype", py=d)
        return Val("static", py=obj)

    def _attribute(self, node: ast.Attribute, out: list[ir.Stmt]) -> Val:
        base = self.expr(node.value, out)
        if base.kind == "static":
            try:
                return self._static(getattr(base.py, node.attr), node)
            except AttributeError:
                raise self.error(node, "unknown attribute") from None
        if node.attr == "dtype" and base.kind in ("array", "tile"):
            return Val("dtype", py=f"${base.py}" if base.kind == "array" else base.dtype)
        if node.attr == "shape" and base.kind == "tile":
            return Val("tuple", py=[self._dim_val(d) for d in base.shape])
        if node.attr == "shape" and base.kind == "array":
            array = self.arrays[base.py]
            if not array.rank:
                raise self.error(node, f"the rank of '{array.name}' is not known here; load or store it first")
            shape = ir.Method(base.expr, "shape")
            return Val("tuple", py=[Val("scalar", ir.ScalarType("i32"), ir.Subscript(shape, i), nonneg=True)
                                    for i in range(array.rank)])
        if node.attr == "ndim" and base.kind == "array" and self.arrays[base.py].rank:
            return Val("const", py=self.arrays[base.py].rank)
        raise self.error(node, f"attribute '.{node.attr}' of a {base.kind} is not supported yet")

    def _dim_val(self, d: ir.Dim) -> Val:
        if isinstance(d, int):
            return Val("const", py=d)
        return Val("scalar", ir.ScalarType("i32"), ir.Var(rust_name(d)), dim=d)

    def _i32(self, val: Val, node: ast.AST, out: list[ir.Stmt] | None = None) -> ir.Expr:
        """`val` where an i32 scalar is needed (an index, a bound, a count). A 0-d tile is a scalar
        in cuTile Python: its value, through `out`; an index array's values are converted."""
        if val.kind == "const" and isinstance(val.py, int) and not isinstance(val.py, bool):
            return ir.Lit(f"{val.py}i32")
        if val.kind == "scalar" and val.dtype == "i32":
            return val.expr
        if val.kind == "scalar" and self.survey and self.union.find(val.dtype).startswith("$"):
            self._integer(val.dtype)  # an array's value used as an index (survey only: see `.item()`)
            return val.expr
        if val.kind == "tile" and val.shape == () and out is not None and self._integer(val.dtype):
            return self._scalar_of(self._convert(val, "i32", out, "index"), out, "index").expr
        raise self.error(node, "expected an i32 scalar (an index, a bound or a count)")

    def _int_const(self, val: Val, node: ast.AST) -> int:
        if val.kind == "const" and isinstance(val.py, int) and not isinstance(val.py, bool):
            return val.py
        raise self.error(node, "expected an integer constant")

    def _dims(self, node: ast.expr, out: list[ir.Stmt]) -> tuple[ir.Dim, ...]:
        val = self.expr(node, out)
        items = val.py if val.kind == "tuple" else [val]
        dims: list[ir.Dim] = []
        for item in items:
            if item.kind == "const" and isinstance(item.py, int) and item.py > 0:
                dims.append(item.py)
            elif item.kind == "scalar" and item.dim is not None:
                dims.append(item.dim)
                self._mark_tile_dim(item.dim)
            else:
                raise self.error(node, "tile shapes must be made of positive integer literals and ct.Constant[int] "
                                       "parameters")
        return tuple(dims)

    def _mark_tile_dim(self, name: str) -> None:
        for p in self.params:
            if isinstance(p, ir.ConstParam) and p.name == name:
                p.tile_dim = True

    def _dtype_arg(self, node: ast.expr, out: list[ir.Stmt]) -> str:
        val = self.expr(node, out)
        if val.kind == "dtype":
            return val.py
        if val.kind == "static" and val.py in (int, float):
            return dtype_name(val.py)
        raise self.error(node, "expected a dtype (ct.float32, ..., or an array's .dtype)")

    def _bind_temp(self, out: list[ir.Stmt], hint: str, type_: ir.Type, value: ir.Expr) -> Val:
        name = self.fresh(hint)
        self.temps.add(name)
        self.temp_defs[name] = value
        out.append(ir.Let(name, type_, value, self.line))
        return Val("tile" if isinstance(type_, ir.TileType) else "scalar", type_, ir.Var(name))

    def _scalar_of(self, tile: Val, out: list[ir.Stmt], hint: str) -> Val:
        """The value of a 0-d tile, as a scalar. cutile's tile_to_scalar leaves the JIT's own type
        of the value a tile, against which it cannot fold constants ("expected a scalar element
        type" for `v - (B - 1)`); convert_scalar after it gives the value a scalar's type."""
        type_ = ir.ScalarType(self.union.find(tile.dtype))
        raw = self._bind_temp(out, hint, type_, ir.Call("tile_to_scalar", (tile.expr,)))
        return self._bind_temp(out, hint, type_, ir.Call("convert_scalar", (raw.expr,)))

    def _convert(self, val: Val, dtype: str, out: list[ir.Stmt], hint: str) -> Val:
        if self.union.find(val.dtype) == self.union.find(dtype):
            return val
        if self.union.find(dtype) in ("i32", "i64"):
            self._integer(val.dtype)  # an array's values taken as integers
        if self._int_tile(val.dtype) and self._int_tile(dtype):
            if self._pinned(val.dtype) is not None and self._pinned(val.dtype) == self._pinned(dtype):
                # One integer type at every launch (e.g. an index array stated int32): convert_tile is
                # the identity, and tileiras keeps what it knows of the value (its divisibility).
                return self._bind_temp(out, hint, ir.TileType(dtype, val.shape), ir.Call("convert_tile", (val.expr,)))
            # cutile 0.5.0 converts no integer to another integer type (its convert_tile does identity
            # and int <-> float only), and an index array's is i32 or i64 as launched: through f64,
            # exact below 2**53.
            wide = self._bind_temp(out, hint, ir.TileType("f64", val.shape), ir.Call("convert_tile", (val.expr,)))
            return self._bind_temp(out, hint, ir.TileType(dtype, val.shape), ir.Call("convert_tile", (wide.expr,)))
        if self.union.find(val.dtype) == "bool":
            # cutile converts no bools: True and False are chosen as 1 and 0 of the target dtype.
            ones, zeros = (self._splat(Val("const", py=v), dtype, val.shape, out, hint, self.src.func) for v in (1, 0))
            return self._bind_temp(out, hint, ir.TileType(dtype, val.shape),
                                   ir.Call("select", (val.expr, ones.expr, zeros.expr)))
        return self._bind_temp(out, hint, ir.TileType(dtype, val.shape), ir.Call("convert_tile", (val.expr,)))

    def _splat(self, val: Val, dtype: str, shape: tuple[ir.Dim, ...], out: list[ir.Stmt], hint: str,
               node: ast.AST) -> Val:
        """A compile-time or scalar value as a tile of `dtype` and `shape`."""
        if val.kind == "const":
            concrete = dtype if dtype in _FLOATS or dtype in ("i32", "i64") else (
                "i32" if self._index_class(dtype) else "f32")
            if concrete in ("f16", "bf16", "tf32"):
                concrete = "f32"
            if concrete in _FLOATS:
                lit = float_literal(float(val.py), concrete)
            else:
                if isinstance(val.py, float):
                    raise self.error(node, "a float literal cannot combine with an integer tile")
                lit = ir.Lit(f"{int(val.py)}{concrete}")
            tile = self._scalar_tile(lit, concrete, shape, out, hint)
            if concrete != dtype:
                return self._convert(self._named(tile, out, hint), dtype, out, hint)
            return tile
        if val.kind == "scalar":
            tile = self._scalar_tile(val.expr, val.dtype, shape, out, hint)
            if val.dtype != dtype:
                tile_is_float = dtype in _FLOATS or dtype.startswith("$")
                if not tile_is_float and self.survey and self.union.find(val.dtype).startswith("$"):
                    self._integer(val.dtype)  # an array's value (`.item()`) with an integer tile
                elif not tile_is_float:  # a float scalar with an integer tile
                    raise self.error(node, f"a {val.dtype} scalar cannot combine with a {dtype} tile")
                return self._convert(self._named(tile, out, hint), dtype, out, hint)
            return tile
        raise self.error(node, f"{_a(val.kind)} cannot be used as a tile operand")

    def _named(self, val: Val, out: list[ir.Stmt], hint: str) -> Val:
        """`val` bound to a typed name, unless it is one already."""
        return val if isinstance(val.expr, ir.Var) else self._bind_temp(out, hint, val.type, val.expr)

    def _scalar_tile(self, value: ir.Expr, dtype: str, shape: tuple[ir.Dim, ...], out: list[ir.Stmt], hint: str) -> Val:
        """A tile of `shape` holding the scalar `value` everywhere. A 0-d one wraps the scalar (cutile's
        0-d broadcast breaks Tile IR's same-rank rule), under a typed name (rustc cannot infer it)."""
        if shape:
            return Val("tile", ir.TileType(dtype, shape), ir.Call("broadcast_scalar", (value, ir.Shape(shape))))
        return self._bind_temp(out, hint, ir.TileType(dtype, ()), ir.Call("scalar_to_tile", (value,)))

    def _broadcast(self, val: Val, shape: tuple[ir.Dim, ...], out: list[ir.Stmt], hint: str) -> Val:
        if val.shape == shape:
            return val
        if isinstance(val.expr, ir.Var):
            hint = f"{val.expr.name}_bcast"
        if len(val.shape) < len(shape):
            padded = (1,) * (len(shape) - len(val.shape)) + val.shape
            val = self._bind_temp(out, hint, ir.TileType(val.dtype, padded), ir.Method(val.expr, "reshape", (ir.Shape(padded),)))
            if padded == shape:
                return val
        return self._bind_temp(out, hint, ir.TileType(val.dtype, shape), ir.Method(val.expr, "broadcast", (ir.Shape(shape),)))

    def _broadcast_shape(self, a: tuple, b: tuple, node: ast.AST) -> tuple:
        n = max(len(a), len(b))
        a = (1,) * (n - len(a)) + a
        b = (1,) * (n - len(b)) + b
        shape = []
        for x, y in zip(a, b):
            if x == y or self._dim_value(y) == 1:
                shape.append(x)
            elif self._dim_value(x) == 1:
                shape.append(y)
            else:
                raise self.error(node, f"tile shapes {a} and {b} do not broadcast")
        return tuple(shape)

    def _dim_value(self, d: ir.Dim) -> ir.Dim:
        """A tile dimension, as a number where this branch knows the ct.Constant naming it."""
        return self.facts.get(ir.Var(rust_name(d)), d) if isinstance(d, str) else d

    def _integer(self, dtype: str) -> bool:
        """Whether values of `dtype` are integers. Of an array's dtype, asked where the kernel uses
        them as integers only (an index, a bound, `//`, `%`, bits, equality with integers): this
        makes the array an index array, which the launcher takes as int32 or int64."""
        root = self.union.find(dtype)
        if root.startswith("$"):
            self.int_arrays.update(a for a in self.arrays if self.union.find(f"${a}") == root)
            return True
        return root in ("i32", "i64", "i16", "i8", "u8")

    def _int_tile(self, dtype: str) -> bool:
        """Whether tiles of `dtype` hold integers: a concrete integer dtype, or an index array's."""
        return self.union.find(dtype) in ("i32", "i64") or self._index_class(dtype)

    def _index_class(self, dtype: str) -> bool:
        """Whether `dtype` is the dtype of an index array (see `_integer`), without making it one."""
        root = self.union.find(dtype)
        return root.startswith("$") and any(self.union.find(f"${a}") == root for a in self.int_arrays)

    def _common_dtype(self, a: str, b: str, node: ast.AST) -> str:
        ra, rb = self.union.find(a), self.union.find(b)
        if ra == rb:
            return a
        if ra.startswith("$") and rb.startswith("$"):
            # Two arrays' dtypes meet in one operation: cuTile Python requires (or promotes to)
            # one dtype, so the launcher will require them to be equal.
            self.union.union(ra, rb)
            return a
        concrete = rb if ra.startswith("$") else ra
        generic = ra if ra.startswith("$") else rb
        if concrete in ("i32", "i64") and self._index_class(generic):
            return concrete  # an index array's values, converted to the kernel's integers
        if concrete in ("i32", "i64") and self.survey:
            return generic  # the survey goes on: later uses may tell it is an index
        stated = [d for a in self.arrays if self.union.find(f"${a}") == generic for d in self.user_dtypes.get(a, ())]
        if concrete == "f32" and all(_cutile_dtype(d) in DEFAULT_DTYPES for d in stated):
            # An array's dtype (f32, f16 or bf16 unless stated otherwise) with f32: cuTile Python promotes to f32.
            return "f32"
        if ra.startswith("$") or rb.startswith("$"):
            raise self.error(node, f"this mixes a tile of an array's dtype with a {rb if ra.startswith('$') else ra} tile; "
                                   "make the dtypes explicit with .astype()")
        if ra in _FLOATS and rb in _FLOATS and _FLOATS[ra] != _FLOATS[rb]:
            return ra if _FLOATS[ra] > _FLOATS[rb] else rb
        raise self.error(node, f"mixed dtypes {ra} and {rb}; cast one operand with .astype()")

    def _nonneg(self, v: Val) -> bool:
        if v.kind == "const":
            return isinstance(v.py, (int, float)) and v.py >= 0
        return v.nonneg

    def _binop(self, node: ast.BinOp, lhs: Val, rhs: Val, out: list[ir.Stmt], hint: str) -> Val:
        if lhs.kind == "const" and rhs.kind == "const":
            return Val("const", py=_fold(node.op, lhs.py, rhs.py))
        if isinstance(node.op, ast.Mod):
            return self._scalar_mod(node, lhs, rhs, out, hint)
        if isinstance(node.op, ast.MatMult) and lhs.kind == rhs.kind == "tile":
            return self._matmul(node, lhs, rhs, out, hint)
        op = _RUST_OPS.get(type(node.op))
        if op is None:
            raise self.error(node, f"the operator {type(node.op).__name__} is not supported yet")
        if "tile" in (lhs.kind, rhs.kind):
            return self._tile_binop(node, op, lhs, rhs, out, hint)
        if isinstance(node.op, ast.Div):
            lhs, rhs = (self._as_f32(v, out, hint) for v in (lhs, rhs))
        if isinstance(node.op, ast.FloorDiv):
            self._require_positive(rhs, scalar=True)
        val = self._scalar_binop(node, op, lhs, rhs)
        if not isinstance(node.op, ast.Sub):
            val.nonneg = self._nonneg(lhs) and self._nonneg(rhs)
        if isinstance(node.op, ast.FloorDiv) and not val.nonneg:
            assert isinstance(val.expr, ir.Binary)
            return self._floor_quotient(val.expr.lhs, val.expr.rhs, val.dtype, hint, out)
        return val

    def _as_f32(self, v: Val, out: list[ir.Stmt], hint: str) -> Val:
        """An integer operand of Python's true division, as the f32 the division yields."""
        if v.kind == "const" and isinstance(v.py, int) and not isinstance(v.py, bool):
            return Val("const", py=float(v.py))
        if v.kind == "scalar" and v.dtype in ("i32", "i64"):
            return self._bind_temp(out, f"{hint}_f32", ir.ScalarType("f32"), ir.Call("convert_scalar", (v.expr,)))
        return v

    def _floor_quotient(self, a: ir.Expr, b: ir.Expr, dt: str, hint: str, out: list[ir.Stmt]) -> Val:
        """`a // b` of two integer scalars as Python floors it, where cutile's integer `/` truncates:
        Tile IR's `divi` rounding toward negative infinity on 0-d tiles, as cuTile Python emits it,
        one operation and no branch in every trip of a persistent loop's tile-index arithmetic."""
        ta, tb = (self._bind_temp(out, f"{hint}_{what}", ir.TileType(dt, ()), ir.Call("scalar_to_tile", (v,))).expr
                  for v, what in ((a, "dividend"), (b, "divisor")))
        floor = self._bind_temp(out, f"{hint}_floor", ir.TileType(dt, ()),
                                ir.Call("divi", (ta, tb, ir.Lit("rounding::NegativeInf"))))
        return self._scalar_of(floor, out, hint)

    def _require_positive(self, divisor: Val, scalar: bool = False) -> None:
        """A ct.Constant divisor is checked positive at launch, which makes quotients and
        remainders of non-negative values non-negative. Not a scalar division under a runtime
        condition (`h // G if G > 0 else h`): that one gets Python's floor correction instead."""
        if scalar and self.guarded:
            return
        if divisor.kind == "scalar" and divisor.dim is not None:
            for p in self.params:
                if isinstance(p, ir.ConstParam) and p.name == divisor.dim:
                    p.positive = True
            divisor.nonneg = True

    def _tile_mod(self, node: ast.BinOp, lhs: Val, rhs: Val, out: list[ir.Stmt], hint: str) -> Val:
        self._require_positive(rhs)
        type_, a, b = self._tile_operands(node, lhs, rhs, out, hint)
        dt = self.union.find(type_.dtype)
        if not self._integer(dt):
            raise self.error(node, "% on float tiles is not supported yet")
        rem = self._bind_temp(out, f"{hint}_rem", type_, ir.Call("remi", (a, b)))
        if self._nonneg(lhs) and self._nonneg(rhs):
            rem.nonneg = True
            return rem  # C's remainder equals Python's for non-negative operands
        if not self._nonneg(rhs):
            raise self.error(node, "% of tiles by a divisor that may be negative is not supported yet")
        # A positive divisor: Python adds it to a negative remainder.
        zero = self._splat(Val("const", py=0), dt, type_.shape, out, hint, node)
        negative = ir.Call("lt_tile", (rem.expr, zero.expr))
        return self._bind_temp(out, f"{hint}_mod", type_, ir.Call("select", (negative, ir.Binary("+", rem.expr, b),
                                                                             rem.expr)))

    def _scalar_mod(self, node: ast.BinOp, lhs: Val, rhs: Val, out: list[ir.Stmt], hint: str) -> Val:
        if "tile" in (lhs.kind, rhs.kind):
            return self._tile_mod(node, lhs, rhs, out, hint)
        self._require_positive(rhs, scalar=True)
        rem = self._scalar_binop(node, "%", lhs, rhs)
        if rem.dtype not in ("i32", "i64"):
            raise self.error(node, "% of floats is not supported yet")
        if self._nonneg(lhs) and self._nonneg(rhs) and not (rhs.kind == "const" and rhs.py == 0):
            rem.nonneg = True
            return rem  # C's remainder equals Python's for non-negative operands
        # Python's % takes the sign of the divisor: a - (a // b) * b, with the floored quotient,
        # branch-free (a runtime `if` in Rust is a Tile IR `if` region).
        dividend, divisor = rem.expr.lhs, rem.expr.rhs
        quotient = self._floor_quotient(dividend, divisor, rem.dtype, f"{hint}_quot", out)
        return self._bind_temp(out, f"{hint}_mod", ir.ScalarType(rem.dtype),
                               ir.Binary("-", dividend, ir.Binary("*", quotient.expr, divisor)))

    def _scalar_binop(self, node: ast.expr, op: str, lhs: Val, rhs: Val) -> Val:
        for v in (lhs, rhs):
            if v.kind not in ("scalar", "const"):
                raise self.error(node, f"{_a(v.kind)} cannot be used in scalar arithmetic or comparisons")
        if lhs.kind == rhs.kind == "const":
            raise self.error(node, "this needs a runtime scalar on one side")
        dtype = lhs.dtype if lhs.kind == "scalar" else rhs.dtype
        pyop = getattr(node, "op", None)
        if isinstance(pyop, ast.Div) and dtype in ("i32", "i64"):
            raise self.error(node, "true division of integers is not supported yet; use //")
        if isinstance(pyop, ast.FloorDiv) and dtype not in ("i32", "i64"):
            raise self.error(node, "floor division of floats is not supported yet")

        def operand(v: Val) -> ir.Expr:
            if v.kind == "scalar":
                generic = [d for d in (v.dtype, dtype) if self.union.find(d).startswith("$")]
                if v.dtype != dtype and self.survey and len(generic) == 1 and \
                        self.union.find(({v.dtype, dtype} - set(generic)).pop()) in ("i32", "i64"):
                    self._integer(generic[0])  # an array's value (`.item()`) in integer arithmetic
                elif v.dtype != dtype:
                    raise self.error(node, f"mixed scalar dtypes {lhs.dtype} and {rhs.dtype}")
                return v.expr
            if v.kind == "const":
                return number_literal(v.py, dtype)
            raise self.error(node, f"{_a(v.kind)} cannot be used in scalar arithmetic")

        # For integers this is cutile's truncating `/`; `_binop` corrects `//` where it can differ.
        return Val("scalar", ir.ScalarType(dtype), ir.Binary(op, operand(lhs), operand(rhs)))

    def _tile_binop(self, node: ast.BinOp, op: str, lhs: Val, rhs: Val, out: list[ir.Stmt], hint: str) -> Val:
        type_, a, b = self._tile_operands(node, lhs, rhs, out, hint)
        if isinstance(node.op, (ast.LShift, ast.RShift)) or (
                isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and self.union.find(type_.dtype) != "bool"):
            self._integer(type_.dtype)  # bits of an array's values
        if isinstance(node.op, ast.FloorDiv):
            if not self._integer(type_.dtype):
                raise self.error(node, "// on float tiles is not supported yet")
            self._require_positive(rhs)
            # Python's // rounds toward negative infinity.
            q = self._bind_temp(out, hint, type_, ir.Call("divi", (a, b, ir.Lit("rounding::NegativeInf"))))
            q.nonneg = self._nonneg(lhs) and self._nonneg(rhs)
            return q
        if isinstance(node.op, ast.Div) and self._int_tile(type_.dtype):
            raise self.error(node, "true division of integer tiles is not supported yet")
        if op in ("+", "-") and self.union.find(type_.dtype) in ("f32", "f16", "bf16", "f64"):
            fused = self._fused_mul_add(op, a, b, type_, out, hint)
            if fused is not None:
                return fused
        result = Val("tile", type_, ir.Binary(op, a, b))
        if isinstance(node.op, (ast.Add, ast.Mult)):
            result.nonneg = self._nonneg(lhs) and self._nonneg(rhs)
        # Keep track of `ct.arange(n) + offset`, which gather/scatter can turn into tile accesses.
        if isinstance(node.op, ast.Add):
            ramp, other = (lhs, rhs) if lhs.iota_offset is not None else (rhs, lhs)
            if ramp.iota_offset is not None and other.kind in ("const", "scalar"):
                base = ramp.iota_offset
                result.iota_offset = (Val("const", py=base.py + other.py) if base.kind == other.kind == "const"
                                      else other if base.kind == "const" and base.py == 0
                                      else self._scalar_binop(node, "+", base, other))
        return result

    def _fused_mul_add(self, op: str, a: ir.Expr, b: ir.Expr, type_: ir.TileType, out: list[ir.Stmt],
                       hint: str) -> Val | None:
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
        return self._bind_temp(out, hint, type_, ir.Call("fma", (
            x, y, acc, ir.Lit("rounding::NearestEven"), ir.Lit("ftz::Disabled"))))

    def _tile_operands(self, node: ast.AST, lhs: Val, rhs: Val, out: list[ir.Stmt],
                       hint: str) -> tuple[ir.TileType, ir.Expr, ir.Expr]:
        """Both operands as tiles of one dtype and shape, as cuTile Python's promotion and
        broadcasting make them."""
        tiles = [v for v in (lhs, rhs) if v.kind == "tile"]
        dtype = tiles[0].dtype if len(tiles) == 1 else self._common_dtype(lhs.dtype, rhs.dtype, node)
        shape = tiles[0].shape if len(tiles) == 1 else self._broadcast_shape(lhs.shape, rhs.shape, node)
        operands = []
        for v in (lhs, rhs):
            if v.kind == "tile":
                v = self._broadcast(self._convert(v, dtype, out, hint), shape, out, hint)
            else:
                v = self._splat(v, dtype, shape, out, hint, node)
            operands.append(v.expr)
        return ir.TileType(dtype, shape), operands[0], operands[1]

    def _unary(self, node: ast.UnaryOp, val: Val, out: list[ir.Stmt], hint: str) -> Val:
        if isinstance(node.op, ast.UAdd):
            return val
        if isinstance(node.op, ast.Not):
            if val.kind == "const":
                return Val("const", py=not val.py)
            if val.kind == "scalar" and val.dtype == "bool":  # the DSL has no unary `!`
                return Val("scalar", val.type, ir.Binary("==", val.expr, ir.Lit("false")))
            raise self.error(node, "`not` takes a bool here")
        if isinstance(node.op, ast.Invert):  # bitwise not, of integers
            if val.kind == "const" and isinstance(val.py, int):
                return Val("const", py=~val.py)
            if val.kind == "tile" and self._int_tile(val.dtype):
                return Val("tile", val.type, ir.Call("noti", (val.expr,)))
            if val.kind == "scalar" and val.dtype in ("i32", "i64"):
                return Val("scalar", val.type, ir.Binary("^", val.expr, ir.Lit(f"-1{val.dtype}")))
            raise self.error(node, "~ takes an integer here")
        if not isinstance(node.op, ast.USub):
            raise self.error(node, f"the operator {type(node.op).__name__} is not supported yet")
        if val.kind == "const":
            return Val("const", py=-val.py)
        if val.kind == "tile":
            if self._int_tile(val.dtype):
                return Val("tile", val.type, ir.Call("negi", (val.expr, ir.Lit("overflow::None"))))
            return Val("tile", val.type, ir.Call("negf", (val.expr,)))
        if val.kind == "scalar":
            zero = ir.Lit("0.0f32") if val.dtype == "f32" else ir.Lit(f"0{val.dtype}")
            return Val("scalar", val.type, ir.Binary("-", zero, val.expr))
        raise self.error(node, f"cannot negate a {val.kind}")

    def _call(self, node: ast.Call, out: list[ir.Stmt], hint: str) -> Val:
        func = node.func
        if isinstance(func, ast.Attribute):
            recv = self.expr(func.value, out, hint)
            if recv.kind == "tile":
                return self._tile_method(node, recv, func.attr, out, hint)
            if recv.kind != "static":
                raise self.error(node, f"method '{func.attr}' of a {recv.kind} is not supported")
            try:
                target = getattr(recv.py, func.attr)
            except AttributeError:
                raise self.error(func, "unknown function") from None
        else:
            target = self._eval_static(func) if self.lookup(func.id) is None else None  # type: ignore[union-attr]
        module = getattr(target, "__module__", "") or ""
        name = getattr(target, "__name__", None)
        if module.startswith("cuda.tile") and name:
            handler = getattr(self, f"_ct_{name}", None)
            if handler is None:
                raise self.error(node, f"ct.{name} is not supported yet")
            return handler(node, out, hint)
        if target is len and len(node.args) == 1 and not node.keywords:
            items = self.expr(node.args[0], out)
            if items.kind == "tuple":
                return Val("const", py=len(items.py))
            if items.kind != "list":
                raise self.error(node, f"len() of {_a(items.kind)} is not supported")
            # The list's table has one row per array.
            return Val("scalar", ir.ScalarType("i32"), ir.Subscript(ir.Method(items.expr, "shape"), 0), nonneg=True)
        if target in (min, max):
            if len(node.args) != 2 or node.keywords:
                raise self.error(node, "builtin min/max take exactly two values here")
            return self._minmax(node, out, hint, target.__name__)
        if isinstance(target, types.FunctionType):
            return self._inline(node, target, out, hint)
        if callable(target):
            raise self.error(node, "calls to this kind of function are not supported")
        raise self.error(node, "this call is not supported")

    def _args(self, node: ast.Call, names: list[str], required: int) -> dict[str, ast.expr]:
        """Binds a call's arguments to parameter names, as Python would."""
        bound: dict[str, ast.expr] = {}
        if len(node.args) > len(names):
            raise self.error(node, "too many arguments")
        for n, a in zip(names, node.args):
            bound[n] = a
        for kw in node.keywords:
            if kw.arg not in names:
                raise self.error(node, f"unsupported keyword argument '{kw.arg}'")
            bound[kw.arg] = kw.value
        for n in names[:required]:
            if n not in bound:
                raise self.error(node, f"missing argument '{n}'")
        return bound

    def _tile_arg(self, node: ast.expr, out: list[ir.Stmt], hint: str) -> Val:
        val = self.expr(node, out, hint)
        if val.kind != "tile":
            raise self.error(node, "expected a tile")
        return val


def _assignments(tree: ast.AST) -> list[tuple[int, str]]:
    """(id of the statement, name) for every name an assignment in `tree` binds, tuples unpacked."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for n in t.elts if isinstance(t, ast.Tuple) else [t]:
                    if isinstance(n, ast.Name):
                        found.append((id(node), n.id))
    return found


def _path(branch: list[ast.stmt], rest: list[ast.stmt]) -> list[ast.stmt]:
    """The statements that run after a branch is taken: the branch, then `rest` unless the branch
    returns (the kernel's early exit)."""
    if branch and isinstance(branch[-1], ast.Return) and branch[-1].value is None:
        return branch[:-1]
    return branch + rest


def _may_return(stmts: list[ast.stmt]) -> bool:
    """Whether `stmts` return from the kernel anywhere but inside a loop."""
    for st in stmts:
        if isinstance(st, ast.Return):
            return True
        if isinstance(st, ast.If) and (_may_return(st.body) or _may_return(st.orelse)):
            return True
    return False


def _names_read(stmts: list[ast.stmt]) -> set[str]:
    """The names `stmts` read (augmented assignments read their target)."""
    found = set()
    for st in stmts:
        for n in ast.walk(st):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                found.add(n.id)
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                found.add(n.target.id)
    return found


def _steps_with(expr: ir.Expr | None, var: str) -> bool:
    """Whether `expr` is `var` plus or minus terms without it: one-to-one in the loop variable."""
    if expr == ir.Var(var):
        return True
    if isinstance(expr, ir.Binary) and expr.op in ("+", "-"):
        lhs, rhs = _mentions(expr.lhs, var), _mentions(expr.rhs, var)
        return (lhs and not rhs and _steps_with(expr.lhs, var)) or (rhs and not lhs and _steps_with(expr.rhs, var))
    return False


def _mentions(expr: Any, var: str) -> bool:
    if expr == ir.Var(var):
        return True
    if isinstance(expr, tuple):
        return any(_mentions(e, var) for e in expr)
    return any(_mentions(getattr(expr, f), var) for f in getattr(expr, "__dataclass_fields__", {}))


def _loop_carried(fn: ast.FunctionDef) -> set[str]:
    """Names a loop assigns that are also assigned before it (or elsewhere outside it): each
    iteration sees the last one's value, so a number bound to one is a runtime variable."""
    everywhere = _assignments(fn)
    carried: set[str] = set()
    for loop in ast.walk(fn):
        if isinstance(loop, (ast.For, ast.While)):
            inside = {id(n) for n in ast.walk(loop)}
            carried |= ({name for i, name in everywhere if i in inside} &
                        {name for i, name in everywhere if i not in inside})
    return carried


def lower_kernel(src: KernelSource, dtypes: dict[str, typing.Sequence[str]] | None = None,
            lift_gathers: bool = False) -> ir.KernelIR:
    """Translates one kernel into the typed IR: a first pass counts the array accesses that remain
    once constant branches are folded and helpers inlined, the second decides on those counts
    which outputs are safe partitions and which arrays are updated in place."""
    survey = Translator(src, dtypes, lift_gathers)
    survey.run()
    return Translator(src, dtypes, lift_gathers, uses=survey.counted, int_arrays=survey.int_arrays).run()
