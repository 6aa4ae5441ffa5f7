"""Frontend: cuTile Python kernel objects or files -> function ASTs with what they refer to.

`@ct.kernel` returns a dispatcher object that keeps the original function as
`_pyfunc`; its source gives the AST and its globals resolve module constants,
aliases (``ConstInt = ct.Constant[int]``) and helper functions. Nothing here needs a GPU.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import sys
import textwrap
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..errors import TranslationError
from ..hints import kernel_hints


@dataclass
class KernelSource:
    """One `@ct.kernel` function, ready for analysis."""

    name: str
    func: ast.FunctionDef
    filename: str  # the file the function is defined in
    source_lines: list[str]  # that file's lines, for comments in the generated code
    globals: dict[str, Any]
    options: dict[str, dict[str, int]] = field(default_factory=dict)  # hint -> {"default" | "sm_XY": value}

    @property
    def display_file(self) -> str:
        return Path(self.filename).name

    def line_text(self, lineno: int) -> str:
        if 1 <= lineno <= len(self.source_lines):
            return self.source_lines[lineno - 1].strip()
        return ""


def _is_kernel(obj: Any) -> bool:
    return hasattr(obj, "_pyfunc") and callable(getattr(obj, "_pyfunc"))


def import_file(path: str | Path) -> types.ModuleType:
    """Imports a kernel file once per process (a second call returns the same module)."""
    path = Path(path).resolve()
    name = f"_tilebridge_src_{path.stem}"
    if name in sys.modules and getattr(sys.modules[name], "__file__", None) == str(path):
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TranslationError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def kernels_in(target: Any) -> list[Any]:
    """The kernel objects in a module, a file path, a kernel, or an iterable of those,
    in definition order."""
    if isinstance(target, (str, Path)):
        try:
            target = import_file(target)
        except ImportError:
            # An operator library's file imports torch or its own package: read it without running it.
            from .static_import import load_file

            target = load_file(target)
    if isinstance(target, types.ModuleType):
        found = [v for v in vars(target).values() if _is_kernel(v)]
        found = [k for k in found if getattr(k._pyfunc, "__module__", None) == target.__name__]
        return sorted(found, key=lambda k: k._pyfunc.__code__.co_firstlineno)
    if _is_kernel(target):
        return [target]
    if isinstance(target, Iterable):
        return [k for item in target for k in kernels_in(item)]
    raise TypeError(f"expected a @ct.kernel object, a module or a file path, got {type(target).__name__}")


def load(kernel: Any) -> KernelSource:
    """Reads one kernel object's function source and AST, with file line numbers."""
    if not _is_kernel(kernel):
        raise TypeError(f"{kernel!r} is not a @ct.kernel object")
    func = kernel._pyfunc
    filename = inspect.getsourcefile(func) or "<unknown>"
    lines, first = inspect.getsourcelines(func)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first - 1)
    fdef = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    try:
        source_lines = Path(filename).read_text().splitlines()
    except OSError:
        source_lines = []
    return KernelSource(
        name=func.__name__,
        func=fdef,
        filename=filename,
        source_lines=source_lines,
        globals=func.__globals__,
        options=kernel_hints(kernel),
    )


def load_all(target: Any) -> list[KernelSource]:
    kernels = kernels_in(target)
    if not kernels:
        raise TranslationError(f"no @ct.kernel functions found in {target!r}")
    return [load(k) for k in kernels]
