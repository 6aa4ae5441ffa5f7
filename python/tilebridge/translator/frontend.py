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
from . import closures, context_managers


@dataclass
class KernelSource:
    """One `@ct.kernel` function, ready for analysis."""

    name: str
    func: ast.FunctionDef
    filename: str  # the file the function is defined in
    source_lines: list[str]  # that file's lines, for comments in the generated code
    globals: dict[str, Any]
    options: dict[str, dict[str, int]] = field(default_factory=dict)  # hint -> {"default" | "sm_XY": value}
    kernel: Any = None  # the @ct.kernel object itself (for cuTile Python's own front end: `oracle`)

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


def read_file(path: str | Path) -> types.ModuleType:
    """The module of a kernel file: imported where it imports; read without running it (see
    `static_import`) where importing it fails for any reason (a package or a name it imports is
    missing, it raises, skips or exits while importing). A file that is not UTF-8 Python source
    is a `TranslationError` at the place it breaks."""
    path = Path(path)
    try:
        source = path.read_bytes().decode("utf-8")
    except OSError as e:
        raise TranslationError(f"{path}: cannot be read ({e.strerror})") from None
    except UnicodeDecodeError as e:
        raise TranslationError(f"the file is not UTF-8 text (byte {e.start}: {e.object[e.start]:#04x})",
                               location=f"{path.name}:1:1", construct="file") from None
    try:
        ast.parse(source, filename=str(path))
    except SyntaxError as e:
        raise TranslationError(f"invalid Python: {e.msg}", location=f"{path.name}:{e.lineno}:{e.offset}",
                               construct=(e.text or "").strip()[:60] or "file") from None
    try:
        return import_file(path)
    except (KeyboardInterrupt, GeneratorExit):
        raise
    except BaseException as imported:  # noqa: B036 - a skip or an exit at import is not ours to end on
        # An operator library's file imports torch or its own package: read it without running it.
        from .static_import import load_file

        try:
            return load_file(path)
        except Exception as e:
            raise TranslationError(f"{path.name}: importing it failed ({type(imported).__name__}: {imported}), "
                                   f"and so did reading it without running it ({type(e).__name__}: {e})") from None


def kernels_in(target: Any) -> list[Any]:
    """The kernel objects in a module, a file path, a kernel, or an iterable of those,
    in definition order."""
    if isinstance(target, (str, Path)):
        target = read_file(target)
    if isinstance(target, types.ModuleType):
        found = [v for v in vars(target).values() if _is_kernel(v)]
        found = [k for k in found if getattr(k._pyfunc, "__module__", None) == target.__name__]
        return sorted(found, key=lambda k: k._pyfunc.__code__.co_firstlineno)
    if _is_kernel(target):
        return [target]
    if isinstance(target, Iterable):
        return [k for item in target for k in kernels_in(item)]
    raise TypeError(f"expected a @ct.kernel object, a module or a file path, got {type(target).__name__}")


@dataclass(frozen=True)
class NestedKernel:
    """A kernel a file defines inside a function or class, where only the module's own names can
    be found."""

    name: str
    line: int
    column: int
    outer: str  # the outermost function or class around it

    def __str__(self) -> str:
        return f"{self.name} (line {self.line}, inside {self.outer})"


def nested_kernels(path: str | Path) -> list[NestedKernel]:
    tree = ast.parse(Path(path).read_text())
    found: dict[tuple[int, int], NestedKernel] = {}
    for outer in tree.body:
        if isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for node in ast.walk(outer):
                if node is not outer and isinstance(node, ast.FunctionDef) and any(
                        ast.unparse(d.func if isinstance(d, ast.Call) else d).endswith("kernel")
                        for d in node.decorator_list):
                    found.setdefault((node.lineno, node.col_offset),
                                     NestedKernel(node.name, node.lineno, node.col_offset + 1, outer.name))
    return list(found.values())


def closure_values(func: Any) -> dict[str, Any]:
    """The values of the variables a kernel closes over (one a factory function makes), which
    cuTile Python reads as it reads the module's names; a variable not yet bound is left out."""
    values = {}
    for name, cell in zip(func.__code__.co_freevars, func.__closure__ or ()):
        try:
            values[name] = cell.cell_contents
        except ValueError:
            continue
    return values


def written_out(fdef: ast.FunctionDef, globals_: dict[str, Any],
                error: context_managers.ErrorAt) -> ast.FunctionDef:
    """A kernel's or helper's AST as the rest of the pipeline reads it: its `with` blocks written
    out (`context_managers`), the names of the functions nested in it renamed apart (`closures`)."""
    return closures.rename_apart(context_managers.expand(fdef, globals_, error))


def load(kernel: Any) -> KernelSource:
    """Reads one kernel object's function source and AST, with file line numbers."""
    if not _is_kernel(kernel):
        raise TypeError(f"{kernel!r} is not a @ct.kernel object")
    func = kernel._pyfunc
    filename = inspect.getsourcefile(func) or "<unknown>"
    lines, first = inspect.getsourcelines(func)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first - 1)
    indent = len(lines[0]) - len(lines[0].lstrip())  # a kernel defined inside a function: its columns
    for node in ast.walk(tree) if indent else ():
        if hasattr(node, "col_offset"):
            node.col_offset += indent
            node.end_col_offset = node.end_col_offset + indent if node.end_col_offset is not None else None
    fdef = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    try:
        source_lines = Path(filename).read_text().splitlines()
    except OSError:
        source_lines = []
    fdef = written_out(fdef, func.__globals__,
                       lambda node, message: TranslationError.at(Path(filename).name, node, message))
    return KernelSource(
        name=func.__name__,
        func=fdef,
        filename=filename,
        source_lines=source_lines,
        globals={**func.__globals__, **closure_values(func)} if func.__closure__ else func.__globals__,
        options=kernel_hints(kernel),
        kernel=kernel,
    )


def load_all(target: Any) -> list[KernelSource]:
    kernels = kernels_in(target)
    if not kernels:
        nested = nested_kernels(target) if isinstance(target, (str, Path)) else []
        where = Path(target).name if isinstance(target, (str, Path)) else repr(target)
        if nested:
            raise TranslationError(f"{where}: its kernels are defined inside functions or classes, and tilebridge "
                                   f"translates a file's module-level kernels only: {', '.join(map(str, nested))}")
        raise TranslationError(f"no @ct.kernel functions found in {where}")
    return [load(k) for k in kernels]
