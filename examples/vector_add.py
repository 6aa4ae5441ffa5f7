"""Vector add: one 1-D tile per block, written at the block's own index."""

import cuda.tile as ct


@ct.kernel
def vector_add(a, b, c, TILE: ct.Constant[int]):
    pid = ct.bid(0)
    ta = ct.load(a, index=(pid,), shape=(TILE,))
    tb = ct.load(b, index=(pid,), shape=(TILE,))
    ct.store(c, index=(pid,), tile=ta + tb)


def cases(torch):
    """Inputs for `tilebridge check` and the benchmark: (kernel, grid, ct.launch args)."""
    n = 1 << 20
    for dtype in (torch.float32, torch.float16):
        a = torch.randn(n, device="cuda", dtype=dtype)
        b = torch.randn(n, device="cuda", dtype=dtype)
        c = torch.empty_like(a)
        yield vector_add, (ct.cdiv(n, 1024),), (a, b, c, 1024)
