"""The `ct.*` operations, one registered handler each (see `registry`): tile accesses of arrays in
`memory`, element accesses (gathers, scatters) in `pointers`, items of lists of arrays in `lists`,
atomic updates of array elements in `atomics`, tile and scalar operations in `tiles`, the first
index of an extreme value in `arg_reductions`, tiles rearranged in `shapes`, assertions and hints
in `checks`, device prints in `prints`, a sparse axis and dense ranges in `advanced_indexing`, loads and
stores at raw element offsets in `raw_memory`, arrays made from another's foreign pointer in
`foreign_pointers`; what becomes of every other public name of `cuda.tile` in
`public_names`."""

from . import (advanced_indexing, arg_reductions, atomics, checks, foreign_pointers, lists, memory, pointers, prints,
               public_names, raw_memory, shapes, tiles)
from .registry import MOVES, OPS, ct_op

__all__ = ["MOVES", "OPS", "ct_op", "advanced_indexing", "arg_reductions", "atomics", "checks", "foreign_pointers",
           "lists", "memory", "pointers", "prints", "public_names", "raw_memory", "shapes", "tiles"]
