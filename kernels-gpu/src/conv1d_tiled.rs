//! 1D tiled with halo cells (textbook Fig. 7.11): the block's inputs plus `r` halo cells
//! on each side are staged in shared memory, then every tap reads shared memory.
use crate::device::*;

/// Shared layout: `s[0..r]` left halo, `s[r..r+B]` the block's cells, `s[r+B..]` right
/// halo; the launch gives `(B + 2r) * 4` bytes (`layout::families::conv1d_tiled`).
///
/// # Safety
/// `a.input` and `a.output` hold `a.extent[0]` floats; `MASK_1D` holds `2r+1` taps;
/// shared memory as above; `len + B + 2r < 2^32`.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv1d_tiled(a: ConvArgs) {
    let (n, p) = (input(&a), output(&a));
    let (len, radius) = (a.extent[0], a.radius[0]);
    let s = shared_f32();
    let (t, b) = (thread_x(), block_dim_x());
    let start = block_x() * b;
    let i = start + t;
    // Ghost cells (negative indices wrap high, or past the end) load 0.
    let load = |k: u32| {
        if k < len {
            // SAFETY: k < len is inside N.
            unsafe { load_global(n.wrapping_add(k as usize)) }
        } else {
            0.0
        }
    };
    // SAFETY: every index stored below is below B + 2r, the shared floats launched.
    unsafe {
        if radius <= b {
            // As the textbook (and the CUDA C++ twin): the block's last r threads load the
            // left halo (their cell one block back), its first r threads the right halo.
            if t >= b - radius {
                *s.add((t - (b - radius)) as usize) = load(i.wrapping_sub(b));
            }
            *s.add((radius + t) as usize) = load(i);
            if t < radius {
                *s.add((radius + b + t) as usize) = load(i + b);
            }
        } else {
            // r exceeds the block (up to 2047 with 1024 threads): a strided loop.
            let mut h = t;
            while h < radius {
                *s.add(h as usize) = load((start + h).wrapping_sub(radius));
                *s.add((radius + b + h) as usize) = load(start + b + h);
                h += b;
            }
            *s.add((radius + t) as usize) = load(i);
        }
    }
    sync_threads();
    if i < len {
        // s[t + j] by pointer: the unrolled taps become immediate offsets (`[R+4k]`),
        // as nvcc's 32-bit shared addresses; a 32-bit index needs an add, a shift and
        // an extension per tap.
        let window = s.wrapping_add(t as usize);
        let mut acc = 0.0f32;
        for j in 0..2 * radius + 1 {
            // SAFETY: t + j < B + 2r.
            acc = fma(unsafe { *window.add(j as usize) }, Mask1d::get(j as usize), acc);
        }
        // SAFETY: i < len.
        unsafe { store_global(p.wrapping_add(i as usize), acc) }
    }
}
