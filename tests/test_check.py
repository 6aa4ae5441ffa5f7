"""The comparison oracle's verdicts (`tilebridge.verifier.check`), without a GPU."""

from tilebridge.verifier.check import CaseResult, OutputResult


def output(bitwise: bool, close: bool) -> OutputResult:
    return OutputResult("y", "float32", bitwise, close, 0.0 if bitwise else 1e-3)


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
