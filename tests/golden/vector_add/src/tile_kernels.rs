//! Tile kernels translated by tilebridge from vector_add.py.
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

    /// vector_add.py:7: `def vector_add(a, b, c, TILE: ct.Constant[int]):`
    ///
    /// Safe: cutile proves its partitions' stores disjoint and in bounds, and the module's functions
    /// above check their own accesses.
    #[cutile::entry()]
    fn vector_add<
        E0: ElementType,
        E1: ElementType,
        E2: ElementType,
        PT: ElementType,
        const TILE: i32,
    >(
        a: &Tensor<E0, { [-1] }>,
        b: &Tensor<E1, { [-1] }>,
        c: &mut Tensor<E2, { [TILE] }>,
    ) {
        // vector_add.py:9: ta = ct.load(a, index=(pid,), shape=(TILE,))
        let a_part: Partition<E0, { [TILE] }> = partition_unpadded(a, const_shape![TILE]);
        // vector_add.py:10: tb = ct.load(b, index=(pid,), shape=(TILE,))
        let b_part: Partition<E1, { [TILE] }> = partition_unpadded(b, const_shape![TILE]);
        // vector_add.py:8: pid = ct.bid(0)
        let pid: i32 = get_tile_block_id().0;
        // vector_add.py:9: ta = ct.load(a, index=(pid,), shape=(TILE,))
        let ta: Tile<E0, { [TILE] }> = load_view_tko(
            &a_part,
            [pid],
            ordering::Weak,
            scope::TileBlock,
            None,
            tma::Enabled,
        );
        // vector_add.py:10: tb = ct.load(b, index=(pid,), shape=(TILE,))
        let tb: Tile<E1, { [TILE] }> = load_view_tko(
            &b_part,
            [pid],
            ordering::Weak,
            scope::TileBlock,
            None,
            tma::Enabled,
        );
        // vector_add.py:11: ct.store(c, index=(pid,), tile=ta + tb)
        let c_tile: Tile<PT, { [TILE] }> = convert_tile(ta);
        let c_tile_2: Tile<PT, { [TILE] }> = convert_tile(tb);
        let c_cast: Tile<E2, { [TILE] }> = convert_tile(c_tile + c_tile_2);
        c.store(c_cast);
    }

    /// vector_add.py:7: `def vector_add(a, b, c, TILE: ct.Constant[int]):`
    ///
    /// Safe: cutile proves its partitions' stores disjoint and in bounds, and the module's functions
    /// above check their own accesses.
    #[cutile::entry()]
    fn vector_add_f64<
        E0: ElementType,
        E1: ElementType,
        E2: ElementType,
        PT: ElementType,
        const TILE: i32,
    >(
        a: &Tensor<E0, { [-1] }>,
        b: &Tensor<E1, { [-1] }>,
        c: &mut Tensor<E2, { [TILE] }>,
    ) {
        // vector_add.py:9: ta = ct.load(a, index=(pid,), shape=(TILE,))
        let a_part: Partition<E0, { [TILE] }> = partition_unpadded(a, const_shape![TILE]);
        // vector_add.py:10: tb = ct.load(b, index=(pid,), shape=(TILE,))
        let b_part: Partition<E1, { [TILE] }> = partition_unpadded(b, const_shape![TILE]);
        // vector_add.py:8: pid = ct.bid(0)
        let pid: i32 = get_tile_block_id().0;
        // vector_add.py:9: ta = ct.load(a, index=(pid,), shape=(TILE,))
        let ta: Tile<E0, { [TILE] }> = load_view_tko(
            &a_part,
            [pid],
            ordering::Weak,
            scope::TileBlock,
            None,
            tma::Enabled,
        );
        // vector_add.py:10: tb = ct.load(b, index=(pid,), shape=(TILE,))
        let tb: Tile<E1, { [TILE] }> = load_view_tko(
            &b_part,
            [pid],
            ordering::Weak,
            scope::TileBlock,
            None,
            tma::Enabled,
        );
        // vector_add.py:11: ct.store(c, index=(pid,), tile=ta + tb)
        let c_tile: Tile<PT, { [TILE] }> = convert_tile(ta);
        let c_tile_2: Tile<PT, { [TILE] }> = convert_tile(tb);
        let c_cast: Tile<E2, { [TILE] }> = convert_tile(c_tile + c_tile_2);
        c.store(c_cast);
    }

    /// vector_add.py:7: `def vector_add(a, b, c, TILE: ct.Constant[int]):`
    ///
    /// Safe: cutile proves its partitions' stores disjoint and in bounds, and the module's functions
    /// above check their own accesses.
    #[cutile::entry()]
    fn vector_add_integers<E0: ElementType, const TILE: i32>(
        a: &Tensor<E0, { [-1] }>,
        b: &Tensor<E0, { [-1] }>,
        c: &mut Tensor<E0, { [TILE] }>,
    ) {
        // vector_add.py:9: ta = ct.load(a, index=(pid,), shape=(TILE,))
        let a_part: Partition<E0, { [TILE] }> = partition_unpadded(a, const_shape![TILE]);
        // vector_add.py:10: tb = ct.load(b, index=(pid,), shape=(TILE,))
        let b_part: Partition<E0, { [TILE] }> = partition_unpadded(b, const_shape![TILE]);
        // vector_add.py:8: pid = ct.bid(0)
        let pid: i32 = get_tile_block_id().0;
        // vector_add.py:9: ta = ct.load(a, index=(pid,), shape=(TILE,))
        let ta: Tile<E0, { [TILE] }> = load_view_tko(
            &a_part,
            [pid],
            ordering::Weak,
            scope::TileBlock,
            None,
            tma::Enabled,
        );
        // vector_add.py:10: tb = ct.load(b, index=(pid,), shape=(TILE,))
        let tb: Tile<E0, { [TILE] }> = load_view_tko(
            &b_part,
            [pid],
            ordering::Weak,
            scope::TileBlock,
            None,
            tma::Enabled,
        );
        // vector_add.py:11: ct.store(c, index=(pid,), tile=ta + tb)
        c.store(ta + tb);
    }
}
