"""Building: a translated crate -> a wheel (maturin) -> an installed, imported extension.

`build` is the whole of it, cached by a key over the generated crate and the runtime's sources;
`wheel` holds the steps (write the crate, run maturin, install the wheel).
"""

from __future__ import annotations

import sys
import warnings
from typing import Any, Mapping, Sequence

from ..errors import BuildError
from ..runtime.launch import load
from . import wheel

__all__ = ["build"]


def build(target: Any, *, out_dir=None, module: str | None = None,
          dtypes: Mapping[str, Sequence[Any]] | None = None, quiet: bool = False, cubins: bool = False):
    """Translates, builds (unless an identical build exists), installs and imports `target`'s kernels.

    Where the installed extension already matches the translation (same build key),
    nothing is built, so a machine without Rust can use a wheel built elsewhere. With `cubins`,
    a build compiles every specialization checked against cuTile Python to an sm_90 cubin first.
    """
    crate, key = wheel.expected_key(target, module=module, dtypes=dtypes)
    name = crate.module
    installed = wheel.installed_key(name)
    if key is None and installed is not None:
        warnings.warn(f"tilebridge has no Rust sources here (installed from a wheel): using the installed "
                      f"{name} as it is", stacklevel=2)
    elif installed != key:
        loaded = sys.modules.get(name)
        wheel.build(target, out_dir=out_dir, module=module, dtypes=dtypes, quiet=quiet, cubins=cubins, crate=crate)
        if loaded is not None:
            raise BuildError(f"{name} was rebuilt, but this process already imported the previous build, and an "
                             "extension module cannot be reloaded: restart Python to use the new one")
    return load(name)
