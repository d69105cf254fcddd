//! Every way a call can fail, as one typed error. Nothing the caller owns is touched
//! before validation passes, and a failed call leaves the caller's arrays as they were.
use crate::Variant;

/// The library's error type.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No CUDA driver or no CUDA device on this machine.
    #[error("no CUDA GPU available ({0}); the CPU reference in `gpuconv::reference` still works")]
    NoGpu(String),
    /// The input has no elements.
    #[error("input is empty: convolution needs at least one element")]
    EmptyInput,
    /// The mask has no taps, an even number of taps, or is not square.
    #[error("mask of shape {shape:?} is not 2r+1 taps in every dimension (odd, equal sides)")]
    BadMask {
        /// The mask's shape as given.
        shape: Vec<usize>,
    },
    /// The mask's radius exceeds what the chosen variant supports.
    #[error("mask radius {radius} is too large for {variant}: it supports at most {max} ({why})")]
    MaskTooLarge {
        /// The variant asked for.
        variant: Variant,
        /// The mask's radius.
        radius: usize,
        /// The largest radius the variant supports.
        max: usize,
        /// The resource that sets the limit.
        why: &'static str,
    },
    /// A variant for the other dimension (e.g. a 2D kernel for a 1D signal).
    #[error("variant {variant} does not do {dim}D convolution")]
    WrongDimension {
        /// The variant asked for.
        variant: Variant,
        /// The dimension of the call.
        dim: usize,
    },
    /// Input and output (or device buffers) disagree in shape.
    #[error("shape mismatch: {0}")]
    Shape(String),
    /// The input is larger than the kernels' 32-bit indexing allows.
    #[error("input of {elements} elements is too large: at most {max} per call")]
    TooLarge {
        /// Elements asked for.
        elements: usize,
        /// The limit.
        max: usize,
    },
    /// The GPU has not enough free memory for the buffers.
    #[error("GPU out of memory while allocating {bytes} bytes")]
    OutOfMemory {
        /// Bytes requested when the allocation failed.
        bytes: usize,
    },
    /// Any other CUDA driver error.
    #[error("CUDA error: {0}")]
    Cuda(#[from] cust::error::CudaError),
}

/// The library's result type.
pub type Result<T> = std::result::Result<T, Error>;
