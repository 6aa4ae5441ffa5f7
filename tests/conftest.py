"""Shared fixtures. CPU tests need no GPU; tests/gpu/ holds the GPU ones."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((REPO / "examples").glob("*.py"))


@pytest.fixture(scope="session")
def examples_ext():
    """The examples built into one extension (one maturin build per session)."""
    import tilebridge as tb

    return tb.build([str(p) for p in EXAMPLES], module="tilebridge_examples", quiet=True)
