"""cuTile Python's typing rules where the lowering used to compute something else, checked on the
typed IR (the types cuTile Python gives the same values), on the CPU."""

import textwrap

import pytest

import tilebridge as tb
from tilebridge import dtypes
from tilebridge.translator import frontend, ir, lower

pytest.importorskip("cuda.tile")


def lowered(tmp_path, body: str, params: str = "x, y, n: int, TILE: ct.Constant[int]") -> ir.KernelIR:
    path = tmp_path / "k.py"
    path.write_text(f"import cuda.tile as ct\n\n\n@ct.kernel\ndef k({params}):\n" + textwrap.indent(body, "    "))
    return lower.lower_kernel(frontend.load(frontend.kernels_in(path)[0]))


def lets(stmts) -> dict[str, ir.Let]:
    found = {}
    for s in stmts:
        if isinstance(s, ir.Let):
            found[s.name] = s
        for block in (getattr(s, "body", None), getattr(s, "then", None), getattr(s, "other", None)):
            if isinstance(block, list):
                found |= lets(block)
    return found


STORE = "ct.store(y, index=(ct.bid(0),), tile=ct.full((TILE,), {}, ct.float32))\n"


@pytest.mark.parametrize("expr", ["n * 0.5", "0.5 * n", "n + 0.25", "ct.bid(0) * 1.5", "n - 0.5", "n / 2.0",
                                  "max(n, 0.5)", "ct.add(n, 0.5)"])
def test_an_integer_scalar_meeting_a_float_literal_is_float32(tmp_path, expr):
    """cuTile Python types `n * 0.5` float32 (1.5 for n = 3); the lowering once truncated the literal
    to `0i32` and computed 0."""
    k = lowered(tmp_path, f"v = {expr}\n" + STORE.format("v"))
    v = lets(k.body)["v"]
    assert v.type == ir.ScalarType("f32"), v
    assert "0i32" not in repr(v.value) and "1i32" not in repr(v.value)


def test_an_integer_compared_with_a_float_literal_compares_floats(tmp_path):
    k = lowered(tmp_path, "if ct.bid(0) < 0.5:\n    " + STORE.format("1.0") + STORE.format("2.0"))
    branch = next(s for s in k.body if isinstance(s, ir.IfElse))
    assert isinstance(branch.cond, ir.Binary) and branch.cond.op == "<" and branch.cond.rhs == ir.Lit("0.5f32")
    assert lets(k.body)[branch.cond.lhs.name].type == ir.ScalarType("f32")


def test_integer_literals_keep_integer_scalars_integer(tmp_path):
    k = lowered(tmp_path, "v = n * 2 + 1\n" + STORE.format("v"))
    assert lets(k.body)["v"].type == ir.ScalarType("i32")


def test_a_conditional_between_an_integer_and_a_float_literal_is_refused(tmp_path):
    with pytest.raises(tb.TranslationError, match=r"k\.py:6:\d+: an integer scalar with a float literal"):
        lowered(tmp_path, "v = n if ct.bid(0) > 0 else 0.5\n" + STORE.format("v"))


@pytest.mark.parametrize("step", ["-2", "0"])
def test_a_range_step_that_is_not_positive_is_refused(tmp_path, step):
    """cuTile Python rejects `range(8, 0, -2)` ("Step must be positive"); the lowering once made it a
    Rust loop that runs no trip where Python runs four."""
    with pytest.raises(tb.TranslationError, match=r"k\.py:6:\d+: a range step must be positive"):
        lowered(tmp_path, f"for i in range(8, 0, {step}):\n    " + STORE.format("1.0"))


def test_a_range_step_made_of_constants_is_checked_positive_at_launch(tmp_path):
    k = lowered(tmp_path, "for i in range(8, 0, -STEP):\n    " + STORE.format("1.0"),
                params="x, y, n: int, TILE: ct.Constant[int], STEP: ct.Constant[int]")
    assert [why for _, why in k.launch_checks] == ["k.py: the range step `-STEP` must be positive, as cuTile "
                                                   "Python requires"]


def test_a_constant_range_step_is_checked_positive_at_launch(tmp_path):
    k = lowered(tmp_path, "for i in range(0, 64, STEP):\n    " + STORE.format("1.0"),
                params="x, y, n: int, TILE: ct.Constant[int], STEP: ct.Constant[int]")
    assert next(p for p in k.params if p.name == "STEP").positive


LOAD = "t = ct.load(x, index=(ct.bid(0),), shape=(TILE,), latency={})\nct.store(y, index=(ct.bid(0),), tile=t)\n"


@pytest.mark.parametrize("latency", ["0", "11", "64"])
def test_a_latency_outside_1_to_10_is_refused(tmp_path, latency):
    """cuTile Python: "Latency must be between 1 and 10"; cutile took any value."""
    with pytest.raises(tb.TranslationError, match=r"k\.py:6:\d+: latency must be between 1 and 10"):
        lowered(tmp_path, LOAD.format(latency))


def test_a_constant_latency_is_checked_at_launch(tmp_path):
    from tilebridge.translator.specializations import launcher_refusal

    k = lowered(tmp_path, LOAD.format("LAT"), params="x, y, TILE: ct.Constant[int], LAT: ct.Constant[int]")
    assert launcher_refusal(k, {"TILE": 64, "LAT": 64}) == (
        "k.py: `LAT` is a load or store latency, which cuTile Python requires between 1 and 10")
    assert launcher_refusal(k, {"TILE": 64, "LAT": 10}) is None and launcher_refusal(k, {"TILE": 64, "LAT": 1}) is None


def _calls(e, name: str) -> int:
    import dataclasses

    if isinstance(e, ir.Call) and e.func == name:
        return 1 + sum(_calls(a, name) for a in e.args)
    if isinstance(e, (list, tuple)):
        return sum(_calls(x, name) for x in e)
    if dataclasses.is_dataclass(e) and not isinstance(e, type):
        return sum(_calls(getattr(e, f.name), name) for f in dataclasses.fields(e))
    return 0


LOAD_T = "t = ct.load(x, index=(ct.bid(0),), shape=(TILE,)).astype(ct.float32)\n"
STORE_T = "ct.store(y, index=(ct.bid(0),), tile={})\n"


def test_a_named_product_used_once_by_a_sum_is_one_fma(tmp_path):
    """cuTile Python fuses a float multiply whose only use is an add or a subtract, named or not
    (TileGym's gelu names its products): so does the translation."""
    k = lowered(tmp_path, LOAD_T + "p = t * 0.75\nq = t * t\nr = 1.0 - q\n" + STORE_T.format("p + r"))
    assert "p" not in lets(k.body) and "q" not in lets(k.body)
    assert _calls(k.body, "fma") == 2 and _calls(k.body, "negf") == 1  # 1 - t*t = (-t)*t + 1


def test_a_product_used_twice_or_rebound_stays_a_product(tmp_path):
    k = lowered(tmp_path, LOAD_T + "p = t * 0.75\nu = p + t\n" + STORE_T.format("u + p"))
    assert "p" in lets(k.body) and _calls(k.body, "fma") == 0
    k = lowered(tmp_path, LOAD_T + "p = t * 0.75\nfor i in range(2):\n    p = p * t\n" + STORE_T.format("p + t"))
    assert _calls(k.body, "fma") == 0  # reassigned in a loop: its value at the sum is not the first product


def test_arrays_of_different_dtypes_promote_per_launch(tmp_path):
    """`a * b` of two arrays keeps each array's own dtype, as cuTile Python does (an f16 x times an
    f32 w is f32): a promotion the launcher binds per launch, which leaves out what cuTile Python
    refuses (f16 with bf16, a store into a narrower array). They were tied into one dtype class,
    and the launcher refused x f16 with w f32."""
    k = lowered(tmp_path, "a = ct.load(x, index=(ct.bid(0),), shape=(TILE,))\n"
                          "b = ct.load(w, index=(ct.bid(0),), shape=(TILE,))\n"
                          "p = a * b\n"
                          "ct.store(y, index=(ct.bid(0),), tile=p)\n", params="x, w, y, TILE: ct.Constant[int]")
    assert [c.arrays for c in k.dtype_classes] == [["x"], ["w"], ["y"]]
    assert [(p.rust_name, p.of, p.stored_into) for p in k.promoted] == [("PT", ["E0", "E1"], ["E2"])]
    assert lets(k.body)["p"].type.dtype == "PT"
    combos = k.launcher_combos()
    assert ("f16", "f32", "f32") in combos and ("f16", "f16", "f32") in combos and ("bf16", "f32", "f32") in combos
    assert not [c for c in combos if {"f16", "bf16"} <= set(c[:2])]  # cuTile Python mixes no f16 with bf16
    assert ("f16", "f32", "f16") not in combos  # an f32 result stored into f16 would narrow
    assert k.promotions(("f16", "f32", "f32")) == {"PT": "f32"}
    assert k.promotions(("bf16", "bf16", "f32")) == {"PT": "bf16"}


def test_arrays_meeting_where_nothing_converts_stay_tied(tmp_path):
    """A tile of one array stored into another converts nothing here: the two arrays still share one
    dtype class (the launcher requires them equal)."""
    k = lowered(tmp_path, "a = ct.load(x, index=(ct.bid(0),), shape=(TILE,))\n"
                          "ct.store(y, index=(ct.bid(0),), tile=a)\n", params="x, y, TILE: ct.Constant[int]")
    assert [c.arrays for c in k.dtype_classes] == [["x", "y"]] and not k.promoted


def test_a_product_stays_fusable_in_a_sum_of_another_promotion(tmp_path):
    """`a * b + c` of three arrays: cuTile Python fuses the product into the sum (one fma) at every
    launch where promoting a with b gives what promoting all three gives, and rounds the product on
    its own at the others. The translation computes both in one dtype (one fma, as cuTile Python's
    at equal dtypes) and its launcher takes only the launches where that is what cuTile Python
    computes: an f16 product added to an f32 c is refused."""
    k = lowered(tmp_path, "a = ct.load(x, index=(ct.bid(0),), shape=(TILE,))\n"
                          "b = ct.load(w, index=(ct.bid(0),), shape=(TILE,))\n"
                          "c = ct.load(z, index=(ct.bid(0),), shape=(TILE,))\n"
                          "ct.store(y, index=(ct.bid(0),), tile=a * b + c)\n",
                params="x, w, z, y, TILE: ct.Constant[int]")
    fmas = [s for s in lets(k.body).values() if isinstance(s.value, ir.Call) and s.value.func == "fma"]
    assert len(fmas) == 1 and fmas[0].type.dtype == "PT"
    assert [p.of for p in k.promoted] == [["E0", "E1", "E2"]]
    combos = k.launcher_combos()
    assert ("f16", "f16", "f16", "f16") in combos and ("f16", "f32", "f16", "f32") in combos
    assert ("f16", "f16", "f32", "f32") not in combos  # cuTile Python: an f16 product, then an f32 sum


def test_an_array_tile_beside_a_tile_of_a_concrete_dtype_promotes_per_launch(tmp_path):
    """An f16 tile beside a tile of x's dtype is computed in their promotion (f32 where x is f32),
    and x may not be bf16 (cuTile Python mixes no f16 with bf16); integers divide in f32."""
    k = lowered(tmp_path, "t = ct.load(x, index=(ct.bid(0),), shape=(TILE,))\n"
                          "h = ct.full((TILE,), 0.25, ct.float16)\n"
                          "q = t / h\n"
                          "i = ct.arange(TILE, dtype=ct.int32) / 3\n"
                          "ct.store(y, index=(ct.bid(0),), tile=ct.astype(q, ct.float32) + i)\n",
                params="x, y, TILE: ct.Constant[int]")
    assert [p.of for p in k.promoted] == [["E0", "f16"]]
    assert lets(k.body)["q"].type.dtype == "PT" and lets(k.body)["i"].type.dtype == "f32"
    assert [c[0] for c in k.launcher_combos()] == ["f32", "f16"]
    assert k.promotions(("f32", "f32")) == {"PT": "f32"} and k.promotions(("f16", "f32")) == {"PT": "f16"}


def test_too_many_independent_dtypes_ask_for_the_dtypes(tmp_path):
    """Ten arrays of independent dtypes that meet (3^10 combinations) are more than a build checks:
    a clear TranslationError naming them, not a build that enumerates millions of combinations.
    Ten arrays the kernel only moves (each converted to f32 and nothing else) vary apart: one
    combination for each of every dtype but bool per array, never listed, translated."""
    names = [f"a{i}" for i in range(10)]
    body = "acc = ct.zeros((TILE,), dtype=ct.float32)\n" + "".join(
        f"acc = acc + ct.load({n}, index=(ct.bid(0),), shape=(TILE,))\n" for n in names)
    with pytest.raises(tb.TranslationError, match=r"10 arrays of independent dtypes \(59,049 combinations.*a0, a1"):
        lowered(tmp_path, body + "ct.store(y, index=(ct.bid(0),), tile=acc)\n",
                params=", ".join(names) + ", y, TILE: ct.Constant[int]")
    moved = lowered(tmp_path, body.replace("acc + ct.load(", "acc + ct.astype(ct.load(").replace(
        "(TILE,))\n", "(TILE,)), ct.float32)\n") + "ct.store(y, index=(ct.bid(0),), tile=acc)\n",
        params=", ".join(names) + ", y, TILE: ct.Constant[int]")
    assert [c.moved for c in moved.dtype_classes] == [True] * 11
    every_but_bool = len(dtypes.ARRAY_DTYPES) - 1  # cutile converts no bools
    assert moved.product_count() == every_but_bool ** 10  # y holds what is stored into it: f32


def test_only_moved_arrays_take_every_dtype(tmp_path):
    """An array whose values are only loaded and stored takes every dtype; one the kernel computes
    with, loads with a float's padding or stores a number into keeps the floats its rules are
    written for (a number spelled as an f32 literal would not be cuTile Python's f64 or int64)."""
    k = lowered(tmp_path, "t = ct.load(x, index=(ct.bid(0),), shape=(TILE,))\n"
                          "ct.store(y, index=(ct.bid(0),), tile=t)\n"
                          "ct.store(z, index=(ct.bid(0),), tile=0.1)\n"
                          "p = ct.load(w, index=(ct.bid(0),), shape=(TILE,), padding_mode=ct.PaddingMode.NEG_INF)\n"
                          "ct.store(v, index=(ct.bid(0),), tile=ct.exp(ct.load(u, index=(ct.bid(0),), shape=(TILE,))))\n"
                          "ct.store(q, index=(ct.bid(0),), tile=p.astype(ct.float32))\n",
                params="x, y, z, w, u, v, q, TILE: ct.Constant[int]")
    allowed = {tuple(c.arrays): (c.moved, c.allowed) for c in k.dtype_classes}
    assert allowed[("x", "y")] == (True, list(dtypes.ARRAY_DTYPES))
    for computed in (("z",), ("w",), ("u",), ("v",)):
        assert allowed[computed] == (False, ["f32", "f16", "bf16"]), computed


def test_a_tile_stored_into_another_arrays_dtype_is_cast_where_cuTile_Python_casts_it(tmp_path):
    """cuTile Python casts a stored tile to the array's dtype where the promotion of the two is the
    array's (TileGym's attention-sink decoding stores `lse.astype(Att_Out.dtype)` into an f32
    `LSE_Out` beside a bf16 `Att_Out`): the two arrays keep dtypes of their own, the tile is
    converted, and the launcher takes the launches whose promotion is the array's dtype."""
    k = lowered(tmp_path, "t = ct.exp(ct.load(x, index=(ct.bid(0),), shape=(TILE,)))\n"
                          "ct.store(y, index=(ct.bid(0),), tile=t)\n"
                          "ct.store(z, index=(ct.bid(0),), tile=t)\n",
                params="x, y, z, TILE: ct.Constant[int]")
    classes = {tuple(c.arrays): c.rust_name for c in k.dtype_classes}
    assert set(classes) == {("x",), ("y",), ("z",)}, classes  # tied before: one dtype for all three
    x = classes[("x",)]
    assert {(tuple(s.of), tuple(s.equals)) for s in k.same_promotions} == {
        ((x, classes[(a,)]), (classes[(a,)],)) for a in "yz"}, k.same_promotions
    assert k.product_count() == 1 + 4 + 4  # x f32: y, z f32; x f16 or bf16: y, z each that or f32


STREAM = ("for r in range(ct.bid(0), N, ct.num_blocks(0)):\n"
          "    t = ct.load(x, index=(r, 0), shape=(1, TILE))\n"
          "    {store}\n"
          "{after}")
STREAM_PARAMS = "x, y, z, N: ct.Constant[int], TILE: ct.Constant[int]"


@pytest.mark.parametrize("store, after, streamed", [
    ("ct.store(y, index=(r, 0), tile=t * 2)", "", True),
    ("if r % 2 == 0:\n        ct.store(y, index=(r, 0), tile=t * 2)", "", True),  # a runtime branch: as Python
    ("ct.store(y, index=(r, 1), tile=t * 2)", "", False),  # not the row's own tile
    ("ct.store(y, index=(r + 1, 0), tile=t * 2)", "", False),
    ("ct.store(y, index=(r, 0), tile=t * 2)\n    ct.store(z, index=(r, 0), tile=t)", "", False),  # another effect
    ("ct.store(y, index=(r, 0), tile=t * 2)\n    ct.atomic_add(z, (r, 0), 1.0, memory_order=ct.MemoryOrder.RELAXED)",
     "", False),
    ("ct.store(y, index=(r, 0), tile=t * 2)", "ct.store(y, index=(0, 0), tile=ct.zeros((1, TILE), ct.float32))\n",
     False),  # stored outside the loop too
    ("ct.store(y, index=(r, 0), tile=t * 2)", "ct.store(z, index=(ct.bid(0), 0), tile=ct.load(y, index=(0, 0), "
     "shape=(1, TILE)))\n", False),  # read too
])
def test_a_grid_stride_loop_over_an_outputs_rows_streams_it(tmp_path, store, after, streamed):
    """The loop becomes cutile's `iter_indices` loop over y, safe, only where its one effect is
    storing y's own row tile and nothing else stores or reads y (`lower/streams.py`)."""
    k = lowered(tmp_path, STREAM.format(store=store, after=after), params=STREAM_PARAMS)
    y = next(p for p in k.arrays if p.name == "y")
    assert (y.streamed == "N") is streamed
    assert any(isinstance(s, ir.TileLoop) for s in k.body) is streamed
    assert (k.safety.safe or "'y'" not in " ".join(k.safety.reasons)) is streamed


@pytest.mark.parametrize("loop", ["range(ct.bid(0), N + 1, ct.num_blocks(0))", "range(ct.bid(1), N, ct.num_blocks(0))",
                                  "range(ct.bid(0), N, ct.num_blocks(1))", "range(ct.bid(0), N, 4)",
                                  "range(ct.bid(0), N)"])
def test_only_the_grid_stride_loop_to_a_parameter_streams(tmp_path, loop):
    k = lowered(tmp_path, STREAM.format(store="ct.store(y, index=(r, 0), tile=t * 2)", after="").replace(
        "range(ct.bid(0), N, ct.num_blocks(0))", loop), params=STREAM_PARAMS)
    assert next(p for p in k.arrays if p.name == "y").streamed is None
