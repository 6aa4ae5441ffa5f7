"""tilebridge's exceptions, one hierarchy under `TilebridgeError`. Generated extensions raise the
launch-time ones by name (the runtime crate's `error.rs` maps each failure to one of them)."""

from __future__ import annotations

import ast


class TilebridgeError(Exception):
    """Base of every tilebridge error."""


class TranslationError(TilebridgeError):
    """A Python construct that tilebridge cannot translate, with where it is.

    `location` is ``file:line:column``; `construct` names what was found there.
    """

    def __init__(self, message: str, *, location: str | None = None, construct: str | None = None):
        self.location = location
        self.construct = construct
        self.reason = message
        super().__init__(f"{location}: {message}" if location else message)

    @classmethod
    def at(cls, filename: str, node: ast.AST, message: str) -> "TranslationError":
        line = getattr(node, "lineno", 0)
        col = getattr(node, "col_offset", -1) + 1
        if isinstance(node, (ast.expr, ast.stmt, ast.arg)):
            construct = ast.unparse(node).splitlines()[0]
        else:
            construct = type(node).__name__
        if len(construct) > 60:
            construct = construct[:57] + "..."
        return cls(f"{message}: `{construct}`", location=f"{filename}:{line}:{col}", construct=construct)


class BuildError(TilebridgeError):
    """cargo or maturin failed; the message holds the compiler's output."""


class LaunchError(TilebridgeError):
    """A launch failed."""


class ArgumentError(LaunchError, TypeError, ValueError):
    """A launch argument is wrong: dtype, rank, shape, device, strides, aliasing or grid."""


class KernelCompileError(LaunchError):
    """cutile's JIT (its Rust frontend or tileiras) rejected a kernel specialization."""


class DeviceError(LaunchError):
    """No usable GPU or CUDA driver, or a CUDA call failed."""


class CheckError(TilebridgeError):
    """The Rust translation and cuTile Python disagree."""


__all__ = ["TilebridgeError", "TranslationError", "BuildError", "LaunchError", "ArgumentError",
           "KernelCompileError", "DeviceError", "CheckError"]
