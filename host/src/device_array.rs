//! Device-resident arrays for pipelines: upload once, convolve many times, download once.
//! One type for every dimension; it borrows the [`Gpu`] whose context owns its memory,
//! so it cannot outlive it.
use crate::error::{Error, Result};
use crate::gpu::{alloc, oom, Gpu};
use cust::memory::{CopyDestination, DeviceBuffer};
use ndarray::{Array, ArrayView, Dimension, IntoDimension, Ix1, Ix2, Ix3};
use std::marker::PhantomData;

/// Largest number of elements one call handles: kernels index with 32 bits.
pub const MAX_ELEMENTS: usize = i32::MAX as usize;

/// A row-major f32 array in GPU memory, of shape `D`, living as long as the [`Gpu`] `'g`.
pub struct DeviceArray<'g, D: Dimension> {
    pub(crate) buf: DeviceBuffer<f32>,
    dim: D,
    _gpu: PhantomData<&'g Gpu>,
}

/// A 1D signal in GPU memory.
pub type DeviceArray1<'g> = DeviceArray<'g, Ix1>;
/// A (height, width) image in GPU memory.
pub type DeviceArray2<'g> = DeviceArray<'g, Ix2>;
/// A (depth, height, width) volume in GPU memory.
pub type DeviceArray3<'g> = DeviceArray<'g, Ix3>;

/// Refuses empty arrays and arrays past 32-bit indexing.
pub(crate) fn check_len(n: usize) -> Result<()> {
    match n {
        0 => Err(Error::EmptyInput),
        n if n > MAX_ELEMENTS => Err(Error::TooLarge {
            elements: n,
            max: MAX_ELEMENTS,
        }),
        _ => Ok(()),
    }
}

/// Elements of a shape, `None` on overflow.
pub(crate) fn elements(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |a, &s| a.checked_mul(s))
}

impl<D: Dimension> DeviceArray<'_, D> {
    /// The shape, outermost axis first (as ndarray's).
    pub fn shape(&self) -> &[usize] {
        self.dim.slice()
    }
    /// The shape as ndarray's dimension type (`(height, width)` through `.into_pattern()`).
    pub fn raw_dim(&self) -> D {
        self.dim.clone()
    }
    /// The shape as ndarray's pattern: `usize`, `(h, w)` or `(d, h, w)`.
    pub fn dim(&self) -> D::Pattern {
        self.dim.clone().into_pattern()
    }
    /// Elements.
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    /// Never true: empty arrays are refused at creation.
    pub fn is_empty(&self) -> bool {
        self.buf.len() == 0
    }
    /// The device address of the first element.
    pub(crate) fn addr(&self) -> u64 {
        self.buf.as_device_ptr().as_raw()
    }
    /// Overwrites the array with `a` (its shape, any strides), synchronously.
    pub(crate) fn copy_from_host(&mut self, a: ArrayView<f32, D>) -> Result<()> {
        debug_assert_eq!(a.shape(), self.shape(), "the caller checked the shape");
        let host = a.as_standard_layout();
        self.buf
            .copy_from(host.as_slice().expect("standard layout is contiguous"))?;
        Ok(())
    }
    /// Copies back to the host.
    pub fn to_host(&self) -> Result<Array<f32, D>> {
        let mut v = vec![0.0f32; self.len()];
        self.buf.copy_to(&mut v[..])?;
        Ok(Array::from_shape_vec(self.dim.clone(), v).expect("the buffer holds the shape's elements"))
    }
}

impl Gpu {
    /// Copies an array (any strides, any dimension) to the GPU in row-major order.
    pub fn upload<D: Dimension>(&self, a: ArrayView<f32, D>) -> Result<DeviceArray<'_, D>> {
        check_len(a.len())?;
        let host = a.as_standard_layout();
        let slice = host.as_slice().expect("standard layout is contiguous");
        let buf = DeviceBuffer::from_slice(slice).map_err(|e| oom(e, slice.len() * 4))?;
        Ok(DeviceArray {
            buf,
            dim: a.raw_dim(),
            _gpu: PhantomData,
        })
    }

    /// An uninitialized array of shape `shape` (`len`, `(h, w)` or `(d, h, w)`), e.g. an
    /// output.
    pub fn alloc<Sh: IntoDimension>(&self, shape: Sh) -> Result<DeviceArray<'_, Sh::Dim>> {
        let dim = shape.into_dimension();
        let n = elements(dim.slice()).ok_or(Error::TooLarge {
            elements: usize::MAX,
            max: MAX_ELEMENTS,
        })?;
        check_len(n)?;
        Ok(DeviceArray {
            buf: alloc(n)?,
            dim,
            _gpu: PhantomData,
        })
    }

    /// [`Gpu::upload`] of a signal (the 1D name kept as a thin wrapper).
    pub fn upload1(&self, a: ArrayView<f32, Ix1>) -> Result<DeviceArray1<'_>> {
        self.upload(a)
    }
    /// [`Gpu::upload`] of an image (the 2D name kept as a thin wrapper).
    pub fn upload2(&self, a: ArrayView<f32, Ix2>) -> Result<DeviceArray2<'_>> {
        self.upload(a)
    }
    /// [`Gpu::alloc`] of a signal (the 1D name kept as a thin wrapper).
    pub fn alloc1(&self, len: usize) -> Result<DeviceArray1<'_>> {
        self.alloc(len)
    }
    /// [`Gpu::alloc`] of an image (the 2D name kept as a thin wrapper).
    pub fn alloc2(&self, dim: (usize, usize)) -> Result<DeviceArray2<'_>> {
        self.alloc(dim)
    }
}
