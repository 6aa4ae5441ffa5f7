//! Tile kernels translated by tilebridge from group_rotate.py.
//! Generated code: edit the Python kernels and rebuild instead.

// The kernels follow the Python line by line, so rustc would flag what the Python has: constants
// spelled in lower case (const generics here), parameters and values it never reads, values a
// branch or loop sets, declared before it with a first value that may go unread, and mutable
// views of an in-place array that a kernel only loads through.
#![allow(
    non_upper_case_globals,
    unused_variables,
    unused_assignments,
    unused_mut
)]

#[cutile::module]
pub mod kernels {
    use cutile::core::*;

    /// `x.partition(tile)` with no padding value, as cuTile Python's
    /// `ct.load` without a padding mode makes its view: lanes past `x`'s shape hold no defined
    /// value there either (cutile's own pads with zero, which tileiras compiles to other code).
    /// Safe as that is: the view starts from `x`'s own ordering token, and its loads stay inside
    /// `x`'s shape (a lane past it is not read).
    #[cuda_tile::variadic_op(N = 6)]
    pub fn partition_unpadded<'a, E: ElementType, const S: [i32; N], const R: [i32; N]>(
        x: &'a Tensor<E, S>,
        tile: Shape<R>,
    ) -> Partition<'a, E, R> {
        let token: Token = get_tensor_token(x);
        // SAFETY: the view starts from the tensor's current ordering token.
        let view: Partition<E, R> =
            unsafe { make_partition_view(x, tile, padding::None, dim_map::Identity, token) };
        view
    }

    /// group_rotate.py:24: `def group_rotate(x, y, SCALE: ct.Constant[float], GROUP: ConstInt, TILE: ConstInt):`
    ///
    /// Safe: cutile proves its partitions' stores disjoint and in bounds, and the module's functions
    /// above check their own accesses.
    #[cutile::entry()]
    fn group_rotate<
        E0: ElementType,
        E1: ElementType,
        const GROUP: i32,
        const TILE: i32,
        const SCALE_BITS: i32,
    >(
        x: &Tensor<E0, { [-1] }>,
        y: &mut Tensor<E1, { [TILE] }>,
    ) {
        // ct.Constant[float] `SCALE`, compiled in from its f32 bits
        let SCALE_word: Tile<i32, { [] }> = scalar_to_tile(SCALE_BITS);
        let SCALE_tile: Tile<f32, { [] }> = bitcast(SCALE_word);
        let SCALE: f32 = tile_to_scalar(SCALE_tile);
        // group_rotate.py:26: t = ct.load(x, index=(rotate(pid, GROUP),), shape=(TILE,)).astype(ct.float32)
        let x_part: Partition<E0, { [TILE] }> = partition_unpadded(x, const_shape![TILE]);
        // group_rotate.py:25: pid = ct.bid(0)
        let pid: i32 = get_tile_block_id().0;
        // group_rotate.py:26: t = ct.load(x, index=(rotate(pid, GROUP),), shape=(TILE,)).astype(ct.float32)
        let index_quot_dividend: Tile<i32, { [] }> = scalar_to_tile(pid - 1i32);
        let index_quot_divisor: Tile<i32, { [] }> = scalar_to_tile(GROUP);
        let index_quot_floor: Tile<i32, { [] }> = divi(
            index_quot_dividend,
            index_quot_divisor,
            rounding::NegativeInf,
        );
        let index_quot: i32 = tile_to_scalar(index_quot_floor);
        let index_quot_2: i32 = convert_scalar(index_quot);
        let index_mod: i32 = pid - 1i32 - index_quot_2 * GROUP;
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
        // group_rotate.py:28: ct.store(y, index=(pid,), tile=(affine(t, SCALE, 0.5) + ramp).astype(y.dtype))
        let y_tile: Tile<E1, { [TILE] }> = convert_tile(
            fma(
                t,
                broadcast_scalar(SCALE, const_shape![TILE]),
                broadcast_scalar(0.5f32, const_shape![TILE]),
                rounding::NearestEven,
                ftz::Disabled,
            ) + ramp,
        );
        y.store(y_tile);
    }
}
