"""The fixtures, each with inputs (`cases(torch)`), every case through cuTile Python and the Rust
extension `tilebridge_fixtures` (built from all of them), compared: integer bit operations,
extract, n-D transposes, prefix sums, index arrays, 0-d tiles, padded 2-D gathers, ct.matmul,
lists of arrays (checked_ops); constant and runtime branches, early exits (control_flow);
rounding modes, hints, integer division and remainder, tf32 mma (math_ops); gathers and scatters,
advanced indexing (gathers); grid-stride loops and unchecked stores (unchecked_stores); powers, broadcasts, `while True`
with break and continue, ct.static_iter, `in`, bool parameters and atomics (language); arrays of
different dtypes promoted per launch (mixed_dtypes); fp8 and int8 matmuls, int8 quantization and
copies of bools, launched with no dtype stated at build (any_dtype)."""

import pytest

from tilebridge.verifier.check import load_cases, run_case

from installed import CASES, FIXTURES

# Every case must be bitwise: the exact ones are chosen so (small integers, one rounding per value),
# and the others (exp, approximate division and tanh, tf32 mma of random values) compile to the same
# operations as cuTile Python's, which the H200 round of 2026-12-04 showed bitwise. A tolerance would
# hide an fma not taken or an f16 step where cuTile Python computes in f32.


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
    assert len(results) == CASES[path.stem] and all(r.ok for r in results), "\n".join(str(r) for r in results)
    assert all(o.bitwise for r in results for o in r.outputs), "\n".join(str(r) for r in results)


def test_a_store_at_the_blocks_own_indices_refuses_a_grid_wider_than_its_output(fixtures_ext):
    """`transposed_blocks` stores at (bid 2, bid 0, bid 1), every grid axis, unconditionally: cutile
    proves the index inside y by checks at launch that the grid is no wider than y's tiles. A grid
    one block too wide along axis 0 is an ArgumentError before anything runs; the right one runs."""
    import torch

    import tilebridge as tb

    x = torch.randint(-8, 8, (2, 64, 64), device="cuda").float()
    y = torch.zeros_like(x)
    with pytest.raises(tb.ArgumentError, match=r"num_tile_blocks\(0\) <= ceil\(extent\(y, 1\)/16\), at grid \(5, 4, 2\)"):
        fixtures_ext.transposed_blocks((5, 4, 2), x, y, B=16)
    torch.cuda.synchronize()
    assert not y.any()
    fixtures_ext.transposed_blocks((4, 4, 2), x, y, B=16)
    torch.cuda.synchronize()
    assert torch.equal(y, x * 2)
