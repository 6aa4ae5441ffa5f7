"""TileGym's kernels through translate -> build -> Tile IR -> sm_90 cubin, on the CPU.

The counts may only go up: tests/coverage_floor.json holds the last landed figures."""

import json
import re
from pathlib import Path

import pytest

from tilebridge.verifier.coverage import TILEGYM_OPERATORS

pytestmark = pytest.mark.slow

FLOOR = json.loads((Path(__file__).parent / "coverage_floor.json").read_text())


@pytest.fixture(scope="module")
def report():
    import importlib.util

    if importlib.util.find_spec("tilegym") is None:  # found, never imported: it needs torch
        pytest.skip("tilegym is installed by scripts/install.sh (pip --no-deps)")
    from tilebridge.translator import recorded_launches as launches
    from tilebridge.verifier.coverage import run

    # Every specialization TileGym's own tests launched (recorded on an H200: see the file's "source").
    return run("tilegym", recorded=launches.read([Path(__file__).parent / "data" / "tilegym_launches.json"]))


def test_coverage_does_not_drop(report):
    print(report.table())
    assert sum(r.cubins for r in report.rows) >= FLOOR["specializations_through_cubin"], report.table()
    assert report.through_cubin >= FLOOR["through_cubin"], report.table()
    assert report.count("operators")[0] >= FLOOR["operators_through_cubin"], report.table()


def test_report_counts_the_24_operators_apart(report):
    assert {r.file[:-3] for r in report.rows if r.scope == "operators"} == set(TILEGYM_OPERATORS)
    assert report.count("operators")[1] == 45 and report.count("operators", public=True)[1] == 37
    assert report.count("activations")[1] == 5
    assert "kernels of TileGym's 24 operators through cubin" in report.table()


def test_every_kernel_is_accounted_for(report):
    assert len(report.rows) >= 60  # tilegym 1.5.1 ops/cutile defines 66 kernels
    for row in report.rows:
        if not row.translated:
            # A TranslationError names file:line:column and the construct.
            assert re.match(rf"{re.escape(row.file)}:\d+:\d+: .+: `.+`", row.error), row
        elif not row.cubin:
            assert row.error, row


def test_translated_kernels_have_a_safety_verdict(report):
    for row in report.rows:
        if row.translated:
            assert row.safety == "safe" or row.safety.startswith("unsafe: ")
