//! The GPU handle: CUDA context, the embedded PTX module, one stream, the mask symbols.
use crate::error::{Error, Result};
use cust::context::Context;
use cust::device::DeviceAttribute;
use cust::error::CudaError;
use cust::function::{BlockSize, Function, GridSize};
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_void, CStr};

/// The PTX of every kernel, built from `kernels-gpu` by `build.rs` (through ptx-builder).
pub static PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

/// Which `__constant__` mask symbol a variant reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ConstMask {
    Mask1d,
    Mask2d,
}

/// One launch's shape: grid, block and dynamic shared memory, in one visible place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    /// Blocks in x, y, z.
    pub grid: (u32, u32, u32),
    /// Threads per block in x, y, z.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory per block, in bytes.
    pub shared_bytes: u32,
    /// The kernel loops over tiles (persistent blocks): `grid.0` is one block per tile,
    /// and the launch caps it at the blocks that fit on the GPU at once.
    pub persistent: bool,
}

/// A CUDA context with the convolution module loaded. Create one and reuse it: module
/// load (the driver's JIT of the PTX) is the slow part.
pub struct Gpu {
    // Field order is drop order: module and buffers go before the context.
    module: Module,
    stream: Stream,
    /// Last taps uploaded to each `.const` symbol, so pipelines skip repeat uploads.
    const_masks: RefCell<[Vec<f32>; 2]>,
    /// Device copy of the mask for the `*_basic` variants (pointer argument).
    global_mask: RefCell<Option<(Vec<f32>, DeviceBuffer<f32>)>>,
    /// Streaming multiprocessors, for sizing persistent grids.
    sm_count: u32,
    /// Blocks per SM of each (entry, shared bytes) that needed preparing (see `prepare`).
    occupancy: RefCell<HashMap<(String, u32), u32>>,
    _ctx: Context,
}

impl Gpu {
    /// Initializes CUDA on device 0 and loads the kernels. `Err(Error::NoGpu)` when the
    /// machine has no usable CUDA device.
    pub fn new() -> Result<Gpu> {
        let ctx = cust::quick_init().map_err(|e| Error::NoGpu(e.to_string()))?;
        let module = Module::from_ptx(PTX, &[])?;
        // A blocking stream: the synchronous symbol copies on the legacy default stream
        // wait for kernels still reading the previous mask.
        let stream = Stream::new(StreamFlags::DEFAULT, None)?;
        let sm_count = cust::device::Device::get_device(0)?.get_attribute(DeviceAttribute::MultiprocessorCount)? as u32;
        Ok(Gpu {
            module,
            stream,
            const_masks: RefCell::new([Vec::new(), Vec::new()]),
            global_mask: RefCell::new(None),
            sm_count,
            occupancy: RefCell::new(HashMap::new()),
            _ctx: ctx,
        })
    }

    /// The device's name, e.g. "NVIDIA H200".
    pub fn device_name(&self) -> Result<String> {
        Ok(cust::device::Device::get_device(0)?.name()?)
    }

    /// The stream every launch goes to (for timing with events).
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Waits for every launch so far.
    pub fn synchronize(&self) -> Result<()> {
        Ok(self.stream.synchronize()?)
    }

    pub(crate) fn function(&self, entry: &str) -> Result<Function<'_>> {
        Ok(self.module.get_function(entry)?)
    }

    /// Copies `taps` into a `__constant__` symbol (cudaMemcpyToSymbol), zero-padded to the
    /// symbol's size. Skipped when the symbol already holds these taps.
    pub(crate) fn set_const_mask(&self, which: ConstMask, taps: &[f32]) -> Result<()> {
        let mut cache = self.const_masks.borrow_mut();
        let slot = &mut cache[which as usize];
        if slot.as_slice() == taps && !taps.is_empty() {
            return Ok(());
        }
        match which {
            ConstMask::Mask1d => self.copy_symbol::<{ ptx_builder::MASK_1D.1 }>(c"MASK_1D", taps)?,
            ConstMask::Mask2d => self.copy_symbol::<{ ptx_builder::MASK_2D.1 }>(c"MASK_2D", taps)?,
        }
        *slot = taps.to_vec();
        Ok(())
    }

    fn copy_symbol<const N: usize>(&self, name: &CStr, taps: &[f32]) -> Result<()> {
        assert!(taps.len() <= N, "radius checked before upload");
        let mut padded = [0.0f32; N];
        padded[..taps.len()].copy_from_slice(taps);
        // Kernels still running may read the old mask.
        self.stream.synchronize()?;
        self.module.get_global::<[f32; N]>(name)?.copy_from(&padded)?;
        Ok(())
    }

    /// The mask as a device buffer, for the variants that take it as a pointer.
    pub(crate) fn global_mask(&self, taps: &[f32]) -> Result<cust::memory::DevicePointer<f32>> {
        let mut cache = self.global_mask.borrow_mut();
        if let Some((t, buf)) = cache.as_ref() {
            if t.as_slice() == taps {
                return Ok(buf.as_device_ptr());
            }
        }
        self.stream.synchronize()?;
        *cache = None;
        let buf = DeviceBuffer::from_slice(taps).map_err(|e| oom(e, std::mem::size_of_val(taps)))?;
        let ptr = buf.as_device_ptr();
        *cache = Some((taps.to_vec(), buf));
        Ok(ptr)
    }

    /// Readies `entry` for launches of `shape`'s block and shared memory, once per
    /// (entry, shared bytes): opts in to shared memory above 48 KiB, and returns the
    /// blocks per SM (occupancy), which sizes persistent grids.
    fn prepare(&self, entry: &str, f: &Function<'_>, shape: &LaunchShape) -> Result<u32> {
        let key = (entry.to_string(), shape.shared_bytes);
        if let Some(&n) = self.occupancy.borrow().get(&key) {
            return Ok(n);
        }
        if shape.shared_bytes > DEFAULT_SHARED_LIMIT {
            allow_shared(f, shape.shared_bytes)?; // occupancy counts only what is allowed
        }
        let b = shape.block;
        let n = f.max_active_blocks_per_multiprocessor(BlockSize::xyz(b.0, b.1, b.2), shape.shared_bytes as usize)?;
        self.occupancy.borrow_mut().insert(key, n);
        Ok(n)
    }

    /// Launches `entry` with `shape` and raw kernel arguments.
    ///
    /// # Safety
    /// `args` must match the kernel's parameter list, and every pointer in them must stay
    /// valid, and hold what the kernel reads and writes, until the launch completes.
    pub(crate) unsafe fn launch(&self, entry: &str, shape: LaunchShape, args: &[*mut c_void]) -> Result<()> {
        let f = self.function(entry)?;
        let mut g = shape.grid;
        if shape.persistent || shape.shared_bytes > DEFAULT_SHARED_LIMIT {
            let per_sm = self.prepare(entry, &f, &shape)?;
            if shape.persistent {
                // One wave, no tail: the blocks loop over the tiles.
                g.0 = g.0.min(per_sm.max(1) * self.sm_count);
            }
        }
        let b = shape.block;
        // SAFETY: forwarded from the caller's contract.
        unsafe {
            self.stream.launch(
                &f,
                GridSize::xyz(g.0, g.1, g.2),
                BlockSize::xyz(b.0, b.1, b.2),
                shape.shared_bytes,
                args,
            )?;
        }
        Ok(())
    }
}

/// Dynamic shared memory a kernel may use without opting in (48 KiB).
const DEFAULT_SHARED_LIMIT: u32 = 48 * 1024;

/// Opts `f` in to `bytes` of dynamic shared memory (cudaFuncSetAttribute with
/// MaxDynamicSharedMemorySize), which launches above 48 KiB need; cust has no wrapper.
pub(crate) fn allow_shared(f: &Function<'_>, bytes: u32) -> Result<()> {
    use cust::sys::{cuFuncSetAttribute, CUfunction_attribute, CUresult};
    // SAFETY: `f` is a live function handle of this context's module.
    let r = unsafe {
        cuFuncSetAttribute(
            f.to_raw(),
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            bytes as i32,
        )
    };
    match r {
        CUresult::CUDA_SUCCESS => Ok(()),
        _ => Err(Error::Shape(format!(
            "kernel cannot use {bytes} bytes of shared memory ({r:?})"
        ))),
    }
}

/// Allocates `len` floats on the device, reporting out-of-memory as such.
pub(crate) fn alloc(len: usize) -> Result<DeviceBuffer<f32>> {
    // SAFETY: f32 has no invalid bit patterns; every kernel writes its whole output.
    unsafe { DeviceBuffer::uninitialized(len) }.map_err(|e| oom(e, len * 4))
}

pub(crate) fn oom(e: CudaError, bytes: usize) -> Error {
    match e {
        CudaError::OutOfMemory => Error::OutOfMemory { bytes },
        e => Error::Cuda(e),
    }
}

/// Builds the `&[*mut c_void]` argument list of a launch from kernel arguments.
macro_rules! kernel_args {
    ($($arg:expr),* $(,)?) => {
        &[$(&$arg as *const _ as *mut ::std::ffi::c_void),*]
    };
}
pub(crate) use kernel_args;
