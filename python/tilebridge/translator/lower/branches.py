"""`if` statements. A condition known at translation time keeps one branch; a runtime one becomes a
Rust `if` whose branches' bindings are merged where Python would see them after it; where they
cannot be merged, the rest of the block is lowered once per branch (`lower_paths`), and where a
branch on ct.Constant values cannot be lowered at all, the launcher refuses the values that
take it. A helper whose result differs by such a path sends its caller's rest down the paths
(`FollowPaths`)."""

from __future__ import annotations

import ast
import copy
from dataclasses import fields, replace
from typing import TYPE_CHECKING

from .. import ir
from ...errors import TranslationError
from ..rust_syntax import number_literal, runtime_literal, rust_name
from .bindings import ArrayUse, Binding, BranchScope, Value
from .facts import may_return, names_read, negation, path_after, show_type, shown_name

if TYPE_CHECKING:
    from .state import Frame, KernelState
    from .walker import Walker


class FollowPaths(Exception):  # noqa: N818 - not an error: the kernel is lowered again (`lower.kernel.lower`)
    """Raised at a helper's `return` whose value differs by the paths of an `if` on ct.Constant
    values (its types, or a compile-time object, differ by branch: `lower_paths` took the rest
    of the helper down each). The statement `at` of the caller's block that calls it is to be
    lowered down each path instead, the condition known there, so that each path inlines the
    helper with one branch and one result (`split_before`)."""

    def __init__(self, node: ast.If, cond: Value, caller: Frame, error: TranslationError):
        super().__init__(str(error))
        self.node, self.cond, self.caller, self.error = node, cond, caller, error
        self.at: tuple | None = None  # `statement_key` of the caller's statement, once its block sees it


def statement_key(w: Walker, node: ast.stmt) -> tuple:
    """A statement of the function being walked, the same each time the kernel is lowered."""
    return (type(node).__name__, node.lineno, node.col_offset, node.end_lineno, node.end_col_offset,
            tuple(w.frame.helpers))


def diverged(w: Walker, node: ast.If, cond: Value) -> None:
    """Notes an `if` whose branches leave names that differ by path, in a helper: where its
    condition is on ct.Constant values (through the names it reads), a result read after it may
    follow its paths into the caller (`FollowPaths`)."""
    on_constants = w.state.condition_on_constants(cond.expr) if w.frame.helpers else None
    if on_constants is not None:
        w.frame.diverged.append((node, replace(cond, expr=on_constants)))


def split_before(w: Walker, node: ast.stmt, stmts: list[ast.stmt], out: list[ir.Stmt]) -> bool:
    """Where a call in statement `node` returns a value that differs by path (`FollowPaths`),
    lowers `stmts`, the statement and the rest of its block, once per path of the helper's
    condition (True), unless the condition is known here."""
    for helper_if, cond in w.state.splits.get(statement_key(w, node), ()):
        if cond.expr not in w.state.facts:
            at_call = ast.copy_location(ast.If(test=helper_if.test, body=[], orelse=[]), helper_if)
            return lower_paths(w, at_call, cond, out, stmts)
    return False


def lower_if(w: Walker, node: ast.If, out: list[ir.Stmt], rest: list[ast.stmt]) -> bool:
    """Translates an `if`; True where `rest`, the statements after it in its block, went into
    its branches (see `_paths`)."""
    cond = w.sem.tested(w.sem.as_condition(w.expr(node.test, out, hint="cond")), out)
    if cond.kind == "scalar" and cond.dtype in ("i32", "i64"):  # `if FLAG:` on an int, as Python reads it
        cond = Value("scalar", ir.ScalarType("bool"), ir.Binary("!=", cond.expr, ir.Lit(f"0{cond.dtype}")))
    if cond.kind == "scalar" and w.state.facts:  # decided by an enclosing branch?
        # (`n = N * 2; if n > 16:` is decided where `N * 2 > 16` is)
        known = cond.expr if cond.expr in w.state.facts else w.state.condition_on_constants(cond.expr, False)
        if known in w.state.facts:
            cond = Value("const", py=w.state.facts[known])
    if cond.kind == "const":  # decided at translation time: only the taken branch exists
        w.block(path_after(node.body if cond.py else node.orelse, rest), out)
        return True
    if cond.kind != "scalar" or cond.dtype != "bool":
        raise w.error(node.test, "an if condition must be a scalar comparison, a bool or a constant")
    if not w.frame.helpers and (may_return(node.body) or may_return(node.orelse)):
        return lower_paths(w, node, cond, out, rest)  # an early exit: what follows runs on the other path
    if any(v.name in w.state.dtype_flags for v in ir.variables(cond.expr)) and at_the_kernels_top(w):
        # A test of dtypes, which cuTile Python decides as it traces: the kernel's rest goes down
        # each branch, straight-line as cuTile Python sees it, so that a product made before the
        # test and summed after it fuses into one fma there as in cuTile Python (`fusion`).
        return lower_paths(w, node, cond, out, rest, to_the_end=True)
    mark = w.checkpoint(out)
    try:
        branches, scopes = lower_branches(w, cond, [node.body, node.orelse])
        # Under a test of dtypes, an array's dtype in one branch is not what it is in the other:
        # a name whose dtype differs by branch goes on down each path, never converted.
        on_dtypes = any(v.name in w.state.dtype_flags for v in ir.variables(cond.expr))
        unmerged: dict[str, str] | None = merge_branches(w, node, scopes, branches, out, convert=not on_dtypes)
    except TranslationError:
        if not w.state.on_constants(cond.expr):
            raise
        unmerged = None  # perhaps a branch these constants never take: see `_paths`
    if unmerged is not None and not unmerged.keys() & names_read(rest):
        w.state.branch_conflicts.update(unmerged)
        if unmerged:
            diverged(w, node, cond)
        for name, why in unmerged.items():
            if w.lookup(name) is not None:
                # Its value before the `if` is not its value after it on every path: reading it
                # (a helper's `return`, after its last `if`) is refused, never the old value.
                w.frame.scopes[-1][name] = Binding(Value("conflict", py=why), None, w.depth)
        if branches[0] or not branches[1]:
            out.append(ir.IfElse(cond.expr, branches[0], branches[1], node.lineno))
        else:  # `if c: pass / else: ...` as `if c == false { ... }`
            out.append(ir.IfElse(negation(cond.expr), branches[1], [], node.lineno))
        return False
    w.rollback(mark, out)
    return lower_paths(w, node, cond, out, rest)


def at_the_kernels_top(w: Walker) -> bool:
    """Whether the statement being lowered is at the kernel's top level, or in branches that hold
    the rest of the kernel: what follows it in its block is all that follows it (not so in a
    helper, a loop, or a ct.static_iter body, which is lowered once per item)."""
    return not w.frame.helpers and not w.state.unrolling and all(
        isinstance(s, BranchScope) and s.to_the_end for s in w.frame.scopes[1:])


def lower_paths(w: Walker, node: ast.If, cond: Value, out: list[ir.Stmt], rest: list[ast.stmt],
                to_the_end: bool = False) -> bool:
    """cuTile Python traces one branch per specialization; Rust types both. Where the branches
    leave a name with types that cannot be merged and later code reads it, the code after the
    `if` is translated once in each branch, typed by that branch's bindings. Where a branch on
    ct.Constant values cannot be translated at all, only the other is, and the launcher
    refuses the values that take it, saying why (cuTile Python compiles it only for them)."""
    diverged(w, node, cond)
    mark = w.checkpoint(out)
    try:
        branches, _ = lower_branches(w, cond, [path_after(node.body, rest), path_after(node.orelse, rest)], paths=True,
                                     to_the_end=to_the_end)
        out.append(ir.IfElse(cond.expr, branches[0], branches[1], node.lineno))
        return True
    except TranslationError as e:
        if not w.state.on_constants(cond.expr):
            raise
        w.rollback(mark, out)
        failure = e
    negated = negation(cond.expr)
    enclosing = w.state.path
    for known, body in ((True, node.body), (False, node.orelse)):
        mark = w.checkpoint(out)
        w.state.facts = assume(w.state, cond.expr, known)
        try:
            w.block(path_after(body, rest), out)
        except TranslationError:
            w.rollback(mark, out)
            continue
        w.state.path = enclosing  # the launcher decides this condition: the facts it gives hold from here on
        test = f"{w.state.src.display_file}:{node.lineno}: `{ast.unparse(node.test)}`"
        w.state.launch_check(cond.expr if known else negated,
                          f"{test} must be {known}: the other branch is not translated ({failure})")
        refusal = f"{test} {'false' if known else 'true'}: {failure}"
        if refusal not in w.state.refusals:
            w.state.refusals.append(refusal)
        return True
    raise failure


def lower_branches(w: Walker, cond: Value, bodies: list[list[ast.stmt]], paths: bool = False,
                   to_the_end: bool = False) -> tuple[list[list[ir.Stmt]], list[BranchScope]]:
    """The two branches of an `if`, each in a scope of its own. Where the condition depends on
    ct.Constant values only, an `if` on the same condition inside a branch is decided. With
    `paths`, the bodies are whole paths through the rest of the block, and each array access
    counts once per path, not once per copy."""
    base = copy.deepcopy(w.state.counted)
    per_path = []
    branches, scopes = [], []
    at_run_time = not w.state.on_constants(cond.expr)
    w.state.guarded += 1
    w.state.guarded_at_run_time += at_run_time
    for known, body in zip((True, False), bodies):
        if paths:
            w.state.counted = copy.deepcopy(base)
        saved_facts, saved_path = w.state.facts, w.state.path
        if w.state.on_constants(cond.expr):
            w.state.facts = assume(w.state, cond.expr, known)
        stmts: list[ir.Stmt] = []
        w.frame.scopes.append(BranchScope(to_the_end))
        w.block(body, stmts)
        scopes.append(w.frame.scopes.pop())  # names first bound in a branch end with it, as in Rust...
        branches.append(stmts)
        w.state.facts, w.state.path = saved_facts, saved_path
        per_path.append(w.state.counted)
    w.state.guarded -= 1
    w.state.guarded_at_run_time -= at_run_time
    if paths:
        w.state.counted = {name: ArrayUse(*(max(getattr(c[name], f.name) for c in per_path)
                                          for f in fields(ArrayUse))) for name in base}
    return branches, scopes


def assume(state: KernelState, cond: ir.Expr, known: bool) -> dict[ir.Expr, bool | int]:
    """The facts inside a branch taken where `cond`, a condition on ct.Constant values, is `known`
    (`state.path` gains the condition as it holds there)."""
    negated = negation(cond)
    state.path = (*state.path, cond if known else negated)
    facts = {**state.facts, cond: known, negated: not known}
    opposite = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
    if isinstance(cond, ir.Binary) and cond.op in opposite:  # `N == 1` decides `N != 1` too
        facts[ir.Binary(opposite[cond.op], cond.lhs, cond.rhs)] = not known
    if isinstance(cond, ir.Binary) and cond.op in ("==", "!=") and known == (cond.op == "==") and isinstance(
            cond.lhs, ir.Var) and isinstance(cond.rhs, ir.Lit) and cond.rhs.text.endswith("i32"):
        facts[cond.lhs] = int(cond.rhs.text[:-3])
    return facts


def rebinds_to_the_end(w: Walker, prev: Binding | None) -> bool:
    """Whether binding a name bound as `prev` happens in branches that hold the rest of the
    kernel, entered since: the new value is the branch's own, nothing after needs it back."""
    return branch_rebinds(w, prev) and not w.frame.helpers and all(
        s.to_the_end for s in w.frame.scopes[prev.depth - w.frame.depth_base + 1:])


def branch_rebinds(w: Walker, prev: Binding | None) -> bool:
    """Whether binding a name bound as `prev` happens inside branches of `if`s entered since,
    with no loop in between."""
    if prev is None or prev.depth >= w.depth:
        return False
    return all(isinstance(s, BranchScope) for s in w.frame.scopes[prev.depth - w.frame.depth_base + 1:])


def merge_branches(w: Walker, node: ast.If, scopes: list[BranchScope], branches: list[list[ir.Stmt]],
                    out: list[ir.Stmt], convert: bool = True) -> dict[str, str]:
    """Makes what the branches bound visible after the `if`, as Python sees it. A name a branch
    rebinds to a value of its outer type is assigned back to the outer variable; a name only
    one branch rebinds keeps its outer value in the other. Returns the names left unmerged,
    with why (with `convert`, also tiles an array's dtype in one branch and a dtype in the
    other, which `Semantics.common_branch_dtype` converts)."""
    for i, items in enumerate([list(scope.items()) for scope in scopes]):
        for name, b in items:
            outer = w.lookup(name)
            if outer is None:
                continue
            if outer.let is not None and b.val.kind in ("tile", "scalar") and b.val.type == outer.val.type:
                outer.let.mutable = True
                branches[i].append(ir.Assign(outer.let.name, b.val.expr, node.lineno))
                outer.val = replace(outer.val, bid_axis=None, bid_split=None, nonneg=outer.val.nonneg and b.val.nonneg,
                                    iota_offset=None, splat=None, defn=None)
                del scopes[i][name]
            elif name not in scopes[1 - i]:
                scopes[1 - i][name] = outer  # the other branch leaves it as it was
    return hoist_branch_names(w, node, scopes, branches, out, convert)


def hoist_branch_names(w: Walker, node: ast.If, scopes: list[BranchScope], branches: list[list[ir.Stmt]],
                        out: list[ir.Stmt], convert: bool) -> dict[str, str]:
    """A name both branches bind once, to values of one type, lives on after the `if` in Python:
    declare it before (`let mut`, a zero), and make the branches assign it. Returns the names
    that could not live on this way, with why."""
    unmerged = {name: f"{shown_name(name)} is bound in one branch only of the if at line {node.lineno}"
                for name in scopes[0].keys() ^ scopes[1].keys()}
    for name, first in scopes[0].items():
        second = scopes[1].get(name)
        if second is None:
            continue
        why = (f"{shown_name(name)} is {show_type(first.val.type) if first.val.type else first.val.kind} in one branch of the if "
               f"at line {node.lineno} and {show_type(second.val.type) if second.val.type else second.val.kind} "
               "in the other")
        consts = (first.val, second.val)
        if all(v.kind == "const" and type(v.py) in (int, float) for v in consts) and \
                type(consts[0].py) is type(consts[1].py):
            # A constant that differs by branch becomes a runtime scalar.
            dt = runtime_literal(consts[0].py)[0]
            var = w.state.fresh(rust_name(name))
            let = ir.Let(var, ir.ScalarType(dt), w.sem.zero(ir.ScalarType(dt), out, var), node.lineno, mutable=True)
            out.append(let)
            for v, branch in zip(consts, branches):
                branch.append(ir.Assign(var, runtime_literal(v.py)[1], node.lineno))
            w.frame.scopes[-1][name] = Binding(Value("scalar", ir.ScalarType(dt), ir.Var(var)), let, w.depth)
            continue
        if merge_number_and_scalar(w, node, name, first, second, branches, out):
            continue
        if first.let is None or second.let is None:
            unmerged[name] = why
            continue
        lets = (first.let, second.let)
        if not all(let in branch for let, branch in zip(lets, branches)):
            unmerged[name] = why
            continue  # bound inside a nested block of the branch
        converted = w.sem.common_branch_dtype(first.val.type, second.val.type) if convert else None
        if first.val.type != second.val.type and converted is None:
            unmerged[name] = why
            continue
        # Each branch's last binding of the name becomes an assignment to one variable declared
        # before the `if`; where a branch binds the name more than once (e.g. `a = load(..)`
        # then `a = transpose(a)`), that variable gets a name of its own, so the earlier
        # bindings cannot shadow it.
        shadowed = any(isinstance(st, ir.Let) and st.name in (lets[0].name, lets[1].name) and st not in lets
                       for branch in branches for st in branch)
        var = (w.state.fresh(lets[0].name) if shadowed or converted is not None or lets[0].name != lets[1].name
               or any(l.mutable for l in lets) else lets[0].name)
        type_ = converted or first.val.type
        zero = w.sem.zero(type_, out, var)
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
        w.frame.scopes[-1][name] = Binding(Value(first.val.kind, type_, ir.Var(var)), outer, w.depth)
    return unmerged


def merge_number_and_scalar(w: Walker, node: ast.If, name: str, first: Binding, second: Binding,
                             branches: list[list[ir.Stmt]], out: list[ir.Stmt]) -> bool:
    """`start = bid * T // M` in one branch and `start = 0` in the other: one runtime scalar
    after the `if`, each branch assigning it at its end."""
    vals = (first.val, second.val)
    scalar = next((v for v in vals if v.kind == "scalar"), None)
    number = next((v for v in vals if v.kind == "const" and type(v.py) in (int, float)), None)
    if scalar is None or number is None or scalar.dtype not in ("i32", "f32") or (
            isinstance(number.py, float) and scalar.dtype != "f32"):
        return False
    var = w.state.fresh(rust_name(name))
    type_ = ir.ScalarType(scalar.dtype)
    let = ir.Let(var, type_, w.sem.zero(type_, out, var), node.lineno, mutable=True)
    out.append(let)
    for v, branch in zip(vals, branches):
        value = v.expr if v.kind == "scalar" else number_literal(v.py, scalar.dtype)
        branch.append(ir.Assign(var, value, node.lineno))
    w.frame.scopes[-1][name] = Binding(Value("scalar", type_, ir.Var(var), nonneg=all(w.sem.nonneg(v) for v in vals)),
                                     let, w.depth)
    return True
