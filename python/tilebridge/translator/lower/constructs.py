"""Every Python construct cuTile Python's front end takes (the statements and expressions its
`ast2hir` pass has a handler for) and what the translator does with it: translated, and how, or
refused, and why. `scripts/language_table.py` writes the second table of `docs/language.md` from
this; `tests/test_layering.py` checks that no construct cuTile Python takes is missing here."""

from __future__ import annotations

STATEMENTS = {
    "AnnAssign": ("translated", "`x: T = value`, as the assignment (`x: T` alone binds nothing: refused)"),
    "Assign": ("translated", "to a name or a tuple of names (`m, n = x.shape`, a helper's tuple); chained "
                             "assignment and assignment to items or attributes are refused"),
    "AugAssign": ("translated", "`x op= value` to a name, as `x = x op value`"),
    "Break": ("translated", "in `for` loops a flag the loop carries (the loop stays Tile IR's `for`, "
                            "`lower.loop_exits`); in `while` loops Rust's `break`"),
    "Continue": ("translated", "in any loop; a grid-stride loop moves its counter on first"),
    "Expr": ("translated", "a call made for its effects (stores, prints, asserts)"),
    "For": ("translated", "over `range(...)` (any start, stop and step; a grid-stride range is a `while`), "
                          "`ct.static_iter(...)` (unrolled); loop-carried values"),
    "FunctionDef": ("translated", "a nested `def`: a closure, inlined where called (`translator.closures`); "
                                  "refused where decorated or called outside the function that defines it"),
    "If": ("translated", "folded where the condition is known at translation; a Rust `if` on a runtime "
                         "condition; a test of dtypes or of `ct.Constant` values decided per launch, the "
                         "rest of the block down each path where the branches type a name differently "
                         "(into a helper's caller where its result differs by path)"),
    "Pass": ("translated", "nothing"),
    "Raise": ("translated", "`raise ct.static_exception(E)` only: the launches that reach it raise E (as in "
                            "cuTile Python, any other `raise` is refused)"),
    "Return": ("translated", "a kernel's `return` (also inside loops: a flag and a break out of each), a "
                             "helper's or closure's value (early returns become branches assigning one "
                             "result, `lower.early_returns`)"),
    "While": ("translated", "`while` on a condition (one that needs statements, a spin lock's `ct.atomic_cas` or a "
                            "0-d tile of bools, as `while True:` leaving where it is false) and `while True:`, "
                            "with `break` and "
                            "`continue`; `while`-`else` refused"),
    "With": ("translated", "over `@contextlib.contextmanager` helpers: the statements before the `yield`, the "
                           "block, those after it (`translator.context_managers`); a block left by "
                           "`return`/`break`/`continue` and a helper from another module are refused"),
}

EXPRESSIONS = {
    "Attribute": ("translated", "`ct.*` names, an array's `shape`/`ndim`/`dtype`/`strides` (the last stride 1, "
                                "which the launcher requires where the kernel reads them), tile methods "
                                "(`astype`, `reshape`, `item`, ...), enum members and module constants"),
    "BinOp": ("translated", "`+ - * / // % ** @ & | ^ << >>` on tiles and scalars, typed and promoted as cuTile "
                            "Python does (integer `//` and `%` rounding toward negative infinity); `+` of "
                            "tuples"),
    "BoolOp": ("translated", "`and`/`or` of bools and of 0-d tiles of bools (both sides evaluated, joined by "
                             "`&`/`|`); of constants, folded"),
    "Call": ("translated", "`ct.*` operations (the first table), helper functions (inlined), closures, "
                           "`min`/`max`/`len`/`print`"),
    "Compare": ("translated", "`< <= > >= == !=` of tiles (one comparison: a chain of tile comparisons is "
                              "refused, as cuTile Python takes one only of 0-d tiles) and scalars (chained), "
                              "`==`/`!=` of dtypes and tuples, `in`/`not in` over a tuple"),
    "Constant": ("translated", "bool, int and float literals, typed as cuTile Python types them; strings where "
                               "an operation takes one (`order=\"F\"`, print formats)"),
    "IfExp": ("translated", "`a if c else b` (`lower.conditionals`): folded where `c` is known; on a runtime "
                            "condition, a select of scalars, or of tiles an `if` whose branches each evaluate their "
                            "side; compile-time objects (`ct.RoundingMode.APPROX if approx else None`) chosen per "
                            "launch: the statement in each branch of an `if`"),
    "JoinedStr": ("translated", "f-strings in `print`/`ct.printf` (a format spec inside one is refused)"),
    "Lambda": ("translated", "a closure, as a nested `def` with one `return`"),
    "Name": ("translated", "parameters, locals, module constants and functions, closures' free names"),
    "Slice": ("translated", "`:` in a tile's subscript (`t[:, None]`) and in `ct.Slice`"),
    "Subscript": ("translated", "items of tuples and shapes, an item of a list of arrays (`As[g]`), new axes "
                                "of a tile (`t[:, None]`); `ct.Constant[...]` in annotations"),
    "Tuple": ("translated", "indices, shapes and values of tuples (arithmetic with `+`, comparison with "
                            "`==`/`!=`)"),
    "UnaryOp": ("translated", "`-`, `+`, `not` and `~` of tiles and scalars"),
    "Yield": ("translated", "the one `yield` of a `@contextlib.contextmanager` helper a `with` enters"),
}


def status(construct: str) -> tuple[str, str]:
    """What the translator does with the Python construct named by its `ast` class."""
    return {**STATEMENTS, **EXPRESSIONS}.get(construct, ("refused", "not part of cuTile Python's language"))
