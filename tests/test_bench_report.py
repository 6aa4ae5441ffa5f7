"""The benchmark report's writers (`tilebridge.verifier.report`), on figures made up here: what
each file says follows from the figures, and a failed case is listed, never dropped."""

import json

from tilebridge import cli
from tilebridge.verifier.bench import Timing, array_bytes
from tilebridge.verifier.report import Roofline, Run


def run() -> Run:
    launches = [
        Timing("vector_add", "float32[1048576] x3", py_ms=0.004, rs_ms=0.005, agreement="bitwise", bytes=12 << 20),
        Timing("matmul", "float16[512, 512] x3", py_ms=0.010, rs_ms=0.009, agreement="close", bytes=3 << 19),
        Timing("softmax", "float32[8, 8]", error="Rust failed: LaunchError: boom"),
    ]
    return Run(launches, roofline=Roofline(copy_gbps=4000.0, matmul_tflops=700.0),
               host_us={"ct.launch": [7.0, 7.2, 6.9], "launcher": [5.0, 5.5, 4.9]},
               environment={"gpu": "Test GPU", "date": "2026-12-04", "commit": "abc1234"})


def test_json_holds_every_figure_and_the_derived_ones(tmp_path):
    data = json.loads(run().to_json())
    assert data["environment"]["commit"] == "abc1234"
    assert data["roofline"] == {"copy_gbps": 4000.0, "matmul_tflops": 700.0}
    va, mm, sm = data["launches"]
    assert abs(va["ratio"] - 1.25) < 1e-9 and abs(mm["ratio"] - 0.9) < 1e-9
    # 12 MiB in 5 us is 2516.6 GB/s: 62.9% of 4000 GB/s
    assert abs(va["rs_copy_share"] - (12 << 20) / 5e-6 / 4e12) < 1e-9
    assert sm["error"].startswith("Rust failed") and "ratio" not in sm
    assert abs(data["geomean_rs_over_py"] - (1.25 * 0.9) ** 0.5) < 1e-9
    assert data["host_us_per_round"]["launcher"] == [5.0, 5.5, 4.9]


def test_markdown_lists_each_launch_the_failures_and_the_slowest():
    text = run().to_markdown()
    assert "Test GPU" in text and "abc1234" in text and "4000 GB/s" in text
    assert "| vector_add | float32[1048576] x3 | 0.0040 | 0.0050 | 1.250 | 63% |" in text
    assert "Rust failed: LaunchError: boom" in text
    assert "Geomean rs/py over 2 launches: **1.061**; slowest: vector_add 1.250, matmul 0.900." in text
    assert "| launcher | 5.00 | 4.90-5.50 |" in text


def test_write_and_chart(tmp_path):
    written = run().write(tmp_path / "h200")
    assert [p.name for p in written] == ["h200.md", "h200.json", "h200.png"]
    assert written[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (tmp_path / "h200.png").unlink()
    assert cli.main(["chart", str(tmp_path / "h200.json")]) == 0
    assert (tmp_path / "h200.png").stat().st_size > 1000


def test_array_bytes_counts_arrays_and_lists_only():
    import numpy as np

    a, b = np.zeros(10, dtype=np.float32), np.zeros((2, 3), dtype=np.float16)
    assert array_bytes([a, 3, 0.5, [b, b]]) == 40 + 2 * 12
