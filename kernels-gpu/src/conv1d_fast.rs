//! 1D fast: compile-time radius (one entry point per radius), loops fully unrolled over
//! the `.const` mask.
use crate::device::*;

#[inline(always)]
unsafe fn conv1d_fast<const R: u32>(n: *const f32, p: *mut f32, len: u32) {
    let i = block_x() * block_dim_x() + thread_x();
    if i >= len {
        return;
    }
    let mut acc = 0.0f32;
    for j in 0..2 * R + 1 {
        let k = (i + j).wrapping_sub(R);
        if k < len {
            acc += *n.add(k as usize) * Mask1d::get(j);
        }
    }
    *p.add(i as usize) = acc;
}

macro_rules! entries {
    ($($name:ident = $r:literal),* $(,)?) => {$(
        /// `conv1d_fast` at a fixed radius.
        ///
        /// # Safety
        /// `n`, `p` hold `len` floats; `MASK_1D` holds the taps; launched per `host::conv1d_fast`.
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
