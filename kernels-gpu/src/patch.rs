//! Register patches, shared by the fast 2D and 3D kernels: each thread owns a 4-wide ×
//! `k`-tall patch of outputs in registers. It reads each input row of its window from a
//! staged tile once (LDS.128) and adds it into every output row it touches, every tap an
//! FFMA with its tap in a uniform register (`Mask*::get`).
use crate::device::*;

/// Outputs across a patch: one F4.
pub const QX: u32 = 4;
/// Most output rows a patch holds.
pub const MAX_ROWS: usize = 8;
/// Most patches a thread keeps at once (the 3D kernels' `2R+1` output planes, R <= 4).
pub const MAX_PLANES: usize = 9;

/// The accumulators: `acc[o][j]` is the output `o` rows down, `j` across.
pub type Acc = [[f32; QX as usize]; MAX_ROWS];

/// A patch of zeros.
pub const ZERO: Acc = [[0.0; QX as usize]; MAX_ROWS];

/// Floats of the widest row window [`filter_row`] may hold: `QX + 2·pad` at
/// `conv2d_separable`'s largest radius, an upper bound (from r = 16 that row pass streams
/// its window instead, `filter_row_stream`).
const ROW_WINDOW: usize = (QX + 2 * layout::families::pad(layout::families::conv2d_separable::MAX_RADIUS)) as usize;

/// The `floats` staged floats from `src` (a multiple of 4, at most `N`) in registers, read
/// with 16-byte loads; the rest of the `N` stay zero.
///
/// # Safety
/// The floats lie inside a staged buffer; `src` is 16-byte aligned.
#[inline(always)]
unsafe fn window<const N: usize>(src: *const f32, floats: u32) -> [f32; N] {
    let mut v = [0.0f32; N];
    for c in 0..floats as usize / 4 {
        // SAFETY: inside the window (the function's contract), 16-byte aligned.
        let f = unsafe { *(src.add(4 * c) as *const F4) };
        v[4 * c..4 * c + 4].copy_from_slice(&f.0);
    }
    v
}

/// The `Q` outputs of one staged row filtered along x by the row taps
/// `MASK_1D[0..2R+1]` (the separable kernels' x pass): `src` is this thread's window,
/// `Q + 2pd` floats holding input columns from `pd` before its outputs (`pd >= R`, a
/// multiple of 4; `Q` a multiple of 4).
///
/// # Safety
/// As [`window`] for those `Q + 2pd` floats (at most `ROW_WINDOW`).
#[inline(always)]
pub unsafe fn filter_row<const R: u32, const Q: usize>(src: *const f32, pd: u32) -> [f32; Q] {
    const { assert!(Q.is_multiple_of(4)) };
    // SAFETY: forwarded.
    let v = unsafe { window::<ROW_WINDOW>(src, Q as u32 + 2 * pd) };
    let mut acc = [0.0f32; Q];
    for j in 0..2 * R + 1 {
        let m = Mask1d::get(j as usize);
        for x in 0..Q as u32 {
            acc[x as usize] = fma(m, v[(pd - R + j + x) as usize], acc[x as usize]);
        }
    }
    acc
}

/// The `Q` outputs of one staged row filtered along x by the row taps, as [`filter_row`]
/// (the same sums in the same order), streaming the window instead of holding it: each
/// 16-byte load adds into every output it touches, so `Q` accumulators and one load are
/// live rather than `Q + 2pd` floats. Loads no tap reads are not issued.
///
/// # Safety
/// As [`filter_row`].
#[inline(always)]
pub unsafe fn filter_row_stream<const R: u32, const Q: usize>(src: *const f32, pd: u32) -> [f32; Q] {
    const { assert!(Q.is_multiple_of(4)) };
    let mut acc = [0.0f32; Q];
    // Window floats the taps read: output o reads floats first + o .. first + o + 2R.
    let first = pd - R;
    for g in first / 4..(first + Q as u32 + 2 * R).div_ceil(4) {
        // SAFETY: inside the window (the function's contract), 16-byte aligned.
        let f = unsafe { *(src.add(4 * g as usize) as *const F4) }.0;
        for e in 0..4 {
            let x = 4 * g + e;
            for o in 0..Q as u32 {
                let t = x.wrapping_sub(first + o);
                if t <= 2 * R {
                    acc[o as usize] = fma(Mask1d::get(t as usize), f[e as usize], acc[o as usize]);
                }
            }
        }
    }
    acc
}

/// The `Q` floats at the shared address `p`: one 16-byte load for 4, one 8-byte load
/// for 2, else one load each.
///
/// # Safety
/// `p` points at `Q` readable shared floats, aligned to `4Q` bytes for `Q` = 2 or 4.
#[inline(always)]
pub unsafe fn load<const Q: usize>(p: *const f32) -> [f32; Q] {
    if Q == 4 {
        // SAFETY: 4 floats, 16-byte aligned (the contract).
        let f = unsafe { *(p as *const F4) }.0;
        core::array::from_fn(|x| f[x])
    } else if Q == 2 {
        // SAFETY: 2 floats, 8-byte aligned (the contract).
        let f = unsafe { *(p as *const F2) }.0;
        core::array::from_fn(|x| f[x])
    } else {
        // SAFETY: inside the Q floats.
        core::array::from_fn(|x| unsafe { *p.wrapping_add(x) })
    }
}

/// The `k` output rows of a `Q`-wide column filtered along y by the column taps
/// `MASK_1D[2R+1..4R+2]` (the separable kernels' y pass): `row(i)` reads the `i`-th of
/// the `k + 2R` rows under the outputs (the first `R` rows above the first output). Each
/// row is read once and feeds every output row it touches: row `i` adds into output row
/// `o` through tap `i - o`.
#[inline(always)]
pub fn filter_column<const R: u32, const Q: usize>(k: u32, row: impl Fn(u32) -> [f32; Q]) -> [[f32; Q]; MAX_ROWS] {
    let mut acc = [[0.0; Q]; MAX_ROWS];
    for i in 0..k + 2 * R {
        let v = row(i);
        for o in 0..k {
            let fr = i.wrapping_sub(o);
            if fr <= 2 * R {
                let m = Mask1d::get((2 * R + 1 + fr) as usize);
                for x in 0..Q {
                    acc[o as usize][x] = fma(m, v[x], acc[o as usize][x]);
                }
            }
        }
    }
    acc
}

/// Adds one staged 2D window into the patches `acc[..planes]`, patch `j` through the
/// `(2R+1)²` mask plane `tap(j, fr, fc)` (mask row `fr`, column `fc`; `usize`, so that
/// with rolled rows a tap's address is one register plus an immediate): each input row is
/// loaded once and feeds every patch (the 3D kernel keeps one patch per output plane the
/// window touches; 2D kernels pass one). `s` points at the window's first cell for this
/// thread (staged row `ty·k`, column `4·tx`); rows are `sw` floats apart and hold input
/// columns from `pd` before the patch (`pd >= R·S`, a multiple of 4). Taps along a row
/// are `S` floats apart: 1, or the channel count of an interleaved image (each tap reads
/// the same channel of the neighbouring pixel). With `roll_rows`, the loop over input
/// rows stays rolled (an opaque bound): fully unrolled, large radii would hoist every
/// row's window into registers and spill.
///
/// # Safety
/// The `k + 2R` rows of `QX + 2pd` floats from `s` lie inside a staged buffer, 16-byte
/// aligned.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // positional, as `store` (register allocation)
pub unsafe fn accumulate<const R: u32, const S: u32>(
    s: *const f32,
    sw: u32,
    pd: u32,
    k: u32,
    roll_rows: bool,
    acc: &mut [Acc],
    planes: u32,
    tap: impl Fn(usize, usize, usize) -> f32,
) {
    // Staged row i holds input row (its first output row - R + i).
    // SAFETY: inside the window (the function's contract).
    let row = |i: u32| unsafe { window::<40>(s.wrapping_add((i * sw) as usize), QX + 2 * pd) };
    accumulate_rows::<R, S>(pd, k, roll_rows, acc, planes, tap, row)
}

/// [`accumulate`] over windows `row(i)` (row `i` of the `k + 2R`, its floats from `pd`
/// before the patch; only those taps read need be set), wherever they come from:
/// `image_patches` widens u8 rows in registers (`conv2d_fast::compute_bytes`).
#[inline(always)]
pub fn accumulate_rows<const R: u32, const S: u32>(
    pd: u32,
    k: u32,
    roll_rows: bool,
    acc: &mut [Acc],
    planes: u32,
    tap: impl Fn(usize, usize, usize) -> f32,
    row: impl Fn(u32) -> [f32; 40],
) {
    let rows = if roll_rows { opaque(k + 2 * R) } else { k + 2 * R };
    for i in 0..rows {
        let v = row(i);
        for j in 0..planes {
            // Input row i feeds output row o through mask row fr = i - o.
            for o in 0..k {
                let fr = i.wrapping_sub(o);
                if fr <= 2 * R {
                    // The row in usize from i itself (not from the u32 difference): the
                    // address folds to base + 4·(2R+1)·i + an immediate per tap.
                    let fr_at = (i as usize).wrapping_sub(o as usize);
                    for fc in 0..2 * R + 1 {
                        let m = tap(j as usize, fr_at, fc as usize);
                        let a = &mut acc[j as usize][o as usize];
                        for x in 0..QX as usize {
                            a[x] = fma(m, v[(pd - R * S + fc * S) as usize + x], a[x]);
                        }
                    }
                }
            }
        }
        if planes > 1 || S > 1 {
            // SAFETY: an empty statement; as a memory clobber it keeps LLVM from hoisting
            // later rows' loads above this row's taps (their windows would take the
            // registers the patches need).
            unsafe { core::arch::asm!("", options(nostack, preserves_flags)) };
        }
    }
}

/// Adds `N` consecutive staged rows into the one-row patches they touch, walking down
/// rows (`image_fast`): `acc[j]` sums the output row `2R - j` rows above the first of
/// them, and row `n` adds into `acc[j + n]` through the same mask row `2R - j`, so with
/// the rows loop rolled every tap is still a constant (`tap(j, fc)`, column `fc`), and
/// each is loaded once for the `N` rows (ptxas loads taps into uniform registers, one load
/// per one or two taps: with `N = 2` a load feeds 8 or 16 FFMAs rather than 4 or 8).
/// `s` points at this thread's window of the first row (`QX + 2pd` floats, input
/// columns from `pd` before its outputs, `pd >= R·S`), rows are `sw` floats apart;
/// taps along a row are `S` floats apart, as in [`accumulate`].
///
/// # Safety
/// The `QX + 2pd` floats from `s + n·sw`, `n < N`, lie inside a staged buffer, 16-byte
/// aligned; `acc` holds at least `2R + N` patches.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // indices, not iterators: an iterator put the patches in local memory
pub unsafe fn add_rows<const R: u32, const S: u32, const N: usize>(
    s: *const f32,
    sw: u32,
    pd: u32,
    acc: &mut [[f32; QX as usize]],
    tap: impl Fn(usize, usize) -> f32,
) {
    let win = (QX + 2 * pd) as usize;
    let mut v = [[0.0f32; 40]; N];
    for n in 0..N {
        for c in 0..win / 4 {
            // SAFETY: inside row n's window (the function's contract), 16-byte aligned.
            let f = unsafe { *(s.add(n * sw as usize + 4 * c) as *const F4) };
            v[n][4 * c..4 * c + 4].copy_from_slice(&f.0);
        }
    }
    for j in 0..2 * R as usize + 1 {
        for fc in 0..2 * R + 1 {
            let m = tap(j, fc as usize);
            for n in 0..N {
                for x in 0..QX as usize {
                    acc[j + n][x] = fma(m, v[n][(pd - R * S + fc * S) as usize + x], acc[j + n][x]);
                }
            }
        }
    }
}

/// Moves the patches `1..n` down one place and clears place `n - 1` (to `zero`): the
/// walks' step once the patch in place 0, complete, is stored.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // register moves, as the walks wrote them
pub fn rotate<T: Copy>(acc: &mut [T], n: usize, zero: T) {
    for j in 0..n - 1 {
        acc[j] = acc[j + 1];
    }
    acc[n - 1] = zero;
}

/// Stores column 0 of the patch: the `k` outputs down from `(x, y)` of a row-major
/// plane at `p` (`row_pitch` elements a row, `w` x `h`; outputs past it are skipped).
/// The 1-wide patches of `conv3d_separable`: a warp stores 32 neighbouring outputs a row.
///
/// # Safety
/// `p` holds `h` rows of `row_pitch` writable pixels.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // as `store`
pub unsafe fn store_column<P: Pixel>(
    acc: &[[f32; QX as usize]],
    k: u32,
    p: *mut P,
    row_pitch: u32,
    w: u32,
    h: u32,
    x: u32,
    y: u32,
) {
    if x >= w {
        return;
    }
    let out = p.wrapping_add((y * row_pitch + x) as usize);
    if y + k <= h {
        // The whole column inside (most threads): no test a row.
        for o in 0..k {
            // SAFETY: inside the plane.
            unsafe { P::store1(out.wrapping_add((o * row_pitch) as usize), acc[o as usize][0]) };
        }
        return;
    }
    for o in 0..k {
        if y + o < h {
            // SAFETY: inside the plane.
            unsafe { P::store1(out.wrapping_add((o * row_pitch) as usize), acc[o as usize][0]) };
        }
    }
}

/// Stores a patch row's `Q` sums (4 or 2) at `out` in one store.
///
/// # Safety
/// `out` points to `Q` writable pixels of global memory, aligned to `Q` pixels.
#[inline(always)]
unsafe fn store_group<P: Pixel, const Q: usize>(out: *mut P, v: &[f32; Q]) {
    const { assert!(Q == 4 || Q == 2) };
    // SAFETY: per the contract.
    unsafe {
        if Q == 4 {
            P::store4(out, [v[0], v[1], v[2], v[3]])
        } else {
            P::store2(out, [v[0], v[1]])
        }
    }
}

/// Stores the patch whose first output is `(x, y)` of a row-major plane at `p` with
/// rows of `w` elements `row_pitch` apart and `h` rows (rows and columns past the plane
/// are skipped): groups of `Q` (4 or 2) in one store where aligned, else one by one.
/// (Positional arguments rather than a struct: ptxas allocates the fast kernels'
/// registers better.)
///
/// # Safety
/// `p` holds `h` rows of `row_pitch` writable pixels, aligned to `Q` pixels.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn store<P: Pixel, const Q: usize>(
    acc: &[[f32; Q]],
    k: u32,
    p: *mut P,
    row_pitch: u32,
    w: u32,
    h: u32,
    x: u32,
    y: u32,
) {
    if k > 1 && row_pitch.is_multiple_of(Q as u32) && x + Q as u32 <= w && y + k <= h {
        // The whole patch inside, rows aligned (most threads): one store a row and no
        // test a row; the sums are then complete before the branch, not sunk into each
        // row's (which reloaded the last plane's taps a row). H200: conv2d_fast r = 2
        // 161 -> 153 us, conv3d_fast r = 2 816 -> 805. For one row (`k` is a constant at
        // each call site) the test stays the row's own: image_fast ran 1-3% slower with
        // both.
        for o in 0..k {
            // SAFETY: inside the plane, aligned (row_pitch and x multiples of Q).
            unsafe { store_group::<P, Q>(p.wrapping_add(((y + o) * row_pitch + x) as usize), &acc[o as usize]) };
        }
        return;
    }
    for o in 0..k {
        let yo = y + o;
        if yo < h {
            let out = p.wrapping_add((yo * row_pitch + x) as usize);
            if row_pitch.is_multiple_of(Q as u32) && x + Q as u32 <= w {
                // SAFETY: inside the plane, aligned (row_pitch and x multiples of Q).
                unsafe { store_group::<P, Q>(out, &acc[o as usize]) };
            } else {
                for j in 0..Q as u32 {
                    if x + j < w {
                        // SAFETY: inside the plane.
                        unsafe { P::store1(out.wrapping_add(j as usize), acc[o as usize][j as usize]) };
                    }
                }
            }
        }
    }
}
