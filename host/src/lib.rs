//! gpuconv: 1D, 2D and 3D convolution on NVIDIA GPUs, every kernel written in Rust and
//! compiled to PTX (see `kernels-gpu`), launched through `cust`, on `ndarray` arrays of
//! any dimension from 1 to 3.
//!
//! ```no_run
//! use gpuconv::{Gpu, Variant};
//! use ndarray::array;
//! let gpu = Gpu::new()?;
//! let p = gpu.conv(array![4.0, 1.0, 3.0, 2.0, 3.0].view(), array![2.0, 1.0, 4.0].view(), Variant::Auto)?;
//! assert_eq!(p, array![8.0, 21.0, 13.0, 20.0, 7.0]);
//! # Ok::<(), gpuconv::Error>(())
//! ```
//!
//! `conv` is the textbook's convolution, `P[i] = Σ_j N[i - r + j] · M[j]` (no mask flip:
//! a correlation), with ghost cells 0; [`Gpu::correlate`] and [`Gpu::convolve`] take the
//! ghost-cell [`Mode`] too. [`reference`] holds the CPU implementation every kernel is
//! tested against. The kernel families, their limits and launch geometry come from one
//! table shared with the device code (`layout`, re-exported here).
pub mod conv;
pub mod device_array;
pub mod error;
pub mod gpu;
pub mod image;
mod image_mma;
pub mod imageio;
pub mod masks;
pub mod pad;
pub mod reference;
pub mod roofline;
pub mod variant;

pub use conv::Options;
pub use device_array::{DeviceArray, DeviceArray1, DeviceArray2, DeviceArray3};
pub use error::{Error, Result};
pub use gpu::Gpu;
pub use image::{DeviceImage, Pixel, PixelKind};
pub use layout;
pub use layout::{LaunchShape, Mode};
pub use variant::Variant;
