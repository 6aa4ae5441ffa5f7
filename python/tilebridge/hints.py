"""The hints a `@ct.kernel(...)` object carries (occupancy, num_ctas, num_worker_warps), as
the translation copies them into the Rust kernel and a launch passes them on."""

from __future__ import annotations

from typing import Any


# The `@ct.kernel(...)` hints a translation carries over.
KERNEL_HINTS = ("occupancy", "num_ctas", "num_worker_warps")


def kernel_hints(kernel: Any) -> dict[str, dict[str, int]]:
    """The kernel's hints as {hint: {target: value}}, target "default" or "sm_XY"
    (`ct.ByTarget` gives several)."""
    opts = getattr(kernel, "_compiler_options", None)
    if opts is None:
        return {}
    out = {}
    for key in KERNEL_HINTS:
        value = getattr(opts, key, None)
        if value is None:
            continue
        by_target = getattr(value, "_by_target", None)
        if by_target is None:
            targets = {"default": value}
        else:
            targets = dict(by_target)
            default = getattr(value, "_default", None)
            if isinstance(default, int):
                targets["default"] = default
        out[key] = {target: int(v) for target, v in targets.items()}
    return out
