//! Roofline probes: the fp32 FMA rate of the GPU, measured in the same run as the
//! convolutions so the benchmark's compute limit is a reading, not a datasheet number.
use crate::device::*;
use layout::args::{FmaProbeArgs, FMA_CHAINS, FMA_STEPS};

/// Each thread runs `FMA_CHAINS` independent chains of `iters * FMA_STEPS` FMAs
/// (`acc = acc·a + b`) and writes their sum, so nothing can be optimized away.
///
/// # Safety
/// `a.out` holds one float per launched thread.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn roofline_fma(a: FmaProbeArgs) {
    let id = block_x() * block_dim_x() + thread_x();
    let mut acc = [0.0f32; FMA_CHAINS];
    for (c, v) in acc.iter_mut().enumerate() {
        *v = (id as usize + c) as f32;
    }
    for _ in 0..a.iters {
        for _ in 0..FMA_STEPS {
            for v in acc.iter_mut() {
                *v = fma(*v, a.a, a.b);
            }
        }
    }
    // SAFETY: one float per launched thread.
    unsafe { store_global((a.out as *mut f32).wrapping_add(id as usize), acc.iter().sum()) }
}
