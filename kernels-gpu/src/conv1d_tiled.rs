//! 1D tiled with halo cells (textbook Fig. 7.11): the block's inputs plus `r` halo cells
//! on each side are staged in shared memory, then every tap reads shared memory.
use crate::device::*;

/// Shared layout: `s[0..r]` left halo, `s[r..r+B]` the block's cells, `s[r+B..]` right halo.
/// Launch with `(B + 2r) * 4` bytes of dynamic shared memory.
///
/// # Safety
/// `n` and `p` hold `len` floats; `MASK_1D` holds `2r+1` taps; shared memory as above.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv1d_tiled(n: *const f32, p: *mut f32, radius: u32, len: u32) {
    let s = shared_f32();
    let (t, b) = (thread_x(), block_dim_x());
    let start = block_x() * b;
    let load = |k: u32| if k < len { *n.add(k as usize) } else { 0.0 };
    // Halos: the textbook gives them to the last/first r threads; a strided loop lets
    // r exceed the block size.
    let mut h = t;
    while h < radius {
        *s.add(h as usize) = load((start + h).wrapping_sub(radius));
        *s.add((radius + b + h) as usize) = load(start + b + h);
        h += b;
    }
    *s.add((radius + t) as usize) = load(start + t);
    sync_threads();
    let i = start + t;
    if i < len {
        let mut acc = 0.0f32;
        for j in 0..2 * radius + 1 {
            acc = fma(*s.add((t + j) as usize), Mask1d::get(j), acc);
        }
        *p.add(i as usize) = acc;
    }
}
