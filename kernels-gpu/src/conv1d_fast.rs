//! 1D fast: compile-time radius (one entry point per radius), several outputs per thread.
//!
//! The block stages its 1024 inputs plus halo in shared memory with 16-byte loads, then
//! each thread computes 4 consecutive outputs from a register window of 4+2·pad inputs
//! (LDS.128, conflict-free: a warp reads 512 contiguous bytes), every tap an FFMA with the
//! mask as a constant-bank operand. One LDG.128 and one STG.128 per thread in the body.
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

/// Shared floats a block needs for radius `r` (the host sizes the launch with this).
pub const fn shared_floats(r: u32) -> u32 {
    TILE + 2 * pad(r)
}

#[inline(always)]
unsafe fn conv1d_fast<const R: u32>(n: *const f32, p: *mut f32, len: u32) {
    let pd = pad(R);
    let s = shared_f32();
    let t = thread_x();
    let start = block_x() * TILE;
    // s[c] holds input start - pd + c, for c in 0 .. TILE + 2·pd; ghost cells 0.
    let count = TILE + 2 * pd;
    if start >= pd && start + TILE + pd <= len {
        // Interior block: all 16-byte loads (start and pd are multiples of 4).
        let mut c = t;
        while c < count / 4 {
            *(s.add(4 * c as usize) as *mut F4) = load_nc_f4(n.add((start - pd + 4 * c) as usize));
            c += THREADS;
        }
    } else {
        let mut c = t;
        while c < count {
            let g = (start + c).wrapping_sub(pd);
            *s.add(c as usize) = if g < len { load_nc(n.add(g as usize)) } else { 0.0 };
            c += THREADS;
        }
    }
    sync_threads();

    // Window: inputs start + 4t - pd .. start + 4t + 4 + pd.
    let mut v = [0.0f32; 40];
    let win = Q + 2 * pd;
    for c in 0..win / 4 {
        let f = *(s.add((Q * t + 4 * c) as usize) as *const F4);
        v[4 * c as usize..4 * c as usize + 4].copy_from_slice(&f.0);
    }
    let mut acc = [0.0f32; Q as usize];
    for j in 0..2 * R + 1 {
        let m = Mask1d::get(j);
        for q in 0..Q {
            acc[q as usize] = fma(v[(pd - R + j + q) as usize], m, acc[q as usize]);
        }
    }
    let i = start + Q * t;
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

macro_rules! entries {
    ($($name:ident = $r:literal),* $(,)?) => {$(
        /// `conv1d_fast` at a fixed radius. Launch: 256 threads, ceil(len / 1024) blocks,
        /// `shared_floats(R)·4` bytes of dynamic shared memory.
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
