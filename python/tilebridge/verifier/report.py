"""A benchmark run, written three ways: a markdown table, a JSON of every raw figure, a PNG chart.

A run (`Run`) holds what `bench.py` measured side by side in one process: each launch's kernel
time through cuTile Python and through the Rust extension, with the bytes its arrays hold (a
lower bound of its memory traffic, given as a share of the copy bandwidth measured in the same
run); the GPU's roofline figures measured in the same run (`measure_roofline`); host costs per
launch path; end-to-end times of small launches; first-launch (JIT) times. Nothing here passes or
fails. The chart needs matplotlib (`pip install matplotlib`); where the GPU machine lacks it,
`tilebridge chart RUN.json` draws it from the JSON anywhere.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import statistics
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bench import Timing


@dataclass
class Roofline:
    """What the GPU does at best, measured in the same run as the kernels."""

    copy_gbps: float  # device-to-device copy of 1 GiB: bytes read plus bytes written, per second
    matmul_tflops: float  # torch's f16 matmul (cuBLAS), 8192^3


def _median_ms(fn, runs: int = 20) -> float:
    import torch

    fn()
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(runs)]
    for start, end in pairs:
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in pairs)


def measure_roofline() -> Roofline:
    import torch

    src = torch.empty(1 << 29, dtype=torch.float16, device="cuda")  # 1 GiB
    dst = torch.empty_like(src)
    copy_ms = _median_ms(lambda: dst.copy_(src))
    copy_gbps = 2 * src.numel() * src.element_size() / (copy_ms * 1e-3) / 1e9
    del src, dst
    n = 8192
    a, b = (torch.randn(n, n, dtype=torch.float16, device="cuda") for _ in range(2))
    mm_ms = _median_ms(lambda: a @ b)
    return Roofline(copy_gbps, 2 * n ** 3 / (mm_ms * 1e-3) / 1e12)


def _commit() -> str:
    """The commit measured: `TILEBRIDGE_COMMIT` (a copy of the tree without its git folder, as the
    GPU machine gets), else git's."""
    if os.environ.get("TILEBRIDGE_COMMIT"):
        return os.environ["TILEBRIDGE_COMMIT"]
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10,
                             cwd=Path(__file__).resolve().parent)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _environment() -> dict[str, str]:
    import torch

    env = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "date": datetime.date.today().isoformat(), "commit": _commit()}
    try:
        from importlib.metadata import version

        env["cuda-tile"] = version("cuda-tile")
    except Exception:  # noqa: BLE001 - a figure the run can do without
        pass
    return env


@dataclass
class Run:
    """Everything one benchmark run measured."""

    launches: list[Timing]
    roofline: Roofline | None = None
    host_us: dict[str, list[float]] = field(default_factory=dict)  # path -> us per round
    end_to_end_us: dict[str, list[float]] = field(default_factory=dict)  # path -> us per round
    environment: dict[str, str] = field(default_factory=dict)

    @classmethod
    def here(cls, launches: list[Timing], **figures: Any) -> "Run":
        return cls(launches, environment=_environment(), **figures)

    @property
    def timed(self) -> list[Timing]:
        return [t for t in self.launches if t.timed]

    def geomean(self) -> float | None:
        return statistics.geometric_mean(t.ratio for t in self.timed) if self.timed else None

    def copy_share(self, t: Timing, ms: float) -> float | None:
        """The arrays' bytes over `ms`, as a share of the copy bandwidth (a lower bound of the
        share of the memory roofline reached: a kernel moves at least its arrays once)."""
        if not self.roofline or not t.bytes or not ms:
            return None
        return t.bytes / (ms * 1e-3) / (self.roofline.copy_gbps * 1e9)

    # -- writers --
    def to_json(self) -> str:
        launches = []
        for t in self.launches:
            row = dataclasses.asdict(t)
            if t.timed:
                row.update(ratio=t.ratio, py_copy_share=self.copy_share(t, t.py_ms),
                           rs_copy_share=self.copy_share(t, t.rs_ms))
            launches.append(row)
        return json.dumps({
            "environment": self.environment,
            "roofline": dataclasses.asdict(self.roofline) if self.roofline else None,
            "geomean_rs_over_py": self.geomean(),
            "launches": launches,
            "host_us_per_round": self.host_us,
            "end_to_end_us_per_round": self.end_to_end_us,
        }, indent=1)

    def to_markdown(self) -> str:
        env = self.environment
        lines = [f"# Benchmark: Rust extension vs cuTile Python ({env.get('gpu', '?')}, {env.get('date', '?')}, "
                 f"commit {env.get('commit', '?')})", ""]
        lines.append(", ".join(f"{k} {v}" for k, v in env.items() if k not in ("gpu", "date", "commit")) + ".")
        if self.roofline:
            lines += ["", f"Measured in the same run: device copy **{self.roofline.copy_gbps:.0f} GB/s**, torch f16 "
                          f"matmul (8192^3) **{self.roofline.matmul_tflops:.0f} TFLOP/s**."]
        lines += ["", "## Kernel time per launch (CUDA events, L2 flushed, median of 3 interleaved rounds)", "",
                  "| launch | arrays | py ms | rs ms | rs/py | rs % copy bw | JIT py s | JIT rs s | outputs |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---|"]
        for t in self.launches:
            if not t.timed:
                lines.append(f"| {t.kernel} | {t.description} | | | | | | | {t.error} |")
                continue
            share = self.copy_share(t, t.rs_ms)
            lines.append(f"| {t.kernel} | {t.description} | {t.py_ms:.4f} | {t.rs_ms:.4f} | {t.ratio:.3f} | "
                         f"{'' if share is None else f'{share:.0%}'} | {t.first_py_s:.3f} | {t.first_rs_s:.3f} | "
                         f"{t.agreement} |")
        geo = self.geomean()
        if geo is not None:
            worst = sorted(self.timed, key=lambda t: -t.ratio)[:3]
            lines += ["", f"Geomean rs/py over {len(self.timed)} launches: **{geo:.3f}**; slowest: "
                      + ", ".join(f"{t.kernel} {t.ratio:.3f}" for t in worst) + "."]
        for title, figures in (("Host cost of one enqueued launch", self.host_us),
                               ("End-to-end time of a small launch (enqueue and wait)", self.end_to_end_us)):
            if figures:
                lines += ["", f"## {title} (median of interleaved rounds, µs)", "", "| path | µs | min-max |",
                          "|---|---:|---|"]
                lines += [f"| {name} | {statistics.median(us):.2f} | {min(us):.2f}-{max(us):.2f} |"
                          for name, us in figures.items()]
        return "\n".join(lines) + "\n"

    def write(self, prefix: str | Path, draw: bool = True) -> list[Path]:
        """Writes `<prefix>.md`, `<prefix>.json` and, with matplotlib and `draw`, `<prefix>.png`."""
        prefix = Path(prefix)
        prefix.parent.mkdir(parents=True, exist_ok=True)
        written = [Path(f"{prefix}.md"), Path(f"{prefix}.json")]
        written[0].write_text(self.to_markdown())
        written[1].write_text(self.to_json())
        png = chart(written[1], Path(f"{prefix}.png")) if draw else None
        return written + ([png] if png else [])


def chart(run_json: Path, png: Path) -> Path | None:
    """Draws a run's JSON as a PNG: rs/py per launch, and the host costs. None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib is not installed: no chart; `tilebridge chart {run_json}` draws it where it is")
        return None
    run = json.loads(Path(run_json).read_text())
    timed = [r for r in run["launches"] if not r["error"]]
    host = run.get("host_us_per_round") or {}
    fig, axes = plt.subplots(1 + bool(host), 1, figsize=(10, 0.28 * len(timed) + 2 + 2.5 * bool(host)),
                             gridspec_kw={"height_ratios": [max(len(timed), 1) * 0.28 + 1] + ([2.5] if host else [])},
                             squeeze=False)
    ax = axes[0][0]
    labels = [f"{r['kernel'][:40]} [{r['description'].split(':')[0][:36]}]" for r in timed]
    ratios = [r["ratio"] for r in timed]
    # Bars from 1.0: a few percent either way is what there is to see.
    ax.barh(range(len(timed)), [x - 1 for x in ratios], left=1.0,
            color=["#c44" if x > 1.03 else "#4a4" if x < 0.97 else "#888" for x in ratios])
    for i, x in enumerate(ratios):
        ax.text(max(x, 1.0) + 0.002, i, f"{x:.3f}", va="center", fontsize=6)
    ax.axvline(1.0, color="black", linewidth=0.8)
    spread = max([0.1, *(abs(x - 1) * 1.3 for x in ratios)])
    ax.set_xlim(1 - spread, 1 + spread)
    ax.set_yticks(range(len(timed)), labels, fontsize=7)
    ax.invert_yaxis()
    env = run.get("environment", {})
    geo = run.get("geomean_rs_over_py")
    title = f"Rust / cuTile Python kernel time per launch\n{env.get('gpu', '')}, commit {env.get('commit', '')}"
    ax.set_title(title + (f", geomean {geo:.3f}" if geo else ""), fontsize=9)
    ax.set_xlabel("rs/py (below 1: Rust faster)")
    if host:
        ax = axes[1][0]
        names = list(host)
        ax.barh(range(len(names)), [statistics.median(host[n]) for n in names], color="#48a")
        ax.set_yticks(range(len(names)), names, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("host µs per enqueued launch (median of interleaved rounds)")
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)
    return Path(png)
