"""What a generated extension says about its kernels: its `tilebridge.json`, which the extension
also carries as its `__tilebridge__` string.

The translation writes it (`ExtensionMetadata.to_json`); the builder adds the build key; the
runtime, the verifier and the command line read it (`ExtensionMetadata.from_json`). The text is
JSON with sorted keys, indented by 2, one trailing newline:

    {"module": ..., "source": ..., "build_key": ... (once built),
     "kernels": {name: {"file", "line", "params": [...], "dtypes": {class: [dtype, ...]},
                        "safe", "unsafe_reasons": [...], "in_place": [[input, output], ...]}}}

Each parameter has a "name" and a "kind", and more by kind: an array ("array", or "array_list"
for a list of arrays) its "rank", "written", "tile" (the tile each block stores, or null) and
"dtype_class"; a "scalar" or "constant" (a `ct.Constant`, passed by keyword) its "dtype";
an "unused" one nothing more.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Union

ARRAY_KINDS = ("array", "array_list")
# The keys a parameter has besides "name" and "kind", by kind.
_PARAM_KEYS = {"array": ("rank", "written", "tile", "dtype_class"),
               "array_list": ("rank", "written", "tile", "dtype_class"),
               "scalar": ("dtype",), "constant": ("dtype",), "unused": ()}


@dataclass(frozen=True)
class ParamMetadata:
    """One parameter of a kernel, in the kernel's order."""

    name: str
    kind: str  # "array", "array_list", "scalar", "constant" or "unused"
    rank: int | None = None  # arrays
    written: bool = False  # arrays: whether the kernel writes it
    tile: tuple[Union[int, str], ...] | None = None  # arrays: the tile each block stores (a safe output)
    dtype_class: str | None = None  # arrays
    dtype: str | None = None  # scalars and constants

    def __post_init__(self) -> None:
        if self.kind not in _PARAM_KEYS:
            raise ValueError(f"parameter {self.name!r}: unknown kind {self.kind!r}")

    @property
    def is_array(self) -> bool:
        """An array or a list of arrays: what a launch lends."""
        return self.kind in ARRAY_KINDS

    @property
    def by_keyword(self) -> bool:
        """A `ct.Constant`: the launcher takes it by keyword, everything else by position."""
        return self.kind == "constant"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        for key in _PARAM_KEYS[self.kind]:
            value = getattr(self, key)
            out[key] = list(value) if key == "tile" and value is not None else value
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ParamMetadata":
        extra = {key: d[key] for key in _PARAM_KEYS.get(d["kind"], ()) if key in d}
        if extra.get("tile") is not None:
            extra["tile"] = tuple(extra["tile"])
        return cls(d["name"], d["kind"], **extra)


@dataclass(frozen=True)
class KernelMetadata:
    """One kernel: where it is, its parameters, the dtypes its launcher takes, and its safety."""

    file: str  # the kernel's file name (as `ct.launch` routing matches it)
    line: int  # its `def` line
    params: tuple[ParamMetadata, ...]
    dtypes: dict[str, list[str]] = field(default_factory=dict)  # dtype class -> the dtypes built
    safe: bool = True
    unsafe_reasons: list[str] = field(default_factory=list)
    in_place: list[tuple[str, str]] = field(default_factory=list)  # (input, output) that may be one array
    checked: str = ""  # what the check against cuTile Python's front end found

    @property
    def positional(self) -> list[ParamMetadata]:
        """The parameters the launcher takes by position, in order."""
        return [p for p in self.params if not p.by_keyword]

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "params": [p.to_dict() for p in self.params],
                "dtypes": {c: list(ds) for c, ds in self.dtypes.items()}, "safe": self.safe,
                "unsafe_reasons": list(self.unsafe_reasons), "in_place": [list(pair) for pair in self.in_place],
                "checked": self.checked}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "KernelMetadata":
        return cls(d["file"], d["line"], tuple(ParamMetadata.from_dict(p) for p in d["params"]),
                   {c: list(ds) for c, ds in d["dtypes"].items()}, d["safe"], list(d["unsafe_reasons"]),
                   [(a, b) for a, b in d["in_place"]], d.get("checked", ""))


@dataclass(frozen=True)
class ExtensionMetadata:
    """A generated extension: its module name, the Python source it was translated from, its
    kernels by name, and (once built) its build key."""

    module: str
    source: str
    kernels: dict[str, KernelMetadata]
    build_key: str | None = None

    def with_build_key(self, key: str) -> "ExtensionMetadata":
        return dataclasses.replace(self, build_key=key)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"module": self.module, "source": self.source,
                               "kernels": {name: k.to_dict() for name, k in self.kernels.items()}}
        if self.build_key is not None:
            out["build_key"] = self.build_key
        return out

    def to_json(self) -> str:
        """The text of `tilebridge.json` (and of the extension's `__tilebridge__`)."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ExtensionMetadata":
        return cls(d["module"], d["source"], {name: KernelMetadata.from_dict(k) for name, k in d["kernels"].items()},
                   d.get("build_key"))

    @classmethod
    def from_json(cls, text: str) -> "ExtensionMetadata":
        return cls.from_dict(json.loads(text))


def build_key_of(text: str) -> str | None:
    """The build key in a `tilebridge.json` text, None where it has none (not built yet); reads no
    more of it, so a build folder of any earlier layout reads as stale rather than failing."""
    return json.loads(text).get("build_key")
