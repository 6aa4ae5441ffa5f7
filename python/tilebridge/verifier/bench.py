"""Benchmark: Rust extension vs cuTile Python, side by side in one run, same GPU, same inputs.

For each case: the first launch of each side (JIT included: run with both disk caches off,
`CUDA_TILE_CACHE_DIR=off` and `TILEBRIDGE_CACHE_DIR=off`, as `tilebridge bench` and the benchmark
scripts do, so both compile from scratch), one launch of each compared (`check.run_case`: a timed kernel that
computes something else is reported, not hidden), then kernel time by CUDA events: the median of
`runs` launches, each behind an L2 flush and a GPU sleep that hides the host's enqueue cost, in
three interleaved rounds. A case that fails on either side is listed with why, never dropped.
Host launch cost is measured on a tiny launch. Prints a table; nothing here passes or fails.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable

from .check import describe, kernel_name, run_case
from ..runtime.launch import launch


@dataclass
class Timing:
    kernel: str
    description: str
    first_py_s: float = 0.0
    first_rs_s: float = 0.0
    py_ms: float = 0.0
    rs_ms: float = 0.0
    agreement: str = ""  # "bitwise", "close", or how the outputs differ
    error: str = ""  # the case could not be timed: which side failed, and why
    bytes: int = 0  # what its array arguments hold: a lower bound of the memory a launch moves

    @property
    def timed(self) -> bool:
        return not self.error

    @property
    def ratio(self) -> float:
        return self.rs_ms / self.py_ms


# GPU cycles to sleep before each timed launch (about 0.5 ms on an H200): the GPU is busy
# while the host enqueues, so the events time the kernel and not the launcher's host cost.
SLEEP_CYCLES = 1_000_000


# Bytes written before each timed launch: more than any GPU's L2 (the H200's is 60 MiB), so no
# launch finds its inputs in L2 where the one before left them.
FLUSH_BYTES = 256 << 20
_flush: list[Any] = []


def _flush_l2() -> None:
    import torch

    if not _flush:
        _flush.append(torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda"))
    _flush[0].zero_()


def _event_median(fn: Callable[[], None], runs: int) -> float:
    import torch

    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(runs)]
    for start, end in pairs:
        _flush_l2()
        torch.cuda._sleep(SLEEP_CYCLES)
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in pairs)


def _first(fn: Callable[[], None]) -> float:
    import torch

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def array_bytes(args: Any) -> int:
    """The bytes the array arguments (and lists of arrays) of a launch hold."""
    total = 0
    for a in args:
        if isinstance(a, (list, tuple)):
            total += array_bytes(a)
        elif hasattr(a, "nbytes"):
            total += int(a.nbytes)
    return total


def time_case(ext, kernel: Any, grid: Any, args: tuple, runs: int = 50, warmup: int = 5) -> Timing:
    import cuda.tile as ct
    import torch

    stream = torch.cuda.current_stream()

    def py() -> None:
        ct.launch(stream, grid, kernel, args)

    def rs() -> None:
        launch(ext, stream, grid, kernel, args)

    timing = Timing(kernel_name(kernel), describe(args), bytes=array_bytes(args))
    for side, fn in (("cuTile Python", py), ("Rust", rs)):
        try:
            first = _first(fn)
        except Exception as e:  # noqa: BLE001 - listed with the table, the other cases still run
            timing.error = f"{side} failed: {type(e).__name__}: {str(e)[:200]}"
            return timing
        if side == "Rust":
            timing.first_rs_s = first
        else:
            timing.first_py_s = first
    verdict = run_case(ext, kernel, grid, args)
    timing.agreement = ("bitwise" if verdict.ok and all(o.bitwise for o in verdict.outputs) else
                        "close" if verdict.ok else f"DIFFERS: {verdict}")
    for _ in range(warmup):
        py()
        rs()
    # Interleave the two sides in rounds so clock and thermal drift hit both alike.
    py_ms, rs_ms = [], []
    for _ in range(3):
        py_ms.append(_event_median(py, runs))
        rs_ms.append(_event_median(rs, runs))
    timing.py_ms, timing.rs_ms = statistics.median(py_ms), statistics.median(rs_ms)
    return timing


def host_overhead_direct_us(fn: Callable[[], None], launches: int = 2000) -> float:
    """Host microseconds per call of `fn`, an enqueue-only launch (the GPU work must be tiny)."""
    import torch

    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(launches):
        fn()
    per_launch = (time.perf_counter() - t0) / launches * 1e6
    torch.cuda.synchronize()
    return per_launch


def host_costs_us(launchers: dict[str, Callable[[], None]], rounds: int = 9, launches: int = 1000,
                  after_round: Callable[[], None] = lambda: None) -> dict[str, list[float]]:
    """Host microseconds per call of each enqueue-only launcher, measured in `rounds` interleaved
    rounds of `launches` calls (this host's speed drifts by tens of percent between minutes, so
    launchers are compared within a round, never across runs): {name: [us per round]}.
    `after_round` runs untimed after each launcher's round (e.g. to sync what it left in flight)."""
    costs: dict[str, list[float]] = {name: [] for name in launchers}
    for _ in range(rounds):
        for name, fn in launchers.items():
            costs[name].append(host_overhead_direct_us(fn, launches))
            after_round()
    return costs


def print_table(rows: list[Timing]) -> None:
    print(f"{'kernel':<14} {'inputs':<46} {'JIT py s':>8} {'JIT rs s':>8} {'py ms':>9} {'rs ms':>9} {'rs/py':>6}  "
          "outputs")
    for r in rows:
        if r.timed:
            print(f"{r.kernel:<14} {r.description[:46]:<46} {r.first_py_s:>8.3f} {r.first_rs_s:>8.3f} "
                  f"{r.py_ms:>9.4f} {r.rs_ms:>9.4f} {r.ratio:>6.3f}  {r.agreement}")
        else:
            print(f"{r.kernel:<14} {r.description[:46]:<46} {'':>8} {'':>8} {'':>9} {'':>9} {'-':>6}  {r.error}")
    timed = [r for r in rows if r.timed]
    if timed:
        geo = statistics.geometric_mean(r.ratio for r in timed)
        failed = len(rows) - len(timed)
        print(f"geomean rs/py over {len(timed)} cases: {geo:.3f}"
              + (f" ({failed} case{'s' if failed > 1 else ''} failed, listed above)" if failed else ""))
