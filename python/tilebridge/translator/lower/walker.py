"""The walker: a kernel's statements and expressions in order, with scopes, loops and inlined
helpers. Operators and typing go to `semantics`, `ct.*` calls to the op table (`ops`), `if`
statements to `branches`; what the walker learns about the kernel goes into its `KernelState`."""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from ... import dtypes
from ...errors import TranslationError
from .. import calls, closures, ir
from ..frontend import written_out
from ..rust_syntax import runtime_literal, rust_name
from . import branches, conditionals, early_returns, loops
from .bindings import Binding, BranchScope, Value, translation_time
from .facts import COMPARISONS, assignments, bound_per_trip, carried_names, loop_assigned, show_type, with_article
from .ops import MOVES, OPS, array_slices, foreign_pointers, lists, memory, pointers, public_names, raw_memory, tiles
from .semantics import Semantics
from .state import Frame, KernelState


class Walker:
    """Lowers one kernel's body: `state` is the kernel's, `frame` the function being walked (the
    kernel's body, or a helper being inlined into it)."""

    def __init__(self, state: KernelState, frame: Frame):
        self.state = state
        self.sem = Semantics(state)
        self.frame = frame
        self.error = state.error

    def eval_static(self, node: ast.expr) -> Any:
        """Evaluates a name/attribute/subscript chain against the kernel's globals."""
        return calls.static_value(node, self.frame.globals, self.error)

    @property
    def depth(self) -> int:
        return self.frame.depth_base + len(self.frame.scopes) - 1

    def inline(self, node: ast.Call, func: types.FunctionType, out: list[ir.Stmt], hint: str) -> Value:
        """Inlines a helper function: its body is translated in place, with its parameters
        bound to the call's values and its locals renamed apart from the caller's."""
        try:
            same_file = Path(inspect.getsourcefile(func) or "").resolve() == Path(self.state.src.filename).resolve()
            lines, first = inspect.getsourcelines(func)
        except (OSError, TypeError):
            raise self.error(node, "the source of this helper function is not available") from None
        if func.__name__ in self.frame.helpers:
            raise self.error(node, "recursive helper functions cannot be inlined")
        tree = ast.parse(textwrap.dedent("".join(lines)))
        ast.increment_lineno(tree, first - 1)
        fdef = written_out(next(n for n in tree.body if isinstance(n, ast.FunctionDef)), func.__globals__, self.error)
        if not same_file:
            # A helper from another file: its statements are reported at the call, the line of
            # the kernel's file that brings them in.
            for n in ast.walk(fdef):
                if hasattr(n, "lineno"):
                    n.lineno = n.end_lineno = node.lineno
                    n.col_offset, n.end_col_offset = node.col_offset, node.end_col_offset
        a = fdef.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            raise self.error(node, "helpers with *args, **kwargs or keyword-only parameters are not supported yet")
        names = [p.arg for p in a.args]
        bound = self.call_args(node, names, len(names) - len(a.defaults))
        values = {n: self.expr(v, out, hint) for n, v in bound.items()}
        caller = self.frame
        # Defaults are the helper's module's expressions, evaluated where it is called.
        self.frame = replace(caller, globals=func.__globals__)
        try:
            for n, d in zip(names[len(names) - len(a.defaults):], a.defaults):
                values.setdefault(n, self.expr(d, out, hint))
        finally:
            self.frame = caller
        self.state.foreign += not same_file
        try:
            return self.inline_body(node, fdef, values, func.__globals__, func.__name__, out, hint)
        finally:
            self.state.foreign -= not same_file

    def closure(self, node: ast.FunctionDef | ast.Lambda, out: list[ir.Stmt]) -> Value:
        """A nested function (`def` or `lambda`) as a value: its definition, its defaults evaluated
        here, as Python evaluates them, and this frame, whose names its calls read."""
        if isinstance(node, ast.FunctionDef) and node.decorator_list:
            raise self.error(node, "decorators on nested functions are not supported (nor by cuTile Python)")
        fdef = closures.as_function(node) if isinstance(node, ast.Lambda) else node
        a = fdef.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            raise self.error(node, "nested functions with *args, **kwargs or keyword-only parameters are not "
                                   "supported yet")
        names = [p.arg for p in a.args]
        defaults = {n: self.expr(d, out, n) for n, d in zip(names[len(names) - len(a.defaults):], a.defaults)}
        return Value("static", py=closures.Closure(fdef, defaults, self.frame))

    def call_closure(self, node: ast.Call, closure: closures.Closure, out: list[ir.Stmt], hint: str) -> Value:
        """Inlines a call of a nested function: its parameters bound to the call's values, the
        names it only reads looked up here (the function that defined it, or a closure it
        defined, is being walked: so they are that function's names, as they are now)."""
        frame = self.frame
        while frame is not None and frame is not closure.frame:
            frame = frame.outer
        if frame is None:
            raise self.error(node, "a nested function called outside the function that defines it is not supported "
                                   "yet")
        fdef = closure.fdef
        key = f"{fdef.name}@{id(fdef)}"
        if key in self.frame.helpers:
            raise self.error(node, "recursive nested functions cannot be inlined")
        names = [p.arg for p in fdef.args.args]
        written = dict(zip(closures.written_names(fdef.args), names))
        bound = self.call_args(node, list(written), len(names) - len(fdef.args.defaults))
        values = {written[n]: self.expr(v, out, hint) for n, v in bound.items()}
        for n, v in closure.defaults.items():
            values.setdefault(n, v)
        return self.inline_body(node, fdef, values, self.frame.globals, key, out, hint, outer=self.frame)

    def inline_body(self, node: ast.Call, fdef: ast.FunctionDef, values: dict[str, Value], globals_: dict[str, Any],
                    name: str, out: list[ir.Stmt], hint: str, outer: Frame | None = None) -> Value:
        """Translates a function's body in place, its parameters bound to `values`, and gives its
        result. A helper's body sees only its parameters and its module's names (`globals_`); a
        closure's also the names of the frame it is called in (`outer`)."""
        names = [p.arg for p in fdef.args.args]
        body = fdef.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # docstring
        if body and not isinstance(body[-1], ast.Return):
            body = [*body, ast.Return(value=None)]  # a helper run for its effects (stores)
        # A `return` inside a loop: the result and a flag the loops carry (`early_returns`).
        returning = {early_returns.RESULT, early_returns.RETURNING} if early_returns.returns_in_loops(body) else set()
        if early_returns.returns_in(body[:-1]):
            body = early_returns.single_exit(body)
        reassigned = {n for _, n in assignments(fdef)}
        base = self.depth
        caller = self.frame
        scopes = outer.scopes if outer is not None else []
        self.frame = Frame(
            scopes=[*scopes, {n: Binding(v, None, base) for n, v in values.items()}],
            globals=globals_,
            depth_base=base - len(scopes),
            loop_carried=caller.loop_carried | carried_names(fdef) | returning | {
                n for n in names if n in reassigned and any(isinstance(x, (ast.For, ast.While)) for x in ast.walk(fdef))},
            helpers=[*caller.helpers, name],
            loop_assigned=loop_assigned(fdef),
            bound_per_trip=bound_per_trip(fdef),
            outer=outer,
        )
        saved_line = self.state.line
        try:
            for n in names:
                if n in reassigned and (values[n].kind in ("tile", "scalar") or n in self.frame.loop_carried):
                    # A parameter the helper updates (e.g. in a loop): a local variable of its own.
                    self.bind(ast.copy_location(ast.Name(id=n, ctx=ast.Store()), node), values[n], out)
            self.block(body[:-1], out)
            ret = body[-1].value
            for n in ast.walk(ret) if ret is not None else ():
                b = self.lookup(n.id) if isinstance(n, ast.Name) else None
                if isinstance(n, ast.Name) and (b is None and n.id in reassigned or b and b.val.kind == "conflict"):
                    # bound on the paths of an `if` that took the rest of the body (`branches.lower_paths`),
                    # or by the branches of one to values of two types (a "conflict")
                    error = self.error(n, f"{b.val.py}, so it has no one value here" if b else (
                        f"'{n.id}' has no one value at the return: an if before it binds it to values that differ "
                        "by path (types, or compile-time values)"))
                    if self.frame.diverged:
                        raise branches.FollowPaths(*self.frame.diverged[0], caller, error)
                    raise error
            try:
                result = self.expr(ret, out, hint) if ret is not None else Value("const", py=None)
            except branches.FollowPaths as e:
                if e.at is None and e.caller is self.frame:
                    e.caller = caller  # a call in the return: the caller's statement goes down the paths
                raise
        finally:
            self.frame = caller
            self.state.line = saved_line
        return result

    def lookup(self, name: str) -> Binding | None:
        for scope in reversed(self.frame.scopes):
            if name in scope:
                return scope[name]
        return None

    def block(self, stmts: list[ast.stmt], out: list[ir.Stmt], docstring_ok: bool = False) -> None:
        for i, node in enumerate(stmts):
            self.state.line = node.lineno
            self.state.lines.add(node.lineno)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(
                    node.value.value, str) and i == 0 and docstring_ok:
                continue
            if branches.split_before(self, node, stmts[i:], out):
                return  # it and the statements after it went down the paths of a helper's `if`
            try:
                if self.stmt(node, out, stmts[i + 1:]):
                    return  # the statements after it went into the branches of an `if`
            except branches.FollowPaths as e:
                if e.at is None and e.caller is self.frame:
                    e.at = branches.statement_key(self, node)
                raise

    def stmt(self, node: ast.stmt, out: list[ir.Stmt], rest: list[ast.stmt]) -> bool:
        """Translates one statement; True where it also took `rest`, the statements after it."""
        node = conditionals.static_choice(self, node)
        if isinstance(node, ast.If):
            return branches.lower_if(self, node, out, rest)
        if isinstance(node, ast.Assign):
            if len(node.targets) != 1:
                raise self.error(node, "chained assignment is not supported")
            self.assign(node.targets[0], node.value, out)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self.assign(node.target, node.value, out)
        elif isinstance(node, ast.AugAssign):
            target = ast.Name(id=node.target.id, ctx=ast.Load()) if isinstance(node.target, ast.Name) else None
            if target is None:
                raise self.error(node, "augmented assignment to this target is not supported")
            ast.copy_location(target, node.target)
            value = ast.copy_location(ast.BinOp(left=target, op=node.op, right=node.value), node)
            self.assign(node.target, value, out)
        elif isinstance(node, ast.Expr):
            val = self.expr(node.value, out)
            self.state.discarded(node.value)
            if val.kind in ("tile", "scalar") and val.expr is not None and not isinstance(val.expr, ir.Var):
                out.append(ir.Eval(val.expr, node.lineno))  # a variable alone does nothing
        elif isinstance(node, ast.For):
            loops.lower_for(self, node, out)
        elif isinstance(node, ast.While):
            loops.lower_while(self, node, out)
        elif isinstance(node, (ast.Break, ast.Continue)):
            if not self.state.loops:
                raise self.error(node, f"`{'break' if isinstance(node, ast.Break) else 'continue'}` outside a loop")
            # A `for` loop's own `break`s are flags by now (`loop_exits`): one here is a `while`'s.
            assert isinstance(node, ast.Continue) or self.state.loops[-1] in self.state.while_loops
            out.append(ir.Break(node.lineno) if isinstance(node, ast.Break) else ir.Continue(node.lineno))
            return True  # nothing after it in its block runs
        elif isinstance(node, ast.Pass):
            pass
        elif isinstance(node, ast.FunctionDef):
            self.bind(ast.copy_location(ast.Name(id=node.name, ctx=ast.Store()), node), self.closure(node, out), out)
        elif isinstance(node, ast.Return) and node.value is None and node is self.state.src.func.body[-1]:
            pass
        elif isinstance(node, ast.Raise):
            raise self.error(node, self.static_exception(node))
        else:
            raise self.error(node, f"{type(node).__name__} statements are not supported yet")
        return False

    def static_exception(self, node: ast.Raise) -> str:
        """Why a kernel cannot reach `raise ct.static_exception(E)`: cuTile Python fails to compile
        any path through it with E, so a launch whose constants take a branch into it is refused
        with E (a `raise` of anything else is not part of the language)."""
        import cuda.tile as ct

        exc = node.exc
        try:
            raises = isinstance(exc, ast.Call) and self.eval_static(exc.func) is ct.static_exception
        except TranslationError:
            raises = False
        if not raises or len(exc.args) != 1 or exc.keywords:
            return "`raise` is supported only as `raise ct.static_exception(...)`"
        written = ast.unparse(exc.args[0])
        if any(isinstance(n, ast.Name) and self.lookup(n.id) is not None for n in ast.walk(exc.args[0])):
            return f"ct.static_exception: {written}"  # made of the kernel's names: shown as written
        try:
            error = eval(compile(ast.Expression(exc.args[0]), "<static_exception>", "eval"),  # noqa: S307
                         dict(self.frame.globals))
        except Exception:  # noqa: BLE001 - shown as written
            return f"ct.static_exception: {written}"
        return f"ct.static_exception: {type(error).__name__}: {error}"

    def assign(self, target: ast.expr, value: ast.expr, out: list[ir.Stmt]) -> None:
        if isinstance(target, ast.Tuple):
            if isinstance(value, ast.Tuple) and len(value.elts) == len(target.elts):
                vals = [self.expr(v, out, hint=t.id.removesuffix("@") if isinstance(t, ast.Name) else "v")
                        for t, v in zip(target.elts, value.elts)]
            else:
                whole = self.expr(value, out)  # e.g. `m, n = x.shape` or a helper returning a tuple
                if whole.kind != "tuple" or len(whole.py) != len(target.elts):
                    raise self.error(target, "tuple assignment needs a tuple of the same length on the right")
                vals = whole.py
            for t, v in zip(target.elts, vals):
                self.bind(t, v, out)
                self.observe_name(t)
            return
        hint = target.id.removesuffix("@") if isinstance(target, ast.Name) else "v"
        self.bind(target, self.expr(value, out, hint=hint), out)
        self.observe_name(target)

    def observe_name(self, target: ast.expr) -> None:
        """The type the name just assigned at `target` has now, for the check against cuTile Python."""
        binding = self.lookup(target.id) if isinstance(target, ast.Name) else None
        if binding is not None and binding.val.kind in ("tile", "scalar"):
            self.state.observe(target, target.id, binding.val.type)

    def bind(self, target: ast.expr, val: Value, out: list[ir.Stmt]) -> None:
        if not isinstance(target, ast.Name):
            raise self.error(target, "assignment to this target is not supported")
        name = target.id
        prev = self.lookup(name)
        if prev is not None and prev.val.kind == "conflict":
            prev = None  # no value since an `if` (`branches.lower_if`): bound anew
        if val.kind == "const" and type(val.py) in (bool, int, float) and name in self.frame.loop_carried:
            # `cnt = 0` before a loop that does `cnt += 1`, `found = False` before one that may set it
            # True: a runtime variable the loop carries.
            dt, lit = runtime_literal(val.py)
            val = Value("scalar", ir.ScalarType(dt), lit, nonneg=dt != "bool" and val.py >= 0)
        if val.kind == "undefined":  # a helper's result before a loop that may return: typed there
            let = ir.Let(self.state.fresh(rust_name(name)), None, None, target.lineno, mutable=True)
            out.append(let)
            self.frame.scopes[-1][name] = Binding(val, let, self.depth)
            self.state.undefined[id(let)] = (out, self.state.loop_count)
            return
        if prev is not None and prev.val.kind == "undefined" and val.kind in ("tile", "scalar"):
            self.define(target, prev, val)
        if val.kind not in ("tile", "scalar"):
            if prev is not None and prev.val.kind in ("tile", "scalar") and not branches.branch_rebinds(self, prev):
                raise self.error(target, "rebinding a runtime value to a compile-time value is not supported")
            self.frame.scopes[-1][name] = Binding(val, None, self.depth)
            return
        if name in self.frame.loop_assigned:
            # A name only loops bind, afresh on every trip, is the ramp it is bound to there; its
            # start is checked where it is used (`pointers._span`).
            val = replace(val, nonneg=False, bid_axis=None, bid_split=None, splat=None,
                          iota_offset=val.iota_offset if name in self.frame.bound_per_trip else None)
        rname = rust_name(name)
        # Rebound to something else inside a branch: a binding of the branch's own, which the `if`
        # reconciles with the outer one where the branch ends.
        branch_local = branches.branch_rebinds(self, prev) and (
            prev.let is None or prev.val.type != val.type or branches.rebinds_to_the_end(self, prev))
        if not branch_local and prev is not None and prev.let is not None and prev.depth < self.depth:
            val = self.sem.as_carried(target, prev, val, out)
            # Assigned inside a loop, defined outside: a loop-carried `let mut`.
            prev.let.mutable = True
            self.state.scalar_defs.pop(prev.let.name, None)  # no one value any more
            out.append(ir.Assign(prev.let.name, val.expr, target.lineno))
            prev.val = replace(prev.val, bid_axis=None, bid_split=None, splat=None,
                               nonneg=prev.val.nonneg and val.nonneg, product=False)
            return
        if prev is not None and prev.let is None and prev.val.kind == "array":
            raise self.error(target, f"assigning to the array parameter '{name}' is not supported")
        if prev is not None and prev.let is None and prev.depth < self.depth and not branches.branch_rebinds(self, prev):
            raise self.error(target, f"reassigning '{name}' inside a loop or branch, where it has no binding of "
                                     "its own to update, is not supported yet")
        if self.frame.helpers or branch_local or (
                isinstance(self.frame.scopes[-1], BranchScope) and any(name in s for s in self.frame.scopes[:-1])):
            # A helper's locals must not shadow the caller's, nor a branch's the names the `if` may
            # assign back to when the branch ends.
            rname = self.state.fresh(rname)
        last = out[-1] if out else None
        if isinstance(last, ir.Let) and last.name in self.state.temps and val.expr == ir.Var(last.name):
            # The value was just bound to a temporary: give that binding the Python name.
            self.state.temps.discard(last.name)
            last.name, last.line, let = rname, target.lineno, last
        else:
            let = ir.Let(rname, val.type, val.expr, target.lineno)
            out.append(let)
        if val.kind == "scalar" and name not in self.frame.loop_carried:
            self.state.scalar_defs[let.name] = let.value  # as evaluated where it is used (in this iteration)
        self.frame.scopes[-1][name] = Binding(
            Value(val.kind, val.type, ir.Var(rname), dim=val.dim, bid_axis=val.bid_axis, bid_split=val.bid_split,
                  nonneg=val.nonneg, iota_offset=val.iota_offset, splat=val.splat,
                  weak=val.weak and name not in self.frame.loop_assigned,
                  defn=val.expr if val.kind == "scalar" and name not in self.frame.loop_assigned else None,
                  product=val.kind == "tile" and isinstance(let.value, ir.Binary) and let.value.op == "*"),
            let, self.depth)

    def define(self, target: ast.expr, undefined: Binding, val: Value) -> None:
        """Types a helper's result, bound before a loop that may return, by the first value the loop
        returns: a variable of that type, zero until the loop sets it (no path reads that zero). The
        zero's statements go before the `let`, in a block no `if` inside the loop rolls back."""
        let, (where, loops_before) = undefined.let, self.state.undefined.pop(id(undefined.let))
        if not any(loop > loops_before for loop in self.state.loops):
            raise self.error(target, "a helper's loop that may return never does here: not supported")
        zero: list[ir.Stmt] = []
        let.value = self.sem.zero(val.type, zero, let.name)
        if let.value is None:
            raise self.error(target, f"a helper returns {show_type(val.type)} from inside a loop: not supported yet")
        let.type = val.type
        index = next(i for i, st in enumerate(where) if st is let)
        where[index:index] = zero
        undefined.val = Value(val.kind, val.type, ir.Var(let.name))

    def checkpoint(self, out: list[ir.Stmt]) -> tuple:
        """What `rollback` needs to undo the statements appended to `out` from here on, and all they
        changed in the kernel's state and the current scopes."""
        return len(out), len(self.frame.scopes), dict(self.frame.scopes[-1]), self.state.checkpoint()

    def rollback(self, mark: tuple, out: list[ir.Stmt]) -> None:
        n_out, n_scopes, scope, state = mark
        del out[n_out:]
        del self.frame.scopes[n_scopes:]
        self.state.rollback(state)
        self.frame.scopes[-1].clear()
        self.frame.scopes[-1].update(scope)

    @contextmanager
    def operands(self, consumer: str | None):
        """While the operands of `consumer` are evaluated (a `ct.*` name or a tile method's, or
        "operator"; None for a helper's call, which passes its arguments on): each tile or scalar
        they give an operation that does not only move values is one the kernel computes with
        (`expr`)."""
        self.state.consumers.append(consumer)
        try:
            yield
        finally:
            self.state.consumers.pop()

    def expr(self, node: ast.expr, out: list[ir.Stmt], hint: str = "v") -> Value:
        val = self.evaluate(node, out, hint)
        consumer = self.state.consumers[-1] if self.state.consumers else None
        if consumer is not None and consumer not in MOVES:
            self.sem.computes_with(val)
        return val

    def evaluate(self, node: ast.expr, out: list[ir.Stmt], hint: str) -> Value:
        """The value of expression `node` (`expr` notes what the operation it is given to does with it)."""
        self.state.lines.add(getattr(node, "lineno", self.state.line))
        if isinstance(node, ast.Constant):
            if node.value is None or isinstance(node.value, (bool, int, float)):
                return Value("const", py=node.value)  # None: where an operation takes it (`rounding_mode=None`)
            raise self.error(node, "this literal is not supported in kernels")
        if isinstance(node, ast.Name):
            b = self.lookup(node.id)
            if b is not None and b.val.kind == "undefined":
                raise self.error(node, "a helper's loop that may return never does: its result has no value")
            if b is not None and b.val.kind == "conflict":
                raise self.error(node, f"{b.val.py}, so it has no one value here")
            if b is not None:
                if b.val.product and b.depth < self.depth and node.id in self.frame.loop_assigned:
                    # read inside a loop that assigns it: a value the loop carries, no product
                    return replace(b.val, product=False)
                return b.val
            if node.id in self.state.branch_conflicts and node.id not in self.frame.globals:
                raise self.error(node, f"{self.state.branch_conflicts[node.id]}, so it has no one value here")
            return self.static_value(self.eval_static(node), node)
        if isinstance(node, ast.Tuple):
            return Value("tuple", py=[self.expr(e, out, hint) for e in node.elts])
        if isinstance(node, ast.Lambda):
            return self.closure(node, out)
        if isinstance(node, early_returns.Undefined):
            return Value("undefined")
        if isinstance(node, ast.Attribute):
            return self.attribute(node, out)
        if isinstance(node, ast.Call):
            return self.call(node, out, hint)
        with self.operands("operator"):
            if isinstance(node, ast.BinOp):
                return self.observed(node, self.sem.binop(node, self.expr(node.left, out, hint),
                                                          self.expr(node.right, out, hint), out, hint))
            if isinstance(node, ast.UnaryOp):
                return self.observed(node, self.sem.unary(node, self.expr(node.operand, out, hint), out, hint))
            if isinstance(node, ast.Subscript):
                return self.subscript(node, out, hint)
            if isinstance(node, ast.Compare):
                return self.observed(node, self.compare(node, out, hint))
            if isinstance(node, ast.BoolOp):
                return self.boolop(node, out, hint)
            if isinstance(node, ast.IfExp):
                return conditionals.ifexp(self, node, out, hint)
        raise self.error(node, f"{type(node).__name__} expressions are not supported yet")

    def observed(self, node: ast.expr, val: Value) -> Value:
        """`val`, the value of the expression `node`, its type recorded for the check against cuTile Python."""
        if val.kind in ("tile", "scalar"):
            self.state.observe(node, "@expr", val.type)
        return val

    def compare(self, node: ast.Compare, out: list[ir.Stmt], hint: str) -> Value:
        ops = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
        left = self.expr(node.left, out, hint)
        result: Value | None = None
        if isinstance(node.ops[0], (ast.In, ast.NotIn)) and len(node.ops) == 1:
            return self.membership(node, left, self.expr(node.comparators[0], out, hint), out, hint)
        for op, comp in zip(node.ops, node.comparators):
            if type(op) not in ops:
                raise self.error(node, f"the comparison {type(op).__name__} is not supported")
            right = self.expr(comp, out, hint)
            if left.kind == "dtype" and right.kind == "dtype" and isinstance(op, (ast.Eq, ast.NotEq)):
                part = self.sem.dtype_test(node, left, right, isinstance(op, ast.NotEq))
                if part.kind == "dtype_test" and len(node.ops) > 1:
                    raise self.error(node, "chained comparisons of dtypes are not supported")
                if part.kind == "dtype_test":
                    return part
            elif (known := translation_time(left, right)) is not None:
                if "tuple" in (left.kind, right.kind) and not isinstance(op, (ast.Eq, ast.NotEq)):
                    raise self.error(node, "tuples compare with == and != only, as in cuTile Python")
                part = Value("const", py=COMPARISONS[type(op)](*known))  # numbers, enum members, tuples
            elif left.kind == right.kind == "tuple" and isinstance(op, (ast.Eq, ast.NotEq)):
                part = self.sem.tuples_equal(node, left, right, out, hint, negate=isinstance(op, ast.NotEq))
            elif "tile" in (left.kind, right.kind):
                if len(node.ops) > 1:
                    raise self.error(node, "chained comparisons of tiles are not supported yet")
                self.sem.integer_comparison(op, left, right)
                type_, a, b = self.sem.tile_operands(node, left, right, out, hint)
                return self.sem.bind_temp(out, hint, ir.TileType("bool", type_.shape),
                                          self.tile_comparison(ops[type(op)], a, b, type_.dtype))
            else:
                promoted = self.sem.promote_float_literal(left, right, out, hint)
                typed = self.sem.scalar_binop(node, ops[type(op)], *promoted)
                expr = typed.expr
                if isinstance(op, ast.NotEq) and self.sem.float_only(typed.dtype):
                    # unordered, as cuTile Python compares floats for `!=` (NaN != anything), where
                    # cutile's scalar `!=` is ordered; the DSL has no unary `!`
                    assert isinstance(expr, ir.Binary)
                    expr = ir.Binary("==", ir.Binary("==", expr.lhs, expr.rhs), ir.Lit("false"))
                part = Value("scalar", ir.ScalarType("bool"), expr)
            result = part if result is None else self.sem.and_(result, part)
            left = right
        assert result is not None
        return result

    def tile_comparison(self, op: str, a: ir.Expr, b: ir.Expr, dtype: str) -> ir.Expr:
        """`a op b` of two tiles of `dtype`, as cuTile Python compares them: ordered but for `!=` of
        floats, which is unordered (true where either is NaN). cutile's `ne_tile` of floats is
        ordered, so that one is Tile IR's `cmpf` with the ordering spelled out."""
        if op == "!=" and self.sem.float_only(dtype):
            return ir.Call("cmpf", (a, b, ir.Lit("predicate::NotEqual"), ir.Lit("cmp_ordering::Unordered")))
        func = {"<": "lt_tile", "<=": "le_tile", ">": "gt_tile", ">=": "ge_tile", "==": "eq_tile", "!=": "ne_tile"}
        return ir.Call(func[op], (a, b))

    def membership(self, node: ast.Compare, left: Value, items: Value, out: list[ir.Stmt], hint: str) -> Value:
        """`x in (a, b, ...)` as Python computes it over a tuple: `x == a or x == b or ...` (`not in`:
        `x != a and ...`), of numbers and scalars."""
        negate = isinstance(node.ops[0], ast.NotIn)
        if items.kind != "tuple":
            raise self.error(node, "`in` takes a tuple here")
        result = Value("const", py=negate)
        for item in items.py:
            if "tile" in (left.kind, item.kind) or left.kind not in ("const", "scalar") or \
                    item.kind not in ("const", "scalar"):
                raise self.error(node, "`in` compares numbers and scalars here, not tiles")
            if left.kind == item.kind == "const":
                part = Value("const", py=(left.py != item.py) if negate else (left.py == item.py))
            else:
                typed = self.sem.scalar_binop(node, "!=" if negate else "==",
                                              *self.sem.promote_float_literal(left, item, out, hint))
                part = Value("scalar", ir.ScalarType("bool"), typed.expr)
            result = self.sem.and_(result, part, "&&" if negate else "||")
        return result

    def boolop(self, node: ast.BoolOp, out: list[ir.Stmt], hint: str) -> Value:
        op = "&&" if isinstance(node.op, ast.And) else "||"
        vals = [self.sem.as_condition(self.expr(v, out, hint)) for v in node.values]
        if any(v.kind == "tile" and v.shape == () and self.state.union.find(v.dtype) == "bool" for v in vals):
            # A 0-d tile of bools (`ct.sum(t) < 0`), as an `if` takes it: its one value. cutile's
            # `&&`/`||` take only bools it made itself: `&`/`|`, the same on bools (both sides are
            # evaluated anyway).
            op = op[0]
            vals = [self.sem.scalar_of(v, out, "cond") if v.kind == "tile" else v for v in vals]
        for v, n in zip(vals, node.values):
            if v.kind not in ("const", "scalar") or (v.kind == "scalar" and v.dtype != "bool"):
                raise self.error(n, "`and`/`or` take bools or comparisons here")
        result = vals[0]
        for v in vals[1:]:
            result = self.sem.and_(result, v, op)
        return result

    def subscript(self, node: ast.Subscript, out: list[ir.Stmt], hint: str) -> Value:
        base = self.expr(node.value, out, hint)
        if base.kind == "tile":
            return self.sem.new_axes(node, base, out, hint)
        index = self.expr(node.slice, out)
        if base.kind == "list":
            return lists.list_item(self, node, base, index, out, hint)
        if base.kind == "tuple" and index.kind == "const" and isinstance(index.py, int):
            try:
                return base.py[index.py]
            except IndexError:
                raise self.error(node, "tuple index out of range") from None
        if base.kind == "static":
            try:
                return self.static_value(base.py[index.py], node)
            except Exception:
                raise self.error(node, "cannot index this value") from None
        raise self.error(node, f"indexing a {base.kind} is not supported yet")

    def static_value(self, obj: Any, node: ast.AST) -> Value:
        if isinstance(obj, (bool, int, float)):
            return Value("const", py=obj)
        d = dtypes.of_object(obj)
        if d is not None and obj not in (int, float):
            return Value("dtype", py=d)
        return Value("static", py=obj)

    def attribute(self, node: ast.Attribute, out: list[ir.Stmt]) -> Value:
        base = self.expr(node.value, out)
        if base.kind == "static":
            try:
                return self.static_value(getattr(base.py, node.attr), node)
            except AttributeError:
                raise self.error(node, "unknown attribute") from None
        if base.kind == "view":
            return memory.view_attribute(self, node, base, out)
        if node.attr == "dtype" and base.kind in ("array", "tile"):
            return Value("dtype", py=f"${base.py}" if base.kind == "array" else base.dtype)
        if node.attr == "shape" and base.kind == "tile":
            return Value("tuple", py=[self.sem.dim_val(d) for d in base.shape])
        if node.attr == "shape" and base.kind == "array":
            array = self.state.arrays[base.py]
            if not array.rank:
                raise self.error(node, f"the rank of '{array.name}' is not known here; load or store it first")
            shape = ir.Method(base.expr, "shape")
            return Value("tuple", py=[Value("scalar", ir.ScalarType("i32"), ir.Subscript(shape, i), nonneg=True)
                                    for i in range(array.rank)])
        if node.attr == "ndim" and base.kind == "array" and self.state.arrays[base.py].rank:
            return Value("const", py=self.state.arrays[base.py].rank)
        if node.attr == "ndim" and base.kind == "tile":
            return Value("const", py=len(base.shape))
        if node.attr == "strides" and base.kind == "array":
            return self.strides(node, self.state.arrays[base.py])
        if node.attr == "foreign_pointer" and base.kind == "array":
            return foreign_pointers.foreign_pointer(self, node, self.state.arrays[base.py])
        raise self.error(node, f"attribute '.{node.attr}' of a {base.kind} is not supported yet")

    def strides(self, node: ast.Attribute, array: ir.ArrayParam) -> Value:
        """`x.strides`, in elements: every axis' but the last a stride parameter the launcher fills
        from the array; the last 1, where the launcher requires it (as for a gather)."""
        if not array.rank:
            raise self.error(node, f"the rank of '{array.name}' is not known here; load or store it first")
        if array.name in self.state.items:
            raise self.error(node, f"the strides of '{array.name}', a view made in the kernel, are not supported yet")
        array.strided = True
        return Value("tuple", py=[Value("scalar", ir.ScalarType("i32"), pointers.stride_param(array, i), nonneg=True)
                                  for i in range(array.rank - 1)] + [Value("const", py=1)])

    def dims(self, node: ast.expr, out: list[ir.Stmt]) -> tuple[ir.Dim, ...]:
        val = self.expr(node, out)
        items = val.py if val.kind == "tuple" else [val]
        dims: list[ir.Dim] = []
        for item in items:
            if item.kind == "const" and isinstance(item.py, int) and item.py > 0:
                dims.append(item.py)
            elif item.kind == "scalar" and item.dim is not None:
                dims.append(item.dim)
                self.state.mark_tile_dim(item.dim)
            elif item.kind == "scalar" and item.dtype == "i32" and (name := self.state.shape_const(
                    item.expr, ast.unparse(node.elts[len(dims)] if isinstance(node, ast.Tuple) else node))):
                dims.append(name)  # computed from ct.Constant values: a const generic the launcher computes
            else:
                raise self.error(node, "tile shapes must be made of positive integer literals and ct.Constant[int] "
                                       "parameters")
        return tuple(dims)

    def dtype_arg(self, node: ast.expr, out: list[ir.Stmt]) -> str:
        val = self.expr(node, out)
        if val.kind == "dtype":
            return val.py
        if val.kind == "static" and val.py in (int, float):
            return dtypes.of_object(val.py)
        raise self.error(node, "expected a dtype (ct.float32, ..., or an array's .dtype)")

    def call(self, node: ast.Call, out: list[ir.Stmt], hint: str) -> Value:
        func = node.func
        if isinstance(func, ast.Attribute):
            with self.operands(func.attr):  # the receiver is the method's operand (`t.astype(...)`)
                recv = self.expr(func.value, out, hint)
                if recv.kind == "tile":
                    return self.computed(func.attr, tiles.tile_method(self, node, recv, func.attr, out, hint))
                if recv.kind in ("scalar", "const") and func.attr == "astype":  # a scalar is a 0-d tile
                    return tiles.scalar_astype(self, node, recv, out, hint)
                if recv.kind == "array" and func.attr == "tiled_view":
                    return memory.tiled_view(self, node, func.value)
                if recv.kind == "view":
                    return memory.view_method(self, node, recv, func.attr, out, hint)
                if recv.kind == "array" and func.attr == "get_raw_memory":
                    return raw_memory.raw_memory(self, node, func.value, out)
                if recv.kind == "raw":
                    return raw_memory.raw_method(self, node, recv, func.attr, out, hint)
            if recv.kind == "array" and func.attr == "slice":
                return array_slices.array_slice(self, node, recv, out, hint)
            if recv.kind != "static":
                raise self.error(node, f"method '{func.attr}' of {with_article(recv.kind)} is not supported")
            try:
                target = getattr(recv.py, func.attr)
            except AttributeError:
                raise self.error(func, "unknown function") from None
        elif isinstance(func, ast.Name) and self.lookup(func.id) is None:
            target = self.eval_static(func)
        else:
            # A closure, or a function a name or an item holds (`f = ct.exp`, `FNS[0]`): called as itself.
            local = self.expr(func, out, hint)
            if isinstance(local.py, closures.Closure):
                with self.operands(None):
                    return self.call_closure(node, local.py, out, hint)
            if local.kind != "static":
                raise self.error(node, "this call is not supported")
            target = local.py
        module = getattr(target, "__module__", "") or ""
        # a function's qualified name (`from_foreign` of `ct.Array`: "Array.from_foreign"), else its name
        name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
        if module.startswith("cuda.tile") and name:
            handler = OPS.get(name)
            if handler is None:
                raise self.error(node, f"ct.{name} is not supported: {public_names.status(name)[1]}")
            with self.operands(name):
                constant = tiles.folded(self, node, name, out, hint)
                return constant if constant is not None else self.observed(
                    node, self.computed(name, handler(self, node, out, hint)))
        if target is len and len(node.args) == 1 and not node.keywords:
            items = self.expr(node.args[0], out)
            if items.kind == "tuple":
                return Value("const", py=len(items.py))
            if items.kind != "list":
                raise self.error(node, f"len() of {with_article(items.kind)} is not supported")
            # The list's table has one row per array.
            return Value("scalar", ir.ScalarType("i32"), ir.Subscript(ir.Method(items.expr, "shape"), 0), nonneg=True)
        if target in (int, float, bool) and len(node.args) == 1 and not node.keywords:
            arg = node.args[0]
            # Of a number known here, or of a string literal: folded as Python folds it (`float("-inf")`).
            value = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else self.expr(arg, out)
            if not isinstance(value, Value) or value.kind == "const" and isinstance(value.py, (bool, int, float)):
                try:
                    return Value("const", py=target(value if isinstance(value, str) else value.py))
                except ValueError:
                    raise self.error(node, f"{target.__name__}() of this literal fails in Python too") from None
            raise self.error(node, f"{target.__name__}() of a value known only at run time is not supported yet")
        if target is print:  # cuTile Python's ct.print
            return OPS["print"](self, node, out, hint)
        if target in (min, max):
            if len(node.args) != 2 or node.keywords:
                raise self.error(node, "builtin min/max take exactly two values here")
            with self.operands("operator"):
                return tiles.minmax(self, node, out, hint, target.__name__)
        if isinstance(target, types.FunctionType):
            with self.operands(None):
                return self.inline(node, target, out, hint)
        if callable(target):
            raise self.error(node, "calls to this kind of function are not supported")
        raise self.error(node, "this call is not supported")

    def computed(self, op: str, val: Value) -> Value:
        """`val`, the result of operation `op`: one the kernel computes with unless `op` only moves
        values (a tile of an array's dtype made by `ct.full`, a gather, an atomic's old values)."""
        if op not in MOVES:
            self.sem.computes_with(val)
        return val

    def call_args(self, node: ast.Call, names: list[str], required: int) -> dict[str, ast.expr]:
        """Binds a call's arguments to parameter names, as Python would."""
        return calls.bind_arguments(node, names, required, self.error)

    def flag_arg(self, args: dict[str, ast.expr], name: str, out: list[ir.Stmt]) -> bool:
        """A keyword flag of a call (`keepdims=`, `use_fast_acc=`): True or False, a compile-time
        constant; False where the call leaves it out."""
        if name not in args:
            return False
        val = self.expr(args[name], out)
        if val.kind != "const" or not isinstance(val.py, bool):
            raise self.error(args[name], f"{name} must be True or False")
        return val.py

    def tile_arg(self, node: ast.expr, out: list[ir.Stmt], hint: str, numbers: bool = False) -> Value:
        """A tile operand; a runtime scalar there is a 0-d tile of its dtype, as cuTile Python takes
        it (`ct.sqrt(f)`). Not a number (cuTile Python folds `ct.exp(2.0)` into a constant), unless
        `numbers`: then a number is a 0-d tile of the dtype cuTile Python types the literal (bool,
        i32 or f32), as the condition of `ct.where(True, ...)` is."""
        return self.as_tile(self.expr(node, out, hint), node, out, hint, numbers)

    def as_tile(self, val: Value, node: ast.expr, out: list[ir.Stmt], hint: str, numbers: bool = False) -> Value:
        """`tile_arg` of an operand already evaluated."""
        if val.kind == "scalar" or (numbers and val.kind == "const" and isinstance(val.py, (bool, int, float))):
            return self.sem.zero_d(val, out, hint, node)
        if val.kind != "tile":
            raise self.error(node, "expected a tile")
        return val
