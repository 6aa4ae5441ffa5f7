"""tilebridge.translator: cuTile Python kernels -> a Rust crate of cuTile Rust kernels and PyO3 launchers.

The stages: `frontend` (kernel objects or files -> ASTs), `lower` (-> the typed IR in `ir`),
`emit` (-> crate files). `translate` runs all three.
"""

from __future__ import annotations

import itertools
import keyword
from pathlib import Path
from typing import Any, Mapping, Sequence

from . import emit, frontend, ir, lower, oracle, recorded_launches, specializations
from .emit import CrateFiles
from ..dtypes import COMPUTED_ARRAY_DTYPES
from ..errors import TranslationError

__all__ = ["translate", "assemble", "lower_checked", "CrateFiles", "TranslationError", "default_module_name"]


def default_module_name(target: Any) -> str:
    """`<file>_rs`, spelled as an identifier that starts with a letter (`06-softmax.py` ->
    `tb_06_softmax_rs`)."""
    if isinstance(target, (str, Path)):
        stem = Path(target).stem
    else:
        kernels = frontend.kernels_in(target)
        stem = Path(kernels[0]._pyfunc.__code__.co_filename).stem if kernels else "kernels"
    name = "".join(c if c.isascii() and c.isalnum() else "_" for c in stem) + "_rs"
    return name if name[0].isalpha() else "tb_" + name.lstrip("_")


def check_module_name(module: str) -> None:
    """An extension's name is a Python module's, a Rust crate's and a wheel's: an ASCII identifier
    that starts with a letter."""
    if not (module.isascii() and module.isidentifier() and module[0].isalpha()) or keyword.iskeyword(module):
        raise ValueError(f"extension module name {module!r} is not an identifier that starts with a letter "
                         "(letters, digits and _)")


def translate(
    target: Any,
    *,
    module: str | None = None,
    dtypes: Mapping[str, Sequence[Any]] | None = None,
    runtime_path: Path,
    partial: bool = False,
    lift_gathers: bool = False,
    launches: Sequence[recorded_launches.Launch] = (),
) -> CrateFiles:
    """Translates the kernels of `target` (kernel objects, a module or a file) into crate files.

    `dtypes` states, per array parameter name, the dtypes the launcher is built for
    (default: f32, f16, bf16 for arrays the kernel computes with, every dtype cutile converts as
    the kernel does for arrays it only moves: `KernelState.default_dtypes`). Raises `TranslationError` before anything is produced
    if any kernel cannot be translated; with `partial`, leaves such kernels out instead
    and lists why in the result's `skipped` (and raises only if none is left), an internal error
    of one kernel's translation included. With
    `lift_gathers`, gathers and scatters of whole rows become cutile's checked tile accesses
    (safe, but not always as fast: see `lower.ops.pointers`). With `launches` (recorded from the
    kernels' own tests: `recorded_launches.read`), each kernel's launcher takes the dtype combinations
    they used too (only those, where its own would be too many). Each kernel is then checked
    against cuTile Python's own front end (`oracle`; off with TILEBRIDGE_ORACLE=0): a kernel it
    rejects is a `TranslationError`, a value typed otherwise than it types it a `oracle.Disagreement`.
    """
    if module is not None:
        check_module_name(module)
    sources = frontend.load_all(target)
    kernels, skipped = [], []
    for src in sources:
        try:
            for kernel in lower_checked(src, dtypes, lift_gathers, launches):
                _check_distinct_name(kernel, kernels)
                kernels.append(kernel)
        except TranslationError as e:
            if not partial:
                raise
            skipped.append(f"{src.name}: {e}")
        except Exception as e:  # a tilebridge bug: the kernel is left out, said loudly, and the others kept
            if not partial:
                raise
            skipped.append(f"{src.name}: {src.display_file}:{src.func.lineno}: internal error (a tilebridge bug): "
                           f"{type(e).__name__}: {e}")
    if not kernels:
        raise TranslationError("no kernel could be translated:\n  " + "\n  ".join(skipped))
    source = sources[0].display_file if len({s.filename for s in sources}) == 1 else "several files"
    crate = assemble(kernels, module or default_module_name(target), runtime_path, source)
    crate.skipped = skipped
    return crate


def assemble(kernels: list[ir.KernelIR], module: str, runtime_path: Path, source: str) -> CrateFiles:
    """The crate of kernels already lowered and checked (`lower_checked`), `source` naming where
    they come from."""
    crate = emit.render_crate(kernels, module, runtime_path, source)
    crate.specializations = {k.name: k.compiled_at for k in kernels}
    crate.shipments = {k.name: k.shipments for k in kernels}
    crate.not_shipped = {k.name: k.not_shipped for k in kernels if k.not_shipped}
    return crate


# At most this many unannotated scalar parameters get a variant per type (int and float: 2**n).
MAX_SCALAR_VARIANTS = 2


def lower_checked(src: frontend.KernelSource, dtypes: Mapping[str, Sequence[Any]] | None, lift_gathers: bool,
             launches: Sequence[recorded_launches.Launch]) -> list[ir.KernelIR]:
    """One kernel's IR, checked against cuTile Python; for unannotated scalar parameters, which
    cuTile Python types from each launch's value, one variant per type they may have (int: i32,
    float: f32), those that translate, behind one launcher that picks by the values' types. A
    kernel without them whose arrays it computes with take f32, f16 and bf16 comes with a variant
    per other family of dtypes that translates (`FAMILIES`), behind one launcher that picks by the
    arrays' dtypes."""
    scalars = lower.unstated_scalars(src, dtypes)
    if not scalars or len(scalars) > MAX_SCALAR_VARIANTS:
        kernel = lower.lower_kernel(src, dtypes, lift_gathers)
        computed = _computed_classes(kernel, dtypes)
        variants, bugs = _family_variants(src, dtypes, lift_gathers, launches, computed)
        theirs = {id(l) for v in variants for l in recorded_launches.taken_by(v, launches)}
        kernel = _checked(kernel, src, [l for l in launches if id(l) not in theirs])
        kernel.checked = "; ".join(filter(None, [kernel.checked, *bugs]))
        if not variants:
            return [kernel]
        kernel.public = kernel.name
        return [kernel, *variants]
    variants, first_error = [], None
    for types in itertools.product(("i32", "f32"), repeat=len(scalars)):
        chosen = dict(zip(scalars, types))
        try:
            kernel = lower.lower_kernel(src, {**(dtypes or {}), **{p: [t] for p, t in chosen.items()}}, lift_gathers)
            kernel.scalar_variant = chosen
            variants.append(_checked(kernel, src, launches))
        except oracle.Disagreement:
            raise  # a tilebridge bug: said, never taken for a type the kernel does not translate for
        except TranslationError as e:
            first_error = first_error or e
    if not variants:
        raise first_error
    if len(variants) == 1:  # one type only (an int used as an index, say): the kernel as it is
        return variants
    for kernel in variants:
        kernel.public = kernel.name
        kernel.name = "_".join([kernel.name, *(f"{p}_{t}" for p, t in kernel.scalar_variant.items())])
    return variants


# The families of dtypes a kernel is translated for once more, where the arrays it computes with
# take f32, f16 and bf16 as translated (the translation's rules for them are those of these
# floats): f64, and the integers cutile 0.5.0's JIT both computes with and makes constants of (its
# binary operations take no 16-bit integer, "Binary operation is not implemented"; it makes no
# 8-bit constant, "Unsupported constant type i8 zero", which a reduction, a scan or a zero padding
# needs). The launcher picks the translation by the dtypes launched. Each entry: a family, and the
# dtype lists to try for it, the first that translates taken.
FAMILIES = (("f64", (("f64",),)), ("integers", (("i32", "i64", "u32", "u64"),)))


def _computed_classes(kernel: ir.KernelIR, dtypes: Mapping[str, Sequence[Any]] | None) -> dict[str, list[str]]:
    """The dtype classes of `kernel` that take f32, f16 and bf16 as translated, none stated (arrays
    it computes with, and those it stores what they compute into): an array of each that a
    launcher can test the dtype of -> the class's arrays. None where a class has only lists of
    arrays."""
    listed = {p.name for p in kernel.arrays if p.listed}
    tested = {}
    for c in kernel.dtype_classes:
        if tuple(c.allowed) == COMPUTED_ARRAY_DTYPES and not set(c.arrays) & set(dtypes or ()):
            plain = [a for a in c.arrays if a not in listed]
            if not plain:
                return {}
            tested[plain[0]] = list(c.arrays)
    return tested


def _family_variants(src: frontend.KernelSource, dtypes: Mapping[str, Sequence[Any]] | None, lift_gathers: bool,
                     launches: Sequence[recorded_launches.Launch], computed: dict[str, list[str]]
                     ) -> tuple[list[ir.KernelIR], list[str]]:
    """The kernel translated once more for each family of dtypes (`FAMILIES`) of the arrays of its
    computed classes, each checked against cuTile Python at those dtypes: those that translate;
    and, said where the kernel's check is, each family whose translation failed inside tilebridge
    or computes what cuTile Python does not (a bug, which leaves the kernel as it was translated)."""
    variants, bugs = [], []
    for family, choices in FAMILIES if computed else ():
        for choice in choices:
            stated = {a: list(choice) for arrays in computed.values() for a in arrays}
            try:
                variant = lower.lower_kernel(src, {**(dtypes or {}), **stated}, lift_gathers)
                if not variant.computed_combos():
                    continue  # cuTile Python promotes these dtypes into none the kernel stores
                variant.family, variant.public = family, variant.name
                variant.name = f"{variant.name}_{family}"
                variant.family_test = [(a, list(choice)) for a in computed]
                variants.append(_checked(variant, src, recorded_launches.taken_by(variant, launches)))
            except oracle.Disagreement as e:  # a tilebridge bug: said, and the kernel kept as translated
                bugs.append(f"not for arrays of {family}: {e}")
            except TranslationError:
                continue  # not for these dtypes (cuTile Python rejects them, or tilebridge does)
            except Exception as e:  # noqa: BLE001 - a tilebridge bug: said, and the kernel kept
                bugs.append(f"not for arrays of {family}: internal error (a tilebridge bug): {type(e).__name__}")
            break
    return variants, bugs


def _checked(kernel: ir.KernelIR, src: frontend.KernelSource,
             launches: Sequence[recorded_launches.Launch]) -> ir.KernelIR:
    """`kernel` with the dtypes its recorded launches used, checked against cuTile Python, its
    launcher's parameter names checked (here: a partial translation leaves such a kernel out)."""
    recorded_launches.cover(kernel, launches)
    if oracle.enabled():
        report = oracle.check(kernel, src, launches)
        kernel.checked, kernel.compiled_at = report.summary(), report.accepted
    else:
        kernel.compiled_at = [s for s in specializations.of_kernel(kernel, list(launches)) if not isinstance(s, str)]
    kernel.shipments, kernel.not_shipped = specializations.shipments(kernel, list(launches))
    emit.check_launcher(kernel)
    return kernel


def _check_distinct_name(kernel: ir.KernelIR, others: list[ir.KernelIR]) -> None:
    """One crate holds each kernel once, under its name and under the CamelCase struct name
    `#[cutile::module]` makes of it (`scaled_silu` and `scaled_silu_` both make `ScaledSilu`)."""
    camel = lambda name: "".join(part.capitalize() for part in name.split("_"))  # noqa: E731
    names = lambda k: [k.name] + ([k.public] if k.public else [])  # noqa: E731 - its entry, its launcher
    for other in others:
        if kernel.public is not None and kernel.public == other.public:
            continue  # two variants of one kernel, one launcher
        pairs = [(a, b) for a in names(kernel) for b in names(other)]
        for mine, theirs in pairs + [(camel(a), camel(b)) for a, b in pairs]:
            if mine == theirs:
                raise TranslationError(f"{kernel.file}:{kernel.line}: kernel '{kernel.name}' clashes with "
                                       f"'{other.name}' ({other.file}:{other.line}) in one extension (both are "
                                       f"`{mine}` in Rust); rename one or build them into separate extensions")
