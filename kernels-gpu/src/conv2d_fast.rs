//! 2D fast: compile-time radius (one entry point per radius), fully unrolled taps.
use crate::device::*;

#[inline(always)]
unsafe fn conv2d_fast<const R: u32>(n: *const f32, p: *mut f32, w: u32, h: u32) {
    let col = block_x() * block_dim_x() + thread_x();
    let row = block_y() * block_dim_y() + thread_y();
    if col >= w || row >= h {
        return;
    }
    let k = 2 * R + 1;
    let mut acc = 0.0f32;
    for fr in 0..k {
        for fc in 0..k {
            let (ir, ic) = ((row + fr).wrapping_sub(R), (col + fc).wrapping_sub(R));
            if ir < h && ic < w {
                acc += Mask2d::get(fr * k + fc) * *n.add((ir * w + ic) as usize);
            }
        }
    }
    *p.add((row * w + col) as usize) = acc;
}

macro_rules! entries {
    ($($name:ident = $r:literal),* $(,)?) => {$(
        /// `conv2d_fast` at a fixed radius.
        ///
        /// # Safety
        /// `n`, `p` hold `w*h` floats; `MASK_2D` holds the taps; launched per `host::conv2d_fast`.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $name(n: *const f32, p: *mut f32, w: u32, h: u32) {
            conv2d_fast::<$r>(n, p, w, h)
        }
    )*};
}
entries!(
    conv2d_fast_r0 = 0,
    conv2d_fast_r1 = 1,
    conv2d_fast_r2 = 2,
    conv2d_fast_r3 = 3,
    conv2d_fast_r4 = 4,
    conv2d_fast_r5 = 5,
    conv2d_fast_r6 = 6,
    conv2d_fast_r7 = 7,
    conv2d_fast_r8 = 8,
);
