"""TileGym's kernels through translate -> build -> Tile IR -> sm_90 cubin, on the CPU.

The counts may only go up: tests/coverage_floor.json holds the last landed figures. No count here
depends on how fast the machine is: every specialization must reach Tile IR; the few whose
tileiras takes minutes (tests/data/slow_cubins.json) have their cubin deferred without running
it, and one whose tileiras runs over CUBIN_LIMIT is deferred too (counted apart) rather than
failed. The run that compiles every cubin, however long it takes, is `tilebridge coverage tilegym
--launches tests/data/tilegym_launches.json` (docs/testing.md)."""

import json
import re
from pathlib import Path

import pytest

from tilebridge.verifier.coverage import TILEGYM_OPERATORS

pytestmark = pytest.mark.slow

FLOOR = json.loads((Path(__file__).parent / "coverage_floor.json").read_text())
SLOW = json.loads((Path(__file__).parent / "data" / "slow_cubins.json").read_text())["specializations"]
# Seconds of tileiras per specialization before its cubin is deferred: a guard, six times the
# slowest one not listed in SLOW (fused moe's, about 29 s on 2 idle cores).
CUBIN_LIMIT = 180


@pytest.fixture(scope="module")
def report():
    import importlib.util

    if importlib.util.find_spec("tilegym") is None:  # found, never imported: it needs torch
        pytest.skip("tilegym is installed by scripts/install.sh (pip --no-deps)")
    from tilebridge.translator import recorded_launches as launches
    from tilebridge.verifier.coverage import run

    # Every specialization TileGym's own tests launched (recorded on an H200: see the file's "source").
    return run("tilegym", recorded=launches.read([Path(__file__).parent / "data" / "tilegym_launches.json"]),
               cubin_limit=CUBIN_LIMIT, slow=frozenset(SLOW))


def test_coverage_does_not_drop(report):
    print(report.table())
    assert sum(r.tile_irs for r in report.rows) == sum(r.specializations for r in report.rows), report.table()
    through = sum(r.cubins + r.deferred for r in report.rows)
    assert through >= FLOOR["specializations_through_cubin"], report.table()
    assert report.count(what="cubin_or_deferred")[0] >= FLOOR["through_cubin"], report.table()
    assert report.count("operators", what="cubin_or_deferred")[0] >= FLOOR["operators_through_cubin"], report.table()


def test_tilegyms_crates_build_without_compiler_warnings(report):
    assert report.warnings == {}


def test_the_listed_slow_cubins_are_specializations_the_run_met(report):
    """A stale entry of the slow list (a kernel or specialization no longer compiled) fails."""
    assert set(SLOW) <= {spec for r in report.rows for spec in r.deferred_specs}, report.totals()


def test_tile_ir_stays_as_close_to_cutile_pythons(report):
    """Every specialization that reached cubin is diffed against cuTile Python's own Tile IR (its
    export must not fail), and the differing lines, summed over kernels, may only go down."""
    assert sum(r.reference_failures for r in report.rows) == 0, [
        (r.kernel, r.error) for r in report.rows if r.reference_failures]
    diffed = [r for r in report.rows if r.cubins]
    assert all(r.diff_lines is not None for r in diffed), [r.kernel for r in diffed if r.diff_lines is None]
    assert sum(r.diff_lines for r in diffed) <= FLOOR["tile_ir_diff_lines"], report.totals()


def test_recorded_launches_match_this_tilegym(report):
    """Every recorded launch is one of a kernel of the installed TileGym (same file, name and
    parameters): the log was recorded from this version's package (see its "source"). A launch of
    another version would fall back to a default specialization and count as one compiled."""
    assert report.unmatched == [], report.unmatched


def test_report_counts_the_24_operators_apart(report):
    assert {r.file[:-3] for r in report.rows if r.scope == "operators"} == set(TILEGYM_OPERATORS)
    assert report.count("operators")[1] == 45 and report.count("operators", public=True)[1] == 37
    assert report.count("activations")[1] == 5
    assert "kernels of TileGym's 24 operators through cubin" in report.table()


def decorated_kernels() -> int:
    """The @ct.kernel functions of the installed TileGym, counted from its source alone."""
    import ast

    from tilebridge.verifier.coverage import library_dir

    count = 0
    for path in library_dir("tilegym").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(
                    ast.unparse(d.func if isinstance(d, ast.Call) else d).endswith("kernel")
                    for d in node.decorator_list):
                count += 1
    return count


def test_every_kernel_is_accounted_for(report):
    assert len(report.rows) == decorated_kernels()  # a kernel the frontend does not find is still a row
    for row in report.rows:
        if not row.translated:
            # A TranslationError names file:line:column and the construct.
            assert re.match(rf"{re.escape(row.file)}:\d+:\d+: .+: `.+`", row.error), row
        elif not row.cubin_or_deferred:
            assert row.error, row


def test_safe_kernels_do_not_drop(report):
    """How many of TileGym's operator kernels have no `unsafe` block may only go up."""
    assert report.count("operators", True, "safe")[0] >= FLOOR["operators_safe_not_experimental"], report.totals()
    assert report.count("operators", what="safe")[0] >= FLOOR["operators_safe"], report.totals()


def test_the_safety_verdict_is_what_the_generated_code_says(report):
    """A kernel reported safe has no `unsafe` block in its generated entry function, and one
    reported unsafe has at least one: the verdict is not the translator's word alone."""
    built = [r for r in report.rows if r.built]
    assert built
    for row in built:
        assert row.safe == (row.unsafe_blocks == 0), (row.kernel, row.safety, row.unsafe_blocks)
