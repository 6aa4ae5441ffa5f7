"""Writes docs/language.md: every public name of `cuda.tile` and what tilebridge does with it
(`translator.lower.ops.public_names`), with the fixtures, examples and tests that use it.

    python scripts/language_table.py        # rewrites docs/language.md
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

import cuda.tile as ct  # noqa: E402

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
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    (REPO / "docs" / "language.md").write_text(render())
    print("wrote docs/language.md")
