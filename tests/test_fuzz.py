"""The differential fuzz campaign (`tilebridge fuzz`): random kernels, each translated at its launch
with the check against cuTile Python's front end, then built and compiled through cutile to Tile
IR. None may be typed otherwise than cuTile Python types it, crash the translator, fail to build
or fail to reach Tile IR; the share that agrees may only grow (floors in coverage_floor.json).
Two campaigns of 1,000 kernels: 2,000 a run."""

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tilebridge.verifier import fuzz

from conftest import REPO

pytestmark = pytest.mark.slow

FLOOR = json.loads((Path(__file__).parent / "coverage_floor.json").read_text())["fuzz"]
KERNELS = 1000
INTEGERS = REPO / "tests" / "fixtures" / "integers.py"


@pytest.mark.parametrize("seed", sorted(FLOOR, key=int))
def test_campaign(tmp_path, seed):
    path = tmp_path / f"fuzz_{seed}.py"
    campaign = fuzz.run(path, fuzz.write(path, KERNELS, int(seed)))
    counts = campaign.counts()
    print(campaign.summary())
    assert not campaign.bugs(), campaign.bugs()
    assert sum(counts.values()) == KERNELS
    assert counts["agrees"] >= FLOOR[seed], campaign.summary()


def test_the_campaign_is_reproducible(tmp_path):
    """Kernel i depends on the seed and i only: a campaign of 20 is the start of one of 30."""
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    assert fuzz.write(a, 20, 7) == fuzz.write(b, 30, 7)[:20]
    assert fuzz.write(b, 20, 7) and a.read_text() == b.read_text()


def test_a_campaign_file_keeps_each_kernels_launch(tmp_path):
    """Written with its cases, a campaign reads back kernel for kernel: dtypes, shapes, scalars,
    constants, grid and the inputs' ranges (an output has none)."""
    path = tmp_path / "fuzz_5.py"
    written = fuzz.write(path, 40, 5)
    read = fuzz.read(path)
    assert [(k.name, k.arrays, k.scalars, k.constants, k.grid, k.ranges) for k in read] == \
        [(k.name, k.arrays, k.scalars, k.constants, k.grid, k.ranges) for k in written]
    assert all("y" not in k.ranges and k.ranges for k in read)
    # every dtype class the generator claims shows up in 40 kernels
    dtypes = {d for k in written for _, d in k.arrays.values()}
    assert {"f32", "f16", "bf16", "i32"} <= dtypes


def test_integer_fixture_agrees_through_tile_ir():
    """The hand-written campaign file of integer constructs (narrowing casts that wrap, widening of
    uint8, int64 literals beyond int32, `%` and `//` by negative divisors, `ct.arange` with start
    and step, `axis=None`, `ct.broadcast_to` of a number, a float function of a float16 array cast
    to int64, stated dtypes promoted, a lossless store without a cast, `//` and `%` of float
    scalars): each translates at its launches' dtypes and reaches Tile IR. Each was refused,
    mistyped or failed in cutile's JIT before the campaign found it."""
    campaign = fuzz.run(INTEGERS, fuzz.read(INTEGERS))
    assert campaign.counts() == {"agrees": 7}, campaign.messages
    # Python's % of a negative or unknown divisor: no C remainder (its sign would be the dividend's),
    # the floored quotient at both integer widths
    remainders = campaign.tile_ir_text["signed_remainders"]
    assert len(remainders) == 2
    assert all("remi" not in ir and ir.count("rounding negative_inf") == 4 for ir in remainders)
    (casts,) = campaign.tile_ir_text["narrow_and_widen"]
    assert casts.count("trunci") == 2 and "exti" in casts


def test_bugs_are_found_and_named(tmp_path, monkeypatch):
    """A crate that fails to build is split until the kernel that breaks it is found (the others
    still reach Tile IR); a kernel cutile's JIT refuses is `fails_to_compile`, with its message."""
    from tilebridge.builder import wheel as builder

    path = tmp_path / "fuzz_11.py"
    kernels = fuzz.write(path, 30, 11)
    real_build, real_import = builder.build, builder.import_unpacked
    campaign = fuzz.run(path, kernels, tile_ir=False)
    agreeing = [n for n, o in campaign.outcomes.items() if o == "agrees"]
    broken, refused = agreeing[0], agreeing[-1]

    def build(target, crate, **kw):
        if f"fn {broken}<" in crate.files["src/tile_kernels.rs"]:
            raise builder.BuildError("error[E0308]: mismatched types\n  --> src/tile_kernels.rs:1:1")
        return real_build(target, crate=crate, **kw)

    class Refusing:
        def __init__(self, ext):
            self.ext = ext

        def _compile_only(self, name, *args):
            if name == refused:
                raise RuntimeError("Unsupported conversion")
            return self.ext._compile_only(name, *args)

    monkeypatch.setattr(builder, "build", build)
    monkeypatch.setattr(builder, "import_unpacked", lambda wheel, module: Refusing(real_import(wheel, module)))
    campaign = fuzz.run(path, kernels)
    assert campaign.bugs() == {broken: "fails_to_build: error[E0308]: mismatched types\n  --> src/tile_kernels.rs:1:1",
                               refused: f"fails_to_compile: {refused}: Unsupported conversion"}
    assert sum(o == "agrees" for o in campaign.outcomes.values()) == len(agreeing) - 2


def test_cli_runs_a_campaign_file_and_hands_its_wheels_to_check(tmp_path):
    """`tilebridge fuzz FILE --wheels DIR` builds the file's kernels at their launches and copies the
    extensions; `tilebridge check FILE --installed MODULE` takes them as built (no GPU here: it
    stops after importing them)."""
    shutil.copy(INTEGERS, tmp_path / "integers.py")
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    run = subprocess.run([sys.executable, "-m", "tilebridge", "fuzz", "integers.py", "--wheels", "wheels"],
                         cwd=tmp_path, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "7 agrees" in run.stdout
    (wheel,) = (tmp_path / "wheels").iterdir()
    module = wheel.name.split("-")[0]
    assert f"--installed {module}" in run.stdout
    zipfile.ZipFile(wheel).extractall(tmp_path / "site")
    env["PYTHONPATH"] = f"{tmp_path / 'site'}:{REPO / 'python'}"
    check = subprocess.run([sys.executable, "-m", "tilebridge", "check", "integers.py", "--installed", module],
                           cwd=tmp_path, capture_output=True, text=True, env=env)
    assert check.returncode == 0, check.stdout + check.stderr
    assert f"imported {module}" in check.stdout
