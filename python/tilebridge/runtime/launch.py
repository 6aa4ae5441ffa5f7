"""Runtime: load a built extension and launch its kernels the way `ct.launch` does."""

from __future__ import annotations

import contextlib
import importlib
import os
from collections import Counter
from typing import Any, Sequence

from .. import toolchain
from ..errors import ArgumentError, BuildError
from ..hints import KERNEL_HINTS, kernel_hints
from ..metadata import ExtensionMetadata, KernelMetadata


def load(module: str):
    """Imports a built extension and checks that it is one of tilebridge's."""
    toolchain.runtime_env()
    ext = importlib.import_module(module)
    if not hasattr(ext, "__tilebridge__"):
        raise BuildError(f"{module} is not an extension built by tilebridge")
    return ext


_METADATA: dict[str, ExtensionMetadata] = {}


def extension_metadata(ext) -> ExtensionMetadata:
    """The extension's `__tilebridge__`, parsed once per extension."""
    meta = _METADATA.get(ext.__name__)
    if meta is None:
        meta = _METADATA[ext.__name__] = ExtensionMetadata.from_json(ext.__tilebridge__)
    return meta


def kernel_info(ext, name: str) -> KernelMetadata:
    kernels = extension_metadata(ext).kernels
    if name not in kernels:
        raise ArgumentError(f"{ext.__name__} has no kernel `{name}`; it has {sorted(kernels)}")
    return kernels[name]


class _Plan:
    """How `launch` calls one kernel object's Rust launcher: which `ct.launch` arguments go
    positionally and which by keyword, and the kernel's launch-time hints. Made at its first
    launch, kept for the kernel object (`_PLANS`)."""

    __slots__ = ("kernel", "ext", "name", "launcher", "positional", "leading", "constants", "count", "hints")

    def __init__(self, ext, kernel: Any):
        self.name = name = kernel._pyfunc.__name__ if hasattr(kernel, "_pyfunc") else kernel
        params = kernel_info(ext, name).params
        self.kernel, self.ext, self.launcher = kernel, ext, getattr(ext, name)
        self.positional = tuple(i for i, p in enumerate(params) if not p.by_keyword)
        # the usual order, arrays before constants: the positional arguments are a slice
        self.leading = len(self.positional) if self.positional == tuple(range(len(self.positional))) else None
        self.constants = tuple((p.name, i) for i, p in enumerate(params) if p.by_keyword)
        self.count = len(params)
        self.hints = launch_hints(kernel)

    def wrong_count(self, args: Sequence[Any]) -> ArgumentError:
        params = kernel_info(self.ext, self.name).params
        return ArgumentError(f"kernel `{self.name}` takes {len(params)} arguments "
                             f"({', '.join(p.name for p in params)}), got {len(args)}")


_PLANS: dict[int, _Plan] = {}  # id(kernel object) -> its plan; the plan holds the object, so the id stays its


def launch(ext, stream: Any, grid: Any, kernel: Any, args: Sequence[Any]) -> None:
    """A drop-in for `ct.launch(stream, grid, kernel, args)` that runs the Rust twin of `kernel`.

    Like `ct.launch` it only enqueues the kernel on `stream`.
    """
    plan = _PLANS.get(id(kernel))
    if plan is None or plan.kernel is not kernel or plan.ext is not ext:
        plan = _PLANS[id(kernel)] = _Plan(ext, kernel)
    if len(args) != plan.count:
        raise plan.wrong_count(args)
    positional = args[:plan.leading] if plan.leading is not None else [args[i] for i in plan.positional]
    plan.launcher(grid, *positional, stream=stream, sync=False, hints=plan.hints,
                  **{n: args[i] for n, i in plan.constants})


_HINTS: dict[int, tuple[Any, tuple]] = {}


def launch_hints(kernel: Any) -> tuple | None:
    """(occupancy, num_ctas, num_worker_warps) of the kernel object being launched, for this GPU:
    a `ct.kernel(...).replace_hints(...)` object (TileGym's autotuned configurations) carries
    its own, which the Rust launch honours as cuTile Python's does."""
    if getattr(kernel, "_compiler_options", None) is None:
        return None
    cached = _HINTS.get(id(kernel))
    if cached is not None and cached[0] is kernel:
        return cached[1]
    arch = _arch()
    by_hint = kernel_hints(kernel)  # {hint: {"default" | "sm_XY": value}}, as the translation reads them
    values = [by_hint.get(h, {}).get(arch, by_hint.get(h, {}).get("default")) for h in KERNEL_HINTS]
    hints = tuple(values) if any(v is not None for v in values) else None
    _HINTS[id(kernel)] = (kernel, hints)
    return hints


def _arch() -> str:
    """The current GPU as `sm_XY`."""
    try:
        import torch

        major, minor = torch.cuda.get_device_capability()
        return f"sm_{major}{minor}"
    except Exception:
        return "sm_90"


class Routing:
    """What `use_rust` sent where: launches per (file, kernel) that ran in Rust, and the
    ones that went to cuTile Python because no extension has that kernel."""

    def __init__(self) -> None:
        self.rust: Counter[tuple[str, str]] = Counter()
        self.python: Counter[tuple[str, str]] = Counter()


@contextlib.contextmanager
def use_rust(*exts):
    """Runs unchanged cuTile Python host code on the Rust twins of its kernels.

        with tb.use_rust(ext) as routing:
            tilegym.ops.softmax(x)         # its ct.launch now launches the Rust kernel
        routing.rust                       # Counter({("softmax.py", "_softmax_kernel"): 1})

    Inside, `ct.launch` of a kernel one of `exts` translated (same file name and function
    name) runs the Rust launcher; any other kernel runs in cuTile Python as before. A Rust
    launch that fails raises; it never falls back quietly.
    """
    import cuda.tile as ct

    table = {}
    for ext in exts:
        for name, info in extension_metadata(ext).kernels.items():
            table[(info.file, name)] = ext
    original = ct.launch
    routing = Routing()

    def routed(stream, grid, kernel, args):
        fn = getattr(kernel, "_pyfunc", None)
        key = (os.path.basename(fn.__code__.co_filename), fn.__name__) if fn is not None else ("?", str(kernel))
        ext = table.get(key)
        if ext is None:
            routing.python[key] += 1
            return original(stream, grid, kernel, args)
        routing.rust[key] += 1
        return launch(ext, stream, grid, kernel, args)

    ct.launch = routed
    try:
        yield routing
    finally:
        ct.launch = original
