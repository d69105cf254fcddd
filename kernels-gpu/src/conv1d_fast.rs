//! 1D fast: compile-time radius (one entry point per radius), several outputs per thread.
//!
//! A tile's 1024 inputs plus halo stream into shared memory with 16-byte `cp.async`
//! (`device::pipelined_tiles`; persistent blocks with a ring of tiles where arithmetic
//! dominates). Each thread computes 4 consecutive outputs from a register window of
//! 4+2·pad inputs (LDS.128, conflict-free: a warp reads 512 contiguous bytes), every tap
//! an FFMA with its tap in a uniform register. One LDGSTS.128 and one STG.128 per
//! thread per tile. Geometry: `layout::families::conv1d_fast`.
use crate::device::*;
use crate::stage;
use layout::families::conv1d_fast::{buffer_floats, min_blocks, pad, persistent, stages, Q, THREADS, TILE};

/// Computes and stores tile `t`'s outputs from its staged inputs at `s`.
///
/// # Safety
/// `p` holds `len` floats; `s` is the staged buffer of tile `t`.
#[inline(always)]
unsafe fn compute<const R: u32>(s: *const f32, p: *mut f32, len: u32, t: u32) {
    let pd = pad(R);
    let tx = thread_x();
    // Window: inputs t·TILE + 4·tx - pd .. + 4 + 2·pd.
    let mut v = [0.0f32; 40];
    let win = Q + 2 * pd;
    for c in 0..win / 4 {
        // SAFETY: Q·tx + 4c + 4 <= TILE + 2·pd, inside the buffer; 16-byte aligned.
        let f = unsafe { *(s.add((Q * tx + 4 * c) as usize) as *const F4) };
        v[4 * c as usize..4 * c as usize + 4].copy_from_slice(&f.0);
    }
    let mut acc = [0.0f32; Q as usize];
    for j in 0..2 * R + 1 {
        let m = Mask1d::get(j as usize);
        for q in 0..Q {
            acc[q as usize] = fma(v[(pd - R + j + q) as usize], m, acc[q as usize]);
        }
    }
    let i = t * TILE + Q * tx;
    if i + Q <= len && len.is_multiple_of(4) {
        // SAFETY: i..i+4 inside P, 16-byte aligned (len and i multiples of 4).
        unsafe { store_f4(p.wrapping_add(i as usize), F4(acc)) };
    } else {
        for q in 0..Q {
            if i + q < len {
                // SAFETY: inside P.
                unsafe { store_global(p.wrapping_add((i + q) as usize), acc[q as usize]) };
            }
        }
    }
}

/// # Safety
/// `a.input`, `a.output` hold `len·rows` floats (`a.extent`; rows are filtered one by
/// one: a stack of signals), `len + 2^11 < 2^32`; `MASK_1D` holds the `2R+1` taps;
/// launched as `layout::families::conv1d_fast` says.
#[inline(always)]
unsafe fn conv1d_fast<const R: u32>(a: &ConvArgs) {
    let (n, p) = (input(a), output(a));
    let [len, rows, _] = a.extent;
    // Never 0, in the type: no division-by-zero panic path wherever `at` is compiled.
    let per_row = core::num::NonZeroU32::new(len.div_ceil(TILE)).unwrap_or(core::num::NonZeroU32::MIN);
    // (row, tile in the row); one row (the common case) needs no division.
    let at = |t: u32| if rows == 1 { (0, t) } else { (t / per_row, t % per_row) };
    pipelined_tiles(
        stages(R),
        per_row.get() * rows,
        buffer_floats(R),
        |t, _, buf| {
            let (row, tile) = at(t);
            // Rows of a batch start `len` apart: 16-byte groups only where len % 4 == 0
            // (the staging's aligned path); one row may take them whatever its length.
            let row_pitch = if rows > 1 { len } else { (len + 3) & !3 };
            let win = stage::Window {
                plane: n,
                row_pitch,
                w: len,
                h: rows,
                channels: 1,
                gx0: (tile * TILE).wrapping_sub(pad(R)),
                gy0: row,
                sw: buffer_floats(R),
                sh: 1,
                mode: a.mode,
                fill: a.fill,
                ghost: false,
                unread: pad(R) - R,
                inline_border: !persistent(R),
            };
            // SAFETY: the kernel's contract covers n and the extent; the buffer holds
            // buffer_floats(R) floats; the tile start and pad are multiples of 4.
            unsafe { stage::window(win, buf, thread_x(), THREADS) }
        },
        |_, _, _| true, // f32: copied as they are
        |t, s| {
            let (row, tile) = at(t);
            let out = p.wrapping_add(row as usize * len as usize);
            // SAFETY: the kernel's contract covers p and the extent; `s` is tile t's buffer.
            unsafe { compute::<R>(s, out, len, tile) }
        },
    )
}

/// Entries and their launch bounds: 256 threads, `min_blocks(R)` blocks per SM.
macro_rules! entries {
    ($($name:ident = $r:literal),* $(,)?) => {$(
        crate::launch_bounds!($name, THREADS, min_blocks($r));
        /// `conv1d_fast` at a fixed radius.
        ///
        /// # Safety
        /// As `conv1d_fast`, for a mask of this radius.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $name(a: ConvArgs) {
            // SAFETY: forwarded from the entry's contract.
            unsafe { conv1d_fast::<$r>(&a) }
        }
    )*};
}
entries!(
    conv1d_fast_r0 = 0,
    conv1d_fast_r1 = 1,
    conv1d_fast_r2 = 2,
    conv1d_fast_r3 = 3,
    conv1d_fast_r4 = 4,
    conv1d_fast_r5 = 5,
    conv1d_fast_r6 = 6,
    conv1d_fast_r7 = 7,
    conv1d_fast_r8 = 8,
    conv1d_fast_r9 = 9,
    conv1d_fast_r10 = 10,
    conv1d_fast_r11 = 11,
    conv1d_fast_r12 = 12,
    conv1d_fast_r13 = 13,
    conv1d_fast_r14 = 14,
    conv1d_fast_r15 = 15,
    conv1d_fast_r16 = 16,
);
