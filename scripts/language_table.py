"""Writes docs/language.md: every public name of `cuda.tile` and what tilebridge does with it
(`translator.lower.ops.public_names`), then every Python construct cuTile Python's front end takes
(`translator.lower.constructs`), each with the fixtures, examples and tests that use it.

    python scripts/language_table.py        # rewrites docs/language.md
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

import cuda.tile as ct  # noqa: E402

from tilebridge.translator import cutile_frontend  # noqa: E402
from tilebridge.translator.lower import constructs  # noqa: E402
from tilebridge.translator.lower.ops import public_names  # noqa: E402

SOURCES = sorted((REPO / "examples").glob("*.py")) + sorted((REPO / "tests" / "fixtures").glob("*.py")) + \
    sorted((REPO / "tests").glob("test_*.py"))
HEADINGS = {"lowered": "lowered by a handler of the op table", "elsewhere": "taken elsewhere in the translation",
            "dtype": "a dtype", "host": "not a kernel operation", "refused": "refused, with this reason"}


def used_in(name: str, texts: dict[str, str]) -> str:
    """The files whose kernels use `ct.<name>`, the fixtures and examples first."""
    pattern = re.compile(rf"\bct\.{re.escape(name)}\b")
    users = [f"`{Path(rel).name}`" for rel, text in texts.items() if pattern.search(text)]
    return ", ".join(users[:4]) + (f" and {len(users) - 4} more" if len(users) > 4 else "") if users else "-"


def kernel_nodes(text: str, test_file: bool) -> set[str]:
    """The `ast` classes in a file's kernel code: its kernels and the functions they call (in a
    test file, those of the kernel sources its strings hold)."""
    def kernel_code(source: str) -> list[ast.AST]:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            return []
        defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        todo = [n for n in defs.values() if any(ast.unparse(d).endswith("kernel") for d in n.decorator_list)]
        found: dict[str, ast.FunctionDef] = {}
        while todo:
            f = todo.pop()
            if f.name not in found:
                found[f.name] = f
                todo += [defs[n.id] for n in ast.walk(f) if isinstance(n, ast.Name) and n.id in defs]
        return list(found.values())

    code = [] if test_file else kernel_code(text)
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "@ct.kernel" in node.value:
            code += kernel_code(node.value)
    return {type(n).__name__ for f in code for st in f.body for n in ast.walk(st)}


def construct_rows(texts: dict[str, str]) -> list[str]:
    nodes = {rel: kernel_nodes(text, Path(rel).name.startswith("test_")) for rel, text in texts.items()}
    rows = []
    for kind, names in zip(("statement", "expression"), cutile_frontend.python_constructs()):
        for name in names:
            status, detail = constructs.status(name)
            users = [f"`{Path(rel).name}`" for rel, found in nodes.items() if name in found]
            used = ", ".join(users[:4]) + (f" and {len(users) - 4} more" if len(users) > 4 else "") if users else "-"
            rows.append(f"| `ast.{name}` | {kind} | {status} | {detail.replace('|', chr(92) + '|')} | {used} |")
    return rows


def render() -> str:
    texts = {str(p.relative_to(REPO)): p.read_text() for p in SOURCES}
    names = sorted(n for n in dir(ct) if not n.startswith("_"))
    rows = {n: public_names.status(n) for n in names}
    totals = {kind: sum(1 for s, _ in rows.values() if s == kind) for kind in HEADINGS}
    lines = [
        "# The language: every public name of `cuda.tile`",
        "",
        f"Written by `python scripts/language_table.py` from `translator/lower/ops/public_names.py` and the op "
        f"table, for cuda-tile {getattr(ct, '__version__', '?')}; `tests/test_layering.py` holds it current. "
        "\"Used in\" lists the examples, fixtures (each run against cuTile Python on the GPU) and CPU tests "
        "whose source names it.",
        "",
        "Of " + f"{len(names)} names: " + ", ".join(f"{totals[k]} {HEADINGS[k]}" for k in HEADINGS) + ".",
        "",
        "| name | what tilebridge does | how, or why not | used in |",
        "| --- | --- | --- | --- |",
    ]
    lines += [f"| `ct.{n}` | {kind} | {detail} | {used_in(n, texts)} |" for n, (kind, detail) in rows.items()]
    lines += [
        "",
        "## Python constructs",
        "",
        "Every statement and expression cuTile Python's front end takes (the `ast` classes its `ast2hir` pass "
        "has a handler for), from `translator/lower/constructs.py`. Any other construct (comprehensions, "
        "`try`, `assert`, `global`, ...) cuTile Python refuses, and so does tilebridge, with a "
        "`TranslationError` at it. \"Used in\" lists the files whose kernel code has it (in the CPU tests, "
        "the kernel sources they hold).",
        "",
        "| construct | kind | what tilebridge does | how, or why not | used in |",
        "| --- | --- | --- | --- | --- |",
        *construct_rows(texts),
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    (REPO / "docs" / "language.md").write_text(render())
    print("wrote docs/language.md")
