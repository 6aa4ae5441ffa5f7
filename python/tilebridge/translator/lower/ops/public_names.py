"""Every public name of `cuda.tile` and what the translator does with it: lowered by a handler of the
op table (`OPS`), taken elsewhere in the translation (annotations, enums, the decorator, dtypes),
not a kernel operation at all (host functions, exceptions), or refused, with the reason its
`TranslationError` gives. `scripts/language_table.py` writes `docs/language.md` from this."""

from __future__ import annotations

from .... import dtypes
from .registry import OPS

# Names the translator takes outside the op table, and where.
ELSEWHERE = {
    "Constant": "a parameter annotation: a const generic (`ct.Constant[int]`, `[bool]`, `[float]`)",
    "ConstantAnnotation": "the type of `ct.Constant[...]` annotations",
    "kernel": "the decorator, and `ct.kernel(f)`: each such function is a kernel",
    "PaddingMode": "`padding_mode` of `ct.load` (a padded view; NaN, infinities and -0.0 keep the array a float) "
                   "and of `ct.load_advanced_indexing` (its gather's padding)",
    "RoundingMode": "`rounding_mode=` of arithmetic, `astype` and math functions",
    "MemoryOrder": "the atomics' `memory_order`",
    "MemoryScope": "the atomics' `memory_scope`",
    "static_iter": "`for ... in ct.static_iter(...)`: the loop is unrolled",
    "ByTarget": "kernel hints per target (`num_ctas=ct.ByTarget(sm_100=2, default=1)`)",
    "ScalarInt64": "a parameter annotation: a 64-bit integer scalar",
    "DType": "the dtype objects (`x.dtype`, `ct.float16`): dtype classes and tests on them",
    "Array": "a parameter annotation cuTile Python ignores (the parameter is what each launch passes); the "
             "methods `x.slice` (`lower.ops.array_slices`), `x.tiled_view` and `x.get_raw_memory` are lowered, "
             "and `ct.Array.from_foreign` of `x.foreign_pointer` (`lower.ops.foreign_pointers`)",
    "Tile": "a parameter annotation cuTile Python ignores (the parameter is what each launch passes)",
    "Scalar": "a parameter annotation: a scalar, typed as an unannotated one used as a scalar",
    "TiledView": "what `x.tiled_view(shape, padding_mode=)` makes: its `load`, `store` and `num_tiles` are "
                 "`ct.load`, `ct.store` and `ct.num_tiles` of x at that shape (`lower.ops.memory`; traversal "
                 "steps other than the shape are refused); as an annotation, ignored",
    "ArrayAnnotation": "`Annotated[ct.Array, ct.ArrayAnnotation(...)]`: an array; static extents and strides "
                       "only let cuTile Python specialize further (an int64 index dtype is refused)",
    "ListAnnotation": "`Annotated[list, ct.ListAnnotation(...)]`: a list of arrays",
    "static_exception": "`raise ct.static_exception(E)`: a launch whose specialization reaches it raises E "
                        "(`lower.walker`); cuTile Python refuses it anywhere else, and so does tilebridge",
}

# Names that are not operations of a kernel: the host's, or exceptions cuTile Python raises.
HOST = {"launch", "compilation", "compiler_timeout", "tune", "function", "TileError", "TileCompilerExecutionError",
        "TileCompilerTimeoutError", "TileInternalError", "TileRecursionError", "TileStaticAssertionError",
        "TileStaticEvalError", "TileSyntaxError", "TileTypeError", "TileUnsupportedFeatureError", "TileValueError",
        "StaticException"}

# Why a name is refused, where there is more to say than "not lowered yet".
REASONS = {
    "mma_scaled": "cutile 0.5.0 has no block-scaled mma",
    "float4_e2m1fn": "cutile 0.5.0 has no such element type",
    "float8_e5m3fnu": "cutile 0.5.0 has no such element type",
    "float8_e8m0fnu": "cutile 0.5.0 has no such element type",
    "grid_dependency_control_wait": "programmatic dependent launch needs launch attributes cutile 0.5.0 does not set",
    "grid_dependency_control_launch_dependents": "programmatic dependent launch needs launch attributes cutile "
                                                 "0.5.0 does not set",
    "IndexedWithInt64": "cutile 0.5.0 indexes arrays with i32 only",
    "foreign_pointer_dtype": "not lowered yet: the dtype of a foreign pointer, named in an annotation or a foreign "
                             "call; `x.foreign_pointer` and `ct.Array.from_foreign` are lowered without it",
    "cumprod": "not lowered yet: cutile 0.5.0's scan with a closure writes identity 0 and axis 0 into the Tile IR "
               "whatever it is given, and a scan may combine its identity with any element: a product needs 1",
    "scan": "not lowered yet: cutile 0.5.0's scan with a closure writes identity 0 and axis 0 into the Tile IR "
            "whatever it is given (a function whose identity is not 0 would come out wrong)",
    "reduce": "not lowered yet: cutile 0.5.0's reduce with a closure writes identity 0 and axis 0 into the Tile IR "
              "and makes a scalar of the whole tile",
}


def status(name: str) -> tuple[str, str]:
    """(what the translator does with `ct.<name>`, and how or why): "lowered", "elsewhere", "dtype",
    "host" or "refused"."""
    if name in OPS:
        return "lowered", f"`lower.ops.{OPS[name].__module__.rsplit('.', 1)[-1]}`"
    if name in ELSEWHERE:
        return "elsewhere", ELSEWHERE[name]
    if dtypes.from_cutile_python(name) is not None:
        return "dtype", f"`{dtypes.from_cutile_python(name)}`"
    if name in HOST:
        return "host", "not a kernel operation"
    return "refused", REASONS.get(name, "not lowered yet")
