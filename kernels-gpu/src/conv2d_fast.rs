//! 2D fast: compile-time radius (one entry point per radius), register-blocked outputs.
//!
//! While one tile is computed, the next tiles' inputs (outputs + halo) stream into
//! shared memory with 16-byte `cp.async` (`device::pipelined_tiles`; persistent blocks
//! where arithmetic dominates). Each thread owns a 4-wide × `K`-tall patch of outputs in
//! registers: it reads each input row of its window once (LDS.128) and adds it into
//! every output row it touches, so taps are FFMAs with the mask in uniform registers,
//! and shared memory traffic is ~(K+2R)/K window loads per output row instead
//! of 2R+1. Geometry: `layout::families::conv2d_fast`.
use crate::device::*;
use crate::{patch, stage};
use layout::families::conv2d_fast::{
    buffer_floats, min_blocks, pad, rows_per_thread, staged_w, stages, tile_h, QX, THREADS_X, THREADS_Y, TILE_W,
};

const _: () = assert!(QX == patch::QX && rows_per_thread(0) as usize <= patch::MAX_ROWS);

/// Threads per block.
const THREADS: u32 = THREADS_X * THREADS_Y;

/// Computes and stores the tile at `(x0, y0)` from its staged inputs at `s`.
///
/// # Safety
/// `p` holds `w·h` floats; `s` is the tile's staged buffer.
#[inline(always)]
unsafe fn compute<const R: u32>(s: *const f32, p: *mut f32, w: u32, h: u32, (x0, y0): (u32, u32)) {
    let k = rows_per_thread(R);
    let (tx, ty) = (thread_x(), thread_y());
    let mut acc = [patch::ZERO];
    let first = s.wrapping_add(((ty * k) * staged_w(R) + QX * tx) as usize);
    // SAFETY: the thread's window lies inside the staged buffer (`buffer_floats`).
    unsafe {
        patch::accumulate::<R, 1>(first, staged_w(R), pad(R), k, R > 4, &mut acc, 1, |_, fr, fc| {
            Mask2d::get(fr * (2 * R as usize + 1) + fc)
        })
    };
    // SAFETY: the kernel's contract covers p, w and h.
    unsafe { patch::store(&acc[0], k, p, w, w, h, x0 + QX * tx, y0 + ty * k) }
}

/// # Safety
/// `a.input`, `a.output` hold `w·h·planes` floats (`a.extent`; planes are filtered one
/// by one: a stack of images); `MASK_2D` holds the `(2R+1)^2` taps; launched as
/// `layout::families::conv2d_fast` says.
#[inline(always)]
unsafe fn conv2d_fast<const R: u32>(a: &ConvArgs) {
    let (n, p) = (input(a), output(a));
    let [w, h, planes] = a.extent;
    let plane_len = w as usize * h as usize;
    let grid = [w.div_ceil(TILE_W), h.div_ceil(tile_h(R)), planes];
    // Both callbacks see tiles block_x, block_x + grid, ... in order: one cursor each.
    let mut staged = TileCursor::new(grid, block_x(), grid_dim_x());
    let mut computed = TileCursor::new(grid, block_x(), grid_dim_x());
    let tid = thread_y() * THREADS_X + thread_x();
    pipelined_tiles(
        stages(R),
        grid[0] * grid[1] * planes,
        buffer_floats(R),
        |_, buf| {
            let [tx, ty, z] = staged.advance();
            let (x0, y0) = (tx * TILE_W, ty * tile_h(R));
            let win = stage::Window {
                plane: n.wrapping_add(z as usize * plane_len),
                row_pitch: w,
                w,
                h,
                channels: 1,
                gx0: x0.wrapping_sub(pad(R)),
                gy0: y0.wrapping_sub(R),
                sw: staged_w(R),
                sh: tile_h(R) + 2 * R,
                mode: a.mode,
                fill: a.fill,
                ghost: false,
                unread: pad(R) - R,
                inline_border: false,
            };
            // SAFETY: the kernel's contract covers n and the extent; the buffer holds
            // buffer_floats(R) = sw·sh floats; x0 and pad are multiples of 4.
            unsafe { stage::window(win, buf, tid, THREADS) }
        },
        |_, s| {
            let [tx, ty, z] = computed.advance();
            let (x0, y0) = (tx * TILE_W, ty * tile_h(R));
            let out = p.wrapping_add(z as usize * plane_len);
            // SAFETY: the kernel's contract covers p and the extent; `s` is tile t's buffer.
            unsafe { compute::<R>(s, out, w, h, (x0, y0)) }
        },
    )
}

/// Entries and their launch bounds: 256 threads, `min_blocks(R)` blocks per SM.
macro_rules! entries {
    ($($name:ident = $r:literal),* $(,)?) => {$(
        crate::launch_bounds!($name, THREADS, min_blocks($r));
        /// `conv2d_fast` at a fixed radius.
        ///
        /// # Safety
        /// As `conv2d_fast`, for a mask of this radius.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $name(a: ConvArgs) {
            // SAFETY: forwarded from the entry's contract.
            unsafe { conv2d_fast::<$r>(&a) }
        }
    )*};
}
entries!(
    conv2d_fast_r0 = 0,
    conv2d_fast_r1 = 1,
    conv2d_fast_r2 = 2,
    conv2d_fast_r3 = 3,
    conv2d_fast_r4 = 4,
    conv2d_fast_r5 = 5,
    conv2d_fast_r6 = 6,
    conv2d_fast_r7 = 7,
    conv2d_fast_r8 = 8,
);
