"""The direct launch (`tilebridge_runtime::direct`): once a specialization is compiled, a launch
on the current stream goes straight to the driver; it runs the kernel cutile's own launch path
compiled, and a launch on another stream still takes that path."""

import os
import subprocess
import sys

import torch


def vector_add(ext, n, tile, dtype, **kw):
    a = torch.randn(n, device="cuda").to(dtype)
    b = torch.randn(n, device="cuda").to(dtype)
    c = torch.empty_like(a)
    ext.vector_add((-(-n // tile),), a, b, c, TILE=tile, **kw)
    torch.cuda.synchronize()
    assert torch.equal(c, a + b)


def launched(ext, launch):
    """(kernels compiled, launches that went direct) during `launch()`."""
    before = ext._launch_counts()
    launch()
    after = ext._launch_counts()
    return after[0] - before[0], after[1] - before[1]


def test_a_compiled_specialization_launches_direct_without_compiling_again(ext):
    # TILE=32 in bf16: a specialization no other test of this process launches first.
    compiled, direct = launched(ext, lambda: vector_add(ext, 32 * 7, 32, torch.bfloat16))
    assert (compiled, direct) == (1, 1)
    assert launched(ext, lambda: vector_add(ext, 32 * 9, 32, torch.bfloat16)) == (0, 1)


def test_the_direct_launch_runs_what_cutiles_launch_path_compiled(ext):
    """A launch on a side stream goes through cutile (which keeps the arrays alive until the
    kernel completes); the same specialization on the current stream then goes direct and finds
    that kernel: the direct key is the specialization cutile's launcher computes."""
    side = torch.cuda.Stream()
    n, tile, dtype = 8 * 40, 8, torch.float16  # TILE=8: launched nowhere else
    a = torch.randn(n, device="cuda").to(dtype)
    b = torch.randn(n, device="cuda").to(dtype)
    c = torch.empty_like(a)
    torch.cuda.synchronize()
    assert launched(ext, lambda: ext.vector_add((n // tile,), a, b, c, TILE=tile, stream=side)) == (1, 0)
    assert torch.equal(c, a + b)
    c.zero_()
    assert launched(ext, lambda: ext.vector_add((n // tile,), a, b, c, TILE=tile)) == (0, 1)
    assert torch.equal(c, a + b)
    # The current stream given as an argument is still the current stream.
    raw = torch.cuda.current_stream().cuda_stream
    assert launched(ext, lambda: ext.vector_add((n // tile,), a, b, c, TILE=tile, stream=raw)) == (0, 1)


def test_a_new_divisibility_is_a_new_specialization(ext):
    """An extent divisible by 8 but not 16 specializes anew, as cutile's launcher does; another
    extent of the same divisibility does not."""
    vector_add(ext, 16 * 64, 16, torch.float32)
    assert launched(ext, lambda: vector_add(ext, 16 * 64 + 8, 16, torch.float32)) == (1, 1)
    assert launched(ext, lambda: vector_add(ext, 16 * 80 + 8, 16, torch.float32)) == (0, 1)


def test_TILEBRIDGE_DIRECT_0_launches_through_cutile():
    code = """
import torch, tilebridge as tb
ext = tb.load("tilebridge_examples")
a = torch.randn(4096, device="cuda"); b = torch.randn_like(a); c = torch.empty_like(a)
ext.vector_add((4,), a, b, c, TILE=1024)
assert torch.equal(c, a + b)
print(ext._launch_counts()[1])
"""
    env = {**os.environ, "TILEBRIDGE_DIRECT": "0"}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["0"]
