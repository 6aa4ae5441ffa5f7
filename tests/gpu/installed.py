"""The extensions a GPU round tests, checked to be the ones this checkout builds."""

from pathlib import Path

import pytest

# The fixture files with cases, built into one extension: tilebridge build <these> -m tilebridge_fixtures
FIXTURES = [Path(__file__).resolve().parents[1] / "fixtures" / f"{name}.py"
            for name in ("checked_ops", "control_flow", "gathers", "language", "math_ops", "mixed_dtypes",
                         "unchecked_stores", "any_dtype")]
# Cases per file: a case that stops being yielded (or run) must not pass unnoticed; one added must be
# counted here (tests/test_gpu_scripts.py holds each file's `cases` to it on the CPU).
CASES = {"checked_ops": 19, "control_flow": 33, "math_ops": 16, "gathers": 25, "unchecked_stores": 9, "language": 60,
         "mixed_dtypes": 13, "any_dtype": 22}


def load_current(module, sources, launches=None, aot=()):
    """The installed extension `module`, checked to be built from these sources by this checkout's
    tilebridge (its build key), so that a stale wheel cannot pass a round for newer code; built
    with the launch log `launches` and cubins shipped for `aot`, where given."""
    import tilebridge as tb
    from tilebridge.builder import wheel
    from tilebridge.metadata import ExtensionMetadata
    from tilebridge.translator import recorded_launches

    logged = recorded_launches.read([launches]) if launches else ()
    _, expected = wheel.expected_key([str(p) for p in sources], module=module, launches=logged, aot=aot)
    assert expected is not None, "run with this checkout's python/ on PYTHONPATH (tests/gpu/run.sh does)"
    ext = tb.load(module)
    built = ExtensionMetadata.from_json(ext.__tilebridge__).build_key
    if built != expected:
        pytest.fail(f"{module} was built from other sources or another tilebridge (build key {built}, this "
                    f"checkout's {expected}): rebuild its wheel", pytrace=False)
    return ext
