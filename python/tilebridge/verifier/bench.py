"""Benchmark: Rust extension vs cuTile Python, side by side in one run, same GPU, same inputs.

For each case: kernel time by CUDA events (median of `runs` launches, each timed on
its own behind a GPU sleep that hides the host's enqueue cost), the first-launch (JIT) wall time of each side, and the ratio
Rust / cuTile Python. Host launch cost is measured on a tiny launch. Prints a table;
nothing here passes or fails.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable

from .check import describe, kernel_name
from ..runtime.launch import launch


@dataclass
class Timing:
    kernel: str
    description: str
    first_py_s: float
    first_rs_s: float
    py_ms: float
    rs_ms: float

    @property
    def ratio(self) -> float:
        return self.rs_ms / self.py_ms


# GPU cycles to sleep before each timed launch (about 0.5 ms on an H200): the GPU is busy
# while the host enqueues, so the events time the kernel and not the launcher's host cost.
SLEEP_CYCLES = 1_000_000


def _event_median(fn: Callable[[], None], runs: int) -> float:
    import torch

    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(runs)]
    for start, end in pairs:
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


def time_case(ext, kernel: Any, grid: Any, args: tuple, runs: int = 50, warmup: int = 5) -> Timing:
    import cuda.tile as ct
    import torch

    stream = torch.cuda.current_stream()

    def py() -> None:
        ct.launch(stream, grid, kernel, args)

    def rs() -> None:
        launch(ext, stream, grid, kernel, args)

    first_py, first_rs = _first(py), _first(rs)
    for _ in range(warmup):
        py()
        rs()
    # Interleave the two sides in rounds so clock and thermal drift hit both alike.
    py_ms, rs_ms = [], []
    for _ in range(3):
        py_ms.append(_event_median(py, runs))
        rs_ms.append(_event_median(rs, runs))
    return Timing(kernel_name(kernel), describe(args), first_py, first_rs, statistics.median(py_ms),
                  statistics.median(rs_ms))


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


def host_overhead_us(ext, kernel: Any, grid: Any, args: tuple, launches: int = 2000) -> tuple[float, float]:
    """Host microseconds per enqueued launch, `ct.launch` vs `tb.launch` (tiny kernels, no syncs)."""
    import cuda.tile as ct
    import torch

    stream = torch.cuda.current_stream()
    return (host_overhead_direct_us(lambda: ct.launch(stream, grid, kernel, args), launches),
            host_overhead_direct_us(lambda: launch(ext, stream, grid, kernel, args), launches))


def print_table(rows: list[Timing]) -> None:
    print(f"{'kernel':<14} {'inputs':<46} {'JIT py s':>8} {'JIT rs s':>8} {'py ms':>9} {'rs ms':>9} {'rs/py':>6}")
    for r in rows:
        print(f"{r.kernel:<14} {r.description[:46]:<46} {r.first_py_s:>8.3f} {r.first_rs_s:>8.3f} "
              f"{r.py_ms:>9.4f} {r.rs_ms:>9.4f} {r.ratio:>6.3f}")
    if rows:
        geo = statistics.geometric_mean(r.ratio for r in rows)
        print(f"geomean rs/py over {len(rows)} cases: {geo:.3f}")
