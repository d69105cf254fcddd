//! Roofline probes and GPU timing for benchmarks: a device-to-device copy (the memory
//! limit of a kernel that reads its input once and writes its output once) and the
//! measured fp32 FMA rate (the compute limit), on the same stream as the convolutions.
use crate::device_array::DeviceArray;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use cust::event::{Event, EventFlags};
use cust::memory::AsyncCopyDestination;
use layout::args::{FmaProbeArgs, FMA_BLOCK, FMA_PER_ITER, FMA_PROBE_ENTRY};
use layout::{LaunchShape, ParamList};
use ndarray::{Dimension, Ix1};

impl Gpu {
    /// Copies `src` into `dst` on the GPU (cuMemcpyDtoDAsync on [`Gpu::stream`]).
    pub fn copy_device<D: Dimension>(&self, src: &DeviceArray<'_, D>, dst: &mut DeviceArray<'_, D>) -> Result<()> {
        if src.shape() != dst.shape() {
            return Err(Error::ShapeMismatch {
                input: src.shape().to_vec(),
                output: dst.shape().to_vec(),
            });
        }
        // SAFETY: both buffers are device allocations of equal length, alive until the
        // copy completes (freeing device memory waits for pending work).
        unsafe { dst.buf.async_copy_from(&src.buf, self.stream())? };
        Ok(())
    }

    /// Launches the FMA probe with one thread per element of `out` (whole blocks of 256);
    /// returns the number of FMAs it performs. Time it with [`Gpu::median_us`] to get the
    /// FMA rate.
    pub fn launch_fma_probe(&self, out: &mut DeviceArray<'_, Ix1>, iters: u32) -> Result<u64> {
        let blocks = out.len() / FMA_BLOCK as usize;
        if blocks == 0 {
            return Err(Error::ProbeTooSmall {
                got: out.len(),
                min: FMA_BLOCK as usize,
            });
        }
        let shape = LaunchShape {
            grid: (blocks as u32, 1, 1),
            block: (FMA_BLOCK, 1, 1),
            shared_bytes: 0,
            persistent: false,
            depth: None,
        };
        let args = FmaProbeArgs {
            out: out.addr(),
            a: 0.999,
            b: 1.0e-3,
            iters,
        };
        // `out`, borrowed for this call, holds one float per launched thread: what the
        // probe writes, and all it touches.
        self.launch(self.main_code(), FMA_PROBE_ENTRY, ParamList::FmaProbe, shape, &args)?;
        Ok(blocks as u64 * FMA_BLOCK as u64 * iters as u64 * FMA_PER_ITER)
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
