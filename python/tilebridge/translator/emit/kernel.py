"""The `#[cutile::entry]` functions of the kernel module: signature, hints and body of each kernel,
as the data `kernels.rs.j2` renders."""

from __future__ import annotations

from .. import ir
from ..rust_syntax import rust_name
from .rust_expr import dims, rust_expr, rust_type


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
                # A pointer load gives (tile, token); the tile may be reassigned later, the token is
                # only read (see `lower.ops.pointers`).
                name = f"({mut}{s.name}, _{s.name}_token)" if isinstance(s.type, ir.LoadedType) else f"{mut}{s.name}"
                self.lines.append(f"{indent}let {name}{ty} = {rust_expr(s.value)};")
            elif isinstance(s, ir.Assign):
                self.lines.append(f"{indent}{s.name} = {rust_expr(s.value)};")
            elif isinstance(s, ir.Eval):
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
            elif isinstance(s, ir.TileLoop):
                self.lines.append(f"{indent}for {s.index} in {s.array}.iter_indices() {{")
                self.stmts(s.body, indent + "    ")
                self.lines.append(f"{indent}}}")
                self.last_line = None
            elif isinstance(s, (ir.Break, ir.Continue)):
                self.lines.append(f"{indent}{'break' if isinstance(s, ir.Break) else 'continue'};")
            elif isinstance(s, ir.While):
                self.lines.append(f"{indent}loop {{" if s.cond is None else f"{indent}while {rust_expr(s.cond)} {{")
                self.stmts(s.body, indent + "    ")
                self.lines.append(f"{indent}}}")
                self.last_line = None


def entry(kernel: ir.KernelIR) -> dict:
    """What the kernel module template needs of one kernel, as Rust snippets."""
    generics = [f"{c.rust_name}: ElementType" for c in kernel.dtype_classes]
    generics += [f"{p.rust_name}: ElementType" for p in kernel.promoted]
    generics += [f"{d.rust_name}: ElementType" for d in kernel.derived]
    generics += [f"const {rust_name(c.name)}: {c.kind}" for c in kernel.consts]
    generics += [f"const {d}: i32" for p in kernel.arrays if p.listed for d in ir.list_divisors(p)]
    generics += [f"const {rust_name(p.name)}_BITS: i32" for p in kernel.float_consts]
    generics += [f"const {name}: i32" for name, _, _ in kernel.shape_consts]
    generics += [f"const {f.rust_name}: bool" for f in kernel.dtype_flags]
    params = []
    for p in kernel.runtime_params:
        if isinstance(p, ir.ArrayParam):
            if p.listed:
                params.append(f"{rust_name(p.name)}: &Tensor<i64, {{ [-1, {ir.list_row_words(p.rank)}] }}>")
            elif p.written and p.tile is not None and p.streamed is not None:
                owned = ", ".join(["1"] + ["0"] * (len(p.tile) - 1))  # axis 0 streamed, the others owned
                params.append(f"mut {rust_name(p.name)}: MappedPartitionMut<{p.dtype}, {{ [{dims(p.tile)}] }}, "
                              f"{{ [{owned}] }}>")
            elif p.written and p.tile is not None:
                params.append(f"{rust_name(p.name)}: &mut Tensor<{p.dtype}, {{ [{dims(p.tile)}] }}>")
            else:
                params.append(f"{rust_name(p.name)}: &Tensor<{p.dtype}, {{ [{', '.join(['-1'] * p.rank)}] }}>")
            if p.strided:
                params += [f"{rust_name(p.name)}_stride_{axis}: i32" for axis in range(p.rank - 1)]
        else:
            params.append(f"{rust_name(p.name)}: {p.dtype}")
    body = _BodyWriter(kernel)
    for p in kernel.float_consts:
        # A compile-time value, as cuTile Python's: tileiras folds what the kernel computes of it.
        n = rust_name(p.name)
        body.lines += [f"        // ct.Constant[float] `{p.name}`, compiled in from its f32 bits",
                       f"        let {n}_word: Tile<i32, {{ [] }}> = scalar_to_tile({n}_BITS);",
                       f"        let {n}_tile: Tile<f32, {{ [] }}> = bitcast({n}_word);",
                       f"        let {n}: f32 = tile_to_scalar({n}_tile);"]
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
