//! 3D basic: one thread per output, mask passed as a pointer (chapter 7's 2D kernel
//! with one axis more; the lecture's MP-4 before tiling).
//!
//! `conv3d_basic` takes the radii at run time; `conv3d_basic_r{R}` (R up to
//! `layout::families::textbook::COMPILED_3D`) fix them at compile time, as the CUDA C++
//! peer's `template <int R>`.
use crate::device::*;

/// `P[z][y][x] = Σ N[z-rz+i][y-ry+j][x-rx+k] · M[i][j][k]` over a row-major `d×h×w`
/// volume, ghost cells 0, one thread per output in 32x4x4 blocks: the loop both direct
/// 3D kernels run. `tap(t)` reads mask tap `t` (row-major): from the pointer here, from
/// `MASK_3D` in `conv3d_const`.
///
/// # Safety
/// `a.input`, `a.output` hold `w·h·d` floats (< 2^31); `tap` reads any `t` below
/// `(2rz+1)(2ry+1)(2rx+1)`; launched as the caller's family says.
#[inline(always)]
pub(crate) unsafe fn direct(r: [u32; 3], a: &ConvArgs, tap: impl Fn(usize) -> f32) {
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
    // &N[z-rz][y-ry][x-rx]: every tap is an offset from it (immediate with literal
    // radii). It may point outside N; only in-bounds cells are read.
    let corner = n
        .wrapping_add(center)
        .wrapping_sub(rz as usize * plane + ry as usize * wu + rx as usize);
    let mut acc = 0.0f32;
    for fz in 0..2 * rz + 1 {
        // Negative coordinates wrap high and fail the bounds test: ghost cells are 0.
        let iz = (z + fz).wrapping_sub(rz);
        for fy in 0..ky {
            let iy = (y + fy).wrapping_sub(ry);
            let line = corner.wrapping_add(fz as usize * plane + fy as usize * wu);
            for fx in 0..kx {
                let ix = (x + fx).wrapping_sub(rx);
                if iz < d && iy < h && ix < w {
                    let m = tap(((fz * ky + fy) * kx + fx) as usize);
                    // SAFETY: (iz, iy, ix) is inside N.
                    let nv = unsafe { load_global(line.wrapping_add(fx as usize)) };
                    acc = fma(m, nv, acc);
                }
            }
        }
    }
    // SAFETY: (z, y, x) is inside P.
    unsafe { store_global(p.wrapping_add(center), acc) }
}

/// The mask by pointer.
///
/// # Safety
/// As [`direct`], `a.mask` holding the `(2rz+1)(2ry+1)(2rx+1)` taps; launched as
/// `layout::families::conv3d_basic` says.
#[inline(always)]
unsafe fn body(r: [u32; 3], a: &ConvArgs) {
    let m = mask(a);
    // SAFETY: `direct` reads only taps below the count `a.mask` holds.
    let tap = |t: usize| unsafe { load_global(m.wrapping_add(t)) };
    // SAFETY: the contract covers N, P and the launch.
    unsafe { direct(r, a, tap) }
}

/// Run-time radii (any the host allows).
///
/// # Safety
/// As [`body`].
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv3d_basic(a: ConvArgs) {
    // SAFETY: forwarded from the entry's contract.
    unsafe { body(a.radius, &a) }
}

crate::radius_entries!(body; conv3d_basic_r0 = 0, conv3d_basic_r1 = 1, conv3d_basic_r2 = 2, conv3d_basic_r3 = 3);
