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
