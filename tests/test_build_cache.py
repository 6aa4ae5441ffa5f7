"""The build cache never passes off a half-built, interrupted or changed build as good, and two
builds of one folder at once do not run over each other. maturin is replaced by a stand-in that
writes a wheel-shaped file, so these run in seconds; the real build is `test_build.py`'s."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import REPO
from tilebridge.builder import wheel as tbuild

VECTOR_ADD = REPO / "examples" / "vector_add.py"


@pytest.fixture
def maturin(monkeypatch):
    """Stands in for maturin: records each build, and can be told to sleep or to be interrupted."""

    class Stand:
        builds: list[tuple[float, float]] = []
        sleep = 0.0
        interrupt = False

        def __call__(self, crate_dir, *, quiet=False, optimize=True):
            start = time.monotonic()
            if self.interrupt:
                raise KeyboardInterrupt
            time.sleep(self.sleep)
            wheels = Path(crate_dir) / "wheels"
            wheels.mkdir(exist_ok=True)
            wheel = wheels / "stand_in-0.1.0-cp38-abi3-linux_x86_64.whl"
            wheel.write_bytes(b"PK wheel of " + str(crate_dir).encode())
            self.builds.append((start, time.monotonic()))
            return wheel

    stand = Stand()
    monkeypatch.setattr(tbuild, "build_crate", stand)
    return stand


def build(out_dir):
    return tbuild.build(VECTOR_ADD, out_dir=out_dir, module="cache_rs", install=False, quiet=True)


def test_a_finished_build_is_found_again(maturin, tmp_path):
    first = build(tmp_path / "b")
    second = build(tmp_path / "b")
    assert first.rebuilt and not second.rebuilt and second.wheel == first.wheel
    assert len(maturin.builds) == 1


def test_a_changed_or_missing_wheel_is_built_again(maturin, tmp_path):
    first = build(tmp_path / "b")
    first.wheel.write_bytes(first.wheel.read_bytes()[:-3])  # cut short, as by a full disk
    assert build(tmp_path / "b").rebuilt
    build(tmp_path / "b").wheel.unlink()
    assert build(tmp_path / "b").rebuilt
    (tmp_path / "b" / tbuild.STAMP).write_text("garbage")
    assert build(tmp_path / "b").rebuilt
    assert len(maturin.builds) == 4


def test_an_interrupted_build_is_not_taken_for_a_good_one(maturin, tmp_path):
    maturin.interrupt = True
    with pytest.raises(KeyboardInterrupt):
        build(tmp_path / "b")
    assert (tmp_path / "b" / "Cargo.toml").exists() and not (tmp_path / "b" / tbuild.STAMP).exists()
    maturin.interrupt = False
    assert build(tmp_path / "b").rebuilt
    assert not build(tmp_path / "b").rebuilt


def test_two_builds_of_one_folder_wait_for_each_other(maturin, tmp_path):
    """The lock is a file lock (flock on separate opens), so threads stand in for processes."""
    maturin.sleep = 0.5
    results = []
    threads = [threading.Thread(target=lambda: results.append(build(tmp_path / "b"))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(maturin.builds) == 1, "the second build should find the first one's wheel"
    assert sorted(r.rebuilt for r in results) == [False, True]


def test_ctrl_c_stops_the_compiler_too(tmp_path):
    """A KeyboardInterrupt while a build command runs kills the command, not only Python's wait."""
    pid_file = tmp_path / "pid"
    script = (
        "import signal, subprocess, sys, time\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from tilebridge.builder import wheel\n"
        "signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt))\n"
        "signal.setitimer(signal.ITIMER_REAL, 2.0)\n"
        "try:\n"
        f"    wheel._run_streaming(['sh', '-c', 'echo $$ > {pid_file}; echo started; exec sleep 60'], {{}}, True)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted')\n"
    )
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", script, str(REPO / "python")], capture_output=True, text=True,
                          timeout=30)
    assert proc.stdout.strip() == "interrupted", proc.stderr
    assert time.monotonic() - start < 20
    child = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)  # gone, not left running behind the interrupted build


def test_the_build_key_does_not_depend_on_where_the_checkout_is_nor_on_rustfmt(tmp_path):
    """The GPU round checks an installed extension's key against the checkout it runs from, which
    lies elsewhere than the one that built it, on a machine without rustfmt."""
    import shutil

    copy = tmp_path / "elsewhere"
    shutil.copytree(REPO / "python", copy / "python", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    code = ("from tilebridge.builder import wheel; import sys; "
            "print(wheel.RUNTIME_CRATE, wheel.expected_key([sys.argv[1]], module='keyed_rs')[1])")
    keys = []
    no_rustfmt = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                                 if not (Path(p) / "rustfmt").exists())
    for root, path in ((REPO, os.environ["PATH"]), (copy, no_rustfmt)):
        proc = subprocess.run([sys.executable, "-c", code, str(VECTOR_ADD)], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(root / "python"), "PATH": path})
        assert proc.returncode == 0, proc.stderr
        crate, key = proc.stdout.split()
        assert crate == str(root / "python" / "tilebridge" / "runtime" / "crate")
        keys.append(key)
    assert keys[0] == keys[1]


def test_an_unoptimized_build_has_a_key_of_its_own():
    """Coverage builds its extensions at opt-level 0: such a build is never found for a user's."""
    crate = tbuild.translate([str(VECTOR_ADD)], module="keyed_rs", runtime_path=tbuild.RUNTIME_CRATE)
    assert tbuild.build_key(crate, optimize=False) != tbuild.build_key(crate)
