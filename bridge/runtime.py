"""Runtime: load a built extension and launch its kernels the way `ct.launch` does."""

from __future__ import annotations

import importlib
import json
import warnings
from typing import Any, Mapping, Sequence

from . import build as _build
from . import toolchain
from .errors import ArgumentError, BuildError


def load(module: str):
    """Imports a built extension and checks that it is one of tilebridge's."""
    toolchain.runtime_env()
    ext = importlib.import_module(module)
    if not hasattr(ext, "__tilebridge__"):
        raise BuildError(f"{module} is not an extension built by tilebridge")
    return ext


def build(target: Any, *, out_dir=None, module: str | None = None,
          dtypes: Mapping[str, Sequence[Any]] | None = None, quiet: bool = False):
    """Translates, builds (unless an identical build exists), installs and imports `target`'s kernels.

    Where the installed extension already matches the translation (same build key),
    nothing is built, so a machine without Rust can use a wheel built elsewhere.
    """
    name, key = _build.expected_key(target, module=module, dtypes=dtypes)
    installed = _build.installed_key(name)
    if key is None and installed is not None:
        warnings.warn(f"tilebridge has no Rust sources here (installed from a wheel): using the installed "
                      f"{name} as it is", stacklevel=2)
    elif installed != key:
        _build.build(target, out_dir=out_dir, module=module, dtypes=dtypes, quiet=quiet)
    return load(name)


_METADATA: dict[str, dict] = {}


def kernel_info(ext, name: str) -> dict:
    meta = _METADATA.get(ext.__name__)
    if meta is None:
        meta = _METADATA[ext.__name__] = json.loads(ext.__tilebridge__)["kernels"]
    if name not in meta:
        raise ArgumentError(f"{ext.__name__} has no kernel `{name}`; it has {sorted(meta)}")
    return meta[name]


def launch_kwargs(ext, name: str, args: Sequence[Any]) -> tuple[list[Any], dict[str, Any]]:
    """Splits `ct.launch`-style positional args into the launcher's positional and keyword args."""
    params = kernel_info(ext, name)["params"]
    if len(args) != len(params):
        raise ArgumentError(f"kernel `{name}` takes {len(params)} arguments "
                            f"({', '.join(p['name'] for p in params)}), got {len(args)}")
    positional = [a for a, p in zip(args, params) if p["kind"] != "constant"]
    constants = {p["name"]: a for a, p in zip(args, params) if p["kind"] == "constant"}
    return positional, constants


def launch(ext, stream: Any, grid: Any, kernel: Any, args: Sequence[Any]) -> None:
    """A drop-in for `ct.launch(stream, grid, kernel, args)` that runs the Rust twin of `kernel`.

    Like `ct.launch` it only enqueues the kernel on `stream`.
    """
    name = getattr(getattr(kernel, "_pyfunc", kernel), "__name__", kernel)
    positional, constants = launch_kwargs(ext, name, args)
    getattr(ext, name)(grid, *positional, **constants, stream=stream, sync=False)
