"""GPU tests: run on a machine with an NVIDIA GPU and the built example extension installed
(`tests/gpu/run.sh` does both on the device machine)."""

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU", allow_module_level=True)


@pytest.fixture(scope="session")
def ext():
    from installed import load_current

    return load_current("tilebridge_examples", sorted((Path(__file__).parents[2] / "examples").glob("*.py")))
