//! Separable (rank-1) 3D masks in one pass: compile-time radius, one entry point per
//! radius. The mask arrives as its taps along x, then y, then z (`MASK_1D`, `2R+1`
//! each).
//!
//! The skeleton is `conv3d_fast`'s (`planes::walk`): a block owns a `tile_w` x `8K`
//! column of outputs and a chunk of depth; input planes (with x/y halos) stream through a
//! ring of shared buffers with 16-byte `cp.async`, `ahead(R)` planes ahead. For each
//! input plane the block (1) filters the staged rows along x into a shared plane (4
//! outputs per thread from a register window), (2) each thread filters a `Q`-wide,
//! `K`-tall patch of that plane along y into registers (`Q = qx(R)`: 4, or one column at
//! r = 4), and (3) adds that patch into the `2R+1` output-plane patches it touches
//! through the z taps; the walk stores the patch that is complete and moves the others
//! down. At r = 3 (`y_first`) (1) and (2) swap axes: the block filters the staged
//! columns along y, each thread its own patch along x. At r = 4 (`lag`) (1) runs a
//! plane ahead of (2) and (3), into the other of two once-filtered planes: one barrier a
//! plane instead of two. Every output costs `3(2R+1)` FMAs (and the first filter of the
//! other axis' halo); the intermediates never leave the chip. Geometry:
//! `layout::families::conv3d_separable`.
use crate::device::*;
use crate::{patch, planes};
use layout::families::conv3d_separable::{
    filtered_floats, lag, min_blocks, pad, qx, rows_per_thread, staged_h, staged_w, tile_h, tile_w, y_filtered_w,
    y_first, y_pad, QX_ROW, THREADS_X, THREADS_Y,
};

/// Threads per block.
const THREADS: u32 = THREADS_X * THREADS_Y;

const _: () = assert!(
    QX_ROW == patch::QX
        && rows_per_thread(0) as usize <= patch::MAX_ROWS
        && rows_per_thread(layout::families::conv3d_separable::MAX_RADIUS) as usize <= patch::MAX_ROWS
        && ((2 * layout::families::conv3d_separable::MAX_RADIUS) as usize) < patch::MAX_PLANES
);

/// Filters the staged plane at `slot` along x into `xf` (`tile_w(R)` floats a row, every
/// staged row): each thread takes one 4-wide group of rows `first, first + step, ...`
/// (a warp takes 32 groups: a 128-wide row, or four 32-wide ones).
///
/// # Safety
/// `slot` holds `staged_h(R)` rows of `staged_w(R)` floats, `xf` as many rows of
/// `tile_w(R)`; both 16-byte aligned.
#[inline(always)]
unsafe fn x_pass<const R: u32>(slot: *const f32, xf: *mut f32) {
    let groups = tile_w(R) / QX_ROW;
    let tid = thread_y() * THREADS_X + thread_x();
    let (first, group, step) = (tid / groups, tid % groups, THREADS / groups);
    // Rolled: unrolled, several rows' windows would be live at once.
    for n in 0..opaque(staged_h(R).div_ceil(step)) {
        let row = first + n * step;
        if row < staged_h(R) {
            let src = slot.wrapping_add((row * staged_w(R) + QX_ROW * group) as usize);
            // SAFETY: inside the staged row (4·group + QX_ROW + 2·pad <= staged_w), 16-byte
            // aligned.
            let acc = unsafe { patch::filter_row::<R, 4>(src, pad(R)) };
            // SAFETY: 4 floats of a row of xf, 16-byte aligned.
            unsafe { *(xf.wrapping_add((row * tile_w(R) + QX_ROW * group) as usize) as *mut F4) = F4(acc) };
        }
    }
}

/// Filters the staged plane at `slot` along y into `yf` (`y_filtered_w(R)` floats a row,
/// the tile's rows, from staged column `pad - y_pad`): each thread takes 4-wide column
/// groups of `K` rows (`K = rows_per_thread(R)`), task `tid`, `tid + THREADS`, ... (a
/// warp takes 32 neighbouring groups).
///
/// # Safety
/// `slot` holds `staged_h(R)` rows of `staged_w(R)` floats, `yf` `tile_h(R)` rows of
/// `y_filtered_w(R)`; both 16-byte aligned.
#[inline(always)]
unsafe fn y_pass<const R: u32>(slot: *const f32, yf: *mut f32) {
    let (k, groups) = (rows_per_thread(R), y_filtered_w(R) / QX_ROW);
    let tasks = groups * (tile_h(R) / k);
    let tid = thread_y() * THREADS_X + thread_x();
    let src0 = slot.wrapping_add((pad(R) - y_pad(R)) as usize);
    // Rolled, as x_pass.
    for n in 0..opaque(tasks.div_ceil(THREADS)) {
        let t = tid + n * THREADS;
        if t < tasks {
            let (band, group) = (t / groups, t % groups);
            let src = src0.wrapping_add((band * k * staged_w(R) + QX_ROW * group) as usize);
            let acc = patch::filter_column::<R, 4>(k, |i| {
                // SAFETY: staged row band·k + i < staged_h, 4 floats of it inside the
                // staged width (pad - y_pad + 4·group + 4 <= staged_w), 16-byte aligned.
                unsafe { patch::load::<4>(src.wrapping_add((i * staged_w(R)) as usize)) }
            });
            for o in 0..k {
                let at = (band * k + o) * y_filtered_w(R) + QX_ROW * group;
                // SAFETY: 4 floats of a row of yf, 16-byte aligned.
                unsafe { *(yf.wrapping_add(at as usize) as *mut F4) = F4(acc[o as usize]) };
            }
        }
    }
}

/// # Safety
/// `a.input`, `a.output` hold `w·h·d` floats (< 2^31); `MASK_1D` holds the x, y and z
/// taps, `2R+1` each; launched as `layout::families::conv3d_separable` says; `Q` is
/// `qx(R)`.
#[inline(always)]
unsafe fn conv3d_separable<const R: u32, const Q: usize>(a: &ConvArgs) {
    let g = crate::walk_of!(conv3d_separable, R, a);
    let (tx, ty, k) = (thread_x(), thread_y(), g.k);
    // The once-filtered planes, after the ring: plane q in number q % 2 with lag 1 (the
    // first pass of plane q writes one while the second pass of plane q - 1 reads the
    // other), else always the one.
    let once = |q: u32| {
        let n = q % (1 + lag(R));
        shared_f32().wrapping_add((g.ring * g.slot_floats + n * filtered_floats(R)) as usize)
    };
    // This thread's window of a once-filtered plane: y first, rows ty·k .. ty·k + k,
    // columns from Q·tx (y_pad before its outputs); x first, rows ty·k .. ty·k + k + 2R,
    // columns Q·tx ...
    let row_floats = if y_first(R) { y_filtered_w(R) } else { tile_w(R) };
    let window = (ty * k * row_floats + Q as u32 * tx) as usize;
    let taps = 2 * R as usize + 1;
    // The first pass of plane q into its once-filtered plane. That plane is free: with
    // lag 0 every thread read it (step q - 1) before the walk's barrier; with lag 1 the
    // readers of plane q - 2 did (step q - 1).
    let pass = |q: u32, slot: *const f32| {
        if y_first(R) {
            // SAFETY: the slot and the plane are the buffers y_pass wants.
            unsafe { y_pass::<R>(slot, once(q)) };
        } else {
            // SAFETY: the slot and the plane are the buffers x_pass wants.
            unsafe { x_pass::<R>(slot, once(q)) };
        }
    };
    // With lag 1, in the walk's step before `add` (its barrier between); with lag 0, in
    // `add` itself, before its barrier: run from `first` instead, r = 3 took 416.9 us
    // against 380.6 (H200, 512^3), the same instructions in another order.
    let first = |q: u32, slot: *const f32| {
        if lag(R) == 1 {
            pass(q, slot)
        }
    };
    let add = |q: u32, slot: *const f32, acc: &mut [patch::Acc; patch::MAX_PLANES]| {
        if lag(R) == 0 {
            pass(q, slot);
            sync_threads(); // the plane is whole
        }
        // Plane q's once-filtered plane is whole: a barrier passed since its first pass.
        let mine = once(q).wrapping_add(window);
        let f = if y_first(R) {
            let mut f = [[0.0; Q]; patch::MAX_ROWS];
            // Indexed: with an iterator the rows went to local memory (a 128-byte frame).
            #[allow(clippy::needless_range_loop)]
            for o in 0..k as usize {
                // SAFETY: row ty·k + o of the y-filtered plane, from column 4·tx: the
                // 4 + 2·y_pad floats lie inside it, 16-byte aligned (Q = 4 here).
                let row = unsafe { patch::filter_row::<R, 4>(mine.wrapping_add(o * row_floats as usize), y_pad(R)) };
                f[o][..Q].copy_from_slice(&row[..Q]);
            }
            f
        } else {
            patch::filter_column::<R, Q>(k, |i| {
                // SAFETY: Q floats of a row of the x-filtered plane, 16-byte aligned for
                // Q = 4 (a warp reads a 128-float row, or a 32-float one for one column).
                unsafe { patch::load::<Q>(mine.wrapping_add((i * row_floats) as usize)) }
            })
        };
        // Output plane q - 2R + j reads input plane q through z tap 2R - j. Indexed
        // (not iterators): the loops must unroll into register patches.
        #[allow(clippy::needless_range_loop)]
        for j in 0..taps {
            let m = Mask1d::get(2 * taps + (taps - 1 - j));
            for o in 0..k as usize {
                for x in 0..Q {
                    acc[j][o][x] = fma(m, f[o][x], acc[j][o][x]);
                }
            }
        }
    };
    // SAFETY: forwarded from the contract; the walk's geometry is this family's, and the
    // once-filtered planes lie past the ring.
    unsafe { planes::walk::<R>(a, g, first, add) }
}

/// Entries and their launch bounds: 256 threads, `min_blocks(R)` blocks per SM.
macro_rules! entries {
    ($($name:ident = ($r:literal, $q:literal)),* $(,)?) => {$(
        // y first filters each thread's own 4-wide patch along x.
        const _: () = assert!($q == qx($r) && (!y_first($r) || $q == QX_ROW));
        crate::launch_bounds!($name, THREADS, min_blocks($r));
        /// `conv3d_separable` at a fixed radius.
        ///
        /// # Safety
        /// As `conv3d_separable`, for masks of this radius.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $name(a: ConvArgs) {
            // SAFETY: forwarded from the entry's contract.
            unsafe { conv3d_separable::<$r, $q>(&a) }
        }
    )*};
}
entries!(
    conv3d_separable_r0 = (0, 4),
    conv3d_separable_r1 = (1, 4),
    conv3d_separable_r2 = (2, 4),
    conv3d_separable_r3 = (3, 4),
    conv3d_separable_r4 = (4, 1),
);
