"""The `ct.*` operations, one registered handler each (see `registry`): array accesses in
`memory`, tile and scalar operations in `tiles`."""

from . import memory, tiles
from .registry import OPS, ct_op

__all__ = ["OPS", "ct_op", "memory", "tiles"]
