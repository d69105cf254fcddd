//! Separable (rank-1) 3D masks in one pass: compile-time radius, one entry point per
//! radius. The mask arrives as its taps along x, then y, then z (`MASK_1D`, `2R+1`
//! each).
//!
//! The skeleton is `conv3d_fast`'s (`planes::walk`): a block owns a 128 x 8K column of
//! outputs and a chunk of depth; input planes (with x/y halos) stream through a ring of
//! shared buffers with 16-byte `cp.async`, `ahead(R)` planes ahead. For each input plane
//! the block (1) filters the staged plane along y into a shared plane of the tile's rows
//! (every staged column; K rows of 4 columns per item), (2) each thread filters its K
//! rows of that plane along x from a register window, and (3) adds each filtered row into
//! the `2R+1` output-plane patches it touches through the z taps; the walk stores the
//! patch that is complete and moves the others down. Every output costs `3(2R+1)` FMAs,
//! and the y filter of the x halo columns `(2R+1)·2pad/128` more (y first: filtering x
//! first costs the x filter of the y halo rows, `(2R+1)·2R/8K`, 2x at r = 4 where K = 1);
//! the intermediates never leave the chip. Geometry: `layout::families::conv3d_separable`.
use crate::device::*;
use crate::{patch, planes};
use layout::families::conv3d_separable::{
    min_blocks, pad, plane_floats, ring, rows_per_thread, staged_w, QX, THREADS_X, THREADS_Y, TILE_W,
};

/// Threads per block.
const THREADS: u32 = THREADS_X * THREADS_Y;

const _: () = assert!(
    QX == patch::QX
        && TILE_W == QX * THREADS_X
        && rows_per_thread(0) as usize <= patch::MAX_ROWS
        && ((2 * layout::families::conv3d_separable::MAX_RADIUS) as usize) < patch::MAX_PLANES
);

/// Filters the staged plane at `slot` along y into `yf` (`staged_w` floats a row, the
/// tile's `k·THREADS_Y` rows): item `g + groups·b` (group `g` of 4 columns, band `b` of
/// `k` rows) sums the `k + 2R` staged rows of its group from row `b·k`. Thread `tid`
/// takes items `tid`, `tid + THREADS` (consecutive threads, consecutive groups: the
/// 16-byte loads are free of bank conflicts; 16 threads take a second item).
///
/// # Safety
/// `slot` holds `staged_h(R)` rows of `staged_w(R)` floats, `yf` `tile_h(R)` such rows;
/// both 16-byte aligned.
#[inline(always)]
unsafe fn y_pass<const R: u32>(slot: *const f32, yf: *mut f32, tid: u32) {
    let (k, groups) = (rows_per_thread(R), staged_w(R) / QX);
    let taps = 2 * R as usize + 1;
    let mut item = tid;
    // Rolled: at most two items, the second for the halo groups.
    while item < groups * THREADS_Y {
        let (g, band) = (item % groups, item / groups);
        let col = (band * k * staged_w(R) + QX * g) as usize;
        let mut acc = patch::ZERO;
        for i in 0..k + 2 * R {
            // SAFETY: a staged row's group of 4 floats, 16-byte aligned.
            let v = unsafe { *(slot.wrapping_add(col + (i * staged_w(R)) as usize) as *const F4) }.0;
            for o in 0..k {
                let fr = i.wrapping_sub(o);
                if fr <= 2 * R {
                    let m = Mask1d::get(taps + fr as usize);
                    for x in 0..QX as usize {
                        acc[o as usize][x] = fma(m, v[x], acc[o as usize][x]);
                    }
                }
            }
        }
        for o in 0..k {
            // SAFETY: 4 floats of a row of yf, 16-byte aligned.
            unsafe { *(yf.wrapping_add(col + (o * staged_w(R)) as usize) as *mut F4) = F4(acc[o as usize]) };
        }
        item += THREADS;
    }
}

/// # Safety
/// `a.input`, `a.output` hold `w·h·d` floats (< 2^31); `MASK_1D` holds the x, y and z
/// taps, `2R+1` each; launched as `layout::families::conv3d_separable` says.
#[inline(always)]
unsafe fn conv3d_separable<const R: u32>(a: &ConvArgs) {
    let g = crate::walk_of!(conv3d_separable, R, a);
    let (tx, ty, k) = (thread_x(), thread_y(), g.k);
    // The y-filtered plane, after the ring.
    let yf = shared_f32().wrapping_add((ring(R) * plane_floats(R)) as usize);
    let taps = 2 * R as usize + 1;
    let add = |_: u32, slot: *const f32, acc: &mut [patch::Acc; patch::MAX_PLANES]| {
        // yf is free: every thread read it (step q - 1) before the walk's barrier.
        // SAFETY: the slot and yf are the buffers y_pass wants.
        unsafe { y_pass::<R>(slot, yf, ty * THREADS_X + tx) };
        sync_threads(); // yf is whole
        let win = (QX + 2 * pad(R)) as usize;
        #[allow(clippy::needless_range_loop)] // indices: the loops unroll into register patches
        for o in 0..k as usize {
            // The x filter of this thread's row o from its window of yf...
            let row = yf.wrapping_add(((ty * k + o as u32) * staged_w(R) + QX * tx) as usize);
            let mut v = [0.0f32; 24];
            for c in 0..win / 4 {
                // SAFETY: inside the row of yf (4tx + win <= staged_w), 16-byte aligned.
                let f = unsafe { *(row.add(4 * c) as *const F4) };
                v[4 * c..4 * c + 4].copy_from_slice(&f.0);
            }
            let mut xy = [0.0f32; QX as usize];
            for fc in 0..taps {
                let m = Mask1d::get(fc);
                for x in 0..QX as usize {
                    xy[x] = fma(m, v[(pad(R) - R) as usize + fc + x], xy[x]);
                }
            }
            // ... added into the output planes: plane q - 2R + j reads input plane q
            // through z tap 2R - j. Indexed (not iterators): the loops must unroll into
            // register patches.
            for j in 0..taps {
                let m = Mask1d::get(2 * taps + (taps - 1 - j));
                for x in 0..QX as usize {
                    acc[j][o][x] = fma(m, xy[x], acc[j][o][x]);
                }
            }
        }
    };
    // SAFETY: forwarded from the contract; the walk's geometry is this family's, and yf
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
