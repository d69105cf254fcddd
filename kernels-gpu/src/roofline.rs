//! Roofline probes: the fp32 FMA rate of the GPU, measured in the same run as the
//! convolutions so the benchmark's compute limit is a reading, not a datasheet number.
use crate::device::*;

/// Independent FMA chains per thread: enough to hide FFMA latency (4 cycles) per warp.
const CHAINS: usize = 8;

/// Each thread runs `CHAINS` independent chains of `iters * 16` FMAs (`acc = acc·a + b`)
/// and writes their sum, so nothing can be optimized away. Total FMAs per thread:
/// `iters * 16 * CHAINS`.
///
/// # Safety
/// `out` holds one float per launched thread.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn roofline_fma(out: *mut f32, a: f32, b: f32, iters: u32) {
    let id = block_x() * block_dim_x() + thread_x();
    let mut acc = [0.0f32; CHAINS];
    for (c, v) in acc.iter_mut().enumerate() {
        *v = (id as usize + c) as f32;
    }
    for _ in 0..iters {
        for _ in 0..16 {
            for v in acc.iter_mut() {
                *v = fma(*v, a, b);
            }
        }
    }
    *out.add(id as usize) = acc.iter().sum();
}
