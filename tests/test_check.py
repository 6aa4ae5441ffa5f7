"""The comparison oracle's verdicts (`tilebridge.verifier.check`), without a GPU."""

import numpy as np
import pytest

from tilebridge.verifier.check import CaseResult, OutputResult, compare


def output(bitwise: bool, close: bool) -> OutputResult:
    return OutputResult("y", "float32", bitwise, close, 0.0 if bitwise else 1e-3)


def verdict(dtype, ref, got):
    """`compare` as the GPU round calls it: bits and f64 values (float dtypes through NumPy's own)."""
    np_dtype = {"float32": np.float32, "float16": np.float16, "float64": np.float64, "int32": np.int32,
                "int8": np.int8, "bool": np.bool_}[dtype]
    ref, got = np.asarray(ref, np_dtype), np.asarray(got, np_dtype)
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[ref.itemsize]
    return compare("y", dtype, ref.view(bits), got.view(bits), ref.astype(np.float64), got.astype(np.float64))


@pytest.mark.parametrize("dtype, ref, got, expected", [
    ("float32", [1.0, 2.0], [1.0, 2.0], "bitwise"),
    ("float32", [1.0, 2.0], [1.0, np.nextafter(np.float32(2.0), np.float32(3.0))], "close"),  # one ulp
    ("float32", [1.0, 2.0], [1.0, 2.001], "MISMATCH"),  # 5e-4 relative: beyond f32's 1e-5
    ("float16", [1.0, 2.0], [1.0, 2.002], "close"),  # 1e-3 relative: within f16's tolerance
    ("float16", [1.0, 2.0], [1.0, 2.01], "MISMATCH"),
    ("float64", [1.0], [1.0 + 1e-9], "MISMATCH"),
    ("int32", [7, -3], [7, -3], "bitwise"),
    ("int32", [7, -3], [7, -2], "MISMATCH"),  # integers: exact or wrong
    ("int32", [1_000_000], [1_000_001], "MISMATCH"),  # even where a float tolerance would take it
    ("int8", [127], [-128], "MISMATCH"),
    ("bool", [True, False], [True, True], "MISMATCH"),
    ("float32", [np.nan, 1.0], [np.nan, 1.0], "bitwise"),
    ("float32", [np.nan, 1.0], [0.0, 1.0], "MISMATCH"),  # NaN only where the reference has it
    ("float32", [0.0, 1.0], [np.nan, 1.0], "MISMATCH"),
    ("float32", [np.inf, 1.0], [np.inf, 1.0], "bitwise"),
    ("float32", [np.inf], [-np.inf], "MISMATCH"),
    ("float32", [0.0], [-0.0], "close"),  # equal values, other bits
    ("float32", [1.0, 2.0], [1.0], "MISMATCH"),  # another shape
    ("float32", [1.0, 2.0], [1.0, 2.0, 3.0], "MISMATCH"),
])
def test_compare_per_dtype(dtype, ref, got, expected):
    assert verdict(dtype, ref, got).verdict == expected


def test_compare_reports_the_largest_difference():
    assert verdict("float32", [1.0, 2.0, 3.0], [1.5, 2.0, 1.0]).max_abs_err == 2.0
    assert verdict("float32", [np.nan, 2.0], [np.nan, 2.5]).max_abs_err == 0.5
    assert verdict("float32", [1.0], [np.nan]).max_abs_err == float("inf")


def test_a_case_with_nothing_compared_fails():
    case = CaseResult("k", "float32[8]")
    assert not case.ok
    assert str(case) == "BAD k [float32[8]] nothing compared"


def test_a_case_passes_only_when_every_output_agrees():
    assert CaseResult("k", "", [output(True, True), output(False, True)]).ok
    bad = CaseResult("k", "", [output(True, True), output(False, False)])
    assert not bad.ok and "MISMATCH" in str(bad)


def test_a_launch_that_raises_fails_its_case_and_says_which_side():
    case = CaseResult("k", "float32[8]", [output(True, True)],
                      error="Rust launch failed: ArgumentError: argument 'w' has dtype f32")
    assert not case.ok
    assert str(case) == "BAD k [float32[8]] Rust launch failed: ArgumentError: argument 'w' has dtype f32"


def test_every_fixture_kernel_has_a_case_the_gpu_round_runs():
    """Each kernel of a fixture file the GPU round builds is launched by that file's `cases(torch)`
    (read from the source: no torch here), and each such file is in the round; the two files left
    out hold kernels that cannot run (refused ones, and one importing a package that exists nowhere).
    A campaign file written by hand (`integers.py`) is built kernel by kernel at its launches'
    dtypes (`tilebridge fuzz FILE`), and launches each of its kernels in `LAUNCHES`."""
    import ast
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent / "gpu"))
    from installed import FIXTURES

    folder = Path(__file__).parent / "fixtures"
    assert {p.name for p in folder.glob("*.py")} - {p.name for p in FIXTURES} == {"unsupported.py", "torch_style.py",
                                                                                  "integers.py"}
    campaign = ast.parse((folder / "integers.py").read_text())
    launches = next(a.value for a in campaign.body if isinstance(a, ast.Assign) and a.targets[0].id == "LAUNCHES")
    assert {f.name for f in campaign.body if isinstance(f, ast.FunctionDef) and f.name != "cases"} == \
        {ast.literal_eval(launch.elts[0]) for launch in launches.elts}
    for path in FIXTURES:
        tree = ast.parse(path.read_text())
        kernels = {f.name for f in tree.body if isinstance(f, ast.FunctionDef)
                   and any(ast.unparse(d).startswith("ct.kernel") for d in f.decorator_list)}
        cases = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "cases")
        launched = {n.id for y in ast.walk(cases) if isinstance(y, ast.Yield) for n in ast.walk(y.value)
                    if isinstance(n, ast.Name)}
        named = {n.id for n in ast.walk(cases) if isinstance(n, ast.Name)}
        assert kernels and kernels <= named, (path.name, sorted(kernels - named))
        assert launched, path.name


def test_processes_check_every_case_once(tmp_path, monkeypatch):
    """`check -j N` splits the cases into shares over N processes and yields each case as it
    finishes: every case exactly once, with the number and kernel of a serial run. The kernels are
    in no extension given, so nothing launches (no GPU); `torch` is a stand-in module."""
    from tilebridge.verifier import check

    (tmp_path / "torch.py").write_text("float32 = 'float32'\n\n\ndef manual_seed(seed):\n    pass\n")
    cases = tmp_path / "cases.py"
    cases.write_text("import cuda.tile as ct\n\n\n@ct.kernel\ndef first(x):\n    pass\n\n\n@ct.kernel\n"
                     "def second(x):\n    pass\n\n\ndef cases(torch):\n    for i in range(11):\n"
                     "        yield (first if i % 3 else second), (1,), (torch.float32, i)\n")
    monkeypatch.syspath_prepend(str(tmp_path))  # for the worker processes
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("torch", tmp_path / "torch.py")
    stand_in = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(stand_in)
    monkeypatch.setitem(sys.modules, "torch", stand_in)  # here; gone after the test, for the others
    serial = list(check.check_files_in_parallel([str(cases)], [], 1))
    parallel = list(check.check_files_in_parallel([str(cases)], [], 2))
    assert serial == [(i, None, "first" if i % 3 else "second") for i in range(11)]
    assert sorted(parallel) == serial


def _share_that_hangs_and_dies(paths, modules, part, parts, start, conn):
    """A worker of `check -j` whose case 4 kills its process and whose case 7 never ends, each the
    first time only (a file marks it), as a kernel that crashes or hangs a process would."""
    import os
    import time
    from pathlib import Path

    for number in range(start, 10):
        if number % parts != part:
            continue
        conn.send(("start", number, f"k{number}", "x"))
        marker = Path(paths[0]) / f"seen_{number}"
        if number in (4, 7) and not marker.exists():
            marker.touch()
            if number == 4:
                os._exit(7)
            time.sleep(600)
        conn.send(("done", number, None, f"k{number}"))
    conn.send(("end", None, None, None))


def test_processes_report_a_case_that_hangs_or_kills_its_process_and_go_on(tmp_path):
    """A case whose process dies, or that gives no sign of life for the time limit, fails with why
    (the H100 run of a 500-kernel campaign lost two whole shares to something that never returned);
    its process is stopped and a new one goes on with the rest of its share: every other case is
    still reported once."""
    from tilebridge.verifier import check

    results = list(check.check_files_in_parallel([str(tmp_path)], [], 2, case_timeout=3,
                                                 share=_share_that_hangs_and_dies))
    assert sorted(number for number, _, _ in results) == list(range(10))
    failed = {number: result.error for number, result, _ in results if result is not None}
    assert set(failed) == {4, 7}
    assert "died (exit code 7)" in failed[4] and "no result within 3 s" in failed[7]
    assert str(failed) and all(r.kernel == f"k{n}" for n, r, _ in results if r is not None)
