//! Geometry the textbook kernels share: their blocks and tiles, as the CUDA C++ twins
//! (`shared/peers/conv_peers.cu`, `conv3d_peers.cu`) launch them, and the launch shape
//! they all follow: one block per output tile.
use crate::shape::{blocks, LaunchShape, Problem, ShapeError, MAX_GRID_X, MAX_GRID_YZ};

/// Threads per block of the 1D textbook kernels (one output each).
pub const BLOCK_1D: u32 = 1024;
/// Block of the one-thread-per-output 2D kernels (basic, const).
pub const BLOCK_2D: (u32, u32, u32) = (32, 8, 1);
/// Side of the 2D tiles: a 32x32 block.
pub const TILE_2D: u32 = 32;
/// Block of the one-thread-per-output 3D kernels (basic, const).
pub const BLOCK_3D: (u32, u32, u32) = (32, 4, 4);
/// Side of the 3D tiles: an 8x8x8 block (512 threads).
pub const TILE_3D: u32 = 8;
/// Largest compile-time radius of the 2D textbook entries (the twins' `template <int R>`).
pub const COMPILED_2D: u32 = 8;
/// Largest compile-time radius of the 3D textbook entries.
pub const COMPILED_3D: u32 = 3;

/// A block of `block` threads per output tile of `out` (x, y, z), `shared_floats` of
/// dynamic shared memory each.
#[inline]
pub fn per_tile(
    p: &Problem,
    block: (u32, u32, u32),
    out: (u32, u32, u32),
    shared_floats: u32,
) -> Result<LaunchShape, ShapeError> {
    let [x, y, z] = p.extent;
    Ok(LaunchShape {
        grid: (
            blocks(x as usize, out.0 as usize, MAX_GRID_X)?,
            blocks(y as usize, out.1 as usize, MAX_GRID_YZ)?,
            blocks(z as usize, out.2 as usize, MAX_GRID_YZ)?,
        ),
        block,
        shared_bytes: shared_floats * 4,
        persistent: false,
        depth: None,
    })
}

/// The output side of an input tile `side` wide under a radius `r` (`side - 2r`, at
/// least 1 where the tile limit holds).
#[inline]
pub const fn out_side(side: u32, r: u32) -> u32 {
    side.saturating_sub(2 * r)
}

/// The largest radius an input tile of `side` allows: `side - 2r >= 2` outputs, as the
/// lecture's 32x32 tile at r = 15.
#[inline]
pub const fn input_tile_limit(side: u32) -> u32 {
    (side - 2) / 2
}
