"""Wrong launch arguments raise ArgumentError before anything runs; the stream and the
arrays stay usable afterwards. Interop with strided views, explicit streams and CuPy."""

import pytest
import torch

import tilebridge as tb

N, TILE = 4096, 1024


def arrays(dtype=torch.float32, n=N):
    a = torch.randn(n, device="cuda", dtype=dtype)
    b = torch.randn(n, device="cuda", dtype=dtype)
    return a, b, torch.zeros_like(a)


def test_vector_add_runs(ext):
    a, b, c = arrays()
    ext.vector_add((N // TILE,), a, b, c, TILE=TILE)
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)


@pytest.mark.parametrize(
    "case, pattern",
    [
        ("mixed_dtypes", "does not take the dtypes of 'a' \\(f16\\), 'b' \\(bf16\\)"),
        ("dtype_not_built", "was built for"),
        ("rank", "must have rank 1"),
        ("grid", "grid must be"),
        ("cpu_tensor", "CPU tensor"),
        ("aliased_output", "share memory"),
        ("tile_not_power_of_two", "power of two"),
        ("not_an_array", "must be a CUDA array"),
        ("bad_grid", "grid"),
    ],
)
def test_bad_arguments_raise(ext, case, pattern):
    a, b, c = arrays()
    grid, tile = (N // TILE,), TILE
    if case == "mixed_dtypes":  # cuTile Python promotes f16 with f32, but mixes no f16 with bf16
        a, b = a.half(), b.bfloat16()
    elif case == "dtype_not_built":  # int32 is taken (the integers' variant); int16 is not
        a, b, c = (torch.ones(N, device="cuda", dtype=torch.int16) for _ in range(3))
    elif case == "rank":
        a = a.view(64, 64)
    elif case == "grid":
        grid = (3,)
    elif case == "cpu_tensor":
        a = a.cpu()
    elif case == "aliased_output":
        # Overlapping a, one element on: not the very same array, which vector_add may update in place.
        shared = torch.randn(N + 1, device="cuda")
        a, c = shared[:N], shared[1:]
    elif case == "tile_not_power_of_two":
        tile, grid = 1000, (5,)
    elif case == "not_an_array":
        a = [1.0] * N
    elif case == "bad_grid":
        grid = (0,)
    before = c.clone()
    with pytest.raises(tb.ArgumentError, match=pattern):
        ext.vector_add(grid, a, b, c, TILE=tile)
    assert torch.equal(c, before), "a rejected launch must not touch its output"
    test_vector_add_runs(ext)  # everything still works afterwards


def test_strided_input(ext):
    base = torch.randn(2 * N, device="cuda")
    a = base[::2]  # stride 2: crosses zero-copy, no .contiguous()
    b, c = torch.randn(N, device="cuda"), torch.empty(N, device="cuda")
    ext.vector_add((N // TILE,), a, b, c, TILE=TILE)
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)


def test_explicit_and_current_torch_stream(ext):
    a, b, c = arrays()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):  # the launcher picks up torch's current stream
        ext.vector_add((N // TILE,), a, b, c, TILE=TILE, sync=False)
        d = c * 2  # ordered after the kernel on the same stream
    s.synchronize()
    torch.testing.assert_close(d, (a + b) * 2, rtol=0, atol=0)
    c2 = torch.zeros_like(c)
    ext.vector_add((N // TILE,), a, b, c2, TILE=TILE, stream=s)
    torch.testing.assert_close(c2, a + b, rtol=0, atol=0)


def test_cupy_arrays(ext):
    cp = pytest.importorskip("cupy")
    a = cp.random.standard_normal(N, dtype=cp.float32)
    b = cp.random.standard_normal(N, dtype=cp.float32)
    c = cp.zeros(N, dtype=cp.float32)
    s = cp.cuda.Stream(non_blocking=True)
    with s:  # CuPy's current stream
        ext.vector_add((N // TILE,), a, b, c, TILE=TILE)
    assert cp.array_equal(c, a + b)


def test_numpy_host_array_is_refused(ext):
    np = pytest.importorskip("numpy")
    _, b, c = arrays()
    with pytest.raises(tb.ArgumentError, match="host"):
        ext.vector_add((N // TILE,), np.zeros(N, np.float32), b, c, TILE=TILE)


def test_matmul_rejects_mismatched_grid(ext):
    a = torch.randn(256, 256, device="cuda", dtype=torch.float16)
    b = torch.randn(256, 256, device="cuda", dtype=torch.float16)
    c = torch.empty(256, 256, device="cuda", dtype=torch.float16)
    with pytest.raises(tb.ArgumentError, match=r"\(2, 2, 1\)"):
        ext.matmul((2, 1), a, b, c, TM=128, TN=128, TK=64)
