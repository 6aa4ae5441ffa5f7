"""Emit: typed kernel IR -> the files of a Rust crate, through Jinja2 templates.

`render_crate` returns every file as text (nothing is written here): the
`#[cutile::module]` kernel source, the PyO3 launchers, `Cargo.toml`,
`pyproject.toml` and a `.pyi` stub. Rust files are passed through rustfmt when it
is installed, so the output is rustfmt-clean either way it is read.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from .. import ir
from ...errors import TranslationError
from ..rust_syntax import rust_name

CUTILE_VERSION = "0.5.0"
PYO3_VERSION = "0.30"

_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
    undefined=jinja2.StrictUndefined,
)

_RUST_TYPES = {"f32": "f32", "f16": "f16", "bf16": "bf16", "f64": "f64", "i32": "i32", "i64": "i64",
               "i16": "i16", "i8": "i8", "u8": "u8", "bool": "bool", "f8e4m3fn": "f8e4m3fn", "f8e5m2": "f8e5m2"}
_ELEM_VARIANTS = {"f32": "F32", "f16": "F16", "bf16": "BF16", "f64": "F64", "i32": "I32", "i64": "I64",
                  "i16": "I16", "i8": "I8", "u8": "U8", "bool": "Bool", "f8e4m3fn": "F8E4M3FN",
                  "f8e5m2": "F8E5M2"}
# A launcher dispatches on the dtypes of its arrays: one monomorphization per combination.
MAX_LAUNCHER_VARIANTS = 81

# Rust's binary operator precedence, tightest first; receivers of methods, fields and indexing bind tighter.
_PRECEDENCE = {"*": 9, "/": 9, "%": 9, "+": 8, "-": 8, "<<": 7, ">>": 7, "&": 6, "^": 5, "|": 4,
               "<": 3, ">": 3, "<=": 3, ">=": 3, "==": 3, "!=": 3, "&&": 2, "||": 1}
_POSTFIX = 10


# ---- Rust text of IR types and expressions -----------------------------------------------


def dims(shape: tuple[ir.Dim, ...]) -> str:
    return ", ".join(str(d) for d in shape)


def rust_type(t: ir.Type) -> str:
    if isinstance(t, ir.TileType):
        return f"Tile<{t.dtype}, {{ [{dims(t.shape)}] }}>"
    if isinstance(t, ir.PartitionType):
        return f"{'PartitionMut' if t.mutable else 'Partition'}<{t.dtype}, {{ [{dims(t.shape)}] }}>"
    if isinstance(t, ir.PointerTileType):
        return f"PointerTile<*{'mut' if t.mutable else 'const'} {t.dtype}, {{ [{dims(t.shape)}] }}>"
    if isinstance(t, ir.ExtentsType):
        return f"{t.kind}<{{ [{dims(t.dims)}] }}>"
    if isinstance(t, ir.TensorType):
        return f"Tensor<{t.dtype}, {{ [{dims(t.shape)}] }}>"
    if isinstance(t, ir.LoadedType):
        return f"({rust_type(t.tile)}, Token)"
    return t.dtype


def rust_expr(e: ir.Expr, parent_prec: int = 0, right: bool = False) -> str:
    if isinstance(e, (ir.Lit,)):
        return e.text
    if isinstance(e, ir.Var):
        return e.name
    if isinstance(e, ir.Shape):
        return f"const_shape![{dims(e.dims)}]"
    if isinstance(e, ir.Call):
        return f"{e.func}({', '.join(rust_expr(a) for a in e.args)})"
    if isinstance(e, ir.Method):
        return f"{rust_expr(e.recv, _POSTFIX)}.{e.name}({', '.join(rust_expr(a) for a in e.args)})"
    if isinstance(e, ir.Field):
        return f"{rust_expr(e.recv, _POSTFIX)}.{e.name}"
    if isinstance(e, ir.Binary):
        prec = _PRECEDENCE[e.op]
        # Rust comparisons do not chain: a comparison operand of a comparison gets parentheses.
        child = prec + 1 if prec == _PRECEDENCE["=="] else prec
        text = f"{rust_expr(e.lhs, child)} {e.op} {rust_expr(e.rhs, child, right=True)}"
        return f"({text})" if prec < parent_prec or (right and prec == parent_prec) else text
    if isinstance(e, ir.Subscript):
        return f"{rust_expr(e.recv, _POSTFIX)}[{e.index}]"
    if isinstance(e, ir.If):
        text = f"if {rust_expr(e.cond)} {{ {rust_expr(e.then)} }} else {{ {rust_expr(e.other)} }}"
        return f"({text})" if parent_prec else text
    if isinstance(e, ir.Index):
        return f"[{', '.join(rust_expr(i) for i in e.items)}]"
    if isinstance(e, ir.Ref):
        return f"&{rust_expr(e.expr, _POSTFIX)}"
    if isinstance(e, ir.Unsafe):
        return f"unsafe {{ {rust_expr(e.expr)} }}"
    if isinstance(e, ir.TypeConst):
        return f"{e.dtype}::{e.name}"
    raise TypeError(e)


def _unsafe_reason(e: ir.Expr) -> str | None:
    return e.reason if isinstance(e, ir.Unsafe) else None


class _BodyWriter:
    """Statements as Rust lines, each group led by a comment naming its Python line."""

    def __init__(self, kernel: ir.KernelIR):
        self.kernel = kernel
        self.lines: list[str] = []
        self.last_line: int | None = None

    def source_comment(self, line: int, indent: str) -> None:
        if line != self.last_line:
            text = self.kernel.line_text.get(line, "")
            self.lines.append(f"{indent}// {self.kernel.file}:{line}: {text}".rstrip())
            self.last_line = line

    def stmts(self, stmts: list[ir.Stmt], indent: str) -> None:
        for s in stmts:
            self.source_comment(s.line, indent)
            if isinstance(s, ir.Let):
                reason = _unsafe_reason(s.value)
                if reason:
                    self.lines.append(f"{indent}// SAFETY: {reason}.")
                mut = "mut " if s.mutable else ""
                ty = f": {rust_type(s.type)}" if s.type is not None else ""
                # A pointer load gives (tile, token); the token is not needed (see `access`).
                name = f"({s.name}, _{s.name}_token)" if isinstance(s.type, ir.LoadedType) else s.name
                self.lines.append(f"{indent}let {mut}{name}{ty} = {rust_expr(s.value)};")
            elif isinstance(s, ir.Assign):
                self.lines.append(f"{indent}{s.name} = {rust_expr(s.value)};")
            elif isinstance(s, ir.Do):
                reason = _unsafe_reason(s.expr)
                if reason:
                    self.lines.append(f"{indent}// SAFETY: {reason}.")
                self.lines.append(f"{indent}{rust_expr(s.expr)};")
            elif isinstance(s, ir.IfElse):
                self.lines.append(f"{indent}if {rust_expr(s.cond)} {{")
                self.stmts(s.then, indent + "    ")
                if s.other:
                    self.lines.append(f"{indent}}} else {{")
                    self.last_line = None
                    self.stmts(s.other, indent + "    ")
                self.lines.append(f"{indent}}}")
                self.last_line = None
            elif isinstance(s, ir.For):
                rng = f"{rust_expr(s.start)}..{rust_expr(s.stop)}"
                if s.step is not None:
                    rng = f"({rng}).step_by({rust_expr(s.step)} as usize)"
                self.lines.append(f"{indent}for {s.var} in {rng} {{")
                self.stmts(s.body, indent + "    ")
                self.lines.append(f"{indent}}}")
                self.last_line = None
            elif isinstance(s, ir.While):
                self.lines.append(f"{indent}while {rust_expr(s.cond)} {{")
                self.stmts(s.body, indent + "    ")
                self.lines.append(f"{indent}}}")
                self.last_line = None


# ---- per-kernel data for the templates -----------------------------------------------------


def _entry(kernel: ir.KernelIR) -> dict:
    generics = [f"{c.rust_name}: ElementType" for c in kernel.dtype_classes]
    generics += [f"{d.rust_name}: ElementType" for d in kernel.derived]
    generics += [f"const {rust_name(c.name)}: {c.kind}" for c in kernel.consts]
    generics += [f"const {d}: i32" for p in kernel.arrays if p.listed for d in ir.list_divisors(p)]
    params = []
    for p in kernel.runtime_params:
        if isinstance(p, ir.ArrayParam):
            if p.listed:
                params.append(f"{rust_name(p.name)}: &Tensor<i64, {{ [-1, {ir.list_row_words(p.rank)}] }}>")
            elif p.written and p.tile is not None:
                params.append(f"{rust_name(p.name)}: &mut Tensor<{p.dtype}, {{ [{dims(p.tile)}] }}>")
            else:
                params.append(f"{rust_name(p.name)}: &Tensor<{p.dtype}, {{ [{', '.join(['-1'] * p.rank)}] }}>")
            if p.strided:
                params += [f"{rust_name(p.name)}_stride_{axis}: i32" for axis in range(p.rank - 1)]
        else:
            params.append(f"{rust_name(p.name)}: {p.dtype}")
    body = _BodyWriter(kernel)
    body.stmts(kernel.body, "        ")
    return {
        "name": kernel.name,
        "doc": f"{kernel.file}:{kernel.line}: `{kernel.signature}`",
        "generics": ", ".join(generics),
        "params": params,
        "body": body.lines,
        "safety": kernel.safety,
        "attributes": entry_attributes(kernel.options),
    }


# cuTile Python's kernel hints as cutile's entry hints spell them.
_ENTRY_HINTS = {"occupancy": "occupancy", "num_ctas": "num_cta_in_cga", "num_worker_warps": "num_worker_warps_per_cta"}


def entry_attributes(options: dict[str, dict[str, int]]) -> str:
    """`#[cutile::entry(..)]` arguments for the kernel's hints, e.g. `occupancy=4` ->
    `optimization_hints = (default = (occupancy = 4,),)`, as cuTile Python emits them."""
    by_target: dict[str, list[str]] = {}
    for hint, targets in options.items():
        for target, value in targets.items():
            by_target.setdefault(target, []).append(f"{_ENTRY_HINTS[hint]} = {value},")
    if not by_target:
        return ""
    order = sorted(by_target, key=lambda t: (t != "default", t))
    return "optimization_hints = (" + " ".join(f"{t} = ({' '.join(by_target[t])})," for t in order) + ")"


def check_launcher_variants(kernel: ir.KernelIR) -> None:
    """Raises TranslationError where the launcher would need too many dtype variants."""
    variants = len(kernel.launcher_combos())
    if variants > MAX_LAUNCHER_VARIANTS:
        arrays = ", ".join(f"{'/'.join(c.arrays)} ({', '.join(c.allowed)})" for c in kernel.dtype_classes
                           if len(c.allowed) > 1)
        raise TranslationError(f"{kernel.file}:{kernel.line}: kernel `{kernel.name}` takes arrays whose dtypes are "
                               f"independent: {arrays}: {variants} launcher variants to build; state the dtypes of "
                               "some of them (tb.build(..., dtypes={\"name\": [\"f16\"]}), tilebridge build "
                               "--dtype name=f16), or build from recorded launches (tilebridge build --launches LOG)")


def _launcher(kernel: ir.KernelIR) -> dict:
    """What the PyO3 launcher template needs, as Rust snippets."""
    k = kernel.name
    py_params = [p.name for p in kernel.params if not _by_keyword(p)]
    keywords = [p.name for p in kernel.params if _by_keyword(p)]
    sig = ", ".join(["grid", *py_params]) + ", *, " + ", ".join([*keywords, "stream = None", "sync = true",
                                                                 "hints = None"])
    # The Rust parameters in the signature's order: positional ones first, then the keywords.
    rust_type = {p.name: "&Bound<'py, PyAny>" if isinstance(p, (ir.ArrayParam, ir.UnusedParam)) else
                 p.dtype if isinstance(p, ir.ScalarParam) else p.kind for p in kernel.params}
    args = ["grid: &Bound<'py, PyAny>", *(f"{rust_name(n)}: {rust_type[n]}" for n in [*py_params, *keywords])]
    args += ["stream: Option<Bound<'py, PyAny>>", "sync: bool", "hints: Option<tilebridge_runtime::launch::Hints>"]

    admit = [f"let _ = {rust_name(p.name)}; // the kernel never reads `{p.name}`" for p in kernel.params
             if isinstance(p, ir.UnusedParam)]
    if kernel.in_place:
        pairs = ", ".join(f'("{a}", "{b}")' for a, b in kernel.in_place)
        admit.append(f"launch.allow_in_place(&[{pairs}]);")
    for p in kernel.arrays:
        how = ("outputs" if p.written else "inputs") if p.listed else ("output" if p.written else "input")
        admit.append(f'let {rust_name(p.name)} = launch.{how}({rust_name(p.name)}, "{p.name}", {p.rank})?;')
    checks = [f'check_tile_dim("{k}", "{c.name}", {rust_name(c.name)})?;' for c in kernel.consts if c.tile_dim]
    checks += [f'check_positive("{k}", "{c.name}", {rust_name(c.name)})?;' for c in kernel.consts
               if c.positive and not c.tile_dim]
    for cond, why in kernel.launch_checks:
        message = json.dumps(f"kernel `{k}`: {why}")
        checks.append(f"if !({rust_expr(cond)}) {{ return Err(tilebridge_runtime::error::argument({message})); }}")
    classes = []
    listed = {p.name for p in kernel.arrays if p.listed}  # a list stands in for its class by its first item
    for c in kernel.dtype_classes:
        members = ", ".join(f"{rust_name(m)}.first()" if m in listed else f"&{rust_name(m)}" for m in c.arrays)
        allowed = ", ".join(f"ElemType::{_ELEM_VARIANTS[d]}" for d in c.allowed)
        classes.append(f"let {c.rust_name.lower()} = launch.same_elem(&[{members}], &[{allowed}])?;")
    for p in kernel.arrays:
        if p.strided:
            checks.append(f'launch.check_unit_stride(&{rust_name(p.name)}, "{p.name}")?;')
        if p.written and p.tile is not None:
            tile = ", ".join(rust_name(d) if isinstance(d, str) else str(d) for d in p.tile)
            checks.append(f"launch.check_tile_grid(&{rust_name(p.name)}, &[{tile}])?;")

    # One monomorphization per combination of allowed dtypes.
    check_launcher_variants(kernel)
    combos = kernel.launcher_combos()
    typed_args = ["launch"] + [rust_name(p.name) for p in kernel.params if not isinstance(p, ir.UnusedParam)]
    arms = []
    for combo in combos:
        pattern = ", ".join(f"ElemType::{_ELEM_VARIANTS[d]}" for d in combo)
        types = ", ".join(_RUST_TYPES[d] for d in combo)
        # Derived dtypes are fixed per arm, passed to cutile by name.
        bound = {c.rust_name: d for c, d in zip(kernel.dtype_classes, combo)}
        derived = [f'"{derived_dtype(d, bound)}"' for d in kernel.derived]
        arms.append((f"({pattern})" if len(combo) > 1 else pattern,
                     f"{k}_typed::<{types}>({', '.join(typed_args + derived)})"))
    scrutinee = ", ".join(c.rust_name.lower() for c in kernel.dtype_classes)
    if len(kernel.dtype_classes) > 1:
        scrutinee = f"({scrutinee})"

    typed_params = ["mut launch: Launch<'_>"]
    for p in kernel.params:
        if isinstance(p, ir.ArrayParam):
            typed_params.append(f"{rust_name(p.name)}: {'ArrayList' if p.listed else 'Array'}")
        elif isinstance(p, ir.ScalarParam):
            typed_params.append(f"{rust_name(p.name)}: {p.dtype}")
        elif isinstance(p, ir.ConstParam):
            typed_params.append(f"{rust_name(p.name)}: {p.kind}")
    typed_params += [f"{d.rust_name.lower()}: &'static str" for d in kernel.derived]
    tensors = []
    call_args = []
    for p in kernel.runtime_params:
        n = rust_name(p.name)
        if isinstance(p, ir.ArrayParam) and p.listed:
            tensors.append(f"let {n}_divisors = {n}.divisors();")
            tensors.append(f"let {n} = launch.table(&{n}, &context)?;")
            call_args.append(f"&{n}")
        elif isinstance(p, ir.ArrayParam):
            partitioned = p.written and p.tile is not None
            mut = "mut " if partitioned else ""
            if p.strided:
                tensors += [f"let {n}_stride_{axis} = {n}.strides[{axis}];" for axis in range(p.rank - 1)]
            tensors.append(f"let {mut}{n} = {n}.tensor::<{p.dtype}>(launch.py, &context);")
            if partitioned:
                # The tile sizes were checked positive (check_tile_dim) before this cast.
                tile = ", ".join(f"{rust_name(d)} as usize" if isinstance(d, str) else str(d) for d in p.tile)
                call_args.append(f"(&mut {n}).partition([{tile}])")
            else:
                call_args.append(f"&{n}")
            if p.strided:
                call_args += [f"{n}_stride_{axis}" for axis in range(p.rank - 1)]
        else:
            call_args.append(n)
    generics = [f"{c.rust_name}::DTYPE.as_str().to_string()" for c in kernel.dtype_classes]
    generics += [f"{d.rust_name.lower()}.to_string()" for d in kernel.derived]
    generics += [f"{rust_name(c.name)}.to_string()" for c in kernel.consts]
    generics += [f"{rust_name(p.name)}_divisors[{i}].to_string()" for p in kernel.arrays if p.listed
                 for i in range(len(ir.list_divisors(p)))]
    return {
        "name": k,
        "doc": f"Launches `{k}` ({kernel.file}:{kernel.line}) on the caller's stream.",
        "signature": sig,
        "args": args,
        "admit": admit,
        "classes": classes,
        "checks": checks,
        "scrutinee": scrutinee,
        "arms": arms,
        "unbuilt": json.dumps(_unbuilt_message(kernel)),
        "class_names": [c.rust_name for c in kernel.dtype_classes],
        "typed_params": typed_params,
        "tensors": tensors,
        "call": f"kernels::{k}({', '.join(call_args)})",
        "generics": ", ".join(generics),
    }


def _unbuilt_message(kernel: ir.KernelIR) -> str:
    """What the launcher says of a dtype combination it was not built for."""
    if kernel.dtype_combos is None:
        return "unsupported dtype combination"
    arrays = " / ".join(",".join(c.arrays) for c in kernel.dtype_classes)
    built = "; ".join(" / ".join(combo) for combo in kernel.dtype_combos)
    return (f"kernel `{kernel.name}` was built for these dtype combinations only ({arrays}: {built}); "
            "rebuild with launches recorded that use this one (tilebridge build --launches), or the dtypes stated")


def derived_dtype(d: ir.DerivedDType, bound: dict[str, str]) -> str:
    """The cutile dtype `d` stands for when its class is bound as in `bound`."""
    chosen = d.then if bound[d.of] == d.when else d.other
    return bound.get(chosen, chosen)


def _by_keyword(p: ir.Param) -> bool:
    """`ct.Constant` values are passed by keyword, as their names say what they configure."""
    return isinstance(p, ir.ConstParam) or (isinstance(p, ir.ScalarParam) and p.constant)


def metadata(kernels: list[ir.KernelIR]) -> dict:
    """What the Python side needs to map `ct.launch` arguments onto a launcher."""
    out = {}
    for k in kernels:
        params = []
        for p in k.params:
            if isinstance(p, ir.ArrayParam):
                params.append({"name": p.name, "kind": "array_list" if p.listed else "array", "rank": p.rank,
                               "written": p.written,
                               "tile": list(p.tile) if p.tile else None, "dtype_class": p.dtype})
            elif isinstance(p, ir.ScalarParam):
                params.append({"name": p.name, "kind": "constant" if p.constant else "scalar", "dtype": p.dtype})
            elif isinstance(p, ir.UnusedParam):
                params.append({"name": p.name, "kind": "unused"})
            else:
                params.append({"name": p.name, "kind": "constant", "dtype": p.kind})
        out[k.name] = {
            "file": k.file,
            "line": k.line,
            "params": params,
            "dtypes": {c.rust_name: c.allowed for c in k.dtype_classes},
            "safe": k.safety.safe,
            "unsafe_reasons": k.safety.reasons,
            "in_place": [list(pair) for pair in k.in_place],
        }
    return out


def _pyi_signature(kernel: ir.KernelIR) -> str:
    parts = ["grid: Grid"]
    for p in kernel.params:
        if not _by_keyword(p):
            kind = ("list[CudaArray]" if isinstance(p, ir.ArrayParam) and p.listed else
                    "CudaArray" if isinstance(p, ir.ArrayParam) else "object" if isinstance(p, ir.UnusedParam)
                    else _PY_SCALAR[p.dtype])
            parts.append(f"{p.name}: {kind}")
    parts.append("*")
    for p in kernel.params:
        if _by_keyword(p):
            kind = p.kind if isinstance(p, ir.ConstParam) else p.dtype
            parts.append(f"{p.name}: {_PY_SCALAR[kind]}")
    parts += ["stream: object | None = None", "sync: bool = True",
              "hints: tuple[int | None, int | None, int | None] | None = None"]
    return ", ".join(parts)


_PY_SCALAR = {"i32": "int", "i64": "int", "f32": "float", "bool": "bool"}


@dataclass
class CrateFiles:
    """A generated crate, as text, before anything is written."""

    module: str
    files: dict[str, str]  # relative path -> contents
    skipped: list[str] = field(default_factory=list)  # `partial` translation: why each kernel was left out


def render_crate(kernels: list[ir.KernelIR], module: str, runtime_path: Path, source: str) -> CrateFiles:
    meta = metadata(kernels)
    launchers = [_launcher(k) for k in kernels]
    checks = " ".join(line for l in launchers for line in l["checks"])
    launch_imports = [f for f in ("check_positive", "check_tile_dim") if f"{f}(" in checks] + ["guard"]
    entries = [_entry(k) for k in kernels]
    ctx = {
        "module": module,
        "source": source,
        "padded_gather": any("load_ptr_tko_padded(" in line for e in entries for line in e["body"]),
        "cutile_version": CUTILE_VERSION,
        "pyo3_version": PYO3_VERSION,
        "runtime_path": runtime_path.as_posix(),
        "entries": entries,
        "launchers": launchers,
        "launch_imports": ", ".join(launch_imports),
        "kernel_names": [k.name for k in kernels],
        "metadata": json.dumps(meta, sort_keys=True),
        "stubs": [{"name": k.name, "signature": _pyi_signature(k),
                   "doc": f"Launches `{k.name}` ({k.file}:{k.line}); see the module docstring."} for k in kernels],
    }
    files = {
        "Cargo.toml": _ENV.get_template("Cargo.toml.j2").render(ctx),
        "pyproject.toml": _ENV.get_template("pyproject.toml.j2").render(ctx),
        "src/tile_kernels.rs": rustfmt(_ENV.get_template("kernels.rs.j2").render(ctx)),
        "src/lib.rs": rustfmt(_ENV.get_template("lib.rs.j2").render(ctx)),
        f"{module}.pyi": _ENV.get_template("stub.pyi.j2").render(ctx),
        "tilebridge.json": json.dumps({"module": module, "source": source, "kernels": meta}, indent=2,
                                      sort_keys=True) + "\n",
    }
    return CrateFiles(module, files)


def rustfmt(text: str) -> str:
    """Formats Rust source with rustfmt (edition 2021) when it is on PATH."""
    exe = shutil.which("rustfmt")
    if exe is None:
        return text
    proc = subprocess.run([exe, "--edition", "2021", "--emit", "stdout", "--quiet"], input=text,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"rustfmt rejected generated code (a tilebridge bug):\n{proc.stderr}\n{text}")
    return proc.stdout
