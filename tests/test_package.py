"""tilebridge as a package: its wheel and sdist carry the runtime crate and its lock file, and a
fresh virtual environment that installs the wheel (no checkout on the path) builds and imports an
extension."""

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import REPO

CRATE_FILES = {"Cargo.toml", "Cargo.lock", "src/lib.rs", "src/array.rs", "src/launch.rs"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(out)], check=True, capture_output=True, text=True)
    (found,) = out.glob("tilebridge-*.whl")
    return found


def test_the_wheel_carries_the_runtime_crate_and_the_templates(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"tilebridge/runtime/crate/{f}" for f in CRATE_FILES} <= names
    assert "tilebridge/translator/emit/templates/lib.rs.j2" in names
    assert not any("/target/" in n or n.endswith(".so") for n in names)


def test_the_sdist_carries_the_runtime_crate(tmp_path):
    code = f"from setuptools import build_meta; print(build_meta.build_sdist({str(tmp_path)!r}))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    names = tarfile.open(tmp_path / proc.stdout.split()[-1]).getnames()
    for f in CRATE_FILES:
        assert any(n.endswith(f"python/tilebridge/runtime/crate/{f}") for n in names), f


@pytest.mark.slow
def test_a_fresh_environment_installs_the_wheel_then_builds_and_imports_an_example(wheel, tmp_path):
    """What a user does: pip install tilebridge, then build a kernel file that lies anywhere."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    # Nothing of the checkout or of the test's environment on the path (pip would take a tilebridge
    # it finds there for installed).
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    proc = subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], env=env, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    work = tmp_path / "work"
    work.mkdir()
    (work / "vector_add.py").write_text((REPO / "examples" / "vector_add.py").read_text())
    proc = subprocess.run([str(venv / "bin" / "tilebridge"), "build", "vector_add.py", "-m", "packaged_vector_add_rs"],
                          cwd=work, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    check = ("import tilebridge\n"
             "assert 'site-packages' in tilebridge.__file__, tilebridge.__file__\n"
             "m = tilebridge.load('packaged_vector_add_rs')  # points cutile at the installed wheels' tileiras\n"
             "ir, _ = m._compile_only('vector_add', ['f32'] * 4 + ['1024'], [('a', [1]), ('b', [1]), ('c', [1])], 'sm_90')\n"
             "print('entry @vector_add_entry' in ir)\n")
    proc = subprocess.run([str(python), "-c", check], cwd=work, env=env, capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == "True", proc.stderr
