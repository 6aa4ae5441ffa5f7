//! Tile kernels translated by tilebridge from group_rotate.py.
//! Generated code: edit the Python kernels and rebuild instead.

#[cutile::module]
pub mod kernels {
    use cutile::core::*;

    /// group_rotate.py:24: `def group_rotate(x, y, SCALE: ct.Constant[float], GROUP: ConstInt, TILE: ConstInt):`
    ///
    /// Safe: every output is a checked partition, one tile per block.
    #[cutile::entry()]
    fn group_rotate<E0: ElementType, E1: ElementType, const GROUP: i32, const TILE: i32>(
        x: &Tensor<E0, { [-1] }>,
        y: &mut Tensor<E1, { [TILE] }>,
        SCALE: f32,
    ) {
        // group_rotate.py:26: t = ct.load(x, index=(rotate(pid, GROUP),), shape=(TILE,)).astype(ct.float32)
        let x_part: Partition<E0, { [TILE] }> = x.partition(const_shape![TILE]);
        // group_rotate.py:25: pid = ct.bid(0)
        let pid: i32 = get_tile_block_id().0;
        // group_rotate.py:26: t = ct.load(x, index=(rotate(pid, GROUP),), shape=(TILE,)).astype(ct.float32)
        let index_rem: i32 = (pid - 1i32) % GROUP;
        let index_mod: i32 = if index_rem < 0i32 {
            index_rem + GROUP
        } else {
            index_rem
        };
        let index: i32 = pid / GROUP * GROUP + index_mod;
        let t_2: Tile<E0, { [TILE] }> = load_view_tko(
            &x_part,
            [index],
            ordering::Weak,
            scope::TileBlock,
            None,
            tma::Enabled,
        );
        let t: Tile<f32, { [TILE] }> = convert_tile(t_2);
        // group_rotate.py:27: ramp = ct.arange(TILE, dtype=ct.int32).astype(ct.float32)
        let ramp_2: Tile<i32, { [TILE] }> = iota(const_shape![TILE]);
        let ramp: Tile<f32, { [TILE] }> = convert_tile(ramp_2);
        // group_rotate.py:19: y = t * scale
        let y_2: Tile<f32, { [TILE] }> = t * broadcast_scalar(SCALE, const_shape![TILE]);
        // group_rotate.py:28: ct.store(y, index=(pid,), tile=(affine(t, SCALE, 0.5) + ramp).astype(y.dtype))
        let y_tile: Tile<E1, { [TILE] }> =
            convert_tile(y_2 + broadcast_scalar(0.5f32, const_shape![TILE]) + ramp);
        y.store(y_tile);
    }
}
