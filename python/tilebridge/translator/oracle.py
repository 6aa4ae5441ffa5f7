"""The translation held against cuTile Python itself, specialization by specialization.

cuTile Python's front end runs on the CPU (`cutile_frontend`). For each specialization a build
makes (each launch recorded for the kernel, at its own ct.Constant values; each other dtype
combination its launcher is built for, at guessed ones), it answers two questions, and the
translation must agree:

- **Does cuTile Python accept the kernel?** Where it rejects every specialization, tilebridge
  rejects the kernel: a `TranslationError` with cuTile Python's own message at its file:line:col.
  A dtype combination it rejects whatever the constants are is left out of the launcher (a launch
  with those dtypes is refused, as `ct.launch` would refuse it).
- **Does every value have the type cuTile Python gives it?** Each name the kernel (or a helper of
  its file) assigns, and each mma's accumulator, at the same line and column: the same dtype and
  shape. A difference is a tilebridge bug, and the kernel is not translated (`Disagreement`):
  never a crate that computes something else. One difference is known and counted apart
  (`Report.narrowed`): values read from int64 index arrays are int32 in the translation, as
  cutile 0.5.0 converts no integer to another width (exact below 2**31).

Values the translation folds away (Python constants) or cannot place (helpers of other files) are
not compared; `Report` counts what was.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import cutile_frontend, ir, recorded_launches as launches, specializations
from .frontend import KernelSource
from .rust_syntax import rust_name
from ..errors import TranslationError

# Guesses of ct.Constant values are tried per dtype combination (`specializations.accepted_guesses`):
# a combination is rejected only where cuTile Python rejects it at every one the launcher takes.
# Up to this many dtype combinations are checked one by one; beyond, class by class (`covering`).
MAX_COMBOS = int(os.environ.get("TILEBRIDGE_ORACLE_MAX_COMBOS", "27"))


class Disagreement(TranslationError):
    """The translation types a value differently from cuTile Python: a tilebridge bug."""


@dataclass
class Report:
    """What the check compared for one kernel."""

    specializations: int = 0  # accepted by cuTile Python and compared
    values: int = 0  # typed values compared, over all of them
    rejected: list[str] = field(default_factory=list)  # specializations cuTile Python rejects, and why
    # values cuTile Python types int64 where the translation has int32: an int64 index array's
    # values, which the translation meets as int32 (cutile 0.5.0 converts no integer to another width)
    narrowed: int = 0
    left_out: int = 0  # dtype combinations it rejects at every specialization: the launcher refuses them
    # dtype combinations checked class by class, not one by one (more than MAX_COMBOS: `covering`)
    by_class: int = 0
    unchecked: str | None = None  # why some (or all) could not be checked
    # the specializations cuTile Python accepted and the types were compared at: what a build
    # compiles to cubins ahead of any launch (`builder.cubins`)
    accepted: list[specializations.Specialization] = field(default_factory=list)

    def summary(self) -> str:
        """One line for the build's output and `tilebridge.json`."""
        if self.unchecked and not self.specializations:
            return f"not checked against cuTile Python: {self.unchecked}"
        text = (f"agrees with cuTile Python {cutile_frontend.version()} at {self.specializations} "
                f"specialization{'s' * (self.specializations != 1)} ({self.values} typed values")
        text += f", {self.narrowed} of them int64 met as int32)" if self.narrowed else ")"
        if self.rejected:
            text += f"; {len(self.rejected)} it rejects ({self.rejected[0]})"
        if self.left_out:
            text += f", {self.left_out} dtype combination{'s' * (self.left_out != 1)} left out of the launcher"
        if self.by_class:
            text += (f"; {self.by_class} more dtype combinations checked class by class (each class at each "
                     "of its dtypes)")
        if self.unchecked:
            text += f"; some not checked: {self.unchecked}"
        return text


def enabled() -> bool:
    return os.environ.get("TILEBRIDGE_ORACLE", "1") != "0"


def check(kir: ir.KernelIR, src: KernelSource, recorded: list[launches.Launch] = ()) -> Report:
    """Checks `kir` against cuTile Python at every specialization its build makes (see the module
    docstring); may narrow `kir.dtype_combos` to the combinations cuTile Python accepts. Raises
    `TranslationError` where cuTile Python accepts none, `Disagreement` where a type differs."""
    report = Report()
    if src.kernel is None:
        report.unchecked = "no kernel object"
        return report
    cutile_frontend.check_version()
    # Recorded launches at their own constants; every other dtype combination of the launcher at
    # guessed ones.
    recorded_specs = [s for s in specializations.recorded(kir, list(recorded)) if not isinstance(s, str)]
    groups = [[s] for s in recorded_specs]
    seen = {_combo(kir, s) for s in recorded_specs}
    if kir.dtype_combos is None and kir.product_count() > ir.MAX_ENUMERATED_COMBOS:
        # arrays only moved take every dtype: each class at each of its dtypes, those of the
        # others (whose dtypes meet) covered as below, the moved ones beside them in turn
        chosen = moved_covering(kir, seen)
        report.by_class = kir.product_count() - len(chosen)
        combos, by_class = chosen, True
    else:
        combos = [c for c in kir.launcher_combos() if c not in seen]
        by_class = len(combos) > MAX_COMBOS
        if by_class:
            # each class at each of its dtypes, then others spread over the rest, MAX_COMBOS in all
            chosen = covering(combos, seen, promotion_groups(kir))
            rest = [c for c in combos if c not in chosen]
            room = max(0, MAX_COMBOS - len(chosen))
            chosen += rest[::max(1, -(-len(rest) // room))][:room] if room else []
            report.by_class = len(combos) - len(chosen)
            combos = chosen
    guesses = specializations.accepted_guesses(kir)
    if combos and not guesses:
        report.unchecked = "the launcher refuses every ct.Constant value guessed"
    elif combos:
        groups += [[specializations.default_specialization(kir, combo, g) for g in guesses] for combo in combos]
    # A rejection at guessed constants is cuTile Python's verdict on the dtypes only where the
    # kernel takes no branch on them (else a value guessed may have chosen the branch it rejects).
    branches = _branches_on_constants(kir)
    accepted: set[tuple[str, ...]] = set()
    rejected: dict[tuple[str, ...], tuple[specializations.Specialization, cutile_frontend.Rejection]] = {}

    def run(group: list[specializations.Specialization], guessed: bool) -> None:
        outcome = _verdict(src.kernel, group, guessed=guessed, branches=branches)
        if isinstance(outcome, cutile_frontend.Rejection):
            rejected.setdefault(_combo(kir, group[0]), (group[0], outcome))
            report.rejected.append(f"{_dtypes_of(kir, group[0])}: {outcome.message.splitlines()[0]}")
        elif isinstance(outcome, str):
            report.unchecked = report.unchecked or outcome
        else:
            spec, theirs = outcome
            accepted.add(_combo(kir, spec))
            report.accepted.append(spec)
            report.specializations += 1
            report.values += _compare(kir, src, spec, theirs, report)

    for i, group in enumerate(groups):
        run(group, guessed=i >= len(recorded_specs))
    if by_class and accepted and guesses:
        # A moved class's dtype seen only beside dtypes of others that were rejected: tried once
        # more beside an accepted combination, so that it is not left out for their sake.
        first = min(accepted)
        for i, c in enumerate(kir.dtype_classes):
            cleared = {combo[i] for combo in accepted}
            for d in c.allowed if c.moved else ():
                combo = first[:i] + (d,) + first[i + 1:]
                if d not in cleared and combo not in rejected and kir.takes(combo):
                    run([specializations.default_specialization(kir, combo, g) for g in guesses], guessed=True)
    refused = [c for c in rejected if c not in accepted]
    if refused and not accepted and report.unchecked is None:
        spec, r = rejected[refused[0]]
        where = f"{Path(r.file).name}:{r.line}:{r.col + 1}" if r.file else f"{kir.file}:{kir.line}:1"
        at = f" at {_dtypes_of(kir, spec)}" if kir.dtype_classes else ""
        raise TranslationError(f"cuTile Python rejects kernel '{kir.name}'{at}: {r.message}",
                               location=where, construct=kir.name)
    if by_class and refused:
        # Class by class: a class's dtype is left out where a combination with it was rejected and
        # none with it accepted (which of a rejected combination's dtypes cuTile Python refused is
        # not known: each that no accepted one clears).
        taken = {(i, d) for combo in accepted for i, d in enumerate(combo)}
        bad = {(i, d) for combo in refused for i, d in enumerate(combo)} - taken
        for combo in refused:
            if not any((i, d) in bad for i, d in enumerate(combo)):
                # each of its dtypes is accepted elsewhere: the classes are not independent
                spec, r = rejected[combo]
                raise TranslationError(
                    f"cuTile Python rejects kernel '{kir.name}' at {_dtypes_of(kir, spec)} ({r.message.splitlines()[0]}) "
                    "but accepts each of those dtypes with others: its dtype combinations cannot be checked class "
                    "by class; state the dtypes (tb.build(..., dtypes=...), --dtype) or record launches (--launches)",
                    location=f"{kir.file}:{kir.line}:1", construct=kir.name)
        if kir.dtype_combos is None:  # still every combination of the classes' dtypes
            before = kir.product_count()
            for i, c in enumerate(kir.dtype_classes):
                c.allowed = [d for d in c.allowed if (i, d) not in bad]
            report.left_out = before - kir.product_count()
        else:
            kept = [c for c in kir.launcher_combos() if not any((i, d) in bad for i, d in enumerate(c))]
            report.left_out = len(kir.launcher_combos()) - len(kept)
            kir.dtype_combos = kept
        return report
    if refused:
        kir.dtype_combos = [c for c in kir.launcher_combos() if c not in refused]
        report.left_out = len(refused)
    return report


def moved_covering(kir: ir.KernelIR, seen: set[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Combinations in which each class takes each of its dtypes and each group of classes a
    promotion depends on each of its combinations (`covering`), without listing every combination:
    those of the classes that are not moved (`ir.KernelIR.computed_combos`), covered, with each
    moved class (which meets no other) taking its dtypes in turn beside them, twice, the second
    time with other partners, so that a rejection can be told to be one class's dtype."""
    computed = kir.computed_combos()
    if not computed:
        return []
    if len(computed) > MAX_COMBOS:
        computed = covering(computed, seen, promotion_groups(kir))
    moved = [i for i, c in enumerate(kir.dtype_classes) if c.moved]
    rows = max([len(computed)] + [len(kir.dtype_classes[i].allowed) for i in moved])
    combos = []
    for turn in range(2):
        for n in range(rows):
            combo = list(computed[n % len(computed)])
            for j, i in enumerate(moved):
                allowed = kir.dtype_classes[i].allowed
                combo[i] = allowed[(n + turn * (j + 1)) % len(allowed)]
            if tuple(combo) not in combos:
                combos.append(tuple(combo))
    return combos


def promotion_groups(kir: ir.KernelIR) -> list[tuple[int, ...]]:
    """The classes (by index) each promotion of `kir` depends on: those it promotes, and those of
    the arrays it is stored into; and the classes of each condition its launcher checks on them."""
    index = {c.rust_name: i for i, c in enumerate(kir.dtype_classes)}
    return ([tuple(index[c] for c in dict.fromkeys(p.of + p.stored_into) if c in index) for p in kir.promoted]
            + [tuple(index[c] for c in dict.fromkeys(s.of + s.equals) if c in index) for s in kir.same_promotions])


def covering(combos: list[tuple[str, ...]], seen: set[tuple[str, ...]],
             groups: list[tuple[int, ...]] = ()) -> list[tuple[str, ...]]:
    """A few of `combos` in which each class takes each of its dtypes at least once, and each
    group of classes a promotion depends on each of its combinations (beside the combinations
    `seen` already checked), picked greedily.

    The translation types every value by one dtype class at most, or by one promotion: arrays
    whose dtypes meet in an operation that does not convert share a class, and a value of a
    class's dtype (or derived from it, as an mma's accumulator) follows that class alone; one of
    a promotion's follows its group. So checking each class at each of its dtypes and each group
    at each of its combinations checks the type of every value at every combination, and a
    launcher with many independent classes (3^7 combinations for the gated delta rule) needs a
    handful of checks, not thousands."""
    def pairs(combo: tuple[str, ...]) -> set[tuple]:
        return set(enumerate(combo)) | {(g, tuple(combo[i] for i in g)) for g in groups}

    wanted = set().union(*map(pairs, combos)) - set().union(set(), *map(pairs, seen))
    chosen = []
    while wanted:
        best = max(combos, key=lambda c: len(pairs(c) & wanted))
        chosen.append(best)
        wanted -= pairs(best)
    return chosen


def _combo(kir: ir.KernelIR, spec: specializations.Specialization) -> tuple[str, ...]:
    """The dtype of each dtype class at `spec`."""
    return tuple(spec.generics[:len(kir.dtype_classes)])


def _verdict(kernel: Any, group: list[specializations.Specialization], guessed: bool, branches: bool):
    """cuTile Python on one dtype combination, at each specialization of `group` in turn: the first
    it accepts, with its types; else its rejection, where that is a verdict on the dtypes (recorded
    constants; or `guessed` ones, all rejected for one reason, in a kernel without `branches` on
    them); else why it says nothing of them (its front end failing other than by rejecting, too)."""
    rejections = []
    for spec in group:
        try:
            outcome = cutile_frontend.verdict(kernel, cutile_frontend.signature(spec.signature))
        except cutile_frontend.FrontendUnavailable:
            raise
        except Exception as e:  # noqa: BLE001 - its own failure, not a verdict on the kernel
            return f"cuTile Python's front end failed on it ({type(e).__name__}: {str(e)[:200]})"
        if not isinstance(outcome, cutile_frontend.Rejection):
            return spec, outcome
        rejections.append(outcome)
    if not guessed or (len({(r.message, r.line, r.col) for r in rejections}) == 1 and not branches):
        return rejections[0]
    return (f"cuTile Python rejects each guess of its ct.Constant values ({rejections[0].message.splitlines()[0]}), "
            f"which may be the values' fault; record launches to check it (--launches)")


def _branches_on_constants(kir: ir.KernelIR) -> bool:
    """Whether the kernel has an `if` on ct.Constant values (translated whole, or decided at launch)."""
    consts = {rust_name(c.name) for c in kir.consts}

    def on_constants(e: Any) -> bool:
        names = {v.name for v in ir.variables(e)}
        return bool(names) and names <= consts

    def walk(body: list[ir.Stmt]) -> bool:
        for s in body:
            if isinstance(s, ir.IfElse) and (on_constants(s.cond) or walk(s.then) or walk(s.other)):
                return True
            if isinstance(s, (ir.For, ir.TileLoop, ir.While)) and walk(s.body):
                return True
        return False

    return bool(kir.launch_checks) or walk(kir.body)


def _dtypes_of(kir: ir.KernelIR, spec: specializations.Specialization) -> str:
    pairs = zip(kir.dtype_classes, _combo(kir, spec))
    return ", ".join(f"{'/'.join(c.arrays)} {d}" for c, d in pairs) or "its arrays"


def _compare(kir: ir.KernelIR, src: KernelSource, spec: specializations.Specialization,
             theirs: dict[cutile_frontend.Site, set[cutile_frontend.ValueType]], report: Report) -> int:
    """Holds every typed value of `kir` against cuTile Python's at `spec`; the number compared."""
    bound = kir.dtypes_at(_combo(kir, spec))
    consts = {p.name: value for p, (kind, value, *_) in zip(kir.params, spec.signature)
              if isinstance(p, ir.ConstParam)}
    values = {rust_name(name): value for name, value in consts.items()}
    values.update({f.rust_name: f.at(bound) for f in kir.dtype_flags})
    i64_arrays = any(kind in ("array", "list") and dtype == "i64" for kind, dtype, *_ in spec.signature)
    here = Path(src.filename).resolve()
    files: dict[str | None, bool] = {}

    def mine(file: str | None) -> bool:
        if file not in files:
            files[file] = file is not None and Path(file).resolve() == here
        return files[file]

    by_site: dict[tuple[int, int, str], set[cutile_frontend.ValueType]] = {}
    for (file, line, col, name), types in theirs.items():
        if mine(file):
            by_site.setdefault((line, col, name), set()).update(types)
    ours: dict[tuple[int, int, str], set[cutile_frontend.ValueType]] = {}
    for t in kir.typed:
        if not all(specializations.evaluate(cond, values) is True for cond in t.when):
            continue  # a branch this specialization does not take (or one that cannot be told)
        concrete = _concrete(t.type, bound, consts)
        if concrete is not None:
            ours.setdefault((t.line, t.col, t.name), set()).add(concrete)
    compared = 0
    for site, types in sorted(ours.items()):
        if site not in by_site:
            continue
        compared += 1
        if types != by_site[site] and i64_arrays and types == {_as_i32(t) for t in by_site[site]}:
            report.narrowed += 1  # an int64 array's values, met as int32 (see the module docstring)
        elif types != by_site[site]:
            line, col, name = site
            what = ("the accumulator of this mma" if name == "@mma" else "this expression"
                    if name.startswith("@expr") else f"'{name}'")
            raise Disagreement(
                f"tilebridge bug: {what} is {_show(types)} in the translation and {_show(by_site[site])} in "
                f"cuTile Python at {_dtypes_of(kir, spec)}; the kernel is not translated rather than translated "
                f"wrong (please report it)", location=f"{kir.file}:{line}:{col + 1}",
                construct=src.line_text(line))
    return compared


def _as_i32(t: cutile_frontend.ValueType) -> cutile_frontend.ValueType:
    return ("i32" if t[0] == "i64" else t[0]), t[1]


def _concrete(t: ir.Type, bound: dict[str, str], consts: dict[str, Any]) -> cutile_frontend.ValueType | None:
    """`t` at one specialization: (dtype, shape of ints); None where it names something unknown."""
    dtype = bound.get(t.dtype, t.dtype)
    if isinstance(t, ir.ScalarType):
        return dtype, ()
    shape = []
    for d in t.shape:
        value = d if isinstance(d, int) else consts.get(d)
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        shape.append(value)
    return dtype, tuple(shape)


def _show(types: set[cutile_frontend.ValueType]) -> str:
    return " or ".join(f"{d}{list(s)}" if s else d for d, s in sorted(types))
