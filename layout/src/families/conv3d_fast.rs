//! `conv3d_fast` (kernels-gpu/src/conv3d_fast.rs): compile-time radius. A block owns a
//! 128 x 16 column of outputs and a chunk of depth; it streams the input planes of that
//! column through a ring of shared buffers (16-byte `cp.async`, several planes ahead),
//! so each input plane is read once per column, and computes one output plane per step
//! from the `2r+1` planes around it. Each thread holds a 4-wide x K-tall patch of
//! outputs in registers.
use crate::shape::{blocks, MAX_GRID_X, MAX_GRID_YZ};
use crate::{masks, Family, LaunchShape, MaskLoc, Problem, Radii, ShapeError};

/// Threads across a block: one warp.
pub const THREADS_X: u32 = 32;
/// Threads down a block.
pub const THREADS_Y: u32 = 8;
/// Outputs per thread across (one F4).
pub const QX: u32 = 4;
/// Output tile width of a block.
pub const TILE_W: u32 = THREADS_X * QX;
/// Output planes a block computes at most, walking along depth.
pub const CHUNK_Z: u32 = 64;
/// Blocks a launch aims for at least (4 per SM of a 132-SM H200): a volume with fewer
/// columns than that is cut into shorter chunks of depth. 128^3 at r = 2 has 8 columns:
/// chunks of 64 gave 16 blocks and ran at 181 us, slower than conv3d_const (75 us).
pub const BLOCKS_WANTED: u32 = 528;

/// Planes per chunk when depth `d` is cut into `gz` chunks (the launch's grid depth,
/// from which the kernel derives it): every chunk but the last is full, none is empty.
#[inline]
pub const fn chunk_z(d: u32, gz: u32) -> u32 {
    if gz == 0 {
        d
    } else {
        d.div_ceil(gz)
    }
}
/// Largest compiled radius.
pub const MAX_RADIUS: u32 = 3;

/// Output rows per thread.
#[inline]
pub const fn rows_per_thread(_r: u32) -> u32 {
    2
}

/// Output tile height of a block.
#[inline]
pub const fn tile_h(r: u32) -> u32 {
    THREADS_Y * rows_per_thread(r)
}

pub use super::pad;

/// Planes in flight ahead of the ones being read: deep where memory dominates (r <= 1),
/// one where arithmetic does.
#[inline]
pub const fn ahead(r: u32) -> u32 {
    if r <= 1 {
        3
    } else {
        1
    }
}

/// Shared plane buffers: the `2r+1` planes an output plane reads, and those in flight.
#[inline]
pub const fn ring(r: u32) -> u32 {
    2 * r + 1 + ahead(r)
}

/// Width of a staged row: the tile and its halos.
#[inline]
pub const fn staged_w(r: u32) -> u32 {
    TILE_W + 2 * pad(r)
}

/// Shared floats of one staged plane.
#[inline]
pub const fn plane_floats(r: u32) -> u32 {
    staged_w(r) * (tile_h(r) + 2 * r)
}

/// Shared floats a block needs: the ring of planes.
#[inline]
pub const fn shared_floats(r: u32) -> u32 {
    ring(r) * plane_floats(r)
}

/// Blocks per SM the launch bounds ask for (the ring's shared memory allows this many).
#[inline]
pub const fn min_blocks(r: u32) -> u32 {
    if r <= 1 {
        3
    } else {
        2
    }
}

/// The table row.
pub const FAMILY: Family = Family {
    name: "conv3d_fast",
    dim: 3,
    mask: MaskLoc::Const(masks::MASK_3D),
    radii: Radii::Compiled { max: MAX_RADIUS },
    params: crate::ParamList::Conv,
    tile_limit: (u32::MAX, ""),
    modes: crate::family::Modes::All,
    batch: false,
    image: false,
    compiled_channels: None,
    separable: false,
    launch_shape,
    summary: "ours: compile-time radius, planes streamed along depth through a shared ring",
};

/// One block per (128 x 16 column, chunk of up to 64 planes); shorter chunks where the
/// columns alone leave the GPU short of [`BLOCKS_WANTED`].
fn launch_shape(p: &Problem) -> Result<LaunchShape, ShapeError> {
    let r = p.max_radius();
    let [w, h, d] = p.extent;
    let gx = blocks(w as usize, TILE_W as usize, MAX_GRID_X)?;
    let gy = blocks(h as usize, tile_h(r) as usize, MAX_GRID_YZ)?;
    let wanted_z = BLOCKS_WANTED.div_ceil((gx * gy).max(1));
    let chunk = CHUNK_Z.min(d.div_ceil(wanted_z)).max(1);
    // Grid depth ceil(d / chunk): chunk_z(d, gz) <= chunk, and no chunk is empty.
    let gz = blocks(d as usize, chunk as usize, MAX_GRID_YZ)?;
    Ok(LaunchShape {
        grid: (gx, gy, gz),
        block: (THREADS_X, THREADS_Y, 1),
        shared_bytes: shared_floats(r) * 4,
        persistent: false,
    })
}
