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
    let (n, p) = (input(a), output(a));
    let [w, h, d] = a.extent;
    let x = block_x() * block_dim_x() + thread_x();
    let y = block_y() * block_dim_y() + thread_y();
    let z = block_z() * block_dim_z() + thread_z();
    if x >= w || y >= h || z >= d {
        return;
    }
    let [rx, ry, rz] = r;
    let (kx, ky) = (2 * rx + 1, 2 * ry + 1);
    let (wu, plane) = (w as usize, w as usize * h as usize);
    let center = z as usize * plane + y as usize * wu + x as usize;
    // &N[z-rz][y-ry][x-rx], as in `conv3d_basic`.
    let corner = n
        .wrapping_add(center)
        .wrapping_sub(rz as usize * plane + ry as usize * wu + rx as usize);
    let mut acc = 0.0f32;
    for fz in 0..2 * rz + 1 {
        let iz = (z + fz).wrapping_sub(rz);
        for fy in 0..ky {
            let iy = (y + fy).wrapping_sub(ry);
            let line = corner.wrapping_add(fz as usize * plane + fy as usize * wu);
            for fx in 0..kx {
                let ix = (x + fx).wrapping_sub(rx);
                if iz < d && iy < h && ix < w {
                    // SAFETY: (iz, iy, ix) is inside N.
                    let nv = unsafe { load_global(line.wrapping_add(fx as usize)) };
                    acc = fma(Mask3d::get((fz * ky + fy) * kx + fx), nv, acc);
                }
            }
        }
    }
    // SAFETY: (z, y, x) is inside P.
    unsafe { store_global(p.wrapping_add(center), acc) }
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
