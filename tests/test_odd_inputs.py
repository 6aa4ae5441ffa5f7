"""Translation never crashes: odd files and kernels give a `TranslationError` that says where and
what, or translate; `--partial` keeps every kernel it can. Any other exception is a tilebridge bug."""

import textwrap

import pytest

import tilebridge as tb
from tilebridge.builder.wheel import RUNTIME_CRATE

pytest.importorskip("cuda.tile")

LOAD_STORE = "    ct.store(x, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(TILE,)) + 1)\n"
GOOD = "@ct.kernel\ndef good(x, TILE: ct.Constant[int]):\n" + LOAD_STORE

# name -> (file text, what the error says: a regex, or None where the file translates)
CASES = {
    "syntax_error": ("def broken(:\n", r"syntax_error\.py:1:\d+: invalid Python"),
    "no_kernels": ("x = 1\n", r"no @ct.kernel functions found in no_kernels\.py"),
    "empty_file": ("", r"no @ct.kernel functions found"),
    "raises_at_import": ("import cuda.tile as ct\nraise RuntimeError('boom')\n" + GOOD, None),
    "exits_at_import": ("import sys\nimport cuda.tile as ct\nsys.exit(3)\n" + GOOD, None),
    "skips_at_import": ("import pytest\npytest.skip('no GPU', allow_module_level=True)\nimport cuda.tile as ct\n"
                        + GOOD, None),
    "missing_package": ("import cuda.tile as ct\nimport no_such_package_here\n" + GOOD, None),
    "missing_name": ("import cuda.tile as ct\nfrom cuda.tile._datatype import no_such_name\n" + GOOD, None),
    "kernel_in_function": ("import cuda.tile as ct\n\ndef make():\n" + textwrap.indent(GOOD, "    ")
                           + "    return good\n", r"inside functions or classes.*good \(line 5, inside make\)"),
    "unknown_name": ("import cuda.tile as ct\n@ct.kernel\ndef k(x, TILE: ct.Constant[int]):\n"
                     "    t = ct.load(x, index=(ct.bid(0),), shape=(TILE,))\n    ct.store(x, index=(ct.bid(0),), "
                     "tile=t * NOWHERE)\n", r"unknown_name\.py:5:\d+: unknown name: `NOWHERE`"),
    "empty_gather_index": ("import cuda.tile as ct\n@ct.kernel\ndef k(x, y):\n    t = ct.gather(x, ())\n"
                           "    ct.scatter(y, (), t)\n", r"empty_gather_index\.py:4:\d+: ct.gather and ct.scatter "
                                                        r"take one index per axis"),
    "arange_bool": ("import cuda.tile as ct\n@ct.kernel\ndef k(x, TILE: ct.Constant[int]):\n"
                    "    ct.store(x, index=(ct.bid(0),), tile=ct.arange(TILE, dtype=ct.bool_))\n",
                    r"arange_bool\.py:4:\d+: ct.arange of dtype bool is not supported yet"),
    "unregistered_op": ("import cuda.tile as ct\n@ct.kernel\ndef k(x, TILE: ct.Constant[int]):\n"
                        "    t = ct.load(x, index=(ct.bid(0),), shape=(TILE,))\n    ct.no_such_op(t)\n",
                        r"unregistered_op\.py:5:\d+: unknown"),
    # cuTile Python takes an array whatever a plain annotation says: `x: torch.Tensor` is an array
    # (it was dropped silently when torch was not installed); another unknown annotation is refused.
    "torch_annotation": ("import cuda.tile as ct\nimport torch\n@ct.kernel\ndef k(x: torch.Tensor, TILE: ct.Constant[int]):\n"
                         + LOAD_STORE, None),
    "unknown_annotation": ("import cuda.tile as ct\nimport torch\n@ct.kernel\ndef k(x: torch.Size, TILE: ct.Constant[int]):\n"
                           + LOAD_STORE, r"unknown_annotation\.py:4:\d+: unsupported parameter annotation: `x: torch.Size`"),
    "star_args": ("import cuda.tile as ct\n@ct.kernel\ndef k(*xs):\n    pass\n", r"star_args\.py:3:\d+: kernel "
                                                                                  r"parameters cannot use \*args"),
    # Module-level host code unpacking what only running the file would make (`torch.randn(*shape)`
    # where `shape` is unknown): the translation hung, iterating the unknown value forever.
    "unpacks_unknowns_at_import": ("import cuda.tile as ct\nimport torch\nM, N = (8, 64)\nshape = (M, unknown)\n"
                                   "q = torch.randn(*shape)\na, b = q.chunk(2)\n" + GOOD, None),
    # constants unpacked from a tuple at module level are known to kernels, the file read without
    # running it (it imports what is missing)
    "unpacked_constants": ("import cuda.tile as ct\nimport no_such_package_here\nW, (H, D) = 2, (3, 4)\n@ct.kernel\n"
                           "def k(x, TILE: ct.Constant[int]):\n    ct.store(x, index=(ct.bid(0),), "
                           "tile=ct.load(x, index=(ct.bid(0),), shape=(TILE,)) * (W * H + D))\n", None),
    "very_large_kernel": ("import cuda.tile as ct\n@ct.kernel\ndef k(x, TILE: ct.Constant[int]):\n"
                          "    t = ct.load(x, index=(ct.bid(0),), shape=(TILE,))\n" + "    t = t + 1.0\n" * 600
                          + "    ct.store(x, index=(ct.bid(0),), tile=t)\n", None),
}


def write(tmp_path, name: str, text: str):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", sorted(CASES))
def test_odd_file_translates_or_says_why(tmp_path, name):
    text, error = CASES[name]
    path = write(tmp_path, name, text)
    if error is None:
        crate = tb.translate(path, runtime_path=RUNTIME_CRATE)
        assert "src/tile_kernels.rs" in crate.files
    else:
        with pytest.raises(tb.TranslationError, match=error):
            tb.translate(path, runtime_path=RUNTIME_CRATE)


def test_not_utf8(tmp_path):
    path = tmp_path / "latin.py"
    path.write_bytes(b"# caf\xe9\nimport cuda.tile as ct\n")
    with pytest.raises(tb.TranslationError, match=r"latin\.py:1:1: the file is not UTF-8 text \(byte 5: 0xe9\)"):
        tb.translate(path, runtime_path=RUNTIME_CRATE)


def test_the_same_failing_file_twice_fails_the_same_way(tmp_path):
    """A failed read leaves nothing cached that a second translation in the process would take."""
    path = write(tmp_path, "twice", "import cuda.tile as ct\n@ct.kernel\ndef k(x, TILE: ct.Constant[int]):\n"
                                    "    ct.store(x, index=(ct.bid(0),), tile=NOWHERE)\n")
    messages = []
    for _ in range(2):
        with pytest.raises(tb.TranslationError) as e:
            tb.translate(path, runtime_path=RUNTIME_CRATE)
        messages.append(str(e.value))
    assert messages[0] == messages[1]


def test_partial_keeps_every_kernel_it_can(tmp_path):
    bad = ("@ct.kernel\ndef bad(x, y):\n    t = ct.gather(x, ())\n    ct.scatter(y, (), t)\n\n\n"
           "@ct.kernel\ndef worse(x, TILE: ct.Constant[int]):\n    ct.no_such_op(x)\n\n\n")
    path = write(tmp_path, "mixed", "import cuda.tile as ct\n\n\n" + bad + GOOD)
    crate = tb.translate(path, runtime_path=RUNTIME_CRATE, partial=True)
    assert "fn good" in crate.files["src/lib.rs"]
    assert [s.split(":")[0] for s in crate.skipped] == ["bad", "worse"]
    assert all("mixed.py:" in s for s in crate.skipped), crate.skipped



def test_partial_keeps_the_others_when_one_kernel_hits_a_bug(tmp_path, monkeypatch):
    """An internal error (a tilebridge bug) in one kernel's translation leaves that kernel out, said
    as a bug with its place, and keeps the rest; without --partial it propagates as the bug it is."""
    from tilebridge.translator import lower

    real = lower.lower_kernel

    def buggy(src, *args, **kwargs):
        if src.name == "first":
            raise AttributeError("'NoneType' object has no attribute 'expr'")
        return real(src, *args, **kwargs)

    monkeypatch.setattr(lower, "lower_kernel", buggy)
    path = write(tmp_path, "bug", "import cuda.tile as ct\n\n\n" + GOOD.replace("good", "first") + "\n\n" + GOOD)
    crate = tb.translate(path, runtime_path=RUNTIME_CRATE, partial=True)
    assert "fn good" in crate.files["src/lib.rs"] and "fn first" not in crate.files["src/lib.rs"]
    assert crate.skipped == ["first: bug.py:5: internal error (a tilebridge bug): AttributeError: 'NoneType' "
                             "object has no attribute 'expr'"]
    with pytest.raises(AttributeError):
        tb.translate(path, runtime_path=RUNTIME_CRATE)


def test_cli_translate_partial_lists_what_it_left_out(tmp_path, capsys):
    from tilebridge.cli import main

    path = write(tmp_path, "mixed", "import cuda.tile as ct\n\n\n@ct.kernel\ndef bad(x, TILE: ct.Constant[int]):\n"
                                    "    ct.no_such_op(x)\n\n\n" + GOOD)
    assert main(["translate", str(path), "--partial", "-o", str(tmp_path / "crate")]) == 0
    printed = capsys.readouterr().out
    assert "left out bad: mixed.py:6:" in printed and "wrote mixed_rs" in printed
    assert (tmp_path / "crate" / "src" / "lib.rs").read_text().count("#[pyfunction]") >= 1
    assert main(["translate", str(path), "-o", str(tmp_path / "crate2")]) != 0
    assert "TranslationError: mixed.py:6:5: unknown function: `ct.no_such_op`" in capsys.readouterr().err
    assert not (tmp_path / "crate2").exists()  # a failed translation writes nothing


@pytest.mark.parametrize("expr, message", [
    ("(-1.5) ** 0.5", "not a real number"),
    ("1.0 / 0", "cannot be computed \\(ZeroDivisionError"),
    ("1 << -1", "cannot be computed \\(ValueError"),
    ("ct.rsqrt(-1)", "ct.rsqrt of -1 is not a real number"),
    ("ct.log(0.0)", "ct.log of 0.0: math domain error"),
])
def test_constant_arithmetic_python_cannot_do_is_a_located_error(tmp_path, expr, message):
    """Found by the fuzz campaign: folding numbers crashed on a complex result."""
    path = tmp_path / "k.py"
    path.write_text("import cuda.tile as ct\n\n\n@ct.kernel\ndef k(x, y, TILE: ct.Constant[int]):\n"
                    f"    c = {expr}\n"
                    "    ct.store(y, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(TILE,)) * c)\n")
    with pytest.raises(tb.TranslationError, match=message) as e:
        tb.translate(path, runtime_path=RUNTIME_CRATE)
    assert e.value.location == "k.py:6:9"
