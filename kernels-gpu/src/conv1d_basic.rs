//! 1D basic (textbook Fig. 7.6): one thread per output, mask passed as a pointer.
use crate::device::*;

/// `P[i] = Σ_j N[i - r + j] · M[j]`, ghost cells 0. Launched as
/// `layout::families::conv1d_basic` says: one thread per output.
///
/// # Safety
/// `a.input` and `a.output` hold `a.extent[0]` floats, `a.mask` holds `2r+1` with
/// `r = a.radius[0]`; `len + 2r < 2^32`.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn conv1d_basic(a: ConvArgs) {
    let (n, m, p) = (input(&a), mask(&a), output(&a));
    let (len, radius) = (a.extent[0], a.radius[0]);
    let i = block_x() * block_dim_x() + thread_x();
    if i >= len {
        return;
    }
    // &N[i - r]: the taps walk a pointer (64-bit, may point before N; only in-bounds
    // cells are read), as nvcc's `N[s + j]`; a 32-bit index would need its own
    // zero-extension and wide multiply per tap.
    let first = n.wrapping_add(i as usize).wrapping_sub(radius as usize);
    let mut acc = 0.0f32;
    for j in 0..2 * radius + 1 {
        // k = i - r + j; ghost cells (k < 0 wraps high, or k >= len) contribute 0.
        let k = (i + j).wrapping_sub(radius);
        if k < len {
            // SAFETY: k is inside N, j inside M (the entry's contract).
            acc = fma(
                unsafe { load_global(first.wrapping_add(j as usize)) },
                unsafe { load_global(m.wrapping_add(j as usize)) },
                acc,
            );
        }
    }
    // SAFETY: i < len.
    unsafe { store_global(p.wrapping_add(i as usize), acc) }
}
