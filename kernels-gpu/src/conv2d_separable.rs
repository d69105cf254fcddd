//! Separable (rank-1) 2D masks in one pass: compile-time radius, one entry point per
//! radius. The mask arrives as its row of taps and its column of taps (`MASK_1D[0..2R+1]`
//! and `MASK_1D[2R+1..4R+2]`).
//!
//! A block owns a 128-column strip and a chunk of rows (past r = 16, a balanced share of
//! every strip's rows, walked a strip's part at a time), and walks down it in steps of 32
//! rows. Each step (1) takes the 32 input rows that arrived in shared memory (16-byte
//! `cp.async`, issued a step ahead through the mode-aware staging), (2) filters them
//! along x into the ring of filtered rows (each thread 4 columns from a register window,
//! or from r = 16 16 columns streamed through its accumulators: `row_x`; `2R+1` FFMAs
//! per output with the taps in uniform registers), and (3) filters
//! the ring along y into 32 output rows, `lag(R)` steps behind (each thread a 2 x 8
//! patch, 4 x 4 at r = 12, streaming the ring rows under it: `patch_x`). Every
//! output costs `2(2R+1)` FMAs; the intermediate stays in shared memory.
//! Geometry: `layout::families::conv2d_separable`.
use crate::device::*;
use crate::{patch, stage};
use layout::families::conv2d_separable::{
    balanced, barriers_at, chunk, input_floats, input_pitch, lag, min_blocks, pad, patch_rows, patch_x, ring_pitch,
    ring_rows, row_x, segment, share_units, tile_box, tile_map, STEP, THREADS, TILE_W,
};
use layout::families::conv3d_fast::balanced_range;
use layout::mode::zero_ghosts;
use layout::tile_map::box_bytes;

const _: () = assert!(THREADS.is_multiple_of(TILE_W));

/// Filters the first `rows` (at most 32) staged input rows at `inb` along x into ring
/// rows `first..first+rows`, each thread `X` (`row_x(R)`) columns of a row at a time.
/// At 4 a warp filters 128 columns of one row; wider, each 8 threads of a warp (a
/// quarter-warp's 16-byte access) take 8 rows of one segment, on 8 bank groups (`skew`).
///
/// # Safety
/// `inb` is a staged buffer (`input_floats(R)`) whose first `rows` rows are staged;
/// `ring` holds `ring_rows(R)` rows of `ring_pitch(R)` floats.
#[inline(always)]
unsafe fn row_pass<const R: u32, const X: usize>(inb: *const f32, ring: *mut f32, first: u32, rows: u32) {
    let (segments, tid) = (TILE_W / X as u32, thread_x());
    let at_once = THREADS / segments;
    // Whole quarter-warps of rows (wide), and passes of whole rows.
    const { assert!(X == 4 || (THREADS / (TILE_W / X as u32)).is_multiple_of(8)) };
    const { assert!(STEP.is_multiple_of(THREADS / (TILE_W / X as u32))) };
    let (col, r0) = if X == 4 {
        (4 * (tid % segments), tid / segments)
    } else {
        let quad = tid / 8;
        (X as u32 * (quad % segments), tid % 8 + 8 * (quad / segments))
    };
    // Rolled for large radii: unrolled, several rows' windows would be live at once.
    let passes = if R <= 8 || at_once == STEP {
        STEP / at_once
    } else {
        opaque(STEP / at_once)
    };
    for it in 0..passes {
        let row = r0 + it * at_once;
        if rows < STEP && row >= rows {
            break; // (at 4 the same for the whole warp: it filters one row)
        }
        let src = inb.wrapping_add((row * input_pitch(R) + col) as usize);
        // SAFETY: inside the staged row (col + X + 2·pad <= staged_w), 16-byte aligned.
        // The same sums either way; at 4 the window held in registers, whose code is the
        // one measured there.
        let acc = unsafe {
            if X == 4 {
                patch::filter_row::<R, X>(src, pad(R))
            } else {
                patch::filter_row_stream::<R, X>(src, pad(R))
            }
        };
        let dst = ring.wrapping_add((((first + row) % ring_rows(R)) * ring_pitch(R) + col) as usize);
        for q in 0..X / 4 {
            let f = F4(core::array::from_fn(|e| acc[4 * q + e]));
            // SAFETY: 4 floats of the ring row's X, 16-byte aligned (pitches and X are
            // multiples of 4).
            unsafe { *(dst.wrapping_add(4 * q) as *mut F4) = f };
        }
    }
}

/// Filters the ring along y into output rows `y .. y+32` of the strip at `x0` (filtered
/// row `first` is input row `y - R`), and stores those before row `last`. Each thread sums
/// a `Q`-wide (`patch_x(R)`) x `patch_rows(R)`-tall patch: it streams the ring rows under
/// the patch (one `4Q`-byte load each) through every output row they touch, and stores
/// the patch a row at a time.
///
/// # Safety
/// `ring` holds the filtered rows `first .. first + 32 + 2R`; `p` holds `w·h` floats and
/// `last <= h`.
#[inline(always)]
unsafe fn column_pass<const R: u32, const Q: usize>(
    ring: *const f32,
    first: u32,
    p: *mut f32,
    w: u32,
    (x0, y): (u32, u32),
    last: u32,
) {
    let (across, k, tid) = (TILE_W / Q as u32, patch_rows(R), thread_x());
    let (cg, rg) = (tid % across, tid / across);
    let rr = ring_rows(R);
    // The thread's first ring row is a multiple of k, as is the ring's length: its rows
    // wrap at most once, and each group of k lies on one side of it.
    let r0 = (first + rg * k) % rr;
    let lo = ring.wrapping_add((r0 * ring_pitch(R) + Q as u32 * cg) as usize);
    let hi = lo.wrapping_sub((rr * ring_pitch(R)) as usize);
    // The closure takes its bases by value, and the patch's rows as `patch_rows(R)`, not
    // `k` (by reference, or through `k`, LLVM folded each row's offset into its own wrap
    // select: two more instructions a ring row).
    let acc = patch::filter_column::<R, Q>(k, move |i| {
        let b = if r0 + i / patch_rows(R) * patch_rows(R) < rr {
            lo
        } else {
            hi
        };
        // SAFETY: ring row (r0 + i) % rr, Q floats of it, aligned to 4Q bytes.
        unsafe { patch::load::<Q>(b.wrapping_add((i * ring_pitch(R)) as usize)) }
    });
    // SAFETY: the kernel's contract covers p and w; rows past `last <= h` are skipped.
    unsafe { patch::store(&acc, k, p, w, w, last, x0 + Q as u32 * cg, y + rg * k) }
}

/// # Safety
/// `a.input`, `a.output` hold `w·h` floats; `MASK_1D` holds the row taps then the column
/// taps, `2R+1` each; launched as `layout::families::conv2d_separable` says.
#[inline(always)]
unsafe fn separable<const R: u32, const Q: usize, const X: usize>(a: &ConvArgs) {
    let [w, h, _] = a.extent;
    if !balanced(R) {
        let (x0, y0) = (block_x() * TILE_W, block_y() * chunk(R));
        // SAFETY: forwarded; one chunk of one strip, rows y0 .. last <= h, no copy before.
        unsafe { walk::<R, Q, X>(a, (x0, y0), (y0 + chunk(R)).min(h), None) };
        return;
    }
    let bars = shared_addr(shared_f32()) + 4 * barriers_at(R);
    let maps = tile_map(R) && a.tile_map != 0;
    if maps {
        // SAFETY: the block's two barriers, after the ring (`barriers_at`, `shared_floats`).
        unsafe { init_tile_barriers(bars, 2, thread_x()) };
    }
    // The block's share of every strip's steps, a strip's part at a time; the tensor
    // copies' barriers go on counting their uses from one part to the next.
    let (mut u, end) = balanced_range(block_x(), grid_dim_x(), share_units(R, [w, h]));
    let mut copied = 0;
    while u < end {
        let s = segment(R, h, u, end);
        if s.end > s.first {
            let y0 = s.first * STEP;
            // SAFETY: forwarded; rows y0 .. last <= h of a strip inside the image, the
            // barriers made above where the map is given.
            copied += unsafe { walk::<R, Q, X>(a, (s.strip * TILE_W, y0), (s.end * STEP).min(h), Some(copied)) };
        }
        u = s.next;
    }
}

/// Walks output rows `y0 .. last` of the strip at `x0`, and returns the steps it staged
/// by tensor copies. `copied`: `None` for a block's one walk (it makes the copies'
/// barriers itself where it takes them), or the copies the block's earlier walks made on
/// the barriers, which the caller made.
///
/// # Safety
/// As `separable`; `y0 < last <= h`, `x0 < w`. An earlier walk of the block read its
/// input buffers before its last block barrier (as every walk does), and the ring is
/// written only after this walk's first.
#[inline(always)]
unsafe fn walk<const R: u32, const Q: usize, const X: usize>(
    a: &ConvArgs,
    (x0, y0): (u32, u32),
    last: u32,
    copied: Option<u32>,
) -> u32 {
    let (n, p) = (input(a), output(a));
    let [w, h, _] = a.extent;
    let tid = thread_x();
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
    // Steps staged by tensor copies, as `conv2d_fast`'s tiles: thread 0 starts one a
    // step, completing on its buffer's barrier (step k: buffer (done + k) % 2,
    // its use (done + k) / 2, `done` counting the copies of the block's earlier walks).
    // They read ghost cells as zeros: under another mode only a walk whose rows and
    // columns read lie inside the image takes them.
    let zero = zero_ghosts(a.mode, a.fill);
    let inside = x0 >= pad(R) && x0 + TILE_W + pad(R) <= w && y0 >= R && last + R <= h;
    let tma = tile_map(R) && a.tile_map != 0 && (zero || inside);
    let bars = base + 4 * barriers_at(R);
    if tma && copied.is_none() {
        // SAFETY: the block's two barriers, after the ring (`barriers_at`, `shared_floats`).
        unsafe { init_tile_barriers(bars, 2, tid) };
    }
    // Step k's buffer, and its copy's count on the barriers: copy c lands on barrier
    // c % 2, its use c / 2.
    let done = copied.unwrap_or(0);
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
            sw: input_pitch(R),
            sh: rows,
            mode: a.mode,
            fill: a.fill,
            ghost: false,
            unread: pad(R) - R,
            inline_border: false,
        };
        let slot = (done + k) % 2;
        let buf = base + 4 * input_floats(R) * slot;
        if tma {
            if tid == 0 {
                // SAFETY: `a.tile_map`: the map describes the input with a box of STEP
                // rows of sw floats (`tile_box`), which the buffer holds; it lies a
                // multiple of 128 bytes from the base; the barrier is the buffer's.
                unsafe {
                    tile_map_load(
                        buf,
                        tile_barrier(bars, slot),
                        box_bytes(tile_box(R)),
                        [win.gx0, win.gy0, 0],
                        false,
                    )
                };
            }
            return;
        }
        // SAFETY: the kernel's contract covers the input; buffer `slot` holds
        // input_floats(R) = sw·STEP >= sw·sh floats; x0 and the pad are multiples of 4.
        unsafe { stage::window(win, buf, tid, THREADS) }
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
        if tma {
            // SAFETY: the buffer's barrier, initialized above.
            unsafe { barrier_wait(tile_barrier(bars, (done + k) % 2), ((done + k) / 2) % 2) };
        }
        sync_threads(); // ... and everyone's; the ring rows step k overwrites are read
        let inb = s.wrapping_add((input_floats(R) * ((done + k) % 2)) as usize);
        // SAFETY: buffer (done + k) % 2 holds step k's rows; the ring is inside the
        // launch's memory.
        unsafe {
            if trims && k + 1 == steps {
                row_pass::<R, X>(inb, ring, k * STEP, tail)
            } else {
                row_pass::<R, X>(inb, ring, k * STEP, STEP)
            }
        };
        sync_threads(); // the filtered rows are in the ring
        if k >= lag(R) {
            let o = k - lag(R);
            // SAFETY: the ring holds filtered rows 32·o .. 32·o + 32 + 2R (lag(R) steps
            // of 32 rows cover 2R); the kernel's contract covers p, and last <= h.
            unsafe { column_pass::<R, Q>(ring, o * STEP, p, w, (x0, y0 + o * STEP), last) };
        }
    }
    if tma {
        steps
    } else {
        0
    }
}

/// Entries and their launch bounds: 256 threads, `min_blocks(R)` blocks per SM.
macro_rules! entries {
    ($($name:ident = $r:literal),* $(,)?) => {$(
        // The column pass's patches within a patch's rows, starting at a multiple of
        // their rows (as `column_pass` needs).
        const _: () = assert!(patch_rows($r) as usize <= patch::MAX_ROWS && STEP.is_multiple_of(patch_rows($r)));
        crate::launch_bounds!($name, THREADS, min_blocks($r));
        /// `conv2d_separable` at a fixed radius.
        ///
        /// # Safety
        /// As `separable`, for masks of this radius.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $name(a: ConvArgs) {
            // SAFETY: forwarded from the entry's contract.
            unsafe { separable::<$r, { patch_x($r) as usize }, { row_x($r) as usize }>(&a) }
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
