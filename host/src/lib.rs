//! gpuconv: 1D and 2D convolution on NVIDIA GPUs, every kernel written in Rust and
//! compiled to PTX (see `kernels-gpu`), launched through `cust`, on `ndarray` arrays.
//!
//! ```no_run
//! use gpuconv::{Gpu, Variant};
//! use ndarray::array;
//! let gpu = Gpu::new()?;
//! let p = gpu.conv1d(array![4.0, 1.0, 3.0, 2.0, 3.0].view(), array![2.0, 1.0, 4.0].view(), Variant::Auto)?;
//! assert_eq!(p, array![8.0, 21.0, 13.0, 20.0, 7.0]);
//! # Ok::<(), gpuconv::Error>(())
//! ```
//!
//! Convolution is the textbook's: `P[i] = Σ_j N[i - r + j] · M[j]` (no mask flip), with
//! ghost cells 0. [`reference`] holds the CPU implementation every kernel is tested against.
pub mod conv1d;
mod conv1d_fast;
pub mod conv2d;
mod conv2d_fast;
pub mod device_array;
pub mod error;
pub mod gpu;
mod launch;
pub mod reference;
pub mod roofline;
pub mod variant;

pub use device_array::{DeviceArray1, DeviceArray2, DeviceData};
pub use error::{Error, Result};
pub use gpu::{Gpu, LaunchShape};
pub use variant::Variant;
