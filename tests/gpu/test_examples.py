"""The four examples, each case through cuTile Python and the Rust extension, compared."""

from pathlib import Path

import pytest

from tilebridge.verifier.check import load_cases, run_case

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_matches_cutile_python(ext, path):
    results = [run_case(ext, kernel, grid, args) for kernel, grid, args in load_cases(path)]
    for r in results:
        print(r)
    assert results, f"{path.name} has no cases"
    assert all(r.ok for r in results), "\n".join(str(r) for r in results)
