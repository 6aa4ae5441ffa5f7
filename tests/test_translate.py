"""Translation without building: golden output, rustfmt-clean code, and clear errors."""

import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import tilebridge as tb
from tilebridge.builder.wheel import RUNTIME_CRATE
from tilebridge.dtypes import ARRAY_DTYPES
from tilebridge.metadata import ExtensionMetadata
from tilebridge.translator import frontend
from tilebridge.verifier import coverage

from conftest import EXAMPLES, REPO

GOLDEN = REPO / "tests" / "golden"
FIXTURE = Path(__file__).parent / "fixtures" / "unsupported.py"


def generated(path: Path) -> dict[str, str]:
    crate = tb.translate(path, runtime_path=RUNTIME_CRATE)
    files = dict(crate.files)
    # The runtime crate's location differs between checkouts.
    files["Cargo.toml"] = files["Cargo.toml"].replace(RUNTIME_CRATE.as_posix(), "<tilebridge-runtime>")
    return files


def function_text(rust: str, name: str) -> str:
    """The text of kernel function `name` in a generated `tile_kernels.rs` (not its variants for
    other dtypes, which follow it)."""
    start = rust.index(f"fn {name}<")
    return rust[start:rust.index("\n    }\n", start)]


def in_place_pairs(path: Path, source: str) -> dict[str, list[tuple[str, str]]]:
    """The in-place pairs each kernel of `source` (written to `path`) lets a launch alias."""
    path.write_text(source)
    return {name: k.in_place for name, k in
            ExtensionMetadata.from_json(generated(path)["tilebridge.json"]).kernels.items()}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_matches_golden(path):
    """The generator still produces exactly the reviewed Rust (TILEBRIDGE_UPDATE_GOLDEN=1 rewrites it)."""
    files = generated(path)
    golden = GOLDEN / path.stem
    if os.environ.get("TILEBRIDGE_UPDATE_GOLDEN"):
        shutil.rmtree(golden, ignore_errors=True)
        for name, text in files.items():
            (golden / name).parent.mkdir(parents=True, exist_ok=True)
            (golden / name).write_text(text)
    expected = {str(p.relative_to(golden)): p.read_text() for p in golden.rglob("*") if p.is_file()}
    assert sorted(files) == sorted(expected)
    for name in files:
        assert files[name] == expected[name], f"{path.stem}/{name} differs from tests/golden"


def test_translation_is_deterministic():
    assert generated(EXAMPLES[0]) == generated(EXAMPLES[0])


def test_translation_does_not_depend_on_the_hash_seed(tmp_path):
    """Two processes with different string hashing (set and dict-of-set orders change with it)
    write the same crate for the examples and the fixtures together."""
    sources = [*EXAMPLES, REPO / "tests" / "fixtures" / "checked_ops.py"]
    outputs = []
    for seed in ("1", "2"):
        out = tmp_path / seed
        proc = subprocess.run(
            [sys.executable, "-m", "tilebridge.cli", "translate", *map(str, sources), "-m", "seeded_rs", "-o", str(out)],
            capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO / "python")})
        assert proc.returncode == 0, proc.stderr
        outputs.append({str(p.relative_to(out)): p.read_text() for p in out.rglob("*") if p.is_file()})
    assert len(outputs[0]) >= 5 and outputs[0] == outputs[1]


@pytest.mark.skipif(shutil.which("rustfmt") is None, reason="rustfmt not installed")
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_rustfmt_clean(path, tmp_path):
    for name, text in generated(path).items():
        if name.endswith(".rs"):
            f = tmp_path / Path(name).name
            f.write_text(text)
            proc = subprocess.run(["rustfmt", "--check", "--edition", "2021", str(f)], capture_output=True, text=True)
            assert proc.returncode == 0, proc.stdout


def test_every_statement_points_to_its_python_line():
    src = generated(REPO / "examples" / "matmul.py")["src/tile_kernels.rs"]
    py = (REPO / "examples" / "matmul.py").read_text().splitlines()
    comments = [l.strip() for l in src.splitlines() if l.strip().startswith("// matmul.py:")]
    assert comments
    for c in comments:
        line = int(c.split(":")[1])
        assert c.endswith(py[line - 1].strip()), c


def test_safety_report():
    meta = ExtensionMetadata.from_json(generated(REPO / "examples" / "scaled_silu.py")["tilebridge.json"]).kernels
    assert meta["scaled_silu_in_place"].safe is False
    assert meta["scaled_silu_in_place"].unsafe_reasons == [
        "updates 'x' in place through an unchecked partition (obligation: each block loads and stores only its own "
        "tiles of it, inside its grid; the kernel keeps it, as cuTile Python requires)"]
    # a load padded with -inf: through the module's safe padded view
    softmax = generated(REPO / "examples" / "row_softmax.py")
    assert ExtensionMetadata.from_json(softmax["tilebridge.json"]).kernels["row_softmax"].safe is True
    assert "partition_padded_neg_inf(x, " in softmax["src/tile_kernels.rs"]
    vadd = ExtensionMetadata.from_json(generated(REPO / "examples" / "vector_add.py")["tilebridge.json"])
    assert vadd.kernels["vector_add"].safe is True
    # no `unsafe` in the kernel: its loads' unpadded views are the module's audited wrappers
    assert "unsafe" not in function_text(generated(REPO / "examples" / "vector_add.py")["src/tile_kernels.rs"],
                                         "vector_add")


def test_a_scatter_is_safe_only_into_what_its_block_owns(tmp_path):
    """A bounds-checked scatter into row `ct.bid(0)` (or, of a 1-D array, the tile `ct.bid(0) * T +
    ct.arange(T)`) goes through the module's safe scatter, in a kernel that reads no other block
    index; in a kernel that reads none, a scatter anywhere is the first block's. Any other scatter
    stays the unsafe pointer store, and says why."""
    (tmp_path / "owned.py").write_text('''
import cuda.tile as ct

T = ct.Constant[int]


@ct.kernel
def own_tile(x, y, B: T):
    offs = ct.bid(0) * B + ct.arange(B, dtype=ct.int32)
    ct.scatter(y, offs, ct.gather(x, offs) + 1)


@ct.kernel
def own_row(x, y, B: T):
    cols = ct.arange(B, dtype=ct.int32)
    ct.scatter(y, (ct.bid(0), cols), ct.gather(x, (ct.bid(0), cols)) + 1)


@ct.kernel
def strided(x, y, R: T, B: T):
    cols = ct.arange(B, dtype=ct.int32)
    for r in range(ct.bid(0), R, ct.num_blocks(0)):
        ct.scatter(y, (r, cols), ct.gather(x, (r, cols)) + 1)


@ct.kernel
def no_block_index(x, y, B: T):
    ct.scatter(y, ct.arange(B, dtype=ct.int32), ct.load(x, index=(0,), shape=(B,)) + 1)


@ct.kernel
def no_block_index_in_place(x, y, B: T):
    offs = ct.arange(B, dtype=ct.int32)
    ct.scatter(y, offs, ct.gather(x, offs) + 1)  # x and y may be one array, which every block reads


@ct.kernel
def columns_by_block(x, y, B: T):
    cols = ct.bid(1) * B + ct.arange(B, dtype=ct.int32)
    ct.scatter(y, (ct.bid(0), cols), ct.gather(x, (ct.bid(0), cols)) + 1)


@ct.kernel
def unchecked(x, y, B: T):
    offs = ct.bid(0) * B + ct.arange(B, dtype=ct.int32)
    ct.scatter(y, offs, ct.gather(x, offs) + 1, check_bounds=False)


@ct.kernel
def overlapping(x, y, B: T):
    offs = ct.bid(0) * 3 + ct.arange(B, dtype=ct.int32)
    ct.scatter(y, offs, ct.gather(x, offs) + 1)


@ct.kernel
def one_element_by_many_lanes(x, y, B: T):
    ct.scatter(y, ct.full((B,), ct.bid(0), dtype=ct.int32), ct.load(x, index=(ct.bid(0),), shape=(B,)))
''')
    files = generated(tmp_path / "owned.py")
    meta = ExtensionMetadata.from_json(files["tilebridge.json"]).kernels
    assert all(meta[k].safe for k in ("own_tile", "own_row", "no_block_index"))
    body = files["src/tile_kernels.rs"]
    assert "scatter_own_tile_1d(y, get_tile_block_id().0," in body and "scatter_own_row_2d_into_1d(" in body
    assert "scatter_first_block_1d_into_1d(" in body
    # row bid(0), the run of columns bid(1) * B + arange(B): the block's own elements
    assert meta["columns_by_block"].safe and "scatter_owned_2d_b0_r1_into_1d(" in body
    # a grid-stride loop's rows: owned, but no check of them yet is as cheap as the unsafe store
    for name in ("strided", "no_block_index_in_place", "unchecked", "overlapping", "one_element_by_many_lanes"):
        assert [r.split(" (")[0] for r in meta[name].unsafe_reasons] == ["scatters to 'y' through pointers"], name


def test_a_bounds_check_the_launch_decides_is_safe_on_a_run_of_lanes(tmp_path):
    """A gather or a scatter into row `ct.bid(0)` whose check_bounds the launch decides (or that
    is False) goes through the module's span access where its last index is `start +
    ct.arange(T)` and the others scalars, and a one-element gather through the safe gather; where
    the start's name is bound again before the access, the access stays unsafe: the start as the
    ramp was made is no longer what the name reads there."""
    (tmp_path / "spans.py").write_text('''
import cuda.tile as ct

T = ct.Constant[int]


@ct.kernel
def chunks(x, w, y, N: T, B: T):
    check = N % B != 0
    scale = ct.gather(w, 0, check_bounds=False)
    for j in range(ct.cdiv(N, B)):
        offs = j * B + ct.arange(B, dtype=ct.int32)
        ct.scatter(y, (ct.bid(0), offs), ct.gather(x, (ct.bid(0), offs), check_bounds=check) * scale,
                   check_bounds=check)
    for j in range(2):
        offs = j * B + ct.arange(B, dtype=ct.int32)  # bound again in another loop: still one run a trip
        ct.scatter(y, (ct.bid(0), offs), ct.gather(x, (ct.bid(0), offs), check_bounds=False))


@ct.kernel
def start_bound_again(x, y, N: T, B: T):
    s = ct.bid(0) * B
    offs = s + ct.arange(B, dtype=ct.int32)
    s = ct.bid(0) + 1
    ct.scatter(y, offs, ct.gather(x, offs, check_bounds=B != N) + s)
''')
    files = generated(tmp_path / "spans.py")
    meta = ExtensionMetadata.from_json(files["tilebridge.json"]).kernels
    assert meta["chunks"].safe, meta["chunks"].unsafe_reasons
    body = re.sub(r"\(\s+", "(", " ".join(files["src/tile_kernels.rs"].split()))  # as rustfmt may wrap it
    chunks = re.sub(r"\(\s+", "(", " ".join(function_text(files["src/tile_kernels.rs"], "chunks").split()))
    assert chunks.count("gather_span_2d(x, x_stride_0, get_tile_block_id().0, j * B, check, ") == 1
    assert "scatter_own_row_span_2d(y, y_stride_0, get_tile_block_id().0, j * B, check, " in body
    assert "gather_span_2d(x, x_stride_0, get_tile_block_id().0, j * B, false, " in body
    assert "gather_1d_into_1d(w, " in body  # one element, check_bounds=False: its one lane checked
    assert [r.split(" (")[0] for r in meta["start_bound_again"].unsafe_reasons] == [
        "gathers from 'x' with check_bounds decided at launch"]


def test_a_gather_from_an_array_the_kernel_writes_is_safe_where_its_writes_keep_other_blocks_off(tmp_path):
    """A bounds-checked gather from an array the kernel also writes goes through the module's safe
    gather, ordered by the array's pointer token, where every write of the array is an `unsafe`
    block whose obligation says that no block writes what another reads: a write that would be
    safe on its own (the block's own row) goes through pointers then, with that obligation. An
    array also updated atomically, and a gather whose bounds are unchecked, keep the unsafe
    gather."""
    (tmp_path / "read_back.py").write_text('''
import cuda.tile as ct

T = ct.Constant[int]


@ct.kernel
def column_sums(counts, R: T, C: T):
    offs = ct.arange(R, dtype=ct.int32) * C + ct.bid(0)
    ct.scatter(counts, offs, ct.cumsum(ct.gather(counts, offs, padding_value=0), axis=0))


@ct.kernel
def own_row_read_back(x, B: T):
    cols = ct.arange(B, dtype=ct.int32)
    ct.scatter(x, (ct.bid(0), cols), ct.gather(x, (ct.bid(0), cols)) * 2)


@ct.kernel
def tiles_read_back(x, mean, B: T, COMPUTE: T):
    rows = ct.bid(0) * B + ct.arange(B, dtype=ct.int32)
    if COMPUTE:
        m = ct.sum(ct.load(x, index=(ct.bid(0), 0), shape=(B, 4)), axis=1)
        ct.store(mean, index=(ct.bid(0),), tile=m)
    else:
        m = ct.gather(mean, rows)
    ct.store(x, index=(ct.bid(0), 0), tile=ct.load(x, index=(ct.bid(0), 0), shape=(B, 4)) - m[:, None])


@ct.kernel
def counted_atomically(counts, B: T):
    offs = ct.arange(B, dtype=ct.int32)
    ct.atomic_add(counts, offs, 1)
    ct.scatter(counts, offs + B, ct.gather(counts, offs))


@ct.kernel
def unchecked(x, B: T):
    offs = ct.bid(0) * B + ct.arange(B, dtype=ct.int32)
    ct.scatter(x, offs, ct.gather(x, offs, check_bounds=False) + 1)
''')
    files = generated(tmp_path / "read_back.py")
    meta = ExtensionMetadata.from_json(files["tilebridge.json"]).kernels
    body = re.sub(r"\(\s+", "(", " ".join(files["src/tile_kernels.rs"].split()))  # as rustfmt may wrap it
    assert "gather_1d_into_1d_ordered(counts, offs, counts_padding, counts_token)" in body
    assert "gather_2d_into_1d_ordered(x, x_stride_0, " in body and "gather_1d_into_1d_ordered(mean, " in body
    assert meta["column_sums"].unsafe_reasons == [
        "scatters to 'counts' through pointers (obligation: blocks write disjoint elements of it, none that another "
        "block reads; the kernel keeps it, as cuTile Python requires)"]
    assert meta["own_row_read_back"].unsafe_reasons == [
        "scatters to 'x' through pointers (obligation: blocks write disjoint elements of it, none that another block "
        "reads; the kernel keeps it, as cuTile Python requires)"]
    assert "updates 'mean' in place through an unchecked partition (obligation: each block loads and stores only " \
           "its own tiles of it, inside its grid, none that another block reads; the kernel keeps it, as cuTile " \
           "Python requires)" in meta["tiles_read_back"].unsafe_reasons
    assert not any(r.startswith("gathers") for k in ("column_sums", "own_row_read_back", "tiles_read_back")
                   for r in meta[k].unsafe_reasons)
    assert "gathers from 'counts', which it also updates atomically (obligation: no other block writes what one " \
           "reads; the kernel keeps it, as cuTile Python requires)" in meta["counted_atomically"].unsafe_reasons
    assert [r.split(" (")[0] for r in meta["unchecked"].unsafe_reasons] == [
        "gathers from 'x' with check_bounds=False", "scatters to 'x' through pointers"]


def test_a_store_or_scatter_at_block_indices_is_safe_where_the_block_owns_them(tmp_path):
    """A store cutile's checked partition cannot take (block indices in another order than the
    array's dimensions, rank 5, stored twice) and a scatter at block indices go through the
    module's owned writes, which write only at the block's own components; not where the kernel
    reads a block index none of them is, inside a loop, nor where two safe writes of one array
    would own it differently (two blocks could each own one element). A scatter's component may be
    the block's run of its lanes (`ct.bid(0) * B + ct.arange(B)`). The store reads the block
    indices itself, unconditionally where every grid axis is one of them and nothing else is
    passed (cutile checks its bounds at launch), under a test where a runtime condition guards
    it or an index is passed."""
    (tmp_path / "owned.py").write_text('''
import cuda.tile as ct

T = ct.Constant[int]


@ct.kernel
def transposed(x, y, B: T):
    t = ct.load(x, index=(ct.bid(0), ct.bid(1), ct.bid(2)), shape=(1, B, B))
    ct.store(y, index=(ct.bid(2), ct.bid(0), ct.bid(1)), tile=t)


@ct.kernel
def decode(x, y, lse, FAST: ct.Constant[bool], B: T):
    t = ct.load(x, index=(ct.bid(0), ct.bid(1), 0), shape=(1, 1, B))
    if FAST:
        ct.store(y, index=(ct.bid(0), ct.bid(1), 0, ct.bid(2), 0), tile=ct.reshape(t, (1, 1, 1, 1, B)))
    else:
        ct.scatter(y, (ct.bid(0), ct.bid(1), 0, ct.bid(2), ct.arange(B, dtype=ct.int32)), ct.reshape(t, (B,)))
    ct.scatter(lse, (ct.bid(0), ct.bid(1), ct.bid(2)), ct.sum(t))


@ct.kernel
def guarded(x, y, n: int, B: T):
    t = ct.load(x, index=(ct.bid(0), ct.bid(1), ct.bid(2)), shape=(1, B, B))
    if ct.bid(0) < n:
        ct.store(y, index=(ct.bid(2), ct.bid(0), ct.bid(1)), tile=t)


@ct.kernel
def passed(x, y, j: int, B: T):
    t = ct.load(x, index=(ct.bid(0), ct.bid(1), ct.bid(2)), shape=(1, B, B))
    ct.store(y, index=(ct.bid(2), ct.bid(0), ct.bid(1), j), tile=ct.reshape(t, (1, B, B, 1)))


@ct.kernel
def heads_of_the_block(x, lse, B: T):
    t = ct.load(x, index=(ct.bid(1), ct.bid(0), ct.bid(2)), shape=(1, B, 1))
    ct.scatter(lse, (ct.bid(1), ct.bid(0) * B + ct.arange(B, dtype=ct.int32), ct.bid(2)), ct.reshape(t, (B,)))


@ct.kernel
def heads_overlapping(x, lse, B: T):
    t = ct.load(x, index=(ct.bid(1), ct.bid(0), ct.bid(2)), shape=(1, B, 1))
    ct.scatter(lse, (ct.bid(1), ct.bid(0) * 2 + ct.arange(B, dtype=ct.int32), ct.bid(2)), ct.reshape(t, (B,)))


@ct.kernel
def reads_another_block_index(x, y, B: T):
    t = ct.load(x, index=(ct.bid(0), ct.bid(1)), shape=(1, B))
    ct.store(y, index=(0, ct.bid(0)), tile=ct.reshape(t, (B, 1)))


@ct.kernel
def in_a_loop(x, y, B: T):
    for i in range(2):
        t = ct.load(x, index=(ct.bid(1), ct.bid(0)), shape=(1, B))
        ct.store(y, index=(ct.bid(0), ct.bid(1)), tile=t + i)


@ct.kernel
def owned_two_ways(x, y, B: T):
    t = ct.load(x, index=(ct.bid(0), 0), shape=(B, B))
    ct.store(y, index=(ct.bid(0), 0, 0), tile=ct.reshape(t, (B, 1, B)))
    ct.scatter(y, (ct.bid(0), 0, ct.arange(B, dtype=ct.int32)), ct.sum(t, axis=0))
''')
    files = generated(tmp_path / "owned.py")
    meta = ExtensionMetadata.from_json(files["tilebridge.json"]).kernels
    assert meta["transposed"].safe and meta["decode"].safe, (meta["transposed"].unsafe_reasons,
                                                             meta["decode"].unsafe_reasons)
    body = re.sub(r"\(\s+", "(", " ".join(files["src/tile_kernels.rs"].split()))  # as rustfmt may wrap it
    for call in ("store_owned_3d_b2_b0_b1(y, t, y_token)", "store_owned_5d_b0_b1_0_b2_0(y, y_tile, y_token)",
                 "scatter_owned_5d_b0_b1_x_b2_x_into_1d(y,", "scatter_owned_3d_b0_b1_b2_into_1d(lse,",
                 "store_if_owned_3d_b2_b0_b1(y, t, y_token)", "store_if_owned_4d_b2_b0_b1_x(y, y_tile, j, y_token)"):
        assert call in body, call
    assert meta["guarded"].safe and meta["passed"].safe
    # a block's run of B lanes (MLA decoding split KV's heads): owned; runs that overlap are not
    assert "scatter_owned_3d_b1_r0_b2_into_1d(lse, lse_stride_0, lse_stride_1, " in body
    assert meta["heads_of_the_block"].safe
    assert [r.split(" (")[0] for r in meta["heads_overlapping"].unsafe_reasons] == ["scatters to 'lse' through pointers"]
    for name in ("reads_another_block_index", "in_a_loop"):
        assert not meta[name].safe and meta[name].unsafe_reasons[0].startswith("stores to 'y' through an unchecked"), name
    # the store owns tiles of B rows, the scatter single rows: the second write stays unsafe
    assert [r.split(" (")[0] for r in meta["owned_two_ways"].unsafe_reasons] == ["scatters to 'y' through pointers"]


def _marked_line(kernel_name: str) -> int:
    lines = FIXTURE.read_text().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(f"def {kernel_name}("))
    marked = next(i for i in range(start, len(lines)) if "# <- here" in lines[i])
    return marked + 1


@pytest.mark.parametrize("kernel_name, construct", [
    ("while_loop", "while-else is not supported"),
    ("break_in_static_iter", "`break` and `continue` in a ct.static_iter loop are not supported"),
    ("endless_loop", "without a `break` never ends"),
    ("integer_power", "** of integer tiles is not supported yet"),
    ("array_slice", "a slice of 'part', a view made in the kernel (a list's item, a slice), is not supported yet"),
    ("strides_of_a_slice", "the strides of 'part', a view made in the kernel, are not supported yet"),
    ("foreign_view_by_columns", "a last stride other than the number 1"),
    ("helper_call", "*args"),
    ("gather", "indices must be integers"),
    ("permuted_load", "both order= and a non-zero padding_mode"),
    ("closure_passed_on", "a nested function called outside the function that defines it"),
    ("mixed_array_dtypes", "astype"),
    ("stored_then_gathered", "accessed both through tiles (ct.load, ct.store) and through pointers"),
])
def test_unsupported_constructs_name_file_line_and_construct(kernel_name, construct):
    kernel = getattr(frontend.import_file(FIXTURE), kernel_name)
    with pytest.raises(tb.TranslationError) as info:
        tb.translate(kernel, runtime_path=RUNTIME_CRATE)
    err = info.value
    assert construct in str(err)
    file, line, col = err.location.split(":")
    assert file == "unsupported.py" and int(line) == _marked_line(kernel_name) and int(col) >= 1
    assert err.construct and err.construct in str(err)


def test_failed_translation_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEBRIDGE_BUILD_DIR", str(tmp_path / "builds"))
    kernel = frontend.import_file(FIXTURE).while_loop
    with pytest.raises(tb.TranslationError):
        tb.build(kernel, quiet=True)
    assert not (tmp_path / "builds").exists() or not any((tmp_path / "builds").iterdir())


def test_cli_reports_translation_error(tmp_path, capsys):
    from tilebridge.cli import main

    assert main(["translate", str(FIXTURE), "-o", str(tmp_path / "crate")]) == 1
    assert "TranslationError: unsupported.py:" in capsys.readouterr().err
    assert not (tmp_path / "crate").exists()


def test_reads_a_file_that_cannot_be_imported_here():
    """torch and the library's own packages are absent; the kernel still translates."""
    path = Path(__file__).parent / "fixtures" / "torch_style.py"
    with pytest.raises(ImportError):
        __import__("importlib").import_module("operator_library")
    files = tb.translate(path, runtime_path=RUNTIME_CRATE).files
    rust = files["src/tile_kernels.rs"]
    assert "convert_tile" in rust and "0.5f32" in rust
    assert "host_wrapper" not in rust


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo not installed")
def test_runtime_crate_is_rustfmt_clean():
    proc = subprocess.run(["cargo", "fmt", "--check", "--manifest-path", str(RUNTIME_CRATE / "Cargo.toml")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


def test_independent_dtype_classes_are_checked_class_by_class(tmp_path):
    """Five arrays of independent dtypes: 3^5 = 243 combinations, one launcher for all of them
    (no Rust per dtype), checked against cuTile Python in 27 combinations, the first 3 of which
    give each class each of its dtypes (the translation types each value by one class at most).
    Arrays the kernel only moves take 14 dtypes each (14^5 combinations, never listed): each
    class at each dtype twice, beside different partners, 28 checks."""
    (tmp_path / "wide.py").write_text(WIDE_SOURCE)
    crate = tb.translate(tmp_path / "wide.py", runtime_path=RUNTIME_CRATE,
                         dtypes={a: ["f32", "f16", "bf16"] for a in "abcdy"})
    meta = ExtensionMetadata.from_json(crate.files["tilebridge.json"]).kernels["five"]
    assert list(meta.dtypes.values()) == [["f32", "f16", "bf16"]] * 5
    assert meta.checked.startswith("agrees with cuTile Python") and "at 27 specializations" in meta.checked
    assert "216 more dtype combinations checked class by class" in meta.checked
    assert built_combinations(crate.files["src/lib.rs"], "five") is None  # each class's dtype says it all
    crate = tb.translate(tmp_path / "wide.py", runtime_path=RUNTIME_CRATE)
    meta = ExtensionMetadata.from_json(crate.files["tilebridge.json"]).kernels["five"]
    everything_but_bool = [d for d in ARRAY_DTYPES if d != "bool"]  # cutile converts no bools
    assert list(meta.dtypes.values()) == [everything_but_bool] * 5
    n = len(everything_but_bool)
    assert "at 28 specializations" in meta.checked and f"{n ** 5 - 2 * n} more dtype combinations" in meta.checked
    assert built_combinations(crate.files["src/lib.rs"], "five") is None


def test_covering_gives_each_class_each_dtype():
    from tilebridge.translator.oracle import covering

    combos = [(a, b, c) for a in "xyz" for b in "xy" for c in "xyzw"]
    chosen = covering(combos, seen={("x", "x", "x")})
    assert len(chosen) == 3  # w and z of the last class, y and z of the first, y of the second
    pairs = {(i, d) for combo in [*chosen, ("x", "x", "x")] for i, d in enumerate(combo)}
    assert pairs == {(i, d) for combo in combos for i, d in enumerate(combo)}


def built_combinations(lib_rs: str, kernel: str) -> int | None:
    """How many dtype combinations the launcher of `kernel` lets through, where it checks the
    combination and not only each class's dtype (None)."""
    launcher = lib_rs.split(f"fn {kernel}<'py>(")[1].split("static KERNEL")[0]
    return launcher.count("(ElemType::") if "matches!(" in launcher else None


def test_helpers_from_a_sibling_file_are_inlined(tmp_path):
    """An operator library's kernel calling a helper it imports from a sibling module (as TileGym's
    geglu does from gelu) translates; the helper's statements point at the call."""
    pkg = tmp_path / "ops"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text("import cuda.tile as ct\n\n\ndef doubled(t):\n    return t + t\n")
    (pkg / "kernels.py").write_text(
        "import cuda.tile as ct\n\nfrom .helpers import doubled\n\n\n@ct.kernel\n"
        "def twice(x, y, TILE: ct.Constant[int]):\n"
        "    t = ct.load(x, index=(ct.bid(0),), shape=(TILE,))\n"
        "    ct.store(y, index=(ct.bid(0),), tile=doubled(t))\n")
    crate = tb.translate(pkg / "kernels.py", runtime_path=RUNTIME_CRATE)
    rust = crate.files["src/tile_kernels.rs"]
    assert "t + t" in rust and "kernels.py:9: ct.store(y, index=(ct.bid(0),), tile=doubled(t))" in rust


def test_kernels_that_clash_in_rust_are_refused(tmp_path):
    """`scaled_silu` and `scaled_silu_` are one struct, `ScaledSilu`, to #[cutile::module]."""
    source = (REPO / "examples" / "scaled_silu.py").read_text().replace("scaled_silu_in_place", "scaled_silu_")
    (tmp_path / "clash.py").write_text(source)
    with pytest.raises(tb.TranslationError, match=r"clash.py:23: kernel 'scaled_silu_' clashes with 'scaled_silu' "
                                                  r"\(clash.py:13\).*`ScaledSilu`"):
        tb.translate(tmp_path / "clash.py", runtime_path=RUNTIME_CRATE)
    crate = tb.translate(tmp_path / "clash.py", runtime_path=RUNTIME_CRATE, partial=True)
    assert crate.skipped and "clashes" in crate.skipped[0]


WIDE_SOURCE = (
    "import cuda.tile as ct\n\n\n@ct.kernel\n"
    "def five(a, b, c, d, y, TILE: ct.Constant[int]):\n"
    "    s = ct.load(a, index=(ct.bid(0),), shape=(TILE,)).astype(ct.float32)\n"
    "    s = s + ct.load(b, index=(ct.bid(0),), shape=(TILE,)).astype(ct.float32)\n"
    "    s = s + ct.load(c, index=(ct.bid(0),), shape=(TILE,)).astype(ct.float32)\n"
    "    s = s + ct.load(d, index=(ct.bid(0),), shape=(TILE,)).astype(ct.float32)\n"
    "    ct.store(y, index=(ct.bid(0),), tile=s.astype(y.dtype))\n")


def test_recorded_launches_widen_the_launcher_variants(tmp_path):
    """A launch log (tests/gpu/tilegym_plugin.py --launch-log) adds the dtype combinations its kernels
    were launched with to each launcher: listed one by one where they are few, else each class
    widened by its recorded dtypes."""
    import json

    from tilebridge.translator import recorded_launches as launches

    (tmp_path / "wide.py").write_text(WIDE_SOURCE)
    array = lambda dtype: {"dtype": dtype, "shape": [1000], "strides": [1]}  # noqa: E731
    rows = lambda dtype: {"dtype": dtype, "shape": [64, 64], "strides": [64, 1]}  # noqa: E731
    log = tmp_path / "launches.jsonl"
    log.write_text("\n".join(json.dumps(r) for r in [
        {"file": "wide.py", "kernel": "five", "hints": {},  # `a` of a dtype the translation did not infer
         "args": {"a": array("int32"), **{n: array("float16") for n in "bcd"}, "y": array("float32"), "TILE": 256}},
        {"file": "checked_ops.py", "kernel": "prefix_sums", "hints": {},  # a dtype the translation did not infer
         "args": {"x": rows("int32"), "y": rows("float32"), "z": rows("float32"), "TM": 16, "TN": 64}}]) + "\n")
    crate = tb.translate(tmp_path / "wide.py", runtime_path=RUNTIME_CRATE, launches=launches.read([log]),
                         dtypes={a: ["f32", "f16", "bf16"] for a in "abcdy"})  # else they take any dtype
    five = ExtensionMetadata.from_json(crate.files["tilebridge.json"]).kernels["five"]
    # 243 + 1 combinations, too many to list: `a`'s class widened, every combination checked class by class
    assert list(five.dtypes.values()) == [["f32", "f16", "bf16", "i32"]] + [["f32", "f16", "bf16"]] * 4
    assert built_combinations(crate.files["src/lib.rs"], "five") is None  # each class's dtype says it all
    assert "checked class by class" in five.checked
    crate = tb.translate(REPO / "tests" / "fixtures" / "checked_ops.py", runtime_path=RUNTIME_CRATE,
                         launches=launches.read([log]), dtypes={a: ["f32", "f16", "bf16"] for a in "xyz"})
    meta = ExtensionMetadata.from_json(crate.files["tilebridge.json"]).kernels
    assert meta["prefix_sums"].dtypes["E0"] == ["f32", "f16", "bf16", "i32"]  # widened, nothing dropped
    assert built_combinations(crate.files["src/lib.rs"], "prefix_sums") == 27 + 1
    assert "was built for these dtype combinations only" in crate.files["src/lib.rs"]
    assert meta["count_ids"].dtypes == {"E0": ["i32", "i64"], "E1": ["i32"]}  # no launches: as ever


def test_recorded_launches_become_specializations():
    """Coverage compiles what a recorded launch specializes: its dtypes, unit strides and constants;
    one the launcher would refuse (a constant branch left out) is counted as refused instead."""
    import importlib.util

    from tilebridge.translator import recorded_launches as launches
    from tilebridge.translator.lower import lower_kernel as analyze
    from tilebridge.translator.specializations import recorded_specialization

    spec_ = importlib.util.spec_from_file_location("control_flow", REPO / "tests" / "fixtures" / "control_flow.py")
    module = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(module)
    kir = analyze(frontend.load(module.untranslatable_branch))
    array = lambda dtype, strides: {"dtype": dtype, "shape": [64, 64], "strides": strides}  # noqa: E731
    launch = launches.Launch("control_flow.py", "untranslatable_branch",
                             {"x": array("float16", [64]), "y": array("float32", [1]), "FANCY": 0, "TILE": 256})
    spec = recorded_specialization(kir, launch)
    assert spec.generics == ["f16", "f32", "0", "256"] and spec.strides == [("x", [-1]), ("y", [1])]
    assert spec.signature[0] == ("array", "f16", [-1]) and spec.signature[2] == ("constant", 0)
    refused = recorded_specialization(kir, launches.Launch(launch.file, launch.kernel, {**launch.args, "FANCY": 1}))
    assert isinstance(refused, str) and "ct.sigmoid" in refused


def test_in_place_pairs_inside_loops_need_an_index_that_moves(tmp_path):
    """A loop may read and write one state in place where every iteration moves to another tile
    (`base + i`); where the index stays put, a later iteration would read an earlier one's write."""
    pairs = in_place_pairs(tmp_path / "state.py",
        "import cuda.tile as ct\n\n\n@ct.kernel\n"
        "def stream(s_in, s_out, N: ct.Constant[int], TILE: ct.Constant[int]):\n"
        "    for i in range(N):\n"
        "        j = ct.bid(0) * N + i\n"
        "        t = ct.load(s_in, index=(j,), shape=(TILE,))\n"
        "        ct.store(s_out, index=(j,), tile=t * 2)\n\n\n"
        "@ct.kernel\n"
        "def repeat(s_in, s_out, N: ct.Constant[int], TILE: ct.Constant[int]):\n"
        "    for i in range(N):\n"
        "        t = ct.load(s_in, index=(ct.bid(0),), shape=(TILE,))\n"
        "        ct.store(s_out, index=(ct.bid(0),), tile=t * 2)\n")
    assert pairs["stream"] == [("s_in", "s_out")]
    assert pairs["repeat"] == []


def test_in_place_pairs_compare_what_tiles_touch_in_the_arrays_own_axes(tmp_path):
    """A load and a store through the same `order=` touch the same elements (a pair that may be one
    array); through different orders at the same index they do not, though their tiles' shapes
    and indices look alike in the permuted axes."""
    pairs = in_place_pairs(tmp_path / "orders.py",
        "import cuda.tile as ct\n\n\n@ct.kernel\n"
        "def same(a, b, T: ct.Constant[int]):\n"
        "    t = ct.load(a, index=(ct.bid(0), ct.bid(1)), shape=(T, T), order='F')\n"
        "    ct.store(b, index=(ct.bid(0), ct.bid(1)), tile=t * 2, order=(1, 0))\n\n\n"
        "@ct.kernel\n"
        "def crossed(a, b, T: ct.Constant[int]):\n"
        "    t = ct.load(a, index=(ct.bid(0), ct.bid(1)), shape=(T, T), order='F')\n"
        "    ct.store(b, index=(ct.bid(0), ct.bid(1)), tile=t * 2)\n")
    assert pairs["same"] == [("a", "b")]
    assert pairs["crossed"] == []


def test_in_place_pairs_hold_path_by_path_of_branches_on_constants(tmp_path):
    """A launch takes one path of the branches on constants: a load on one path need only come
    before the stores on its own path (mamba2's state kernel reads and writes its state in each
    of two orders); on one path, a store before the load still rules the pair out."""
    pairs = in_place_pairs(tmp_path / "paths.py",
        "import cuda.tile as ct\n\n\n@ct.kernel\n"
        "def per_path(a, b, SWAP: ct.Constant[int], T: ct.Constant[int]):\n"
        "    if SWAP:\n"
        "        t = ct.load(a, index=(ct.bid(0),), shape=(T,))\n"
        "        ct.store(b, index=(ct.bid(0),), tile=t + 1)\n"
        "    else:\n"
        "        t = ct.load(a, index=(ct.bid(0),), shape=(T,))\n"
        "        ct.store(b, index=(ct.bid(0),), tile=t * 2)\n\n\n"
        "@ct.kernel\n"
        "def stored_first(a, b, T: ct.Constant[int]):\n"
        "    ct.store(b, index=(ct.bid(0),), tile=ct.zeros((T,), dtype=b.dtype))\n"
        "    t = ct.load(a, index=(ct.bid(0),), shape=(T,))\n"
        "    ct.store(b, index=(ct.bid(0),), tile=t)\n")
    assert pairs["per_path"] == [("a", "b")]
    assert pairs["stored_first"] == []


def test_codegen_matches_cutile_python_lowering(tmp_path):
    """Three lowerings of cuTile Python's own, which decide speed: a loop with one `if` on its
    index against a loop-invariant value is split in two (no test left in either); a float
    product used only by a sum is one fma; a grid-stride loop to a compile-time bound is a
    `while` (cutile's bounded `for` index lets tileiras unroll every trip)."""
    (tmp_path / "lowering.py").write_text(
        "import cuda.tile as ct\n\n\n@ct.kernel\n"
        "def masked(x, y, N: ct.Constant[int], CAUSAL: ct.Constant[bool], TILE: ct.Constant[int]):\n"
        "    acc = ct.zeros((TILE,), dtype=ct.float32)\n"
        "    start = ct.bid(0) // 2\n"
        "    for j in range(0, N):\n"
        "        t = ct.load(x, index=(j,), shape=(TILE,)).astype(ct.float32)\n"
        "        if CAUSAL and j >= start:\n"
        "            t = t * 0.5\n"
        "        acc = acc * 2.0 + t\n"
        "    ct.store(y, index=(ct.bid(0),), tile=acc.astype(y.dtype))\n\n\n"
        "@ct.kernel\n"
        "def strided(x, y, N: ct.Constant[int], BLOCKS: ct.Constant[int], TILE: ct.Constant[int]):\n"
        "    for i in range(ct.bid(0), ct.cdiv(N, TILE), BLOCKS):\n"
        "        ct.store(y, index=(i,), tile=ct.load(x, index=(i,), shape=(TILE,)))\n")
    rust = tb.translate(tmp_path / "lowering.py", runtime_path=RUNTIME_CRATE).files["src/tile_kernels.rs"]
    code = "\n".join(line for line in rust.splitlines() if not line.strip().startswith("//"))
    masked = code[code.index("fn masked"):code.index("fn strided")]
    assert masked.count("for j in") == 2 and "min(N, start)" in masked and "max(0i32, start)" in masked
    assert "j >= start" not in masked and masked.count("if CAUSAL {") == 1
    assert masked.count("fma(") == 2 and "acc * broadcast_scalar" not in masked
    strided = code[code.index("fn strided"):]
    assert "while i_next < ceil_div(N, TILE)" in strided and "for i in" not in strided
    assert "i_next = i_next + BLOCKS;" in strided


def test_gathers_lower_as_cuda_tile_python_does(tmp_path):
    """An index array stated int32 is used as it is (no f64 round trip that hides its divisibility
    from tileiras); bounds are one unsigned comparison; a zero padding is a constant of the
    gather's shape, through the module's own `load_ptr_tko_padded` (never a select after the load)."""
    (tmp_path / "rows.py").write_text(
        "import cuda.tile as ct\n\n\n@ct.kernel\n"
        "def rows(a, ids, y, STRIDE: ct.Constant[int], TM: ct.Constant[int], TK: ct.Constant[int]):\n"
        "    r = ct.gather(ids, ct.bid(0) * TM + ct.arange(TM, dtype=ct.int32))\n"
        "    offsets = (r // 2)[:, None] * STRIDE + ct.arange(TK, dtype=ct.int32)[None, :]\n"
        "    t = ct.gather(a, offsets, padding_value=0)\n"
        "    ct.store(y, index=(ct.bid(0), 0), tile=t)\n")
    pinned = tb.translate(tmp_path / "rows.py", runtime_path=RUNTIME_CRATE, dtypes={"ids": ["int32"]})
    rust = pinned.files["src/tile_kernels.rs"]
    body = function_text(rust, "rows")
    assert "f64" not in body and "select(" not in body
    assert "pub unsafe fn load_ptr_tko_padded<" in rust and "gather_1d_into_2d(a, offsets, " in body
    assert "constant(E0::ZERO, const_shape![TM, TK])" in body
    gather = rust[rust.index("pub fn gather_1d_into_2d<"):]
    assert "lt_tile(i0_bits, extent0_bits)" in gather and "ge_tile" not in gather
    assert "unsafe" not in body
    # ids of either integer type: a conversion for each, chosen by a flag the launcher sets, which
    # cutile folds (the identity for int32, keeping what tileiras knows of the values; for int64
    # the low bits, as the int64 ids stated would take); no f64, which hid the row offsets'
    # divisibility from tileiras (the fused moe kernel's A gathers)
    either = tb.translate(tmp_path / "rows.py", runtime_path=RUNTIME_CRATE).files["src/tile_kernels.rs"]
    body = function_text(either, "rows")
    assert "f64" not in body and "const IDS_IS_I64: bool" in body
    assert "if IDS_IS_I64 {" in body and "trunci(" in body and "exti(" in body


def test_a_zero_padded_gather_takes_only_dtypes_cutile_makes_constants_of(tmp_path):
    """cutile 0.5.0's JIT makes no constant of int8, uint8, int16 or bool (found by the fuzz
    campaign: "Unsupported constant type i8 zero"): a gather padded with zero is built for none of
    them, one stated int32 translates, and one stated int8 is refused, naming why."""
    (tmp_path / "moved.py").write_text(
        "import cuda.tile as ct\n\n\n@ct.kernel\n"
        "def shifted(x, y, TM: ct.Constant[int]):\n"
        "    t = ct.gather(x, ct.arange(TM, dtype=ct.int32) + ct.bid(0) * TM + 1)\n"
        "    ct.store(y, index=(ct.bid(0),), tile=t)\n")
    meta = ExtensionMetadata.from_json(tb.translate(tmp_path / "moved.py", runtime_path=RUNTIME_CRATE).files[
        "tilebridge.json"]).kernels["shifted"]
    (taken,) = {tuple(ds) for ds in meta.dtypes.values()}
    assert "f16" in taken and not {"i8", "u8", "i16", "bool"} & set(taken)
    tb.translate(tmp_path / "moved.py", runtime_path=RUNTIME_CRATE, dtypes={"x": ["int32"], "y": ["int32"]})
    with pytest.raises(tb.TranslationError, match=r"moved.py:6:9: cutile 0.5.0 makes no constant of i8, which this "
                                                  r"kernel needs \(a zero padding\)"):
        tb.translate(tmp_path / "moved.py", runtime_path=RUNTIME_CRATE, dtypes={"x": ["int8"], "y": ["int8"]})


def test_computed_arrays_get_a_variant_per_family_of_dtypes():
    """Arrays a kernel computes with take f32, f16 and bf16 as translated, and the kernel is
    translated once more for f64 and once for integers, each checked against cuTile Python at its
    dtypes: an f64 variant's literals are f64, of the values cuTile Python gives them (0.1 as the
    f32 nearest it), a
    float literal leaves the integers out, and only integers of 32 and 64 bits are offered (cutile
    0.5.0's JIT computes with no 16-bit one and makes no 8-bit constant)."""
    crate = tb.translate(REPO / "tests" / "fixtures" / "any_dtype.py", runtime_path=RUNTIME_CRATE)
    rust, meta = crate.files["src/tile_kernels.rs"], ExtensionMetadata.from_json(crate.files["tilebridge.json"])
    assert "broadcast_scalar(0.10000000149011612f64, " in function_text(rust, "tenth_added_f64")
    assert "fn tenth_added_integers" not in rust and "fn mixed_sum_integers" in rust
    assert sorted(meta.kernels["tenth_added"].dtypes["E0"]) == ["bf16", "f16", "f32", "f64"]
    assert meta.kernels["mixed_sum"].dtypes["E0"] == ["f32", "f16", "bf16", "f64", "i32", "i64", "u32", "u64"]
    # moved arrays take every dtype as before: no variant
    assert "fn tile_copy_f64" not in rust and "i16" in meta.kernels["tile_copy"].dtypes["E0"]


INTEGER_OPS_SOURCE = (
    "import cuda.tile as ct\n\n\n@ct.kernel\n"
    "def int_ops(a, b, c, q, T: ct.Constant[int]):\n"
    "    x = ct.load(a, index=(ct.bid(0),), shape=(T,))\n"
    "    y = ct.load(b, index=(ct.bid(0),), shape=(T,))\n"
    "    ct.store(c, index=(ct.bid(0),), tile=ct.maximum(-x, y))\n"
    "    ct.store(q, index=(ct.bid(0),), tile=ct.exp(x / y).astype(q.dtype))\n")


def test_integers_of_any_family_compute_with_integer_operations(tmp_path):
    """Tiles of integers at every launch, stated or a family's, negate and take maxima as integers
    (`negi`, `maxi`: `negf` and `maxf` on integers are no Tile IR tileiras takes) and divide and
    exponentiate in f32 as cuTile Python does; and a recorded launch at integers builds the
    integers' variant, never the float translation (whose operations are floats')."""
    import json

    from tilebridge.translator import lower_checked, recorded_launches

    (tmp_path / "int_ops.py").write_text(INTEGER_OPS_SOURCE)
    rust = tb.translate(tmp_path / "int_ops.py", runtime_path=RUNTIME_CRATE).files["src/tile_kernels.rs"]
    for text in (function_text(rust, "int_ops_integers"),
                 tb.translate(tmp_path / "int_ops.py", runtime_path=RUNTIME_CRATE,
                              dtypes={n: ["int8"] for n in "abc"}).files["src/tile_kernels.rs"]):
        assert "negi(" in text and "maxi(" in text and "negf(" not in text and "maxf(" not in text
        assert re.search(r"Tile<f32, \{ \[T\] \}> = convert_tile\(x\)", text), text
    assert "maxf(" in function_text(rust, "int_ops") and "negf(" in function_text(rust, "int_ops")
    launch = lambda dtype: {"file": "int_ops.py", "kernel": "int_ops", "hints": {}, "args": {  # noqa: E731
        **{n: {"dtype": dtype, "shape": [256], "strides": [1]} for n in "abcq"}, "T": 64}}
    log = tmp_path / "launches.jsonl"
    log.write_text("\n".join(json.dumps(launch(d)) for d in ("int32", "float16")) + "\n")
    kernels = {k.name: k for k in lower_checked(frontend.load_all(tmp_path / "int_ops.py")[0], None, False,
                                                recorded_launches.read([log]))}
    assert [s.generics[0] for s in kernels["int_ops"].shipments] == ["f16"]
    assert [s.generics[0] for s in kernels["int_ops_integers"].shipments] == ["i32"]
    assert "i32" not in kernels["int_ops"].dtype_classes[0].allowed


def test_a_reduction_or_scan_of_8_bit_integers_is_refused(tmp_path):
    """cutile 0.5.0 makes no 8-bit constant ("Unsupported constant type i8 zero" at the first
    launch), and reduces and scans from one: arrays stated so are refused at translation."""
    for call, what in (("ct.sum(x, axis=0, keepdims=True)", "a reduction's identity"),
                       ("ct.max(x, axis=0, keepdims=True)", "a reduction's identity"),
                       ("ct.cumsum(x, axis=0)", "a scan's zero")):
        (tmp_path / "r.py").write_text(
            "import cuda.tile as ct\n\n\n@ct.kernel\ndef r(a, c, T: ct.Constant[int]):\n"
            "    x = ct.load(a, index=(0,), shape=(T,))\n"
            f"    ct.store(c, index=(0,), tile={call})\n")
        with pytest.raises(tb.TranslationError, match=rf"r.py:7:\d+: cutile 0.5.0 makes no constant of i8, which "
                                                      rf"this kernel needs \({what}\)"):
            tb.translate(tmp_path / "r.py", runtime_path=RUNTIME_CRATE, dtypes={"a": ["int8"], "c": ["int8"]})
        tb.translate(tmp_path / "r.py", runtime_path=RUNTIME_CRATE, dtypes={"a": ["int32"], "c": ["int32"]})


def test_an_integer_literal_with_integers_of_every_width_is_exact(tmp_path):
    """The integers' variant makes a literal as a float converted to the launch's integer type: in
    f32 where that holds it exactly (up to 2**24), else in f64 (16777217 in f32 is 16777216)."""
    (tmp_path / "big.py").write_text(
        "import cuda.tile as ct\n\n\n@ct.kernel\ndef plus(a, c, T: ct.Constant[int]):\n"
        "    x = ct.load(a, index=(ct.bid(0),), shape=(T,))\n"
        "    ct.store(c, index=(ct.bid(0),), tile=x + 16777217 + 16777216 + 3)\n")
    text = function_text(tb.translate(tmp_path / "big.py", runtime_path=RUNTIME_CRATE).files["src/tile_kernels.rs"],
                         "plus_integers")
    assert "broadcast_scalar(16777217.0f64, " in text and "broadcast_scalar(16777216.0f32, " in text
    assert "broadcast_scalar(3.0f32, " in text


def test_int64_literals_beyond_int32_are_built_from_pieces():
    """cutile 0.5.0's JIT parses every integer literal as an i32: an i64 beyond that range is a sum
    of products of i32-sized literals, whatever its value (the type's extremes included)."""
    from tilebridge.translator.emit.rust_expr import rust_expr
    from tilebridge.translator.rust_syntax import int_literal

    for value in (2 ** 31, -2 ** 31, 2 ** 32 - 1, 2 ** 40 + 12345, -(2 ** 40) - 7, 2 ** 63 - 1, -2 ** 63):
        text = rust_expr(int_literal(value, "i64"))
        literals = [int(t) for t in __import__("re").findall(r"-?\d+(?=i64)", text)]
        assert all(-2 ** 31 < v < 2 ** 31 for v in literals), text
        assert eval(text.replace("i64", "")) == value, text
    assert rust_expr(int_literal(7, "i64")) == "7i64"
    assert rust_expr(int_literal(-2 ** 31, "i32")) == "-2147483647i32 - 1i32"


def test_a_parameter_named_like_a_launcher_argument_is_refused(tmp_path):
    """A launcher takes `stream=`, `sync=`, `hints=` and `after=` for itself: a kernel parameter
    of one of those names would be a second Rust argument of that name (a compile error)."""
    (tmp_path / "named.py").write_text(
        "import cuda.tile as ct\n\n\n@ct.kernel\n"
        "def scale(x, y, after: float, TILE: ct.Constant[int]):\n"
        "    t = ct.load(x, index=(ct.bid(0),), shape=(TILE,))\n"
        "    ct.store(y, index=(ct.bid(0),), tile=t * after)\n")
    with pytest.raises(tb.TranslationError, match=r"named.py:5: kernel `scale` has a parameter named `after`, "
                                                  r"which its launcher takes for itself"):
        tb.translate(tmp_path / "named.py", runtime_path=RUNTIME_CRATE)


def test_a_kernel_a_factory_makes_reads_what_it_closes_over(tmp_path):
    """A kernel defined inside a function (a factory's, a test's) and the `ct.kernel(f)` call form:
    the variables it closes over are read as cuTile Python reads them (compile-time values, here a
    float); an error inside it names the column in the file, not in the dedented source."""
    import importlib.util

    source = tmp_path / "factory.py"
    source.write_text("import cuda.tile as ct\n\n\ndef make(scale):\n    @ct.kernel\n"
                      "    def scaled(x, y, T: ct.Constant[int]):\n"
                      "        t = ct.load(x, index=(ct.bid(0),), shape=(T,))\n"
                      "        ct.store(y, index=(ct.bid(0),), tile=t * scale)\n    return scaled\n\n\n"
                      "def plain():\n    def body(x, y, T: ct.Constant[int]):\n"
                      "        ct.store(y, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(T,)) + nope)\n"
                      "    return ct.kernel(body)\n")
    spec = importlib.util.spec_from_file_location("factory", source)
    factory = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(factory)
    crate = tb.translate(factory.make(0.5), runtime_path=RUNTIME_CRATE)
    assert "0.5f32" in crate.files["src/tile_kernels.rs"]
    with pytest.raises(tb.TranslationError) as info:
        tb.translate(factory.plain(), runtime_path=RUNTIME_CRATE)
    assert info.value.location == "factory.py:14:91" and "unknown name" in str(info.value)


@pytest.mark.parametrize("body, refused", [
    # published: the data stored, then a flag released (cuTile Python orders the store before it)
    ("ct.store(data, index=(ct.bid(0),), tile=t)\n    ct.atomic_xchg(flag, (0,), 1, memory_order=ct.MemoryOrder.RELEASE)",
     "order_token"),
    # the default order, ACQ_REL, releases too
    ("ct.store(data, index=(ct.bid(0),), tile=t)\n    ct.atomic_add(flag, (0,), 1)", "order_token"),
    # acquired (its old value read), then another array accessed (the other way round is fine: below)
    ("old = ct.atomic_cas(flag, (0,), 1, 0, memory_order=ct.MemoryOrder.ACQUIRE)\n"
     "    ct.store(data, index=(ct.bid(0),), tile=t + old)", "order_token"),
    # in a loop around both, an acquire comes after the other access too
    ("for i in range(2):\n        ct.store(data, index=(ct.bid(0),), tile=t)\n"
     "        old = ct.atomic_cas(flag, (0,), 1, 0, memory_order=ct.MemoryOrder.ACQUIRE)", "order_token"),
    # a padded load of it too, through a view of its own
    ("old = ct.atomic_cas(flag, (0,), 1, 0, memory_order=ct.MemoryOrder.ACQUIRE)\n"
     "    ct.store(data, index=(ct.bid(0),), tile=ct.load(data, index=(ct.bid(0),), shape=(16,), "
     "padding_mode=ct.PaddingMode.NEG_INF) + old)", "order_token"),
    # no block can tell: an acquire whose old value goes unread; a release after loads only (a reduction)
    ("ct.atomic_cas(flag, (0,), 1, 0, memory_order=ct.MemoryOrder.ACQUIRE)\n    ct.store(data, index=(ct.bid(0),), tile=t)",
     None),
    ("ct.atomic_add(flag, (0,), ct.sum(ct.load(data, index=(ct.bid(0),), shape=(16,))))", None),
    ("ct.store(data, index=(ct.bid(0),), tile=t)\n    ct.atomic_cas(flag, (0,), 1, 0, memory_order=ct.MemoryOrder.ACQUIRE)",
     None),
    ("ct.atomic_xchg(flag, (0,), 1, memory_order=ct.MemoryOrder.RELEASE)\n    ct.store(data, index=(ct.bid(0),), tile=t)",
     None),
    ("ct.store(data, index=(ct.bid(0),), tile=t)\n    ct.atomic_add(flag, (0,), 1, memory_order=ct.MemoryOrder.RELAXED)",
     None),
    # through pointers: every pointer access in one token order (a split-k's "last block sums up")
    ("ct.scatter(data, ct.arange(16, dtype=ct.int32), t)\n    ct.atomic_xchg(flag, (0,), 1, "
     "memory_order=ct.MemoryOrder.RELEASE)", "order_token"),
    ("old = ct.atomic_add(flag, (0,), 1)\n    if old == 3:\n"
     "        ct.scatter(data, ct.arange(16, dtype=ct.int32), ct.gather(data, ct.arange(16, dtype=ct.int32)) + t)",
     "order_token"),
    ("only_written", None),
])
def test_atomics_that_order_other_arrays(tmp_path, body, refused):
    """cuTile Python orders every access after an acquiring atomic, and a releasing one after every
    access before it (its token order joins them). Where an acquire whose old value is read has
    another array's access after it, or a release a store into another array before it: through
    pointers, every pointer access of the kernel goes in one token order (`order_token`), and so
    do the tile accesses of an array it reads and writes (through views made where they are used,
    from that token). An access the order could not reach would be refused rather than translated
    out of that order (`kernel.check_memory_orders`). The accesses of an array the kernel does not both read and
    write need no order: no block sees them (`only_written`)."""
    if body == "only_written":
        (tmp_path / "only_written.py").write_text(
            "import cuda.tile as ct\n\n\n@ct.kernel\ndef k(data, out, flag):\n"
            "    old = ct.atomic_cas(flag, (0,), 1, 0, memory_order=ct.MemoryOrder.ACQUIRE)\n"
            "    ct.store(out, index=(ct.bid(0),), tile=ct.load(data, index=(ct.bid(0),), shape=(16,)) + old)\n")
        assert "order_token" not in tb.translate(tmp_path / "only_written.py", runtime_path=RUNTIME_CRATE).files[
            "src/tile_kernels.rs"]
        return
    # data is read and written (blocks see each other's accesses of it), through tiles or pointers
    read = ("ct.gather(data, ct.arange(16, dtype=ct.int32))" if "scatter" in body else
            "ct.load(data, index=(ct.bid(0),), shape=(16,))")
    (tmp_path / "ordered.py").write_text(
        "import cuda.tile as ct\n\n\n@ct.kernel\ndef ordered(data, flag):\n"
        f"    t = {read}\n    " + body + "\n")
    if refused in (None, "order_token"):
        body = tb.translate(tmp_path / "ordered.py", runtime_path=RUNTIME_CRATE).files["src/tile_kernels.rs"]
        assert ("order_token" in body) == (refused is not None), body
        return
    with pytest.raises(tb.TranslationError, match=r"ordered\.py:\d+:\d+: .*" + re.escape(refused)):
        tb.translate(tmp_path / "ordered.py", runtime_path=RUNTIME_CRATE)


def test_an_arrays_rank_from_a_gather_at_an_index_bound_to_a_name(tmp_path):
    """`x.shape[0]` before any access: the rank comes from the gather further on, whose index is a
    name bound to one tile (cuTile Python's MoE sample reads `sorted_token_ids.shape[0]` so); a name
    bound to a tuple elsewhere is not taken for one index (the rank then disagrees and is refused)."""
    source = """import cuda.tile as ct


def both(T):
    r = ct.arange(T, dtype=ct.int32)
    return (r, r)


@ct.kernel
def counted(x, y, T: ct.Constant[int]):
    n = x.shape[0]
    offs = ct.bid(0) * T + ct.arange(T, dtype=ct.int32)
    ct.store(y, index=(ct.bid(0),), tile=ct.gather(x, offs) + n)
"""
    (tmp_path / "counted.py").write_text(source)
    assert "fn counted<" in tb.translate(tmp_path / "counted.py", runtime_path=RUNTIME_CRATE).files["src/tile_kernels.rs"]
    (tmp_path / "pair.py").write_text(source.replace("offs = ct.bid(0) * T + ct.arange(T, dtype=ct.int32)",
                                                     "offs = both(T)").replace("tile=ct.gather(x, offs) + n",
                                                                               "tile=ct.gather(x, offs)"))
    with pytest.raises(tb.TranslationError, match=r"pair\.py:13:\d+: array 'x' is used with rank 2 here and 1"):
        tb.translate(tmp_path / "pair.py", runtime_path=RUNTIME_CRATE)


def test_extension_names_are_identifiers_that_start_with_a_letter(tmp_path, capsys):
    """A file named as puzzles are (`06-softmax.py`) gets a module name Python, Rust and pip take
    (it was `06_softmax_rs`, which rustfmt rejected: a tilebridge bug); a name given that is not
    one is refused before anything is translated."""
    from tilebridge.cli import main
    from tilebridge.translator import default_module_name

    assert default_module_name(tmp_path / "06-softmax.py") == "tb_06_softmax_rs"
    assert default_module_name(tmp_path / "_private.py") == "tb_private_rs"
    assert default_module_name(tmp_path / "gemm-v2.py") == "gemm_v2_rs"
    (tmp_path / "06-copy.py").write_text(
        "import cuda.tile as ct\n\n\n@ct.kernel\ndef copy(x, y):\n"
        "    ct.store(y, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(16,)))\n")
    crate = tb.translate(tmp_path / "06-copy.py", runtime_path=RUNTIME_CRATE)
    assert "fn tb_06_copy_rs(" in crate.files["src/lib.rs"]
    for bad in ("9lives", "_hidden", "with-dash", "class"):
        with pytest.raises(ValueError, match="not an identifier that starts with a letter"):
            tb.translate(tmp_path / "06-copy.py", module=bad, runtime_path=RUNTIME_CRATE)
    with pytest.raises(SystemExit):
        main(["translate", str(tmp_path / "06-copy.py"), "-m", "9lives", "-o", str(tmp_path / "out")])
    assert "not an identifier that starts with a letter" in capsys.readouterr().err


def test_conversions_of_literals_fold(tmp_path):
    """`float("-inf")`, `int(2.7)`, `bool(0)` of literals are their Python values (a puzzle's chunked
    softmax starts its maximum at `float('-inf')`); of a literal Python cannot convert, refused."""
    kernel = ("import cuda.tile as ct\n\n\n@ct.kernel\ndef k(x, y):\n"
              "    t = ct.full((16,), {value}, dtype=ct.float32)\n"
              "    ct.store(y, index=(ct.bid(0),), tile=ct.maximum(t, ct.load(x, index=(ct.bid(0),), shape=(16,))))\n")
    (tmp_path / "folded.py").write_text(kernel.format(value="float('-inf') if bool(0) else float(int(2.7))"))
    body = tb.translate(tmp_path / "folded.py", runtime_path=RUNTIME_CRATE).files["src/tile_kernels.rs"]
    assert "2.0f32" in body and "INFINITY" not in body, body
    (tmp_path / "bad.py").write_text(kernel.format(value="float('minus infinity')"))
    with pytest.raises(tb.TranslationError, match=r"bad\.py:6:\d+: float\(\) of this literal fails in Python too"):
        tb.translate(tmp_path / "bad.py", runtime_path=RUNTIME_CRATE)


def test_a_helpers_result_after_an_if_of_two_types_says_why(tmp_path):
    """A helper whose `if` on a runtime value binds a name to tiles of two shapes, read after it
    (cuTile Python rejects a runtime `if` whose branches type a name differently): the error says
    so at the helper's return. On ct.Constant values it translates (`test_build`'s
    `test_a_helpers_result_follows_its_paths`)."""
    (tmp_path / "paths.py").write_text("""import cuda.tile as ct


def reduced(t, n):
    N, D = t.shape
    if n >= 16:
        r = ct.sum(t, axis=0, keepdims=True)
    else:
        r = ct.sum(t, axis=0)
    acc = r * 2.0
    return acc


@ct.kernel
def k(x, y, n: int, N: ct.Constant[int], D: ct.Constant[int]):
    t = ct.load(x, index=(0, 0), shape=(N, D))
    ct.store(y, index=(0,), tile=ct.reshape(reduced(t, n), (D,)))
""")
    with pytest.raises(tb.TranslationError, match=r"paths\.py:11:12: 'acc' has no one value at the return"):
        tb.translate(tmp_path / "paths.py", runtime_path=RUNTIME_CRATE)


def test_a_compile_time_value_chosen_per_launch(tmp_path):
    """`rm = ct.RoundingMode.APPROX if approx else None` with `approx` a ct.Constant[bool] (as
    cutile-transformers' silu_and_mul writes it): the statement in each branch of an `if` on
    `approx`, the rest of the kernel down each path, so each launch's rounding mode is its own."""
    (tmp_path / "chosen.py").write_text("""import cuda.tile as ct


@ct.kernel
def silu(x, y, approx: ct.Constant[bool], T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,)).astype(ct.float32)
    rounding_mode = ct.RoundingMode.APPROX if approx else None
    s = ct.truediv(1.0, ct.add(1.0, ct.exp(-t)), flush_to_zero=True, rounding_mode=rounding_mode)
    ct.store(y, index=(ct.bid(0),), tile=(t * s).astype(y.dtype))
""")
    body = " ".join(tb.translate(tmp_path / "chosen.py", runtime_path=RUNTIME_CRATE).files["src/tile_kernels.rs"].split())
    approx, default = body[body.index("if approx {"):].split("} else {", 1)
    assert "rounding::Approx" in approx and "rounding::Approx" not in default and "y.store(" in default, body


def test_functions_called_through_names_and_items(tmp_path):
    """A function called through a local name (`f = ct.exp`) or an item of a module's tuple
    (`FNS[1]`) is that function (a subscript call was an internal AttributeError); a call of
    what is not a function is refused at it."""
    (tmp_path / "called.py").write_text("""import cuda.tile as ct

FNS = (ct.exp, ct.log)


@ct.kernel
def k(x, y):
    t = ct.load(x, index=(ct.bid(0),), shape=(16,))
    f = ct.exp
    ct.store(y, index=(ct.bid(0),), tile=FNS[1](f(t)))
""")
    body = tb.translate(tmp_path / "called.py", runtime_path=RUNTIME_CRATE).files["src/tile_kernels.rs"]
    assert "log(exp(t)" in " ".join(body.split()), body
    (tmp_path / "not_called.py").write_text((tmp_path / "called.py").read_text().replace("FNS[1](f(t))", "t(t)"))
    with pytest.raises(tb.TranslationError, match=r"not_called\.py:10:\d+: this call is not supported"):
        tb.translate(tmp_path / "not_called.py", runtime_path=RUNTIME_CRATE)


def test_a_flag_parameter_with_a_default(tmp_path):
    """cutile-transformers' matmul: `swizzle=ct.Constant[bool]`, a default never read (`ct.launch`
    passes every parameter, and so must a call of the launcher), the parameter unannotated and
    used only as an `if` condition: a scalar, an int as cuTile Python takes it (a Python bool is one)."""
    (tmp_path / "flagged.py").write_text("""import cuda.tile as ct


@ct.kernel
def k(x, y, T: ct.Constant[int], swizzle=ct.Constant[bool]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    if swizzle:
        t = t * 2.0
    ct.store(y, index=(ct.bid(0),), tile=t)
""")
    crate = tb.translate(tmp_path / "flagged.py", runtime_path=RUNTIME_CRATE)
    body = " ".join(crate.files["src/tile_kernels.rs"].split())
    assert "swizzle: i32" in body and "if swizzle != 0i32 {" in body, body
    (tmp_path / "keyword.py").write_text("import cuda.tile as ct\n\n\n@ct.kernel\ndef k(x, *, T: ct.Constant[int]):\n"
                                         "    ct.store(x, index=(0,), tile=ct.zeros((T,), dtype=ct.float32))\n")
    with pytest.raises(tb.TranslationError, match=r"keyword\.py:5:1: kernel parameters must be plain positional"):
        tb.translate(tmp_path / "keyword.py", runtime_path=RUNTIME_CRATE)


def test_the_safety_verdict_of_every_fixture_kernel_is_its_code_s():
    """Every kernel of the fixtures is reported safe exactly where its generated entry function has
    no `unsafe` block, and each unsafe one says why (a `**` of a float tile by an integer, Tile IR's
    `fpowi`, was reported safe)."""
    for stem in ("checked_ops", "control_flow", "gathers", "language", "math_ops", "mixed_dtypes", "unchecked_stores",
                 "any_dtype"):
        path = REPO / "tests" / "fixtures" / f"{stem}.py"
        files = generated(path)
        kernels = ExtensionMetadata.from_json(files["tilebridge.json"]).kernels
        entries = re.findall(r"^    fn (\w+)[<(]", files["src/tile_kernels.rs"], re.M)
        for name, kernel in kernels.items():
            # a kernel with unannotated scalars has one entry per type they may have (`name_s_i32`)
            mine = [e for e in entries if e == name or (e.startswith(f"{name}_") and e not in kernels)]
            blocks = [coverage.unsafe_blocks(files["src/tile_kernels.rs"], e) for e in mine]
            assert mine and min(blocks) >= 0 and kernel.safe == (sum(blocks) == 0), (path.name, name, blocks)
            assert kernel.safe or kernel.unsafe_reasons, (path.name, name)
    powers = ExtensionMetadata.from_json(generated(REPO / "tests" / "fixtures" / "language.py")["tilebridge.json"])
    assert any("fpowi" in r for r in powers.kernels["powers"].unsafe_reasons)


def test_float_literals_at_f64_hold_the_f32_values_cuTile_Python_gives_them(tmp_path):
    """cuTile Python makes a Python float an f32 before it meets a dtype: at f64 the literal is the
    f32 nearest it (0.1 is 0.10000000149011612, 1e-50 is 0), while an integer stays exact. Every
    f64 constant of the Rust kernels (an f64 tile, an f64 array's variant, `ct.full`) is one of
    cuTile Python's Tile IR at the same specialization, and no other."""
    (tmp_path / "literals.py").write_text('''
import cuda.tile as ct


@ct.kernel
def widened(x, y, T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,)).astype(ct.float64)
    ct.store(y, index=(ct.bid(0),), tile=t * 0.1 + 0.3)


@ct.kernel
def tenths(x, y, T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    ct.store(y, index=(ct.bid(0),), tile=t * 0.1 + 16777217 + 1e-50)


@ct.kernel
def filled(y, T: ct.Constant[int]):
    ct.store(y, index=(ct.bid(0),), tile=ct.full((T,), 0.1, dtype=ct.float64))
''')
    files = generated(tmp_path / "literals.py")
    kernels = frontend.import_file(tmp_path / "literals.py")
    source = files["src/tile_kernels.rs"]
    for name, rust_name, arrays in (("widened", "widened", ["f32", "f64"]), ("tenths", "tenths_f64", ["f64", "f64"]),
                                    ("filled", "filled", ["f64"])):
        ours = {float(v) for v in re.findall(r"([-\d.e]+)f64\b", function_text(source, rust_name))}
        signature = [("array", d, [1]) for d in arrays] + [("constant", 256)]
        ir = coverage.python_tile_ir(getattr(kernels, name), coverage.Specialization([], [], signature))
        theirs = {struct.unpack(">d", bytes.fromhex(v[2:]))[0] if v.startswith("0x") else float(v)
                  for v in re.findall(r"constant <f64: ([^>]+)>", ir)}
        assert ours and ours == theirs, (name, ours, theirs)
    assert 0.10000000149011612 in ours


def test_a_sum_fuses_the_product_cuTile_Python_fuses(tmp_path):
    """cuTile Python's rewrite fuses a sum's left operand where that is a product, and only that one:
    a left product with another use leaves the sum unfused even where the right operand is a
    product too (the recurrent gated delta rule's `State = State + KeyCol * Delta`, with `State`
    a product read twice: fused, it rounded once where cuTile Python rounds twice). The fma count
    of each kernel is cuTile Python's at the same specialization."""
    (tmp_path / "sums.py").write_text('''
import cuda.tile as ct


@ct.kernel
def left_used_twice(x, y, T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    s = t * 0.5
    ct.store(y, index=(ct.bid(0),), tile=(s + t * t) * s)


@ct.kernel
def left_used_once(x, y, T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    s = t * 0.5
    ct.store(y, index=(ct.bid(0),), tile=s + t * t)


@ct.kernel
def right_named(x, y, T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    s = t * 0.5
    ct.store(y, index=(ct.bid(0),), tile=(t + 1.0) + s)


@ct.kernel
def carried(x, y, T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    acc = t * 0.5
    for i in range(4):
        acc = acc + t * t
    ct.store(y, index=(ct.bid(0),), tile=acc)
''')
    files = generated(tmp_path / "sums.py")
    kernels = frontend.import_file(tmp_path / "sums.py")
    source = files["src/tile_kernels.rs"]
    spec = coverage.Specialization([], [], [("array", "f32", [1]), ("array", "f32", [1]), ("constant", 256)])
    counts = {}
    for name in ("left_used_twice", "left_used_once", "right_named", "carried"):
        ours = function_text(source, name).count("fma(")
        theirs = len(re.findall(r"= fma ", coverage.python_tile_ir(getattr(kernels, name), spec)))
        counts[name] = (ours, theirs)
    # (`carried`: in the loop `acc` is the value the loop carries, no product: the right one fuses)
    assert counts == {"left_used_twice": (0, 0), "left_used_once": (1, 1), "right_named": (1, 1),
                      "carried": (1, 1)}, counts
