//! 3D with the mask in the `__constant__` symbol `MASK_3D` (the MP-4 peer's `K_c`): one
//! thread per output, every thread of a warp reading the same tap.
//!
//! `conv3d_const` takes the radii at run time; `conv3d_const_r{R}` fix them at compile
//! time, as the CUDA C++ peer's `template <int R>`.
use crate::device::*;

/// As `conv3d_basic`, the mask read from `MASK_3D`. Launched in 32x4x4 blocks.
///
/// # Safety
/// `a.input`, `a.output` hold `w·h·d` floats (< 2^31); `MASK_3D` holds the taps;
/// launched as `layout::families::conv3d_const` says.
#[inline(always)]
unsafe fn body(r: [u32; 3], a: &ConvArgs) {
    // SAFETY: forwarded; `MASK_3D` reads stay inside the symbol (the host bounds the radii).
    unsafe { crate::conv3d_basic::direct(r, a, Mask3d::get) }
}

/// Run-time radii (up to what `MASK_3D` holds).
///
/// # Safety
/// As [`body`].
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv3d_const(a: ConvArgs) {
    // SAFETY: forwarded from the entry's contract.
    unsafe { body(a.radius, &a) }
}

crate::radius_entries!(body; conv3d_const_r0 = 0, conv3d_const_r1 = 1, conv3d_const_r2 = 2, conv3d_const_r3 = 3);
