//! Pitched multi-channel images, fast: radius and channel count compiled in (one entry
//! point per pair, `image_fast_c{C}_r{R}`), u8 or f32 pixels, every ghost-cell mode.
//!
//! A row of `w` pixels of `C` interleaved channels is `w·C` elements; a tap of the mask
//! reads the same channel `C` elements away. A block owns a 1024-element column of
//! outputs and a chunk of rows, and walks down it as the 3D kernels walk along depth:
//! rows stream into a ring of shared slots as f32 (`device::streamed`; 16-byte
//! `cp.async` for f32 pixels, 4-byte loads widened on the way for u8), several steps
//! ahead, and each thread adds each input row (its 4 elements and their halo) into the
//! one-row patches of the `2R+1` output rows it touches (`patch::add_rows`, two rows at
//! once where their windows fit the registers: each tap loaded once for both), stores the
//! ones that are complete, 16 bytes (f32) or 4 bytes (u8, rounded and saturated), and
//! moves the others down. Every tap is then a uniform-register operand with the rows loop
//! rolled (a 2D patch with 3 interleaved channels spilled unrolled, and rolled it spent
//! most of its issue on tap loads and row checks). Rows are `pitch` bytes apart.
//! Geometry: `layout::families::image_fast`.
use crate::device::*;
use crate::{patch, stage};
use layout::args::pixel;
use layout::families::image_fast::{
    ahead, chunk_rows, min_blocks, pad, raw_slot_bytes, ring, rows_at_once, rows_per_step, shared_floats, slot_floats,
    staged_w, QX, THREADS, TILE_W,
};

/// Patches a thread keeps: the `2R+1` output rows a row touches, and one more for the
/// second of two rows added at once.
const ACC: usize = 2 * layout::families::image_fast::MAX_RADIUS as usize + 2;

const _: () = assert!(QX == patch::QX);

/// # Safety
/// `a.input`, `a.output` hold `h` rows `a.pitch` bytes apart of `w·C` pixels of type `P`
/// (`a.pixel`), `a.pitch` a multiple of the pixel size; `MASK_2D` holds the `(2R+1)^2`
/// taps; launched as `layout::families::image_fast` says for `C` channels.
#[inline(always)]
unsafe fn filter<const R: u32, const C: u32, const N: usize, P: Pixel>(a: &ConvArgs) {
    let (n, p) = (a.input as *const P, a.output as *mut P);
    let [w, h, _] = a.extent;
    let (wf, row_pitch) = (w * C, a.pitch / core::mem::size_of::<P>() as u32);
    let (sw, pd, b) = (staged_w(R, C), pad(R, C), rows_per_step(R));
    let chunk = chunk_rows(h, grid_dim_z());
    let y_begin = block_z() * chunk;
    // Input rows the chunk reads (staged row i is input row y_begin - R + i).
    let rows = h.saturating_sub(y_begin).min(chunk) + 2 * R;
    let (x0, tid) = (block_x() * TILE_W, thread_x());
    let x = x0 + QX * tid;
    let mut acc = [[0.0f32; QX as usize]; ACC];
    // Step q stages rows q·b.. of the chunk: input rows y_begin - R + q·b...
    let rows_of = |q: u32| stage::Window {
        plane: n,
        row_pitch,
        w: wf,
        h,
        channels: C,
        gx0: x0.wrapping_sub(pd),
        gy0: (y_begin + q * b).wrapping_sub(R),
        sw,
        sh: b,
        mode: a.mode,
        fill: a.fill,
        ghost: false,
        unread: pd - R * C,
        inline_border: false,
    };
    // Step q's raw slot (u8 pixels as they are) in the raw ring after the slots; every
    // step stages the same columns, so this thread's edge cell is worked out once.
    let raw_base = shared_addr(shared_f32()) + 4 * shared_floats(R, C);
    let edge = stage::EdgeCell::of(&rows_of(0), tid, THREADS, false);
    let walk = |q: u32| stage::Walking {
        edge,
        raw: Some(raw_base + (q % ring(R)) * raw_slot_bytes(R, C)),
        // Its windows move down rows: no fixed table.
        groups: None,
    };
    // SAFETY: the ring's slots (slot_floats each from the dynamic shared base); no copy
    // is in flight yet.
    unsafe {
        stage::fill_unread(
            &rows_of(0),
            &walk(0),
            (shared_addr(shared_f32()), 4 * slot_floats(R, C), ring(R)),
            tid,
            THREADS,
        )
    };
    let stage_rows = |q: u32, buf: u32| {
        // SAFETY: the kernel's contract covers the image; a slot holds slot_floats = sw·b
        // floats and its raw slot sw·b + 4·THREADS bytes; x0 and the pad are multiples of 4.
        unsafe { stage::walked::<_, false>(rows_of(q), buf, &walk(q), tid, THREADS) }
    };
    let land_rows = |q: u32, buf: u32| {
        // SAFETY: as stage_rows, by the same thread, after its copies of step q landed.
        unsafe { stage::land(rows_of(q), buf, &walk(q), tid, THREADS) }
    };
    let add_rows = |q: u32, slot: *const f32| {
        for i in (0..b).step_by(N) {
            let row = q * b + i;
            if row < rows {
                // SAFETY: the thread's windows of staged rows i..i+N lie inside the slot
                // (N divides b); acc holds 2R + N patches.
                unsafe {
                    patch::add_rows::<R, C, N>(
                        slot.wrapping_add((i * sw + QX * tid) as usize),
                        sw,
                        pd,
                        &mut acc,
                        |j, fc| {
                            // Output row (row - 2R + j) reads row through mask row 2R - j.
                            Mask2d::get((2 * R as usize - j) * (2 * R as usize + 1) + fc)
                        },
                    )
                };
                for n in 0..N as u32 {
                    if row + n >= 2 * R && row + n < rows {
                        // SAFETY: output row y_begin + row + n - 2R < y_begin + chunk, < h.
                        unsafe {
                            patch::store(&acc[n as usize..], 1, p, row_pitch, wf, h, x, y_begin + row + n - 2 * R)
                        };
                    }
                }
                for _ in 0..N {
                    patch::rotate(&mut acc, 2 * R as usize + N, [0.0; QX as usize]);
                }
                // SAFETY: an empty statement; as a memory clobber it keeps LLVM from
                // hoisting later rows' loads above these rows' taps.
                unsafe { core::arch::asm!("", options(nostack, preserves_flags)) };
            }
        }
    };
    streamed(
        rows.div_ceil(b),
        (ahead(R), ring(R), slot_floats(R, C)),
        stage_rows,
        land_rows,
        add_rows,
    )
}

/// Entries per (channels, radius) and their launch bounds: `THREADS` threads, `min_blocks(R, C)`
/// blocks per SM. The pixel type is a run-time argument (one uniform branch).
macro_rules! entries {
    ($($name:ident = $c:literal, $r:literal);* $(;)?) => {$(
        crate::launch_bounds!($name, THREADS, min_blocks($r, $c));
        /// `image_fast` for a fixed channel count and radius.
        ///
        /// # Safety
        /// As `filter`, for a mask of this radius and images of this channel count.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $name(a: ConvArgs) {
            if a.pixel == pixel::U8 {
                // SAFETY: forwarded from the entry's contract (u8 pixels).
                unsafe { filter::<$r, $c, { rows_at_once($r, $c) as usize }, u8>(&a) }
            } else {
                // SAFETY: forwarded from the entry's contract (f32 pixels).
                unsafe { filter::<$r, $c, { rows_at_once($r, $c) as usize }, f32>(&a) }
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
