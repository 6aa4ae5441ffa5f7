"""GPU tests: run on a machine with an NVIDIA GPU and the built example extension installed
(`tests/gpu/run.sh` does both on the device machine)."""

import pytest

torch = pytest.importorskip("torch")

if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU", allow_module_level=True)


@pytest.fixture(scope="session")
def ext():
    import tilebridge as tb

    return tb.load("tilebridge_examples")
