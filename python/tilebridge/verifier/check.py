"""Check: the same inputs through cuTile Python and the Rust extension, outputs compared.

A case is what `ct.launch` takes: `(kernel, grid, args)`. Both sides get their own
copies of every array argument, launch on the same stream, and every array argument is
compared afterwards, whatever the translation says the kernel writes: bitwise where the two
agree exactly, otherwise within the dtype's tolerance. A case with nothing to compare fails.
"""

from __future__ import annotations

import importlib
import multiprocessing
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

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


def _copy(args: Iterable[Any]) -> list[Any]:
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
    py_args, rs_args = _copy(args), _copy(args)
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


def check_files(paths: Sequence[str], modules: Sequence[str], part: int = 0,
                parts: int = 1) -> list[tuple[int, CaseResult | None, str]]:
    """`checked_cases` as a list (what a worker process hands back)."""
    return list(checked_cases(paths, modules, part, parts))


def checked_cases(paths: Sequence[str], modules: Sequence[str], part: int = 0,
                  parts: int = 1) -> Iterator[tuple[int, CaseResult | None, str]]:
    """The cases `part`, `part + parts`, ... of the files' `cases(torch)`, in order, each run by
    `run_case` on the first of the installed extensions `modules` that holds its kernel: (the
    case's number, its result, its kernel's name). The result is None for a kernel that no
    extension holds. Every part draws every case, so inputs are those of one serial run."""
    exts = [importlib.import_module(m) for m in modules]
    holding = {k: e for e in reversed(exts) for k in extension_metadata(e).kernels}
    number = 0
    for path in paths:
        for kernel, grid, args in load_cases(path):
            if number % parts == part:
                name = kernel_name(kernel)
                yield number, run_case(holding[name], kernel, grid, args) if name in holding else None, name
            number += 1


# Shares per process: results come back a share at a time, so a run cut off by a time limit
# still reports most of what it compared (each share draws every case's inputs once more).
SHARES_PER_JOB = 4


def check_files_in_parallel(paths: Sequence[str], modules: Sequence[str],
                            jobs: int) -> Iterator[tuple[int, CaseResult | None, str]]:
    """`checked_cases` split over `jobs` processes (both JITs are CPU-bound; the GPU is shared),
    yielded as each share finishes: in case order with one job, else share by share."""
    if jobs <= 1:
        yield from checked_cases(paths, modules)
        return
    spawn = multiprocessing.get_context("spawn")  # CUDA cannot be forked
    parts = jobs * SHARES_PER_JOB
    with ProcessPoolExecutor(jobs, mp_context=spawn) as pool:
        shares = [pool.submit(check_files, paths, modules, part, parts) for part in range(parts)]
        for share in as_completed(shares):
            yield from share.result()
