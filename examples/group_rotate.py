"""Index arithmetic and helper functions: each block copies the tile of the previous block
within its group (wrapping around), scaled and shifted, plus a ramp.

Python's `%` takes the divisor's sign, so `(0 - 1) % GROUP` is `GROUP - 1`; the translation
keeps that (C's remainder would give -1). The helpers are inlined.
"""

import cuda.tile as ct

ConstInt = ct.Constant[int]


def rotate(pid, group):
    """The previous block within pid's group of `group` blocks, wrapping around."""
    return (pid // group) * group + (pid - 1) % group


def affine(t, scale, shift=0.0):
    y = t * scale
    return y + shift


@ct.kernel
def group_rotate(x, y, SCALE: ct.Constant[float], GROUP: ConstInt, TILE: ConstInt):
    pid = ct.bid(0)
    t = ct.load(x, index=(rotate(pid, GROUP),), shape=(TILE,)).astype(ct.float32)
    ramp = ct.arange(TILE, dtype=ct.int32).astype(ct.float32)
    ct.store(y, index=(pid,), tile=(affine(t, SCALE, 0.5) + ramp).astype(y.dtype))


def cases(torch):
    n = 1 << 16
    for dtype in (torch.float32, torch.float16):
        x = torch.randn(n, device="cuda", dtype=dtype)
        y = torch.empty_like(x)
        yield group_rotate, (n // 256,), (x, y, 1.5, 4, 256)
