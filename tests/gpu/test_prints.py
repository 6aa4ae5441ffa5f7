"""Device prints: what `tests/fixtures/language.py`'s `printed` kernel prints through cuTile Python
and through the Rust twin (tilebridge_fixtures), the same lines. Each side runs in a process of its
own, whose standard output takes the device's printf buffer at each synchronization."""

import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("needs a GPU", allow_module_level=True)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SCRIPT = """
import ctypes, sys, torch
from tilebridge.verifier.check import kernel_name, load_cases
libc = ctypes.CDLL(None)  # the driver prints through C's stdout, buffered on a pipe: flushed below
for kernel, grid, args in load_cases(sys.argv[1] + "/language.py"):
    if kernel_name(kernel) != "printed":
        continue
    if sys.argv[2] == "rust":  # as `tilebridge check` launches the Rust twin
        import tilebridge as tb
        from tilebridge.runtime.launch import launch
        launch(tb.load("tilebridge_fixtures"), torch.cuda.current_stream(), grid, kernel, args)
    else:
        import cuda.tile as ct
        ct.launch(torch.cuda.current_stream(), grid, kernel, args)
    torch.cuda.synchronize()
    libc.fflush(None)
    print("== launch done", flush=True)
"""


def printed_by(side: str) -> list[list[str]]:
    """Per launch (one block each: blocks' prints interleave piece by piece), the lines printed."""
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(FIXTURES), side], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    launches = proc.stdout.split("== launch done\n")[:-1]
    return [chunk.splitlines() for chunk in launches]


def test_prints_match_cutile_python():
    from installed import FIXTURES as SOURCES, load_current

    load_current("tilebridge_fixtures", SOURCES)
    ours, theirs = printed_by("rust"), printed_by("python")
    assert len(theirs) == 2 and all(len(lines) == 3 for lines in theirs), theirs  # 3 prints a launch
    assert ours == theirs
