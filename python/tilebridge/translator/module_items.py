"""The functions the kernel module declares beside its kernels (`emit/templates/kernels.rs.j2`),
each rendered into a crate only where one of its kernels calls it. The lowering names them here;
the emitter asks which a crate calls.

Most are small safe abstractions over cutile's `unsafe` operations, each enforcing its own
precondition, so that a kernel calling them needs no `unsafe` block of its own: a gather masked to
the array's own bounds (its addresses from the stride parameters the launcher fills from the
array), or, where its bounds check is decided at launch, a run of lanes read whole or not at all;
a scatter masked to them and to the rows the block owns (or written by the first block only), a
store at an index whose block indices it reads itself (its bounds checked by cutile at launch, or
tested), a scatter where some index components are block indices, done only where they are the
block's own, a padded view that starts from the tensor's own token, a hinted store of the block's
own tile, a rounding mode on the one element type it is defined for."""

from __future__ import annotations

import re

from . import ir

# cutile's `load_ptr_tko` with a padding tile of the result's shape (unsafe, as `load_ptr_tko`).
PADDED_GATHER = "load_ptr_tko_padded"


def padded_partition(padding: str) -> str:
    """`Tensor::partition` padded with `padding` (a `cutile::core::padding` mode, e.g. NegInf)."""
    return f"partition_padded_{_snake(padding)}"


def unpadded_partition(permuted: bool) -> str:
    """`Tensor::partition` (or `partition_permuted`) with no padding value, as cuTile Python's load
    without a padding mode makes its view."""
    return "partition_permuted_unpadded" if permuted else "partition_unpadded"


def gather(rank: int, lanes: int, masked: bool, latency: int, ordered: bool = False) -> str:
    """A gather of a tile of `lanes` axes from an array of `rank` axes, masked to the array's bounds
    (and to a mask of the caller's, where `masked`), with a latency hint (0: none). One function
    per pair of ranks, as cutile instantiates a function for one rank of its generic shapes, and
    per hint, as cutile's JIT takes a hint only as a literal in the call. `ordered`: from an array
    the kernel also writes (through `unsafe` blocks that leave it to keep other blocks' writes off
    what a block reads), after the block's own earlier accesses of it: it takes the array's
    pointer token and returns the read's."""
    return f"gather_{rank}d_into_{lanes}d{'_ordered' if ordered else ''}{_suffix(masked, latency)}"


def span_gather(rank: int, latency: int) -> str:
    """A gather of a run of lanes, `start + ct.arange(T)` along the last axis of an array of `rank`
    axes the kernel only reads (the other indices scalars), with check_bounds given at launch:
    checked, masked lane by lane; unchecked, every lane read where the whole run lies inside the
    array, none where it does not (decided once, on scalars), with a latency hint (0: none)."""
    return f"gather_span_{rank}d{_suffix(False, latency)}"


def own_span_scatter(rank: int, latency: int) -> str:
    """`span_gather`'s scatter into row `ct.bid(0)` of an array of `rank` (at least 2) axes that
    each block owns, as `own_scatter` masks it."""
    return f"scatter_own_row_span_{rank}d{_suffix(False, latency)}"


def owned_store(parts: tuple[str, ...], latency: int | None, tma: bool, guarded: bool) -> str:
    """A store of a tile of a partition of the whole array at an index given per component
    (`parts`): `b<axis>`, that block index, which the store reads itself; `0`; `x`, an index the
    caller passes. Unconditional (`store_owned_*`) where every grid axis is some component's, none
    is passed and the store is not `guarded` by a runtime condition: its bounds cutile's check, at
    compile time or at launch, with TMA as `tma` allows. Else (`store_if_owned_*`) done only by the
    first block along the grid axes no component is, where the index lies inside the array's
    grid of tiles, without TMA. With a latency hint (None: none), a literal as cutile's JIT takes
    it."""
    guarded = guarded or "x" in parts or bool(untied_axes(parts))
    return (f"store_{'if_' if guarded else ''}owned_{len(parts)}d_{'_'.join(parts)}"
            f"{'' if latency is None else f'_latency{latency}'}{'' if tma or guarded else '_tma_off'}")


def untied_axes(parts: tuple[str, ...]) -> list[int]:
    """The grid axes no component of an owned store's or scatter's index is tied to (`b<axis>` or
    `r<axis>`): only the first block along them writes."""
    return [a for a in range(3) if f"b{a}" not in parts and f"r{a}" not in parts]


def owned_scatter(parts: tuple[str, ...], lanes: int, masked: bool, latency: int) -> str:
    """A scatter at indices given per component (`parts`): `b<axis>`, that block index, passed;
    `r<axis>`, the block's run of lanes `ct.bid(axis) * T + ct.arange(T)` (T lanes), which the
    scatter computes itself; `x`, an index tile of `lanes` axes. Masked to the array's bounds, to
    the block's own elements (and to a mask of the caller's, where `masked`), with a latency hint
    (0: none)."""
    return f"scatter_owned_{len(parts)}d_{'_'.join(parts)}_into_{lanes}d{_suffix(masked, latency)}"


def own_scatter(rank: int, lanes: int, masked: bool, latency: int) -> str:
    """A scatter into an array of `rank` axes where each block writes only what it owns: for a 1-D
    array its tile `ct.bid(0)` (of tiles as wide as the value, given by index), else its row
    `ct.bid(0)`, the other axes' indices a tile of `lanes` axes. Masked to the array's bounds (and
    to a mask of the caller's, where `masked`), with a latency hint (0: none)."""
    suffix = _suffix(masked, latency)
    return f"scatter_own_tile_1d{suffix}" if rank == 1 else f"scatter_own_row_{rank}d_into_{lanes}d{suffix}"


def first_block_scatter(rank: int, lanes: int, masked: bool, latency: int) -> str:
    """A scatter in a kernel that reads no block index, into an array of `rank` axes at index tiles
    of `lanes` axes, written by the first block only (every block computes the same); masked to
    the array's bounds (and to a mask of the caller's, where `masked`), with a latency hint (0:
    none)."""
    return f"scatter_first_block_{rank}d_into_{lanes}d{_suffix(masked, latency)}"


def rounded(func: str, rounding: str) -> str:
    """`func` (exp, tanh) of f32 tiles with a rounding mode (Approx, Full) Tile IR defines for f32."""
    return f"{func}_{rounding.lower()}_f32"


def hinted_store(rank: int, tma: bool, latency: int | None) -> str:
    """A store of the block's own tile of a partitioned output, with a TMA choice and a latency
    hint (None: none), each a literal in the function as cutile's JIT takes them."""
    return f"store_tile_{rank}d_tma_{'on' if tma else 'off'}{'' if latency is None else f'_latency{latency}'}"


def _suffix(masked: bool, latency: int) -> str:
    """How a pointer access's name says that it takes the caller's mask and a latency hint."""
    return f"{'_masked' if masked else ''}{f'_latency{latency}' if latency else ''}"


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


_PADDED = re.compile(r"partition_padded_(\w+)$")
_GATHER = re.compile(r"gather_(\d)d_into_(\d)d(_ordered)?(_masked)?(?:_latency(\d+))?$")
_SPAN_GATHER = re.compile(r"gather_span_(\d)d(?:_latency(\d+))?$")
_SPAN_SCATTER = re.compile(r"scatter_own_row_span_(\d)d(?:_latency(\d+))?$")
_OWNED_STORE = re.compile(r"store_(if_)?owned_(\d)d_((?:b\d|0|x)(?:_(?:b\d|0|x))*)(?:_latency(\d+))?(_tma_off)?$")
_OWNED_SCATTER = re.compile(r"scatter_owned_(\d)d_((?:b\d|r\d|x)(?:_(?:b\d|r\d|x))*)"
                            r"_into_(\d)d(_masked)?(?:_latency(\d+))?$")
_OWN_TILE = re.compile(r"scatter_own_tile_1d(_masked)?(?:_latency(\d+))?$")
_OWN_ROW = re.compile(r"scatter_own_row_(\d)d_into_(\d)d(_masked)?(?:_latency(\d+))?$")
_FIRST_BLOCK = re.compile(r"scatter_first_block_(\d)d_into_(\d)d(_masked)?(?:_latency(\d+))?$")
_ROUNDED = re.compile(r"(exp|tanh)_(approx|full)_f32$")
_HINTED = re.compile(r"store_tile_(\d)d_tma_(on|off)(?:_latency(\d+))?$")


def called(kernels: list[ir.KernelIR]) -> dict:
    """What the module must declare for `kernels`, as `kernels.rs.j2` takes it."""
    names = {n.func for k in kernels for n in ir.nodes(k.body) if isinstance(n, ir.Call)}
    gathers = sorted((int(m[1]), int(m[2]), bool(m[4]), int(m[5] or 0), bool(m[3]))
                     for n in names if (m := _GATHER.match(n)))
    return {
        "padded_gather": PADDED_GATHER in names or bool(gathers) or any(_SPAN_GATHER.match(n) for n in names),
        "padded_partitions": sorted(("".join(w.title() for w in m[1].split("_")), n)
                                    for n in names if (m := _PADDED.match(n))),
        "unpadded_partitions": sorted(n == unpadded_partition(True) for n in names
                                      if n in (unpadded_partition(False), unpadded_partition(True))),
        "gathers": gathers,
        "span_gathers": sorted((int(m[1]), int(m[2] or 0)) for n in names if (m := _SPAN_GATHER.match(n))),
        "span_scatters": sorted((int(m[1]), int(m[2] or 0)) for n in names if (m := _SPAN_SCATTER.match(n))),
        "owned_stores": sorted((n, tuple(m[3].split("_")), None if m[4] is None else int(m[4]), not m[5], bool(m[1]))
                               for n in names if (m := _OWNED_STORE.match(n))),
        "owned_scatters": sorted((n, tuple(m[2].split("_")), int(m[3]), bool(m[4]), int(m[5] or 0))
                                 for n in names if (m := _OWNED_SCATTER.match(n))),
        "own_scatters": sorted([(1, 1, bool(m[1]), int(m[2] or 0)) for n in names if (m := _OWN_TILE.match(n))] +
                               [(int(m[1]), int(m[2]), bool(m[3]), int(m[4] or 0))
                                for n in names if (m := _OWN_ROW.match(n))]),
        "first_block_scatters": sorted((int(m[1]), int(m[2]), bool(m[3]), int(m[4] or 0))
                                       for n in names if (m := _FIRST_BLOCK.match(n))),
        "rounded": sorted((m[1], m[2]) for n in names if (m := _ROUNDED.match(n))),
        "hinted_stores": sorted((int(m[1]), m[2] == "on", None if m[3] is None else int(m[3]))
                                for n in names if (m := _HINTED.match(n))),
    }
