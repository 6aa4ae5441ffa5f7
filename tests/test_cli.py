"""The `tilebridge` command's subcommands (`build` and `check` are in test_build.py, `build --aot` in
test_aot.py, `chart` in test_bench_report.py; `bench` times on a GPU, so here only that it says so
without one)."""

import ctypes.util
import re
import subprocess
import sys

import pytest

from conftest import REPO


def tilebridge(*args, env=None, timeout=120):
    import os

    return subprocess.run([sys.executable, "-m", "tilebridge.cli", *args], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO / "python"), **(env or {})}, timeout=timeout)


def test_doctor_lists_what_each_part_needs():
    proc = tilebridge("doctor")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    for heading in ("to translate:", "to build extensions:", "to launch kernels:"):
        assert heading in out
    assert "translate: ready, build: ready" in out  # this machine builds: the test command builds
    assert "tileiras and ptxas of one release (13.3+): tileiras 13.4, ptxas 13.4" in out
    if ctypes.util.find_library("cuda") is None:
        assert "NO  CUDA driver (libcuda.so.1): not found" in out and "launch: not ready" in out


def test_doctor_fails_and_says_what_to_install_where_nothing_is_there(tmp_path):
    proc = tilebridge("doctor", env={"CUDA_TOOLKIT_PATH": str(tmp_path)})
    assert proc.returncode == 1
    assert "NO  include/curand.h: missing: pip install nvidia-curand" in proc.stdout
    assert "NO  bin/tileiras: missing: pip install nvidia-cuda-tileiras" in proc.stdout
    assert "build: not ready, launch: not ready" in proc.stdout


@pytest.mark.parametrize("args, message", [
    (["translate", "no_such_file.py", "-o", "out"], "no_such_file.py"),
    (["build", "examples/vector_add.py", "--dtype", "a"], "--dtype takes NAME=DTYPE"),
])
def test_bad_command_lines_say_what_is_wrong(args, message):
    proc = tilebridge(*args)
    assert proc.returncode != 0 and message in proc.stdout + proc.stderr


def meta(out):
    import json

    return json.loads((out / "tilebridge.json").read_text())["kernels"]


def test_translate_with_dtypes_launches_and_lifted_gathers(tmp_path):
    vector_add = str(REPO / "examples" / "vector_add.py")
    assert tilebridge("translate", vector_add, "-o", str(tmp_path / "plain")).returncode == 0
    # computed with: f32, f16 and bf16 as translated, then the variants' f64 and integers
    families = ["f32", "f16", "bf16", "f64", "i32", "i64", "u32", "u64"]
    assert meta(tmp_path / "plain")["vector_add"]["dtypes"] == {"E0": families, "E1": families, "E2": families}
    proc = tilebridge("translate", vector_add, "--dtype", "a=f16", "-o", str(tmp_path / "f16"))
    assert proc.returncode == 0, proc.stderr
    # a stated: b and c take f64 beside its f16 (cuTile Python promotes them to f64); as no
    # integer is stored with a float, no variant for integers
    assert meta(tmp_path / "f16")["vector_add"]["dtypes"] == {"E0": ["f16"], "E1": families[:4], "E2": families[:4]}
    log = tmp_path / "launches.jsonl"
    arg = {"dtype": "float64", "shape": [8], "strides": [1]}
    log.write_text('{"file": "vector_add.py", "kernel": "vector_add", "args": {"a": %s, "b": %s, "c": %s, "TILE": 8}}\n'
                   % ((__import__("json").dumps(arg),) * 3))
    proc = tilebridge("translate", vector_add, "--launches", str(log), "-o", str(tmp_path / "recorded"))
    assert proc.returncode == 0, proc.stderr
    assert "f64" in meta(tmp_path / "recorded")["vector_add"]["dtypes"]["E0"]
    gathers = str(REPO / "tests" / "fixtures" / "gathers.py")
    printed = {}
    for flag, name in (([], "rows"), (["--lift-gathers"], "lifted")):
        proc = tilebridge("translate", gathers, *flag, "-o", str(tmp_path / name))
        assert proc.returncode == 0, proc.stderr
        printed[name] = proc.stdout
    # the safety report: which kernels are safe, and each unsafe block with its obligation
    assert ("safe (no unsafe block): 9 of 15 kernels (chunked_rows, hinted_store, owned_rows, picked_planes, "
            "picked_rows, regathered, row_gather, running_totals, wild_gather)") in printed["rows"]
    assert ("shifted: unsafe: scatters to 'y' through pointers (obligation: blocks write disjoint elements of it; "
            "the kernel keeps it" in printed["rows"])
    # a gather of whole tiles at the block's index: through pointers (the module's safe gather), or
    # lifted to a partition load
    body = {name: re.search(r"fn regathered<.*?\n    }\n", (tmp_path / name / "src" / "tile_kernels.rs").read_text(),
                            re.S).group(0) for name in ("rows", "lifted")}
    assert "gather_1d_into_1d(x, offs" in body["rows"] and "gather_1d_into_1d(" not in body["lifted"]


def test_translate_partial_lists_what_it_left_out(tmp_path):
    source = tmp_path / "half.py"
    source.write_text("import cuda.tile as ct\n\n\n@ct.kernel\ndef good(x, y, TILE: ct.Constant[int]):\n"
                      "    ct.store(y, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(TILE,)))\n\n\n"
                      "@ct.kernel\ndef bad(x, TILE: ct.Constant[int]):\n    ct.no_such_op(x)\n")
    proc = tilebridge("translate", str(source), "-o", str(tmp_path / "all"))
    assert proc.returncode == 1 and "half.py:11:" in proc.stderr and "no_such_op" in proc.stderr
    assert not (tmp_path / "all").exists(), "a failed translation writes nothing"
    proc = tilebridge("translate", str(source), "--partial", "-o", str(tmp_path / "some"))
    assert proc.returncode == 0 and "left out bad: half.py:11:" in proc.stdout, proc.stdout + proc.stderr
    assert list(meta(tmp_path / "some")) == ["good"]


def test_a_launch_log_that_is_not_one_is_a_clear_error(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text('{"kernel": "vector_add"}\n')
    proc = tilebridge("translate", str(REPO / "examples" / "vector_add.py"), "--launches", str(log), "-o",
                      str(tmp_path / "out"))
    assert proc.returncode == 1 and "not a launch log" in proc.stderr and "Traceback" not in proc.stderr


def test_fuzz_reports_each_outcome(tmp_path):
    """A campaign's summary names every outcome; the file it writes runs again as it is (the
    campaign through Tile IR: test_fuzz.py)."""
    proc = tilebridge("fuzz", "--count", "6", "--seed", "5", "--no-tile-ir", "-o", str(tmp_path / "fuzz_5.py"))
    assert proc.returncode == 0, proc.stderr
    assert "6 kernels" in proc.stdout and "disagree" in proc.stdout and "fails_to_compile" in proc.stdout
    again = tilebridge("fuzz", str(tmp_path / "fuzz_5.py"), "--no-tile-ir")
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[-1].split(" (")[0] == proc.stdout.splitlines()[-1].split(" (")[0]


def test_cache_lists_and_clears_the_kernel_cache(tmp_path):
    """The folder cutile's disk cache writes (`<2 hex>/<key>.cubin`, under TILEBRIDGE_CACHE_DIR):
    listed, then emptied; with the cache off there is nothing to list."""
    for key in ("ab" + "0" * 62, "cd" + "1" * 62):
        (tmp_path / key[:2]).mkdir()
        (tmp_path / key[:2] / f"{key}.cubin").write_bytes(b"x" * 2048)
    (tmp_path / ".eviction.lock").write_text("")
    (tmp_path / "notes").mkdir()  # not cutile's: left alone
    (tmp_path / "notes" / "keep.txt").write_text("mine")
    env = {"TILEBRIDGE_CACHE_DIR": str(tmp_path)}
    listed = tilebridge("cache", "list", env=env)
    assert listed.returncode == 0 and f"2 cubins, 0.0 MiB, in {tmp_path}" in listed.stdout
    assert re.search(r"^ab00000000000000 +2.0 KiB", listed.stdout, re.M)
    cleared = tilebridge("cache", "clear", env=env)
    assert cleared.returncode == 0 and "removed 2 cubins" in cleared.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == [".eviction.lock", "notes"]
    assert "0 cubins" in tilebridge("cache", "list", env=env).stdout
    assert "off" in tilebridge("cache", "list", env={"TILEBRIDGE_CACHE_DIR": "off"}).stdout


def test_coverage_counts_writes_json_and_fails_where_it_should(tmp_path):
    """`coverage` on one TileGym file (`-k`), at its recorded launches: the table and its JSON; then
    `--min` above what got through, and a launch log naming a parameter the kernel lacks (a log of
    another version), each fail and say why."""
    import json
    import importlib.util

    if importlib.util.find_spec("tilegym") is None:
        pytest.skip("tilegym is installed by scripts/install.sh (pip --no-deps)")
    log = REPO / "tests" / "data" / "tilegym_launches.json"
    args = ["coverage", "tilegym", "-k", "relu", "--launches", str(log), "--cubin-limit", "300"]
    ok = tilebridge(*args, "--json", str(tmp_path / "relu.json"), "--min", "1", timeout=900)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    table = json.loads((tmp_path / "relu.json").read_text())
    relu = [r for r in table["rows"] if r["file"] == "relu.py"]
    recorded = [l for l in json.loads(log.read_text())["launches"] if l["file"] == "relu.py"]
    assert relu and recorded and table["unmatched_launches"] == []
    assert sum(r["specializations"] for r in relu) == len(recorded) == sum(r["cubins"] for r in relu)

    dropped = tilebridge(*args, "--min", "99", timeout=900)
    assert dropped.returncode == 1 and "coverage dropped" in dropped.stderr

    other = json.loads(log.read_text())
    for launch in other["launches"]:
        if launch["file"] == "relu.py":
            launch["args"]["n_elements_renamed"] = launch["args"].pop(sorted(launch["args"])[-1])
    (tmp_path / "other.json").write_text(json.dumps(other))
    stale = tilebridge("coverage", "tilegym", "-k", "relu", "--launches", str(tmp_path / "other.json"), timeout=900)
    assert stale.returncode == 1 and f"{len(recorded)} recorded launches match no kernel" in stale.stderr


def test_bench_without_a_gpu_says_so():
    proc = tilebridge("bench", str(REPO / "examples" / "vector_add.py"))
    assert proc.returncode == 2 and "tilebridge bench needs a GPU" in proc.stderr
