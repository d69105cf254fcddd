//! Separable (rank-1) 3D masks in one pass: compile-time radius, one entry point per
//! radius. The mask arrives as its taps along x, then y, then z (`MASK_1D`, `2R+1`
//! each).
//!
//! The skeleton is `conv3d_fast`'s (`planes::walk`): a block owns a 128 x 8K column of outputs and a
//! chunk of depth; input planes (with x/y halos) stream through a ring of shared buffers
//! with 16-byte `cp.async`, `ahead(R)` planes ahead. For each input plane the block
//! (1) filters the staged rows along x into a shared plane (4 outputs per thread from a
//! register window), (2) each thread filters that plane along y into a 4-wide x K-tall
//! register patch, and (3) adds the patch into the `2R+1` output-plane patches it
//! touches through the z taps, stores the patch that is complete and moves the others
//! down. Every output costs `3(2R+1)` FMAs (and the x filter of the y halo rows); the
//! intermediates never leave the chip. Geometry: `layout::families::conv3d_separable`.
use crate::device::*;
use crate::{patch, planes};
use layout::families::conv3d_separable::{
    min_blocks, pad, plane_floats, ring, rows_per_thread, staged_h, staged_w, QX, THREADS_X, THREADS_Y, TILE_W,
};

/// Threads per block.
const THREADS: u32 = THREADS_X * THREADS_Y;

const _: () = assert!(
    QX == patch::QX
        && TILE_W == QX * THREADS_X
        && rows_per_thread(0) as usize <= patch::MAX_ROWS
        && ((2 * layout::families::conv3d_separable::MAX_RADIUS) as usize) < patch::MAX_PLANES
);

/// Filters the staged plane at `slot` along x into `xf` (`TILE_W` floats a row, every
/// staged row): thread (tx, ty) filters columns `4tx..4tx+4` of rows ty, ty + 8, ...
///
/// # Safety
/// `slot` holds `staged_h(R)` rows of `staged_w(R)` floats, `xf` as many rows of
/// `TILE_W`; both 16-byte aligned.
#[inline(always)]
unsafe fn x_pass<const R: u32>(slot: *const f32, xf: *mut f32) {
    let (tx, ty) = (thread_x(), thread_y());
    // Rolled: unrolled, several rows' windows would be live at once.
    for n in 0..opaque(staged_h(R).div_ceil(THREADS_Y)) {
        let row = ty + n * THREADS_Y;
        if row < staged_h(R) {
            let src = slot.wrapping_add((row * staged_w(R) + QX * tx) as usize);
            // SAFETY: inside the staged row (4tx + QX + 2·pad <= staged_w), 16-byte aligned.
            let acc = unsafe { patch::filter_row::<R>(src, pad(R)) };
            // SAFETY: 4 floats of a row of xf, 16-byte aligned.
            unsafe { *(xf.wrapping_add((row * TILE_W + QX * tx) as usize) as *mut F4) = F4(acc) };
        }
    }
}

/// # Safety
/// `a.input`, `a.output` hold `w·h·d` floats (< 2^31); `MASK_1D` holds the x, y and z
/// taps, `2R+1` each; launched as `layout::families::conv3d_separable` says.
#[inline(always)]
unsafe fn conv3d_separable<const R: u32>(a: &ConvArgs) {
    let g = crate::walk_of!(conv3d_separable, R, a);
    let (tx, ty, k) = (thread_x(), thread_y(), g.k);
    // The x-filtered plane, after the ring.
    let xf = shared_f32().wrapping_add((ring(R) * plane_floats(R)) as usize);
    let taps = 2 * R as usize + 1;
    let add = |_: u32, slot: *const f32, acc: &mut [patch::Acc; patch::MAX_PLANES]| {
        // xf is free: every thread read it (step q - 1) before the walk's barrier.
        // SAFETY: the slot and xf are the buffers x_pass wants.
        unsafe { x_pass::<R>(slot, xf) };
        sync_threads(); // xf is whole

        // The y filter of this thread's rows: rows ty·k .. ty·k + k + 2R of xf.
        let yf = patch::filter_column::<R, 4>(k, |i| {
            // SAFETY: a row of xf, 16-byte aligned.
            unsafe { *(xf.wrapping_add(((ty * k + i) * TILE_W + QX * tx) as usize) as *const F4) }.0
        });
        // Output plane q - 2R + j reads input plane q through z tap 2R - j. Indexed
        // (not iterators): the loops must unroll into register patches.
        #[allow(clippy::needless_range_loop)]
        for j in 0..taps {
            let m = Mask1d::get(2 * taps + (taps - 1 - j));
            for o in 0..k as usize {
                for x in 0..QX as usize {
                    acc[j][o][x] = fma(m, yf[o][x], acc[j][o][x]);
                }
            }
        }
    };
    // SAFETY: forwarded from the contract; the walk's geometry is this family's, and xf
    // lies past the ring.
    unsafe { planes::walk::<R>(a, g, add) }
}

/// Entries and their launch bounds: 256 threads, `min_blocks(R)` blocks per SM.
macro_rules! entries {
    ($($name:ident = $r:literal),* $(,)?) => {$(
        crate::launch_bounds!($name, THREADS, min_blocks($r));
        /// `conv3d_separable` at a fixed radius.
        ///
        /// # Safety
        /// As `conv3d_separable`, for masks of this radius.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $name(a: ConvArgs) {
            // SAFETY: forwarded from the entry's contract.
            unsafe { conv3d_separable::<$r>(&a) }
        }
    )*};
}
entries!(
    conv3d_separable_r0 = 0,
    conv3d_separable_r1 = 1,
    conv3d_separable_r2 = 2,
    conv3d_separable_r3 = 3,
    conv3d_separable_r4 = 4,
);
