"""The `tilebridge` command's subcommands that need no build (the build ones are in test_build.py)."""

import ctypes.util
import subprocess
import sys

import pytest

from conftest import REPO


def tilebridge(*args, env=None):
    import os

    return subprocess.run([sys.executable, "-m", "tilebridge.cli", *args], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO / "python"), **(env or {})}, timeout=120)


def test_doctor_lists_what_each_part_needs():
    proc = tilebridge("doctor")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    for heading in ("to translate:", "to build extensions:", "to launch kernels:"):
        assert heading in out
    assert "translate: ready, build: ready" in out  # this machine builds: the test command builds
    assert "tileiras and ptxas of one release (13.3+): tileiras 13.4, ptxas 13.4" in out
    if ctypes.util.find_library("cuda") is None:
        assert "NO  CUDA driver (libcuda.so.1): not found" in out and "launch: not ready" in out


def test_doctor_fails_and_says_what_to_install_where_nothing_is_there(tmp_path):
    proc = tilebridge("doctor", env={"CUDA_TOOLKIT_PATH": str(tmp_path)})
    assert proc.returncode == 1
    assert "NO  include/curand.h: missing: pip install nvidia-curand" in proc.stdout
    assert "NO  bin/tileiras: missing: pip install nvidia-cuda-tileiras" in proc.stdout
    assert "build: not ready, launch: not ready" in proc.stdout


@pytest.mark.parametrize("args, message", [
    (["translate", "no_such_file.py", "-o", "out"], "no_such_file.py"),
    (["build", "examples/vector_add.py", "--dtype", "a"], "--dtype takes NAME=DTYPE"),
])
def test_bad_command_lines_say_what_is_wrong(args, message):
    proc = tilebridge(*args)
    assert proc.returncode != 0 and message in proc.stdout + proc.stderr
