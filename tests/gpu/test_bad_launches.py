"""Bad launches on the GPU: each raises one specific exception whose message says what to do,
nothing runs, the output is untouched, and the same arrays, as plain tensors and as
ownership-tracked handles, launch fine right afterwards.

Faults (a kernel touching memory it must not) and a reset context run in processes of their own:
CUDA leaves a faulted context unusable, and the rest of the suite needs this one."""

import math
import re
import subprocess
import sys
import textwrap

import pytest
import torch

import tilebridge as tb

N, TILE = 4096, 1024
GRID = (N // TILE,)


def cuda(dtype=torch.float32, n=N):
    return torch.randn(n, device="cuda").to(dtype)


class Interface:
    """A torch tensor seen only through `__cuda_array_interface__`, with some of it changed."""

    def __init__(self, t, *, shape=None, strides=None, readonly=False, device=None, ptr=None):
        self.__cuda_array_interface__ = {
            "shape": tuple(t.shape if shape is None else shape),
            "typestr": "<f4",
            "data": (t.data_ptr() if ptr is None else ptr, readonly),
            "strides": strides,
            "version": 3,
        }
        if device is not None:
            self.device = type("Device", (), {"id": device})()


def overlapping(b):
    """An input and an output one element apart in one buffer (b between them)."""
    shared = cuda(n=N + 1)
    return shared[:N], b, shared[1:]


# (case, how the (grid, a, b, c, constants) of a good launch change, exception, message)
BAD = [
    # (f64 and the 32/64-bit integers are taken: a variant per family; cutile computes with no 16-bit integer)
    ("dtype_not_built", lambda g, a, b, c, k: (g, a.short(), b.short(), c.short(), k), tb.ArgumentError, "was built for"),
    ("int8", lambda g, a, b, c, k: (g, a.char(), b.char(), c.char(), k), tb.ArgumentError, "was built for"),
    ("bool", lambda g, a, b, c, k: (g, a > 0, b > 0, c > 0, k), tb.ArgumentError, "was built for"),
    # a + b in f32 of an f32 a and an f16 b is fine (cuTile Python promotes); these it refuses
    ("f16_with_bf16", lambda g, a, b, c, k: (g, a.half(), b.bfloat16(), c, k), tb.ArgumentError,
     r"does not take the dtypes of 'a' \(f16\), 'b' \(bf16\), 'c' \(f32\) together"),
    ("sum_narrowed_into_its_output", lambda g, a, b, c, k: (g, a, b.half(), c.half(), k), tb.ArgumentError,
     r"'c' \(f16\) together: cuTile Python refuses"),
    ("rank_2", lambda g, a, b, c, k: (g, a.view(64, 64), b, c, k), tb.ArgumentError, "must have rank 1"),
    ("rank_0", lambda g, a, b, c, k: (g, a[0], b, c, k), tb.ArgumentError, "must have rank 1"),
    ("grid_for_another_shape", lambda g, a, b, c, k: ((3,), a, b, c, k), tb.ArgumentError, r"grid must be \(4, 1, 1\)"),
    ("output_shorter", lambda g, a, b, c, k: (g, a, b, c[: N // 2], k), tb.ArgumentError, r"grid must be \(2, 1, 1\)"),
    ("cpu_tensor", lambda g, a, b, c, k: (g, a.cpu(), b, c, k), tb.ArgumentError, "CPU tensor.*\\.cuda\\(\\)"),
    ("numpy_array", lambda g, a, b, c, k: (g, a.cpu().numpy(), b, c, k), tb.ArgumentError, "host.*cupy.asarray"),
    ("python_list", lambda g, a, b, c, k: (g, [1.0] * N, b, c, k), tb.ArgumentError, "must be a CUDA array"),
    ("none_for_an_array", lambda g, a, b, c, k: (g, None, b, c, k), tb.ArgumentError, "must be a CUDA array"),
    ("mixed_devices", lambda g, a, b, c, k: (g, a, Interface(b, device=1), c, k), tb.ArgumentError,
     "is on cuda:1, but earlier arguments are on cuda:0"),
    ("overlapping_views", lambda g, a, b, c, k: (g, *overlapping(b), k), tb.ArgumentError, "share memory"),
    ("output_a_shifted_view_of_an_input", lambda g, a, b, c, k: (g, a, b, Interface(a, ptr=a.data_ptr() + 8), k),
     tb.ArgumentError, "share memory.*very same array"),
    ("read_only_output", lambda g, a, b, c, k: (g, a, b, Interface(c, readonly=True), k), tb.ArgumentError, "read-only"),
    ("negative_stride", lambda g, a, b, c, k: (g, Interface(a, strides=(-4,)), b, c, k), tb.ArgumentError,
     "negative stride"),
    ("stride_not_whole_elements", lambda g, a, b, c, k: (g, Interface(a, strides=(6,)), b, c, k), tb.ArgumentError,
     "multiple of the element"),
    ("dimension_over_32_bits", lambda g, a, b, c, k: (g, Interface(a, shape=(1 << 31,)), b, c, k), tb.ArgumentError,
     "32 bits"),
    ("grid_zero", lambda g, a, b, c, k: ((0,), a, b, c, k), tb.ArgumentError, "positive ints.*skip the launch"),
    ("grid_negative", lambda g, a, b, c, k: ((-4,), a, b, c, k), tb.ArgumentError, "positive ints"),
    ("grid_too_large_x", lambda g, a, b, c, k: ((1 << 31,), a, b, c, k), tb.ArgumentError, "too large"),
    ("grid_too_large_y", lambda g, a, b, c, k: ((4, 70000), a, b, c, k), tb.ArgumentError, "too large"),
    ("grid_four_axes", lambda g, a, b, c, k: ((4, 1, 1, 1), a, b, c, k), tb.ArgumentError, "1 to 3"),
    ("grid_of_floats", lambda g, a, b, c, k: ((4.0,), a, b, c, k), tb.ArgumentError, "int or a tuple of 1 to 3 ints"),
    ("grid_a_string", lambda g, a, b, c, k: ("4", a, b, c, k), tb.ArgumentError, "int or a tuple of 1 to 3 ints"),
    ("constant_missing", lambda g, a, b, c, k: (g, a, b, c, {}), TypeError, "missing.*'TILE'"),
    ("constant_extra", lambda g, a, b, c, k: (g, a, b, c, {**k, "WIDTH": 4}), TypeError, "unexpected.*'WIDTH'"),
    # PyO3 names the parameter in a note on the exception (shown in the traceback)
    ("constant_a_string", lambda g, a, b, c, k: (g, a, b, c, {"TILE": "1024"}), TypeError,
     "'str' object cannot be interpreted as an integer\nwhile processing 'TILE'"),
    ("constant_a_float", lambda g, a, b, c, k: (g, a, b, c, {"TILE": 1024.0}), TypeError,
     "'float' object.*\nwhile processing 'TILE'"),
    ("constant_overflows_i32", lambda g, a, b, c, k: (g, a, b, c, {"TILE": 1 << 40}), OverflowError,
     "while processing 'TILE'"),
    ("tile_not_power_of_two", lambda g, a, b, c, k: ((5,), a, b, c, {"TILE": 1000}), tb.ArgumentError, "power of two"),
    ("tile_zero", lambda g, a, b, c, k: (g, a, b, c, {"TILE": 0}), tb.ArgumentError, "power of two"),
    ("tile_negative", lambda g, a, b, c, k: (g, a, b, c, {"TILE": -1024}), tb.ArgumentError, "power of two"),
    ("empty_arrays", lambda g, a, b, c, k: ((1,), a[:0], b[:0], c[:0], k), tb.ArgumentError, "is empty.*skip the launch"),
    ("stream_a_string", lambda g, a, b, c, k: (g, a, b, c, {**k, "stream": "default"}), tb.ArgumentError,
     "stream must be"),
    ("stream_a_float", lambda g, a, b, c, k: (g, a, b, c, {**k, "stream": 1.5}), tb.ArgumentError, "stream must be"),
    ("hint_not_positive", lambda g, a, b, c, k: (g, a, b, c, {**k, "hints": (0, None, None)}), tb.ArgumentError,
     "occupancy=0.*positive"),
    ("hints_of_two", lambda g, a, b, c, k: (g, a, b, c, {**k, "hints": (1, 2)}), ValueError,
     "length 3.*\nwhile processing 'hints'"),
]


def raises(error, pattern):
    """pytest.raises that also searches the exception's notes (where PyO3 names the argument)."""
    return _Raises(error, pattern)


class _Raises:
    def __init__(self, error, pattern):
        self.error, self.pattern = error, pattern

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb_):
        assert kind is not None, f"DID NOT RAISE {self.error.__name__}"
        if not issubclass(kind, self.error):
            return False
        text = "\n".join([str(value), *getattr(value, "__notes__", [])])
        assert re.search(self.pattern, text, re.S), f"{self.pattern!r} not in {text!r}"
        return True


def good():
    a, b = cuda(), cuda()
    return GRID, a, b, torch.zeros_like(a), {"TILE": TILE}


@pytest.mark.parametrize("case, change, error, pattern", BAD, ids=[c[0] for c in BAD])
def test_bad_launch_raises_and_leaves_everything_usable(ext, case, change, error, pattern):
    grid, a, b, c, constants = good()
    bad = change(grid, a, b, c, constants)
    before = c.clone()
    with raises(error, pattern):
        ext.vector_add(bad[0], *bad[1:4], **bad[4])
    torch.cuda.synchronize()
    assert torch.equal(c, before), "a refused launch must not touch its output"
    ext.vector_add(grid, a, b, c, **constants)  # the very same arrays, right afterwards
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)


@pytest.mark.parametrize("case, change, error, pattern", BAD, ids=[c[0] for c in BAD])
def test_bad_launch_through_handles_leaves_them_ready(ext, case, change, error, pattern):
    """The same launch through ownership-tracked handles: the error, then every handle ready (not
    lent), and a launch with them that computes the sum."""
    grid, a, b, c, constants = good()
    bad = change(grid, a, b, c, constants)
    as_handle = {id(t): tb.Tensor.from_torch(t) for t in (a, b, c)}
    args = [as_handle.get(id(v), v) for v in bad[1:4]]
    kernel = tb.kernels(ext).vector_add
    with raises(error, pattern):
        kernel.launch(bad[0], *args, **bad[4]).sync()
    handles = list(as_handle.values())
    assert [h.state for h in handles] == ["ready"] * 3
    kernel(grid, *handles, **constants)
    torch.testing.assert_close(handles[2].torch(), a + b, rtol=0, atol=0)


def test_input_not_contiguous_where_the_kernel_gathers():
    from installed import FIXTURES, load_current

    pytest.importorskip("tilebridge_fixtures", reason="carried by the GPU rounds")
    fixtures = load_current("tilebridge_fixtures", FIXTURES)
    x = torch.randn(64, 64, device="cuda")
    y = torch.zeros(64, 64, device="cuda")
    with pytest.raises(tb.ArgumentError, match=r"stride 64 in its last dimension.*\.contiguous\(\)"):
        fixtures.padded_block_matmul((4,), x.t(), y, R=16, C=64)
    with pytest.raises(tb.ArgumentError, match="empty list"):
        fixtures.grouped_double((1,), [], [], TM=16, TN=16, BLOCKS=1)
    with pytest.raises(tb.ArgumentError, match="must share one dtype"):
        fixtures.grouped_double((1,), [x, x.half()], [y, y], TM=16, TN=16, BLOCKS=1)


def test_an_output_taken_as_a_view_is_checked_and_left_untouched():
    """heads_scaled stores y at (bid(1) // H, bid(1) % H, ...): H must be y's extent there, and y's
    first two dimensions one run of memory, or the view the kernel takes would not be y."""
    from installed import FIXTURES, load_current

    pytest.importorskip("tilebridge_fixtures", reason="carried by the GPU rounds")
    fixtures = load_current("tilebridge_fixtures", FIXTURES)
    x = torch.randn(2, 3, 64, 64, device="cuda")
    y = torch.zeros(2, 3, 64, 64, device="cuda")
    with pytest.raises(tb.ArgumentError, match=r"so H must be its extent there: H is 2"):
        fixtures.heads_scaled((1, 6, 1), x, y, 0.5, 2, TM=64, TD=64)
    apart = torch.zeros(3, 2, 64, 64, device="cuda").transpose(0, 1)
    with pytest.raises(tb.ArgumentError, match="do not lay out as one: pass a contiguous tensor"):
        fixtures.heads_scaled((1, 6, 1), x, apart, 0.5, 3, TM=64, TD=64)
    with pytest.raises(tb.ArgumentError, match=r"its grid must be \(1, 6, 1\); got \(1, 5, 1\)"):
        fixtures.heads_scaled((1, 5, 1), x, y, 0.5, 3, TM=64, TD=64)
    assert not y.any() and not apart.any()
    fixtures.heads_scaled((1, 6, 1), x, y, 0.5, 3, TM=64, TD=64)
    torch.testing.assert_close(y, x * 0.5, rtol=0, atol=0)


def test_arrays_on_two_real_devices(ext):
    if torch.cuda.device_count() < 2:
        pytest.skip("one GPU: the mixed-device case above reports a second device through the array interface")
    a, b = cuda(), cuda().to("cuda:1")
    with pytest.raises(tb.ArgumentError, match="same device"):
        ext.vector_add(GRID, a, b, torch.zeros_like(a), TILE=TILE)


def test_nan_and_infinite_constants_compute_what_python_computes(ext):
    """Not errors: a float constant of NaN or infinity goes through, as in cuTile Python."""
    x = cuda(n=N)
    x[:8] = 0.0
    for alpha, beta in ((math.nan, 0.0), (math.inf, 0.0), (-math.inf, 1.0), (1.0, math.inf)):
        y = torch.empty_like(x)
        ext.scaled_silu(GRID, x, y, alpha, beta, TILE=TILE)
        ref = alpha * torch.nn.functional.silu(x) + beta
        assert torch.equal(torch.isnan(y), torch.isnan(ref)), (alpha, beta)
        assert torch.equal(torch.isposinf(y), torch.isposinf(ref)) and torch.equal(torch.isneginf(y),
                                                                                   torch.isneginf(ref))


def test_handle_dropped_while_lent_keeps_its_memory(ext):
    """Dropping every reference to a lent output while the launch runs frees nothing: the
    pending launch holds it, and the result is there at sync."""
    k = tb.kernels(ext).vector_add
    a, b = cuda(), cuda()
    expected = a + b
    torch.cuda._sleep(20_000_000)  # the launch below is still queued when the handle goes
    pending = k.launch(GRID, tb.Tensor.from_torch(a), tb.Tensor.from_torch(b), tb.Tensor.zeros(N), TILE=TILE)
    scratch = [torch.full((N,), 7.0, device="cuda") for _ in range(8)]  # would reuse freed memory
    out = pending.sync()[2]
    torch.testing.assert_close(out.torch(), expected, rtol=0, atol=0)
    del scratch


AFTER = """
try:
    ext.vector_add((4,), a, a, c, TILE=1024)
    print("after: ran")
except tb.TilebridgeError as e:
    print("after:", type(e).__name__, e)
print("exit")
"""


def run_alone(body: str) -> subprocess.CompletedProcess:
    """`body` in a process of its own, then one more launch on its arrays `a` and `c` (it prints
    "after: ran" or "after: <exception>"), then "exit"."""
    script = ("import torch, tilebridge as tb\next = tb.load('tilebridge_examples')\n" + textwrap.dedent(body)
              + AFTER)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)


def test_a_fault_on_the_gpu_is_an_exception_naming_the_kernel():
    """A kernel reading memory that is not there (an array interface with a stale pointer) faults on
    the GPU: the launch raises DeviceError naming the kernel and saying the process must restart;
    after it, launches raise too (CUDA's context is gone), and the process still exits normally."""
    proc = run_alone("""
        class Stale:
            __cuda_array_interface__ = {"shape": (4096,), "typestr": "<f4", "data": (0x10000, False),
                                        "strides": None, "version": 3}
        a = torch.ones(4096, device="cuda"); c = torch.zeros(4096, device="cuda")
        ext.vector_add((4,), a, a, c, TILE=1024)
        print("before:", c.sum().item())
        try:
            ext.vector_add((4,), Stale(), a, c, TILE=1024)
            print("fault: none")
        except tb.DeviceError as e:
            print("fault:", e)
    """)
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(": ", 1) for line in proc.stdout.splitlines() if ": " in line)
    assert lines["before"] == "8192.0"
    assert "kernel `vector_add`" in lines["fault"] and "restart the process" in lines["fault"], proc.stdout
    assert lines["after"].startswith("DeviceError"), proc.stdout
    assert proc.stdout.rstrip().endswith("exit")


def test_a_launch_after_the_context_was_reset_raises_and_does_not_abort():
    """`cuDevicePrimaryCtxReset` (what a careless library can do) under a process that launched:
    the next launch is a DeviceError with the driver's reason (H200, driver 580: 709, "context is
    destroyed"), and the process goes on to exit normally."""
    proc = run_alone("""
        import ctypes
        a = torch.ones(4096, device="cuda"); c = torch.zeros(4096, device="cuda")
        ext.vector_add((4,), a, a, c, TILE=1024)
        torch.cuda.synchronize()
        libcuda = ctypes.CDLL("libcuda.so.1")
        print("reset:", libcuda.cuDevicePrimaryCtxReset_v2(0))
    """)
    assert proc.returncode == 0, proc.stderr
    assert "reset: 0" in proc.stdout and proc.stdout.rstrip().endswith("exit"), proc.stdout + proc.stderr
    assert "after: DeviceError kernel `vector_add`: CUDA driver error" in proc.stdout, proc.stdout
