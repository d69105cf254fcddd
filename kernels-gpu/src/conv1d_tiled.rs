//! 1D tiled with halo cells (textbook Fig. 7.11): the block's inputs plus `r` halo cells
//! on each side are staged in shared memory, then every tap reads shared memory.
use crate::device::*;

/// Shared layout: `s[0..r]` left halo, `s[r..r+B]` the block's cells, `s[r+B..]` right halo.
/// Launch with `(B + 2r) * 4` bytes of dynamic shared memory.
///
/// # Safety
/// `n` and `p` hold `len` floats; `MASK_1D` holds `2r+1` taps; shared memory as above;
/// `len + B + 2r < 2^32`.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv1d_tiled(n: *const f32, p: *mut f32, radius: u32, len: u32) {
    let s = shared_f32();
    let (t, b) = (thread_x(), block_dim_x());
    let start = block_x() * b;
    let i = start + t;
    // Ghost cells (negative indices wrap high, or past the end) load 0.
    let load = |k: u32| if k < len { *n.add(k as usize) } else { 0.0 };
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
    sync_threads();
    if i < len {
        // s[t + j] by pointer: the unrolled taps become immediate offsets (`[R+4k]`),
        // as nvcc's 32-bit shared addresses; a 32-bit index needs an add, a shift and
        // an extension per tap.
        let window = s.add(t as usize);
        let mut acc = 0.0f32;
        for j in 0..2 * radius + 1 {
            acc = fma(*window.add(j as usize), Mask1d::get(j), acc);
        }
        *p.add(i as usize) = acc;
    }
}
