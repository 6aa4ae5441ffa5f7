"""First launch of each example case in a fresh process, with an empty kernel cache (JIT: cutile's
front end and tileiras) and again with the cache that run left (cutile's front end only), side by
side with cuTile Python's first launch with its cache off and warm.

    python benchmarks/first_launch.py       (GPU, example extension installed)
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))

ONE_PROCESS = """
import json, sys, time, torch
import cuda.tile as ct
import tilebridge as tb
from tilebridge.verifier.check import load_cases
ext = tb.load("tilebridge_examples")
side, out = sys.argv[1], []
for path in sys.argv[2:]:
    for kernel, grid, args in load_cases(path):
        torch.cuda.synchronize()
        start = time.perf_counter()
        if side == "rs":
            tb.launch(ext, torch.cuda.current_stream(), grid, kernel, args)
        else:
            ct.launch(torch.cuda.current_stream(), grid, kernel, args)
        torch.cuda.synchronize()
        out.append((kernel._pyfunc.__name__, time.perf_counter() - start))
print(json.dumps(out))
"""


def first_launches(side: str, env: dict) -> list[tuple[str, float]]:
    proc = subprocess.run([sys.executable, "-c", ONE_PROCESS, side, *map(str, EXAMPLES)], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"the {side} process failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    with tempfile.TemporaryDirectory() as rs_cache, tempfile.TemporaryDirectory() as py_cache:
        env = {**os.environ, "TILEBRIDGE_CACHE_DIR": rs_cache, "CUDA_TILE_CACHE_DIR": py_cache}
        runs = {(side, state): first_launches(side, env) for state in ("empty", "warm") for side in ("rs", "py")}
    print(f"{'kernel':<22} {'rs empty ms':>11} {'rs warm ms':>11} {'py empty ms':>11} {'py warm ms':>11}")
    for i, (name, _) in enumerate(runs["rs", "empty"]):
        cells = [runs[side, state][i][1] * 1e3 for side in ("rs", "py") for state in ("empty", "warm")]
        print(f"{name:<22} {cells[0]:>11.1f} {cells[1]:>11.1f} {cells[2]:>11.1f} {cells[3]:>11.1f}")


if __name__ == "__main__":
    main()
