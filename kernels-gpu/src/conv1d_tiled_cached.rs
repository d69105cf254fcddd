//! 1D tiled, halos through the cache (textbook Fig. 7.13): only the block's own cells go
//! to shared memory; halo cells were loaded by neighbouring blocks and are likely in L2.
use crate::device::*;

/// Launched with `B * 4` bytes of dynamic shared memory (`layout::families::conv1d_tiled_cached`).
///
/// # Safety
/// `a.input` and `a.output` hold `a.extent[0]` floats; `MASK_1D` holds `2r+1` taps;
/// `len + 2r < 2^32`.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv1d_tiled_cached(a: ConvArgs) {
    let (n, p) = (input(&a), output(&a));
    let (len, radius) = (a.extent[0], a.radius[0]);
    let s = shared_f32();
    let (t, b) = (thread_x(), block_dim_x());
    let start = block_x() * b;
    let i = start + t;
    // SAFETY: t < B, the shared floats launched; i < len is inside N.
    unsafe {
        *s.add(t as usize) = if i < len {
            load_global(n.wrapping_add(i as usize))
        } else {
            0.0
        }
    };
    sync_threads();
    if i >= len {
        return;
    }
    // &s[t - r] and &N[i - r], walked by pointer (taps at immediate offsets); either may
    // point outside its array, only in-bounds cells are read.
    let (first_s, first_n) = (
        s.wrapping_add(t as usize).wrapping_sub(radius as usize),
        n.wrapping_add(i as usize).wrapping_sub(radius as usize),
    );
    let mut acc = 0.0f32;
    for j in 0..2 * radius + 1 {
        let k = (i + j).wrapping_sub(radius);
        if k < len {
            // Inside this block's tile: shared memory; else global (cached). The global
            // load is `load_global` so that LLVM cannot merge the two into a generic load.
            // SAFETY: k - start < B is inside the tile; else k < len is inside N.
            let v = unsafe {
                if k.wrapping_sub(start) < b {
                    *first_s.wrapping_add(j as usize)
                } else {
                    load_global(first_n.wrapping_add(j as usize))
                }
            };
            acc = fma(v, Mask1d::get(j as usize), acc);
        }
    }
    // SAFETY: i < len.
    unsafe { store_global(p.wrapping_add(i as usize), acc) }
}
