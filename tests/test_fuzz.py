"""The differential fuzz campaign (`tilebridge fuzz`): random kernels, each translated with the check
against cuTile Python's front end. None may be typed otherwise than cuTile Python types it, none
may crash the translator, and the share translated may only grow (floors in coverage_floor.json)."""

import json
from pathlib import Path

import pytest

from tilebridge.verifier import fuzz

FLOOR = json.loads((Path(__file__).parent / "coverage_floor.json").read_text())["fuzz"]


@pytest.mark.parametrize("seed", sorted(FLOOR, key=int))
def test_campaign(tmp_path, seed):
    path = tmp_path / f"fuzz_{seed}.py"
    campaign = fuzz.run(path, fuzz.write(path, 200, int(seed)))
    counts = campaign.counts()
    print(campaign.summary())
    bugs = {n: campaign.messages[n] for n, o in campaign.outcomes.items() if o in ("disagrees", "crashes")}
    assert not bugs, bugs
    assert sum(counts.values()) == 200
    assert counts["agrees"] >= FLOOR[seed], campaign.summary()


def test_the_campaign_is_reproducible(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    assert fuzz.write(a, 20, 7) == fuzz.write(b, 20, 7)
    assert a.read_text() == b.read_text()
