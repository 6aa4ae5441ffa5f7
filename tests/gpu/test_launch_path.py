"""The launch path (`tilebridge_runtime::kernel`): a specialization compiles once, at its first
launch, and later launches go straight to the driver; a launch on another stream than the
arrays' current one keeps them alive until its kernel completes."""

import gc
import weakref

import torch


def vector_add(ext, n, tile, dtype, **kw):
    a = torch.randn(n, device="cuda").to(dtype)
    b = torch.randn(n, device="cuda").to(dtype)
    c = torch.empty_like(a)
    ext.vector_add((-(-n // tile),), a, b, c, TILE=tile, **kw)
    torch.cuda.synchronize()
    assert torch.equal(c, a + b)


def launched(ext, launch):
    """(kernels compiled, kernels launched) during `launch()`."""
    before = ext._launch_counts()
    launch()
    after = ext._launch_counts()
    return after[0] - before[0], after[1] - before[1]


def test_a_specialization_compiles_once(ext):
    # TILE=32 in bf16: a specialization no other test of this process launches first.
    assert launched(ext, lambda: vector_add(ext, 32 * 7, 32, torch.bfloat16)) == (1, 1)
    assert launched(ext, lambda: vector_add(ext, 32 * 9, 32, torch.bfloat16)) == (0, 1)
    # The current stream given as an argument is the same launch.
    raw = torch.cuda.current_stream().cuda_stream
    assert launched(ext, lambda: vector_add(ext, 32 * 9, 32, torch.bfloat16, stream=raw)) == (0, 1)


def test_a_new_divisibility_is_a_new_specialization(ext):
    """An extent divisible by 8 but not 16 specializes anew, as cutile's launcher does; another
    extent of the same divisibility does not."""
    vector_add(ext, 16 * 64, 16, torch.float32)
    assert launched(ext, lambda: vector_add(ext, 16 * 64 + 8, 16, torch.float32)) == (1, 1)
    assert launched(ext, lambda: vector_add(ext, 16 * 80 + 8, 16, torch.float32)) == (0, 1)


def test_a_launch_on_another_stream_keeps_its_arrays_until_it_completes(ext):
    """torch's allocator would hand a freed block to the next allocation on the default stream
    while a kernel on a side stream still writes it: the launch holds its arrays until then."""
    side = torch.cuda.Stream()
    n = 1 << 16
    a, b, c = (torch.ones(n, device="cuda") for _ in range(3))
    vector_add(ext, n, 1024, torch.float32)  # compiled outside the timed window below
    torch.cuda.synchronize()
    alive = [weakref.ref(t) for t in (a, b, c)]
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)  # keeps the side stream busy for a while
    ext.vector_add((n // 1024,), a, b, c, TILE=1024, stream=side, sync=False)
    del a, b, c
    gc.collect()
    assert all(r() is not None for r in alive), "the launch let go of its arrays while its kernel was queued"
    side.synchronize()
    vector_add(ext, n, 1024, torch.float32)  # a later launch lets go of what has completed
    gc.collect()
    assert all(r() is None for r in alive)


def test_a_launch_on_the_current_stream_holds_nothing(ext):
    n = 1 << 16
    a, b, c = (torch.ones(n, device="cuda") for _ in range(3))
    alive = [weakref.ref(t) for t in (a, b, c)]
    ext.vector_add((n // 1024,), a, b, c, TILE=1024, sync=False)
    del a, b, c
    gc.collect()
    assert all(r() is None for r in alive)  # the stream orders the memory's reuse after the kernel
    torch.cuda.synchronize()


def test_views_and_subclasses_read_like_their_accessors_say(ext):
    """Plain torch tensors are read through torch's DLPack exchange table, subclasses through
    their accessors: offset views, strided views and a Parameter all launch on the memory their
    accessors name (a wrong pointer, shape or stride would compute something else)."""
    assert hasattr(torch.Tensor, "__dlpack_c_exchange_api__"), "torch without the table: the fast path is not run"
    n = 4096
    base = torch.randn(3 * n, device="cuda")
    a, b = base[5:5 + n], base[n + 7:2 * n + 7]  # offset views: data_ptr() is past the storage's start
    strided = base[::2][:n]  # every other element: stride 2
    out = torch.empty(n, device="cuda")
    ext.vector_add((n // 1024,), a, b, out, TILE=1024)
    assert torch.equal(out, a + b)
    ext.vector_add((n // 1024,), strided, b, out, TILE=1024)
    assert torch.equal(out, strided + b)
    p = torch.nn.Parameter(torch.randn(n, device="cuda"), requires_grad=False)
    ext.vector_add((n // 1024,), p, b, out, TILE=1024)
    assert torch.equal(out, p + b)
    for dtype in (torch.float16, torch.bfloat16):
        vector_add(ext, 2048, 1024, dtype)
    wrong = torch.randn(n, device="cuda", dtype=torch.float64)
    try:
        ext.vector_add((n // 1024,), wrong, b, out, TILE=1024)
        raise AssertionError("an f64 array launched a launcher built for f32, f16, bf16")
    except Exception as e:  # noqa: BLE001 - the message is what is checked
        assert "float64" in str(e) or "f64" in str(e), e


def test_after_returns_the_launch_completion_on_the_current_stream(ext):
    n = 1 << 16
    a, b, c = (torch.ones(n, device="cuda") for _ in range(3))
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        done = ext.vector_add((n // 1024,), a, b, c, TILE=1024, sync=False, after=[])
        assert done.stream == side.cuda_stream and not done.captured
    # A launch on another stream follows it: the add below reads c only after the kernel wrote it.
    done.wait()
    c.zero_()
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(100_000_000)
        first = ext.vector_add((n // 1024,), a, b, c, TILE=1024, sync=False, after=[])
    second = ext.vector_add((n // 1024,), c, b, a, TILE=1024, sync=False, after=[first])
    second.wait()
    assert first.done() and second.done()
    assert torch.equal(a, torch.full_like(a, 3.0)), "the second launch did not wait for the first"
    assert ext.vector_add((n // 1024,), a, b, c, TILE=1024, sync=False) is None
    torch.cuda.synchronize()
