"""A fused elementwise op: y = alpha * silu(x) + beta, computed in f32.

The length need not be a multiple of the tile: the last tile is zero-padded on
load, and its out-of-range elements are dropped on store.
"""

import cuda.tile as ct

LOG2E = 1.4426950408889634  # a module constant, folded into the kernel


@ct.kernel
def scaled_silu(x, y, alpha: float, beta: float, TILE: ct.Constant[int]):
    pid = ct.bid(0)
    t = ct.load(x, index=(pid,), shape=(TILE,), padding_mode=ct.PaddingMode.ZERO)
    tf = t.astype(ct.float32)
    sig = 1.0 / (1.0 + ct.exp2(-tf * LOG2E))
    out = alpha * (tf * sig) + beta
    ct.store(y, index=(pid,), tile=out.astype(y.dtype))


@ct.kernel
def scaled_silu_in_place(x, alpha: float, beta: float, TILE: ct.Constant[int]):
    """The same in place (like torch's `silu_`): `x` is both read and written."""
    pid = ct.bid(0)
    tf = ct.load(x, index=(pid,), shape=(TILE,), padding_mode=ct.PaddingMode.ZERO).astype(ct.float32)
    sig = 1.0 / (1.0 + ct.exp2(-tf * LOG2E))
    ct.store(x, index=(pid,), tile=(alpha * (tf * sig) + beta).astype(x.dtype))


def cases(torch):
    n = 1_000_003  # not a multiple of the tile
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.randn(n, device="cuda", dtype=dtype)
        y = torch.empty_like(x)
        yield scaled_silu, (ct.cdiv(n, 512),), (x, y, 1.5, -0.25, 512)
        yield scaled_silu_in_place, (ct.cdiv(n, 512),), (x.clone(), 1.5, -0.25, 512)
