//! Tile kernels translated by tilebridge from matmul.py.
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

    /// matmul.py:7: `def matmul(A, B, C, TM: ct.Constant[int], TN: ct.Constant[int], TK: ct.Constant[int]):`
    ///
    /// Safe: cutile proves its partitions' stores disjoint and in bounds, and the module's functions
    /// above check their own accesses.
    #[cutile::entry()]
    fn matmul<E0: ElementType, E1: ElementType, const TM: i32, const TN: i32, const TK: i32>(
        A: &Tensor<E0, { [-1, -1] }>,
        B: &Tensor<E0, { [-1, -1] }>,
        C: &mut Tensor<E1, { [TM, TN] }>,
    ) {
        // matmul.py:11: for k in range(ct.num_tiles(A, axis=1, shape=(TM, TK))):
        let A_part: Partition<E0, { [TM, TK] }> = A.partition(const_shape![TM, TK]);
        // matmul.py:13: b = ct.load(B, index=(k, bn), shape=(TK, TN), padding_mode=ct.PaddingMode.ZERO)
        let B_part: Partition<E0, { [TK, TN] }> = B.partition(const_shape![TK, TN]);
        // matmul.py:8: bm = ct.bid(0)
        let bm: i32 = get_tile_block_id().0;
        // matmul.py:9: bn = ct.bid(1)
        let bn: i32 = get_tile_block_id().1;
        // matmul.py:10: acc = ct.full((TM, TN), 0, dtype=ct.float32)
        let mut acc: Tile<f32, { [TM, TN] }> = constant(0.0f32, const_shape![TM, TN]);
        // matmul.py:11: for k in range(ct.num_tiles(A, axis=1, shape=(TM, TK))):
        for k in 0i32..num_tiles(&A_part, 1i32) {
            // matmul.py:12: a = ct.load(A, index=(bm, k), shape=(TM, TK), padding_mode=ct.PaddingMode.ZERO)
            let a: Tile<E0, { [TM, TK] }> = load_view_tko(
                &A_part,
                [bm, k],
                ordering::Weak,
                scope::TileBlock,
                None,
                tma::Enabled,
            );
            // matmul.py:13: b = ct.load(B, index=(k, bn), shape=(TK, TN), padding_mode=ct.PaddingMode.ZERO)
            let b: Tile<E0, { [TK, TN] }> = load_view_tko(
                &B_part,
                [k, bn],
                ordering::Weak,
                scope::TileBlock,
                None,
                tma::Enabled,
            );
            // matmul.py:14: acc = ct.mma(a, b, acc)
            acc = mma(a, b, acc);
        }
        // matmul.py:15: ct.store(C, index=(bm, bn), tile=acc.astype(C.dtype))
        let C_tile: Tile<E1, { [TM, TN] }> = convert_tile(acc);
        C.store(C_tile);
    }
}
