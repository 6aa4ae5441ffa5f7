"""Real builds on a machine without a GPU: the generated crates compile with maturin, import,
reject bad arguments with Python exceptions, and compile through cutile to Tile IR and an
sm_90 cubin with the pip tileiras."""

import re
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pytest

import tilebridge as tb
from tilebridge.builder import wheel as tbuild
from tilebridge import toolchain
from tilebridge.dtypes import ARRAY_DTYPES
from tilebridge.metadata import ExtensionMetadata, ParamMetadata
from tilebridge.translator import ir as tb_ir
from tilebridge.verifier import coverage

from conftest import EXAMPLES, REPO

pytestmark = pytest.mark.slow

# (generics in declaration order, static stride patterns) for one specialization of each example.
SPECIALIZATIONS = {
    "vector_add": (["f32", "f32", "f32", "f32", "1024"], [("a", [1]), ("b", [1]), ("c", [1])]),
    "scaled_silu": (["bf16", "bf16", "512"], [("x", [1]), ("y", [1])]),
    "row_softmax": (["f16", "f16", "1024"], [("x", [-1, 1]), ("y", [-1, 1])]),
    "matmul": (["f16", "f16", "128", "128", "64"], [("A", [-1, 1]), ("B", [-1, 1]), ("C", [-1, 1])]),
    # SCALE=1.5 as its f32 bits: a ct.Constant[float] is a const generic after the others
    "group_rotate": (["f32", "f16", "4", "256", "1069547520"], [("x", [1]), ("y", [1])]),
}


class FakeCudaArray:
    """A device array as `__cuda_array_interface__` describes it; nothing is ever launched on it."""

    def __init__(self, shape, typestr="<f4", ptr=0x7000_0000, strides=None, readonly=False):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "data": (ptr, readonly),
                                         "strides": strides, "version": 3}


def fakes(n=4096, typestr="<f4"):
    return [FakeCudaArray((n,), typestr, ptr=0x7000_0000 + i * 0x10_0000) for i in range(3)]


def test_extension_imports_without_gpu(examples_ext):
    meta = ExtensionMetadata.from_json(examples_ext.__tilebridge__)
    assert sorted(meta.kernels) == ["group_rotate", "matmul", "row_softmax", "scaled_silu", "scaled_silu_in_place",
                                    "vector_add"]
    assert meta.kernels["matmul"].params[2] == ParamMetadata("C", "array", rank=2, written=True, tile=("TM", "TN"),
                                                             dtype_class="E1")
    for k in meta.kernels:
        assert callable(getattr(examples_ext, k))


def test_launch_without_gpu_raises_device_error(examples_ext):
    with pytest.raises(tb.DeviceError, match="no CUDA driver"):
        examples_ext.vector_add((4,), *fakes(), TILE=1024)


@pytest.mark.parametrize("typestr", ["<f8", "<i4", "<i8", "<u4"])
def test_arrays_computed_with_take_every_family_of_dtypes(examples_ext, typestr):
    """vector_add computes with its arrays: translated for f32, f16 and bf16, and once more for f64
    and once for integers, its launcher picking the translation by the dtypes launched, as cuTile
    Python specializes on them. Every check passes (the launch then finds no GPU here)."""
    with pytest.raises(tb.DeviceError, match="no CUDA driver"):
        examples_ext.vector_add((4,), *fakes(typestr=typestr), TILE=1024)
    meta = ExtensionMetadata.from_json(examples_ext.__tilebridge__).kernels["vector_add"]
    assert meta.dtypes["E0"] == ["f32", "f16", "bf16", "f64", "i32", "i64", "u32", "u64"]
    assert "arrays of f64: agrees with cuTile Python" in meta.checked


@pytest.mark.parametrize("mutate, error, pattern", [
    # a + b of an f32 a and an f16 b is f32, as cuTile Python promotes it: an f16 c would narrow it
    (lambda a: (a[0], FakeCudaArray((4096,), "<f2", 0x7100_0000), FakeCudaArray((4096,), "<f2", 0x7200_0000)),
     tb.ArgumentError, r"does not take the dtypes of 'a' \(f32\), 'b' \(f16\), 'c' \(f16\) together"),
    # int32 b beside f32 a and c: neither the floats as translated nor the variants, which take
    # every array of f64, or every array of integers (below)
    (lambda a: (a[0], FakeCudaArray((4096,), "<i4", 0x7100_0000), a[2]), tb.ArgumentError,
     r"argument 'b' has dtype i32, but kernel `vector_add` was built for f32, f16, bf16 \(and with 'a', 'b', "
     r"'c' of f64, or of i32, i64, u32, u64\)"),
    (lambda a: (FakeCudaArray((64, 64)), a[1], a[2]), tb.ArgumentError, "must have rank 1"),
    # another view of an input: refused (the very same array is an in-place update, below)
    (lambda a: (a[0], a[1], FakeCudaArray((4096,), ptr=0x7000_0000 + 64)), tb.ArgumentError,
     "share memory.*very same array"),
    (lambda a: (a[0], a[1], FakeCudaArray((4096,), ptr=0x7200_0000, readonly=True)), tb.ArgumentError, "read-only"),
    (lambda a: (FakeCudaArray((4096,), strides=(-4,)), a[1], a[2]), tb.ArgumentError, "negative stride"),
    (lambda a: (FakeCudaArray((4096,), strides=(6,)), a[1], a[2]), tb.ArgumentError, "multiple of the element"),
    (lambda a: (FakeCudaArray((1 << 31,)), a[1], a[2]), tb.ArgumentError, "32 bits"),
    (lambda a: (__import__("numpy").zeros(4096, "float32"), a[1], a[2]), tb.ArgumentError, "host"),
    (lambda a: ("not an array", a[1], a[2]), tb.ArgumentError, "must be a CUDA array"),
])
def test_bad_arguments_raise_python_errors(examples_ext, mutate, error, pattern):
    with pytest.raises(error, match=pattern):
        examples_ext.vector_add((4,), *mutate(fakes()), TILE=1024)


def test_in_place_updates_are_the_very_same_array(examples_ext):
    """An output may be passed as the input it is computed from where the kernel reads that input at
    the one tile it writes, before writing it (vector_add's c = a); not where blocks read what
    others write (matmul's C = A)."""
    a, b, _ = fakes()
    with pytest.raises(tb.DeviceError):  # past every check
        examples_ext.vector_add((4,), a, b, a, TILE=1024)
    square = FakeCudaArray((128, 128), "<f2")
    with pytest.raises(tb.ArgumentError, match="share memory"):
        examples_ext.matmul((1, 1), square, FakeCudaArray((128, 128), "<f2", ptr=0x7100_0000), square,
                            TM=128, TN=128, TK=64)
    meta = ExtensionMetadata.from_json(examples_ext.__tilebridge__).kernels
    assert meta["vector_add"].in_place == [("a", "c"), ("b", "c")] and meta["matmul"].in_place == []


class _Device:
    def __init__(self, id):
        self.id = id


def test_arrays_on_different_devices_raise(examples_ext):
    a, b, c = fakes()
    b.device = _Device(1)  # as a CuPy array on cuda:1 reports it
    with pytest.raises(tb.ArgumentError, match="is on cuda:1, but earlier arguments are on cuda:0"):
        examples_ext.vector_add((4,), a, b, c, TILE=1024)


@pytest.mark.parametrize("grid, tile, pattern", [((3,), 1024, r"grid must be \(4, 1, 1\)"), ((0,), 1024, "positive"),
                                                 ((4, 1, 1, 1), 1024, "1 to 3"), ((5,), 1000, "power of two")])
def test_bad_grid_or_tile(examples_ext, grid, tile, pattern):
    with pytest.raises(tb.ArgumentError, match=pattern):
        examples_ext.vector_add(grid, *fakes(), TILE=tile)


def test_argument_errors_are_value_and_type_errors(examples_ext):
    with pytest.raises(ValueError):
        examples_ext.vector_add((3,), *fakes(), TILE=1024)
    with pytest.raises(TypeError):  # PyO3's own check: a keyword is missing
        examples_ext.vector_add((4,), *fakes())


@pytest.mark.parametrize("kernel", sorted(SPECIALIZATIONS))
def test_compiles_to_tile_ir_and_sm90_cubin(examples_ext, kernel, tmp_path, monkeypatch):
    root = toolchain.cuda_root()
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(root))
    generics, strides = SPECIALIZATIONS[kernel]
    ir, bytecode = examples_ext._compile_only(kernel, generics, strides, "sm_90")
    assert f"entry @{kernel}_entry" in ir
    bc = tmp_path / f"{kernel}.bc"
    bc.write_bytes(bytecode)
    cubin = tmp_path / f"{kernel}.cubin"
    proc = subprocess.run([str(root / "bin" / "tileiras"), "--gpu-name", "sm_90", "--opt-level", "3", "-o",
                           str(cubin), str(bc)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert cubin.read_bytes()[:4] == b"\x7fELF"


def test_cubins_at_build_compile_every_checked_specialization_or_name_what_fails(examples_ext, tmp_path,
                                                                                monkeypatch):
    """`--cubins`: every specialization the check against cuTile Python accepted goes through
    tileiras before the wheel counts; a kernel tileiras rejects is a BuildError that names it and
    the specialization (here a tileiras that rejects everything, the rest of the toolkit real)."""

    target = [str(p) for p in EXAMPLES]
    result = tbuild.build(target, module="tilebridge_examples", install=False, quiet=True, cubins=True)
    assert not result.rebuilt  # the fixture's wheel: compiled, not rebuilt
    real = toolchain.cuda_root()
    fake = tmp_path / "cu13"
    (fake / "bin").mkdir(parents=True)
    for entry in real.iterdir():
        if entry.name != "bin":
            (fake / entry.name).symlink_to(entry)
    for tool in (real / "bin").iterdir():
        if tool.name != "tileiras":
            (fake / "bin" / tool.name).symlink_to(tool)
    (fake / "bin" / "tileiras").write_text("#!/bin/sh\necho 'error: this tileiras refuses everything' >&2\nexit 1\n")
    (fake / "bin" / "tileiras").chmod(0o755)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(fake))
    with pytest.raises(tb.BuildError, match=r"(?s)(\d+) of \1 specializations of tilebridge_examples do not compile.*"
                                            r"kernel `group_rotate` at f32, f32, 64, 64, 1056964608: \w+Error: .*this tileiras "
                                            r"refuses everything.*and \d+ more") as failed:
        tbuild.build(target, module="tilebridge_examples", install=False, quiet=True, cubins=True)
    # every specialization the check accepted, five of them listed
    total = int(str(failed.value).split(" of ")[0])
    assert total > 100 and f"and {total - 5} more" in str(failed.value)


def test_a_slow_tileiras_is_deferred_not_failed(examples_ext, monkeypatch):
    """Coverage with a cubin limit: a specialization whose tileiras runs longer still counts its
    Tile IR, and its cubin is deferred (counted apart), never a failure; without a limit it
    compiles; one listed as slow is deferred without running tileiras."""
    from tilebridge.translator import frontend, lower
    from tilebridge.translator.frontend import import_file

    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    kernel = import_file(REPO / "examples" / "vector_add.py").vector_add
    kir = lower.lower_kernel(frontend.load(kernel))
    with pytest.raises(coverage.SlowCompile):
        generics = ["f16", "f16", "f16", "f16", "1024"]  # a, b, c, their promotion, TILE
        coverage.cubin(examples_ext._compile_only("vector_add", generics, [("a", [1]), ("b", [1]), ("c", [1])],
                                                  "sm_90")[1], limit=0.001)
    slow, plain = coverage.Row("vector_add.py", "vector_add", False), coverage.Row("vector_add.py", "vector_add", False)
    coverage.compile_all(slow, examples_ext, kernel, kir, [], cubin_limit=0.001)
    coverage.compile_all(plain, examples_ext, kernel, kir, [])
    assert (slow.tile_irs, slow.cubins, slow.deferred, slow.cubin_or_deferred, slow.error) == (1, 0, 1, True, "")
    assert (plain.tile_irs, plain.cubins, plain.deferred, plain.cubin) == (1, 1, 0, True)
    assert "1 specializations through Tile IR whose cubin was deferred" in coverage.Report([slow]).table()

    # Listed as slow: its Tile IR is made and checked, and tileiras does not run at all.
    assert re.fullmatch(r"vector_add\.py:vector_add\[f16 f16 f16 f16 \d+\]", *slow.deferred_specs)
    listed = coverage.Row("vector_add.py", "vector_add", False)
    monkeypatch.setattr(coverage, "cubin", lambda *a, **k: pytest.fail("tileiras ran on a listed specialization"))
    coverage.compile_all(listed, examples_ext, kernel, kir, [], slow=frozenset(slow.deferred_specs))
    assert (listed.tile_irs, listed.cubins, listed.deferred, listed.cubin_or_deferred) == (1, 0, 1, True)
    assert listed.deferred_specs == slow.deferred_specs


def test_coverage_runs_tileiras_once_per_distinct_bytecode(monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    calls = []

    def fake_tileiras(bytecode, limit=None):
        calls.append(bytecode)
        time.sleep(0.05)  # the others arrive while it runs
        if bytecode == b"bad":
            raise RuntimeError("tileiras refuses it")

    monkeypatch.setattr(coverage, "cubin", fake_tileiras)
    once = coverage.CubinsOnce()

    def one(bytecode):
        try:
            return once.cubin(bytecode, None)
        except RuntimeError as e:
            return str(e)

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(one, [b"a", b"a", b"bad", b"b", b"bad", b"a"]))
    assert sorted(calls) == [b"a", b"b", b"bad"]
    assert results[2] == results[4] == "tileiras refuses it"  # a failure is every sharer's
    assert sum(r > 0 for r in results if not isinstance(r, str)) == 2  # the seconds count once


def test_matmul_tile_ir_has_the_mma_loop(examples_ext, monkeypatch):
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    ir, _ = examples_ext._compile_only("matmul", *SPECIALIZATIONS["matmul"])
    assert "mmaf" in ir and " for " in ir


def test_python_modulo_survives_translation(examples_ext, monkeypatch):
    """(pid - 1) % GROUP is GROUP - 1 at pid 0 in Python; C's remainder would be -1."""
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    ir, _ = examples_ext._compile_only("group_rotate", *SPECIALIZATIONS["group_rotate"])
    # floored as cuTile Python floors it (a % b = a - (a // b) * b), with no branch
    assert "rounding negative_inf" in ir and " = if " not in ir


def test_divisor_constants_are_checked_positive(examples_ext):
    x, y = FakeCudaArray((1024,)), FakeCudaArray((1024,), ptr=0x7100_0000)
    with pytest.raises(tb.ArgumentError, match="GROUP=0: kernel `group_rotate` divides by GROUP"):
        examples_ext.group_rotate((4,), x, y, SCALE=1.0, GROUP=0, TILE=256)


@pytest.fixture(scope="module")
def control_flow_ext():

    return tb.build(REPO / "tests" / "fixtures" / "control_flow.py", quiet=True)


@pytest.mark.parametrize("double", ["true", "false"])
def test_control_flow_compiles(control_flow_ext, double, monkeypatch):
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    ir, _ = control_flow_ext._compile_only("control_flow", ["f32", "f32", "8", double, "256"],
                                           [("x", [1]), ("y", [1])], "sm_90")
    assert "entry @control_flow_entry" in ir and " if " in ir
    ir, _ = control_flow_ext._compile_only("branch_bound", ["f32", "f32", "1" if double == "true" else "0", "256"],
                                           [("x", [1]), ("y", [1])], "sm_90")
    assert "entry @branch_bound_entry" in ir
    ir, _ = control_flow_ext._compile_only("branch_in_array_dtype", ["f16", "1", "256"], [("x", [1]), ("y", [1])],
                                           "sm_90")
    assert "entry @branch_in_array_dtype_entry" in ir


def test_kernel_without_arrays_builds_and_compiles(control_flow_ext, monkeypatch):
    """No dtype to dispatch on: the launcher calls its one typed function (an empty `match` was a
    rustfmt error), the unused array is taken and ignored, and the kernel goes to a cubin."""
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    ir, bytecode = control_flow_ext._compile_only("no_arrays", ["64"], [], "sm_90")
    assert "entry @no_arrays_entry" in ir
    coverage.cubin(bytecode)
    with pytest.raises(tb.DeviceError):  # admitted, then no GPU here
        control_flow_ext.no_arrays((1,), object(), 3, TILE=64)


@pytest.mark.parametrize("flag", ["true", "false"])
def test_constant_branches_compile(control_flow_ext, flag, monkeypatch):
    """Branches on ct.Constant values that Rust types differently from cuTile Python, which traces
    one branch per specialization: code after an `if` typed per branch, a branch-local rebinding,
    a shape that broadcasts only where the constant is 1, and names merged by nested `if`s."""
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    number = "1" if flag == "true" else "4"
    rows, flat = [("x", [-1, 1]), ("y", [1])], [("x", [1]), ("y", [1])]
    for name, generics, strides in (
            ("shape_by_constant", ["f32", "f16", flag, "256"], rows),
            ("rebound_in_branch", ["f16", "f32", flag, "256"], flat),
            ("untranslatable_branch", ["f32", "f32", "0", "256"], flat),
            ("rows_or_one_row", ["f32", "f32", number, "256"], [("x", [-1, 1]), ("y", [-1, 1])]),
            ("nested_bounds", ["f32", "f32", number, "256"], flat),
            ("early_exit", ["f32", "f16", "1000", "256"], flat)):
        ir, bytecode = control_flow_ext._compile_only(name, generics, strides, "sm_90")
        assert f"entry @{name}_entry" in ir
        coverage.cubin(bytecode)
    meta = ExtensionMetadata.from_json(control_flow_ext.__tilebridge__).kernels
    assert meta["shape_by_constant"].safe and meta["rebound_in_branch"].safe


def test_untranslatable_constant_branch_is_refused_at_launch(control_flow_ext):
    """cuTile Python compiles a branch only for the constants that take it; the Rust twin refuses
    those constants, naming what it could not translate, and takes the others."""
    x, y = FakeCudaArray((256,)), FakeCudaArray((256,), ptr=0x7100_0000)
    with pytest.raises(tb.ArgumentError, match=r"control_flow.py:\d+: `FANCY` must be False.*ct\.sigmoid"):
        control_flow_ext.untranslatable_branch((1,), x, y, FANCY=1, TILE=256)
    with pytest.raises(tb.DeviceError):  # past every check: only the missing GPU stops it
        control_flow_ext.untranslatable_branch((1,), x, y, FANCY=0, TILE=256)


def test_math_modes_compile(monkeypatch):

    ext = tb.build(REPO / "tests" / "fixtures" / "math_ops.py", quiet=True)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    ir, _ = ext._compile_only("math_ops", ["f32", "f16", "8", "64"], [("x", [-1, 1]), ("y", [-1, 1])], "sm_90")
    assert "rounding<approx>" in ir and "flush_to_zero" in ir and "permute" in ir
    # atan2, isnan (cmpf), bitcasts, and int32's minimum as a literal cutile's JIT parses
    ir, bytecode = ext._compile_only("angles_and_bits", ["f32", "f32", "f32", "f32", "f32", "256"],
                                     [(a, [1]) for a in "xyzw"], "sm_90")
    assert all(op in ir for op in ("atan2", "cmpf", "bitcast", "-2147483648")), ir
    coverage.cubin(bytecode)
    # isnan's comparison as cuTile Python's own Tile IR has it: `not_equal unordered` (true for NaN;
    # cutile's `ne_tile` is ordered, and the H100 round of 2026-12-05 saw isnan false there)
    from tilebridge.translator.frontend import import_file

    theirs = coverage.python_tile_ir(import_file(REPO / "tests" / "fixtures" / "math_ops.py").angles_and_bits,
                                     coverage.Specialization([], [], [("array", "f32", [1])] * 4 + [("constant", 256)]))
    cmpf = [re.search(r"cmpf (\w+ \w+)", line).group(1) for line in ir.splitlines() if "cmpf" in line]
    assert cmpf == ["not_equal unordered"] == [re.search(r"cmpf (\w+ \w+)", line).group(1)
                                               for line in theirs.splitlines() if "cmpf" in line], (cmpf, theirs)
    meta = ExtensionMetadata.from_json(ext.__tilebridge__).kernels["math_ops"]
    # the approximate exp through the module's safe f32 wrapper: the same Tile IR, no `unsafe`
    assert not any("rounding" in reason for reason in meta.unsafe_reasons)
    ir, _ = ext._compile_only("masked", ["f32", "f32", "100", "256"], [("x", [1]), ("y", [1])], "sm_90")
    assert "cmpi" in ir and "select" in ir
    ir, _ = ext._compile_only("int_tiles", ["f32", "f32", "7", "256"], [("x", [1]), ("y", [1])], "sm_90")
    assert "divi" in ir and "negative_inf" in ir
    ir, _ = ext._compile_only("int_tiles_mod", ["f32", "f32", "7", "256"], [("x", [1]), ("y", [1])], "sm_90")
    assert "remi" in ir and "select" in ir
    ir, _ = ext._compile_only("transposed_load", ["f32", "f32", "64"], [("x", [-1, 1]), ("y", [-1, 1])], "sm_90")
    assert "dim_map" in ir
    ir, _ = ext._compile_only("floor_division", ["f32", "5", "256"], [("x", [1]), ("y", [1])], "sm_90")
    assert "negative_inf" in ir and " = if " not in ir  # Python's floor, as Tile IR's divi rounds it
    ir, _ = ext._compile_only("load_hints", ["f32", "f32", "256"], [("x", [1]), ("y", [1])], "sm_90")
    assert "latency" in ir and "allow_tma = false" in ir.replace("allow_tma=false", "allow_tma = false")
    ir, _ = ext._compile_only("static_checks", ["f32", "f32", "64", "64", "256"], [("x", [1]), ("y", [1])], "sm_90")
    assert "tanh" in ir and "rounding_mode = 4" in ir  # approx
    with pytest.raises(tb.ArgumentError, match=r"static_assert fails at math_ops.py:\d+: N == G"):
        ext.static_checks((1,), *fakes(256)[:2], N=64, G=32, TILE=256)  # checked before any GPU work
    # `ct.tfloat32 if A.dtype == ct.float32 else A.dtype`: a type parameter the launcher binds
    generics = lambda d, m: [d, d, d, m, "64", "64", "32"]  # noqa: E731
    ir, _ = ext._compile_only("tf32_mma", generics("f32", "tf32"), [("A", [-1, 1]), ("B", [-1, 1]), ("C", [-1, 1])],
                              "sm_90")
    assert "xtf32>" in ir  # tiles of tf32
    ir, _ = ext._compile_only("tf32_mma", generics("f16", "f16"), [("A", [-1, 1]), ("B", [-1, 1]), ("C", [-1, 1])],
                              "sm_90")
    assert "xtf32>" not in ir
    # @ct.kernel hints reach the Tile IR entry as cuTile Python writes them (ByTarget per target)
    ir, _ = ext._compile_only("kernel_hints", ["f32", "256"], [("x", [1]), ("y", [1])], "sm_90")
    entry = next(line for line in ir.splitlines() if "entry @kernel_hints" in line)
    assert "occupancy = 4" in entry and "sm_100 = {num_cta_in_cga = 2" in entry, entry


def test_checked_ops_compile(monkeypatch):
    """Bit operations, extract and n-D transposes reach sm_90 (tests/gpu checks their numbers)."""

    ext = tb.build(REPO / "tests" / "fixtures" / "checked_ops.py", quiet=True)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    rows, cube = [-1, 1], [-1, -1, 1]
    for name, generics, strides, ops in (
            ("hash_keep", ["f16", "f16", "12345", "1024", "1056964608"], [("x", [1]), ("y", [1])],  # P=0.5's bits
             ["shri", "shli", "xori", "andi", "select"]),
            ("second_half", ["bf16", "bf16", "128"], [("x", rows), ("y", rows)], ["extract"]),
            ("swap_outer_axes", ["f32", "f32", "4", "8", "16"], [("x", cube), ("y", cube)], ["permute"]),
            # cutile scans axis 0 only: the row sums are permuted there and back
            ("prefix_sums", ["f32", "f32", "f16", "16", "64"], [("x", rows), ("y", rows), ("z", rows)],
             ["scan", "permute", "reverse=true"]),
            # int64 ids met as int32 (the branch for int64 ids, which the flag `IDS_IS_I64` takes: their
            # low bits); the bool match summed through a select (cutile converts no bools)
            ("count_ids", ["i64", "i32", "8", "256", "true"], [("ids", [1]), ("counts", [1])],
             ["select", "cmpi", "trunci"]),
            ("window_sum", ["i32", "f16", "f32", "256", "300", "false"], [("start", [1]), ("x", [1]), ("y", [1])], ["for "]),
            # the zero padding a constant tile of the gather's shape, in the load; then an mma into a
            # zero accumulator of f16, as cuTile Python's matmul of f16 tiles takes (the launcher binds
            # the accumulator per dtype: the third generic)
            ("padded_block_matmul", ["f16", "f32", "f16", "64", "64"], [("x", rows), ("y", rows)],
             ["tile<64x64xi1>, tile<64x64xf16> -> tile<64x64xf16>",
              "mmaf %v, %v, %v : tile<64x64xf16>, tile<64x64xf16>, tile<64x64xf16>"]),
            # lists of arrays: a table row per array, read, cast to a pointer and made a tensor view
            # (and each list's divisibility: pointer 16 bytes, extents and row stride 8 elements)
            ("grouped_double", ["f16", "f16", "32", "64", "8"] + ["16", "8", "8", "8"] * 2, [("Xs", rows), ("Ys", rows)],
             ["int_to_ptr", "trunci", "make_tensor_view", "loop", "div_by<16>", "div_by<8>"])):
        ir, bytecode = ext._compile_only(name, generics, strides, "sm_90")
        ir = re.sub(r"%\w+", "%v", ir)
        assert all(op in ir for op in ops), (name, ir)
        coverage.cubin(bytecode)  # and tileiras takes it
    # int32 ids as they are: no tile converted at all, so tileiras keeps what it knows of them (the
    # padding, a number, still goes through f64: cutile converts no integer scalar to another)
    ir, _ = ext._compile_only("count_ids", ["i32", "i32", "8", "256", "false"], [("ids", [1]), ("counts", [1])],
                              "sm_90")
    assert not re.search(r"= (itof|ftoi|trunci|exti) .*tile<\d", ir), ir
    # cuTile Python's own Tile IR of the f16 matmul accumulates in f16 too (its mma line, same types)
    from tilebridge.translator.frontend import import_file

    spec = coverage.Specialization([], [], [("array", "f16", rows), ("array", "f32", rows), ("constant", 64),
                                            ("constant", 64)])
    theirs = coverage.python_tile_ir(import_file(REPO / "tests" / "fixtures" / "checked_ops.py").padded_block_matmul,
                                     spec)
    assert "mmaf %v, %v, %v : tile<64x64xf16>, tile<64x64xf16>, tile<64x64xf16>" in re.sub(r"%[\w.-]+", "%v", theirs)
    meta = ExtensionMetadata.from_json(ext.__tilebridge__).kernels
    assert meta["count_ids"].dtypes == {"E0": ["i32", "i64"], "E1": ["i32"]}
    assert meta["window_sum"].params[3] == ParamMetadata("scales", "unused")
    # Outputs stored at split or reordered block indices: safe, through a view of rank 3 that the
    # compile takes from the arrays as launched (rank 4 and 3 here), as a launch makes it.
    assert meta["heads_scaled"].safe and meta["batched_negate"].safe
    assert meta["heads_scaled"].params[1].tile == ("TM", 1, "TD")
    four = [-1, -1, -1, 1]
    for name, generics, strides in (("heads_scaled", ["f32", "f32", "64", "64"], [("x", four), ("y", four)]),
                                    ("batched_negate", ["f32", "f32", "32", "64"], [("x", cube), ("y", cube)])):
        ir, bytecode = ext._compile_only(name, generics, strides, "sm_90", arrays=[
            (a, [2, 3, 200, 64][-len(st):], [38400, 12800, 64, 1][-len(st):], 0, 4) for a, st in strides])
        # the store: one tile of a rank-3 view, its last stride the array's (1, specialized)
        assert re.search(r"make_tensor_view .*-> tensor_view<\?x\?x\?xf32, strides=\[\?,\?,1\]>", ir), ir
        coverage.cubin(bytecode)
    # the array as launched, whose dimensions 0 and 1 are not laid out as one, or whose divisor is
    # not the extent there: an ArgumentError before any GPU work
    with pytest.raises(tb.ArgumentError, match="do not lay out as one"):
        apart = FakeCudaArray((2, 3, 200, 64), strides=(200 * 64 * 4, 2 * 200 * 64 * 4, 64 * 4, 4), ptr=0x7100_0000)
        ext.heads_scaled((4, 6, 1), FakeCudaArray((2, 3, 200, 64)), apart, 0.5, 3, TM=64, TD=64)
    with pytest.raises(tb.ArgumentError, match="so H must be its extent there: H is 2"):
        ext.heads_scaled((4, 6, 1), FakeCudaArray((2, 3, 200, 64)), FakeCudaArray((2, 3, 200, 64), ptr=0x7100_0000),
                         0.5, 2, TM=64, TD=64)
    # A grid-stride loop over an output's rows: safe, through cutile's persistent loop, which Tile IR
    # has as cuTile Python's loop (from ct.bid(0), by ct.num_blocks(0)) up to the output's tile
    # count, the launcher having narrowed it to N_ROWS rows; one plain store, no trap; a 1-D grid.
    assert meta["rows_streamed"].safe
    ir, bytecode = ext._compile_only("rows_streamed", ["f16", "f16", "300", "128"], [("x", rows), ("y", rows)],
                                     "sm_90")
    tiles, view = re.search(r"(%\w+), %\w+ = get_index_space_shape (%\w+) ", ir).groups()
    bid = re.findall(r"(%\w+), %\w+, %\w+ = get_tile_block_id", ir)[-1]
    blocks = re.search(r"(%\w+), %\w+, %\w+ = get_num_tile_blocks", ir).group(1)
    assert re.search(rf"for %\w+ in \({bid} to {tiles}, step {blocks}\)", ir), ir
    assert re.search(rf"store_view_tko weak %\w+, {view}\[", ir), ir
    assert ir.count("store_view_tko") == 1 and "assert" not in ir
    coverage.cubin(bytecode)
    with pytest.raises(tb.ArgumentError, match=r"grid-stride loop over ct.bid\(0\), so its grid must be 1-D"):
        ext.rows_streamed((64, 2), FakeCudaArray((300, 100), "<f2"), FakeCudaArray((300, 100), "<f2", ptr=0x7100_0000),
                          N_ROWS=300, TN=128)


def test_index_arrays_take_integers_and_unused_parameters_anything():

    ext = tb.build(REPO / "tests" / "fixtures" / "checked_ops.py", quiet=True)
    ids, counts = FakeCudaArray((1000,), "<i8"), FakeCudaArray((32,), "<i4", ptr=0x7100_0000)
    with pytest.raises(tb.DeviceError):  # int64 ids: past every check
        ext.count_ids((4,), ids, counts, NUM=8, TILE=256)
    with pytest.raises(tb.ArgumentError, match="ids"):
        ext.count_ids((4,), FakeCudaArray((1000,), "<f4"), counts, NUM=8, TILE=256)
    start, x, y = FakeCudaArray((1,), "<i4"), FakeCudaArray((4096,), "<f2", ptr=0x7200_0000), \
        FakeCudaArray((512,), "<f2", ptr=0x7300_0000)
    with pytest.raises(tb.DeviceError):
        ext.window_sum((2,), start, x, y, None, TILE=256, BACK=300)


def test_an_unannotated_scalar_is_an_int_or_a_float_as_launched():
    """One launcher, a variant per type of `s` (cuTile Python specializes on it): an int and a float
    both pass every check (to the missing GPU), anything else is an ArgumentError naming it."""

    ext = tb.build(REPO / "tests" / "fixtures" / "checked_ops.py", quiet=True)
    meta = ExtensionMetadata.from_json(ext.__tilebridge__).kernels["scale_by_number"]
    assert meta.params[2] == ParamMetadata("s", "scalar", dtype="i32|f32")
    assert "s i32: agrees with cuTile Python" in meta.checked and "s f32: agrees" in meta.checked
    x, y = FakeCudaArray((4096,), "<f2"), FakeCudaArray((4096,), "<f2", ptr=0x7100_0000)
    for s in (3, 0.7):
        with pytest.raises(tb.DeviceError):
            ext.scale_by_number((16,), x, y, s, TILE=256)
    for s, why in (("3", "must be an int or a float, got str"), (True, "must be an int or a float, not a bool")):
        with pytest.raises(tb.ArgumentError, match=f"argument 's' {why}"):
            ext.scale_by_number((16,), x, y, s, TILE=256)
    assert not hasattr(ext, "scale_by_number_s_f32")  # the variants are the launcher's own


def test_lists_of_arrays_are_admitted_item_by_item():
    """Every item of a list is checked like an array argument, and named by its place in the list."""

    ext = tb.build(REPO / "tests" / "fixtures" / "checked_ops.py", quiet=True)
    meta = ExtensionMetadata.from_json(ext.__tilebridge__).kernels["grouped_double"]
    assert [(p.name, p.kind, p.written) for p in meta.params[:2]] == [
        ("Xs", "array_list", False), ("Ys", "array_list", True)]
    xs = [FakeCudaArray((100, 64), "<f2", ptr=0x7000_0000), FakeCudaArray((33, 200), "<f2", ptr=0x7100_0000)]
    ys = [FakeCudaArray((100, 64), "<f2", ptr=0x7200_0000), FakeCudaArray((33, 200), "<f2", ptr=0x7300_0000)]
    launch = lambda xs, ys: ext.grouped_double((8,), xs, ys, TM=32, TN=64, BLOCKS=8)  # noqa: E731
    with pytest.raises(tb.DeviceError):  # past every check
        launch(xs, ys)
    for bad_xs, bad_ys, pattern in (
            (xs[0], ys, "'Xs' .* must be a list or tuple of arrays"),
            ([], ys, "'Xs' .* is an empty list"),
            ([xs[0], FakeCudaArray((33, 200), "<f4", ptr=0x7100_0000)], ys, r"'Xs\[0\]' is f16, 'Xs\[1\]' is f32"),
            ([xs[0], FakeCudaArray((33,), "<f2", ptr=0x7100_0000)], ys, r"'Xs\[1\]' .* must have rank 2"),
            (xs, [ys[0], FakeCudaArray((33, 200), "<f2", ptr=0x7300_0000, strides=(2, 66))], r"'Ys\[1\]' .* stride 33"),
            (xs, [ys[0], FakeCudaArray((33, 200), "<f2", ptr=0x7000_0000)], r"'Ys\[1\]' and 'Xs\[0\]' .* share memory"),
            (xs, [ys[0], FakeCudaArray((33, 200), "<f2", ptr=0x7300_0000, readonly=True)], r"'Ys\[1\]' is read-only")):
        with pytest.raises(tb.ArgumentError, match=pattern):
            launch(bad_xs, bad_ys)


def test_unchecked_outputs_compile_and_say_why(monkeypatch):

    ext = tb.build(REPO / "tests" / "fixtures" / "unchecked_stores.py", quiet=True)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    meta = ExtensionMetadata.from_json(ext.__tilebridge__).kernels
    assert meta["persistent_copy"].safe  # one output streamed: cutile's checked persistent loop
    assert "inside a loop" in meta["persistent_pair"].unsafe_reasons[0]
    assert "index component 0 is not a block index" in meta["reversed_copy"].unsafe_reasons[0]
    for name, generics, arrays in (("persistent_copy", ["f32", "64", "256"], "xy"),
                                   ("persistent_pair", ["f32", "f32", "f32", "64", "256"], "xyz"),
                                   ("reversed_copy", ["f32", "256"], "xy")):
        ir, _ = ext._compile_only(name, generics, [(a, [1]) for a in arrays], "sm_90")
        # no trap and no test of the index in the loop (each cost TileGym's persistent kernels 1.04x to 1.8x)
        assert "store_view_tko" in ir and "assert" not in ir and not re.search(r"\bif %", ir), ir
    # an array updated in place: loaded and stored through one mutable view, so one token chain
    assert meta["add_in_place"].unsafe_reasons == [
        "updates 'y' in place through an unchecked partition (obligation: each block loads and stores only its own "
        "tiles of it, inside its grid; the kernel keeps it, as cuTile Python requires)"]
    assert [p.written for p in meta["add_in_place"].params[:2]] == [False, True]
    ir, _ = ext._compile_only("add_in_place", ["f32", "f32", "f32", "256"], [("x", [1]), ("y", [1])], "sm_90")
    assert sum("make_partition_view" in line for line in ir.splitlines()) == 2  # x's and y's
    loaded_y = re.search(r"(%\d+), (%\d+) = load_view_tko weak (%\d+)\[", ir)  # y's, the first load
    store = re.search(r"store_view_tko weak %\d+, (%\d+)\[.*token = (%\d+) :", ir)
    assert store and store.group(1) == loaded_y.group(3) and store.group(2) == loaded_y.group(2), ir
    # written or read depending on a ct.Constant[bool] that cutile folds: both forms compile
    for compute in ("true", "false"):
        ext._compile_only("stats_or_reuse", ["f32", "f32", compute, "256"], [("x", [1]), ("mean", [1])], "sm_90")
    with pytest.raises(tb.DeviceError):  # any grid is accepted: the kernel decides what it covers
        ext.persistent_copy((3,), FakeCudaArray((4096,)), FakeCudaArray((4096,), ptr=0x7100_0000), N_TILES=16,
                            TILE=256)


def test_compile_error_is_a_python_exception(examples_ext, monkeypatch):
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    with pytest.raises(tb.KernelCompileError):
        examples_ext._compile_only("vector_add", ["f32"], [("a", [1])], "sm_90")  # TILE missing
    with pytest.raises(tb.ArgumentError, match="no kernel"):
        examples_ext._compile_only("nope", [], [], "sm_90")


@pytest.mark.parametrize("target", ["examples", "control_flow", "math_ops", "checked_ops", "unchecked_stores",
                                    "gathers", "language", "mixed_dtypes", "any_dtype"])
def test_generated_crates_build_without_compiler_warnings(examples_ext, target):
    """rustc warns about nothing in a generated crate (the build log's warnings; TileGym's crates
    are held to the same in tests/test_coverage.py). Built by the tests above: found, not rebuilt."""
    paths = [str(p) for p in EXAMPLES] if target == "examples" else REPO / "tests" / "fixtures" / f"{target}.py"
    result = tbuild.build(paths, module="tilebridge_examples" if target == "examples" else None, install=False,
                          quiet=True)
    assert (result.crate_dir / tbuild.BUILD_LOG).is_file()
    assert result.warnings == []


def test_unchanged_build_is_a_no_op(examples_ext, monkeypatch):
    """A build whose key is unchanged runs no compiler (maturin is never called) and says so. The
    wall time it took was bounded here too, and failed at 10.6 s on this 2-core machine busy with
    two test runs: a timed test, gone."""
    def compiled(*args, **kwargs):
        raise AssertionError("an unchanged build ran maturin")

    monkeypatch.setattr(tbuild, "build_crate", compiled)
    result = tbuild.build([str(p) for p in EXAMPLES], module="tilebridge_examples", quiet=True)
    assert not result.rebuilt


def test_build_failure_shows_the_compiler_message(tmp_path):

    crate = tb.translate(REPO / "examples" / "vector_add.py", module="broken_rs", runtime_path=tbuild.RUNTIME_CRATE)
    assert "let pid: i32" in crate.files["src/tile_kernels.rs"]
    crate.files["src/tile_kernels.rs"] = crate.files["src/tile_kernels.rs"].replace(
        "let pid: i32", "let pid: NoSuchType")
    tbuild.write_crate(crate, tmp_path / "broken", "test")
    with pytest.raises(tb.BuildError) as info:
        tbuild.build_crate(tmp_path / "broken", quiet=True)
    assert "NoSuchType" in str(info.value) and "error" in str(info.value)
    assert not (tmp_path / "broken" / tbuild.STAMP).exists()


def test_cli_build_and_check_without_gpu(capsys):
    from tilebridge.cli import main

    assert main(["check", *map(str, EXAMPLES), "-m", "tilebridge_examples"]) == 0
    out = capsys.readouterr().out
    assert "built and imported tilebridge_examples" in out


def test_use_rust_routes_translated_kernels_and_leaves_the_rest(examples_ext, monkeypatch):
    import cuda.tile as ct

    from tilebridge.translator.frontend import import_file

    examples = Path(__file__).resolve().parent.parent / "examples"
    vector_add = import_file(examples / "vector_add.py").vector_add
    other = import_file(Path(__file__).parent / "fixtures" / "control_flow.py")
    other_kernel = next(v for v in vars(other).values() if hasattr(v, "_pyfunc"))
    to_python = []
    monkeypatch.setattr(ct, "launch", lambda *a: to_python.append(a))
    fake_launch = ct.launch
    with tb.use_rust(examples_ext) as routing:
        # It reached the Rust launcher: this machine has no GPU, which only Rust reports this way.
        with pytest.raises(tb.DeviceError, match="no CUDA driver"):
            ct.launch(0, (4,), vector_add, (*fakes(), 1024))
        ct.launch(0, (1,), other_kernel, ())
    assert ct.launch is fake_launch  # restored
    assert routing.rust == {("vector_add.py", "vector_add"): 1}
    assert routing.python == {("control_flow.py", other_kernel._pyfunc.__name__): 1}
    assert len(to_python) == 1 and to_python[0][2] is other_kernel


def test_gathers_scatters_and_hinted_stores_compile(monkeypatch):

    ext = tb.build(REPO / "tests" / "fixtures" / "gathers.py", quiet=True)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    meta = ExtensionMetadata.from_json(ext.__tilebridge__).kernels
    # its gather checks bounds only where TILE != N, a choice made at launch: the module's span
    # gather, checked lane by lane or, unchecked, the whole run or nothing; its scatter of the
    # block's own row stays the masked pointer store cuTile Python emits (as the checked store of
    # the block's tile it was 6 to 11% slower on the H200: only with --lift-gathers), through the
    # module's safe scatter, which masks it to that row itself. Both launches through cubin.
    for n in ("1000", "1024"):
        ir, bytecode = ext._compile_only("row_gather", ["f16", "f16", n, "1024"], [("x", [-1, 1]), ("y", [-1, 1])],
                                         "sm_90")
        assert "load_ptr_tko" in ir and "store_ptr_tko" in ir and "store_view_tko" not in ir
        coverage.cubin(bytecode)
    assert meta["row_gather"].safe and not meta["row_gather"].unsafe_reasons
    ir, _ = ext._compile_only("regathered", ["f32", "f32", "64"], [("x", [1]), ("y", [1])], "sm_90")
    # a safe gather, and a scatter of the block's own tile (ct.bid(0) * TILE + ct.arange(TILE)): safe
    assert "load_ptr_tko" in ir and "store_ptr_tko" in ir
    assert meta["regathered"].safe and not meta["regathered"].unsafe_reasons
    ir, _ = ext._compile_only("shifted", ["f32", "f32", "256"], [("x", [1]), ("y", [1])], "sm_90")
    # masked to x's bounds: one unsigned comparison per lane, made in the safe gather; the scatter of
    # overlapping ranges stays a masked pointer store, unsafe
    assert ir.count("load_ptr_tko") == 1 and "unsigned" in ir and "greater_than_or_equal" not in ir
    assert meta["shifted"].unsafe_reasons == [
        "scatters to 'y' through pointers (obligation: blocks write disjoint elements of it; the kernel keeps it, "
        "as cuTile Python requires)"]
    ir, _ = ext._compile_only("wild_gather", ["f32", "i32", "i32", "f32", "64", "false", "false"],  # rows, cols int32
                              [("x", [-1, 1]), ("rows", [1]), ("cols", [1]), ("y", [1])], "sm_90")
    assert ir.count("load_ptr_tko") == 3
    assert meta["wild_gather"].safe
    # rows a block owns (ct.bid(0), a tile of it, one element, masked, in a loop): safe; through cubin
    ir, bytecode = ext._compile_only("owned_rows", ["f32", "f32", "f32", "f32", "100", "64"], [
        ("x", [-1, 1]), ("y", [-1, 1]), ("mean", [1]), ("rstd", [1])], "sm_90")
    assert meta["owned_rows"].safe and ir.count("store_ptr_tko") == 3
    coverage.cubin(bytecode)
    # f32 tiles stored into `stats`: built for f32 only, as cuTile Python casts no narrower
    # x only moved: every dtype cutile converts to f32 (not bool); y holds what is stored into it
    assert meta["hinted_store"].dtypes == {"E0": [d for d in ARRAY_DTYPES if d != "bool"], "E1": ["f32"]}
    ir, _ = ext._compile_only("hinted_store", ["f16", "f32", "256"], [("x", [-1, 1]), ("stats", [1])], "sm_90")
    assert "allow_tma = false" in ir.replace("allow_tma=false", "allow_tma = false") and "latency" in ir
    # a gathered tile reassigned in a loop (rustfmt once rejected its `let mut (t, _t_token)`)
    ir, bytecode = ext._compile_only("regathered", ["f32", "f32", "256"], [("x", [1]), ("y", [1])], "sm_90")
    assert "entry @regathered_entry" in ir and ir.count("load_ptr_tko") == 1
    coverage.cubin(bytecode)


def test_gathered_arrays_need_a_contiguous_last_dimension(monkeypatch):

    ext = tb.build(REPO / "tests" / "fixtures" / "gathers.py", quiet=True)
    x = FakeCudaArray((8, 1024), "<f2", 0x7000_0000, strides=(4096, 4))  # every other element
    y = FakeCudaArray((8, 1024), "<f2", 0x7100_0000)
    with pytest.raises(tb.ArgumentError, match="stride 2 in its last dimension.*contiguous"):
        ext.row_gather((8,), x, y, N=1000, TILE=1024)


def test_launch_time_hints(examples_ext):
    """A `replace_hints(...)` kernel object (TileGym's autotuned configurations) reaches the Rust
    launch with its hints; bad hints are argument errors before any GPU work."""
    from tilebridge.translator.frontend import import_file
    from tilebridge.runtime.launch import launch_hints

    vector_add = import_file(Path(__file__).resolve().parent.parent / "examples" / "vector_add.py").vector_add
    assert launch_hints(vector_add) is None
    assert launch_hints(vector_add.replace_hints(occupancy=2, num_ctas=1)) == (2, 1, None)
    with pytest.raises(tb.ArgumentError, match="occupancy=0 .* must be positive"):
        examples_ext.vector_add((4,), *fakes(), TILE=1024, hints=(0, None, None))
    with pytest.raises(tb.DeviceError, match="no CUDA driver"):  # accepted: it got as far as the device
        examples_ext.vector_add((4,), *fakes(), TILE=1024, hints=(2, 1, None))


def test_moved_arrays_take_any_dtype_unstated(monkeypatch):
    """Arrays a kernel only moves take every dtype cuTile Python accepts there, none stated (fp8
    operands of an mma, int8 ones with their int32 accumulator, any float quantized to any
    integer, bools copied), while arrays it computes with keep f32, f16 and bf16; the new dtypes
    reach sm_90 cubins with the very conversions and mma cuTile Python emits (its own Tile IR at
    the same specialization: signedness, accumulator), and a launch with one is let through."""
    path = REPO / "tests" / "fixtures" / "any_dtype.py"
    ext = tb.build(path, quiet=True)
    meta = ExtensionMetadata.from_json(ext.__tilebridge__).kernels
    assert {"f8e4m3fn", "f8e5m2", "bf16"} <= set(meta["batched_mma"].dtypes["E0"])
    assert "f64" not in meta["batched_mma"].dtypes["E0"]  # cuTile Python accumulates f64 in f64 only
    assert meta["int8_mma"].dtypes["E0"] == ["i8", "u8"] and "i32" in meta["int8_mma"].dtypes["E1"]
    assert {"i8", "u8", "i16"} <= set(meta["quantize"].dtypes["E1"])
    assert "bool" in meta["tile_copy"].dtypes["E0"] and "bool" not in meta["quantize"].dtypes["E0"]  # cutile converts no bool
    assert meta["kept"].dtypes["E1"] == ["bool"]  # ct.where's condition: bools alone, as cuTile Python's select takes
    examples = ExtensionMetadata.from_json(tb.build([str(p) for p in EXAMPLES], module="tilebridge_examples",
                                                    quiet=True).__tilebridge__).kernels
    # computed with: f32, f16 and bf16 as translated, and the variants for f64 and the integers
    assert examples["vector_add"].dtypes["E0"][:3] == ["f32", "f16", "bf16"]

    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    from tilebridge.translator.frontend import import_file

    kernels = import_file(path)
    rows, cube = [-1, 1], [-1, -1, 1]

    def converted(ir: str) -> list[str]:
        return sorted({re.sub(r"\s+", " ", re.sub(r"%[\w.-]+", "%v", line)).strip().lower()
                       for line in ir.splitlines() if re.search(r"= (itof|ftoi|ftof|exti|trunci|mmai|mmaf) ", line)})

    # Each class at each dtype its launcher takes (the others at their first): cuTile Python accepts
    # the specialization and converts and multiplies exactly so; six of them through tileiras too.
    through_cubin = {("batched_mma", "f8e4m3fn", "f32"), ("batched_mma", "f8e5m2", "f32"), ("int8_mma", "i8", "i32"),
                     ("quantize", "f32", "i8"), ("dequantize", "u8", "f32"), ("tile_copy", "bool"),
                     ("kept", "f16", "bool", "f32")}
    compared = 0
    for name, consts, stride in (("batched_mma", [64, 64, 32], cube), ("int8_mma", [64, 64, 32], rows),
                                 ("quantize", [256], [1]), ("dequantize", [256], [1]), ("tile_copy", [64, 64], rows),
                                 ("kept", [256], [1])):
        classes = meta[name].dtypes
        first = {c: allowed[0] for c, allowed in classes.items()}
        arrays = [p for p in meta[name].params if p.kind == "array"]
        for bound in [dict(t) for t in dict.fromkeys(tuple({**first, c: d}.items())
                                                       for c, allowed in classes.items() for d in allowed)]:
            dtypes = list(bound.values())  # in the generics' order
            ir, bytecode = ext._compile_only(name, dtypes + [str(c) for c in consts],
                                             [(a.name, stride) for a in arrays], "sm_90")
            signature = [("array", bound[a.dtype_class], stride) for a in arrays] + [("scalar", "f32")] * (
                name in ("quantize", "dequantize", "kept")) + [("constant", c) for c in consts]
            theirs = coverage.python_tile_ir(getattr(kernels, name), coverage.Specialization([], [], signature))
            assert converted(ir) == converted(theirs), (name, dtypes)
            compared += 1
            if (name, *dtypes) in through_cubin:
                coverage.cubin(bytecode)
                through_cubin.remove((name, *dtypes))
    assert not through_cubin and compared >= 40, (through_cubin, compared)
    with pytest.raises(tb.DeviceError):  # int8 operands past every check, as none stated them
        ext.int8_mma((1, 1), FakeCudaArray((64, 128), "|i1"), FakeCudaArray((128, 64), "|i1", ptr=0x7100_0000),
                     FakeCudaArray((64, 64), "<i4", ptr=0x7200_0000), TM=64, TN=64, TK=32)
    with pytest.raises(tb.ArgumentError, match="A"):  # f32 operands: cuTile Python's int32 accumulator refuses them
        ext.int8_mma((1, 1), FakeCudaArray((64, 128)), FakeCudaArray((128, 64), ptr=0x7100_0000),
                     FakeCudaArray((64, 64), "<i4", ptr=0x7200_0000), TM=64, TN=64, TK=32)


def test_checks_tiles_from_tuples_and_bytes_reach_tile_ir_as_cuTile_Pythons(monkeypatch, tmp_path):
    """`ct.assert_`, `ct.astile`, `ct.insert`, `ct.pack_to_bytes` and `ct.unpack_from_bytes`,
    `ct.static_eval`, tiled views, and kernels annotated with `ct.Tile`, `ct.Scalar` and an
    `ArrayAnnotation` (language.py): each at a specialization the check against cuTile Python accepted, compiled by
    cutile to an sm_90 cubin, with the Tile IR operations cuTile Python's Tile IR has at the same
    specialization (a tuple of numbers is joined by `cat` here, where cuTile Python writes one
    constant); so too a split-k's counter whose acquire orders its gathers (`last_block_sums`), a
    spin lock around gathers and scatters (`locked_sums`) and around tiles (`locked_tiles`), a
    helper's result following its paths (`helper_paths`), batched products (`batched_products`), a
    `while` on a 0-d tile of bools (`leading_positive_rows`), an array's strides
    (`scaled_by_strides`), a view made from its foreign pointer (`foreign_view`) and a tile's
    `insert` method and `ndim` (`tile_methods`). A launch whose constants reach
    `raise ct.static_exception(E)` is refused with E.
    Unsigned integers of every width compute as cuTile Python computes them."""
    from tilebridge.translator import frontend, lower_checked

    path = REPO / "tests" / "fixtures" / "language.py"
    ext = tb.build(path, quiet=True)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    sources = {src.name: src for src in frontend.load_all(path)}
    for name, ops in (("annotated", ()), ("checked", ("assert",)), ("rebuilt", ("insert",)),
                      ("bytes_round_trip", ("pack", "unpack")), ("evaluated", ()), ("viewed", ("load_view_tko",)),
                      ("last_block_sums", ("atomic_rmw_tko", "store_ptr_tko")), ("helper_paths", ("reduce",)),
                      ("locked_sums", ("atomic_cas_tko", "atomic_rmw_tko")), ("batched_products", ("mmaf",)),
                      ("locked_tiles", ("atomic_cas_tko", "store_view_tko")),
                      ("leading_positive_rows", ("reduce",)), ("scaled_by_strides", ("fma",)),
                      ("foreign_view", ("load_view_tko", "mulf")), ("tile_methods", ("extract", "insert"))):
        kir = lower_checked(sources[name], None, False, ())[0]  # `annotated`: one per dtype of n
        spec = kir.compiled_at[0]
        ours, bytecode = ext._compile_only(kir.name, spec.generics, spec.strides, "sm_90")
        theirs = coverage.python_tile_ir(sources[name].kernel, spec)
        for op in ops:
            count = [len(re.findall(rf"= {op} |^\s*{op} ", text, re.M)) for text in (ours, theirs)]
            assert count[0] == count[1] > 0, (name, op, count)
        coverage.cubin(bytecode)
    # unsigned integers (any_dtype.py): right shifts logical and widening zero-extending, as cuTile Python's
    moved = REPO / "tests" / "fixtures" / "any_dtype.py"
    any_ext = tb.build(moved, quiet=True)
    sources = {src.name: src for src in frontend.load_all(moved)}
    for name, dtype, op in (("xorshift", "u32", "shri"), ("widened", "u16", "exti")):
        kir = lower_checked(sources[name], None, False, ())[0]
        first = kir.compiled_at[0]  # at `dtype` for the first array, whatever the check sampled
        spec = replace(first, generics=[dtype, *first.generics[1:]],
                       signature=[(first.signature[0][0], dtype, first.signature[0][2]), *first.signature[1:]])
        ours, bytecode = any_ext._compile_only(name, spec.generics, spec.strides, "sm_90")
        theirs = coverage.python_tile_ir(sources[name].kernel, spec)
        count = [len(re.findall(rf"= {op} .* unsigned", text)) for text in (ours, theirs)]
        assert count[0] == count[1] > 0, (name, count)
        coverage.cubin(bytecode)
    with pytest.raises(tb.ArgumentError, match="ct.static_exception: ValueError: N is at most 1024"):
        ext.evaluated((1,), FakeCudaArray((64,)), FakeCudaArray((64,), ptr=0x7100_0000), N=2048)
    # `x.strides` gives the last as 1: the launcher takes no other
    with pytest.raises(tb.ArgumentError, match="stride 2 in its last dimension; this kernel .* reads the strides"):
        ext.scaled_by_strides((8,), FakeCudaArray((8, 64), strides=(768, 8)), FakeCudaArray((8, 64), ptr=0x7100_0000),
                              T=64)
    # what cuTile Python refuses at compile time, refused here with it
    refused = """
import cuda.tile as ct

@ct.kernel
def k(x, T: ct.Constant[int]):
    ct.store(x, index=(0,), tile=ct.load(x, index=(0,), shape=(T,)) * ct.ensure_constant(ct.bid(0)))

@ct.kernel
def h(x, T: ct.Constant[int]):
    ct.store(x, index=(0,), tile=ct.load(x, index=(0,), shape=(T,)) * ct.assume_divisible_by(12, 8))
"""
    (tmp_path / "refused.py").write_text(refused)
    for src, why in zip(frontend.load_all(tmp_path / "refused.py"),
                        ("is not a compile-time constant", "12 is not divisible by 8")):
        with pytest.raises(tb.TranslationError, match=why):
            lower_checked(src, None, False, ())


def test_arg_reductions_reach_cubin_at_every_dtype_they_take(monkeypatch, tmp_path):
    """ct.argmax and ct.argmin (made of cutile's one-tile reductions, `lower.ops.arg_reductions`)
    along an axis, over a whole tile whose shape a constant gives, kept or not, with NaN propagated or not, of every float dtype,
    of bool and narrow integers (widened to i32), of u32 (to i64) and of i32 or i64 as they are:
    every specialization checked against cuTile Python's typing and compiled to an sm_90 cubin.
    What they cannot take is refused with the reason."""
    source = """
import cuda.tile as ct

@ct.kernel
def rows(x, imax, imin, inan, T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0), 0), shape=(1, T))
    ct.store(imax, index=(ct.bid(0), 0), tile=ct.argmax(t, axis=1, keepdims=True))
    ct.store(imin, index=(ct.bid(0),), tile=ct.argmin(t, 1))
    ct.store(inan, index=(ct.bid(0),), tile=ct.argmax(t, axis=-1, propagate_nan=True))

@ct.kernel
def whole(x, i, T: ct.Constant[int]):
    ct.store(i, index=(0, 0), tile=ct.argmin(ct.load(x, index=(0, 0), shape=(4, T)), axis=None, keepdims=True))

@ct.kernel
def columns(q, n, i, T: ct.Constant[int]):
    ct.store(i, index=(ct.bid(0),), tile=ct.argmax(ct.load(q, index=(0, ct.bid(0)), shape=(8, T)), axis=0)
             + ct.argmin(ct.load(n, index=(0, ct.bid(0)), shape=(8, T)), axis=0))
"""
    (tmp_path / "firsts.py").write_text(source)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    ext = tb.build(tmp_path / "firsts.py", quiet=True, cubins=True, dtypes={
        "x": ["f32", "f16", "bf16", "f64"], "q": ["i8", "u16", "bool", "u32"], "n": ["i32", "i64"],
        "imax": ["i32"], "imin": ["i32", "i64"], "inan": ["i32"], "i": ["i32"]})
    from tilebridge.runtime.launch import extension_metadata
    from tilebridge.translator import frontend, lower_checked

    assert sorted(extension_metadata(ext).kernels) == ["columns", "rows", "whole"]

    refused = {"u64": "a tile of u64 is not supported", "f32,i32": "a tile of f32 or i32 is not supported"}
    for dtypes, why in refused.items():
        src = next(s for s in frontend.load_all(tmp_path / "firsts.py") if s.name == "columns")
        with pytest.raises(tb.TranslationError, match=why):
            lower_checked(src, {"q": dtypes.split(",")}, False, ())
    # a 0-d tile: its one element, typed as cuTile Python types the result
    (tmp_path / "zero.py").write_text("import cuda.tile as ct\n\n@ct.kernel\ndef zero_d(x, i):\n"
                                      "    t = ct.load(x, index=(0,), shape=())\n"
                                      "    ct.store(i, index=(0,), tile=ct.argmax(t, keepdims=True).reshape((1,)))\n")
    (zero,) = frontend.load_all(tmp_path / "zero.py")
    assert lower_checked(zero, None, False, ())[0].safety.safe


def test_prints_reach_tile_ir_as_cuTile_Pythons(monkeypatch, tmp_path):
    """ct.printf, ct.print (sep, end, f-strings, module constants) and the builtin print: Tile IR
    print ops with cuTile Python's format text and operand types (cutile's macro writes `%i` where
    cuTile Python writes `%d`: the same conversion), bf16 printed as f32, compiled to an sm_90
    cubin; what cutile's print cannot write as cuTile Python does is refused with the reason."""
    from tilebridge.translator import frontend, lower_checked

    source = """
import cuda.tile as ct

NAME = "n"

@ct.kernel
def shown(x, y, T: ct.Constant[int]):
    pid = ct.bid(0)
    t = ct.load(x, index=(pid,), shape=(T,))
    ct.printf("block %d of %i: %f 100%%\\n", pid, ct.num_blocks(0), ct.sum(t))
    ct.print(NAME, pid, f"max={ct.max(t)} T={T}", sep=", ", end=" 5%\\n")
    print(f"min {ct.min(t)}")
    ct.store(y, index=(pid,), tile=t)
"""
    (tmp_path / "shown.py").write_text(source)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    ext = tb.build(tmp_path / "shown.py", quiet=True, dtypes={"x": ["f32", "bf16"]})
    (src,) = frontend.load_all(tmp_path / "shown.py")
    kir = lower_checked(src, {"x": ["f32", "bf16"]}, False, ())[0]

    def prints(text: str) -> list[tuple[str, str]]:
        found = re.findall(r'print_tko "(.*?)", .*?: ((?:tile<\w+>(?:, )?)+)', text)
        return [(fmt.replace("%d", "%i").replace("\\0A", "\\n"), types) for fmt, types in found]

    for dtype in ("f32", "bf16"):
        first = kir.compiled_at[0]
        spec = replace(first, generics=[dtype, *first.generics[1:]],
                       signature=[(first.signature[0][0], dtype, first.signature[0][2]), *first.signature[1:]])
        ours, bytecode = ext._compile_only("shown", spec.generics, spec.strides, "sm_90")
        theirs = coverage.python_tile_ir(src.kernel, spec)
        assert len(prints(ours)) == 3 and prints(ours) == [
            (fmt, types.replace("bf16", "f32")) for fmt, types in prints(theirs)], (prints(ours), prints(theirs))
        coverage.cubin(bytecode)
    refused = {'ct.printf("%5.2f", ct.sum(t))': "`%5.2f` is not supported yet",
               'ct.printf("%x", pid)': "`%x` is not supported yet",
               'ct.printf("%d %d", pid)': "not enough arguments",
               'ct.printf("%f", pid)': "prints a float, not this argument",
               'ct.print(f"{ct.sum(t):.3f}")': "a format spec or conversion in an f-string",
               'ct.print("{}", pid)': "the text `{}` is not supported",
               'ct.print("{", "}", pid, sep="")': "the text `{}` is not supported",
               'ct.print(ct.sum(t.astype(ct.int64)))': "print of i64 is not supported yet"}
    for call, why in refused.items():
        (tmp_path / "bad.py").write_text(source.replace('print(f"min {ct.min(t)}")', call))
        (bad,) = frontend.load_all(tmp_path / "bad.py")
        with pytest.raises(tb.TranslationError, match=re.escape(why)):
            lower_checked(bad, {"x": ["f32"]}, False, ())


def test_advanced_indexing_reaches_cubin_and_refuses_what_cuTile_Python_refuses(monkeypatch, tmp_path):
    """ct.load_advanced_indexing and ct.store_advanced_indexing (a sparse axis of indices, dense
    ct.Slice ranges, `lower.ops.advanced_indexing`): each the bounds-checked gather or scatter it
    amounts to, the sparse axis first, in the middle or last, its start a launch's scalar; a load from
    an array only read is the module's safe gather (no `unsafe`); every specialization to an sm_90
    cubin. What cuTile Python refuses is refused, with the reason."""
    from tilebridge.translator import frontend, lower_checked

    source = """
import cuda.tile as ct

@ct.kernel
def picked(x, rows, y, start, R: ct.Constant[int], C: ct.Constant[int]):
    r = ct.load(rows, index=(ct.bid(0),), shape=(R,))
    t = ct.load_advanced_indexing(x, (r, ct.Slice(start, C)), padding_mode=ct.PaddingMode.NAN, latency=2)
    ct.store(y, index=(ct.bid(0), 0), tile=t)

@ct.kernel
def middle(x, planes, y):
    p = ct.load(planes, index=(0,), shape=(4,))
    t = ct.load_advanced_indexing(x, (ct.Slice(0, 2), p, ct.Slice(ct.bid(0) * 8, 8)), allow_tma=False)
    ct.store(y, index=(ct.bid(0), 0, 0), tile=t)

@ct.kernel
def placed(x, cols, y, C: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0), 0), shape=(4, C))
    c = ct.load(cols, index=(0,), shape=(C,))
    ct.store_advanced_indexing(y, (ct.Slice(ct.bid(0) * 4, 4), c), t + 1)
"""
    (tmp_path / "advanced.py").write_text(source)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    tb.build(tmp_path / "advanced.py", quiet=True, cubins=True)
    sources = {src.name: src for src in frontend.load_all(tmp_path / "advanced.py")}
    kirs = {name: lower_checked(src, None, False, ())[0] for name, src in sources.items()}
    assert kirs["picked"].safety.safe and kirs["middle"].safety.safe
    assert not kirs["placed"].safety.safe  # a scatter: the blocks' rows disjoint is the kernel's promise
    refused = {
        "ct.load_advanced_indexing(x, (r,))": "takes an array of rank 2 or more",
        "ct.load_advanced_indexing(x, (r, r))": "exactly one index must be a 1-D tile of integers",
        "ct.load_advanced_indexing(x, (ct.Slice(0, 4), ct.Slice(start, C)))": "exactly one index must be",
        "ct.load_advanced_indexing(x, (r, ct.Slice(start, 6)))": "selects 6 elements; it must be a power of two",
        "ct.load_advanced_indexing(x, (r, ct.Slice(start, start)))": "must be a compile-time constant",
        "ct.load_advanced_indexing(x, (r, 3))": "must be a 1-D tile of integers (the sparse axis) or",
        "ct.load_advanced_indexing(x, (r.astype(ct.float32), ct.Slice(0, C)))": "must be a 1-D tile of integers",
        "ct.load_advanced_indexing(x, (r, ct.Slice(0.5, C)))": "start must be an integer",
    }
    for call, why in refused.items():
        (tmp_path / "bad.py").write_text(source.replace(
            "ct.load_advanced_indexing(x, (r, ct.Slice(start, C)), padding_mode=ct.PaddingMode.NAN, latency=2)", call))
        bad = next(s for s in frontend.load_all(tmp_path / "bad.py") if s.name == "picked")
        with pytest.raises(tb.TranslationError, match=re.escape(why)):
            lower_checked(bad, None, False, ())
    (tmp_path / "bad.py").write_text(source.replace("(ct.Slice(ct.bid(0) * 4, 4), c), t + 1)",
                                                    "(ct.Slice(ct.bid(0) * 4, 8), c), t + 1)"))
    bad = next(s for s in frontend.load_all(tmp_path / "bad.py") if s.name == "placed")
    with pytest.raises(tb.TranslationError, match=re.escape("is not (8, 'C'), the shape the indices select")):
        lower_checked(bad, None, False, ())


def test_empty_constant_ranges_and_scans_along_other_axes(monkeypatch, tmp_path):
    """A loop over an empty range of numbers runs no trip, as Python runs it, and emits nothing:
    cutile 0.5.0 bounds the index of a loop of constant bounds by [start, stop - 1], which Tile IR
    rejects where that is empty (44 fuzz kernels failed so at their first launch on the H100, none
    through Tile IR alone: the cubin is what shows it). A cumsum along another axis than the first
    goes through a permute: taken for integers, refused for floats, which a permuted scan rounds
    otherwise than cuTile Python's."""
    from tilebridge.translator import frontend, ir, lower_checked

    source = """
import cuda.tile as ct

@ct.kernel
def empty(x, y, T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0), 0), shape=(4, T))
    for i in range(3, 3):
        t = t + t
    for i in range(2, 0, 1):
        t = t + ct.cumsum(t.astype(ct.int32), axis=1).astype(t.dtype)
    ct.store(y, index=(ct.bid(0), 0), tile=t + ct.cumsum(t.astype(ct.int32), axis=1).astype(t.dtype))
"""
    (tmp_path / "empty.py").write_text(source)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    tb.build(tmp_path / "empty.py", quiet=True, cubins=True)
    (src,) = frontend.load_all(tmp_path / "empty.py")
    kir = lower_checked(src, None, False, ())[0]
    assert not any(isinstance(s, ir.For) for s in kir.body), kir.body
    (tmp_path / "bad.py").write_text(source.replace("ct.cumsum(t.astype(ct.int32), axis=1).astype(t.dtype))",
                                                    "ct.cumsum(t, axis=-1))"))
    (bad,) = frontend.load_all(tmp_path / "bad.py")
    with pytest.raises(tb.TranslationError, match="ct.cumsum of a float tile along axis 1 of 2 is not supported"):
        lower_checked(bad, None, False, ())


def test_loops_between_constants_compile_where_their_range_is_empty(monkeypatch, tmp_path):
    """A loop whose bounds cutile knows when it compiles (ct.Constant values and arithmetic on them)
    goes under `if start < stop`: where a specialization makes the range empty, cutile's
    [start, stop - 1] bound on the index is one tileiras rejects (`range(B, A)` at A <= B failed so
    before). Where the range is not empty, the cubin is the very one of the loop alone (measured
    byte for byte at A=8, B=2 before this test: tileiras folds the condition)."""
    source = """
import cuda.tile as ct


@ct.kernel
def ranged(x, y, A: ct.Constant[int], B: ct.Constant[int], T: ct.Constant[int]):
    acc = ct.zeros((T,), dtype=ct.float32)
    for i in range(B, A):
        acc = acc + ct.load(x, index=(i,), shape=(T,))
    for k in range(ct.cdiv(A, 2)):
        acc = acc * 2
    ct.store(y, index=(ct.bid(0),), tile=acc)
"""
    (tmp_path / "ranged.py").write_text(source)
    root = toolchain.cuda_root()
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(root))
    ext = tb.build(tmp_path / "ranged.py", module="ranged_rs", quiet=True)
    for a, b in ((8, 2), (2, 2), (1, 3), (0, 0)):
        _, bytecode = ext._compile_only("ranged", ["f32", "f32", str(a), str(b), "64"], [("x", [1]), ("y", [1])],
                                        "sm_90")
        bc, cubin = tmp_path / f"{a}_{b}.bc", tmp_path / f"{a}_{b}.cubin"
        bc.write_bytes(bytecode)
        proc = subprocess.run([str(root / "bin" / "tileiras"), "--gpu-name", "sm_90", "--opt-level", "3", "-o",
                               str(cubin), str(bc)], capture_output=True, text=True)
        assert proc.returncode == 0, (a, b, proc.stderr)


def test_loads_and_stores_take_check_bounds_and_the_default_memory_modes(monkeypatch, tmp_path):
    """`check_bounds` on ct.load, ct.store and a tiled view's load (False: cuTile Python leaves the
    bounds unchecked on the kernel's promise; the checked access computes the same where the promise
    holds), given by a number or a ct.Constant[bool], and `memory_order`/`memory_scope` at their
    defaults: translated through cubins as the checked accesses; another memory order refused."""
    from tilebridge.translator import frontend, lower_checked

    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    source = """
import cuda.tile as ct

@ct.kernel
def unchecked(x, y, T: ct.Constant[int], CHECK: ct.Constant[bool]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,), check_bounds=False, memory_order=ct.MemoryOrder.WEAK)
    u = x.tiled_view((T,)).load((ct.bid(0),), check_bounds=CHECK)
    ct.store(y, index=(ct.bid(0),), tile=t + u, check_bounds=CHECK, memory_scope=ct.MemoryScope.NONE)
"""
    (tmp_path / "unchecked.py").write_text(source)
    tb.build(tmp_path / "unchecked.py", quiet=True, cubins=True)
    (src,) = frontend.load_all(tmp_path / "unchecked.py")
    assert lower_checked(src, None, False, ())[0].safety.safe
    for old, new, why in (("memory_order=ct.MemoryOrder.WEAK", "memory_order=ct.MemoryOrder.RELAXED",
                           "memory_order=ct.MemoryOrder.RELAXED on ct.load/ct.store is not supported yet"),
                          ("check_bounds=False", "check_bounds=3", "check_bounds must be True or False")):
        (tmp_path / "bad.py").write_text(source.replace(old, new))
        (bad,) = frontend.load_all(tmp_path / "bad.py")
        with pytest.raises(tb.TranslationError, match=re.escape(why)):
            lower_checked(bad, None, False, ())


def test_enum_and_tuple_comparisons_arange_widths_and_a_bare_constant(monkeypatch, tmp_path):
    """Comparisons of enum members and of tuples (`==`/`!=`, items known at run time too, tuples
    joined with `+`), `ct.arange` of 8- and 16-bit and unsigned integers (the i32 iota narrowed,
    wrapping), and a bare `ct.Constant` (taken as an int's; another value refused at launch), as
    cuTile Python types them, through cubins. What cuTile Python refuses of tuples (`<`, `*`) is
    refused with the reason."""
    from tilebridge.translator import frontend, lower_checked

    source = """
import enum

import cuda.tile as ct


class Mode(enum.Enum):
    FAST = 1
    SLOW = 2


MODE = Mode.FAST


@ct.kernel
def shaped(x, y, T: ct.Constant):
    a, b = (1, 2)
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    if MODE == Mode.FAST and (a, b) + (T,) == (1, 2, T) and (a, T) != (2, T):
        t = t + (ct.arange(T, dtype=ct.int16).astype(ct.int32) + ct.arange(T, dtype=ct.uint8).astype(ct.int32)
                 + ct.arange(T, dtype=ct.int8).astype(ct.int32) + ct.arange(T, dtype=ct.uint16).astype(ct.int32))
    if MODE != Mode.FAST:
        t = t * 0
    ct.store(y, index=(ct.bid(0),), tile=t)
"""
    (tmp_path / "shaped.py").write_text(source)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    ext = tb.build(tmp_path / "shaped.py", quiet=True, cubins=True, dtypes={"x": ["i32"], "y": ["i32"]})
    (src,) = frontend.load_all(tmp_path / "shaped.py")
    kir = lower_checked(src, {"x": ["i32"], "y": ["i32"]}, False, ())[0]
    assert kir.compiled_at
    with pytest.raises(TypeError, match="'T'"):  # the launcher's argument conversion, naming the parameter
        ext.shaped((1,), FakeCudaArray((64,), "<i4"), FakeCudaArray((64,), "<i4", ptr=0x7100_0000), T=2.5)
    for old, new, why in (("(a, b) + (T,) == (1, 2, T)", "(a, b) < (1, 3)", "tuples compare with == and != only"),
                          ("(a, b) + (T,) == (1, 2, T)", "(a, b) * 2 == (1, 2, 1, 2)", "cuTile Python takes + of two "
                                                                                          "tuples only")):
        (tmp_path / "bad.py").write_text(source.replace(old, new))
        (bad,) = frontend.load_all(tmp_path / "bad.py")
        with pytest.raises(tb.TranslationError, match=re.escape(why)):
            lower_checked(bad, {"x": ["i32"], "y": ["i32"]}, False, ())


def test_helpers_with_early_returns(monkeypatch, tmp_path):
    """A helper that returns early, on a runtime condition and on a constant one, inlined as
    branches assigning one result (`lower.early_returns`): typed as cuTile Python types it, through
    cubins. A name the helper's last `if` rebinds to another type is refused where the `return`
    reads it (it was silently its value before the `if`)."""
    from tilebridge.translator import frontend, lower_checked

    source = """
import cuda.tile as ct


def pick(t, limit, twice: bool):
    if ct.max(t) < limit:
        return t * 0.5
    if twice:
        return t * 2.0
    u = t + 1.0
    return u


@ct.kernel
def picked(x, y, limit: float, T: ct.Constant[int], TWICE: ct.Constant[bool]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    ct.store(y, index=(ct.bid(0),), tile=pick(t, limit, TWICE))
"""
    (tmp_path / "picked.py").write_text(source)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    tb.build(tmp_path / "picked.py", quiet=True, cubins=True)
    (src,) = frontend.load_all(tmp_path / "picked.py")
    assert lower_checked(src, None, False, ())[0].compiled_at
    (tmp_path / "bad.py").write_text("""
import cuda.tile as ct


def zeros_past_two(t):
    u = t
    if ct.bid(0) > 2:
        u = ct.zeros((4,), ct.float16)
    return u


@ct.kernel
def picked(x, y):
    t = ct.load(x, index=(ct.bid(0),), shape=(4,))
    ct.store(y, index=(ct.bid(0),), tile=zeros_past_two(t))
""")
    (bad,) = frontend.load_all(tmp_path / "bad.py")
    with pytest.raises(tb.TranslationError, match=re.escape("bad.py:9:12: 'u' is tile f16[4] in one branch of the if "
                                                            "at line 7 and tile $x[4] in the other, so it has no one value")):
        lower_checked(bad, {"x": ["f32"], "y": ["f32"]}, False, ())


def test_loops_left_early(monkeypatch, tmp_path):
    """`break` and `continue` in `for` loops, and `return` inside loops of a helper or of the kernel,
    as cuTile Python makes them (`lower.loop_exits`, `lower.early_returns`; a kernel's `return` in a
    loop ended only the trip before: the later trips stored): a `break` sets a flag the loop carries
    and later trips skip their body, so the loop stays Tile IR's `for`, as many as cuTile Python's
    and no `loop`; a `continue` in a grid-stride loop (a `while` here) moves the counter on first.
    A bool set inside a loop is a variable the loop carries (it was the constant it started as: a
    flag set in the loop read False after it). Each kernel of `control_flow.py` that does this,
    through cubins; the GPU round runs them against cuTile Python."""
    from tilebridge.translator import frontend, lower_checked

    path = REPO / "tests" / "fixtures" / "control_flow.py"
    ext = tb.build(path, quiet=True)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    sources = {src.name: src for src in frontend.load_all(path)}
    for name, loops in (("first_above", 1), ("positive_tiles", 1), ("helper_returns_in_loop", 1),
                        ("helper_returns_in_nested_loops", 2), ("stores_until_negative", 1), ("strided_until", None)):
        kir = lower_checked(sources[name], None, False, ())[0]
        spec = kir.compiled_at[0]
        ours, bytecode = ext._compile_only(name, spec.generics, spec.strides, "sm_90")
        theirs = coverage.python_tile_ir(sources[name].kernel, spec)
        if loops is not None:
            fors = [len(re.findall(r"= for |^\s*for ", text, re.M)) for text in (ours, theirs)]
            assert fors == [loops, loops] and not re.search(r"= loop |^\s*loop ", ours, re.M), (name, fors)
        coverage.cubin(bytecode)
    rust = tb.translate(sources["positive_tiles"].kernel, runtime_path=tbuild.RUNTIME_CRATE).files
    assert "let mut skipped: bool = false;" in rust["src/tile_kernels.rs"]
    assert "skipped = true;" in rust["src/tile_kernels.rs"]
    # `or` of a carried bool and a 0-d tile of bools (cutile's `||` refuses the tile's value: `|`); a
    # `break` that is a statement of the loop's body itself.
    (tmp_path / "anyneg.py").write_text("""
import cuda.tile as ct


@ct.kernel
def any_negative(x, out, N: ct.Constant[int]):
    found = False
    for i in range(N):
        found = found or ct.sum(ct.load(x, (ct.bid(0), i), (1, 16))) < 0
    ct.store(out, (ct.bid(0),), ct.full((1,), 1 if found else 0, ct.int32))


@ct.kernel
def first_tile_only(x, y, N: ct.Constant[int]):
    for i in range(N):
        ct.store(y, (ct.bid(0),), ct.load(x, (i,), (16,)) * 2)
        break  # a `break` of the loop's body itself
""")
    tb.build(tmp_path / "anyneg.py", quiet=True, cubins=True)
    for src in frontend.load_all(tmp_path / "anyneg.py"):
        assert lower_checked(src, None, False, ())[0].compiled_at


def test_raw_memory_as_cuTile_Python_makes_it(monkeypatch, tmp_path):
    """`x.get_raw_memory()`'s `load_offset` (a mask, a padding, a scalar offset) and `store_offset`
    (`lower.ops.raw_memory`): the offsets sign-extended to 64 bits and added to the base pointer,
    one pointer load or store each, op for op as cuTile Python's Tile IR has them; through cubins.
    An array reached only this way is taken as 1-D; no kernel of them is safe (raw offsets are the
    kernel's promise)."""
    from tilebridge.translator import frontend, lower_checked

    source = """
import cuda.tile as ct


@ct.kernel
def raw_copy(x, y, T: ct.Constant[int]):
    offs = ct.bid(0) * T + ct.arange(T, dtype=ct.int32)
    t = x.get_raw_memory().load_offset(offs, mask=offs % 3 != 0, padding_value=-1.0)
    y.get_raw_memory().store_offset(offs, t * 2)


@ct.kernel
def raw_scalar(x, y, n: int):
    mem = y.get_raw_memory()
    mem.store_offset(ct.bid(0), x.get_raw_memory().load_offset(n + 1), latency=2)
"""
    (tmp_path / "raw.py").write_text(source)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    ext = tb.build(tmp_path / "raw.py", quiet=True, cubins=True)
    for src in frontend.load_all(tmp_path / "raw.py"):
        kir = lower_checked(src, None, False, ())[0]
        assert not kir.safety.safe and all(p.rank == 1 for p in kir.params if isinstance(p, tb_ir.ArrayParam))
        spec = kir.compiled_at[0]
        ours, _ = ext._compile_only(src.name, spec.generics, spec.strides, "sm_90")
        theirs = coverage.python_tile_ir(src.kernel, spec)
        for op, n in (("exti .* signed", 2), ("offset", 2), ("load_ptr_tko", 1), ("store_ptr_tko", 1)):
            count = [len(re.findall(rf"= {op} |^\s*{op} ", text, re.M)) for text in (ours, theirs)]
            assert count[0] == count[1] == n, (src.name, op, count)
    (tmp_path / "bad.py").write_text(source.replace("load_offset(n + 1)", "load_offset(1.5)"))
    bad = next(s for s in frontend.load_all(tmp_path / "bad.py") if s.name == "raw_scalar")
    with pytest.raises(tb.TranslationError, match="an offset is an integer, or a tile of integers"):
        lower_checked(bad, None, False, ())


def test_tile_shapes_computed_from_constants(monkeypatch):
    """`shape=(1, half)` with `half = N // 2`, `shape=(T * K // 2,)`: each dimension a const generic
    the launcher computes from the constants, refusing one that is not a positive power of two; the
    Tile IR has the tile cuTile Python's has at the same constants."""
    path = REPO / "tests" / "fixtures" / "language.py"
    ext = tb.build(path, quiet=True)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    from tilebridge.translator.frontend import import_file

    kernels = import_file(path)
    for name, generics, strides, signature, tile in (
            ("swap_halves", ["f32", "64", "32"], [("x", [-1, 1]), ("y", [-1, 1])],
             [("array", "f32", [-1, 1])] * 2 + [("constant", 64)], "tile<1x32xf32>"),
            ("product_tiles", ["f16", "f16", "64", "4", "128"], [("x", [1]), ("y", [1])],
             [("array", "f16", [1])] * 2 + [("constant", 64), ("constant", 4)], "tile<128xf16>"),
            # ct.cat: (1, T) and (1, T) into (1, 2 * T), another computed dimension
            ("joined", ["bf16", "32", "64"], [("x", [-1, 1]), ("y", [-1, 1])],
             [("array", "bf16", [-1, 1])] * 2 + [("constant", 32)], "tile<1x64xbf16>"),
            ("stacked", ["f32", "f32", "64"], [("x", [-1, 1]), ("y", [-1, 1])],
             [("array", "f32", [-1, 1])] * 2 + [("constant", 64)], "tile<2x64xf32>")):
        ir, bytecode = ext._compile_only(name, generics, strides, "sm_90")
        theirs = coverage.python_tile_ir(getattr(kernels, name), coverage.Specialization([], [], signature))
        assert tile in ir and tile in theirs, name
        cats = [sorted(re.sub(r"\s+", " ", re.sub(r"%[\w.-]+", "%v", line)).strip() for line in text.splitlines()
                       if "= cat " in line) for text in (ir, theirs)]
        assert cats[0] == cats[1], (name, cats)
        coverage.cubin(bytecode)
    x, y = FakeCudaArray((8, 64)), FakeCudaArray((8, 64), ptr=0x7100_0000)
    with pytest.raises(tb.ArgumentError, match="the tile dimension half must be a positive power of two"):
        ext.swap_halves((8,), x, y, N=6)
    with pytest.raises(tb.ArgumentError, match=r"the tile dimension T \* K // 2 must be a positive power of two"):
        ext.product_tiles((8,), FakeCudaArray((4096,)), FakeCudaArray((4096,), ptr=0x7100_0000), T=64, K=0)
    with pytest.raises(tb.DeviceError):  # past every check
        ext.swap_halves((8,), x, y, N=64)


def test_tests_of_dtypes_are_decided_per_launch(monkeypatch, tmp_path):
    """`if x.dtype == ct.float16`, `x.dtype == y.dtype`, a promotion's dtype (also choosing a
    dtype), under `and`/`or`/`not` (also choosing a dtype, as TileGym's mhc does) and in
    `ct.static_assert`: each a `bool` const generic the launcher computes from the dtypes it
    dispatches (`lower.dtype_tests`), typed as cuTile Python types each specialization and through
    cubins with the tests true and false; a name whose dtype differs by branch is not converted
    (that would compute a bf16 tile in f32) but translated down each path. A failing
    static_assert on dtypes is refused at launch, naming it; what is not supported yet is refused
    with the reason."""
    from tilebridge.translator import frontend, lower_checked

    source = """
import cuda.tile as ct


@ct.kernel
def branchy(x, w, y, T: ct.Constant[int]):
    ct.static_assert(x.dtype != ct.float64, "no f64")
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    if x.dtype == ct.float16:
        t = t * 2
    if x.dtype == y.dtype and not x.dtype == ct.float32:
        t = t - 3
    p = t * ct.load(w, index=(ct.bid(0),), shape=(T,))
    if p.dtype != ct.float32:
        u = t.astype(ct.float32)
    else:
        u = t
    v = (u * 0.5).astype(ct.float16 if p.dtype == ct.float32 else y.dtype)
    r = u.astype(ct.float16 if x.dtype == ct.float32 or w.dtype == ct.float32 else ct.float32)
    r = r.astype(x.dtype if x.dtype == y.dtype else ct.float32)
    ct.store(y, index=(ct.bid(0),), tile=v.astype(y.dtype) + r.astype(y.dtype))
"""
    (tmp_path / "branchy.py").write_text(source)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    dtypes = {"x": ["f16", "f32", "bf16", "f64"], "w": ["f16", "f32"], "y": ["f16", "f32"]}
    ext = tb.build(tmp_path / "branchy.py", quiet=True, cubins=True, dtypes=dtypes)
    (src,) = frontend.load_all(tmp_path / "branchy.py")
    kir = lower_checked(src, dtypes, False, ())[0]
    flags = [f.rust_name for f in kir.dtype_flags]
    assert flags == ["X_IS_F64", "X_IS_F16", "X_SAME_DTYPE_AS_Y", "X_IS_F32", "PROMOTED_IS_F32", "W_IS_F32"], flags
    taken = {tuple(s.generics[-len(flags):]) for s in kir.compiled_at}
    for i in range(1, len(flags)):  # compiled where each test is true and where it is false
        assert {t[i] for t in taken} == {"true", "false"}, (flags[i], taken)
    generated = tb.translate(tmp_path / "branchy.py", dtypes=dtypes, runtime_path=tbuild.RUNTIME_CRATE)
    body = generated.files["src/tile_kernels.rs"]
    assert "if X_IS_F16 {" in body and "if PROMOTED_IS_F32 == false {" in body, body
    # one `u` per path, never one merged variable assigned a conversion of it
    assert not re.search(r"^\s*u\w* = convert_tile\(u\);", body, re.M) and body.count("let u: Tile<") >= 2, body
    # a dtype chosen by a promotion's (a constant, the `else`, before 92937cb)
    launcher = re.sub(r"\s", "", generated.files["src/lib.rs"])
    assert 'Generic::Name(ifpt.as_str()=="f32"{"f16"}else{e2.as_str()})' in launcher
    assert 'Generic::Name(ifX_IS_F32||W_IS_F32{"f16"}else{"f32"})' in launcher  # chosen by two tests
    assert 'Generic::Name(ifX_SAME_DTYPE_AS_Y{e0.as_str()}else{"f32"})' in launcher  # by two arrays' dtypes
    with pytest.raises(ValueError, match=re.escape("ct.static_assert fails at branchy.py:7: x.dtype != ct.float64")):
        ext.branchy((1,), FakeCudaArray((64,), "<f8"), FakeCudaArray((64,), "<f4", ptr=0x7100_0000),
                    FakeCudaArray((64,), "<f4", ptr=0x7200_0000), T=64)
    for old, new, why in (
            ("    if x.dtype == ct.float16:\n", "    if (ct.float32 if x.dtype == ct.float16 else x.dtype) == w.dtype:\n",
             "comparing a dtype chosen by a test of dtypes is not supported yet"),
            ("tile=v.astype(y.dtype) + r.astype(y.dtype))", "tile=v)", "storing a tile whose dtype a test of dtypes chooses into 'y' is not "
                                              "supported yet: cast it first (`.astype(y.dtype)`)")):
        (tmp_path / "bad.py").write_text(source.replace(old, new))
        (bad,) = frontend.load_all(tmp_path / "bad.py")
        with pytest.raises(tb.TranslationError, match=re.escape(why)):
            lower_checked(bad, dtypes, False, ())


def test_a_product_fuses_across_tests_of_dtypes(monkeypatch, tmp_path):
    """`t = t * 3` under `x.dtype == ct.float16`, then `t = t - 0.25` under another test of dtypes:
    cuTile Python decides the tests as it traces and fuses the two into one fma; the kernel's rest
    goes down each branch here, and the product fuses on the path where the sum is its one use, so
    the Tile IR has cuTile Python's fmas at each specialization (the H100 round of 2026-12-06 found
    the f16 one 1 ulp apart before)."""
    from tilebridge.translator import frontend, lower_checked

    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    fixture = REPO / "tests" / "fixtures" / "language.py"
    (src,) = [s for s in frontend.load_all(fixture) if s.name == "dtype_branches"]
    specs = [*lower_checked(src, None, False, ())[0].compiled_at,  # and the GPU round's case:
             *lower_checked(src, {"x": ["f16"], "w": ["f16"], "y": ["f16"], "z": ["f32"]}, False, ())[0].compiled_at]
    ext = tb.build(fixture, quiet=True)
    seen = set()
    for spec in specs:
        key = tuple(p[1] for p in spec.signature[:4])
        if key in seen:
            continue
        seen.add(key)
        ours, bytecode = ext._compile_only("dtype_branches", spec.generics, spec.strides, "sm_90")
        theirs = coverage.python_tile_ir(src.kernel, spec)
        count = [len(re.findall(r"= fma ", text)) for text in (ours, theirs)]
        assert count[0] == count[1], (key, count)
    assert ("f16", "f16", "f16", "f32") in seen, seen
    coverage.cubin(bytecode)
    # In a ct.static_iter body (lowered once per item) a test's branch is no path to the kernel's
    # end: what it rebinds is assigned back, or the next item would read the value before it.
    (tmp_path / "unrolled.py").write_text("""
import cuda.tile as ct


@ct.kernel
def unrolled_tests(x, y, T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    for k in ct.static_iter(range(2)):
        if x.dtype == ct.float16:
            t = t * 3
        t = t + 1
    ct.store(y, index=(ct.bid(0),), tile=t)
""")
    rust = tb.translate(tmp_path / "unrolled.py", runtime_path=tbuild.RUNTIME_CRATE).files["src/tile_kernels.rs"]
    body = rust[rust.index("fn unrolled_tests<"):rust.index("fn unrolled_tests_f64<")]  # as translated
    assert len(re.findall(r"^\s*t = t \* t_\d+;", body, re.M)) == 2, body


def test_item_of_a_tile_of_an_arrays_dtype(monkeypatch):
    """`.item()` of a tile of an array's dtype is a 0-d tile of it (Rust has no scalar of a type
    parameter; cuTile Python's scalars are 0-d tiles), in a condition and in arithmetic, typed as
    cuTile Python types it at each dtype and through cubins; an index array's stays an i32."""
    from tilebridge.translator import frontend, lower_checked

    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    fixture = REPO / "tests" / "fixtures" / "language.py"
    (src,) = [s for s in frontend.load_all(fixture) if s.name == "scaled_by_first"]
    kir = lower_checked(src, None, False, ())[0]
    assert {s.generics[0] for s in kir.compiled_at} == {"f32", "f16", "bf16"}, kir.compiled_at
    body = tb.translate(src.kernel, runtime_path=tbuild.RUNTIME_CRATE).files["src/tile_kernels.rs"]
    assert "let first: Tile<E0, { [] }> = first_2.reshape(const_shape![]);" in body, body
    tb.build(src.kernel, module="item_rs", quiet=True, cubins=True)  # every one of them, or raises


def test_a_condition_decides_its_opposite_and_scatters_keep_their_rank(monkeypatch, tmp_path):
    """Under `if W != 1`, a later `if W == 1` is decided (`branches.assume`): TileGym's layer_norm
    reshapes its statistics under one and reads them under the other, and the launcher refused
    W == 1 for the branch it could not type. A scatter of a tile of more axes than its indices
    (cuTile Python rejects it) is refused, not broadcast into Rust that does not compile."""
    from tilebridge.translator import frontend, lower_checked

    source = """
import cuda.tile as ct


@ct.kernel
def regrouped(x, y, W: ct.Constant[int], T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    if W != 1:
        t = ct.reshape(t, (1, T))
    if W == 1:
        ct.store(y, index=(ct.bid(0),), tile=t)
    else:
        ct.store(y, index=(ct.bid(0),), tile=ct.reshape(t, (T,)) * 2)
"""
    (tmp_path / "regrouped.py").write_text(source)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    (src,) = frontend.load_all(tmp_path / "regrouped.py")
    kir = lower_checked(src, None, False, ())[0]
    assert not kir.refusals and not kir.launch_checks, kir.refusals
    body = tb.translate(tmp_path / "regrouped.py", runtime_path=tbuild.RUNTIME_CRATE).files["src/tile_kernels.rs"]
    assert "if W != 1i32 {" in body and "if W == 1i32" not in body, body
    tb.build(tmp_path / "regrouped.py", quiet=True, cubins=True)
    (tmp_path / "bad.py").write_text(source.replace("(x, y, W", "(x, y, z, W").replace(
        "tile=ct.reshape(t, (T,)) * 2)", "tile=ct.reshape(t, (T,)) * 2)\n        ct.scatter(z, ct.arange(T, dtype=ct.int32), t)"))
    (bad,) = frontend.load_all(tmp_path / "bad.py")
    kir = lower_checked(bad, None, False, ())[0]  # the branch that scatters it, refused at launch with why
    assert len(kir.refusals) == 1 and "`W != 1` true: bad.py:14:9: the value's shape (1, 'T') does not broadcast " \
        "to the indices' shape ('T',)" in kir.refusals[0], kir.refusals


def test_array_slices_are_views_clamped_into_their_array(monkeypatch, tmp_path):
    """`x.slice(axis, start, stop)` (`lower.ops.array_slices`): a tensor view made from the base
    pointer moved by start times the axis' stride, the axis' extent stop - start, as cuTile Python
    makes it; start and stop clamped into the array, so the view lies inside it whatever the kernel
    is given. Typed as cuTile Python types it, through cubins; what cuTile Python refuses
    (negative constants, stop before start) is refused with its words."""
    from tilebridge.translator import frontend, lower_checked

    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    fixture = REPO / "tests" / "fixtures" / "language.py"
    (src,) = [s for s in frontend.load_all(fixture) if s.name == "ragged_rows"]
    kir = lower_checked(src, None, False, ())[0]
    assert kir.compiled_at and "slices 'c' (a tensor view made from a pointer) (obligation: the view lies inside " \
        "the array; the translation keeps it: start and stop are clamped into the array)" in kir.safety.reasons
    assert [p.name for p in kir.arrays if p.written] == ["c"]  # written through its slice: lent to the launch
    body = tb.translate(src.kernel, runtime_path=tbuild.RUNTIME_CRATE).files["src/tile_kernels.rs"]
    assert "let ci_start: i32 = min(max(m_start, 0i32), ci_extent_0);" in body, body
    assert "let ci_stop: i32 = min(max(m_end, ci_start), ci_extent_0);" in body, body
    tb.build(src.kernel, module="slices_rs", quiet=True, cubins=True)
    source = fixture.read_text()
    for old, new, why in (("start=m_start, stop=m_end)\n    ci", "start=-1, stop=m_end)\n    ci", "Slice start must be "
                                                                                             "non-negative"),
                          ("start=m_start, stop=m_end)\n    ci", "start=4, stop=2)\n    ci", "Slice stop must be greater "
                                                                                           "than or equal to start"),
                          ("ci = c.slice(", "ci = ai.slice(", "a slice of 'ai', a view made in the kernel"),
                          ("start=m_start, stop=m_end)\n    ci", "start=1.5, stop=m_end)\n    ci",
                           "the slice's start must be an integer")):
        assert old in source
        (tmp_path / "bad.py").write_text(source.replace(old, new))
        (bad,) = [s for s in frontend.load_all(tmp_path / "bad.py") if s.name == "ragged_rows"]
        with pytest.raises(tb.TranslationError, match=re.escape(why)):
            lower_checked(bad, None, False, ())


def test_an_mma_of_a_fixed_dtype_pins_the_other_operands_array(monkeypatch, tmp_path):
    """`ct.mma(p.astype(ct.float16), v, acc)` with `v` an array's tile: cuTile Python requires x and
    y of one dtype, so it compiles only where v is f16; the launcher takes f16 alone there (TileGym's
    experimental swa attention), where it was refused. Typed as cuTile Python types it, through
    cubins; another dtype is refused at launch, naming it."""
    from tilebridge.translator import frontend, lower_checked

    source = """
import cuda.tile as ct


@ct.kernel
def pv(p, v, out, T: ct.Constant[int]):
    pt = ct.load(p, index=(ct.bid(0), 0), shape=(T, T))
    acc = ct.mma(pt.astype(ct.float16), ct.load(v, index=(0, 0), shape=(T, T)), ct.zeros((T, T), dtype=ct.float32))
    ct.store(out, index=(ct.bid(0), 0), tile=acc)
"""
    (tmp_path / "pv.py").write_text(source)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    (src,) = frontend.load_all(tmp_path / "pv.py")
    kir = lower_checked(src, None, False, ())[0]
    assert [c.allowed for c in kir.dtype_classes if c.arrays == ["v"]] == [["f16"]], kir.dtype_classes
    assert kir.compiled_at
    ext = tb.build(tmp_path / "pv.py", module="pv_rs", quiet=True, cubins=True)
    arrays = [FakeCudaArray((64, 64), t, ptr=0x7000_0000 + i * 0x10_0000) for i, t in enumerate(("<f4", "<f4", "<f4"))]
    with pytest.raises(ValueError, match=r"'v' has dtype f32.*f16"):
        ext.pv((1,), *arrays, T=64)


def test_a_loop_variable_changing_arrays_makes_them_one_class(tmp_path):
    """A loop variable that holds a tile of one array's dtype and is updated with one of another's
    (TileGym's mamba2 `bwd_pass_state_kernel`): cuTile Python compiles it only where the two arrays
    have one dtype, so they are one dtype class, which the launcher takes alike; typed as cuTile
    Python types it. It was refused ("changes type inside the loop")."""
    from tilebridge.translator import frontend, lower_checked

    (tmp_path / "carried.py").write_text("""
import cuda.tile as ct


@ct.kernel
def last_row(x, y, out, N: ct.Constant[int]):
    acc = ct.load(x, index=(ct.bid(0),), shape=(16,))
    for i in range(N):
        acc = ct.load(y, index=(i,), shape=(16,))
    ct.store(out, index=(ct.bid(0),), tile=acc)
""")
    (src,) = frontend.load_all(tmp_path / "carried.py")
    kir = lower_checked(src, None, False, ())[0]
    assert [sorted(c.arrays) for c in kir.dtype_classes if "x" in c.arrays] == [["out", "x", "y"]], kir.dtype_classes
    assert kir.compiled_at


def test_a_gather_of_one_element_is_the_safe_gather(monkeypatch, tmp_path):
    """`ct.gather(x, (i,))` at scalar indices with its bounds checked (a count, the element before
    the block's tile, padded where it is -1): the module's safe gather of a tile of one, reshaped
    to 0-d, so the kernel has no `unsafe` block; typed as cuTile Python types it, through cubins."""
    from tilebridge.translator import frontend, lower_checked

    source = """
import cuda.tile as ct


@ct.kernel
def scalar_gathers(x, n, y, T: ct.Constant[int]):
    count = ct.gather(n, 0)
    before = ct.gather(x, (ct.bid(0) * T - 1,), padding_value=-1.0)
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    ct.store(y, index=(ct.bid(0),), tile=t * count + before)
"""
    (tmp_path / "scalar_gathers.py").write_text(source)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    (src,) = frontend.load_all(tmp_path / "scalar_gathers.py")
    kir = lower_checked(src, None, False, ())[0]
    assert kir.safety.safe and kir.compiled_at, kir.safety.reasons
    body = tb.translate(tmp_path / "scalar_gathers.py", runtime_path=tbuild.RUNTIME_CRATE).files["src/tile_kernels.rs"]
    assert "let count: Tile<E1, { [] }> = count_one.reshape(const_shape![]);" in body, body
    tb.build(tmp_path / "scalar_gathers.py", quiet=True, cubins=True)


def test_a_store_with_an_order_stores_the_tile_permuted_back(monkeypatch, tmp_path):
    """`ct.store(y, index, tile, order=)` stores through y's axes permuted by `order`: the same
    elements as the tile permuted back at the index permuted back, in y's own axes (cutile 0.5.0
    has no permuted mutable partition). Typed as cuTile Python types it, through cubins; the
    GPU round compares it with cuTile Python (`math_ops.py` `permuted_stores`)."""
    from tilebridge.translator import frontend, lower_checked

    source = """
import cuda.tile as ct


@ct.kernel
def permuted(x, y, z, TM: ct.Constant[int], TN: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0), ct.bid(1)), shape=(TM, TN))
    ct.store(y, index=(ct.bid(0), ct.bid(1)), tile=t, order="F")
    ct.store(z, index=(0, ct.bid(0), ct.bid(1)), tile=ct.reshape(t, (1, TM, TN)), order=(2, 0, 1))
"""
    (tmp_path / "permuted.py").write_text(source)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    (src,) = frontend.load_all(tmp_path / "permuted.py")
    kir = lower_checked(src, None, False, ())[0]
    assert kir.safety.safe and kir.compiled_at, kir.safety.reasons
    body = re.sub(r"\(\s+", "(", " ".join(tb.translate(tmp_path / "permuted.py", runtime_path=tbuild.RUNTIME_CRATE)
                                          .files["src/tile_kernels.rs"].split()))  # as rustfmt may wrap it
    # y (order "F"): the tile transposed, at (bid 1, bid 0); z (order (2, 0, 1)): axes (1, 2, 0)
    assert "= permute(t, const_array![1, 0]);" in body and "store_if_owned_2d_b1_b0(y, y_tile, " in body, body
    assert "permute(z_tile, const_array![1, 2, 0]);" in body and "z: &mut Tensor<E0, { [TM, TN, 1] }>" in body
    tb.build(tmp_path / "permuted.py", quiet=True, cubins=True)


def test_with_blocks_of_context_managers(monkeypatch, tmp_path):
    """`with` over `@contextlib.contextmanager` helpers, as cuTile Python runs it
    (`translator.context_managers`): the helper's statements before its `yield`, the block with the
    yielded value bound, then the helper's statements after it; several managers in one `with`
    left in reverse order; inside a loop, with a keyword argument and a default. Through cubins,
    from an imported file and from one read without running it. What cuTile Python refuses, and
    what would skip a helper's statements after its `yield`, is a `TranslationError` at the
    construct."""
    from tilebridge.translator import frontend, lower_checked

    source = '''
import contextlib
from contextlib import contextmanager

import cuda.tile as ct


@contextlib.contextmanager
def block_tile(x, T, scale=2.0):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    yield t * scale


@contextmanager
def stored_on_leaving(y, tile):
    yield tile
    ct.store(y, index=(ct.bid(0),), tile=tile)


@ct.kernel
def managed(x, y, w, T: ct.Constant[int]):
    with block_tile(x, T) as t, stored_on_leaving(y, t * 0.5), stored_on_leaving(y, t + 1.0) as v:
        ct.store(w, index=(ct.bid(0),), tile=v * t)


@ct.kernel
def managed_in_loop(x, y, n: ct.Constant[int], T: ct.Constant[int]):
    acc = ct.zeros((T,), dtype=ct.float32)
    for k in range(n):
        if k > 0:
            with block_tile(x, T, scale=k) as t:
                acc = acc + t
    ct.store(y, index=(ct.bid(0),), tile=acc)
'''
    (tmp_path / "managed.py").write_text(source)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    body = " ".join(tb.translate(tmp_path / "managed.py", runtime_path=tbuild.RUNTIME_CRATE)
                    .files["src/tile_kernels.rs"].split())
    managed = body[body.index("fn managed<"):body.index("fn managed_in_loop<")]
    # entered in order (the load, then the two tiles), the block, then left in reverse: y's last store is t * 0.5
    order = [managed.index(s) for s in ("load_view_tko(", "_stored_on_leaving_tile: Tile", "w.store(w_cast)",
                                        "convert_tile(_stored_on_leaving_tile2)", "convert_tile(_stored_on_leaving_tile)")]
    assert order == sorted(order), managed
    tb.build(tmp_path / "managed.py", quiet=True, cubins=True)
    for src in frontend.load_all(tmp_path / "managed.py"):
        kir = lower_checked(src, None, False, ())[0]
        assert kir.compiled_at and kir.safety.safe, (src.name, kir.safety.reasons)
    # Read without running it (an import that fails): the managers are kept as managers.
    (tmp_path / "unimported.py").write_text("import a_package_that_is_not_installed\n" + source)
    assert "fn managed_in_loop<" in tb.translate(tmp_path / "unimported.py", runtime_path=tbuild.RUNTIME_CRATE).files["src/tile_kernels.rs"]

    refused = {
        "not_a_manager": ("def plain(x):\n    return x\n",
                          "    with plain(x) as t:\n        ct.store(x, index=(0,), tile=t)\n",
                          "made by @contextlib.contextmanager"),
        "yield_in_a_block": ("@contextlib.contextmanager\ndef cm(x):\n    if True:\n        yield x\n",
                             "    with cm(1.0) as t:\n        pass\n", "must yield once, as a statement"),
        "returning_manager": ("@contextlib.contextmanager\ndef cm(x):\n    yield x\n    return\n",
                              "    with cm(1.0) as t:\n        pass\n", "does not support returning"),
        "left_by_break": ("@contextlib.contextmanager\ndef cm(x):\n    yield x\n",
                          "    for i in range(4):\n        with cm(1.0) as t:\n            break\n",
                          "leaving a `with` block early"),
        "hidden_global": ("SCALE = 2.0\n\n@contextlib.contextmanager\ndef cm(x):\n    yield x * SCALE\n",
                          "    SCALE = 3.0\n    with cm(1.0) as t:\n        pass\n", "reads the module's `SCALE`"),
    }
    for name, (helper, block, message) in refused.items():
        (tmp_path / f"{name}.py").write_text(f"import contextlib\n\nimport cuda.tile as ct\n\n{helper}\n\n"
                                             f"@ct.kernel\ndef k(x):\n{block}")
        with pytest.raises(tb.TranslationError, match=rf"{name}\.py:\d+:\d+: .*{re.escape(message)}"):
            tb.translate(tmp_path / f"{name}.py", runtime_path=tbuild.RUNTIME_CRATE)


def test_nested_functions_and_lambdas(monkeypatch, tmp_path):
    """A `def` or `lambda` inside a kernel or helper, as cuTile Python compiles a closure
    (`translator.closures`, `Walker.call_closure`): inlined where it is called, its defaults read
    where it is defined, the names it only reads where it is called; its own names renamed apart,
    so an assignment inside it leaves the kernel's variable of that name alone; keyword arguments
    by the names written; a lambda called in place; one closure calling another. And `a if c else
    b` choosing tiles on a runtime condition, one side evaluated in each branch. Typed as cuTile
    Python types it, through cubins. Refused at the construct: a closure called outside the
    function that defines it, a decorated or recursive one."""
    from tilebridge.translator import frontend, lower_checked

    source = '''
import cuda.tile as ct


def twice(f, t):
    return f(t) + f(t)


def halved(t):
    half = lambda v: v * 0.5
    return half(t)


@ct.kernel
def nested(x, y, z, T: ct.Constant[int]):
    i = ct.bid(0)
    s: float = 2.0
    u = ct.load(x, index=(i,), shape=(T,))

    def scaled(t, by=s):
        u = t * by  # the closure's own u: the kernel's is stored below
        return u + s

    def shifted(t):
        return scaled(t) - 1.0

    s = 5.0
    ct.store(y, index=(i,), tile=shifted(u) + (lambda v: v * 3.0)(u))
    ct.store(z, index=(i,), tile=halved(scaled(u, by=4.0)) + u)


@ct.kernel
def chosen(x, y, n: int, T: ct.Constant[int]):
    i = ct.bid(0)
    t = ct.load(x, index=(i,), shape=(T,)) if i < n else ct.zeros((T,), dtype=x.dtype)
    ct.store(y, index=(i,), tile=t * 2.0 if ct.sum(t) > 0 else t - 1.0)
'''
    (tmp_path / "nested.py").write_text(source)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    body = " ".join(tb.translate(tmp_path / "nested.py", runtime_path=tbuild.RUNTIME_CRATE)
                    .files["src/tile_kernels.rs"].split())
    # scaled(u): u * 2.0 (the default, as defined; 5.0 were it read when called) + 5.0 (s, as called)
    assert "broadcast_scalar(2.0f32" in body and "broadcast_scalar(5.0f32" in body, body
    # the closure's u is its own; the kernel's, its load, is added last: `fma(.., .., u)`
    assert "let _scaled_u" in body and "let u: Tile<E0" in body and ", u, rounding::NearestEven" in body, body
    # `a if c else b` choosing tiles on a runtime condition: an if whose branches evaluate one side each
    chosen = body[body.index("fn chosen<"):]
    assert re.search(r"if i < n \{ \w+ = load_view_tko\(", chosen), chosen
    tb.build(tmp_path / "nested.py", quiet=True, cubins=True)
    for src in frontend.load_all(tmp_path / "nested.py"):
        for kir in lower_checked(src, None, False, ()):
            assert kir.compiled_at and kir.safety.safe, (src.name, kir.safety.reasons)

    # Lexical scope: a function nested in a closure binds its own `w`, which the closure binds too.
    (tmp_path / "shadowed.py").write_text("""import cuda.tile as ct


@ct.kernel
def k(x, y):
    t = ct.load(x, index=(ct.bid(0),), shape=(16,))

    def outer(v):
        w = v * 3.0

        def inner(w):
            return w * 2.0 + v

        return inner(v + 1.0) + w

    ct.store(y, index=(ct.bid(0),), tile=outer(t))
""")
    shadowed = re.sub(r"\(\s+", "(", " ".join(tb.translate(tmp_path / "shadowed.py", runtime_path=tbuild.RUNTIME_CRATE)
                                              .files["src/tile_kernels.rs"].split()))
    # inner(t + 1.0) is (t + 1.0) * 2.0 + t: an fma of its own w and the closure's v (t); plus outer's
    # w, t * 3.0 (the two fused), cast to y's dtype
    assert re.search(r"(\w+): Tile<E0, \{ \[16\] \}> = fma\(t \+ \w+, \w+, t, .*"
                     r"y_cast: Tile<E1, \{ \[16\] \}> = convert_tile\(fma\(t, _outer_w\w*, \1,", shadowed), shadowed

    refused = {
        "passed_on": ("    f = lambda v: v\n    ct.store(x, index=(0,), tile=twice(f, t))\n",
                      "a nested function called outside the function that defines it"),
        "decorated": ("    @staticmethod\n    def f(v):\n        return v\n", "decorators on nested functions"),
        "recursive": ("    def f(v):\n        return f(v)\n    ct.store(x, index=(0,), tile=f(t))\n",
                      "recursive nested functions"),
    }
    for name, (block, message) in refused.items():
        (tmp_path / f"{name}.py").write_text(
            "import cuda.tile as ct\n\n\ndef twice(f, t):\n    return f(t) + f(t)\n\n\n@ct.kernel\ndef k(x):\n"
            f"    t = ct.load(x, index=(0,), shape=(4,))\n{block}")
        with pytest.raises(tb.TranslationError, match=rf"{name}\.py:\d+:\d+: .*{re.escape(message)}"):
            tb.translate(tmp_path / f"{name}.py", runtime_path=tbuild.RUNTIME_CRATE)


def test_a_helpers_result_follows_its_paths(monkeypatch, tmp_path):
    """A helper whose `if` on ct.Constant values leaves its result a (1, D) tile on one path and a
    (D,) tile on the other (cutile-transformers' apply_splitk_reduce, its condition on a name bound
    to the tile's shape), or chooses a rounding mode per launch (silu_and_mul): cuTile Python
    compiles one path per launch; the statement that calls the helper, and the rest of its block,
    go down each path (`branches.FollowPaths`), through a helper calling it too. Typed as cuTile
    Python types it, through cubins."""
    from tilebridge.translator import frontend, lower_checked

    (tmp_path / "paths.py").write_text('''import cuda.tile as ct


def reduced(t, approx):
    N, D = t.shape
    if N >= 16:
        r = ct.sum(t, axis=0, keepdims=True)
    else:
        r = ct.sum(t, axis=0)
    rm = ct.RoundingMode.APPROX if approx else None
    return ct.truediv(r, 3.0, rounding_mode=rm)


def doubled(t, approx):
    return reduced(t, approx) * 2.0


@ct.kernel
def k(x, y, N: ct.Constant[int], D: ct.Constant[int], approx: ct.Constant[bool]):
    t = ct.astype(ct.load(x, index=(0, ct.bid(0)), shape=(N, D)), ct.float32)
    for i in range(2):
        acc = doubled(t, approx)
        ct.store(y, index=(2 * ct.bid(0) + i,), tile=ct.reshape(acc, (D,)))
''')
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    body = " ".join(tb.translate(tmp_path / "paths.py", runtime_path=tbuild.RUNTIME_CRATE)
                    .files["src/tile_kernels.rs"].split())
    # The loop's body goes down the four paths, each with its one division and its rounding.
    loop = body[body.index("for i in"):]
    assert loop.index("if N >= 16i32 {") < loop.index("if approx {"), loop
    assert loop.count("rounding::Approx") == 2 and loop.count("/ broadcast_scalar(3.0f32") == 2, loop
    assert loop.count(".reshape(const_shape![1, D]);") == 2 and loop.count("let acc: Tile<f32, { [1, D] }>") == 2 and \
        loop.count("let acc: Tile<f32, { [D] }>") == 2, loop
    tb.build(tmp_path / "paths.py", quiet=True, cubins=True)
    for src in frontend.load_all(tmp_path / "paths.py"):
        for kir in lower_checked(src, None, False, ()):
            assert kir.compiled_at, src.name


def test_batched_and_vector_matrix_products(monkeypatch, tmp_path):
    """`ct.mma` and `ct.matmul`/`@` as cuTile Python types them beyond two dimensions: a batch of
    products (3-D tiles, the batch broadcast where one operand has none) through Tile IR's `mmaf`,
    or `mmai` for 8-bit integers; a 1-D operand taken as a row on the left or a column on the
    right, squeezed out of the result. Through cubins at the specializations cuTile Python typed."""
    from tilebridge.translator import frontend, lower_checked

    (tmp_path / "products.py").write_text('''import cuda.tile as ct


B, M, N, K = 2, 16, 32, 16


@ct.kernel
def batched(a, b, c):
    x = ct.load(a, index=(ct.bid(0), 0, 0), shape=(B, M, K))
    y = ct.load(b, index=(0, 0), shape=(K, N))
    acc = ct.mma(x, ct.reshape(y, (1, K, N)), ct.zeros((B, M, N), dtype=ct.float32))
    ct.store(c, index=(ct.bid(0), 0, 0), tile=(acc + x @ y).astype(c.dtype))


@ct.kernel
def vector_products(a, v, r):
    x = ct.load(a, index=(0, 0), shape=(M, K))
    u = ct.load(v, index=(0,), shape=(K,))
    ct.store(r, index=(0,), tile=ct.matmul(x, u) + u @ ct.transpose(x))
''')
    (tmp_path / "int8.py").write_text('''import cuda.tile as ct


@ct.kernel
def int8_batched(a, b, c):
    x = ct.load(a, index=(0, 0, 0), shape=(2, 16, 32))
    y = ct.load(b, index=(0, 0, 0), shape=(2, 32, 16))
    ct.store(c, index=(0, 0, 0), tile=ct.mma(x, y, ct.zeros((2, 16, 16), dtype=ct.int32)))
''')
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    body = " ".join(tb.translate(tmp_path / "products.py", runtime_path=tbuild.RUNTIME_CRATE)
                    .files["src/tile_kernels.rs"].split())
    assert body.count("= mmaf(") == 2 and "Tile<f32, { [2, 16, 32] }> = mmaf(x," in body, body
    assert "Tile<DT, { [16, 1] }> = mma(" in body and "Tile<DT, { [1, 16] }> = mma(" in body, body
    ints = tb.translate(tmp_path / "int8.py", runtime_path=tbuild.RUNTIME_CRATE, dtypes={"a": ["i8"], "b": ["i8"]})
    assert "mmai(x, y, c_tile, signedness::Signed, signedness::Signed)" in " ".join(
        ints.files["src/tile_kernels.rs"].split())
    tb.build(tmp_path / "products.py", quiet=True, cubins=True)
    tb.build(tmp_path / "int8.py", quiet=True, cubins=True, dtypes={"a": ["i8"], "b": ["i8"]})
    for path, stated in (("products.py", None), ("int8.py", {"a": ["i8"], "b": ["i8"]})):
        for src in frontend.load_all(tmp_path / path):
            for kir in lower_checked(src, stated, False, ()):
                assert kir.compiled_at and kir.safety.safe, (src.name, kir.safety.reasons)
    (tmp_path / "mixed.py").write_text(
        "import cuda.tile as ct\n\n\n@ct.kernel\ndef k(a, c):\n    x = ct.load(a, index=(0, 0, 0), shape=(2, 16, 16))\n"
        "    ct.store(c, index=(0, 0, 0), tile=x @ x)\n")
    with pytest.raises(tb.TranslationError, match=r"mixed\.py:7:\d+: a batched \(3-D\) matrix product of tiles"):
        tb.translate(tmp_path / "mixed.py", runtime_path=tbuild.RUNTIME_CRATE, dtypes={"a": ["f16", "i8"]})


FAST_ACC = """
import cuda.tile as ct


@ct.kernel
def fast_mma(a, b, c, TM: ct.Constant[int], TN: ct.Constant[int], TK: ct.Constant[int]):
    acc = ct.full((TM, TN), 0, dtype=ct.float32)
    for k in range(ct.cdiv(a.shape[1], TK)):
        x = ct.load(a, index=(ct.bid(0), k), shape=(TM, TK))
        y = ct.load(b, index=(k, ct.bid(1)), shape=(TK, TN))
        acc = ct.mma(x, y, acc, use_fast_acc=True)
    ct.store(c, index=(ct.bid(0), ct.bid(1)), tile=acc.astype(c.dtype))
"""


def test_fast_accumulation_takes_fp8_only_as_cuTile_Python(monkeypatch, tmp_path):
    """`ct.mma(..., use_fast_acc=True)`: Tile IR's `mmaf` with its fast-accumulation flag, as cuTile
    Python emits it at the same fp8 specialization, through an sm_90 cubin; the launcher takes fp8
    operands only (cuTile Python refuses others), and its `unsafe` call is in the safety report.
    Operands stated as f16 are refused; so is a flag that is not a constant."""
    from tilebridge.translator import frontend, lower_checked

    path = tmp_path / "fast_acc.py"
    path.write_text(FAST_ACC)
    ext = tb.build(path, quiet=True)
    meta = ExtensionMetadata.from_json(ext.__tilebridge__).kernels["fast_mma"]
    assert meta.dtypes["E0"] == ["f8e4m3fn", "f8e5m2"]
    assert any("fast accumulation" in r and "the launcher checks it" in r for r in meta.unsafe_reasons)
    with pytest.raises(tb.ArgumentError, match="f8e4m3fn"):
        ext.fast_mma((1, 1), FakeCudaArray((64, 64), "<f2"), FakeCudaArray((64, 64), "<f2", ptr=0x7100_0000),
                     FakeCudaArray((64, 64), ptr=0x7200_0000), TM=64, TN=64, TK=32)
    monkeypatch.setenv("CUDA_TOOLKIT_PATH", str(toolchain.cuda_root()))
    (src,) = frontend.load_all(path)
    spec = lower_checked(src, None, False, ())[0].compiled_at[0]
    assert spec.generics[0] in ("f8e4m3fn", "f8e5m2")
    _, bytecode = ext._compile_only("fast_mma", spec.generics, spec.strides, "sm_90")
    ours, theirs = coverage.disasm(bytecode), coverage.python_tile_ir(src.kernel, spec)  # one printer for both
    mmas = [[re.sub(r"%[\w.-]+", "%v", line).strip() for line in text.splitlines() if "mmaf" in line]
            for text in (ours, theirs)]
    assert mmas[0] == mmas[1] and len(mmas[0]) == 1 and "fast" in mmas[0][0], mmas
    coverage.cubin(bytecode)
    with pytest.raises(tb.TranslationError, match=r"fast_acc.py:\d+:\d+: .*use_fast_acc=True\) takes fp8 operands"):
        tbuild.expected_key(str(path), dtypes={"a": ["f16"], "b": ["f16"]})
    path.write_text(FAST_ACC.replace("use_fast_acc=True", "use_fast_acc=k == 0"))
    with pytest.raises(tb.TranslationError, match="use_fast_acc must be True or False"):
        tbuild.expected_key(str(path))
