"""Translates every kernel file under the given folders, each alone with `--partial`, and tallies
the kernels translated and the reasons the others are refused: how much of cuTile Python code
tilebridge has never seen it takes (docs/measurements/2026-12-07-closures-and-a-survey.md).

    python scripts/survey.py FOLDER... [--json OUT.json]

A file counts where it holds `@ct.kernel`; test suites and cuTile Python's own package are left
out (their kernels live inside test functions). Each file is translated in a process of its own,
with the check against cuTile Python's front end on.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SKIP = re.compile(r"/(test|tests|src/cuda|docs)/")


def survey(folders: list[Path]) -> list[dict]:
    files = sorted(p for folder in folders for p in folder.rglob("*.py")
                   if "@ct.kernel" in p.read_text(errors="ignore") and not SKIP.search(p.as_posix()))
    results = []
    with tempfile.TemporaryDirectory() as out:
        for f in files:
            run = subprocess.run([sys.executable, "-m", "tilebridge.cli", "translate", "--partial", str(f), "-o",
                                  f"{out}/{f.stem}"], capture_output=True, text=True, timeout=600,
                                 env={"PYTHONPATH": str(REPO / "python"), "PATH": "/usr/bin:/bin",
                                      "HOME": str(Path.home())})
            text = run.stdout + run.stderr
            # held to cuTile Python's front end, or translated where it rejects every guess of the constants
            # (a kernel with a variant per type of its unannotated scalars: "k: s i32: agrees with ...")
            translated = re.findall(r"^(\w+): (?:[^:\n]*: )?(?:agrees with|not checked against) cuTile", text, re.M)
            left = re.findall(r"^left out (\w+): (.*)$", text, re.M) + re.findall(r"^  (\w+): (\S+\.py:\d+:\d+: .*)$",
                                                                                  text, re.M)
            results.append({"file": f.as_posix(), "translated": translated, "refused": left,
                            "failed": None if "wrote " in text or left else (text.strip().splitlines() or ["?"])[-1]})
            print(f"{f}: {len(translated)} translated, {len(left)} refused", flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = survey(args.folders)
    kernels = sum(len(r["translated"]) + len(r["refused"]) for r in results)
    print(f"{len(results)} files, {kernels} kernels: {sum(len(r['translated']) for r in results)} translated, "
          f"{sum(len(r['refused']) for r in results)} refused, {sum(1 for r in results if r['failed'])} files failed")
    for r in results:
        for kernel, why in r["refused"]:
            print(f"  {Path(r['file']).name} {kernel}: {why}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
