"""TileGym kernels whose own tests cannot reach Rust, launched directly: group_gemm's host code
autotunes through cuTile Python's benchmark (`exhaustive_search`, each candidate compiled under
a 5 s limit), which `tb.use_rust` cannot route. Here its kernel runs with one configuration of
that search, in cuTile Python and in Rust on the same lists of arrays; outputs are compared with
each other and with torch. Needs TileGym's src on PYTHONPATH (tests/gpu/tilegym.sh sets it)."""

import pytest

from tilebridge.verifier.check import run_case


@pytest.fixture(scope="module")
def tilegym_ext():
    import tilebridge as tb

    pytest.importorskip("tilegym", reason="TileGym's src is on PYTHONPATH in the TileGym round")
    pytest.importorskip("tilebridge_tilegym", reason="tilebridge_tilegym is carried by the TileGym round")
    return tb.load("tilebridge_tilegym")


@pytest.mark.parametrize("transpose_b", [False, True])
def test_group_gemm_kernel(tilegym_ext, transpose_b):
    import torch
    from tilegym.ops.cutile.group_gemm import _group_gemm_kernel

    torch.manual_seed(0)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    shapes = [(256, 512, 384), (1000, 256, 640), (64, 1024, 128)]  # (M, K, N), ragged on purpose
    As = [torch.randn(m, k, device="cuda", dtype=torch.float16) for m, k, _ in shapes]
    Bs = [torch.randn(n, k, device="cuda", dtype=torch.float16) if transpose_b else
          torch.randn(k, n, device="cuda", dtype=torch.float16) for _, k, n in shapes]
    Cs = [torch.empty(m, n, device="cuda", dtype=torch.float16) for m, _, n in shapes]
    # The search's first sm_90 configuration: 128 x 128 x 128 tiles, one CTA, occupancy 1.
    args = (As, Bs, Cs, 128, 128, 128, sms, transpose_b)
    result = run_case(tilegym_ext, _group_gemm_kernel, (sms, 1, 1), args)
    print(result)
    # Every array argument is compared (the outputs Cs, and the inputs, which must come back unchanged).
    assert [o.param for o in result.outputs] == [f"{n}[{i}]" for n in ("As", "Bs", "Cs") for i in range(3)]
    assert result.ok, str(result)
    # And the numbers are a group GEMM: Rust's outputs against torch.
    rs = list(args)
    rs[2] = [torch.empty_like(c) for c in Cs]
    from tilebridge.runtime.launch import launch

    launch(tilegym_ext, torch.cuda.current_stream(), (sms, 1, 1), _group_gemm_kernel, tuple(rs))
    torch.cuda.synchronize()
    for a, b, c in zip(As, Bs, rs[2]):
        ref = (a.float() @ (b.float().T if transpose_b else b.float())).half()
        torch.testing.assert_close(c, ref, rtol=1e-2, atol=1e-1)
