//! Tile kernels translated by tilebridge from scaled_silu.py.
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

    /// scaled_silu.py:13: `def scaled_silu(x, y, alpha: float, beta: float, TILE: ct.Constant[int]):`
    ///
    /// Safe: cutile proves its partitions' stores disjoint and in bounds, and the module's functions
    /// above check their own accesses.
    #[cutile::entry()]
    fn scaled_silu<E0: ElementType, E1: ElementType, const TILE: i32>(
        x: &Tensor<E0, { [-1] }>,
        y: &mut Tensor<E1, { [TILE] }>,
        alpha: f32,
        beta: f32,
    ) {
        // scaled_silu.py:15: t = ct.load(x, index=(pid,), shape=(TILE,), padding_mode=ct.PaddingMode.ZERO)
        let x_part: Partition<E0, { [TILE] }> = x.partition(const_shape![TILE]);
        // scaled_silu.py:14: pid = ct.bid(0)
        let pid: i32 = get_tile_block_id().0;
        // scaled_silu.py:15: t = ct.load(x, index=(pid,), shape=(TILE,), padding_mode=ct.PaddingMode.ZERO)
        let t: Tile<E0, { [TILE] }> = load_view_tko(
            &x_part,
            [pid],
            ordering::Weak,
            scope::TileBlock,
            None,
            tma::Enabled,
        );
        // scaled_silu.py:16: tf = t.astype(ct.float32)
        let tf: Tile<f32, { [TILE] }> = convert_tile(t);
        // scaled_silu.py:17: sig = 1.0 / (1.0 + ct.exp2(-tf * LOG2E))
        let sig: Tile<f32, { [TILE] }> = broadcast_scalar(1.0f32, const_shape![TILE])
            / (broadcast_scalar(1.0f32, const_shape![TILE])
                + exp2(
                    negf(tf) * broadcast_scalar(1.4426950408889634f32, const_shape![TILE]),
                    ftz::Disabled,
                ));
        // scaled_silu.py:18: out = alpha * (tf * sig) + beta
        let out: Tile<f32, { [TILE] }> = fma(
            broadcast_scalar(alpha, const_shape![TILE]),
            tf * sig,
            broadcast_scalar(beta, const_shape![TILE]),
            rounding::NearestEven,
            ftz::Disabled,
        );
        // scaled_silu.py:19: ct.store(y, index=(pid,), tile=out.astype(y.dtype))
        let y_tile: Tile<E1, { [TILE] }> = convert_tile(out);
        y.store(y_tile);
    }

    /// scaled_silu.py:23: `def scaled_silu_in_place(x, alpha: float, beta: float, TILE: ct.Constant[int]):`
    ///
    /// Unsafe blocks, each with the obligation it leaves:
    /// - updates 'x' in place through an unchecked partition (obligation: each block loads and stores only its own tiles of it, inside its grid; the kernel keeps it, as cuTile Python requires).
    #[cutile::entry()]
    fn scaled_silu_in_place<E0: ElementType, const TILE: i32>(
        x: &Tensor<E0, { [-1] }>,
        alpha: f32,
        beta: f32,
    ) {
        // scaled_silu.py:26: tf = ct.load(x, index=(pid,), shape=(TILE,), padding_mode=ct.PaddingMode.ZERO).astype(ct.float32)
        // SAFETY: cutile cannot prove that blocks store disjoint tiles of `x` (it is updated in place); the kernel guarantees it, as cuTile Python requires.
        let mut x_out: PartitionMut<E0, { [TILE] }> = unsafe {
            make_partition_view_mut(x, const_shape![TILE], padding::Zero, get_tensor_token(x))
        };
        // scaled_silu.py:25: pid = ct.bid(0)
        let pid: i32 = get_tile_block_id().0;
        // scaled_silu.py:26: tf = ct.load(x, index=(pid,), shape=(TILE,), padding_mode=ct.PaddingMode.ZERO).astype(ct.float32)
        // SAFETY: a tile outside the array reads the padding; the kernel reads only what its own block writes, as cuTile Python requires of an in-place update.
        let tf_2: Tile<E0, { [TILE] }> = unsafe {
            load_view_tko_mut(
                &x_out,
                [pid],
                ordering::Weak,
                scope::TileBlock,
                None,
                tma::Enabled,
            )
        };
        let tf: Tile<f32, { [TILE] }> = convert_tile(tf_2);
        // scaled_silu.py:27: sig = 1.0 / (1.0 + ct.exp2(-tf * LOG2E))
        let sig: Tile<f32, { [TILE] }> = broadcast_scalar(1.0f32, const_shape![TILE])
            / (broadcast_scalar(1.0f32, const_shape![TILE])
                + exp2(
                    negf(tf) * broadcast_scalar(1.4426950408889634f32, const_shape![TILE]),
                    ftz::Disabled,
                ));
        // scaled_silu.py:28: ct.store(x, index=(pid,), tile=(alpha * (tf * sig) + beta).astype(x.dtype))
        let x_tile: Tile<f32, { [TILE] }> = fma(
            broadcast_scalar(alpha, const_shape![TILE]),
            tf * sig,
            broadcast_scalar(beta, const_shape![TILE]),
            rounding::NearestEven,
            ftz::Disabled,
        );
        let x_tile_2: Tile<E0, { [TILE] }> = convert_tile(x_tile);
        // SAFETY: cutile cannot prove that blocks store disjoint tiles of `x` ('x' is also read); the kernel guarantees it, as cuTile Python requires.
        let mut x_out_2: PartitionMut<E0, { [TILE] }> = unsafe {
            make_partition_view_mut(
                x,
                const_shape![TILE],
                padding::None,
                join_tokens(&[get_tensor_token(x), get_partition_token_mut(&x_out)]),
            )
        };
        // SAFETY: the kernel stores inside the grid of `x`'s partition, and blocks store disjoint tiles of it, as cuTile Python requires.
        unsafe {
            store_view_tko_mut(
                &mut x_out_2,
                x_tile_2,
                [pid],
                ordering::Weak,
                scope::TileBlock,
                None,
                tma::Enabled,
            )
        };
    }
}
