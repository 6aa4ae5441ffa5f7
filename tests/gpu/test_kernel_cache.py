"""Compiled kernels persist across processes (the runtime's disk cache, TILEBRIDGE_CACHE_DIR): a
second process launching the same specialization runs tileiras only to ask its version."""

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

LAUNCH = """
import torch, tilebridge as tb
ext = tb.load("tilebridge_examples")
a = torch.randn(3 * 4096, device="cuda", dtype=torch.float16); b = torch.randn_like(a); c = torch.empty_like(a)
ext.vector_add((3 * 4096 // 2048,), a, b, c, TILE=2048)
assert torch.equal(c, a + b)
"""


def test_a_second_process_takes_the_cubin_from_disk(tmp_path):
    real = shutil.which("tileiras") or str(Path(os.environ["CUDA_TOOLKIT_PATH"]) / "bin" / "tileiras")
    calls = tmp_path / "tileiras_calls.txt"
    wrapper = tmp_path / "tileiras"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {real} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "TILEBRIDGE_CACHE_DIR": str(tmp_path / "cache"), "CUTILE_TILEIRAS_PATH": str(wrapper)}

    def launch_in_a_process() -> list[str]:
        calls.write_text("")
        proc = subprocess.run([sys.executable, "-c", LAUNCH], env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return [line for line in calls.read_text().splitlines() if " -o " in line]  # compiles, not --version

    assert len(launch_in_a_process()) == 1  # compiled, and kept
    assert len(list((tmp_path / "cache").glob("*/*.cubin"))) == 1
    assert launch_in_a_process() == []  # found on disk

    env["TILEBRIDGE_CACHE_DIR"] = "off"
    assert len(launch_in_a_process()) == 1  # off: compiled again
