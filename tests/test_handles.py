"""The lending state machine against a fake GPU backend: unit cases and a property test over
random programs of allocate / launch / sync / poll / host access / failing launch / drop."""

import gc
import contextlib
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tilebridge as tb
from tilebridge.metadata import ExtensionMetadata, KernelMetadata, ParamMetadata
from tilebridge.runtime.ownership import Kernel, Tensor, TensorBusyError


class FakeEvent:
    def __init__(self):
        self.completed = False

    def query(self):
        return self.completed

    def synchronize(self):
        self.completed = True


class FakeCompletion:
    """What a launcher called with `after=` returns: here a flag the test sets."""

    def __init__(self, backend, stream, captured):
        self.backend, self.stream, self.captured = backend, stream, captured
        self.completed = False
        if not captured:
            backend.events.append(self)

    def done(self):
        return self.completed

    def wait(self):
        self.completed = True

    def block(self, stream):
        if stream != self.stream:
            self.backend.waits.append((stream, self))


class FakeStream:
    def __init__(self, sid):
        self.cuda_stream = sid


class FakeBackend:
    def __init__(self):
        self.streams = {0: FakeStream(0), 1: FakeStream(1)}
        self.events = []
        self.waits = []
        self.graph = None

    def current_stream(self, device):
        return self.streams[0]

    def as_stream(self, stream, device):
        return self.streams[0] if stream is None else self.streams[stream]

    def record(self, stream):
        e = FakeEvent()
        self.events.append(e)
        return e

    def wait(self, stream, event):
        self.waits.append((stream, event))

    def stream_id(self, stream):
        return stream.cuda_stream

    @contextlib.contextmanager
    def capture(self, stream):
        self.graph = FakeGraph()
        try:
            yield self.graph
        finally:
            self.graph = None

    def replay(self, graph, stream):
        if graph.fail:
            raise tb.LaunchError("replay rejected")
        graph.replays.append(stream.cuda_stream)


class FakeGraph:
    def __init__(self):
        self.replays = []
        self.fail = False


class FakeArray:
    """Stands in for a torch tensor: the state machine never touches its memory."""

    shape, dtype, device = (4,), "float32", None

    def data_ptr(self):
        return 0


class FakeExt:
    """An extension with one kernel `copy(x) -> y`; it can be told to fail like a rejected launch."""

    __name__ = "fake_ext"
    __tilebridge__ = ExtensionMetadata("fake_ext", "copy.py", {"copy": KernelMetadata("copy.py", 1, (
        ParamMetadata("x", "array", rank=1, written=False, dtype_class="E0"),
        ParamMetadata("y", "array", rank=1, written=True, dtype_class="E0"),
        ParamMetadata("TILE", "constant", dtype="i32")))}).to_json()

    def __init__(self, backend):
        self.backend = backend
        self.fail = False
        self.calls = []

    def copy(self, grid, x, y, *, TILE, stream, sync, after):
        if self.fail:
            raise tb.ArgumentError("rejected")
        sid = 0 if stream is None else stream
        for earlier in after:
            earlier.block(sid)
        self.calls.append((x, y, stream))
        return FakeCompletion(self.backend, sid, captured=self.backend.graph is not None)


@pytest.fixture
def env():
    backend = FakeBackend()
    ext = FakeExt(backend)
    return ext, backend, Kernel(ext, "copy")


def test_write_lent_handle_refuses_host_access_until_synced(env):
    ext, backend, copy = env
    x, y = Tensor(FakeArray()), Tensor(FakeArray())
    p = copy.launch(1, x, y, TILE=4)
    assert (x.state, y.state) == ("read-lent", "write-lent")
    with pytest.raises(TensorBusyError, match=rf"{y.name} is lent to launch #{p.id} \(copy, write\) on stream 0x0"):
        y.torch()
    with pytest.raises(TensorBusyError, match="pending.sync"):
        y.numpy()
    with pytest.raises(TensorBusyError, match="read"):
        x.torch()  # exporting a read-lent handle could let the caller write it
    assert p.sync() == (x, y)
    assert (x.state, y.state) == ("ready", "ready")
    assert y.torch() is y._array


def test_done_polls_and_returns_the_lends(env):
    _, backend, copy = env
    x, y = Tensor(FakeArray()), Tensor(FakeArray())
    p = copy.launch(1, x, y, TILE=4)
    assert not p.done() and y.state == "write-lent"
    backend.events[-1].completed = True
    assert p.done() and y.state == "ready"


def test_same_stream_chaining_moves_the_lend(env):
    _, backend, copy = env
    x, y, z = (Tensor(FakeArray()) for _ in range(3))
    p1 = copy.launch(1, x, y, TILE=4)
    p2 = copy.launch(1, y, z, TILE=4)  # reads y, still write-lent to p1, on the same stream
    assert backend.waits == []
    p1.sync()
    assert y.state == "read-lent" and z.state == "write-lent"
    p2.sync()
    assert y.state == z.state == "ready"


def test_other_stream_waits_on_the_earlier_event(env):
    _, backend, copy = env
    x, y, z = (Tensor(FakeArray()) for _ in range(3))
    p1 = copy.launch(1, x, y, TILE=4)
    p2 = copy.launch(1, y, z, TILE=4, stream=1)
    assert backend.waits == [(1, p1.completion)]
    p2.sync(), p1.sync()


def test_failed_launch_leaves_every_handle_as_it_was(env):
    ext, _, copy = env
    x, y = Tensor(FakeArray()), Tensor(FakeArray())
    p = copy.launch(1, x, y, TILE=4)
    ext.fail = True
    with pytest.raises(tb.ArgumentError):
        copy.launch(1, y, x, TILE=4)
    assert (x.state, y.state) == ("read-lent", "write-lent")
    assert x.readers == [p] and y.writer is p
    p.sync()


def test_output_aliasing_a_handle_is_refused(env):
    ext, _, copy = env
    x = Tensor(FakeArray())
    with pytest.raises(tb.ArgumentError, match="passed twice"):
        copy.launch(1, x, x, TILE=4)
    assert x.state == "ready" and ext.calls == []
    # refused while another launch holds it: that launch's lends stay as they were
    y, z = Tensor(FakeArray()), Tensor(FakeArray())
    first = copy.launch(1, y, x, TILE=4)
    with pytest.raises(tb.ArgumentError, match="passed twice"):
        copy.launch(1, x, x, TILE=4)
    assert x.writer is first and y.readers == [first] and len(ext.calls) == 1
    second = copy.launch(1, y, z, TILE=4)  # read twice across launches: both hold it
    assert y.readers == [first, second]
    first.sync(), second.sync()
    assert (x.state, y.state, z.state) == ("ready", "ready", "ready")


def test_dropping_an_unsynced_launch_waits_and_warns(env):
    _, backend, copy = env
    x, y = Tensor(FakeArray()), Tensor(FakeArray())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        copy.launch(1, x, y, TILE=4)  # dropped at once
        gc.collect()
    assert any(issubclass(w.category, ResourceWarning) and "without sync" in str(w.message) for w in caught)
    assert backend.events[-1].completed
    assert y.state == "ready"


def test_blocking_call_is_launch_and_sync(env):
    _, backend, copy = env
    x, y = Tensor(FakeArray()), Tensor(FakeArray())
    assert copy(1, x, y, TILE=4) == (x, y)
    assert backend.events[-1].completed and y.state == "ready"


def test_await(env):
    import asyncio

    _, backend, copy = env
    x, y = Tensor(FakeArray()), Tensor(FakeArray())

    async def main():
        p = copy.launch(1, x, y, TILE=4)
        backend.events[-1].completed = True
        return await p

    assert asyncio.run(main()) == (x, y)


OPS = st.lists(st.tuples(st.sampled_from(["new", "launch", "launch_fail", "sync", "poll", "read", "write", "drop"]),
                         st.integers(0, 7), st.integers(0, 7), st.integers(0, 1)), max_size=40)


@settings(max_examples=300, deadline=None)
@given(OPS)
def test_random_programs_never_race_and_never_lose_a_handle(ops):
    backend = FakeBackend()
    ext = FakeExt(backend)
    copy = Kernel(ext, "copy")
    handles = [Tensor(FakeArray()) for _ in range(2)]
    pendings = []
    for op, i, j, s in ops:
        if op == "new":
            handles.append(Tensor(FakeArray()))
        elif op in ("launch", "launch_fail"):
            x, y = handles[i % len(handles)], handles[j % len(handles)]
            if x is y:
                continue
            before = [(h.writer, h.readers) for h in handles]
            ext.fail = op == "launch_fail"
            try:
                pendings.append(copy.launch(1, x, y, TILE=4, stream=s))
            except tb.ArgumentError:
                assert [(h.writer, h.readers) for h in handles] == before, "a failed launch changed state"
            del before  # holds launches strongly
        elif op == "sync" and pendings:
            pendings[i % len(pendings)].sync()
        elif op == "poll" and pendings:
            p = pendings[i % len(pendings)]
            if p.completion is not None:
                p.completion.completed = j % 2 == 0
            p.done()
        elif op in ("read", "write"):
            h = handles[i % len(handles)]
            live_writer, live_reader = h.writer is not None, bool(h.readers)
            try:
                h.numpy() if op == "read" else h.torch()
                assert not live_writer, "a host read of a write-lent handle succeeded"
                assert op == "read" or not live_reader, "an export of a read-lent handle succeeded"
            except TensorBusyError as e:
                assert live_writer or (op == "write" and live_reader)
                assert h.name in str(e) and "launch #" in str(e) and "stream" in str(e)
            except AttributeError:  # FakeArray has no .cpu(): the access itself was allowed
                assert not live_writer
        elif op == "drop" and pendings:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ResourceWarning)
                del pendings[i % len(pendings)]  # the finalizer waits and returns the lends
    for p in pendings:
        p.sync()
    p = None
    assert all(h.state == "ready" for h in handles), "a handle was lost"


def test_graph_capture_runs_nothing_and_each_replay_lends_like_a_launch(env):
    ext, backend, copy = env
    x, y = Tensor(FakeArray()), Tensor(FakeArray())
    g = tb.Graph(backend=backend)
    with g:
        p = copy.launch(1, x, y, TILE=4)
        assert p.completion is None  # captured: nothing to wait for
        with pytest.raises(TensorBusyError, match="being captured into a graph"):
            p.sync()
    assert (x.state, y.state) == ("ready", "ready")  # the capture ran nothing
    assert x in g._keepalive and y in g._keepalive  # replays use their memory
    r = g.replay()
    assert (x.state, y.state) == ("read-lent", "write-lent")
    with pytest.raises(TensorBusyError, match=rf"{y.name} is lent to launch #{r.id} \(graph replay, write\)"):
        y.torch()
    r2 = g.replay()  # same stream: the lend moves to the newer replay
    assert y._writer() is r2 and not backend.waits
    r.sync()
    g.sync()
    assert (x.state, y.state) == ("ready", "ready") and backend.graph is None
    g.release()
    with pytest.raises(tb.LaunchError, match="holds no capture"):
        g.replay()


def test_failed_replay_and_failed_capture_leave_handles_as_they_were(env):
    ext, backend, copy = env
    x, y = Tensor(FakeArray()), Tensor(FakeArray())
    g = tb.Graph(backend=backend)
    with g:
        copy.launch(1, x, y, TILE=4)
    g._graph.fail = True
    with pytest.raises(tb.LaunchError, match="replay rejected"):
        g.replay()
    assert (x.state, y.state) == ("ready", "ready")
    with pytest.raises(RuntimeError, match="boom"):
        with tb.Graph(backend=backend) as g2:
            copy.launch(1, x, y, TILE=4)
            raise RuntimeError("boom")
    assert (x.state, y.state) == ("ready", "ready")
    with pytest.raises(tb.LaunchError, match="holds no capture"):
        g2.replay()


def test_a_launch_captured_by_another_capture_lends_nothing(env):
    """Inside a capture that is not a tb.Graph (torch.cuda.graph), the launch runs nothing and
    the arrays are the capture's owner's: no handle stays lent."""
    ext, backend, copy = env
    x, y = Tensor(FakeArray()), Tensor(FakeArray())
    backend.graph = FakeGraph()  # what the launcher sees of torch.cuda.graph(...)
    p = copy.launch(1, x, y, TILE=4)
    backend.graph = None
    assert p.synced and p.completion is None
    assert (x.state, y.state) == ("ready", "ready")
