"""Reading kernel files without running them.

Operator libraries such as TileGym import torch and their own packages at module
level; translation needs none of that. `load_file` parses the file, runs only its
imports of `cuda.tile` (and of `math`/`numpy`), evaluates module-level assignments
that need nothing else (constants, `ConstInt = ct.Constant[int]`), and stands in for
torch with its dtypes. Each `@ct.kernel` function then becomes a real cuTile Python
kernel object, compiled from the file's source in that namespace, so the rest of the
pipeline (and cuTile Python's own exporter, for the Tile IR diff) takes it as usual.
"""

from __future__ import annotations

import ast
import copy
import importlib
import types
from pathlib import Path
from typing import Any

from ..dtypes import torch_names

_REAL_IMPORTS = ("cuda.tile", "math", "numpy", "contextlib")


class Unresolved:
    """A module-level name that could not be evaluated without running the file."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str) -> "Unresolved":
        return Unresolved(f"{self._name}.{attr}")

    def __call__(self, *args: Any, **kwargs: Any) -> "Unresolved":
        return Unresolved(f"{self._name}(...)")

    def __getitem__(self, item: Any) -> "Unresolved":
        return Unresolved(f"{self._name}[...]")

    def __iter__(self):
        # Not iterable: unpacking one (`f(*shape)`, `a, b = ...`) fails at once, where iterating
        # through `__getitem__` would never end.
        raise TypeError(f"{self._name} is not known without running the file")

    def __repr__(self) -> str:
        return f"<unresolved {self._name}>"


class _TorchStandIn(types.ModuleType):
    """torch, as far as kernels use it: its dtypes, as the cuTile dtypes they mean; anything else
    (`torch.Tensor` in an annotation) is unresolved, and the translation says so where it is used.
    A module, as cuTile Python's own front end takes `torch.float16` in a kernel only from one."""

    def __getattr__(self, attr: str) -> Unresolved:
        return Unresolved(f"torch.{attr}")


class _TensorStandIn:
    """torch.Tensor, as an annotation of an array parameter."""


_TensorStandIn.__module__, _TensorStandIn.__name__, _TensorStandIn.__qualname__ = "torch", "Tensor", "Tensor"


def _torch_stand_in() -> _TorchStandIn:
    import cuda.tile as ct

    torch = _TorchStandIn("torch")
    torch.Tensor = _TensorStandIn
    for name, ct_name in torch_names().items():
        setattr(torch, name, getattr(ct, ct_name))
    return torch


def _import(name: str) -> Any:
    if name == "torch":
        return _torch_stand_in()
    if name.split(".")[0] in ("math", "numpy", "contextlib") or name.startswith("cuda.tile"):
        try:
            return importlib.import_module(name)
        except ImportError:  # a name the installed cuda-tile does not have: found missing where it is used
            return Unresolved(name)
    return Unresolved(name)


def _decorator_names(node: ast.FunctionDef) -> list[str]:
    names = []
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        names.append(ast.unparse(target))
    return names


_LOADED: dict[Path, types.ModuleType] = {}


def _sibling(path: Path, level: int, module: str | None) -> Path | None:
    """The file a relative import names (`from .gelu import f` -> gelu.py beside `path`)."""
    base = path.parent
    for _ in range(level - 1):
        base = base.parent
    target = base.joinpath(*module.split(".")) if module else base
    for candidate in (target.with_suffix(".py"), target / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def load_file(path: str | Path) -> types.ModuleType:
    """A module object holding the file's kernels (and what they refer to), without executing it.
    Relative imports of sibling files are read the same way (each file once)."""
    path = Path(path).resolve()
    if path in _LOADED:
        return _LOADED[path]
    tree = ast.parse(path.read_text(), filename=str(path))
    module = types.ModuleType(f"_tilebridge_static_{path.stem}")
    module.__file__ = str(path)
    _LOADED[path] = module  # before reading: sibling files may import this one back
    try:
        _read_into(module, tree, path)
    except BaseException:
        del _LOADED[path]  # nothing half-read stays for the next caller
        raise
    return module


def _read_into(module: types.ModuleType, tree: ast.Module, path: Path) -> None:
    ns = module.__dict__
    ns["__builtins__"] = __builtins__
    ns["__tilebridge_experimental__"] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    ns[alias.asname] = _import(alias.name)
                else:
                    top = alias.name.split(".")[0]
                    ns[top] = _import(top)
        elif isinstance(node, ast.ImportFrom):
            base = ("." * node.level) + (node.module or "")
            for alias in node.names:
                target = alias.asname or alias.name
                if node.level == 0 and base.startswith(_REAL_IMPORTS):
                    mod = importlib.import_module(base)
                    ns[target] = getattr(mod, alias.name, None) or _import(f"{base}.{alias.name}")
                elif node.level and (sibling := _sibling(path, node.level, node.module)) is not None:
                    ns[target] = getattr(load_file(sibling), alias.name, Unresolved(f"{base}.{alias.name}"))
                else:
                    ns[target] = Unresolved(f"{base}.{alias.name}")
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            try:
                value = eval(compile(ast.Expression(node.value), str(path), "eval"), ns)  # noqa: S307
            except Exception:
                value = None
            for t in targets:
                _bind(ns, t, value)
        elif isinstance(node, ast.FunctionDef):
            decorators = _decorator_names(node)
            kernel = next((d for d in decorators if d.endswith("kernel") and not d.endswith("experimental_kernel")),
                          None)
            if "experimental_kernel" in decorators:
                ns["__tilebridge_experimental__"].add(node.name)
            # Define the function itself (kernel and context-manager decorators applied, others
            # dropped), so its globals are this namespace and cuTile Python sees its source lines.
            keep = [d for d in node.decorator_list if (kernel and ast.unparse(
                d.func if isinstance(d, ast.Call) else d) == kernel) or ast.unparse(d).endswith("contextmanager")]
            fdef = copy.copy(node)
            fdef.decorator_list = keep
            code = compile(ast.fix_missing_locations(ast.Module(body=[fdef], type_ignores=[])), str(path), "exec")
            try:
                exec(code, ns)  # noqa: S102 - defines one function; runs no user code
            except Exception as e:  # a decorator we cannot evaluate
                ns[node.name] = Unresolved(f"{node.name} ({e})")


def _bind(ns: dict, target: ast.expr, value: Any) -> None:
    """Binds a module-level assignment's target: a name, or the names of a tuple unpacked from a
    tuple of as many items (`M, N = (64, 128)`); each one unknown where the value is."""
    if isinstance(target, ast.Name):
        ns[target.id] = value if value is not None else Unresolved(target.id)
    elif isinstance(target, (ast.Tuple, ast.List)):
        known = isinstance(value, tuple) and len(value) == len(target.elts)
        for i, item in enumerate(target.elts):
            _bind(ns, item, value[i] if known else None)


def is_experimental(kernel: Any) -> bool:
    func = getattr(kernel, "_pyfunc", None)
    return bool(func and func.__name__ in func.__globals__.get("__tilebridge_experimental__", ()))
