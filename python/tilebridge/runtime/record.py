"""Launches recorded as a program makes them: each distinct specialization launched through cuTile
Python's `ct.launch` as one JSON line of a launch log, which `tilebridge build --launches LOG`
reads (the dtypes each launcher takes; with `--aot`, the specializations shipped compiled).

    with tb.record_launches("launches.jsonl"):
        run_my_model()          # on cuTile Python, as usual
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
from pathlib import Path
from typing import Any, Iterator

from ..hints import KERNEL_HINTS
from .launch import launch_hints


def launch_record(kernel: Any, args: Any) -> dict[str, Any] | None:
    """One launch as a launch log holds it: the kernel's file and name, each argument by parameter
    name (an array's dtype, shape and strides in elements, or a number, or its type's name), the
    kernel object's hints. None for an object that is not a `@ct.kernel`."""
    fn = getattr(kernel, "_pyfunc", None)
    if fn is None:
        return None
    values: dict[str, Any] = {}
    for name, value in zip(inspect.signature(fn).parameters, args):
        if hasattr(value, "stride") and hasattr(value, "dtype"):  # a torch tensor
            values[name] = {"dtype": str(value.dtype).replace("torch.", ""), "shape": list(value.shape),
                            "strides": list(value.stride())}
        elif hasattr(value, "__cuda_array_interface__") and hasattr(value, "dtype"):  # CuPy and the like
            values[name] = {"dtype": str(value.dtype), "shape": list(value.shape),
                            "strides": [s // value.dtype.itemsize for s in value.strides]}
        elif isinstance(value, (bool, int, float)):
            values[name] = value
        else:
            values[name] = type(value).__name__
    return {"file": os.path.basename(fn.__code__.co_filename), "kernel": fn.__name__, "args": values,
            "hints": dict(zip(KERNEL_HINTS, launch_hints(kernel) or ()))}


@contextlib.contextmanager
def record_launches(path: str | Path) -> Iterator[None]:
    """Appends to `path` one line per distinct launch made through `ct.launch` while inside."""
    import cuda.tile as ct

    seen: set[str] = set()
    launch = ct.launch

    def recorded(stream, grid, kernel, args):
        entry = launch_record(kernel, args)
        line = json.dumps(entry, sort_keys=True) if entry is not None else None
        if line is not None and line not in seen:
            seen.add(line)
            with open(path, "a") as log:
                log.write(line + "\n")
        return launch(stream, grid, kernel, args)

    ct.launch = recorded
    try:
        yield
    finally:
        ct.launch = launch
