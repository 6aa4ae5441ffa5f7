"""Check: the same inputs through cuTile Python and the Rust extension, outputs compared.

A case is what `ct.launch` takes: `(kernel, grid, args)`. Both sides get their own
copies of every array argument, launch on the same stream, and every array argument is
compared afterwards, whatever the translation says the kernel writes: bitwise where the two
agree exactly, otherwise within the dtype's tolerance. A case with nothing to compare fails.
"""

from __future__ import annotations

import importlib
import multiprocessing
import time
from dataclasses import dataclass, field
from multiprocessing import connection
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from ..dtypes import from_torch
from ..translator.frontend import import_file
from ..runtime.launch import extension_metadata, kernel_info, launch

# (rtol, atol) per dtype where the two compilers may round differently; any other dtype must match exactly.
TOLERANCE = {"f32": (1e-5, 1e-6), "f16": (1e-3, 1e-3), "bf16": (1e-2, 1e-2), "f64": (1e-12, 1e-12)}


@dataclass
class OutputResult:
    param: str
    dtype: str
    bitwise: bool
    close: bool
    max_abs_err: float

    @property
    def verdict(self) -> str:
        return "bitwise" if self.bitwise else ("close" if self.close else "MISMATCH")


@dataclass
class CaseResult:
    kernel: str
    description: str
    outputs: list[OutputResult] = field(default_factory=list)
    error: str = ""  # a launch that raised instead: which side, and why

    @property
    def ok(self) -> bool:
        return not self.error and bool(self.outputs) and all(o.bitwise or o.close for o in self.outputs)

    def __str__(self) -> str:
        outs = self.error or ", ".join(f"{o.param}: {o.verdict}" + (
            "" if o.bitwise else f" (max |err| {o.max_abs_err:.3g})") for o in self.outputs) or "nothing compared"
        return f"{'ok ' if self.ok else 'BAD'} {self.kernel} [{self.description}] {outs}"


def kernel_name(kernel: Any) -> str:
    return kernel._pyfunc.__name__


def describe(args: Iterable[Any]) -> str:
    parts = []
    for a in args:
        if isinstance(a, (list, tuple)):
            parts.append(f"[{describe(a)}]")
        elif hasattr(a, "shape") and hasattr(a, "dtype"):
            parts.append(f"{str(a.dtype).replace('torch.', '')}{list(a.shape)}")
        else:
            parts.append(repr(a))
    return ", ".join(parts)


def copies(args: Iterable[Any]) -> list[Any]:
    """Own copies of the arrays, lists of arrays item by item."""
    return [[x.clone() for x in a] if isinstance(a, (list, tuple)) else a.clone() if hasattr(a, "clone") else a
            for a in args]


def run_case(ext, kernel: Any, grid: Any, args: tuple) -> CaseResult:
    """Runs one case through both implementations and compares what the kernel writes."""
    import cuda.tile as ct
    import torch

    name = kernel_name(kernel)
    params = kernel_info(ext, name).params
    # Every array argument, not only those the translation says the kernel writes: an output it
    # took for an input shows as a difference.
    arrays = [i for i, a in enumerate(args) if hasattr(a, "clone") or (
        isinstance(a, (list, tuple)) and a and all(hasattr(x, "clone") for x in a))]
    py_args, rs_args = copies(args), copies(args)
    stream = torch.cuda.current_stream()
    result = CaseResult(name, describe(args))
    for side, run in (("cuTile Python", lambda: ct.launch(stream, grid, kernel, tuple(py_args))),
                      ("Rust", lambda: launch(ext, stream, grid, kernel, rs_args))):
        try:
            run()
        except Exception as e:  # noqa: BLE001 - the case fails, with why; the others still run
            result.error = f"{side} launch failed: {type(e).__name__}: {e}"
            return result
    torch.cuda.synchronize()
    for i in arrays:
        name = params[i].name
        if isinstance(py_args[i], (list, tuple)):
            for j, (ref, got) in enumerate(zip(py_args[i], rs_args[i])):
                result.outputs.append(_compare(f"{name}[{j}]", ref, got))
        else:
            result.outputs.append(_compare(name, py_args[i], rs_args[i]))
    return result


def _compare(param: str, ref: Any, got: Any) -> OutputResult:
    """One output of both sides (torch tensors), compared through `compare`."""
    import torch

    def bits(t):
        return (t.view(torch.uint8) if t.element_size() == 1 else t.view(_int_of(t))).cpu().numpy()

    return compare(param, str(ref.dtype).replace("torch.", ""), bits(ref), bits(got), ref.double().cpu().numpy(),
                   got.double().cpu().numpy())


def compare(param: str, dtype: str, ref_bits: Any, got_bits: Any, ref: Any, got: Any) -> OutputResult:
    """The verdict on one output, from NumPy arrays: both sides' raw bits and their values as f64.
    Bitwise where the bits agree; otherwise close where every value is within the dtype's
    tolerance (`TOLERANCE`; exact for any other dtype), NaN only where the reference has NaN."""
    import numpy as np

    if ref.shape != got.shape:
        return OutputResult(param, dtype, False, False, float("inf"))
    same_bits = bool(np.array_equal(ref_bits, got_bits))
    with np.errstate(invalid="ignore"):  # inf - inf
        diff = np.where(np.isnan(ref) & np.isnan(got), 0.0, np.abs(ref - got))
    max_err = float(np.nan_to_num(diff, nan=np.inf).max()) if diff.size else 0.0
    rtol, atol = TOLERANCE.get(from_torch(dtype), (0.0, 0.0))
    close = same_bits or bool(np.allclose(got, ref, rtol=rtol, atol=atol, equal_nan=True))
    return OutputResult(param, dtype, same_bits, close, max_err)


def _int_of(t):
    import torch

    return {2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]


def load_cases(path: str | Path) -> Iterator[tuple[Any, Any, tuple]]:
    """The `cases(torch)` generator of a kernel file: yields `(kernel, grid, args)`. torch's random
    numbers start from one seed at each call, so every call draws the same inputs, whichever
    process and whatever it ran before (`check -j` runs several shares in one process)."""
    import torch

    module = import_file(path)
    if not hasattr(module, "cases"):
        raise AttributeError(f"{path} defines no `cases(torch)` function, so there is nothing to check")
    torch.manual_seed(0)
    yield from module.cases(torch)


def checked_cases(paths: Sequence[str], modules: Sequence[str], part: int = 0, parts: int = 1, start: int = 0,
                  announce: Callable[[int, str, str], None] | None = None
                  ) -> Iterator[tuple[int, CaseResult | None, str]]:
    """The cases `part`, `part + parts`, ... (from case number `start` on) of the files'
    `cases(torch)`, in order, each run by `run_case` on the first of the installed extensions
    `modules` that holds its kernel: (the case's number, its result, its kernel's name). The
    result is None for a kernel that no extension holds. Every part draws every case, so inputs are
    those of one serial run. `announce(number, kernel, description)` is told of each case before it
    runs."""
    exts = [importlib.import_module(m) for m in modules]
    holding = {k: e for e in reversed(exts) for k in extension_metadata(e).kernels}
    number = 0
    for path in paths:
        for kernel, grid, args in load_cases(path):
            if number % parts == part and number >= start:
                name = kernel_name(kernel)
                if announce is not None:
                    announce(number, name, describe(args))
                yield number, run_case(holding[name], kernel, grid, args) if name in holding else None, name
            number += 1


def run_share(paths: Sequence[str], modules: Sequence[str], part: int, parts: int, start: int, conn: Any) -> None:
    """A worker process' share of `check -j`: each case announced before it runs and its result
    sent as it comes, through a pipe (each message written before the case goes on), so that the
    parent can tell which case a process hangs or dies in."""
    def announce(number: int, kernel: str, description: str) -> None:
        conn.send(("start", number, kernel, description))

    for number, result, kernel in checked_cases(paths, modules, part, parts, start, announce):
        conn.send(("done", number, result, kernel))
    conn.send(("end", None, None, None))


# A case with no result after this long is taken to hang (a compile and a launch take seconds).
CASE_TIMEOUT_S = 300.0


def check_files_in_parallel(paths: Sequence[str], modules: Sequence[str], jobs: int,
                            case_timeout: float = CASE_TIMEOUT_S, share: Callable[..., None] = run_share
                            ) -> Iterator[tuple[int, CaseResult | None, str]]:
    """`checked_cases` split over `jobs` processes (both JITs are CPU-bound; the GPU is shared),
    yielded case by case as they finish: in case order with one job. A case whose process dies,
    or gives no sign of life for `case_timeout` seconds, fails with why; its process is stopped and
    a new one goes on with the rest of its share. `share` is the worker (`run_share`)."""
    if jobs <= 1:
        yield from checked_cases(paths, modules)
        return
    spawn = multiprocessing.get_context("spawn")  # CUDA cannot be forked
    workers: dict[Any, tuple[int, Any]] = {}  # the pipe a worker writes to -> (its part, its process)
    heard: dict[int, float] = {}
    running: dict[int, tuple[int, str, str]] = {}  # part -> the case it runs: number, kernel, description

    def start(part: int, first: int) -> None:
        reader, writer = spawn.Pipe(duplex=False)
        proc = spawn.Process(target=share, args=(paths, modules, part, jobs, first, writer), daemon=True)
        proc.start()
        writer.close()  # the worker's end alone: its death reads as the end of the pipe
        workers[reader], heard[part] = (part, proc), time.monotonic()

    def stopped(reader: Any, why: str) -> tuple[int, CaseResult, str]:
        """The case the worker of `reader` was running, failed with `why`; the rest of its share goes
        on in a new process."""
        part, proc = workers.pop(reader)
        proc.kill()
        proc.join()
        reader.close()
        if part not in running:
            raise RuntimeError(f"check: worker {part} of {jobs} stopped outside any case: {why}")
        number, name, description = running.pop(part)
        start(part, number + 1)
        return number, CaseResult(name, description, error=why), name

    for part in range(jobs):
        start(part, 0)
    try:
        while workers:
            for reader in connection.wait(list(workers), timeout=1.0):
                part, proc = workers[reader]
                heard[part] = time.monotonic()
                try:
                    kind, number, payload, kernel = reader.recv()
                except EOFError:
                    proc.join()
                    yield stopped(reader, f"the process running it died (exit code {proc.exitcode})")
                    continue
                if kind == "start":
                    running[part] = (number, payload, kernel)
                elif kind == "done":
                    running.pop(part, None)
                    yield number, payload, kernel
                else:
                    del workers[reader]
                    proc.join()
                    reader.close()
            for reader, (part, _) in list(workers.items()):
                if time.monotonic() - heard[part] > case_timeout:
                    yield stopped(reader, f"no result within {case_timeout:.0f} s: its compile or launch hangs "
                                          "(the process was stopped)")
    finally:
        for _, proc in workers.values():
            proc.kill()
