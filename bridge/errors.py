"""tilebridge's exceptions. Generated extensions raise the launch-time ones by name."""

from __future__ import annotations

from .codegen.errors import TranslationError


class TilebridgeError(Exception):
    """Base of every tilebridge error except TranslationError (see below)."""


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
