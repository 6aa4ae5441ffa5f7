"""The `ct.*` operations, one registered handler each (see `registry`): array accesses in
`memory`, items of lists of arrays in `lists`, atomic updates of array elements in `atomics`, tile
and scalar operations in `tiles`."""

from . import atomics, lists, memory, tiles
from .registry import OPS, ct_op

__all__ = ["OPS", "ct_op", "atomics", "lists", "memory", "tiles"]
