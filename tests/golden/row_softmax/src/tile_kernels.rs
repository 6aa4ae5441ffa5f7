//! Tile kernels translated by tilebridge from row_softmax.py.
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

    /// `x.partition(tile)` padded with `NegInf` where a tile reaches past `x`'s shape (cutile's own
    /// pads with zero). Safe as that is: the view starts from `x`'s own ordering token.
    #[cuda_tile::variadic_op(N = 6)]
    pub fn partition_padded_neg_inf<'a, E: ElementType, const S: [i32; N], const R: [i32; N]>(
        x: &'a Tensor<E, S>,
        tile: Shape<R>,
    ) -> Partition<'a, E, R> {
        let token: Token = get_tensor_token(x);
        // SAFETY: the view starts from the tensor's current ordering token.
        let view: Partition<E, R> =
            unsafe { make_partition_view(x, tile, padding::NegInf, dim_map::Identity, token) };
        view
    }

    /// row_softmax.py:7: `def row_softmax(x, y, TILE_N: ct.Constant[int]):`
    ///
    /// Safe: cutile proves its partitions' stores disjoint and in bounds, and the module's functions
    /// above check their own accesses.
    #[cutile::entry()]
    fn row_softmax<E0: ElementType, E1: ElementType, const TILE_N: i32>(
        x: &Tensor<E0, { [-1, -1] }>,
        y: &mut Tensor<E1, { [1, TILE_N] }>,
    ) {
        // row_softmax.py:9: t = ct.load(x, index=(row, 0), shape=(1, TILE_N), padding_mode=ct.PaddingMode.NEG_INF)
        let x_part: Partition<E0, { [1, TILE_N] }> =
            partition_padded_neg_inf(x, const_shape![1, TILE_N]);
        // row_softmax.py:8: row = ct.bid(0)
        let row: i32 = get_tile_block_id().0;
        // row_softmax.py:9: t = ct.load(x, index=(row, 0), shape=(1, TILE_N), padding_mode=ct.PaddingMode.NEG_INF)
        let t: Tile<E0, { [1, TILE_N] }> = load_view_tko(
            &x_part,
            [row, 0i32],
            ordering::Weak,
            scope::TileBlock,
            None,
            tma::Enabled,
        );
        // row_softmax.py:10: t = t.astype(ct.float32)
        let t: Tile<f32, { [1, TILE_N] }> = convert_tile(t);
        // row_softmax.py:11: m = ct.max(t, axis=1, keepdims=True)
        let m_2: Tile<f32, { [1] }> = reduce_max(t, 1i32);
        let m: Tile<f32, { [1, 1] }> = m_2.reshape(const_shape![1, 1]);
        // row_softmax.py:12: e = ct.exp(t - m)
        let m_bcast: Tile<f32, { [1, TILE_N] }> = m.broadcast(const_shape![1, TILE_N]);
        let e: Tile<f32, { [1, TILE_N] }> = exp(t - m_bcast);
        // row_softmax.py:13: s = ct.sum(e, axis=-1, keepdims=True)
        let s_2: Tile<f32, { [1] }> = reduce_sum(e, 1i32);
        let s: Tile<f32, { [1, 1] }> = s_2.reshape(const_shape![1, 1]);
        // row_softmax.py:14: ct.store(y, index=(row, 0), tile=(e / s).astype(y.dtype))
        let s_bcast: Tile<f32, { [1, TILE_N] }> = s.broadcast(const_shape![1, TILE_N]);
        let y_tile: Tile<E1, { [1, TILE_N] }> = convert_tile(e / s_bcast);
        y.store(y_tile);
    }

    /// row_softmax.py:7: `def row_softmax(x, y, TILE_N: ct.Constant[int]):`
    ///
    /// Safe: cutile proves its partitions' stores disjoint and in bounds, and the module's functions
    /// above check their own accesses.
    #[cutile::entry()]
    fn row_softmax_f64<E0: ElementType, E1: ElementType, const TILE_N: i32>(
        x: &Tensor<E0, { [-1, -1] }>,
        y: &mut Tensor<E1, { [1, TILE_N] }>,
    ) {
        // row_softmax.py:9: t = ct.load(x, index=(row, 0), shape=(1, TILE_N), padding_mode=ct.PaddingMode.NEG_INF)
        let x_part: Partition<E0, { [1, TILE_N] }> =
            partition_padded_neg_inf(x, const_shape![1, TILE_N]);
        // row_softmax.py:8: row = ct.bid(0)
        let row: i32 = get_tile_block_id().0;
        // row_softmax.py:9: t = ct.load(x, index=(row, 0), shape=(1, TILE_N), padding_mode=ct.PaddingMode.NEG_INF)
        let t: Tile<E0, { [1, TILE_N] }> = load_view_tko(
            &x_part,
            [row, 0i32],
            ordering::Weak,
            scope::TileBlock,
            None,
            tma::Enabled,
        );
        // row_softmax.py:10: t = t.astype(ct.float32)
        let t: Tile<f32, { [1, TILE_N] }> = convert_tile(t);
        // row_softmax.py:11: m = ct.max(t, axis=1, keepdims=True)
        let m_2: Tile<f32, { [1] }> = reduce_max(t, 1i32);
        let m: Tile<f32, { [1, 1] }> = m_2.reshape(const_shape![1, 1]);
        // row_softmax.py:12: e = ct.exp(t - m)
        let m_bcast: Tile<f32, { [1, TILE_N] }> = m.broadcast(const_shape![1, TILE_N]);
        let e: Tile<f32, { [1, TILE_N] }> = exp(t - m_bcast);
        // row_softmax.py:13: s = ct.sum(e, axis=-1, keepdims=True)
        let s_2: Tile<f32, { [1] }> = reduce_sum(e, 1i32);
        let s: Tile<f32, { [1, 1] }> = s_2.reshape(const_shape![1, 1]);
        // row_softmax.py:14: ct.store(y, index=(row, 0), tile=(e / s).astype(y.dtype))
        let s_bcast: Tile<f32, { [1, TILE_N] }> = s.broadcast(const_shape![1, TILE_N]);
        let y_tile: Tile<E1, { [1, TILE_N] }> = convert_tile(e / s_bcast);
        y.store(y_tile);
    }
}
