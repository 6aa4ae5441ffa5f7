"""Emit's decisions about the crate as a whole are made from the IR (a hand-built kernel here),
never by searching the Rust it rendered."""

from pathlib import Path

from tilebridge.translator import ir
from tilebridge.translator.emit import render_crate
from tilebridge.translator import module_items
from tilebridge.translator.module_items import PADDED_GATHER
from tilebridge.translator.emit.launcher import launch_imports


def kernel(body: list[ir.Stmt], consts: list[ir.ConstParam], line_text: dict[int, str] | None = None) -> ir.KernelIR:
    return ir.KernelIR("k", "k.py", 1, "def k(x, ...)", [ir.ArrayParam("x", 1, "E0"), *consts],
                       [ir.DTypeClass("E0", ["x"], ["f32"])], body, line_text or {}, ir.SafetyNote(True))


def gather(line: int) -> ir.Stmt:
    load = ir.Unsafe(ir.Call(PADDED_GATHER, (ir.Var("ptrs"),)), "in bounds")
    return ir.Let("t", ir.LoadedType(ir.TileType("E0", (4,))), load, line)


def test_the_padded_gather_is_declared_where_a_body_calls_it():
    nested = ir.IfElse(ir.Lit("true"), [], [ir.For("i", ir.Lit("0i32"), ir.Lit("2i32"), None, [gather(3)], 3)], 2)
    assert module_items.called([kernel([], []), kernel([nested], [])])["padded_gather"]
    # Its name in the Python source (a comment the body repeats) is no call.
    said = ir.Eval(ir.Call("noop"), 2)
    assert not module_items.called([kernel([said], [], {2: f"{PADDED_GATHER}(p)  # not this"})])["padded_gather"]


def test_each_module_item_is_declared_where_a_body_calls_it_and_only_then():
    safe = ir.Let("t", ir.TileType("E0", (4,)), ir.Call(module_items.gather(2, 1, True, 4), (ir.Var("x"),)), 2)
    ordered = ir.Let("u", ir.LoadedType(ir.TileType("E0", (4,))),
                     ir.Call(module_items.gather(1, 1, False, 0, ordered=True), (ir.Var("x"),)), 2)
    rounded = ir.Eval(ir.Call(module_items.rounded("exp", "Approx"), (ir.Var("t"),)), 3)
    store = ir.Eval(ir.Call(module_items.hinted_store(1, tma=False, latency=3), (ir.Var("x"),)), 4)
    scatters = [ir.Assign("x_token", ir.Call(name, (ir.Var("x"),)), 5) for name in (
        module_items.own_scatter(2, 1, False, 0), module_items.own_scatter(1, 1, True, 2),
        module_items.first_block_scatter(1, 1, False, 0), module_items.span_gather(2, 1),
        module_items.own_span_scatter(3, 0), module_items.owned_scatter(("b0", "x", "b2"), 1, False, 1),
        module_items.owned_scatter(("b1", "r0", "b2"), 1, False, 0))]
    owned = [ir.Eval(ir.Call(name, (ir.Var("x"),)), 6) for name in (
        module_items.owned_store(("b2", "b0", "b1"), None, tma=True, guarded=False),
        module_items.owned_store(("b1", "b0"), 2, tma=True, guarded=False),
        module_items.owned_store(("b0", "b1", "0", "b2", "x"), None, tma=False, guarded=False),
        module_items.owned_store(("b1", "0"), None, tma=True, guarded=False))]
    unpadded = ir.Eval(ir.Call(module_items.unpadded_partition(True), (ir.Var("x"),)), 7)
    body = [safe, ordered, rounded, store, *scatters, *owned, unpadded]
    called = module_items.called([kernel(body, [])])
    # a checked gather needs the pointer load it is made of
    assert called == {"padded_gather": True, "padded_partitions": [],
                      "gathers": [(1, 1, False, 0, True), (2, 1, True, 4, False)], "rounded": [("exp", "approx")], "hinted_stores": [(1, False, 3)],
                      "span_gathers": [(2, 1)], "span_scatters": [(3, 0)],
                      "owned_stores": [("store_if_owned_2d_b1_0", ("b1", "0"), None, True, True),
                                       ("store_if_owned_2d_b1_b0_latency2", ("b1", "b0"), 2, True, True),
                                       ("store_if_owned_5d_b0_b1_0_b2_x", ("b0", "b1", "0", "b2", "x"), None, True, True),
                                       ("store_owned_3d_b2_b0_b1", ("b2", "b0", "b1"), None, True, False)],
                      "owned_scatters": [("scatter_owned_3d_b0_x_b2_into_1d_latency1", ("b0", "x", "b2"), 1, False, 1),
                                         ("scatter_owned_3d_b1_r0_b2_into_1d", ("b1", "r0", "b2"), 1, False, 0)],
                      "own_scatters": [(1, 1, True, 2), (2, 1, False, 0)],
                      "first_block_scatters": [(1, 1, False, 0)], "unpadded_partitions": [True]}
    rust = render_crate([kernel(body, [])], "k_rs", Path("/runtime"), "k.py").unformatted["src/tile_kernels.rs"]
    for name in ("fn gather_2d_into_1d_masked_latency4<", "fn gather_1d_into_1d_ordered<", "fn exp_approx_f32<", "fn store_tile_1d_tma_off_latency3<",
                 "fn scatter_own_row_2d_into_1d<", "fn scatter_own_tile_1d_masked_latency2<",
                 "fn scatter_first_block_1d_into_1d<", "fn gather_span_2d_latency1<", "fn scatter_own_row_span_3d<",
                 "fn store_owned_3d_b2_b0_b1<", "fn store_if_owned_2d_b1_b0_latency2<",
                 "fn scatter_owned_3d_b0_x_b2_into_1d_latency1<",
                 "fn partition_permuted_unpadded<"):
        assert name in rust
    assert "fn gather_2d_into_1d<" not in rust and "fn partition_padded_" not in rust and "fn partition_unpadded<" not in rust
    # Every grid axis tied, nothing passed: the block indices read inside, cutile's bounds check (a
    # check at launch), the store unconditional and with TMA (a branch kept split KV's TMA store
    # synchronous). Else the store is under a branch and without TMA (with it, MLA decoding took
    # 1.13x cuTile Python's time): the first block along the untied grid axis 2, inside the grid.
    def function(name: str) -> str:
        text = rust[rust.index(f"fn {name}<"):]
        return text[:text.index("\n    }\n")]
    unconditional = function("store_owned_3d_b2_b0_b1")
    assert "y: &Tensor<E, D>, tile: Tile<E, S>, token: Token," in " ".join(unconditional.split()), unconditional
    assert "[pid.2, pid.0, pid.1]" in unconditional and "check_partition_access_mut(&view, index);" in unconditional
    assert " if " not in unconditional and "tma::Enabled" in unconditional, unconditional
    guarded = function("store_if_owned_2d_b1_b0_latency2")
    assert "[pid.1, pid.0]" in guarded and "(pid.2 == 0i32)" in guarded and "if mine {" in guarded, guarded
    assert "tma::Disabled" in guarded and "tma::Enabled" not in guarded and "check_partition" not in guarded, guarded
    # a block's run of lanes, `ct.bid(0) * T + ct.arange(T)`, computed inside and owned without wrapping
    run = " ".join(function("scatter_owned_3d_b1_r0_b2_into_1d").split())
    assert "const T: i32," in run and "t0: i32, t2: i32, value: Tile<E, { [T] }>," in run, run
    assert "iota(lanes) + broadcast_scalar(pid.0 * T, lanes)" in run, run
    assert "(t0 == pid.1) & (pid.0 < 2147483647i32 / T) & (t2 == pid.2)" in run, run
    # a `0` component ties no grid axis: the first block along axes 0 and 2 stores
    assert "(pid.0 == 0i32) & (pid.2 == 0i32)" in " ".join(function("store_if_owned_2d_b1_0").split())
    passed = " ".join(function("store_if_owned_5d_b0_b1_0_b2_x").split())
    assert "t4: i32," in passed and "[pid.0, pid.1, 0i32, pid.2, t4]" in passed, passed
    assert "(t4 >= 0i32) & (t4 < num_tiles(&tiles, 4i32))" in passed, passed
    assert "fn gather_1d_into_1d<" not in rust and "fn gather_2d_into_1d_ordered_masked_latency4<" not in rust
    assert "fn scatter_own_tile_1d<" not in rust and "fn scatter_own_row_2d_into_1d_masked<" not in rust


def test_lib_rs_imports_the_checks_the_launchers_make():
    tile = ir.ConstParam("TILE", "i32", tile_dim=True)
    divisor = ir.ConstParam("D", "i32", positive=True)
    both = ir.ConstParam("B", "i32", tile_dim=True, positive=True)  # a tile dimension: check_tile_dim only
    assert launch_imports([kernel([], [])]) == ["guard"]
    assert launch_imports([kernel([], [tile]), kernel([], [divisor])]) == ["check_positive", "check_tile_dim", "guard"]
    assert launch_imports([kernel([], [both])]) == ["check_tile_dim", "guard"]
    lib = render_crate([kernel([], [divisor])], "k_rs", Path("/runtime"), "k.py").files["src/lib.rs"]
    assert "check_positive" in lib and "check_tile_dim" not in lib
