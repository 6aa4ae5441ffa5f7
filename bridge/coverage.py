"""Coverage of an operator library: every kernel through translate -> build -> Tile IR -> cubin,
with a normalized diff against cuTile Python's own Tile IR. No GPU needed.

    tilebridge coverage tilegym          # the installed package's ops/cutile/
    tilebridge coverage path/to/kernels  # any folder of kernel files

Each kernel is compiled at one default specialization (f16 arrays where the launcher takes f16, else its first dtype; contiguous; every
ct.Constant[int] = 64, every ct.Constant[bool] = False, ct.Constant[float] = 1.0), both by
cutile (through the generated extension's compile-only entry) and by cuTile Python
(`export_kernel`); both bytecodes are printed by `tileirdisasm` and compared after SSA
names and attribute order are normalized. Not yet: the specializations the library's own
tests launch.
"""

from __future__ import annotations

import difflib
import fnmatch
import importlib.util
import json
import os
import re
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import builder, toolchain
from .codegen import emit, frontend, ir, static_source
from .codegen.analysis import analyze
from .codegen.errors import TranslationError

DEFAULT_INT = 64
DEFAULT_DTYPE = "f16"


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

    @property
    def safe(self) -> bool:
        return self.translated and self.safety == "safe"


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)

    @property
    def through_cubin(self) -> int:
        return sum(r.cubin for r in self.rows)

    def count(self, scope: str | None = None, public: bool = False, what: str = "cubin") -> tuple[int, int]:
        """(kernels that got `what`, kernels) in `scope` (all by default), not experimental ones only
        with `public`."""
        rows = [r for r in self.rows if (scope is None or r.scope == scope) and not (public and r.experimental)]
        return sum(bool(getattr(r, what)) for r in rows), len(rows)

    def table(self) -> str:
        head = f"{'kernel':<58} {'transl':>6} {'built':>5} {'TileIR':>6} {'cubin':>5} {'diff':>5}  safety / error"
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
                note = (r.safety + (f"; refuses {len(r.refusals)} constant branch(es)" if r.refusals else "")
                        if r.cubin else r.error)
                lines.append(f"{name[:58]:<58} {mark(r.translated):>6} {mark(r.built):>5} {mark(r.tile_ir):>6} "
                             f"{mark(r.cubin):>5} {diff:>5}  {note[:110]}")
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
        return lines

    def to_json(self) -> str:
        summary = {scope: dict(zip(("through_cubin", "kernels"), self.count(scope))) for scope in SCOPES}
        return json.dumps({"through_cubin": self.through_cubin, "kernels": len(self.rows), "scopes": summary,
                           "operators_not_experimental": dict(zip(("through_cubin", "kernels"),
                                                                  self.count("operators", public=True))),
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


def _class_dtype(c) -> str:
    """The dtype a dtype class is compiled at: f16 where the launcher allows it."""
    return DEFAULT_DTYPE if DEFAULT_DTYPE in c.allowed else c.allowed[0]


def _generics(kir) -> list[str]:
    bound = {c.rust_name: _class_dtype(c) for c in kir.dtype_classes}
    derived = [emit.derived_dtype(d, bound) for d in kir.derived]
    return list(bound.values()) + derived + [
        "false" if c.kind == "bool" else str(DEFAULT_INT) for c in kir.consts]


def _strides(kir) -> list[tuple[str, list[int]]]:
    return [(a.name, [-1] * (a.rank - 1) + [1]) for a in kir.arrays]


def normalize(text: str) -> list[str]:
    """Tile IR text with SSA names, symbol names and attribute order made comparable."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"%[A-Za-z_][\w]*|%\d+", "%v", line)
        line = re.sub(r"@\w+", "@k", line)
        line = re.sub(r"optimization_hints=<[^>]*>", "", line)
        line = re.sub(r"\{([^{}]*)\}", lambda m: "{" + ", ".join(sorted(p.strip() for p in m.group(1).split(","))) + "}",
                      line)
        line = line.strip()
        if line and not line.startswith(("%v = constant", "%v = assume")):
            out.append(line)
    return out


def _disasm(bytecode: bytes) -> str:
    root = toolchain.cuda_root()
    with tempfile.NamedTemporaryFile(suffix=".bc") as f:
        f.write(bytecode)
        f.flush()
        proc = subprocess.run([str(root / "bin" / "tileirdisasm"), f.name], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip())
    return proc.stdout


def _cubin(bytecode: bytes) -> None:
    root = toolchain.cuda_root()
    with tempfile.TemporaryDirectory() as d:
        bc, cubin = Path(d) / "k.bc", Path(d) / "k.cubin"
        bc.write_bytes(bytecode)
        proc = subprocess.run([str(root / "bin" / "tileiras"), "--gpu-name", "sm_90", "--opt-level", "3", "-o",
                               str(cubin), str(bc)], capture_output=True, text=True)
        if proc.returncode != 0 or not cubin.exists():
            raise RuntimeError(proc.stderr.strip()[-500:])


def _python_tile_ir(kernel: Any, kir) -> str:
    """cuTile Python's Tile IR for the same default specialization."""
    import cuda.tile as ct
    from cuda.tile import compilation as c

    dtypes = {"f16": ct.float16, "f32": ct.float32, "bf16": ct.bfloat16}
    of_array = {a: _class_dtype(c) for c in kir.dtype_classes for a in c.arrays}
    constraints = []
    consts = {p.name for p in kir.consts}
    for p in kir.params:
        if isinstance(p, ir.UnusedParam):  # anything will do: the kernel never reads it
            constraints.append(c.ArrayConstraint(ct.float16, 1, index_dtype=ct.int32, stride_lower_bound_incl=0,
                                                 alias_groups=[], may_alias_internally=False, stride_constant=[1]))
        elif hasattr(p, "rank"):
            constraints.append(c.ArrayConstraint(dtypes[of_array.get(p.name, DEFAULT_DTYPE)], p.rank, index_dtype=ct.int32,
                                                 stride_lower_bound_incl=0, alias_groups=[], may_alias_internally=False,
                                                 stride_constant=[None] * (p.rank - 1) + [1]))
        elif p.name in consts:
            constraints.append(c.ConstantConstraint(False if p.kind == "bool" else DEFAULT_INT))
        elif getattr(p, "constant", False):
            constraints.append(c.ConstantConstraint(1.0))
        else:
            constraints.append(c.ScalarConstraint({"i32": ct.int32, "i64": ct.int64, "f32": ct.float32}[p.dtype]))
    sig = c.KernelSignature(constraints, c.CallingConvention.cutile_python_v1())
    with tempfile.NamedTemporaryFile(suffix=".bc") as f:
        c.export_kernel(kernel, [sig], f.name, output_format="tileir_bytecode", bytecode_version="13.3")
        return _disasm(Path(f.name).read_bytes())


def _first_error(output: str) -> str:
    """The compiler's first error and where it points, from a failed build's output."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("error"):
            where = next((l.strip() for l in lines[i + 1:i + 3] if l.strip().startswith("-->")), "")
            return f"{line} {where}".strip()
    return output.strip().splitlines()[-1] if output.strip() else "no output"


def _kernels_of(path: Path) -> list[Any]:
    try:
        module = frontend.import_file(path)
    except Exception:
        module = static_source.load_file(path)
    return frontend.kernels_in(module)


def scope_of(path: Path, root: Path) -> str:
    """Which part of the report a kernel file belongs to (see SCOPES); TileGym's layout only."""
    tilegym = root.parts[-2:] == ("ops", "cutile")
    rel = path.relative_to(root)
    if tilegym and len(rel.parts) == 1 and path.stem in TILEGYM_OPERATORS:
        return "operators"
    if tilegym and rel.parts[0] == "activation":
        return "activations"
    return "other"


def run(target: str, *, quiet: bool = True, files: list[str] | None = None) -> Report:
    """`files`: only the kernel files whose names (without .py) these glob patterns match."""
    os.environ.setdefault("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    report = Report()
    root = library_dir(target)
    for path in sorted(root.rglob("*.py"), key=lambda p: (list(SCOPES).index(scope_of(p, root)), str(p))):
        if files and not any(fnmatch.fnmatch(path.stem, f) for f in files):
            continue
        try:
            kernels = _kernels_of(path)
        except Exception as e:  # a file we cannot even read statically
            report.rows.append(Row(path.name, "?", False, scope=scope_of(path, root), error=f"cannot read: {e}"))
            continue
        translated = []
        for k in kernels:
            row = Row(path.name, k._pyfunc.__name__, static_source.is_experimental(k) or bool(
                getattr(k, "_tracked_message", None)), scope=scope_of(path, root))
            report.rows.append(row)
            try:
                kir = analyze(frontend.load(k))
            except TranslationError as e:
                row.error = str(e)
                continue
            except Exception as e:  # a translator bug: reported, never hidden
                row.error = f"internal error: {type(e).__name__}: {e}"
                continue
            row.translated = True
            row.safety = "safe" if kir.safety.safe else "unsafe: " + "; ".join(kir.safety.reasons)
            row.refusals = list(kir.refusals)
            translated.append((row, k, kir))
        if not translated:
            continue
        module = "tbcov_" + re.sub(r"\W", "_", path.stem) + "_rs"
        # One dtype per array, the one compiled below: the launchers need no other variants.
        dtypes: dict[str, list[str]] = {}
        for _, _, kir in translated:
            for c in kir.dtype_classes:
                for a in c.arrays:
                    dtypes.setdefault(a, [])
                    if _class_dtype(c) not in dtypes[a]:
                        dtypes[a].append(_class_dtype(c))
        try:
            ext = builder.build([k for _, k, _ in translated], module=module, dtypes=dtypes, quiet=quiet)
            ext_module = importlib.import_module(ext.module)
        except Exception as e:
            for row, _, _ in translated:
                row.error = f"build failed: {_first_error(str(e))}"
            continue
        for row, k, kir in translated:
            row.built = True
            try:
                ir_text, bytecode = ext_module._compile_only(kir.name, _generics(kir), _strides(kir), "sm_90")
                row.tile_ir = True
                _cubin(bytecode)
                row.cubin = True
                ours = normalize(_disasm(bytecode))
                theirs = normalize(_python_tile_ir(k, kir))
                row.diff_lines = sum(1 for d in difflib.unified_diff(theirs, ours, lineterm="", n=0)
                                     if d[:1] in "+-" and not d.startswith(("+++", "---")))
            except Exception as e:
                row.error = str(e)[-300:]
    return report
