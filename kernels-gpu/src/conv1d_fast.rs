//! 1D fast: compile-time radius (one entry point per radius), several outputs per thread.
//!
//! Blocks are persistent and pipelined (`device::pipelined_tiles`): a tile's 1024 inputs plus halo stream into
//! shared memory with 16-byte `cp.async` while the previous tile is computed. Each thread computes 4 consecutive outputs from a register window of 4+2·pad inputs
//! (LDS.128, conflict-free: a warp reads 512 contiguous bytes), every tap an FFMA with the
//! mask as a constant-bank operand. One LDGSTS.128 and one STG.128 per thread per tile.
use crate::device::*;

/// Threads per block.
pub const THREADS: u32 = 256;
/// Outputs per thread (one F4).
const Q: u32 = 4;
/// Outputs per block.
pub const TILE: u32 = THREADS * Q;

/// Halo cells staged on each side: `r` rounded up to whole F4s.
pub const fn pad(r: u32) -> u32 {
    r.div_ceil(4) * 4
}

/// Tiles in flight per block. The host launches persistent blocks with a 4-deep ring
/// for r >= 8 (more arithmetic to overlap), one block per tile below (see conv2d_fast).
pub const fn stages(r: u32) -> u32 {
    if r >= 8 {
        4
    } else {
        1
    }
}

/// Shared floats a block needs for radius `r`: `stages(r)` tile buffers (the host sizes
/// the launch with this).
pub const fn shared_floats(r: u32) -> u32 {
    stages(r) * (TILE + 2 * pad(r))
}

/// Starts the asynchronous copy of tile `t`'s inputs `t·TILE - pd .. (t+1)·TILE + pd`
/// (ghost cells 0) into the shared buffer at shared address `buf`.
#[inline(always)]
unsafe fn stage<const R: u32>(n: *const f32, len: u32, t: u32, buf: u32) {
    let pd = pad(R);
    let start = t * TILE;
    let count = TILE + 2 * pd;
    let mut c = thread_x();
    if len % 4 == 0 {
        // start and pd are multiples of 4: each group of 4 is wholly in or out.
        while c < count / 4 {
            let g = (start + 4 * c).wrapping_sub(pd);
            let inside = g < len;
            let src = if inside { n.add(g as usize) } else { n };
            cp_async_f4(buf + 16 * c, src, if inside { 16 } else { 0 });
            c += THREADS;
        }
    } else {
        while c < count {
            let g = (start + c).wrapping_sub(pd);
            let inside = g < len;
            let src = if inside { n.add(g as usize) } else { n };
            cp_async_f1(buf + 4 * c, src, if inside { 4 } else { 0 });
            c += THREADS;
        }
    }
}

/// Computes and stores tile `t`'s outputs from its staged inputs at `s`.
#[inline(always)]
unsafe fn compute<const R: u32>(s: *const f32, p: *mut f32, len: u32, t: u32) {
    let pd = pad(R);
    let tx = thread_x();
    // Window: inputs t·TILE + 4·tx - pd .. + 4 + 2·pd.
    let mut v = [0.0f32; 40];
    let win = Q + 2 * pd;
    for c in 0..win / 4 {
        let f = *(s.add((Q * tx + 4 * c) as usize) as *const F4);
        v[4 * c as usize..4 * c as usize + 4].copy_from_slice(&f.0);
    }
    let mut acc = [0.0f32; Q as usize];
    for j in 0..2 * R + 1 {
        let m = Mask1d::get(j);
        for q in 0..Q {
            acc[q as usize] = fma(v[(pd - R + j + q) as usize], m, acc[q as usize]);
        }
    }
    let i = t * TILE + Q * tx;
    if i + Q <= len && len % 4 == 0 {
        store_f4(p.add(i as usize), F4(acc));
    } else {
        for q in 0..Q {
            if i + q < len {
                *p.add((i + q) as usize) = acc[q as usize];
            }
        }
    }
}

#[inline(always)]
unsafe fn conv1d_fast<const R: u32>(n: *const f32, p: *mut f32, len: u32) {
    pipelined_tiles(
        stages(R),
        len.div_ceil(TILE),
        shared_floats(R) / stages(R),
        // SAFETY (both): the kernel's contract covers n, p and len.
        |t, buf| unsafe { stage::<R>(n, len, t, buf) },
        |t, s| unsafe { compute::<R>(s, p, len, t) },
    )
}

macro_rules! entries {
    ($($name:ident = $r:literal),* $(,)?) => {$(
        /// `conv1d_fast` at a fixed radius. Launch: 256 threads, a 1D grid of any size
        /// (best: the blocks resident at once), `shared_floats(R)·4` bytes of shared memory.
        ///
        /// # Safety
        /// `n`, `p` hold `len` floats (`len + 2^11 < 2^32`); `MASK_1D` holds the `2R+1` taps.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $name(n: *const f32, p: *mut f32, len: u32) {
            conv1d_fast::<$r>(n, p, len)
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
