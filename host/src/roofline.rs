//! Roofline probes and GPU timing for benchmarks: a device-to-device copy (the memory
//! limit of a kernel that reads its input once and writes its output once) and the
//! measured fp32 FMA rate (the compute limit), on the same stream as the convolutions.
use crate::device_array::DeviceData;
use crate::error::{Error, Result};
use crate::gpu::{kernel_args, Gpu, LaunchShape};
use cust::event::{Event, EventFlags};
use cust::memory::AsyncCopyDestination;

/// Threads per block of the FMA probe.
const FMA_BLOCK: u32 = 256;
/// FMAs per thread per loop iteration of `roofline_fma` (16 steps x 8 chains).
const FMA_PER_ITER: u64 = 16 * 8;

impl Gpu {
    /// Copies `src` into `dst` on the GPU (cuMemcpyDtoDAsync on [`Gpu::stream`]).
    pub fn copy_device<S: DeviceData, D: DeviceData>(&self, src: &S, dst: &mut D) -> Result<()> {
        if src.buffer().len() != dst.buffer().len() {
            return Err(Error::Shape(format!(
                "copy of {} floats into {}",
                src.buffer().len(),
                dst.buffer().len()
            )));
        }
        // SAFETY: both buffers are device allocations of equal length, alive until the
        // copy completes (freeing device memory waits for pending work).
        unsafe { dst.buffer_mut().async_copy_from(src.buffer(), self.stream())? };
        Ok(())
    }

    /// Launches the FMA probe with one thread per element of `out`; returns the number
    /// of FMAs it performs. Time it with [`Gpu::median_us`] to get the FMA rate.
    pub fn launch_fma_probe<D: DeviceData>(&self, out: &mut D, iters: u32) -> Result<u64> {
        let threads = out.buffer().len() as u32 / FMA_BLOCK * FMA_BLOCK;
        if threads == 0 {
            return Err(Error::Shape(format!("FMA probe needs at least {FMA_BLOCK} outputs")));
        }
        let shape = LaunchShape {
            grid: (threads / FMA_BLOCK, 1, 1),
            block: (FMA_BLOCK, 1, 1),
            shared_bytes: 0,
            persistent: false,
        };
        let (p, a, b) = (out.buffer_mut().as_device_ptr(), 0.999_f32, 1.0e-3_f32);
        // SAFETY: `roofline_fma(out, a, b, iters)` writes one float per launched thread,
        // and `out` holds at least `threads` floats.
        unsafe { self.launch("roofline_fma", shape, kernel_args![p, a, b, iters])? };
        Ok(threads as u64 * iters as u64 * FMA_PER_ITER)
    }

    /// Median GPU time in microseconds of `reps` runs of `work`, each bracketed by CUDA
    /// events on [`Gpu::stream`], after `warmup` untimed runs. `work` only enqueues.
    pub fn median_us(&self, warmup: usize, reps: usize, mut work: impl FnMut() -> Result<()>) -> Result<f64> {
        for _ in 0..warmup {
            work()?;
        }
        let (start, stop) = (Event::new(EventFlags::DEFAULT)?, Event::new(EventFlags::DEFAULT)?);
        let mut times = Vec::with_capacity(reps.max(1));
        for _ in 0..reps.max(1) {
            start.record(self.stream())?;
            work()?;
            stop.record(self.stream())?;
            stop.synchronize()?;
            times.push(stop.elapsed_time_f32(&start)? as f64 * 1e3);
        }
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2])
    }
}
