//! Pitched images of 1 to 4 interleaved channels, f32 or u8, through `conv2d_fast`'s
//! tiles: radius and channel count compiled in (`image_patches_c{C}_r{R}`), every
//! ghost-cell mode, the pixel type a run-time argument (one uniform branch). A row of `w`
//! pixels is `w·C` values and a tap reads the same channel `C` values away, so each
//! thread's 4-wide × K-tall patch holds 4 interleaved outputs a row, its window
//! `4 + 2·pad` floats a row. f32 rows are staged with 16-byte copies as they are; u8 tiles
//! at r <= 1 land as bytes, 16 a copy, in a ring of raw slots and each thread widens the
//! words its window reads in registers, 8 outputs wide with channels at r = 1
//! (`conv2d_fast::compute_bytes`); rows are `pitch` bytes apart. Geometry:
//! `layout::families::image_patches` (`conv2d_fast`'s at `C` channels).
use crate::conv2d_fast::{tiles, THREADS};
use crate::device::*;
use layout::args::pixel;
use layout::families::conv2d_fast::{baked_min_blocks, min_blocks};

/// Entries per (channels, radius) and their launch bounds: `THREADS` threads,
/// `min_blocks(R, C)` blocks per SM (`baked_min_blocks(R, C)` with the taps baked in).
macro_rules! entries {
    ($($name:ident = $c:literal, $r:literal);* $(;)?) => {$(
        crate::launch_bounds!($name, THREADS, min_blocks($r, $c), baked_min_blocks($r, $c));
        /// `image_patches` for a fixed channel count and radius.
        ///
        /// # Safety
        /// `a.input`, `a.output` hold `h` rows `a.pitch` bytes apart of `w·C` pixels
        /// of type `a.pixel` (`a.extent`; `a.pitch` a multiple of the pixel size);
        /// `MASK_2D` holds the `(2R+1)^2` taps; launched as
        /// `layout::families::image_patches` says.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $name(a: ConvArgs) {
            let [w, h, _] = a.extent;
            if a.pixel == pixel::U8 {
                // SAFETY: forwarded from the entry's contract: one plane of h rows of
                // w·C bytes, a.pitch apart.
                unsafe { tiles::<$r, $c, u8>(&a, [w * $c, h, 1], a.pitch) }
            } else {
                // SAFETY: forwarded from the entry's contract: one plane of h rows of w·C
                // floats, a.pitch / 4 floats apart.
                unsafe { tiles::<$r, $c, f32>(&a, [w * $c, h, 1], a.pitch / 4) }
            }
        }
    )*};
}
entries!(
    image_patches_c1_r0 = 1, 0; image_patches_c1_r1 = 1, 1; image_patches_c1_r2 = 1, 2; image_patches_c1_r3 = 1, 3; image_patches_c1_r4 = 1, 4;
    image_patches_c2_r0 = 2, 0; image_patches_c2_r1 = 2, 1; image_patches_c2_r2 = 2, 2; image_patches_c2_r3 = 2, 3; image_patches_c2_r4 = 2, 4;
    image_patches_c3_r0 = 3, 0; image_patches_c3_r1 = 3, 1; image_patches_c3_r2 = 3, 2; image_patches_c3_r3 = 3, 3; image_patches_c3_r4 = 3, 4;
    image_patches_c4_r0 = 4, 0; image_patches_c4_r1 = 4, 1; image_patches_c4_r2 = 4, 2; image_patches_c4_r3 = 4, 3; image_patches_c4_r4 = 4, 4;
);
