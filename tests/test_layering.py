"""The package's shape, pinned: data flows one way through the stages (translator -> builder ->
runtime; the verifier above them all), emit reads only the IR, no import cycles, no private
names imported across modules, no module over 800 lines, and every `ct.*` handler registered
under a real name of cuTile Python."""

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "python" / "tilebridge"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(name: str, *, runtime_only: bool = False) -> set[str]:
    """The tilebridge modules `name` imports (relative imports resolved; a `from pkg import mod` of
    a submodule counts as that submodule). With `runtime_only`, imports under `if TYPE_CHECKING:`
    are left out."""
    path = MODULES[name]
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    skip: set[int] = set()
    if runtime_only:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
                skip |= {id(n) for n in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "tilebridge"}
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "tilebridge":
                continue
            found.add(target)
            found |= {f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES}
    return {m for m in found if m in MODULES} - {name}


def in_stage(module: str, stage: str) -> bool:
    return module == f"tilebridge.{stage}" or module.startswith(f"tilebridge.{stage}.")


# What each stage may never import.
FORBIDDEN = {
    "translator": ("builder", "runtime", "verifier", "cli"),
    "runtime": ("translator", "builder", "verifier", "cli"),
    "builder": ("verifier", "cli"),
    "verifier": ("cli",),
}


@pytest.mark.parametrize("stage", sorted(FORBIDDEN))
def test_stages_import_one_way(stage):
    wrong = [(m, i) for m in MODULES if in_stage(m, stage) for i in imports(m)
             if any(in_stage(i, other) for other in FORBIDDEN[stage])]
    assert not wrong, f"{stage} must not import these: {wrong}"


def test_shared_modules_import_no_stage():
    for name in ("errors", "dtypes", "hints", "toolchain", "metadata"):
        module = f"tilebridge.{name}"
        if module in MODULES:
            stages = [i for i in imports(module) if any(in_stage(i, s) for s in (*FORBIDDEN, "cli"))]
            assert not stages, f"{module} imports {stages}"


def test_emit_reads_only_the_ir():
    # module_items names the functions the kernel module declares, which the IR's calls name: the
    # IR's vocabulary, as `ir` is (it imports nothing but `ir`).
    allowed = {"tilebridge.translator.ir", "tilebridge.translator.module_items", "tilebridge.translator.rust_syntax",
               "tilebridge.dtypes", "tilebridge.metadata", "tilebridge.errors", "tilebridge.translator"}
    for m in MODULES:
        if in_stage(m, "translator.emit"):
            wrong = {i for i in imports(m) if i not in allowed and not in_stage(i, "translator.emit")}
            assert not wrong, f"{m} imports {wrong}"


def test_no_import_cycles():
    graph = {m: imports(m, runtime_only=True) for m in MODULES}
    # A package's __init__ that re-exports its submodules is not a cycle with them.
    graph = {m: {i for i in deps if not (m.startswith(i + ".") and MODULES[i].name == "__init__.py")}
             for m, deps in graph.items()}
    state: dict[str, int] = {}

    def visit(m: str, trail: list[str]) -> None:
        state[m] = 1
        for i in graph[m]:
            if state.get(i) == 1:
                raise AssertionError("import cycle: " + " -> ".join(trail[trail.index(i):] + [m, i]))
            if i not in state:
                visit(i, trail + [m])
        state[m] = 2

    for m in graph:
        if m not in state:
            visit(m, [])


# The one module that may use cuTile Python's internals (behind its version check).
CUTILE_INTERNALS = "tilebridge.translator.cutile_frontend"


def test_no_private_names_across_modules():
    wrong = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                if name == CUTILE_INTERNALS and (node.module or "").startswith("cuda.tile"):
                    continue
                wrong += [f"{name}: from {'.' * node.level}{node.module or ''} import {a.name}"
                          for a in node.names if a.name.startswith("_")]
    assert not wrong, wrong


def test_cutile_internals_in_one_module():
    """cuTile Python's private modules (`cuda.tile._compile` ...) are used in `cutile_frontend` only."""
    users = [name for name, path in MODULES.items()
             if name != CUTILE_INTERNALS and re.search(r"cuda\.tile\._|from cuda\.tile import _", path.read_text())]
    assert not users, users
    assert "cuda.tile._" in MODULES[CUTILE_INTERNALS].read_text()


def module_aliases(tree: ast.Module, package: str) -> dict[str, str]:
    """The local names under which a module of `package` (a test: "") binds tilebridge modules
    (`from ..builder import wheel as builder` -> {"builder": "tilebridge.builder.wheel"})."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            base = package.split(".")[:len(package.split(".")) - (node.level - 1)] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            found |= {a.asname or a.name: f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES}
        elif isinstance(node, ast.Import):
            found |= {a.asname: a.name for a in node.names if a.asname and a.name in MODULES}
    return found


def test_no_private_names_of_other_modules_used():
    """`module._name` of another tilebridge module (which the imports test cannot see), in the
    package and in the tests."""
    wrong = []
    tests = sorted(Path(__file__).parent.glob("test_*.py"))
    for label, path, package in [(name, path, name if path.name == "__init__.py" else name.rpartition(".")[0])
                                 for name, path in MODULES.items()] + [(p.name, p, "") for p in tests]:
        tree = ast.parse(path.read_text())
        aliases = module_aliases(tree, package)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                    and isinstance(node.value, ast.Name) and node.value.id in aliases):
                wrong.append(f"{label}: {node.value.id}.{node.attr}")
            if package == "" and isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tilebridge"):
                wrong += [f"{label}: from {node.module} import {a.name}" for a in node.names if a.name.startswith("_")]
    assert not wrong, wrong


def test_no_module_over_800_lines():
    long = {name: n for name, path in MODULES.items() if (n := len(path.read_text().splitlines())) > 800}
    assert not long, long


def test_every_op_handler_is_registered_under_a_name_of_cuda_tile():
    ct = pytest.importorskip("cuda.tile")
    from tilebridge.translator.lower.ops import OPS

    def resolves(name: str) -> bool:  # `Array.from_foreign`: a name of a class of cuda.tile
        owner = ct
        for part in name.split("."):
            if not hasattr(owner, part):
                return False
            owner = getattr(owner, part)
        return True

    assert len(OPS) > 40
    assert sorted(name for name in OPS if not resolves(name)) == []


def test_an_unregistered_op_is_a_translation_error(tmp_path):
    pytest.importorskip("cuda.tile")
    import tilebridge as tb
    from tilebridge.builder.wheel import RUNTIME_CRATE
    from tilebridge.translator.lower.ops import OPS

    for name, why in (("mma_scaled", "cutile 0.5.0 has no block-scaled mma"), ("cumprod", "not lowered yet")):
        assert name not in OPS
        (tmp_path / "k.py").write_text(
            "import cuda.tile as ct\n\n\n@ct.kernel\ndef k(x, TILE: ct.Constant[int]):\n"
            f"    t = ct.load(x, index=(ct.bid(0),), shape=(TILE,))\n    ct.{name}(t, 0)\n")
        with pytest.raises(tb.TranslationError, match=rf"k\.py:7:\d+: ct\.{name} is not supported: {why}"):
            tb.translate(tmp_path / "k.py", runtime_path=RUNTIME_CRATE)


def test_every_construct_cutile_python_takes_is_accounted_for():
    """Each statement and expression cuTile Python's front end has a handler for is in
    `translator.lower.constructs`, which says what tilebridge does with it (docs/language.md's
    second table), and nothing else is: a construct a new cuda-tile takes fails here."""
    pytest.importorskip("cuda.tile")
    from tilebridge.translator import cutile_frontend
    from tilebridge.translator.lower import constructs

    statements, expressions = cutile_frontend.python_constructs()
    assert set(statements) == set(constructs.STATEMENTS)
    assert set(expressions) == set(constructs.EXPRESSIONS)


def test_every_public_name_of_cuda_tile_is_accounted_for():
    """Each public name of `cuda.tile` is lowered by a handler, taken elsewhere, a dtype, the host's,
    or refused with its reason, and docs/language.md says which (scripts/language_table.py)."""
    pytest.importorskip("cuda.tile")
    import importlib.util

    spec = importlib.util.spec_from_file_location("language_table", REPO / "scripts" / "language_table.py")
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    assert (REPO / "docs" / "language.md").read_text() == table.render(), \
        "docs/language.md is stale: python scripts/language_table.py"
