//! Pitched multi-channel images, fast: radius and channel count compiled in (one entry
//! point per pair, `image_fast_c{C}_r{R}`), u8 or f32 pixels, every ghost-cell mode.
//!
//! A row of `w` pixels of `C` interleaved channels is `w·C` elements; a tap of the mask
//! reads the same channel `C` elements away. So the kernel is the fast 2D kernel
//! (`patch::accumulate`) with the tap stride `C`: tiles of 128 elements × 8K rows stream
//! into shared memory as f32 (16-byte `cp.async` for f32 pixels, 4-byte loads converted
//! on the way for u8), and each thread sums a 4-element × K-row patch in registers and
//! stores it 16 bytes (f32) or 4 bytes (u8, rounded and saturated) at a time. Rows are
//! `pitch` bytes apart. Geometry: `layout::families::image_fast`.
use crate::device::*;
use crate::{patch, stage};
use layout::args::pixel;
use layout::families::image_fast::{
    buffer_floats, min_blocks, pad, rows_per_thread, staged_w, stages, tile_h, QX, THREADS_X, THREADS_Y, TILE_W,
};

/// Threads per block.
const THREADS: u32 = THREADS_X * THREADS_Y;

const _: () = assert!(QX == patch::QX && rows_per_thread(0) as usize <= patch::MAX_ROWS);

/// # Safety
/// `a.input`, `a.output` hold `h` rows `a.pitch` bytes apart of `w·C` pixels of type `P`
/// (`a.pixel`), `a.pitch` a multiple of the pixel size; `MASK_2D` holds the `(2R+1)^2`
/// taps; launched as `layout::families::image_fast` says for `C` channels.
#[inline(always)]
unsafe fn filter<const R: u32, const C: u32, P: Pixel>(a: &ConvArgs) {
    let (n, p) = (a.input as *const P, a.output as *mut P);
    let [w, h, _] = a.extent;
    let (wf, row_pitch) = (w * C, a.pitch / core::mem::size_of::<P>() as u32);
    let grid = [wf.div_ceil(TILE_W), h.div_ceil(tile_h(R)), 1];
    // Both callbacks see tiles block_x, block_x + grid, ... in order: one cursor each.
    let mut staged = TileCursor::new(grid, block_x(), grid_dim_x());
    let mut computed = TileCursor::new(grid, block_x(), grid_dim_x());
    let at = |[tx, ty, _]: [u32; 3]| (tx * TILE_W, ty * tile_h(R));
    let (tx, ty) = (thread_x(), thread_y());
    let k = rows_per_thread(R);
    pipelined_tiles(
        stages(R),
        grid[0] * grid[1],
        buffer_floats(R, C),
        |_, buf| {
            let (x0, y0) = at(staged.advance());
            let win = stage::Window {
                plane: n,
                row_pitch,
                w: wf,
                h,
                channels: C,
                gx0: x0.wrapping_sub(pad(R, C)),
                gy0: y0.wrapping_sub(R),
                sw: staged_w(R, C),
                sh: tile_h(R) + 2 * R,
                mode: a.mode,
                fill: a.fill,
                ghost: false,
                unread: pad(R, C) - R * C,
                inline_border: false,
            };
            // SAFETY: the kernel's contract covers the image; the buffer holds
            // buffer_floats(R, C) = sw·sh floats; x0 and the pad are multiples of 4.
            unsafe { stage::window(win, buf, ty * THREADS_X + tx, THREADS) }
        },
        |_, s| {
            let (x0, y0) = at(computed.advance());
            let mut acc = [patch::ZERO];
            let first = s.wrapping_add(((ty * k) * staged_w(R, C) + QX * tx) as usize);
            // SAFETY: the thread's window lies inside the staged buffer.
            unsafe {
                patch::accumulate::<R, C>(
                    first,
                    staged_w(R, C),
                    pad(R, C),
                    k,
                    R > 1 || (R > 0 && C > 1),
                    &mut acc,
                    1,
                    |_, fr, fc| Mask2d::get(fr * (2 * R as usize + 1) + fc),
                )
            };
            // SAFETY: the kernel's contract covers the output image.
            unsafe { patch::store(&acc[0], k, p, row_pitch, wf, h, x0 + QX * tx, y0 + ty * k) }
        },
    )
}

/// Entries per (channels, radius) and their launch bounds: 256 threads, `min_blocks(R)`
/// blocks per SM. The pixel type is a run-time argument (one uniform branch).
macro_rules! entries {
    ($($name:ident = $c:literal, $r:literal);* $(;)?) => {$(
        crate::launch_bounds!($name, THREADS, min_blocks($r));
        /// `image_fast` for a fixed channel count and radius.
        ///
        /// # Safety
        /// As `filter`, for a mask of this radius and images of this channel count.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $name(a: ConvArgs) {
            if a.pixel == pixel::U8 {
                // SAFETY: forwarded from the entry's contract (u8 pixels).
                unsafe { filter::<$r, $c, u8>(&a) }
            } else {
                // SAFETY: forwarded from the entry's contract (f32 pixels).
                unsafe { filter::<$r, $c, f32>(&a) }
            }
        }
    )*};
}
entries!(
    image_fast_c1_r0 = 1, 0; image_fast_c1_r1 = 1, 1; image_fast_c1_r2 = 1, 2; image_fast_c1_r3 = 1, 3; image_fast_c1_r4 = 1, 4;
    image_fast_c2_r0 = 2, 0; image_fast_c2_r1 = 2, 1; image_fast_c2_r2 = 2, 2; image_fast_c2_r3 = 2, 3; image_fast_c2_r4 = 2, 4;
    image_fast_c3_r0 = 3, 0; image_fast_c3_r1 = 3, 1; image_fast_c3_r2 = 3, 2; image_fast_c3_r3 = 3, 3; image_fast_c3_r4 = 3, 4;
    image_fast_c4_r0 = 4, 0; image_fast_c4_r1 = 4, 1; image_fast_c4_r2 = 4, 2; image_fast_c4_r3 = 4, 3; image_fast_c4_r4 = 4, 4;
);
