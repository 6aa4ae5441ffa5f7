"""tilebridge: cuTile Python kernels as cuTile Rust extensions.

    import tilebridge as tb
    ext = tb.build("my_kernels.py")            # translate, build (cached), install, import
    ext.vector_add((n // 1024,), a, b, c, TILE=1024)
    with tb.use_rust(ext): host_code()         # its ct.launch calls run the Rust twins
    ops = tb.torch_ops(ext)                    # as torch.ops.<module> custom operators
    with tb.record_launches("log.jsonl"): ...  # for `tilebridge build --launches log.jsonl --aot sm_90`

The pipeline, one sub-package each, data flowing one way: `translator` (Python kernels -> crate
files), `builder` (crate -> wheel -> installed extension), `runtime` (a loaded extension ->
launches and ownership-preserving handles), `verifier` (cross-checks against cuTile Python,
benchmarks, coverage).
"""

from __future__ import annotations

from .builder import build
from .errors import (ArgumentError, BuildError, CheckError, DeviceError, KernelCompileError, LaunchError,
                     TilebridgeError, TranslationError)
from .runtime.launch import launch, load, use_rust
from .runtime.record import record_launches
from .runtime.ownership import Graph, Kernel, Kernels, Pending, Tensor, TensorBusyError
from .runtime.torch_ops import torch_ops
from .translator import translate


def kernels(ext) -> Kernels:
    """The extension's kernels with ownership-preserving launches (`.launch()` -> `Pending`)."""
    return Kernels(ext)


__version__ = "0.1.0"

__all__ = ["translate", "build", "load", "launch", "use_rust", "record_launches", "kernels", "torch_ops", "Tensor", "Kernel", "Kernels", "Pending", "Graph",
           "TensorBusyError", "TilebridgeError", "TranslationError", "BuildError",
           "LaunchError", "ArgumentError", "KernelCompileError", "DeviceError", "CheckError"]
