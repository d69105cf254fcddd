//! Device-resident arrays for pipelines: upload once, convolve many times, download once.
use crate::error::{Error, Result};
use crate::gpu::{alloc, Gpu};
use cust::memory::{CopyDestination, DeviceBuffer};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2};

/// Largest number of elements one call handles: kernels index with 32 bits.
pub const MAX_ELEMENTS: usize = i32::MAX as usize;

/// A 1D signal in GPU memory.
pub struct DeviceArray1 {
    pub(crate) buf: DeviceBuffer<f32>,
}

/// A row-major (height, width) image in GPU memory.
pub struct DeviceArray2 {
    pub(crate) buf: DeviceBuffer<f32>,
    pub(crate) dim: (usize, usize),
}

/// Device data the probes and copies accept: both array kinds, by their buffer.
pub trait DeviceData {
    /// The underlying device buffer.
    fn buffer(&self) -> &DeviceBuffer<f32>;
    /// The underlying device buffer, writable.
    fn buffer_mut(&mut self) -> &mut DeviceBuffer<f32>;
}

impl DeviceData for DeviceArray1 {
    fn buffer(&self) -> &DeviceBuffer<f32> {
        &self.buf
    }
    fn buffer_mut(&mut self) -> &mut DeviceBuffer<f32> {
        &mut self.buf
    }
}

impl DeviceData for DeviceArray2 {
    fn buffer(&self) -> &DeviceBuffer<f32> {
        &self.buf
    }
    fn buffer_mut(&mut self) -> &mut DeviceBuffer<f32> {
        &mut self.buf
    }
}

fn check_len(n: usize) -> Result<()> {
    match n {
        0 => Err(Error::EmptyInput),
        n if n > MAX_ELEMENTS => Err(Error::TooLarge {
            elements: n,
            max: MAX_ELEMENTS,
        }),
        _ => Ok(()),
    }
}

impl DeviceArray1 {
    /// Elements.
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    /// Never true: empty arrays are refused at creation.
    pub fn is_empty(&self) -> bool {
        self.buf.len() == 0
    }
    /// Copies back to the host.
    pub fn to_host(&self) -> Result<Array1<f32>> {
        let mut v = vec![0.0f32; self.len()];
        self.buf.copy_to(&mut v[..])?;
        Ok(Array1::from(v))
    }
}

impl DeviceArray2 {
    /// (height, width).
    pub fn dim(&self) -> (usize, usize) {
        self.dim
    }
    /// Copies back to the host.
    pub fn to_host(&self) -> Result<Array2<f32>> {
        let mut v = vec![0.0f32; self.buf.len()];
        self.buf.copy_to(&mut v[..])?;
        Ok(Array2::from_shape_vec(self.dim, v).expect("buffer holds height*width"))
    }
}

impl Gpu {
    /// Copies a signal (any strides) to the GPU.
    pub fn upload1(&self, a: ArrayView1<f32>) -> Result<DeviceArray1> {
        check_len(a.len())?;
        let host = a.as_standard_layout();
        let slice = host.as_slice().expect("standard layout is contiguous");
        let buf = DeviceBuffer::from_slice(slice).map_err(|e| crate::gpu::oom(e, slice.len() * 4))?;
        Ok(DeviceArray1 { buf })
    }

    /// Copies an image (any strides) to the GPU in row-major order.
    pub fn upload2(&self, a: ArrayView2<f32>) -> Result<DeviceArray2> {
        check_len(a.len())?;
        let host = a.as_standard_layout();
        let slice = host.as_slice().expect("standard layout is contiguous");
        let buf = DeviceBuffer::from_slice(slice).map_err(|e| crate::gpu::oom(e, slice.len() * 4))?;
        Ok(DeviceArray2 { buf, dim: a.dim() })
    }

    /// An uninitialized signal of `len` elements, e.g. an output.
    pub fn alloc1(&self, len: usize) -> Result<DeviceArray1> {
        check_len(len)?;
        Ok(DeviceArray1 { buf: alloc(len)? })
    }

    /// An uninitialized (height, width) image.
    pub fn alloc2(&self, dim: (usize, usize)) -> Result<DeviceArray2> {
        check_len(dim.0.saturating_mul(dim.1))?;
        Ok(DeviceArray2 {
            buf: alloc(dim.0 * dim.1)?,
            dim,
        })
    }
}
