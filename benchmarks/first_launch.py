"""First launch of each example case in a fresh process, with an empty kernel cache (JIT: cutile's
front end and tileiras) and again with the cache that run left (cutile's front end only), side by
side with cuTile Python's first launch with its cache off and warm; with `--aot EXT`, also through
an extension of the examples that ships their cubins (`tilebridge build --aot`), whose launches
compile nothing.

    python benchmarks/first_launch.py [--aot tilebridge_examples_aot]   (GPU, extensions installed)
"""

import argparse
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
side, out = sys.argv[1], []
ext = tb.load(sys.argv[2])
for path in sys.argv[3:]:
    for kernel, grid, args in load_cases(path):
        torch.cuda.synchronize()
        start = time.perf_counter()
        if side != "py":
            tb.launch(ext, torch.cuda.current_stream(), grid, kernel, args)
        else:
            ct.launch(torch.cuda.current_stream(), grid, kernel, args)
        torch.cuda.synchronize()
        out.append((kernel._pyfunc.__name__, time.perf_counter() - start))
print(json.dumps(out))
"""


def first_launches(side: str, ext: str, env: dict) -> list[tuple[str, float]]:
    proc = subprocess.run([sys.executable, "-c", ONE_PROCESS, side, ext, *map(str, EXAMPLES)], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"the {side} process failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--aot", metavar="EXT", help="an extension of the examples with shipped cubins")
    args = parser.parse_args()
    sides = {"rs": "tilebridge_examples", "py": "tilebridge_examples", **({"aot": args.aot} if args.aot else {})}
    with tempfile.TemporaryDirectory() as rs_cache, tempfile.TemporaryDirectory() as py_cache:
        env = {**os.environ, "TILEBRIDGE_CACHE_DIR": rs_cache, "CUDA_TILE_CACHE_DIR": py_cache}
        runs = {(side, state): first_launches(side, ext, env) for state in ("empty", "warm")
                for side, ext in sides.items()}
    columns = [(side, state) for side in sides for state in ("empty", "warm")]
    print(f"{'kernel':<22}" + "".join(f"{side + ' ' + state + ' ms':>15}" for side, state in columns))
    for i, (name, _) in enumerate(runs["rs", "empty"]):
        print(f"{name:<22}" + "".join(f"{runs[c][i][1] * 1e3:>15.2f}" for c in columns))


if __name__ == "__main__":
    main()
