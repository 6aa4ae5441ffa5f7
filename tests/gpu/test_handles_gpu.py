"""Ownership-preserving handles with real launches: lending rules, async pipelines, streams,
CUDA graphs, threads, and torch/CuPy interop."""

import gc
import threading
import warnings

import pytest
import torch

import tilebridge as tb

N, TILE = 1 << 16, 1024
GRID = (N // TILE,)


@pytest.fixture(scope="module")
def k(ext):
    return tb.kernels(ext)


def handles(*values):
    return [tb.Tensor.from_torch(v) for v in values]


def test_write_lent_until_synced_reads_shared(k):
    a, b, c = handles(torch.randn(N, device="cuda"), torch.randn(N, device="cuda"), torch.empty(N, device="cuda"))
    torch.cuda._sleep(20_000_000)  # keep the GPU busy so the launch is surely still in flight
    p = k.vector_add.launch(GRID, a, b, c, TILE=TILE)
    with pytest.raises(tb.TensorBusyError, match=rf"{c.name} is lent to launch #{p.id} \(vector_add, write\)"):
        c.torch()
    a.numpy()  # reading a read-lent input on the host is allowed
    p2 = k.vector_add.launch(GRID, a, b, tb.Tensor.zeros(N), TILE=TILE)  # a second reader of a and b
    out, _, _ = p2.sync()[2], None, None
    assert p.sync()[2] is c
    torch.testing.assert_close(c.torch(), a.torch() + b.torch(), rtol=0, atol=0)


def test_async_pipeline_matches_step_by_step(k):
    x = torch.randn(N, device="cuda")
    a, y, z, w = handles(x, torch.empty(N, device="cuda"), torch.empty(N, device="cuda"), torch.empty(N, device="cuda"))
    # Three dependent launches, no host sync between them: the stream orders them.
    k.vector_add.launch(GRID, a, a, y, TILE=TILE)
    k.scaled_silu.launch(GRID, y, z, 2.0, 0.5, TILE=TILE)
    last = k.vector_add.launch(GRID, z, a, w, TILE=TILE)
    last.sync()
    y2, z2, w2 = (torch.empty(N, device="cuda") for _ in range(3))
    for args in ((x, x, y2), (y2, z2, 2.0, 0.5), (z2, x, w2)):
        kernel = k.scaled_silu if len(args) == 4 else k.vector_add
        kernel(GRID, *args, TILE=TILE)  # blocking, step by step
    torch.testing.assert_close(w.torch(), w2, rtol=0, atol=0)


def test_other_stream_waits_for_the_writer(k):
    """A launch on s2 reading what a launch on s1 writes must wait for it: s1 is held busy, and the
    test checks that s1 was still busy when s2's launch was enqueued, so a launcher that did not make
    s2 wait would have read c before it was written (a mutation that drops the wait fails here)."""
    a, b, c, d = handles(*(torch.randn(N, device="cuda") for _ in range(4)))
    k.vector_add.launch(GRID, a, b, d, TILE=TILE).sync()  # compiled now: no JIT below to hold the host
    torch.cuda.synchronize()
    before = c.torch().clone()
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    with torch.cuda.stream(s1):
        torch.cuda._sleep(200_000_000)  # about 0.1 s: s1 is slow
        # Kept: a Pending dropped unsynced waits for its launch on the host, which would order s2
        # whatever its launcher does (so the test passed with the wait removed, on the H100).
        first = k.vector_add.launch(GRID, a, b, c, TILE=TILE, stream=s1)
    p = k.vector_add.launch(GRID, c, a, d, TILE=TILE, stream=s2)
    if s1.query():
        pytest.xfail("s1 had finished when s2's launch returned: this run cannot tell the order")
    p.sync()
    first.sync()
    torch.cuda.synchronize()
    expected = a.torch() + b.torch() + a.torch()
    assert not torch.equal(expected, before + a.torch())  # reading c early would give another result
    torch.testing.assert_close(d.torch(), expected, rtol=0, atol=0)


def test_other_stream_waits_for_a_graph_replay(k):
    """The same order where the writer is a graph replay: its completion is an event that a launch
    on another stream must wait on (`_EventCompletion.block`), which the test above never reaches;
    a mutation that drops that wait fails here."""
    a, b, c, d = handles(*(torch.randn(N, device="cuda") for _ in range(4)))
    k.vector_add.launch(GRID, a, b, c, TILE=TILE).sync()  # compiled now: the capture cannot JIT
    k.vector_add.launch(GRID, c, a, d, TILE=TILE).sync()
    g = tb.Graph()
    with g:
        k.vector_add.launch(GRID, a, b, c, TILE=TILE)
    torch.cuda.synchronize()
    c.torch().zero_()  # the replay writes c again: reading it early gives a + 0
    torch.cuda.synchronize()
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    with torch.cuda.stream(s1):
        torch.cuda._sleep(200_000_000)  # about 0.1 s: s1 is slow
    replay = g.replay(stream=s1)
    p = k.vector_add.launch(GRID, c, a, d, TILE=TILE, stream=s2)
    if s1.query():
        pytest.xfail("s1 had finished when s2's launch returned: this run cannot tell the order")
    p.sync()
    replay.sync()
    torch.cuda.synchronize()
    expected = a.torch() + b.torch() + a.torch()
    assert not torch.equal(expected, a.torch())  # reading c early would give another result
    torch.testing.assert_close(d.torch(), expected, rtol=0, atol=0)
    g.release()


def test_dropped_launch_waits_and_warns(k):
    a, b, c = handles(torch.randn(N, device="cuda"), torch.randn(N, device="cuda"), torch.empty(N, device="cuda"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        k.vector_add.launch(GRID, a, b, c, TILE=TILE)
        gc.collect()
    assert any(issubclass(w.category, ResourceWarning) for w in caught)
    assert c.state == "ready"
    torch.testing.assert_close(c.torch(), a.torch() + b.torch(), rtol=0, atol=0)


def test_failed_launch_keeps_handles(k):
    a, b = handles(torch.randn(N, device="cuda"), torch.randn(N, device="cuda"))
    c = tb.Tensor.from_torch(torch.empty(N, device="cuda", dtype=torch.float16))
    with pytest.raises(tb.ArgumentError):
        k.vector_add.launch(GRID, a, b, c, TILE=TILE)  # c has another dtype
    assert a.state == b.state == c.state == "ready"


def test_graph_capture_and_replay_match_eager(k):
    x = torch.randn(N, device="cuda")  # a plain torch input: refilled between replays
    y, z = handles(torch.empty(N, device="cuda"), torch.empty(N, device="cuda"))
    k.vector_add(GRID, x, x, y, TILE=TILE)  # warm up: JIT before capture
    k.scaled_silu(GRID, y, z, 2.0, 0.5, TILE=TILE)
    g = tb.Graph()
    with g:
        k.vector_add.launch(GRID, x, x, y, TILE=TILE)
        k.scaled_silu.launch(GRID, y, z, 2.0, 0.5, TILE=TILE)
    for seed in range(3):
        torch.manual_seed(seed)
        x.copy_(torch.randn(N, device="cuda"))
        torch.cuda._sleep(10_000_000)
        replay = g.replay()
        with pytest.raises(tb.TensorBusyError, match="graph replay, write"):
            z.torch()
        replay.sync()
        y2, z2 = torch.empty(N, device="cuda"), torch.empty(N, device="cuda")
        k.vector_add(GRID, x, x, y2, TILE=TILE)
        k.scaled_silu(GRID, y2, z2, 2.0, 0.5, TILE=TILE)
        torch.testing.assert_close(z.torch(), z2, rtol=0, atol=0)
    g.release()


def test_eight_threads_launch_concurrently(k):
    errors = []

    def work(seed):
        try:
            g = torch.Generator(device="cuda").manual_seed(seed)
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                for _ in range(25):
                    a = torch.randn(N, device="cuda", generator=g)
                    b = torch.randn(N, device="cuda", generator=g)
                    c = torch.empty(N, device="cuda")
                    k.vector_add(GRID, a, b, c, TILE=TILE)
                    if not torch.equal(c, a + b):
                        errors.append(f"thread {seed}: wrong result")
        except Exception as e:  # surfaced below
            errors.append(f"thread {seed}: {e!r}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_cupy_handles_on_a_cupy_stream(k):
    cp = pytest.importorskip("cupy")
    a = tb.Tensor.from_cupy(cp.arange(N, dtype=cp.float32))
    b = tb.Tensor.from_cupy(cp.ones(N, dtype=cp.float32))
    c = tb.Tensor.from_cupy(cp.zeros(N, dtype=cp.float32))
    s = cp.cuda.Stream(non_blocking=True)
    k.vector_add.launch(GRID, a, b, c, TILE=TILE, stream=s).sync()
    assert cp.array_equal(c.cupy(), cp.arange(N, dtype=cp.float32) + 1)
    t = c.torch()  # zero-copy export to torch through DLPack
    assert t.data_ptr() == c.cupy().data.ptr
