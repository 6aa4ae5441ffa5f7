"""The `ct.*` operations, one registered handler each (see `registry`): tile accesses of arrays in
`memory`, element accesses (gathers, scatters) in `pointers`, items of lists of arrays in `lists`,
atomic updates of array elements in `atomics`, tile and scalar operations in `tiles`."""

from . import atomics, lists, memory, pointers, tiles
from .registry import MOVES, OPS, ct_op

__all__ = ["MOVES", "OPS", "ct_op", "atomics", "lists", "memory", "pointers", "tiles"]
