//! Separable (rank-1) 2D masks in one pass: compile-time radius, one entry point per
//! radius. The mask arrives as its row of taps and its column of taps (`MASK_1D[0..2R+1]`
//! and `MASK_1D[2R+1..4R+2]`).
//!
//! A block owns a 128-column strip and a chunk of rows, and walks down it in steps of 32
//! rows. Each step (1) takes the 32 input rows that arrived in shared memory (16-byte
//! `cp.async`, issued a step ahead through the mode-aware staging), (2) filters them
//! along x into the ring of filtered rows (each thread 4 columns from a register window,
//! `2R+1` FFMAs per output with the taps as constant-bank operands), and (3) filters
//! the ring along y into 32 output rows, `2R` steps behind (each thread 16 rows of one
//! column). Every output costs `2(2R+1)` FMAs; the intermediate stays in shared memory.
//! Geometry: `layout::families::conv2d_separable`.
use crate::device::*;
use crate::{patch, stage};
use layout::families::conv2d_separable::{
    chunk, input_floats, lag, min_blocks, pad, ring_rows, staged_w, COL_Y, MAX_RADIUS, ROW_X, STEP, THREADS, TILE_W,
};

/// Threads that share a row in the row pass, and rows they filter at once.
const ROW_THREADS: u32 = TILE_W / ROW_X;
const ROWS_AT_ONCE: u32 = THREADS / ROW_THREADS;

// STEP = (THREADS / TILE_W)·COL_Y also makes a thread's ring rows start at a multiple of
// COL_Y, as `column_pass` needs.
const _: () = assert!(ROW_X == patch::QX && THREADS.is_multiple_of(TILE_W) && STEP == (THREADS / TILE_W) * COL_Y);

/// Filters the first `rows` (at most 32) staged input rows at `inb` along x into ring
/// rows `first..first+rows`.
///
/// # Safety
/// `inb` is a staged buffer (`input_floats(R)`) whose first `rows` rows are staged;
/// `ring` holds `ring_rows(R)` rows of `TILE_W` floats.
#[inline(always)]
unsafe fn row_pass<const R: u32>(inb: *const f32, ring: *mut f32, first: u32, rows: u32) {
    let tid = thread_x();
    let (col, r0) = (ROW_X * (tid % ROW_THREADS), tid / ROW_THREADS);
    // Rolled for large radii: unrolled, several rows' windows would be live at once.
    let passes = if R <= 8 {
        STEP / ROWS_AT_ONCE
    } else {
        opaque(STEP / ROWS_AT_ONCE)
    };
    for it in 0..passes {
        let row = r0 + it * ROWS_AT_ONCE;
        if rows < STEP && row >= rows {
            break; // (the same for the whole warp: a warp filters one row)
        }
        let src = inb.wrapping_add((row * staged_w(R) + col) as usize);
        // SAFETY: inside the staged row (col + ROW_X + 2·pad <= staged_w), 16-byte aligned.
        let acc = unsafe { patch::filter_row::<R>(src, pad(R)) };
        let dst = ring.wrapping_add((((first + row) % ring_rows(R)) * TILE_W + col) as usize);
        // SAFETY: a ring row's 4 floats, 16-byte aligned.
        unsafe { *(dst as *mut F4) = F4(acc) };
    }
}

/// Filters the ring along y into output rows `y .. y+32` of the strip at `x0` (filtered
/// row `first` is input row `y - R`), and stores those before row `last`.
///
/// # Safety
/// `ring` holds the filtered rows `first .. first + 32 + 2R`; `p` holds `w·h` floats and
/// `last <= h`.
#[inline(always)]
unsafe fn column_pass<const R: u32>(ring: *const f32, first: u32, p: *mut f32, w: u32, (x0, y): (u32, u32), last: u32) {
    let tid = thread_x();
    let (col, rg) = (tid % TILE_W, tid / TILE_W);
    let (n, rr) = ((COL_Y + 2 * R) as usize, ring_rows(R));
    // The thread's first ring row, a multiple of COL_Y, as is the ring's length: its rows
    // wrap at most once, between two groups of COL_Y, so each group picks its base once.
    let r0 = (first + rg * COL_Y) % rr;
    let lo = ring.wrapping_add((r0 * TILE_W + col) as usize);
    let hi = lo.wrapping_sub((rr * TILE_W) as usize);
    let mut v = [0.0f32; (COL_Y + 2 * MAX_RADIUS) as usize];
    for g in 0..n.div_ceil(COL_Y as usize) {
        let b = if r0 + (g as u32) * COL_Y < rr { lo } else { hi };
        #[allow(clippy::needless_range_loop)] // an index: the loads unroll into registers
        for i in g * COL_Y as usize..n.min((g + 1) * COL_Y as usize) {
            // SAFETY: ring row (r0 + i) % rr, a float of it.
            v[i] = unsafe { *b.wrapping_add(i * TILE_W as usize) };
        }
    }
    // Tap-major: each tap is loaded once (into a uniform register) for all COL_Y
    // outputs; output-major reloads it per output once the taps outgrow those registers.
    let mut acc = [0.0f32; COL_Y as usize];
    for j in 0..2 * R as usize + 1 {
        let m = Mask1d::get(2 * R as usize + 1 + j);
        for (q, a) in acc.iter_mut().enumerate() {
            *a = fma(m, v[q + j], *a);
        }
    }
    let acc = acc.map(computed);
    // The rows this thread stores, worked out once, and the address stepped a row at a
    // time: checking the column and the row and rebuilding the address at every store
    // took 7 instructions a store (5 now) beside its 2R+1 FMAs.
    let (x, y_first) = (x0 + col, y + rg * COL_Y);
    let rows = if x < w { last.saturating_sub(y_first) } else { 0 };
    let mut at = y_first * w + x;
    for q in 0..COL_Y {
        if q < rows {
            // SAFETY: row y_first + q < last <= h, column x < w: inside P.
            unsafe { store_global(p.wrapping_add(at as usize), acc[q as usize]) };
        }
        at = at.wrapping_add(w);
    }
}

/// # Safety
/// `a.input`, `a.output` hold `w·h` floats; `MASK_1D` holds the row taps then the column
/// taps, `2R+1` each; launched as `layout::families::conv2d_separable` says.
#[inline(always)]
unsafe fn separable<const R: u32>(a: &ConvArgs) {
    let (n, p) = (input(a), output(a));
    let [w, h, _] = a.extent;
    let tid = thread_x();
    let (x0, y0) = (block_x() * TILE_W, block_y() * chunk(R));
    let last = (y0 + chunk(R)).min(h);
    let steps = (last - y0).div_ceil(STEP) + lag(R);
    // The outputs read input rows y0 - R .. last + R: where the lag's steps hold more
    // than the 2R rows past the outputs (r = 2: 28 of the last step's 32 rows are not
    // read, r = 8: 16), the last step stages and filters only those; the other steps
    // keep 32, a constant (a run-time count in every step made r = 8 1% slower). The
    // column pass's outputs past `last`, never stored, are the only ones that read the
    // ring rows left unfiltered. Each of the three calls below branches on the last step
    // itself: folded into one helper called with `tail` or `STEP`, LLVM merged the two
    // calls into one with a run-time count (`selp`), the slower code above.
    let tail = (last - y0 + 2 * R).saturating_sub((steps - 1) * STEP).min(STEP);
    let trims = lag(R) * STEP > 2 * R;
    let s = shared_f32();
    let ring = s.wrapping_add(2 * input_floats(R) as usize);
    let base = shared_addr(s);
    // Step k's input rows are y0 - R + 32k .., filtered into ring rows 32k ...
    let stage_step = |k: u32, rows: u32| {
        let win = stage::Window {
            plane: n,
            row_pitch: w,
            w,
            h,
            channels: 1,
            gx0: x0.wrapping_sub(pad(R)),
            gy0: (y0 + k * STEP).wrapping_sub(R),
            sw: staged_w(R),
            sh: rows,
            mode: a.mode,
            fill: a.fill,
            ghost: false,
            unread: pad(R) - R,
            inline_border: false,
        };
        // SAFETY: the kernel's contract covers the input; buffer k % 2 holds
        // input_floats(R) = sw·STEP >= sw·sh floats; x0 and the pad are multiples of 4.
        unsafe { stage::window(win, base + 4 * input_floats(R) * (k % 2), tid, THREADS) }
    };
    if trims && steps == 1 {
        stage_step(0, tail);
    } else {
        stage_step(0, STEP);
    }
    cp_async_commit();
    for k in 0..steps {
        if k + 1 < steps {
            // Into the buffer step k - 1 read: freed by its barrier.
            if trims && k + 2 == steps {
                stage_step(k + 1, tail);
            } else {
                stage_step(k + 1, STEP);
            }
        }
        cp_async_commit();
        cp_async_wait::<1>(); // this thread's copies of step k landed
        sync_threads(); // ... and everyone's; the ring rows step k overwrites are read
        let inb = s.wrapping_add((input_floats(R) * (k % 2)) as usize);
        // SAFETY: buffer k % 2 holds step k's rows; the ring is inside the launch's memory.
        unsafe {
            if trims && k + 1 == steps {
                row_pass::<R>(inb, ring, k * STEP, tail)
            } else {
                row_pass::<R>(inb, ring, k * STEP, STEP)
            }
        };
        sync_threads(); // the filtered rows are in the ring
        if k >= lag(R) {
            let o = k - lag(R);
            // SAFETY: the ring holds filtered rows 32·o .. 32·o + 32 + 2R (lag(R) steps
            // of 32 rows cover 2R); the kernel's contract covers p, and last <= h.
            unsafe { column_pass::<R>(ring, o * STEP, p, w, (x0, y0 + o * STEP), last) };
        }
    }
}

/// Entries and their launch bounds: 256 threads, `min_blocks(R)` blocks per SM.
macro_rules! entries {
    ($($name:ident = $r:literal),* $(,)?) => {$(
        crate::launch_bounds!($name, THREADS, min_blocks($r));
        /// `conv2d_separable` at a fixed radius.
        ///
        /// # Safety
        /// As `separable`, for masks of this radius.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $name(a: ConvArgs) {
            // SAFETY: forwarded from the entry's contract.
            unsafe { separable::<$r>(&a) }
        }
    )*};
}
entries!(
    conv2d_separable_r0 = 0,
    conv2d_separable_r1 = 1,
    conv2d_separable_r2 = 2,
    conv2d_separable_r3 = 3,
    conv2d_separable_r4 = 4,
    conv2d_separable_r5 = 5,
    conv2d_separable_r6 = 6,
    conv2d_separable_r7 = 7,
    conv2d_separable_r8 = 8,
    conv2d_separable_r9 = 9,
    conv2d_separable_r10 = 10,
    conv2d_separable_r11 = 11,
    conv2d_separable_r12 = 12,
    conv2d_separable_r13 = 13,
    conv2d_separable_r14 = 14,
    conv2d_separable_r15 = 15,
    conv2d_separable_r16 = 16,
    conv2d_separable_r17 = 17,
    conv2d_separable_r18 = 18,
    conv2d_separable_r19 = 19,
    conv2d_separable_r20 = 20,
    conv2d_separable_r21 = 21,
    conv2d_separable_r22 = 22,
    conv2d_separable_r23 = 23,
    conv2d_separable_r24 = 24,
    conv2d_separable_r25 = 25,
    conv2d_separable_r26 = 26,
    conv2d_separable_r27 = 27,
    conv2d_separable_r28 = 28,
    conv2d_separable_r29 = 29,
    conv2d_separable_r30 = 30,
    conv2d_separable_r31 = 31,
    conv2d_separable_r32 = 32,
);
