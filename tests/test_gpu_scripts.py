"""The GPU rounds' own scripts, run here on stand-ins: a failed test, a run cut off by its timeout
and an empty log each fail the round (tests/gpu/tilegym.sh, tilegym_summary.py), and a clean run
passes. Nothing here needs a GPU: the stand-in TileGym's tests launch nothing."""

import json
import os
import subprocess
import sys
import tarfile

import pytest

from conftest import REPO

SUMMARY = REPO / "tests" / "gpu" / "tilegym_summary.py"
STAND_IN = '''import os, time

def test_op_passes():
    pass

def test_op_may_fail():
    assert os.environ.get("STAND_IN_FAIL") != "1"

def test_op_may_hang():
    time.sleep(float(os.environ.get("STAND_IN_SLEEP", "0")))
'''


def summary(tmp_path, rows):
    log = tmp_path / "routing.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return subprocess.run([sys.executable, str(SUMMARY), str(log)], capture_output=True, text=True)


def row(outcome, rust=None):
    return {"test": f"tests/ops/test_x.py::test_op[{outcome}]", "outcome": outcome, "error": "",
            "rust": rust or {}, "python": {}, "worker": "gw0"}


def test_summary_fails_on_a_failed_test_and_on_an_empty_log(tmp_path):
    assert summary(tmp_path, [row("passed", {"x.py:k": 2}), row("skipped")]).returncode == 0
    failed = summary(tmp_path, [row("passed"), row("failed")])
    assert failed.returncode == 1 and "FAILED tests/ops/test_x.py::test_op[failed]" in failed.stdout
    assert summary(tmp_path, []).returncode == 1
    missing = subprocess.run([sys.executable, str(SUMMARY), str(tmp_path / "none.jsonl")], capture_output=True,
                             text=True)
    assert missing.returncode == 1 and "no routing log" in missing.stdout


@pytest.fixture
def tilegym_round(tmp_path):
    """Runs tests/gpu/tilegym.sh on a stand-in TileGym (one test file), every kernel in cuTile Python."""
    tests = tmp_path / "snapshot" / "tests" / "ops"
    tests.mkdir(parents=True)
    (tmp_path / "snapshot" / "src").mkdir()
    (tests / "test_stand_in.py").write_text(STAND_IN)
    with tarfile.open(tmp_path / "snapshot.tar.xz", "w:xz") as tar:
        tar.add(tmp_path / "snapshot", arcname=".")
    gpu = tmp_path / "gpu"
    gpu.mkdir()
    (gpu / "env.sh").write_text(f"export PYTHONPATH={REPO / 'python'}\n")

    def run(timeout=120, **env):
        out = tmp_path / f"out{len(list(tmp_path.glob('out*')))}"
        proc = subprocess.run(["bash", "tests/gpu/tilegym.sh"], cwd=REPO, capture_output=True, text=True, env={
            **os.environ, "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}", "GPU_DIR": str(gpu),
            "OUT": str(out), "TILEGYM_TARBALL": str(tmp_path / "snapshot.tar.xz"),
            "TILEGYM_UNPACK": str(tmp_path / "unpacked"), "TILEGYM_EXTS": "", "TILEGYM_WORKERS": "1",
            "TILEGYM_TESTS": "tests/ops/test_stand_in.py", "TILEGYM_BENCH": "0", "TILEGYM_FIXTURES": "0", **env},
            timeout=timeout)
        status = (out / "status.txt").read_text() if (out / "status.txt").exists() else ""
        routing = out / "routing_all.jsonl"
        return proc, status, [json.loads(l) for l in routing.read_text().splitlines()] if routing.exists() else []
    return run


def test_a_clean_tilegym_round_passes_and_logs_every_test(tilegym_round):
    proc, status, routing = tilegym_round()
    assert proc.returncode == 0 and "round status: 0" in status, proc.stdout + proc.stderr
    assert sorted(r["outcome"] for r in routing) == ["passed"] * 3


def test_a_failed_tilegym_test_fails_the_round(tilegym_round):
    proc, status, _ = tilegym_round(STAND_IN_FAIL="1")
    assert proc.returncode == 1 and "FAILED (1)" in status, proc.stdout + proc.stderr


def test_a_tilegym_run_cut_off_by_its_timeout_fails_the_round(tilegym_round):
    proc, status, _ = tilegym_round(STAND_IN_SLEEP="120", TILEGYM_TIMEOUT="15")
    assert proc.returncode == 1 and "cut off by its timeout" in status, proc.stdout + proc.stderr


class Anything:
    """Stands in for torch and every tensor in a fixture's `cases(torch)`: any attribute, call,
    operation, comparison or item is another; nothing is computed."""

    def __getattr__(self, name):
        return Anything()

    def __call__(self, *args, **kwargs):
        return Anything()

    def __getitem__(self, key):
        return Anything()

    def __setitem__(self, key, value):
        pass

    def __bool__(self):
        return True

    def __index__(self):
        return 1

    __int__ = __index__
    __hash__ = object.__hash__


def _another(self, *other):
    return Anything()


for _name in ("add sub mul truediv floordiv mod pow matmul and or xor lshift rshift lt le gt ge eq ne neg pos abs "
              "invert radd rsub rmul rtruediv rfloordiv rmod rpow rmatmul rand ror rxor").split():
    setattr(Anything, f"__{_name}__", _another)


def test_each_fixture_yields_the_cases_the_gpu_round_counts():
    """The GPU round fails a fixture file whose case count is not `installed.CASES`'s; here each
    file's `cases` is counted on stand-ins, so a case added without counting it fails at once (two
    sessions' cases went uncounted until a GPU round)."""
    sys.path.insert(0, str(REPO / "tests" / "gpu"))
    try:
        from installed import CASES, FIXTURES
    finally:
        sys.path.remove(str(REPO / "tests" / "gpu"))
    assert sorted(CASES) == sorted(p.stem for p in FIXTURES)
    for path in FIXTURES:
        namespace = {"__name__": path.stem}
        exec(compile(path.read_text(), str(path), "exec"), namespace)
        assert len(list(namespace["cases"](Anything()))) == CASES[path.stem], path.stem
