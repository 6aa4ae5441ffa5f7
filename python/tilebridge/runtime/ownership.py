"""Ownership-preserving handles: cuTile Rust's launch ownership, kept in Python.

A `Tensor` handle owns device memory (a torch tensor underneath). A launch through a
`Kernel` *lends* each handle to a `Pending` launch: outputs exclusively (write),
inputs shared (read). Until the launch is synced, host access that could race the
GPU raises `TensorBusyError`: no read, write or export of a write-lent handle, no
write or export-for-write of a read-lent one. Launches themselves order through
streams: a later launch on the same stream may take a lent handle (the stream orders
them; the lend moves to the newer launch), and on another stream it first makes that
stream wait for the earlier launch. An error anywhere in a launch leaves every handle
as it was. Dropping an unsynced `Pending` waits for it and warns.

The lending state is kept here; the GPU side of a launch is the generated launcher's, in
the same call: called with `after=` (the completions of the launches that hold its
handles) it makes its stream wait for those on other streams, launches, and returns its
own completion (an event from a pool, recorded after the kernel; `runtime/crate/src/
completion.rs`). Graph capture and replay go through a small backend (`TorchBackend`).
Both are faked in `tests/test_handles.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
import warnings
import weakref
from typing import Any, Protocol, Sequence

from ..errors import ArgumentError, LaunchError
from .launch import extension_metadata, kernel_info


class TensorBusyError(LaunchError):
    """A handle is lent to a launch that has not been synced."""


class Completion(Protocol):
    """When a launch's work has run: what a launcher called with `after=` returns."""

    stream: int  # the raw CUstream it went to
    captured: bool  # recorded into a CUDA graph, not run

    def done(self) -> bool: ...

    def wait(self) -> None: ...

    def block(self, stream: int) -> None:
        """Makes the raw stream `stream` wait for this launch (nothing where it went there)."""


class Event(Protocol):
    def query(self) -> bool: ...

    def synchronize(self) -> None: ...


class Backend(Protocol):
    """What graph capture and replay need from the GPU runtime."""

    def current_stream(self, device: int) -> Any: ...

    def as_stream(self, stream: Any, device: int) -> Any:
        """The stream object for a `stream=` argument (None: the current stream)."""

    def record(self, stream: Any) -> Event: ...

    def wait(self, stream: int, event: Event) -> None:
        """Makes the raw stream `stream` wait for `event`."""

    def stream_id(self, stream: Any) -> int: ...

    def capture(self, stream: Any) -> Any:
        """A context manager capturing the launches inside; entering it gives the graph."""

    def replay(self, graph: Any, stream: Any) -> None: ...


class TorchBackend:
    """torch streams and events."""

    def __init__(self) -> None:
        import torch

        self.torch = torch
        self._free_events: list[Any] = []  # creating a CUDA event per launch costs microseconds
        self._raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        self._streams: dict[tuple[int, int], Any] = {}  # (device, CUstream) -> stream object

    def current_stream(self, device: int) -> Any:
        if self._raw_stream is None:
            return self.torch.cuda.current_stream(device)
        # torch builds a new Stream object per current_stream() call; one per stream will do.
        key = (device, self._raw_stream(device))
        stream = self._streams.get(key)
        if stream is None:
            stream = self._streams[key] = self.torch.cuda.current_stream(device)
        return stream

    def as_stream(self, stream: Any, device: int) -> Any:
        if stream is None:
            return self.current_stream(device)
        if isinstance(stream, self.torch.cuda.Stream):
            return stream
        if isinstance(stream, int):
            return self.torch.cuda.ExternalStream(stream, device=device)
        if hasattr(stream, "ptr"):  # a CuPy stream
            return self.torch.cuda.ExternalStream(stream.ptr, device=device)
        raise ArgumentError("stream must be an int (a CUstream), a torch.cuda.Stream or a cupy.cuda.Stream")

    def record(self, stream: Any) -> Event:
        event = self._free_events.pop() if self._free_events else self.torch.cuda.Event()
        event.record(stream)
        return event

    def recycle(self, event: Event) -> None:
        """Takes back an event that has completed and that nothing refers to any more."""
        if len(self._free_events) < 256:
            self._free_events.append(event)

    def wait(self, stream: int, event: Event) -> None:
        self.torch.cuda.ExternalStream(stream).wait_event(event)

    def stream_id(self, stream: Any) -> int:
        return stream.cuda_stream

    @contextlib.contextmanager
    def capture(self, stream: Any):
        """Captures what is launched inside into a CUDA graph (on a side stream unless given),
        in relaxed mode like cutile's own `CudaGraph`."""
        graph = self.torch.cuda.CUDAGraph()
        with self.torch.cuda.graph(graph, stream=stream, capture_error_mode="relaxed"):
            yield graph

    def replay(self, graph: Any, stream: Any) -> None:
        with self.torch.cuda.stream(stream):
            graph.replay()


_LOCK = threading.RLock()  # guards every handle's lending state
_IDS = itertools.count(1)


class Tensor:
    """A device array whose ownership follows cuTile Rust's launch rules."""

    def __init__(self, array: Any):
        self._array = array  # a torch tensor (or CuPy array) that owns the memory
        # Weak: dropping the last reference to a Pending must reach its finalizer (wait, warn).
        self._writer: weakref.ref[Pending] | None = None
        self._readers: list[weakref.ref[Pending]] = []
        self._prune_at = 16
        self._stamp = 0  # the id of the last launch lent it: a handle given twice to one launch
        self.name = f"tensor#{next(_IDS)}"

    # -- allocation --
    @staticmethod
    def _torch():
        import torch

        return torch

    @classmethod
    def empty(cls, shape, dtype="float32", device: int = 0) -> "Tensor":
        torch = cls._torch()
        return cls(torch.empty(shape, dtype=getattr(torch, dtype) if isinstance(dtype, str) else dtype,
                               device=f"cuda:{device}"))

    @classmethod
    def zeros(cls, shape, dtype="float32", device: int = 0) -> "Tensor":
        t = cls.empty(shape, dtype, device)
        t._array.zero_()
        return t

    @classmethod
    def full(cls, shape, value, dtype="float32", device: int = 0) -> "Tensor":
        t = cls.empty(shape, dtype, device)
        t._array.fill_(value)
        return t

    @classmethod
    def from_torch(cls, t) -> "Tensor":
        """Takes a CUDA torch tensor (shared, not copied; keep using it only through the handle)."""
        return cls(t)

    @classmethod
    def from_cupy(cls, a) -> "Tensor":
        return cls(a)

    @classmethod
    def from_numpy(cls, a, device: int = 0) -> "Tensor":
        return cls(cls._torch().as_tensor(a, device=f"cuda:{device}"))

    # -- metadata (always allowed: no memory is touched) --
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._array.shape)

    @property
    def dtype(self):
        return self._array.dtype

    @property
    def device(self):
        return self._array.device

    def stride(self) -> tuple[int, ...]:
        s = self._array.stride
        return tuple(s() if callable(s) else (x // self._array.itemsize for x in s))

    # -- state --
    @property
    def state(self) -> str:
        with _LOCK:
            self._forget_done()
            if self._writer is not None:
                return "write-lent"
            return "read-lent" if self._readers else "ready"

    def _forget_done(self, readers: bool = True) -> None:
        if _live(self._writer) is None:
            self._writer = None
        if readers:
            self._readers = [r for r in self._readers if _live(r) is not None]
            # Read lends prune again only once the list has doubled: keeps each launch O(1)
            # when many launches read one handle.
            self._prune_at = max(16, 2 * len(self._readers))

    @property
    def writer(self) -> "Pending | None":
        """The unsynced launch this handle is write-lent to, if any."""
        with _LOCK:
            return _live(self._writer)

    @property
    def readers(self) -> "list[Pending]":
        """The unsynced launches this handle is read-lent to."""
        with _LOCK:
            return [p for p in map(_live, self._readers) if p is not None]

    def _busy(self, access: str, holder: "Pending", mode: str) -> TensorBusyError:
        return TensorBusyError(
            f"{self.name} is lent to launch #{holder.id} ({holder.kernel}, {mode}) on stream {holder.stream_label}; "
            f"{access} it after pending.sync() (or pass it to a launch on that stream, which orders after it)")

    def _check_host(self, access: str, write: bool) -> None:
        with _LOCK:
            self._forget_done()
            writer = _live(self._writer)
            if writer is not None:
                raise self._busy(access, writer, "write")
            readers = self.readers
            if write and readers:
                raise self._busy(access, readers[0], "read")

    # -- host access and export --
    def torch(self):
        """The underlying torch tensor, zero-copy (only while no launch writes it)."""
        self._check_host("export", write=True)
        if hasattr(self._array, "data_ptr"):
            return self._array
        return self._torch().from_dlpack(self._array)

    def cupy(self):
        """A CuPy view through DLPack, zero-copy (only while no launch writes it)."""
        self._check_host("export", write=True)
        import cupy

        return cupy.from_dlpack(self._array)

    def numpy(self):
        """A host copy (only while no launch writes it)."""
        self._check_host("read", write=False)
        t = self._array
        return t.cpu().numpy() if hasattr(t, "cpu") else t.get()

    def __repr__(self) -> str:
        return f"<tilebridge.Tensor {self.name} {self.shape} {self.dtype} {self.state}>"


def _live(ref: "weakref.ref[Pending] | None") -> "Pending | None":
    p = ref() if ref is not None else None
    return p if p is not None and not p.synced else None


class Pending:
    """A launch in flight. `sync()` waits and returns the arguments in signature order."""

    __slots__ = ("id", "kernel", "args", "written", "completion", "stream", "synced", "graph", "ref",
                 "__weakref__")

    def __init__(self, kernel: str, args: tuple, written: Sequence[bool] = ()):
        self.id = next(_IDS)
        self.kernel = kernel
        self.args = args  # strong references: borrowed arrays stay alive until synced
        self.written = written
        self.completion: Completion | None = None  # set once launched
        self.stream = 0  # the raw CUstream it went to, once launched
        self.synced = False
        self.graph = None  # set when captured into a Graph, which then owns the lends
        self.ref = weakref.ref(self)  # what the handles it borrows point back with

    @property
    def stream_label(self) -> str:
        return hex(self.stream)

    def done(self) -> bool:
        """True once the GPU finished; the lends are then returned."""
        if self.synced:
            return True
        if self.completion is not None and self.completion.done():
            self._release()
            return True
        return False

    def sync(self) -> tuple:
        """Waits for the launch, returns every lent handle, and gives back the arguments."""
        if not self.synced:
            if self.graph is not None:
                raise TensorBusyError(f"launch #{self.id} ({self.kernel}) is being captured into a graph: it "
                                      "runs when the graph is replayed; sync the replay instead")
            if self.completion is not None:
                self.completion.wait()
            self._release()
        return self.args

    def __await__(self):
        async def wait():
            while not self.done():
                await asyncio.sleep(5e-5)
            return self.sync()

        return wait().__await__()

    def _release(self) -> None:
        with _LOCK:
            self.synced = True
        # Later launches only wait for unsynced launches: the completion's event can serve again.
        self.completion = None

    def __del__(self):
        if not getattr(self, "synced", True) and self.graph is None:
            warnings.warn(f"launch #{self.id} ({self.kernel}) was dropped without sync(); waiting for it",
                          ResourceWarning, stacklevel=2)
            try:
                self.sync()
            except Exception:  # never raise from a finalizer
                pass


class _EventCompletion:
    """A graph replay's completion: a backend event recorded on its stream after it."""

    captured = False

    def __init__(self, backend: Backend, stream: Any):
        self.backend = backend
        self.stream = backend.stream_id(stream)
        self.event = backend.record(stream)

    def done(self) -> bool:
        return self.event.query()

    def wait(self) -> None:
        self.event.synchronize()

    def block(self, stream: int) -> None:
        if stream != self.stream:
            self.backend.wait(stream, self.event)

    def __del__(self):
        recycle = getattr(self.backend, "recycle", None)
        if recycle is not None and self.event.query():
            recycle(self.event)


# What `restore` needs of one lend: the handle, and for a write its writer and readers before it
# (a read lend only added the launch to the readers).
_Lend = tuple  # (Tensor, weakref.ref[Pending] | None, list[weakref.ref[Pending]] | None)


def lend(handles: Sequence[tuple[Tensor, bool]], pending: Pending) -> tuple[list[_Lend], list[Completion]]:
    """Lends each (handle, write) to `pending`. Returns what `restore` needs to undo it, and the
    completions of the unsynced launches that hold the handles (the launch must follow those on
    other streams: the launcher's `after=`). A handle given twice is lent once; given twice and
    written, it raises, leaving every handle as it was."""
    lends: list[_Lend] = []
    earlier: list[Completion] = []
    ref, stamp = pending.ref, pending.id
    with _LOCK:
        for h, write in handles:
            if h._stamp == stamp:  # this launch has it already: reading it twice is fine
                if write or h._writer is ref:
                    restore(lends, pending)
                    raise ArgumentError(f"{h.name} is passed twice to {pending.kernel} and written; an output "
                                        "must not alias another argument")
                continue
            h._stamp = stamp
            writer = _live(h._writer)
            if writer is None:
                h._writer = None
            elif writer.completion is not None:
                earlier.append(writer.completion)
            readers = h._readers
            if write:
                for r in readers:
                    p = _live(r)
                    if p is not None and p.completion is not None:
                        earlier.append(p.completion)
                lends.append((h, h._writer, readers))
                h._writer, h._readers, h._prune_at = ref, [], 16
            else:
                if len(readers) >= h._prune_at:
                    h._forget_done()
                    readers = h._readers
                lends.append((h, None, None))
                readers.append(ref)
    return lends, earlier


def restore(lends: list[_Lend], pending: Pending) -> None:
    """Undoes `lend` (after a failed launch): every handle's writer and live readers as before."""
    with _LOCK:
        for handle, writer, readers in reversed(lends):
            if readers is not None:
                handle._writer, handle._readers = writer, readers
            elif pending.ref in handle._readers:
                handle._readers.remove(pending.ref)


class Kernel:
    """A launcher with ownership: `kernel.launch(...)` -> Pending; `kernel(...)` launches and syncs."""

    def __init__(self, ext: Any, name: str):
        self.ext = ext
        self.name = name
        self.params = kernel_info(ext, name).params
        self._launcher = getattr(ext, name)
        self._positional = [p for p in self.params if not p.by_keyword]
        self._written = [p.written for p in self._positional]

    def launch(self, grid: Any, *args: Any, stream: Any = None, **constants: Any) -> Pending:
        """Lends the handles among `args` to the launch and enqueues it on `stream` (default: the
        current stream of the arrays' framework); `Pending.sync()` waits for it."""
        if len(args) != len(self._written):
            raise ArgumentError(f"{self.name} takes {len(self._positional)} positional arguments "
                                f"({', '.join(p.name for p in self._positional)}), got {len(args)}")
        handles, raw = [], list(args)
        for i, value in enumerate(args):
            if isinstance(value, Tensor):
                handles.append((value, self._written[i]))
                raw[i] = value._array
            elif isinstance(value, (list, tuple)):  # a list of arrays: each item lent alike
                handles += [(v, self._written[i]) for v in value if isinstance(v, Tensor)]
                raw[i] = [v._array if isinstance(v, Tensor) else v for v in value]
        pending = Pending(self.name, args, self._written)
        lends, earlier = lend(handles, pending)
        try:
            completion = self._launcher(grid, *raw, stream=stream, sync=False, after=earlier, **constants)
        except BaseException:
            restore(lends, pending)
            pending.synced = True  # nothing is in flight
            raise
        pending.stream = completion.stream
        if completion.captured:
            # Recorded into a CUDA graph: nothing ran. A tilebridge Graph takes the lends over;
            # another capture (torch.cuda.graph) owns its arrays, as for any kernel it captures.
            graph = _CAPTURING.get(threading.get_ident()) if _CAPTURING else None
            if graph is None:
                restore(lends, pending)
                pending.synced = True
            else:
                pending.graph = graph
                graph.pendings.append(pending)
        else:
            pending.completion = completion
        return pending

    def __call__(self, grid: Any, *args: Any, stream: Any = None, **constants: Any) -> tuple:
        return self.launch(grid, *args, stream=stream, **constants).sync()


def _device_of(array: Any) -> int | None:
    device = getattr(array, "device", None)
    for attr in ("index", "id"):  # torch.device.index, cupy Device.id
        value = getattr(device, attr, None)
        if isinstance(value, int):
            return value
    return None


class Kernels:
    """The kernels of an extension as `Kernel` objects: `tb.kernels(ext).matmul.launch(...)`."""

    def __init__(self, ext: Any):
        self._ext = ext
        for name in extension_metadata(ext).kernels:
            setattr(self, name, Kernel(ext, name))


_CAPTURING: dict[int, "Graph"] = {}


class Graph:
    """Launches captured once and replayed; each replay is a launch of its own.

        with tb.Graph() as g:          # capture: records the launches, runs nothing
            k1.launch(...); k2.launch(...)
        g.replay().sync()              # runs them; returns when done
        g.release()                    # or let it go: the graph keeps its handles alive

    The graph keeps every handle it captured alive as long as it lives (it replays into
    their memory). A replay lends them the way a launch does: what the captured launches
    write is write-lent until the replay is synced (`g.replay().sync()`, `g.sync()`), what
    they only read is read-lent. Replays on one stream chain like launches.

    Launch every kernel once before capturing: the first launch of a specialization runs
    the JIT, which cannot happen during a capture.
    """

    def __init__(self, stream: Any = None, backend: Backend | None = None):
        self.backend = backend if backend is not None else TorchBackend()
        self.stream = stream
        self.pendings: list[Pending] = []  # the launches being captured
        self.handles: list[tuple[Tensor, bool]] = []  # what each replay lends, write subsuming read
        self.last: Pending | None = None  # the latest replay, held so that dropping it never waits
        self._graph: Any = None
        self._capture: Any = None
        self._keepalive: list[Any] = []

    def __enter__(self) -> "Graph":
        self._capture = self.backend.capture(self.stream)
        self._graph = self._capture.__enter__()
        _CAPTURING[threading.get_ident()] = self
        return self

    def __exit__(self, *exc) -> None:
        _CAPTURING.pop(threading.get_ident(), None)
        captured = False
        try:
            self._capture.__exit__(*exc)
            captured = exc[0] is None
        finally:
            # The captured launches ran nothing: their lends end with the capture, and a
            # good capture hands their handles to the graph.
            handles: dict[int, tuple[Tensor, bool]] = {}
            # Every captured argument, plain torch/CuPy arrays too: replays use their memory.
            self._keepalive = [a for p in self.pendings for a in p.args] if captured else []
            for p in self.pendings:
                for arg, write in zip(p.args, p.written):
                    for value in arg if isinstance(arg, (list, tuple)) else [arg]:
                        if isinstance(value, Tensor):
                            handles[id(value)] = (value, write or handles.get(id(value), (value, False))[1])
                p.synced = True
            self.pendings = []
            if captured:
                self.handles = list(handles.values())
            else:
                self._graph = None

    def replay(self, stream: Any = None) -> Pending:
        """Enqueues the captured launches once more; returns the replay as a pending launch."""
        if self._graph is None:
            raise LaunchError("this graph holds no capture (it failed, was never made, or was released)")
        backend = self.backend
        device = next((d for d in (_device_of(h._array) for h, _ in self.handles) if d is not None), 0)
        stream = backend.as_stream(stream, device)
        pending = Pending("graph replay", tuple(h for h, _ in self.handles))
        lends, earlier = lend(self.handles, pending)
        try:
            sid = backend.stream_id(stream)
            for completion in earlier:
                completion.block(sid)
            backend.replay(self._graph, stream)
            pending.completion = _EventCompletion(backend, stream)
            pending.stream = sid
        except BaseException:
            restore(lends, pending)
            pending.synced = True
            raise
        self.last = pending
        return pending

    def sync(self) -> None:
        """Waits for the latest replay and returns its lends."""
        if self.last is not None:
            self.last.sync()

    def release(self) -> None:
        """Waits for the latest replay and lets go of the graph and its handles."""
        self.sync()
        self._graph, self.handles, self.last, self._keepalive = None, [], None, []

    def __del__(self):
        if getattr(self, "last", None) is not None:
            try:
                self.last.sync()
            except Exception:  # never raise from a finalizer
                pass
