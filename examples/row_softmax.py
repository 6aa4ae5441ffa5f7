"""Row softmax: one row per block, the row padded to a power of two with -inf."""

import cuda.tile as ct


@ct.kernel
def row_softmax(x, y, TILE_N: ct.Constant[int]):
    row = ct.bid(0)
    t = ct.load(x, index=(row, 0), shape=(1, TILE_N), padding_mode=ct.PaddingMode.NEG_INF)
    t = t.astype(ct.float32)
    m = ct.max(t, axis=1, keepdims=True)
    e = ct.exp(t - m)
    s = ct.sum(e, axis=-1, keepdims=True)
    ct.store(y, index=(row, 0), tile=(e / s).astype(y.dtype))


def cases(torch):
    for rows, cols, dtype in ((4096, 1000, torch.float32), (2048, 4096, torch.float16)):
        x = torch.randn(rows, cols, device="cuda", dtype=dtype)
        y = torch.empty_like(x)
        tile_n = 1 << (cols - 1).bit_length()
        yield row_softmax, (rows,), (x, y, tile_n)
