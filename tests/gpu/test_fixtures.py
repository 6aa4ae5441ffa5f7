"""The fixtures that carry inputs (`cases(torch)`), each case through cuTile Python and the Rust
extension `tilebridge_fixtures`, compared: integer bit operations, extract, n-D transposes,
prefix sums, index arrays, 0-d tiles, padded 2-D gathers, ct.matmul and lists of arrays."""

from pathlib import Path

import pytest

from tilebridge.verifier.check import load_cases, run_case

FIXTURES = [Path(__file__).resolve().parents[1] / "fixtures" / "checked_ops.py"]


@pytest.fixture(scope="module")
def fixtures_ext():
    from installed import load_current

    pytest.importorskip("tilebridge_fixtures", reason="tilebridge_fixtures is carried by the GPU rounds")
    return load_current("tilebridge_fixtures", FIXTURES)


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_fixture_cases_match_cutile_python(fixtures_ext, path):
    results = [run_case(fixtures_ext, kernel, grid, args) for kernel, grid, args in load_cases(path)]
    for r in results:
        print(r)
    # Fourteen cases: a case that stops being yielded (or run) must not pass unnoticed. Each is
    # chosen to be exact (small integers, one rounding per value), so each must be bitwise: a
    # tolerance would hide an fma not taken or an f16 step where cuTile Python computes in f32.
    assert len(results) == 14 and all(r.ok for r in results), "\n".join(str(r) for r in results)
    assert all(o.bitwise for r in results for o in r.outputs), "\n".join(str(r) for r in results)
