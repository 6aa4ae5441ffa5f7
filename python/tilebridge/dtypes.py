"""Every dtype tilebridge knows, once: its name in cutile and Rust (the name used everywhere inside
tilebridge, `f16`), in cuTile Python (`ct.float16`), in torch and NumPy (`float16`), and in the
runtime crate (`ElemType::F16`), with the rules that depend on the dtype alone.

The runtime crate's own table (`runtime/crate/src/array.rs`, `TORCH_DTYPES`) must
list the same torch names and variants; a test holds the two together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DType:
    name: str  # cutile's and Rust's: "f16"
    cutile_python: str  # the attribute of `cuda.tile`: "float16"
    torch: str | None  # the attribute of `torch` (and NumPy's name): "float16"; None where torch has none
    variant: str | None  # the runtime crate's `ElemType` variant; None where arrays cannot have it
    float_rank: int | None = None  # float promotion: the wider wins (None: not a float for promotion)
    # The accumulator of `a @ b` of tiles of this dtype, as cuTile Python's matmul picks it (the first
    # its mma supports, `_datatype._mma_supported_dtypes`); None where there is no mma.
    mma_accumulator: str | None = None

    @property
    def is_integer(self) -> bool:
        return self.name[0] in "iu"

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return 1 if self.name == "bool" or self.name.startswith("f8") else int(self.name.lstrip("abfitu")) // 8

    @property
    def python_scalar(self) -> str:
        """The Python type a scalar of this dtype is passed as: `int`, `float` or `bool`."""
        return "bool" if self.name == "bool" else "int" if self.is_integer else "float"


_TABLE = (
    DType("f32", "float32", "float32", "F32", float_rank=2, mma_accumulator="f32"),
    DType("f16", "float16", "float16", "F16", float_rank=1, mma_accumulator="f16"),
    DType("bf16", "bfloat16", "bfloat16", "BF16", float_rank=1, mma_accumulator="f32"),
    DType("f64", "float64", "float64", "F64", float_rank=3, mma_accumulator="f64"),
    DType("tf32", "tfloat32", None, None, float_rank=1, mma_accumulator="f32"),
    DType("i32", "int32", "int32", "I32"),
    DType("i64", "int64", "int64", "I64"),
    DType("i16", "int16", "int16", "I16"),
    DType("i8", "int8", "int8", "I8", mma_accumulator="i32"),
    DType("u8", "uint8", "uint8", "U8", mma_accumulator="i32"),
    DType("u16", "uint16", "uint16", "U16"),
    DType("u32", "uint32", "uint32", "U32"),
    DType("u64", "uint64", "uint64", "U64"),
    DType("bool", "bool_", "bool", "Bool"),
    DType("f8e4m3fn", "float8_e4m3fn", "float8_e4m3fn", "F8E4M3FN", mma_accumulator="f16"),
    DType("f8e5m2", "float8_e5m2", "float8_e5m2", "F8E5M2", mma_accumulator="f16"),
)

DTYPES: dict[str, DType] = {d.name: d for d in _TABLE}
# The dtypes an array can have (the runtime crate's element types), by name.
ARRAY_DTYPES: dict[str, DType] = {d.name: d for d in _TABLE if d.variant}

# The dtypes a launcher takes for an array unless told otherwise: an array whose values the kernel
# computes with (arithmetic, math, comparisons, reductions: the translation's rules for them are
# those of floats); an array it only moves (loads, stores, reshapes, converts with `astype`, or
# multiplies in an mma: every dtype, as far as cutile converts it; see `lower.moves`); and an index
# array (one whose values the kernel uses as integers).
COMPUTED_ARRAY_DTYPES = ("f32", "f16", "bf16")
MOVED_ARRAY_DTYPES = tuple(ARRAY_DTYPES)
INDEX_ARRAY_DTYPES = ("i32", "i64")
# The dtypes cutile 0.5.0's JIT makes Tile IR constants of (`constant`, `E::ZERO`): not the 8- and
# 16-bit integers, nor bool (its `compiler/shared_utils.rs`).
CONSTANT_DTYPES = ("f32", "f16", "bf16", "f64", "i32", "i64", "u32", "u64", "f8e4m3fn", "f8e5m2")

# Floats by promotion rank: of two floats of different rank, the wider wins.
FLOAT_RANK = {d.name: d.float_rank for d in sorted(_TABLE, key=lambda d: -(d.float_rank or 0)) if d.float_rank}

_BY_CUTILE_PYTHON = {d.cutile_python: d.name for d in _TABLE}
_BY_TORCH = {d.torch: d.name for d in _TABLE if d.torch}
# torch's aliases, as kernels may spell them (`torch.half`), by the cuTile Python dtype they mean.
TORCH_ALIASES = {"float": "float32", "half": "float16", "double": "float64", "int": "int32", "long": "int64"}


def torch_names() -> dict[str, str]:
    """Every dtype attribute of `torch` a kernel may name (aliases included) -> the attribute of
    `cuda.tile` it means: `half` -> `float16`, `bool` -> `bool_`."""
    return {**{d.torch: d.cutile_python for d in _TABLE if d.torch}, **TORCH_ALIASES}


def from_cutile_python(name: str) -> str | None:
    """`f16` for `float16` (a cuTile Python dtype's `.name`; NumPy's `bool` too)."""
    return _BY_CUTILE_PYTHON.get(name, _BY_CUTILE_PYTHON.get(name + "_"))


def from_torch(name: str | None) -> str | None:
    """`f16` for torch's `float16` (as `str(torch.float16)` has it, without `torch.`)."""
    return _BY_TORCH.get(name) if name else None


def of_object(obj: Any) -> str | None:
    """The name of a cuTile Python (or NumPy) dtype object, or of the Python types `float` (f32)
    and `int` (i32), as cuTile Python types scalars; None for anything else."""
    if isinstance(obj, type) and obj.__module__ == "numpy" and obj not in (int, float):
        try:
            import numpy as np

            return from_cutile_python(np.dtype(obj).name)
        except TypeError:
            return None
    name = getattr(obj, "name", None)
    if isinstance(name, str) and type(obj).__name__ in ("DType", "dtype"):
        return from_cutile_python(name)
    if obj is float:
        return "f32"
    if obj is int:
        return "i32"
    return None


def stated(d: Any) -> str:
    """The name of a dtype as a user states it: `"f16"`, `"float16"`, `"torch.float16"`, `ct.float16`,
    `torch.float16` or `np.float16`. An unknown one keeps its spelling (and matches nothing)."""
    if isinstance(d, str):
        return _BY_CUTILE_PYTHON.get(d, d.replace("torch.", ""))
    name = of_object(d)
    if name is None:
        name = str(d).replace("torch.", "")
        name = _BY_CUTILE_PYTHON.get(name, name)
    return name


def mma_accumulator(name: str) -> str | None:
    """The accumulator of `a @ b` of tiles of dtype `name`, as cuTile Python picks it; None where
    there is no mma (or no such dtype)."""
    d = DTYPES.get(name)
    return d.mma_accumulator if d else None


def promote(a: str, b: str) -> str | None:
    """The dtype cuTile Python computes in where tiles of dtypes `a` and `b` meet (`a + b`,
    `ct.where`, a store's implicit cast): None where it refuses to mix them. Its rule
    (`promote_dtypes`), which a test holds this to over every pair: bool gives way to anything;
    integers of one signedness widen, of two mix not at all; an integer gives way to a float;
    floats widen, and two of one width (f16, bf16) mix not at all; tf32 and the fp8 dtypes mix with
    nothing else."""
    if a == b:
        return a
    da, db = DTYPES.get(a), DTYPES.get(b)
    if da is None or db is None or {a, b} & {"tf32", "f8e4m3fn", "f8e5m2"}:
        return None
    if "bool" in (a, b):
        return b if a == "bool" else a
    if da.is_integer and db.is_integer:
        if (a[0] == "u") != (b[0] == "u"):
            return None
        return a if da.itemsize > db.itemsize else b
    if da.is_integer != db.is_integer:
        return b if da.is_integer else a
    if da.float_rank == db.float_rank:
        return None
    return a if da.float_rank > db.float_rank else b


def cutile_python(name: str) -> Any:
    """The cuTile Python dtype object of `name` (`ct.float16` for `f16`)."""
    import cuda.tile as ct

    return getattr(ct, DTYPES[name].cutile_python)


def cutile_converts(a: str, b: str) -> bool:
    """Whether cutile 0.5.0's `convert_tile` converts tiles of dtype `a` to `b`: the identity, and
    between floats and integers (`ftof`, `itof`, `ftoi`); not from one integer width to another,
    nor bools (the translation converts those itself where it knows the dtypes)."""
    if a == b:
        return True
    da, db = DTYPES.get(a), DTYPES.get(b)
    if da is None or db is None or "bool" in (a, b):
        return False
    return not (da.is_integer and db.is_integer)

