//! The `.const` symbol holding a tensor map (CUDA's `CUtensorMap`, 128 opaque bytes that
//! cuTensorMapEncodeTiled writes) of a launch's input: entries that read it stage each
//! tile with one tensor copy (`cp.async.bulk.tensor`, sm_90's TMA) instead of each
//! thread's 16-byte copies. The host fills it as it fills the masks (cudaMemcpyToSymbol)
//! and says so in [`crate::ConvArgs::tile_map`].

/// The PTX symbol's name.
pub const SYMBOL: &str = "TILE_MAP";
/// Its bytes (`CU_TENSOR_MAP_NUM_QWORDS` × 8).
pub const BYTES: usize = 128;
/// Its alignment: a tensor map in `.const` space must be 64-byte aligned.
pub const ALIGN: usize = 64;

/// Shared floats of one `mbarrier` a tensor copy completes on (8 bytes, 8-byte aligned):
/// one a buffer, after the buffers (the families' `barriers_at`).
pub const BARRIER_FLOATS: u32 = 2;

/// Bytes of the box `[x, y, z]` (f32 elements) one tensor copy lands: what its barrier
/// waits for, and what the buffer holds.
#[inline]
pub const fn box_bytes([x, y, z]: [u32; 3]) -> u32 {
    4 * x * y * z
}

/// Bytes of an element of the byte ring's boxes (`conv2d_fast::byte_tile_box`): u8 rows
/// read two bytes an element, so that a staged window's 288 bytes fit a box across.
pub const BYTE_ELEMENT: u32 = 2;

/// Bytes of the byte ring's box `[x, y, z]` ([`BYTE_ELEMENT`]s).
#[inline]
pub const fn byte_box_bytes([x, y, z]: [u32; 3]) -> u32 {
    BYTE_ELEMENT * x * y * z
}

/// The box the entries of `family` at radius `r` read u8 images with, for `channels`
/// interleaved channels, in [`BYTE_ELEMENT`]s, or `None` where they take none:
/// `image_patches`' byte ring with channels (`conv2d_fast::byte_tile_map`), `image_mma`'s
/// integer path (`image_mma::imma`).
pub fn byte_tile_box(family: &str, r: u32, channels: u32) -> Option<[u32; 3]> {
    use crate::families::{conv2d_fast, image_mma};
    match family {
        "image_patches" if conv2d_fast::byte_tile_map(r, channels) => Some(conv2d_fast::byte_tile_box(r, channels)),
        "image_mma" if image_mma::imma(r) => Some(image_mma::imma_box(r, channels)),
        _ => None,
    }
}

/// The box the entries of `family` at radius `r` (for `channels` interleaved channels)
/// read with one tensor copy, or `None` where they take none: `conv2d_fast` and
/// `image_patches` from their persistent radii, `conv2d_separable` from r = 8, the 3D
/// walks' planes at `conv3d_fast` r = 1 and `conv3d_separable` from r = 2 (their layouts'
/// `tile_map`). The host encodes the map from it; the sanitizer covers them.
pub fn tile_box(family: &str, r: u32, channels: u32) -> Option<[u32; 3]> {
    use crate::families::{conv2d_fast, conv2d_separable, conv3d_fast, conv3d_separable};
    match family {
        "conv2d_fast" | "image_patches" if conv2d_fast::tile_map(r) => Some(conv2d_fast::tile_box(r, channels)),
        "conv2d_separable" if conv2d_separable::tile_map(r) => Some(conv2d_separable::tile_box(r)),
        "conv3d_fast" if conv3d_fast::tile_map(r) => Some(conv3d_fast::tile_box(r)),
        "conv3d_separable" if conv3d_separable::tile_map(r) => Some(conv3d_separable::tile_box(r)),
        _ => None,
    }
}
