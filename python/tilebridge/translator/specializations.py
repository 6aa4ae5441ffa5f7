"""The specializations a kernel is compiled at: a dtype for each array, which strides are 1, a
value for each ct.Constant, as cutile's JIT takes them (generics, strides) and as cuTile Python's
`export_kernel` does (a signature). From launches recorded in the kernels' own tests
(`recorded_launches`), else one default: f16 arrays where the launcher takes f16, contiguous rows,
every ct.Constant[int] = 64, every ct.Constant[bool] = False, ct.Constant[float] = 0.5; other
guesses (`guessed_constants`) where cuTile Python rejects those.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from . import ir, recorded_launches as launches
from .rust_syntax import rust_name
from ..hints import KERNEL_HINTS

DEFAULT_INT = 64
DEFAULT_DTYPE = "f16"


def class_dtype(c) -> str:
    """The dtype a dtype class is compiled at by default: f16 where the launcher allows it."""
    return DEFAULT_DTYPE if DEFAULT_DTYPE in c.allowed else c.allowed[0]


@dataclass
class Specialization:
    """One specialization of a kernel, as cutile compiles it (generics in declaration order, each
    array's strides: 1 where the stride is 1, else -1) and as cuTile Python's export takes it (per
    parameter: ("array", dtype, strides), ("constant", value) or ("scalar", dtype))."""

    generics: list[str]
    strides: list[tuple[str, list[int]]]
    signature: list[tuple]


# Values for ct.Constant parameters where no launch says them, one set per round: a tile dimension
# a power of two, a divisor positive, a flag off then on.
GUESSES = {"tile_dim": (DEFAULT_INT, 16, 128), "positive": (DEFAULT_INT, 1, 2), "int": (DEFAULT_INT, 1, 0),
           "bool": (False, True, False)}


def guessed_constants(kir, round_: int) -> dict[str, Any]:
    """A value for each ct.Constant[int|bool] of `kir`, the `round_`-th guess (0 is the default)."""
    def kind(c) -> str:
        return "bool" if c.kind == "bool" else "tile_dim" if c.tile_dim else "positive" if c.positive else "int"
    return {c.name: GUESSES[kind(c)][round_] for c in kir.consts}


def accepted_guesses(kir) -> list[dict[str, Any]]:
    """The rounds of guessed ct.Constant values the launcher takes; where it refuses every round,
    round 0 with single constants moved to another round's guess until it takes them (a latency in
    1..10 and a flag that must stay False refuse every whole round); [] where nothing helps."""
    rounds = [guessed_constants(kir, r) for r in range(len(GUESSES["int"]))]
    taken = [g for g in rounds if launcher_refusal(kir, g) is None]
    if taken or not rounds[0]:
        return taken

    def failing(constants: dict[str, Any]) -> set[int]:
        values = {rust_name(name): value for name, value in constants.items()}
        return {i for i, (cond, _) in enumerate(kir.launch_checks) if evaluate(cond, values) is False}

    chosen = dict(rounds[0])
    while failed := failing(chosen):
        # one constant moved, clearing a check and breaking none that held
        trials = ({**chosen, name: r[name]} for name in chosen for r in rounds[1:] if r[name] != chosen[name])
        chosen = next((t for t in trials if failing(t) < failed), None)
        if chosen is None:
            return []
    return [chosen]


def launcher_refusal(kir, constants: dict[str, Any]) -> str | None:
    """Why the launcher refuses these ct.Constant values (a static assert, an untranslated branch),
    or None."""
    values = {rust_name(name): value for name, value in constants.items()}
    values.update({name: evaluate(expr, values) for name, expr, _ in kir.shape_consts})
    for cond, why in kir.launch_checks:
        if evaluate(cond, values) is False:
            return why
    return None


def default_combo(kir) -> tuple[str, ...]:
    """The dtype of each class a kernel is compiled at by default (`class_dtype`), or, where its
    promotions refuse that combination, the launcher's combination closest to it."""
    preferred = tuple(class_dtype(c) for c in kir.dtype_classes)
    if kir.admits(preferred):
        return preferred
    # refused by a promotion, which moved classes never meet: they keep their preferred dtype
    combos = kir.launcher_combos() if kir.dtype_combos is not None else [
        tuple(p if c.moved else d for p, d, c in zip(preferred, combo, kir.dtype_classes))
        for combo in kir.computed_combos()]
    if not combos:
        return preferred
    return max(combos, key=lambda combo: sum(a == b for a, b in zip(combo, preferred)))


def default_specialization(kir, combo: tuple[str, ...] | None = None,
                           constants: dict[str, Any] | None = None) -> Specialization:
    """f16 arrays where the launcher takes f16 (else the dtype of each class in `combo`), contiguous
    rows, every ct.Constant[int] = 64 and ct.Constant[bool] = False (else `constants`),
    ct.Constant[float] = 0.5."""
    constants = guessed_constants(kir, 0) if constants is None else constants
    chosen = combo or default_combo(kir)
    dtype_of = {a: d for c, d in zip(kir.dtype_classes, chosen) for a in c.arrays}
    args: dict[str, Any] = {}
    for p in kir.params:
        if isinstance(p, ir.ArrayParam):
            args[p.name] = ("list" if p.listed else "array", dtype_of[p.name], [-1] * (p.rank - 1) + [1])
        elif isinstance(p, ir.UnusedParam):  # anything will do: the kernel never reads it
            args[p.name] = ("array", "f16", [1])
        elif isinstance(p, ir.ConstParam):
            args[p.name] = ("constant", constants[p.name])
        else:
            args[p.name] = ("constant", 0.5) if p.constant else ("scalar", p.dtype)
    return specialization(kir, args)


def recorded_specialization(kir, launch: launches.Launch) -> Specialization | str:
    """The specialization one recorded launch compiles, or why the launcher refuses it."""
    launch = launch.specialization()
    args: dict[str, Any] = {}
    for p in kir.params:
        value = launch.args[p.name]
        if isinstance(value, dict):
            args[p.name] = ("list" if getattr(p, "listed", False) else "array", launch.dtype(p.name),
                            value["strides"])
        elif isinstance(p, (ir.ConstParam, ir.UnusedParam)) or getattr(p, "constant", False):
            args[p.name] = ("constant", value)
        else:
            args[p.name] = ("scalar", p.dtype)
    for c in kir.dtype_classes:
        if len({args[a][1] for a in c.arrays}) != 1:
            return f"the arrays {', '.join(c.arrays)} have different dtypes"
    combo = tuple(args[c.arrays[0]][1] for c in kir.dtype_classes)
    if not kir.admits(combo):
        return "cuTile Python does not promote its arrays' dtypes together (f16 with bf16, or into a narrower array)"
    if not kir.takes(combo):
        return f"the launcher does not take these dtypes ({', '.join(combo)})"
    why = launcher_refusal(kir, {c.name: args[c.name][1] for c in kir.consts})
    return why if why else specialization(kir, args)


def specialization(kir, args: dict[str, tuple]) -> Specialization:
    bound = kir.dtypes_at(tuple(args[c.arrays[0]][1] for c in kir.dtype_classes))
    consts = [("true" if args[c.name][1] else "false") if c.kind == "bool" else str(int(args[c.name][1]))
              for c in kir.consts]
    # A list's divisibility generics at 1, as cuTile Python's export here assumes none either.
    consts += ["1" for a in kir.arrays if a.listed for _ in ir.list_divisors(a)]
    consts += [str(ir.float_bits(args[p.name][1])) for p in kir.float_consts]
    values = {rust_name(c.name): args[c.name][1] for c in kir.consts}
    consts += [str(evaluate(expr, values)) for _, expr, _ in kir.shape_consts]
    consts += [str(f.at(bound)).lower() for f in kir.dtype_flags]
    return Specialization(list(bound.values()) + consts,
                          # A list's own tensor is its table, whose rows are contiguous.
                          [(a.name, [-1, 1] if a.listed else args[a.name][2]) for a in kir.arrays],
                          [args[p.name] for p in kir.params])


def evaluate(expr: ir.Expr, values: dict[str, Any]) -> bool | int | None:
    """A launch check's expression over ct.Constant values, evaluated; None where it cannot be."""
    if isinstance(expr, ir.Lit):
        text = expr.text
        return {"true": True, "false": False}.get(text, int(text[:-3]) if text.endswith("i32") else None)
    if isinstance(expr, ir.Var):
        return values.get(expr.name)
    if isinstance(expr, ir.Binary):
        a, b = evaluate(expr.lhs, values), evaluate(expr.rhs, values)
        if a is None or b is None:
            return None
        ops = {"==": lambda: a == b, "!=": lambda: a != b, "<": lambda: a < b, "<=": lambda: a <= b,
               ">": lambda: a > b, ">=": lambda: a >= b, "&&": lambda: a and b, "||": lambda: a or b,
               "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "&": lambda: a & b, "|": lambda: a | b,
               "%": lambda: a % b if b else None, "/": lambda: int(a / b) if b else None}
        return ops[expr.op]() if expr.op in ops else None
    return None


def recorded(kir: ir.KernelIR, logged: list[launches.Launch]) -> list[Specialization | str]:
    """Each specialization of `kir` its recorded launches compile, once, in a stable order (or why
    the launcher refuses one); none where none was recorded."""
    mine = {json.dumps(l.specialization().record(), sort_keys=True): l for l in launches.of_kernel(logged, kir)}
    return [recorded_specialization(kir, mine[key]) for key in sorted(mine)]


def of_kernel(kir: ir.KernelIR, logged: list[launches.Launch]) -> list[Specialization | str]:
    """`recorded`, or where none was recorded the default specialization: at the first guess of
    constants the launcher takes (`accepted_guesses`: TileGym's bmm refuses a latency of 64)."""
    constants = next(iter(accepted_guesses(kir)), None)
    return recorded(kir, logged) or [default_specialization(kir, constants=constants)]


@dataclass(frozen=True)
class Shipment:
    """A specialization compiled ahead of time into an extension (`tilebridge build --aot`): as
    `Specialization`, plus what a launch's key holds beyond it: each array's dtype, shape and
    strides, and the launch hints."""

    generics: list[str]
    strides: list[tuple[str, list[int]]]
    arrays: list[tuple[str, str, list[int], list[int]]]  # (parameter, dtype, shape, strides)
    hints: tuple | None  # (occupancy, num_ctas, num_worker_warps), as a launch passes them


# The shape an array is shipped at where no launch was recorded: every extent a multiple of 16, as
# production shapes usually are, so the shipped code is the one such launches run.
ALIGNED_EXTENT = 64


def shipments(kir: ir.KernelIR, logged: list[launches.Launch]) -> tuple[list[Shipment], list[str]]:
    """The specializations of `kir` worth shipping compiled, and why others are not: each recorded
    launch cuTile Python accepted (`kir.compiled_at`); without any, each dtype combination at
    contiguous arrays of extents that are multiples of 16, for a kernel with no ct.Constant (whose
    values only launches can tell)."""
    if any(a.listed for a in kir.arrays):
        return [], ["it takes a list of arrays (compiled at its first launch)"]
    accepted = {json.dumps([s.generics, s.strides]) for s in kir.compiled_at}
    out, why = [], []
    mine = [l for l in launches.of_kernel(logged, kir) if _takes_scalars(kir, l)]
    for launch in mine:
        if not all("shape" in launch.args[a.name] for a in kir.arrays):
            why.append("a recorded launch without the arrays' shapes (a distilled log) cannot be shipped")
            continue
        spec = recorded_specialization(kir, launch)
        if isinstance(spec, str) or json.dumps([spec.generics, spec.strides]) not in accepted:
            why.append(f"a recorded launch the launcher does not take: {spec if isinstance(spec, str) else spec.generics}")
            continue
        arrays = [(a.name, launch.dtype(a.name), list(launch.args[a.name]["shape"]),
                   list(launch.args[a.name]["strides"])) for a in kir.arrays]
        hints = tuple(launch.hints.get(h) for h in KERNEL_HINTS)
        out.append(Shipment(spec.generics, spec.strides, arrays, hints if any(h is not None for h in hints) else None))
    if not mine:
        if kir.consts or kir.float_consts:
            return [], ["no launch recorded to tell its ct.Constant values (tilebridge build --launches)"]
        for spec in kir.compiled_at:
            signature = dict(zip((p.name for p in kir.params), spec.signature))  # ("array", dtype, strides)
            arrays = [(a.name, signature[a.name][1], [ALIGNED_EXTENT] * a.rank,
                       [ALIGNED_EXTENT ** (a.rank - 1 - i) for i in range(a.rank)]) for a in kir.arrays]
            out.append(Shipment(spec.generics, spec.strides, arrays, None))
    unique = {json.dumps(dataclasses.asdict(s), sort_keys=True): s for s in out}
    return [unique[k] for k in sorted(unique)], why


def _takes_scalars(kir: ir.KernelIR, launch: launches.Launch) -> bool:
    """Whether this launch's unannotated scalars have the types of this variant of the kernel."""
    def dtype(value: Any) -> str | None:
        return None if isinstance(value, bool) else "i32" if isinstance(value, int) else "f32" if isinstance(value, float) else None
    return all(dtype(launch.args.get(p)) == t for p, t in kir.scalar_variant.items())
