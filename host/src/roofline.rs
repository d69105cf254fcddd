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
        // `out`, borrowed for this call, holds one float per element.
        self.launch_probe(out.addr(), out.len(), iters)
    }

    /// The FMA probe over the whole blocks of `len` threads writing to `out`. Callers pass
    /// a live device allocation of at least `len` floats (a borrowed array's, or the hold
    /// buffer `Gpu::hold` owns): private, as `launch`'s contract asks.
    fn launch_probe(&self, out: u64, len: usize, iters: u32) -> Result<u64> {
        let blocks = len / FMA_BLOCK as usize;
        if blocks == 0 {
            return Err(Error::ProbeTooSmall {
                got: len,
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
            out,
            a: 0.999,
            b: 1.0e-3,
            iters,
        };
        // The caller's `out` holds one float per launched thread: what the probe writes,
        // and all it touches.
        self.launch(self.main_code(), FMA_PROBE_ENTRY, ParamList::FmaProbe, shape, &args)?;
        Ok(blocks as u64 * FMA_BLOCK as u64 * iters as u64 * FMA_PER_ITER)
    }

    /// Holds the stream busy for about `us` microseconds before each call [`Gpu::median_us`]
    /// times (`None`: off, the default): a one-block-an-SM FMA probe, its length measured
    /// here, runs before the start event, so the host enqueues the call while the GPU is
    /// busy and the time counts the GPU's work alone, not the launch gap of an idle stream
    /// (the host's enqueue after the start event has fired), as nvbench's blocking kernel
    /// does. A call that synchronizes the stream itself gets its gap back.
    pub fn hold_timing(&self, us: Option<f64>) -> Result<()> {
        *self.hold.borrow_mut() = None;
        let Some(us) = us else {
            return Ok(());
        };
        let len = self.sm_count() as usize * FMA_BLOCK as usize;
        let out = crate::gpu::alloc(len)?;
        let addr = out.as_device_ptr().as_raw();
        // Long enough that the launch gap is noise beside it.
        let calib = 2048;
        let t = self.median_us(1, 3, || self.launch_probe(addr, len, calib).map(|_| ()))?;
        let iters = (us / t * calib as f64).ceil().clamp(1.0, u32::MAX as f64) as u32;
        *self.hold.borrow_mut() = Some((out, iters));
        Ok(())
    }

    /// Median GPU time in microseconds of `reps` runs of `work`, each bracketed by CUDA
    /// events on [`Gpu::stream`], after `warmup` untimed runs. `work` only enqueues. With
    /// [`Gpu::hold_timing`] on, the stream is held busy before each start event.
    pub fn median_us(&self, warmup: usize, reps: usize, mut work: impl FnMut() -> Result<()>) -> Result<f64> {
        for _ in 0..warmup {
            work()?;
        }
        let (start, stop) = (Event::new(EventFlags::DEFAULT)?, Event::new(EventFlags::DEFAULT)?);
        let hold = self
            .hold
            .borrow()
            .as_ref()
            .map(|(b, i)| (b.as_device_ptr().as_raw(), b.len(), *i));
        let mut times = Vec::with_capacity(reps.max(1));
        for _ in 0..reps.max(1) {
            if let Some((addr, len, iters)) = hold {
                self.launch_probe(addr, len, iters)?;
            }
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
