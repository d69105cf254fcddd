//! The one source of truth both sides of the bus read: the device crate (`kernels-gpu`,
//! built for nvptx64), the PTX builder, the host library and the tests all depend on it,
//! like the `shared` crate of rust-gpu's examples.
//!
//! - [`families`]: the table of kernel families (one file each: geometry, launch shape,
//!   table row) and [`for_each_family!`], the one list of their names.
//! - [`masks`]: the `__constant__` mask symbols, name and length.
//! - [`args`]: the `#[repr(C)]` structs every kernel entry takes as its one parameter.
//! - [`shape`]: launch shapes and the problem they are computed from.
//!
//! No number that both sides need is written anywhere else. Every function is
//! `#[inline]` (or `const`): kernels-gpu is compiled to PTX without a link step, so a
//! function it calls must be code-generated inside it.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn, missing_docs)]

#[cfg(test)]
extern crate std;

pub mod args;
pub mod families;
pub mod family;
pub mod masks;
pub mod mode;
pub mod shape;
pub mod tile_map;

pub use args::{ConvArgs, FmaProbeArgs, KernelParams, ParamList};
pub use family::{Entry, Family, MaskLoc, Pixels, Radii};
pub use masks::ConstSymbol;
pub use mode::Mode;
pub use shape::{DepthSplit, LaunchShape, Problem, ShapeError};
