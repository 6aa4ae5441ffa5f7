"""Summarizes the routing log of a TileGym run with `tilegym_plugin`: per test file, how many
tests passed or failed with their translated kernels running in Rust, and which never reached
a Rust kernel; per kernel, how many launches ran in Rust. Exits 1 where any test failed or the
log is empty (a run that stopped before its first test), so a round cannot pass on it.

    python3 tests/gpu/tilegym_summary.py routing.jsonl
"""

import json
import sys
from collections import Counter, defaultdict


def main(path) -> int:
    try:
        rows = [json.loads(line) for line in open(path) if line.strip()]
    except OSError as e:
        print(f"no routing log: {e}")
        return 1
    if not rows:
        print(f"{path} is empty: no test ran")
        return 1
    per_file = defaultdict(Counter)
    launches = Counter()
    failures = []
    for r in rows:
        file = r["test"].split("::")[0]
        reached = bool(r["rust"])
        per_file[file][f"{r['outcome']}{' on Rust' if reached and r['outcome'] != 'skipped' else ''}"] += 1
        launches.update(r["rust"])
        if r["outcome"] == "failed":
            failures.append(r)
    print(f"{'test file':<44} {'passed on Rust':>14} {'failed on Rust':>14} {'passed, Python only':>19} "
          f"{'failed, Python only':>19} {'skipped':>7}")
    for file, c in sorted(per_file.items()):
        print(f"{file:<44} {c['passed on Rust']:>14} {c['failed on Rust']:>14} {c['passed']:>19} {c['failed']:>19} "
              f"{c['skipped']:>7}")
    total = sum(per_file.values(), Counter())
    print(f"{'total':<44} {total['passed on Rust']:>14} {total['failed on Rust']:>14} {total['passed']:>19} "
          f"{total['failed']:>19} {total['skipped']:>7}")
    print("\nlaunches that ran in Rust, per kernel:")
    for kernel, n in sorted(launches.items()):
        print(f"  {kernel:<60} {n:>6}")
    for r in failures:
        print(f"\nFAILED {r['test']} (rust: {r['rust']}, python: {r['python']})\n  {r['error']}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
