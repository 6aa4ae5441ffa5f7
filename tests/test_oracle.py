"""The translation held against cuTile Python's own front end (`translator.oracle`): what it rejects
is rejected with its message, a value typed otherwise stops the translation, and every kernel of
the examples, the fixtures and TileGym's release agrees with it."""

import json
import textwrap
from pathlib import Path

import pytest

import tilebridge as tb
from tilebridge.builder.wheel import RUNTIME_CRATE
from tilebridge.translator import frontend, lower, oracle, recorded_launches

REPO = Path(__file__).resolve().parents[1]


def kernel_file(tmp_path: Path, body: str, name: str = "k.py"):
    path = tmp_path / name
    path.write_text("import cuda.tile as ct\n\n\n" + textwrap.dedent(body))
    return frontend.import_file(path)


def checked(crate, name: str) -> str:
    return json.loads(crate.files["tilebridge.json"])["kernels"][name]["checked"]


def named_types(kernel, dtypes) -> dict:
    """The type the lowering gives each name `kernel` assigns, once cuTile Python agreed with every
    compared value at the one specialization `dtypes` leave."""
    src = frontend.load(kernel)
    kir = lower.lower_kernel(src, dtypes)
    assert oracle.check(kir, src).specializations == 1
    return {t.name: t.type for t in kir.typed if not t.name.startswith("@")}


@pytest.mark.parametrize("body, where, message", [
    ("""\
     @ct.kernel
     def twice_reduced(x, y, TILE: ct.Constant[int]):
         t = ct.load(x, index=(ct.bid(0), 0), shape=(TILE, TILE))
         ct.store(y, index=(ct.bid(0), 0), tile=ct.sum(t, axis=(1, 1), keepdims=True))
     """, "k.py:7:44", "Repeated reduction axis 1"),
    ("""\
     @ct.kernel
     def short_mask(x, y):
         idx = ct.arange(8, dtype=ct.int32)
         t = ct.gather(x, idx, mask=ct.arange(4, dtype=ct.int32) < 2)
         ct.scatter(y, idx, t)
     """, "k.py:7:9", "Custom mask shape (4,) is not broadcastable to the index shape (8,)"),
])
def test_what_cutile_python_rejects_is_rejected_with_its_message(tmp_path, body, where, message):
    module = kernel_file(tmp_path, body)
    kernel = next(iter(frontend.kernels_in(module)))
    with pytest.raises(tb.TranslationError) as e:
        tb.translate(kernel, runtime_path=RUNTIME_CRATE)
    assert e.value.location == where
    assert message in str(e.value) and "cuTile Python rejects kernel" in str(e.value)


def test_a_rejection_of_guessed_constants_is_no_verdict(tmp_path):
    """cuTile Python takes `latency` 1 to 10 only: the first guess (64) is rejected for the value,
    the next is accepted and checked."""
    module = kernel_file(tmp_path, """\
        @ct.kernel
        def latency_constant(x, y, TILE: ct.Constant[int], LAT: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(TILE,), latency=LAT)
            ct.store(y, index=(ct.bid(0),), tile=t)
        """)
    crate = tb.translate(module.latency_constant, runtime_path=RUNTIME_CRATE)
    assert checked(crate, "latency_constant").startswith("agrees with cuTile Python")


def test_constant_branches_make_rejections_at_guesses_no_verdict(tmp_path):
    """Which dtype `y` must have depends on a ct.Constant: no guess of it decides the dtypes."""
    module = kernel_file(tmp_path, """\
        @ct.kernel
        def by_flag(x, y, HALF: ct.Constant[int], TILE: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(TILE,)).astype(ct.float32)
            if HALF == 7:
                t = t.astype(ct.float16)
            ct.store(y, index=(ct.bid(0),), tile=t)
        """)
    src = frontend.load(module.by_flag)
    kir = lower.lower_kernel(src, {"x": ["f32"], "y": ["f16"]})
    report = oracle.check(kir, src)
    assert report.specializations == 0 and "which may be the values' fault" in report.unchecked
    assert kir.dtype_combos is None  # nothing left out of the launcher on a guess


def test_a_recorded_launch_cutile_python_rejects_is_left_out_of_the_launcher(tmp_path):
    """An int64 `x` makes `acc` int64 in cuTile Python, which then refuses the loop (the translation
    would meet x's values as int32): the launcher takes int32 only."""
    module = kernel_file(tmp_path, """\
        @ct.kernel
        def widen(x, y, TILE: ct.Constant[int]):
            offs = ct.bid(0) * TILE + ct.arange(TILE, dtype=ct.int32)
            acc = ct.zeros((TILE,), dtype=ct.int32)
            for _ in range(2):
                acc = acc + ct.gather(x, offs)
            ct.scatter(y, offs, acc)
        """)
    src = frontend.load(module.widen)
    kir = lower.lower_kernel(src)  # x an index array: i32 or i64, its values met as the kernel's i32
    array = lambda dtype: {"dtype": dtype, "shape": [64], "strides": [1]}  # noqa: E731
    logged = [recorded_launches.Launch("k.py", "widen", {"x": array(x), "y": array(y), "TILE": 64})
              for x, y in (("int32", "int32"), ("int64", "int32"))]
    recorded_launches.cover(kir, logged)
    assert ("i64", "i32") in kir.launcher_combos()
    report = oracle.check(kir, src, logged)
    assert report.specializations == 1 and "x i64, y i32: Type of `acc` depends on path taken" in report.rejected[0]
    assert kir.launcher_combos() == [("i32", "i32")]


def test_class_by_class_a_rejected_dtype_is_left_out(tmp_path, monkeypatch):
    """The same kernel checked class by class (as one with more combinations than MAX_COMBOS
    would be), at guessed constants (the tile shapes fixed, so that every guess is rejected for one
    reason): the int64 `x` cuTile Python rejects leaves its class."""
    monkeypatch.setattr(oracle, "MAX_COMBOS", 0)
    module = kernel_file(tmp_path, """\
        @ct.kernel
        def widen(x, y, TILE: ct.Constant[int]):
            offs = ct.bid(0) * TILE + ct.arange(64, dtype=ct.int32)
            acc = ct.zeros((64,), dtype=ct.int32)
            for _ in range(2):
                acc = acc + ct.gather(x, offs)
            ct.scatter(y, offs, acc)
        """)
    src = frontend.load(module.widen)
    kir = lower.lower_kernel(src)
    assert ("i64", "i32") in kir.launcher_combos() and kir.dtype_combos is None
    report = oracle.check(kir, src, [])
    assert report.specializations >= 1 and any("x i64" in r for r in report.rejected)
    assert [c.allowed for c in kir.dtype_classes][0] == ["i32"]
    assert all(x == "i32" for x, *_ in kir.launcher_combos()) and kir.launcher_combos()


def test_class_by_class_a_rejection_no_single_dtype_explains_is_refused(tmp_path, monkeypatch):
    """Checked class by class, a combination rejected although each of its dtypes is accepted in
    another one means the classes are not independent: the translation stops rather than guess
    which combinations the launcher may take (cuTile Python's verdict is faked for one of them)."""
    monkeypatch.setattr(oracle, "MAX_COMBOS", 4)  # 9 combinations: 3 to cover each dtype, 1 more
    module = kernel_file(tmp_path, """\
        @ct.kernel
        def cast(x, y, TILE: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(TILE,))
            ct.store(y, index=(ct.bid(0),), tile=t.astype(y.dtype))
        """)
    src = frontend.load(module.cast)
    kir = lower.lower_kernel(src)
    assert len(kir.launcher_combos()) == 9
    from tilebridge.translator import cutile_frontend

    real_signature, real_verdict, checked = cutile_frontend.signature, cutile_frontend.verdict, []

    def verdict(kernel, params):  # params: the specialization's, as `signature` was given them
        combo = tuple(p[1] for p in params if p[0] == "array")
        checked.append(combo)
        if combo[0] != combo[1]:  # the one mixed combination checked: "rejected"
            return cutile_frontend.Rejection("made up for the test", None, 0, 0, "TileTypeError")
        return real_verdict(kernel, real_signature(params))

    monkeypatch.setattr(cutile_frontend, "signature", lambda params: params)
    monkeypatch.setattr(cutile_frontend, "verdict", verdict)
    with pytest.raises(tb.TranslationError, match=r"accepts each of those dtypes with others: its dtype "
                                                  r"combinations cannot be checked class by class"):
        oracle.check(kir, src, [])
    # 4 combinations (the rejected one at each guess of TILE): each dtype, and one mixed
    assert len(set(checked)) == 4 and sum(a != b for a, b in set(checked)) == 1


def test_a_value_typed_otherwise_stops_the_translation(tmp_path, monkeypatch):
    """The f16 matmul's accumulator as tilebridge once had it (f32, where cuTile Python takes f16)."""
    from tilebridge import dtypes

    module = kernel_file(tmp_path, """\
        @ct.kernel
        def mm(a, b, c, T: ct.Constant[int]):
            x = ct.load(a, index=(ct.bid(0), 0), shape=(T, T))
            y = ct.load(b, index=(0, ct.bid(0)), shape=(T, T))
            ct.store(c, index=(ct.bid(0), 0), tile=x @ y)
        """)
    assert tb.translate(module.mm, runtime_path=RUNTIME_CRATE, dtypes={"a": ["f16"], "b": ["f16"]})
    real = dtypes.mma_accumulator
    monkeypatch.setattr(dtypes, "mma_accumulator", lambda d: "f32" if d == "f16" else real(d))
    with pytest.raises(oracle.Disagreement, match=r"tilebridge bug: the accumulator of this mma is f32\[64, 64\] "
                                                  r"in the translation and f16\[64, 64\] in cuTile Python") as e:
        tb.translate(module.mm, runtime_path=RUNTIME_CRATE, dtypes={"a": ["f16"], "b": ["f16"]})
    assert e.value.location == "k.py:8:44"


def test_off_switch(monkeypatch):
    monkeypatch.setenv("TILEBRIDGE_ORACLE", "0")
    crate = tb.translate(REPO / "examples" / "vector_add.py", runtime_path=RUNTIME_CRATE)
    assert checked(crate, "vector_add") == ""


def library_files() -> list[Path]:
    files = sorted((REPO / "examples").glob("*.py")) + sorted((REPO / "tests" / "fixtures").glob("*.py"))
    try:
        from tilebridge.verifier.coverage import library_dir

        files += sorted(p for p in library_dir("tilegym").rglob("*.py") if p.name != "__init__.py")
    except FileNotFoundError:
        pass
    return files


def test_every_kernel_agrees_with_cutile_python():
    """Every kernel tilebridge translates in the examples, the test fixtures and TileGym's release
    (at its recorded launches, and every other dtype combination of its launcher at guessed
    constants): cuTile Python accepts it and types every compared value the same."""
    launches = recorded_launches.read([REPO / "tests" / "data" / "tilegym_launches.json"])
    kernels = specs = values = 0
    for path in library_files():
        try:
            sources = frontend.load_all(path)
        except tb.TranslationError:
            continue  # no module-level kernels
        for src in sources:
            try:
                kir = lower.lower_kernel(src)
                recorded_launches.cover(kir, launches)
            except tb.TranslationError:
                continue  # not translated: nothing to hold against cuTile Python
            try:
                report = oracle.check(kir, src, launches)
            except oracle.Disagreement:
                raise
            except tb.TranslationError as e:  # the fixtures' own refusals only
                assert "fixtures" in str(path), e
                continue
            kernels += report.specializations > 0
            specs += report.specializations
            values += report.values
    print(f"checked against cuTile Python: {kernels} kernels, {specs} specializations, {values} values")
    floor = json.loads((REPO / "tests" / "coverage_floor.json").read_text())["oracle"]
    assert kernels >= floor["kernels"] and specs >= floor["specializations"] and values >= floor["values"]


def test_an_unannotated_scalar_takes_the_dtype_stated_for_it(tmp_path):
    """cuTile Python types `eps` from each launch's value: unstated, the launcher takes an int or a
    float (a variant each); a dtype stated for it pins it, and is checked as such."""
    module = kernel_file(tmp_path, """\
        @ct.kernel
        def scale_by(x, y, eps, TILE: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(TILE,)).astype(ct.float32)
            ct.store(y, index=(ct.bid(0),), tile=(t * eps).astype(y.dtype))
        """)
    for stated, dtype in ((None, "i32|f32"), (["f32"], "f32"), (["float32"], "f32"), (["i32"], "i32")):
        crate = tb.translate(module.scale_by, runtime_path=RUNTIME_CRATE, dtypes=stated and {"eps": stated})
        meta = json.loads(crate.files["tilebridge.json"])["kernels"]["scale_by"]
        assert [p["dtype"] for p in meta["params"] if p["name"] == "eps"] == [dtype]
        assert meta["checked"].count("agrees with cuTile Python") == len(dtype.split("|"))
    with pytest.raises(tb.TranslationError, match="'eps' is stated as f16: a scalar takes one dtype"):
        tb.translate(module.scale_by, runtime_path=RUNTIME_CRATE, dtypes={"eps": ["f16"]})


def test_a_runtime_float_scalar_promotes_a_half_tile(tmp_path):
    """Found by the fuzz campaign: an f16 tile times a float parameter is computed in f32 by cuTile
    Python (the scalar is a 0-d f32 tile, not a weakly typed literal), an int parameter keeps the
    tile's f16, and an int parameter times a float one is a float."""
    module = kernel_file(tmp_path, """\
        @ct.kernel
        def mixed(x, y, n: int, f: float, TILE: ct.Constant[int]):
            u = ct.load(x, index=(ct.bid(0),), shape=(TILE,))
            a = ct.maximum(u * f, f / 3.0)
            b = u + n
            c = ct.where(u > f, u, n * f)
            ct.store(y, index=(ct.bid(0),), tile=(a + b + c).astype(y.dtype))
        """)
    types = named_types(module.mixed, {"x": ["f16"], "y": ["f16"]})
    assert {n: t.dtype for n, t in types.items()} == {"u": "E0", "a": "f32", "b": "E0", "c": "f32"}


def test_a_constant_float_is_weak_like_a_literal(tmp_path):
    """A ct.Constant[float] is a runtime f32 in the Rust, but cuTile Python knows it at compile time
    and types it weakly: beside an f16 tile, f16 (TileGym's layer norm, `w_tile + WEIGHT_SHIFT`)."""
    module = kernel_file(tmp_path, """\
        @ct.kernel
        def shifted(x, y, SHIFT: ct.Constant[float], TILE: ct.Constant[int]):
            u = ct.load(x, index=(ct.bid(0),), shape=(TILE,))
            s = SHIFT * 2.0
            a = u + s
            b = u * SHIFT
            ct.store(y, index=(ct.bid(0),), tile=(a + b).astype(y.dtype))
        """)
    types = named_types(module.shifted, {"x": ["f16"], "y": ["f16"]})
    assert {n: t.dtype for n, t in types.items()} == {"u": "E0", "s": "f32", "a": "E0", "b": "E0"}


def test_math_of_numbers_is_folded_and_of_integers_is_float(tmp_path):
    """Found by the fuzz campaign: cuTile Python evaluates `ct.exp(2.0)` itself (a constant, weakly
    typed: times an f16 tile, f16), `ct.floor(2.5)` is the int 2, and a float function of an integer
    tile or scalar takes it as f32 (`ct.sqrt(n)`); `ct.log(-1.0)` is its error too."""
    module = kernel_file(tmp_path, """\
        @ct.kernel
        def folded(x, y, n: int, TILE: ct.Constant[int]):
            u = ct.load(x, index=(ct.bid(0),), shape=(TILE,))
            d = u * ct.exp(2.0)
            e = ct.floor(2.5)
            g = ct.sqrt(n) + ct.sqrt(ct.arange(TILE, dtype=ct.int32))
            ct.store(y, index=(ct.bid(0),), tile=(d + e + g).astype(y.dtype))


        @ct.kernel
        def domain(x, y, TILE: ct.Constant[int]):
            ct.store(y, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(TILE,)) * ct.log(-1.0))
        """)
    types = named_types(module.folded, {"x": ["f16"], "y": ["f16"]})
    assert {n: (t.dtype, t.shape) for n, t in types.items()} == {
        "u": ("E0", ("TILE",)), "d": ("E0", ("TILE",)), "g": ("f32", ("TILE",))}  # e: a constant
    with pytest.raises(tb.TranslationError, match="math domain error"):
        tb.translate(module.domain, runtime_path=RUNTIME_CRATE)


def test_an_unannotated_scalar_gets_a_variant_per_type_it_translates_for(tmp_path):
    """`s` may be an int or a float at each launch: two variants, each checked at its own type,
    behind one launcher, where it is an operand of `*` or of `ct.mul`. `n`, a loop bound, is an
    int only: one plain launcher, as before."""
    module = kernel_file(tmp_path, """\
        @ct.kernel
        def scaled(x, y, s, TILE: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(TILE,))
            ct.store(y, index=(ct.bid(0),), tile=(t * s).astype(y.dtype))


        @ct.kernel
        def repeated(x, y, n, TILE: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(TILE,))
            for i in range(n):
                t = t + 1.0
            ct.store(y, index=(ct.bid(0),), tile=t)


        @ct.kernel
        def multiplied(x, y, s, TILE: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(TILE,))
            ct.store(y, index=(ct.bid(0),), tile=ct.mul(s, t))
        """)
    crate = tb.translate(module, runtime_path=RUNTIME_CRATE)
    meta = json.loads(crate.files["tilebridge.json"])["kernels"]
    assert sorted(meta) == ["multiplied", "repeated", "scaled"]
    # an operand of an operator's function (`ct.mul(s, t)`, BabelStream's) is a scalar too, not an array
    for name in ("scaled", "multiplied"):
        assert [p["dtype"] for p in meta[name]["params"] if p["name"] == "s"] == ["i32|f32"], name
    assert [p["dtype"] for p in meta["repeated"]["params"] if p["name"] == "n"] == ["i32"]
    lib = crate.files["src/lib.rs"]
    assert 'match scalar_dtype("s", s)? {' in lib and "fn scaled_s_f32<'py>(" in lib
    assert "s: int | float" in crate.files["k_rs.pyi"]


def test_a_variant_kernels_launcher_name_clashes_like_a_kernel_name(tmp_path):
    one = kernel_file(tmp_path, """\
        @ct.kernel
        def scaled(x, y, s, TILE: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(TILE,))
            ct.store(y, index=(ct.bid(0),), tile=(t * s).astype(y.dtype))
        """, name="one.py")
    other = kernel_file(tmp_path, """\
        @ct.kernel
        def scaled(x, y, TILE: ct.Constant[int]):
            ct.store(y, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(TILE,)))
        """, name="other.py")
    with pytest.raises(tb.TranslationError, match="clashes with 'scaled_s_i32'"):
        tb.translate([one, other], runtime_path=RUNTIME_CRATE)
