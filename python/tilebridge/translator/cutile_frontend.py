"""cuTile Python's own front end, run on the CPU: what it accepts, and the type it gives every value.

tilebridge checks its translation against this (`oracle`). Everything it uses of cuda.tile that is
not public API is in this one module, behind a version check: an upgrade of cuda-tile that moves
those internals fails here, once, with a message that says so.

Two questions, one specialization (a `KernelSignature`) at a time, both answered by `verdict`:
- does cuTile Python compile the kernel to Tile IR bytecode (its whole front end, every check it
  makes, no `tileiras`)? Through the public `export_kernel` (`tile_ir`); a `Rejection` where not.
- `typed_values`: the type of every name the kernel (and each helper of its file) assigns, of every
  expression (by its span in the source) and of every mma's accumulator, read from the typed IR
  before cuTile Python's own optimizations.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from .. import dtypes
from ..errors import TilebridgeError

# The cuda-tile releases whose internals this module was written against.
SUPPORTED_VERSIONS = ("1.7.",)

# The Tile IR bytecode version asked of it: the one cutile 0.5.0 negotiates with the 13.4 tileiras
# tilebridge builds with (`ct.insert`, for one, needs it).
BYTECODE_VERSION = "13.4"

# A value's type as both sides spell it: a dtype name of tilebridge's (`f16`) and a shape of ints
# (() for a scalar, or a 0-d tile: cuTile Python does not tell them apart).
ValueType = tuple[str, tuple[int, ...]]
# Where a value is: (file, line, column, name): a name assigned there; "@mma", an mma's accumulator;
# "@expr:<last line>:<end column>", the expression of that span.
Site = tuple[str, int, int, str]


class FrontendUnavailable(TilebridgeError):
    """cuTile Python is missing, or a release whose internals this module does not know."""


@dataclass(frozen=True)
class Rejection:
    """cuTile Python refused the kernel: its message, and where it points."""

    message: str
    file: str | None
    line: int
    col: int
    kind: str  # its exception class: TileTypeError, TileStaticAssertionError ...


def version() -> str:
    try:
        import cuda.tile as ct
    except ImportError as e:
        raise FrontendUnavailable(f"cuTile Python (the cuda-tile package) cannot be imported: {e}") from None
    return ct.__version__


def check_version() -> None:
    v = version()
    if not v.startswith(SUPPORTED_VERSIONS):
        raise FrontendUnavailable(
            f"cuda-tile {v} is installed; tilebridge's check against cuTile Python's front end "
            f"(translator/cutile_frontend.py) knows {', '.join(s + 'x' for s in SUPPORTED_VERSIONS)} only. "
            f"Install cuda-tile=={SUPPORTED_VERSIONS[-1]}* or port that module to {v} (TILEBRIDGE_ORACLE=0 "
            f"skips the check, and with it the guarantee that the translation types values as cuTile Python does).")


def signature(params: list[tuple]) -> Any:
    """cuTile Python's `KernelSignature` of one specialization: per parameter ("array", dtype,
    strides), ("list", dtype, strides), ("constant", value) or ("scalar", dtype); dtypes are
    tilebridge's names, strides 1 where the stride is 1, else -1."""
    import cuda.tile as ct
    from cuda.tile import compilation as c

    constraints = []
    for kind, value, *strides in params:
        if kind in ("array", "list"):
            array = c.ArrayConstraint(dtypes.cutile_python(value), len(strides[0]), index_dtype=ct.int32,
                                      stride_lower_bound_incl=0, alias_groups=[], may_alias_internally=False,
                                      stride_constant=[1 if s == 1 else None for s in strides[0]])
            constraints.append(c.ListConstraint(array, alias_groups=[], elements_may_alias=False)
                               if kind == "list" else array)
        elif kind == "constant":
            constraints.append(c.ConstantConstraint(value))
        else:
            constraints.append(c.ScalarConstraint(dtypes.cutile_python(value)))
    return c.KernelSignature(constraints, c.CallingConvention.cutile_python_v1())


def tile_ir(kernel: Any, sig: Any) -> bytes:
    """cuTile Python's Tile IR bytecode of `kernel` at one signature (raises what it raises)."""
    from cuda.tile import compilation as c

    out = io.BytesIO()
    c.export_kernel(kernel, [sig], out, output_format="tileir_bytecode", bytecode_version=BYTECODE_VERSION)
    return out.getvalue()


def promote(a: str, b: str) -> str | None:
    """cuTile Python's own promotion of two tile dtypes (tilebridge's names), None where it refuses;
    `dtypes.promote` is held to it."""
    from cuda.tile._datatype import promote_dtypes
    from cuda.tile._exception import TileError

    check_version()
    try:
        return dtypes.from_cutile_python(promote_dtypes(dtypes.cutile_python(a), dtypes.cutile_python(b)).name)
    except TileError:
        return None


def python_constructs() -> tuple[list[str], list[str]]:
    """The Python statements and expressions cuTile Python's front end takes (the `ast` class names
    its `ast2hir` pass has a handler for), sorted; `lower.constructs` says what tilebridge does
    with each."""
    from cuda.tile._passes import ast2hir

    check_version()
    return (sorted(t.__name__ for t in ast2hir._stmt_handlers), sorted(t.__name__ for t in ast2hir._expr_handlers))


def verdict(kernel: Any, sig: Any) -> dict[Site, set[ValueType]] | Rejection:
    """cuTile Python on `kernel` at `sig`: the types it gives (`typed_values`) where its whole front
    end accepts the kernel, else its `Rejection`. Raises where it fails other than by rejecting."""
    from cuda.tile._exception import TileError

    check_version()
    try:
        types = typed_values(kernel, sig)
        tile_ir(kernel, sig)
    except TileError as e:
        return Rejection(e.message, e.loc.filename, e.loc.line, e.loc.col, type(e).__name__)
    return types


def typed_values(kernel: Any, sig: Any) -> dict[Site, set[ValueType]]:
    """The types cuTile Python gives every name assigned in the kernel and in helpers (each by its
    own file and line), every expression (by its span) and every mma's accumulator, at `sig`: the
    IR as its front end types it, before any of its passes. Values of other types (arrays, tuples,
    constants of other kinds) are left out. Raises cuTile Python's `TileError` where it rejects
    the kernel."""
    from cuda.tile import _compile
    from cuda.tile._ir import ir
    from cuda.tile._ir.type import TileTy
    from cuda.tile._passes.ast2hir import HirMode, get_function_hir
    from cuda.tile._passes.hir2ir import hir2ir

    ann = kernel._annotated_function
    func_hir = get_function_hir(ann.pyfunc, mode=HirMode.ENTRY_POINT)
    ctx = ir.IRContext(log_ir_on_error=False, tileiras_version=_compile.parse_bytecode_version(BYTECODE_VERSION),
                       typing_hooks=_compile._TileTypingHooks())
    with ir.Builder(ctx, func_hir.body.loc) as builder:
        with _compile.tile_impl_registry.as_current():
            params = _compile._create_kernel_parameters(sig.parameters, ann.parameter_annotations,
                                                        tuple(ann.pysig.parameters.keys()), func_hir.param_locs, ctx)
            hir2ir(func_hir, params.aggregate_vars, ctx)

    def value_type(var: Any) -> ValueType | None:
        t = var.get_type_allow_invalid()
        if not isinstance(t, TileTy):
            return None
        name = dtypes.from_cutile_python(t.dtype.name)
        return (name, tuple(int(d) for d in t.shape)) if name else None

    found: dict[Site, set[ValueType]] = {}

    def add(site: Site, t: ValueType | None) -> None:
        if t is not None:
            found.setdefault(site, set()).add(t)

    def tile_result(op: Any) -> ValueType | None:
        return next((t for t in map(value_type, op.result_vars) if t is not None), None)

    defined: dict[str, tuple[Site, ValueType]] = {}  # a tile made at an expression's span, by name
    used_elsewhere: set[str] = set()  # names an operation at another span (or none) reads

    def span_of(loc: Any) -> Site | None:
        if loc.last_line is None or loc.end_col is None:
            return None
        return loc.filename, loc.line, loc.col, f"@expr:{loc.last_line}:{loc.end_col}"

    def walk(ops: Any) -> None:
        for op in ops:
            loc = op.loc
            span = span_of(loc)
            for var in op.all_inputs():
                if var.name in defined and defined[var.name][0] != span:
                    used_elsewhere.add(var.name)
            if op._opcode == "tile_mma":
                add((loc.filename, loc.line, loc.col, "@mma"), tile_result(op))
            for var in op.result_vars:
                name = var.name.split(".")[0]
                if name and not name.startswith("$") and name.isidentifier():
                    add((loc.filename, loc.line, loc.col, name), value_type(var))
                t = value_type(var)
                if span is not None and t is not None and not op.nested_blocks:  # a loop's or if's: no
                    defined[var.name] = (span, t)
            for block in op.nested_blocks:
                walk(block)

    walk(builder.ops)
    # An expression's value is the tile made at its span that something outside it reads (the
    # others convert, reshape or broadcast its operands on the way).
    for name in used_elsewhere:
        add(*defined[name])
    return found
