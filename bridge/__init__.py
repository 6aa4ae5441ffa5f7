"""tilebridge: cuTile Python kernels as cuTile Rust extensions.

    import tilebridge as tb
    ext = tb.build("my_kernels.py")            # translate, build (cached), install, import
    ext.vector_add((n // 1024,), a, b, c, TILE=1024)
    tb.check(ext, vector_add, grid, args)      # same inputs through cuTile Python, compared
    with tb.use_rust(ext): host_code()         # its ct.launch calls run the Rust twins

The pipeline, one module each: `codegen` (translation), `build` (maturin),
`runtime` (loading and launching), `check` (cross-checks against cuTile Python).
"""

from __future__ import annotations

from .codegen import translate
from .errors import (ArgumentError, BuildError, CheckError, DeviceError, KernelCompileError, LaunchError,
                     TilebridgeError, TranslationError)
from .handles import Graph, Kernel, Kernels, Pending, Tensor, TensorBusyError
from .runtime import build, launch, load, use_rust


def kernels(ext) -> Kernels:
    """The extension's kernels with ownership-preserving launches (`.launch()` -> `Pending`)."""
    return Kernels(ext)


__version__ = "0.1.0"

__all__ = ["translate", "build", "load", "launch", "use_rust", "kernels", "Tensor", "Kernel", "Kernels", "Pending", "Graph",
           "TensorBusyError", "TilebridgeError", "TranslationError", "BuildError",
           "LaunchError", "ArgumentError", "KernelCompileError", "DeviceError", "CheckError"]
