"""The runtime crate's own Rust tests (`cargo test --release --lib`): the parts that need no GPU and
no Python, such as the packed specialization key (one word per array exactly when cuTile Python's
rule gives one specialization) and the shipped cubins' validators surviving their JSON. Release
profile, so the dependencies are the ones every build here already compiled."""

import subprocess

import pytest

from tilebridge import toolchain
from tilebridge.builder.wheel import RUNTIME_CRATE

pytestmark = pytest.mark.slow


def test_the_runtime_crates_rust_tests_pass():
    proc = subprocess.run(["cargo", "test", "--release", "--lib", "--manifest-path", str(RUNTIME_CRATE / "Cargo.toml")],
                          env=toolchain.build_env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "test result: ok" in proc.stdout and " 0 failed" in proc.stdout, proc.stdout[-2000:]
    assert "a_packed_word_is_one_launch_spec ... ok" in proc.stdout
