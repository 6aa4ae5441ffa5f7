"""Coverage of an operator library: every kernel through translate -> build -> Tile IR -> cubin,
with a normalized diff against cuTile Python's own Tile IR. No GPU needed.

    tilebridge coverage tilegym --launches tests/data/tilegym_launches.json
    tilebridge coverage path/to/kernels              # any folder of kernel files

Each kernel is compiled at every specialization its library's tests launched, where launches
were recorded (`translator.recorded_launches`: dtypes, which strides are 1, ct.Constant values), else at one
default specialization (f16 arrays where the launcher takes f16, contiguous rows, every
ct.Constant[int] = 64, every ct.Constant[bool] = False, ct.Constant[float] = 1.0): by cutile,
through the generated extension's compile-only entry, then `tileiras` to an sm_90 cubin; and
by cuTile Python (`export_kernel`) for the same specialization. Both bytecodes are printed by
`tileirdisasm` and compared after SSA names, symbol names and attribute order are normalized.
A recorded launch the launcher would refuse (a constant branch left out) is counted apart.
For TileGym, the 24 public operators' kernels are counted apart from the activations and the
rest of the release.
"""

from __future__ import annotations

import difflib
import fnmatch
import hashlib
import itertools
import importlib.util
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from .. import toolchain
from ..dtypes import COMPUTED_ARRAY_DTYPES, INDEX_ARRAY_DTYPES
from ..toolchain import SlowCompile, tileiras as cubin
from ..builder import wheel as builder
from ..translator import cutile_frontend, frontend, ir, recorded_launches as launches, static_import
from ..translator.specializations import (Specialization, accepted_guesses, class_dtype, default_combo,
                                          default_specialization, of_kernel as specializations,
                                          recorded as specializations_recorded)
from ..translator.lower import lower_kernel as analyze, unstated_scalars
from ..errors import TranslationError

# TileGym's 24 public operators (modules of ops/cutile/, as the tilegym issue lists them): their 45
# kernels, 37 not experimental, are the benchmark. activation/ (gelu, relu, geglu) comes next;
# the rest of a TileGym release (newer modules, experimental/) is reported too, but counted apart.
TILEGYM_OPERATORS = (
    "dropout", "silu_and_mul", "swiglu", "rms_norm", "layer_norm_legacy", "softmax", "rope", "matmul", "bmm",
    "group_gemm", "attention", "attention_sink", "gemma_attention", "mla", "flash_decode", "attention_sink_decode",
    "gemma_attention_decode", "mla_decoding", "mla_decoding_split_kv", "splitk_reduce", "moe", "moe_align_block",
    "recurrent_gated_delta_rule", "chunk_gated_delta_rule")
SCOPES = {"operators": "TileGym's 24 operators", "activations": "activation/", "other": "other kernels"}


@dataclass
class Row:
    file: str
    kernel: str
    experimental: bool
    scope: str = "other"  # a key of SCOPES
    translated: bool = False
    built: bool = False
    tile_ir: bool = False
    cubin: bool = False
    diff_lines: int | None = None
    safety: str = ""
    error: str = ""
    refusals: list[str] = field(default_factory=list)  # constants the launcher refuses, and why
    # The specializations compiled (the recorded launches', else the default one), how many of them
    # reached Tile IR and cubin, and how many recorded ones the launcher refuses (see `refusals`).
    specializations: int = 0
    tile_irs: int = 0
    cubins: int = 0
    # Specializations whose cubin was left to a run without limits: listed as slow (`slow`), or
    # tileiras ran over the run's `cubin_limit`. Their Tile IR is checked.
    deferred: int = 0
    deferred_specs: list[str] = field(default_factory=list)  # their `spec_id`s
    slowest_cubin: float = 0.0  # seconds of the longest tileiras run that made a cubin
    refused: int = 0
    diffs: list[int] = field(default_factory=list)  # differing lines against cuTile Python, per specialization
    diff_ops: dict[str, int] = field(default_factory=dict)  # which operations differ ("+assert": only ours has it)
    # Specializations whose Tile IR from cuTile Python could not be made (its export raised): ours
    # reached cubin, but there is nothing to diff it against.
    reference_failures: int = 0
    unsafe_blocks: int = 0  # `unsafe` blocks in the kernel's generated Rust

    @property
    def safe(self) -> bool:
        return self.translated and self.safety == "safe"

    @property
    def cubin_or_deferred(self) -> bool:
        """Every specialization through cubin, or through Tile IR with its cubin deferred."""
        return self.tile_ir and self.cubins + self.deferred == self.specializations


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    # Recorded launches that match no kernel of the library read (another version's: a kernel or
    # a parameter that is not there), as `file:kernel(parameters)`.
    unmatched: list[str] = field(default_factory=list)
    # The compiler's warnings per built file (`BuildResult.warnings`); a generated crate has none.
    warnings: dict[str, list[str]] = field(default_factory=dict)

    @property
    def through_cubin(self) -> int:
        return sum(r.cubin for r in self.rows)

    def count(self, scope: str | None = None, public: bool = False, what: str = "cubin") -> tuple[int, int]:
        """(kernels that got `what`, kernels) in `scope` (all by default), not experimental ones only
        with `public`."""
        rows = [r for r in self.rows if (scope is None or r.scope == scope) and not (public and r.experimental)]
        return sum(bool(getattr(r, what)) for r in rows), len(rows)

    def table(self) -> str:
        head = (f"{'kernel':<58} {'transl':>6} {'built':>5} {'specs':>7} {'TileIR':>6} {'cubin':>5} {'diff':>5}  "
                "safety / error")
        lines = []
        mark = lambda ok: "yes" if ok else "-"  # noqa: E731
        for scope, title in SCOPES.items():
            rows = [r for r in self.rows if r.scope == scope]
            if not rows:
                continue
            lines += [f"-- {title}", head]
            for r in rows:
                name = f"{r.file}:{r.kernel}{'*' if r.experimental else ''}"
                diff = "-" if r.diff_lines is None else str(r.diff_lines)
                specs = f"{r.cubins}/{r.specializations}" if r.built else "-"
                deferred = f"; {r.deferred} cubin(s) deferred (listed slow, or over the limit)" if r.deferred else ""
                refused = f"; {r.refused} recorded launches refused" if r.refused else ""
                note = (r.safety + (f"; refuses {len(r.refusals)} constant branch(es)" if r.refusals else "") + refused
                        + deferred if r.cubin_or_deferred else r.error)
                lines.append(f"{name[:58]:<58} {mark(r.translated):>6} {mark(r.built):>5} {specs:>7} "
                             f"{mark(r.tile_ir):>6} {mark(r.cubin):>5} {diff:>5}  {note[:110]}")
        lines.append("")
        lines += self.totals()
        return "\n".join(lines)

    def totals(self) -> list[str]:
        lines = []
        if any(r.scope == "operators" for r in self.rows):
            (n, of), (p, pof) = self.count("operators"), self.count("operators", public=True)
            (safe, _), (psafe, _) = self.count("operators", what="safe"), self.count("operators", True, "safe")
            lines.append(f"{n}/{of} kernels of TileGym's 24 operators through cubin ({p}/{pof} not experimental); "
                         f"fully safe: {safe}/{of} ({psafe}/{pof} not experimental)")
        if any(r.scope == "activations" for r in self.rows):
            lines.append("{}/{} activation kernels through cubin".format(*self.count("activations")))
        (n, of), (p, pof) = self.count(), self.count(public=True)
        lines.append(f"{n}/{of} kernels through cubin in all ({p}/{pof} not experimental; * = experimental)")
        lines.append(f"{sum(r.cubins for r in self.rows)}/{sum(r.specializations for r in self.rows)} specializations "
                     f"through cubin (recorded launches, else one default per kernel); "
                     f"{sum(r.refused for r in self.rows)} recorded launches refused by the launcher")
        slowest = max(self.rows, key=lambda r: r.slowest_cubin, default=None)
        if slowest is not None and slowest.slowest_cubin:
            lines.append(f"slowest cubin: {slowest.slowest_cubin:.0f} s of tileiras ({slowest.file}:{slowest.kernel})")
        diffs = [r.diff_lines for r in self.rows if r.diff_lines is not None]
        lines.append(f"Tile IR against cuTile Python's: {sum(diffs)} differing lines in all (the largest "
                     f"specialization's per kernel, normalized), over {len(diffs)} kernels; "
                     f"{sum(r.reference_failures for r in self.rows)} specializations cuTile Python failed to export")
        if self.unmatched:
            lines.append(f"{len(self.unmatched)} recorded launches match no kernel here (another version's): "
                         + ", ".join(sorted(set(self.unmatched))[:8]) + (" ..." if len(set(self.unmatched)) > 8 else ""))
        deferred = [f"{r.file}:{r.kernel}" for r in self.rows if r.deferred]
        if deferred:
            lines.append(f"{sum(r.deferred for r in self.rows)} specializations through Tile IR whose cubin was deferred "
                         f"(listed as slow, or tileiras over the run's limit; a run without either compiles "
                         f"them): "
                         + ", ".join(deferred))
        return lines

    def to_json(self) -> str:
        summary = {scope: dict(zip(("through_cubin", "kernels"), self.count(scope))) for scope in SCOPES}
        return json.dumps({"through_cubin": self.through_cubin, "kernels": len(self.rows), "scopes": summary,
                           "operators_not_experimental": dict(zip(("through_cubin", "kernels"),
                                                                  self.count("operators", public=True))),
                           "unmatched_launches": self.unmatched, "warnings": self.warnings,
                           "rows": [asdict(r) for r in self.rows]}, indent=2) + "\n"


def library_dir(target: str) -> Path:
    """A folder of kernel files: a path, or an installed package (tilegym -> tilegym/ops/cutile)."""
    path = Path(target)
    if path.is_dir():
        return path
    spec = importlib.util.find_spec(target)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"{target} is neither a folder nor an installed package")
    root = Path(list(spec.submodule_search_locations)[0])
    return root / "ops" / "cutile" if (root / "ops" / "cutile").is_dir() else root


def normalize(text: str) -> list[str]:
    """Tile IR text with SSA names, symbol names and attribute order made comparable."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"%[\w.-]+", "%v", line)  # SSA names, cutile's (`%v-1_i32_9`) included
        line = re.sub(r"@\w+", "@k", line)
        line = re.sub(r"optimization_hints=<[^>]*>", "", line)
        line = re.sub(r"\{([^{}]*)\}", lambda m: "{" + ", ".join(sorted(p.strip() for p in m.group(1).split(","))) + "}",
                      line)
        line = line.strip()
        if line and not line.startswith(("%v = constant", "%v = assume")):
            out.append(line)
    return out


def disasm(bytecode: bytes) -> str:
    root = toolchain.cuda_root()
    with tempfile.NamedTemporaryFile(suffix=".bc") as f:
        f.write(bytecode)
        f.flush()
        proc = subprocess.run([str(root / "bin" / "tileirdisasm"), f.name], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip())
    return proc.stdout


def python_tile_ir(kernel: Any, spec: Specialization) -> str:
    """cuTile Python's Tile IR for the same specialization."""
    return disasm(cutile_frontend.tile_ir(kernel, cutile_frontend.signature(spec.signature)))


def _first_error(output: str) -> str:
    """The compiler's first error and where it points, from a failed build's output."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("error"):
            where = next((l.strip() for l in lines[i + 1:i + 3] if l.strip().startswith("-->")), "")
            return f"{line} {where}".strip()
    return output.strip().splitlines()[-1] if output.strip() else "no output"


def scope_of(path: Path, root: Path) -> str:
    """Which part of the report a kernel file belongs to (see SCOPES); TileGym's layout only."""
    tilegym = root.parts[-2:] == ("ops", "cutile")
    rel = path.relative_to(root)
    if tilegym and len(rel.parts) == 1 and path.stem in TILEGYM_OPERATORS:
        return "operators"
    if tilegym and rel.parts[0] == "activation":
        return "activations"
    return "other"


def run(target: str, *, quiet: bool = True, files: list[str] | None = None,
        recorded: list[launches.Launch] = (), progress: bool = False, cubin_limit: float | None = None,
        slow: frozenset[str] = frozenset()) -> Report:
    """`files`: only the kernel files whose names (without .py) these glob patterns match.
    `recorded`: launches recorded from the library's tests; each kernel is compiled at every
    specialization they used (the default one where they have none).
    `cubin_limit`: the seconds tileiras may take on one specialization before its cubin is deferred
    (counted apart, never a failure: a busy machine compiles slower); None: no limit but the hang
    guard TILEIRAS_TIMEOUT. `slow`: specializations (`spec_id`) whose cubin is deferred without
    running tileiras at all (one of mla decoding's takes 6.5 minutes on 2 idle cores).
    Files are built one after another while the specializations of those already built compile,
    all in one pool (`compile_threads`)."""
    os.environ.setdefault("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    with ThreadPoolExecutor(max_workers=compile_threads()) as pool:
        report, waiting = _build_all(target, pool, quiet, files, recorded, progress, cubin_limit, slow,
                                     CubinsOnce())
        for finish in waiting:
            finish()
    return report


def _build_all(target, pool, quiet, files, recorded, progress, cubin_limit, slow, cubins) -> tuple[Report, list]:
    """`run`'s first part: every file translated and built, and its specializations handed to
    `pool`; returns the report and, per kernel, the function that fills its row in when they are
    done."""
    report = Report()
    waiting = []
    root = library_dir(target)
    matched: set[int] = set()
    for path in sorted(root.rglob("*.py"), key=lambda p: (list(SCOPES).index(scope_of(p, root)), str(p))):
        if files and not any(fnmatch.fnmatch(path.stem, f) for f in files):
            continue
        try:
            kernels = frontend.kernels_in(path)  # imported, else read without running it
        except Exception as e:  # a file we cannot even read statically
            report.rows.append(Row(path.name, "?", False, scope=scope_of(path, root), error=f"cannot read: {e}"))
            continue
        for nested in frontend.nested_kernels(path):  # listed, not lost
            report.rows.append(Row(path.name, nested.name, False, scope=scope_of(path, root), error=(
                f"{path.name}:{nested.line}:{nested.column}: a kernel defined inside `{nested.outer}`: tilebridge "
                f"translates module-level kernels only: `def {nested.name}`")))
        for k in kernels:
            params = set(inspect.signature(k._pyfunc).parameters)
            matched.update(id(l) for l in recorded if (l.file, l.kernel) == (path.name, k._pyfunc.__name__)
                           and set(l.args) == params)
        translated = []
        scalars: dict[str, list[str]] = {}  # unannotated scalars, each at i32 (below)
        for k in kernels:
            row = Row(path.name, k._pyfunc.__name__, static_import.is_experimental(k) or bool(
                getattr(k, "_tracked_message", None)), scope=scope_of(path, root))
            report.rows.append(row)
            try:
                src = frontend.load(k)
                # An unannotated scalar at one type, i32, as coverage builds one dtype per array: the
                # launcher, and the entry named as the kernel (the build would make one per type).
                pinned = {p: ["i32"] for p in unstated_scalars(src, None)}
                kir = analyze(src, pinned)
            except TranslationError as e:
                row.error = str(e)
                continue
            except Exception as e:  # a translator bug: reported, never hidden
                row.error = f"internal error: {type(e).__name__}: {e}"
                continue
            scalars.update(pinned)
            row.translated = True
            row.safety = "safe" if kir.safety.safe else "unsafe: " + "; ".join(kir.safety.reasons)
            row.refusals = list(kir.refusals)
            translated.append((row, k, kir))
        if not translated:
            continue
        module = "tbcov_" + re.sub(r"\W", "_", path.stem) + "_rs"
        dtypes = built_dtypes([kir for _, _, kir in translated], recorded)
        dtypes.update({p: ds for p, ds in scalars.items() if p not in dtypes})
        # A kernel with index arrays analyzed as built (`_as_built`)
        translated = [(row, k, _as_built(k, kir, dtypes, scalars, recorded)) for row, k, kir in translated]
        try:
            # Built unoptimized and never installed: coverage compiles kernels, it never launches them.
            ext = builder.build([k for _, k, _ in translated], module=module, dtypes=dtypes, quiet=quiet,
                                install=False, optimize=False)
            ext_module = builder.import_unpacked(ext.wheel, ext.module)
            if ext.warnings:
                report.warnings[path.name] = ext.warnings
        except Exception as e:
            for row, _, _ in translated:
                row.error = f"build failed: {_first_error(str(e))}"
            continue
        generated = (ext.crate_dir / "src" / "tile_kernels.rs").read_text()
        for row, k, kir in translated:
            row.built = True
            row.unsafe_blocks = unsafe_blocks(generated, kir.name)
            if progress:
                print(f"tilebridge coverage: {path.name}: {kir.name}", file=sys.stderr, flush=True)
            waiting.append(compile_later(pool, row, ext_module, k, kir, recorded, cubin_limit, slow, cubins))
    report.unmatched = [f"{l.file}:{l.kernel}({', '.join(sorted(l.args))})" for l in recorded if id(l) not in matched
                        and (not files or any(fnmatch.fnmatch(Path(l.file).stem, f) for f in files))]
    return report, waiting


def _as_built(k, kir: ir.KernelIR, dtypes: dict[str, list[str]], scalars: dict[str, list[str]],
              recorded: Sequence[launches.Launch]) -> ir.KernelIR:
    """`kir`, or, where it has an index array or a recorded launch passed an array a dtype its
    translation does not take, the kernel lowered with the dtypes the file's crate is built for:
    whether an index array's conversions are chosen by a flag (`IDS_IS_I64`) or go through f64
    depends on the dtypes stated for it (another kernel of the file may take it as floats); a
    recorded int32 array of a kernel computing with floats is the integers' variant's to take
    (`recorded_launches.cover`), which a crate built for stated dtypes has not; and what coverage
    compiles must be the built kernel, generic for generic."""
    beyond = any(l.dtype(a) not in (None, *c.allowed) for l in launches.of_kernel(recorded, kir)
                 for c in kir.dtype_classes for a in c.arrays)
    if not beyond and not any(tuple(c.allowed) == INDEX_ARRAY_DTYPES for c in kir.dtype_classes):
        return kir
    return analyze(frontend.load(k), {**scalars, **{a: dtypes[a] for c in kir.dtype_classes for a in c.arrays}})


def unsafe_blocks(generated: str, kernel: str) -> int:
    """The `unsafe` blocks in one kernel's entry function of a generated tile_kernels.rs; -1 where
    the entry is not found."""
    found = re.search(rf"^    fn {re.escape(kernel)}[<(]", generated, re.M)
    if found is None:
        return -1
    end = generated.find("#[cutile::entry", found.start())
    return len(re.findall(r"\bunsafe \{", generated[found.start():None if end < 0 else end]))


def built_dtypes(kirs: list[ir.KernelIR], recorded: Sequence[launches.Launch] = ()) -> dict[str, list[str]]:
    """The dtypes coverage builds each array parameter for: the one its default specialization
    compiles at (a combination the launcher takes: an output stored a cast tile is no narrower
    than the tile), and those its recorded launches passed (a kernel translated for one integer type
    alone converts it as the identity, which another type's specialization cannot compile; arrays
    of one name in several kernels of a file get each kernel's); an index array both of its
    types, as the kernel analyzed takes them (one alone would drop the flag that chooses its
    conversion, `IDS_IS_I64`, from the built kernel's generics)."""
    dtypes: dict[str, list[str]] = {}
    for kir in kirs:
        kernel_launches = launches.of_kernel(recorded, kir)
        for c, default in zip(kir.dtype_classes, default_combo(kir)):
            index = list(c.allowed) if tuple(c.allowed) == INDEX_ARRAY_DTYPES else []
            for a in c.arrays:
                dtypes.setdefault(a, [])
                for d in [default, *index, *(l.dtype(a) for l in kernel_launches)]:
                    if d is not None and d not in dtypes[a]:
                        dtypes[a].append(d)
    return dtypes


def compile_threads() -> int:
    """Specializations compiled at once: two per core. Each compile is one thread at a time
    (cutile's front end, then a tileiras process), and a machine busy with other work shares its
    cores among the runnable threads: with one per core, coverage ran at less than half its idle
    speed beside one parallel cargo build. On an idle machine the extra threads wait their turn."""
    return 2 * (os.cpu_count() or 1)


def spec_id(row: Row, spec: Specialization) -> str:
    """How a list of slow specializations names one: `file:kernel[generics]`."""
    return f"{row.file}:{row.kernel}[{' '.join(spec.generics)}]"


def compile_all(row: Row, ext_module: Any, kernel: Any, kir, recorded: list[launches.Launch],
                cubin_limit: float | None = None, slow: frozenset[str] = frozenset()) -> None:
    """Compiles each specialization of one kernel through Tile IR to cubin, and diffs it against
    cuTile Python's Tile IR for the same specialization; fills in `row`."""
    with ThreadPoolExecutor(max_workers=compile_threads()) as pool:
        compile_later(pool, row, ext_module, kernel, kir, recorded, cubin_limit, slow)()


class CubinsOnce:
    """tileiras once per distinct Tile IR bytecode: specializations that lower to the same bytecode
    (recorded launches differing only in what the kernel does not specialize on) share its cubin."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._made: dict[str, Future] = {}

    def cubin(self, bytecode: bytes, limit: float | None) -> float:
        """Makes the cubin (or waits for the one being made); the seconds tileiras took, 0 where
        another specialization's cubin was taken. Raises as `toolchain.tileiras`."""
        key = hashlib.sha256(bytecode).hexdigest()
        with self._lock:
            made = self._made.get(key)
            if made is None:
                made = self._made[key] = Future()
                mine = True
            else:
                mine = False
        if mine:
            start = time.monotonic()
            try:
                cubin(bytecode, limit)
                made.set_result(time.monotonic() - start)
            except BaseException as e:  # noqa: BLE001 - every specialization sharing it sees the same
                made.set_exception(e)
            return made.result()
        made.result()
        return 0.0


def compile_later(pool: ThreadPoolExecutor, row: Row, ext_module: Any, kernel: Any, kir,
                  recorded: list[launches.Launch], cubin_limit: float | None = None,
                  slow: frozenset[str] = frozenset(), cubins: CubinsOnce | None = None) -> Callable[[], None]:
    """`compile_all` on `pool`: hands it the specializations and returns at once, with the function
    that waits for them and fills in `row`. They compile side by side (cutile's frontend releases
    the GIL, tileiras is a process of its own)."""
    specs = specializations(kir, recorded)
    reference = None  # cuTile Python's Tile IR of the one default specialization, where already made
    if not specializations_recorded(kir, recorded):
        found = _default_cutile_takes(kernel, kir)
        specs, reference = ([found[0]], found[1]) if found else (specs, None)
    refused = [s for s in specs if isinstance(s, str)]  # as cuTile Python would fail to compile them
    compiled = [s for s in specs if not isinstance(s, str)]
    row.refused, row.specializations = len(refused), len(compiled)
    cubins = cubins or CubinsOnce()
    futures = [pool.submit(_compile, ext_module, kernel, kir, spec, cubins, cubin_limit, reference,
                           defer=spec_id(row, spec) in slow) for spec in compiled]
    return lambda: _fill_in(row, compiled, [f.result() for f in futures])


def _fill_in(row: Row, compiled: list[Specialization], results: list[tuple]) -> None:
    for spec, (stage, changed, error, seconds) in zip(compiled, results):
        row.slowest_cubin = max(row.slowest_cubin, seconds)
        row.tile_irs += stage >= 1
        row.cubins += stage >= 2
        if error is _DEFERRED:
            row.deferred += 1
            row.deferred_specs.append(spec_id(row, spec))
            continue
        row.reference_failures += error.startswith(_REFERENCE)
        if changed is not None:
            row.diffs.append(len(changed))
            if len(row.diffs) == 1:  # the first specialization's, op by op
                for d in changed:
                    op = re.sub(r"^%v(, %v)* = ", "", d[1:]).split(" ")[0]
                    row.diff_ops[d[0] + op] = row.diff_ops.get(d[0] + op, 0) + 1
        if error and not row.error:
            row.error = f"{' '.join(spec.generics)}: {error}"
    row.tile_ir = row.tile_irs == row.specializations > 0
    row.cubin = row.cubins == row.specializations > 0
    row.diff_lines = max(row.diffs) if row.diffs else None


_EXPORT = threading.Lock()  # cuTile Python's compiler, one export at a time
DEFAULT_TRIES = 12
_DEFERRED = "cubin deferred: listed slow, or tileiras over the limit"
_REFERENCE = "cuTile Python's export failed: "


def _default_cutile_takes(kernel: Any, kir) -> tuple[Specialization, str] | None:
    """Where no launch was recorded: the first default specialization (f16 first, then the other
    dtype combinations the launcher takes, at each guess of constants it takes) that cuTile Python
    compiles too, with its Tile IR there; None where none of the first DEFAULT_TRIES does. A kernel
    whose output dtype follows a constant (TileGym's fp8 matmul stores f32 unless OUTPUT_DTYPE says
    otherwise) has no f16 default."""
    first = tuple(class_dtype(c) for c in kir.dtype_classes)
    if kir.dtype_combos is None:
        # f32, f16 and bf16 first for arrays the kernel only moves, as for those it computes with
        classic = [[d for d in c.allowed if d in COMPUTED_ARRAY_DTYPES] or c.allowed if c.moved else c.allowed
                   for c in kir.dtype_classes]
        candidates = (combo for combo in itertools.product(*classic) if kir.admits(combo))
    else:
        candidates = iter(kir.launcher_combos())
    head = list(itertools.islice(candidates, DEFAULT_TRIES))
    combos = [first] * kir.takes(first) + [combo for combo in head if combo != first]
    tries = [(combo, g) for g in accepted_guesses(kir) or [None] for combo in combos][:DEFAULT_TRIES]
    for combo, guess in tries:
        spec = default_specialization(kir, combo, guess)
        try:
            with _EXPORT:
                return spec, python_tile_ir(kernel, spec)
        except Exception:  # noqa: BLE001 - cuTile Python rejects this one: the next
            continue
    return None


def _compile(ext_module: Any, kernel: Any, kir, spec: Specialization, cubins: CubinsOnce,
             cubin_limit: float | None = None, reference: str | None = None,
             defer: bool = False) -> tuple[int, list[str] | None, str, float]:
    """One specialization: (stages reached: 1 Tile IR, 2 cubin; the differing lines against cuTile
    Python's Tile IR, or None; the first error, "" for none, or _DEFERRED where tileiras ran over
    `cubin_limit` or `defer` said not to run it; the seconds tileiras took to make the cubin, 0
    where it made none). `reference`: cuTile Python's Tile IR of `spec`, where already made."""
    stage, seconds = 0, 0.0
    try:
        _, bytecode = ext_module._compile_only(kir.name, spec.generics, spec.strides, "sm_90")
        stage = 1
        if defer:
            return stage, None, _DEFERRED, 0.0
        try:
            seconds = cubins.cubin(bytecode, cubin_limit)
        except SlowCompile:
            if cubin_limit is None:
                raise
            return stage, None, _DEFERRED, 0.0
        stage = 2
        if reference is None:
            with _EXPORT:
                try:
                    reference = python_tile_ir(kernel, spec)
                except Exception as e:  # counted apart: ours compiled, but there is nothing to diff it against
                    return stage, None, f"{_REFERENCE}{type(e).__name__}: {e}"[:300], seconds
        theirs = normalize(reference)
        ours = normalize(disasm(bytecode))
        return stage, [d for d in difflib.unified_diff(theirs, ours, lineterm="", n=0)
                       if d[:1] in "+-" and not d.startswith(("+++", "---"))], "", seconds
    except Exception as e:
        return stage, None, str(e)[-300:], seconds
