"""Cubins shipped with an extension (`tilebridge build --aot sm_90`): a launch of a shipped
specialization loads its cubin, with no JIT and no `tileiras`; any other still compiles.

The extension: tilebridge build examples/vector_add.py -m tilebridge_aot \
    --launches tests/gpu/aot_launches.jsonl --aot sm_90
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("needs a GPU", allow_module_level=True)

HERE = Path(__file__).resolve().parent
LAUNCHES = HERE / "aot_launches.jsonl"

# In a process of its own: the first launch of a shipped specialization, then one of another.
SCRIPT = """
import json, os, sys, time, torch
import tilebridge as tb
ext = tb.load("tilebridge_aot")
n = 1 << 20
a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
c = torch.empty_like(a)
torch.cuda.synchronize()
start = time.perf_counter()
ext.vector_add((n // 1024,), a, b, c, TILE=1024)
torch.cuda.synchronize()
first_ms = (time.perf_counter() - start) * 1e3
out = {"first_ms": first_ms, "equal": bool(torch.equal(c, a + b)), "counts": ext._launch_counts(),
       "tileiras_ran_before": os.path.exists(sys.argv[1]), "shipped": len(ext._shipped())}
try:
    ext.vector_add((n // 512,), a, b, c, TILE=512)  # not shipped
    torch.cuda.synchronize()
    out["unshipped"] = "launched"
except Exception as e:
    out["unshipped"] = f"{type(e).__name__}: {e}"[:400]
print(json.dumps(out))
"""


def test_a_shipped_specialization_launches_without_jit_or_tileiras(tmp_path):
    from installed import load_current

    load_current("tilebridge_aot", [HERE.parents[1] / "examples" / "vector_add.py"], launches=LAUNCHES,
                 aot=["sm_90"])
    # A tileiras that only says it ran: cutile calls it for any compile, the shipped launch must not.
    marker = tmp_path / "tileiras-ran"
    fake = tmp_path / "tileiras"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {marker}\nexit 1\n')
    fake.chmod(0o755)
    env = {**os.environ, "CUTILE_TILEIRAS_PATH": str(fake), "TILEBRIDGE_CACHE_DIR": "off"}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(marker)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"first launch of a shipped specialization: {result['first_ms']:.2f} ms")
    assert result["equal"]
    assert result["shipped"] == 2
    assert result["counts"] == [0, 1, 1]  # nothing compiled, one launch, one shipped cubin loaded
    assert not result["tileiras_ran_before"]
    # The other specialization went to the JIT, which called the stand-in tileiras and failed.
    assert marker.exists(), result["unshipped"]
    assert result["unshipped"] != "launched"
