"""Ahead of any launch: every specialization a build makes (those checked against cuTile Python)
compiled through cutile's frontend to Tile IR and by `tileiras` to an sm_90 cubin, on the CPU, so
that a kernel `tileiras` rejects is a build error naming it, not a failure of a user's first launch.

The freshly built wheel is unpacked and its extension imported in a child process (a process can
import an extension module once; the one in this process may be an older build).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Callable

from .. import toolchain
from ..errors import BuildError

SHOWN = 5  # failures a BuildError lists in full

# The child: imports the extension and the function named `module:function`, then runs it on each
# job in a thread pool; one JSON line per job, in order: what it returned, or the job with its error.
_CHILD = """
import importlib, json, sys
from concurrent.futures import ThreadPoolExecutor
ext = importlib.import_module(sys.argv[1])
where, name = sys.argv[3].split(":")
one = getattr(importlib.import_module(where), name)
jobs = json.loads(sys.stdin.read())
def guarded(job):
    try:
        return one(ext, job)
    except Exception as e:
        return {**job, "error": f"{type(e).__name__}: {e}"}
with ThreadPoolExecutor(max_workers=int(sys.argv[2])) as pool:
    for result in pool.map(guarded, jobs):
        print(json.dumps(result), flush=True)
"""


def to_cubin(ext: Any, job: dict) -> dict:
    """In the child: one specialization compile-only through the extension, then tileiras; nothing
    to report where it compiles."""
    _, bytecode = ext._compile_only(job["kernel"], job["generics"], [tuple(s) for s in job["strides"]], "sm_90")
    toolchain.tileiras(bytecode)
    return {}


def compile_all(wheel: Path, module: str, specializations: dict[str, list], quiet: bool = False) -> int:
    """Compiles every specialization of every kernel to an sm_90 cubin (and throws them away);
    the number compiled. Raises BuildError naming each kernel and specialization that fails."""
    jobs = [{"kernel": kernel, "generics": spec.generics, "strides": spec.strides}
            for kernel, specs in specializations.items() for spec in specs]
    if not jobs:
        return 0
    if not quiet:
        print(f"tilebridge: {len(jobs)} specializations to sm_90 cubins (tileiras)", file=sys.stderr)
    failures = [r for r in in_child(wheel, module, to_cubin, jobs) if "error" in r]
    if failures:
        raise_failures(module, failures, len(jobs), "do not compile to an sm_90 cubin")
    return len(jobs)


def in_child(wheel: Path, module: str, one: Callable[[Any, dict], dict], jobs: list[dict]) -> list[dict]:
    """Runs `one(ext, job)` (a module-level function) for each job in a child process that imports
    the extension in `wheel` (unpacked, on its path), a thread per core; the results in order, a
    failed job as itself with its `error`. A child that fails without printing is a BuildError."""
    root = toolchain.cuda_root()
    env = {**os.environ, **({"CUDA_TOOLKIT_PATH": str(root)} if root else {})}
    with tempfile.TemporaryDirectory() as d:
        with zipfile.ZipFile(wheel) as z:
            z.extractall(d)
        env["PYTHONPATH"] = os.pathsep.join([d, *sys.path])
        proc = subprocess.run([sys.executable, "-c", _CHILD, module, str(os.cpu_count() or 1),
                               f"{one.__module__}:{one.__qualname__}"],
                              input=json.dumps(jobs), capture_output=True, text=True, env=env)
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 and not any("error" in r for r in results):
        raise BuildError(f"compiling {module}'s kernels failed:\n{proc.stderr.strip()[-2000:]}")
    return results


def raise_failures(module: str, failures: list[dict], total: int, what: str) -> None:
    """A BuildError listing the first failed jobs (kernel, generics, the error)."""
    lines = [f"kernel `{f['kernel']}` at {', '.join(f['generics'])}: {f['error'][:600]}" for f in failures[:SHOWN]]
    more = f"\n  ... and {len(failures) - SHOWN} more" if len(failures) > SHOWN else ""
    raise BuildError(f"{len(failures)} of {total} specializations of {module} {what} (the wheel is left "
                     "uninstalled):\n  " + "\n  ".join(lines) + more)
