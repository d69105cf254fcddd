//! Every way a call can fail, as one typed error, one variant per failure. Nothing the
//! caller owns is touched before validation passes: a failed call leaves the caller's
//! arrays and device buffers as they were.
use crate::{Mode, Variant};

/// The library's error type.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No CUDA driver or no CUDA device on this machine.
    #[error("no CUDA GPU available ({0}); the CPU reference in `gpuconv::reference` still works")]
    NoGpu(String),
    /// The input has no elements.
    #[error("input is empty: convolution needs at least one element")]
    EmptyInput,
    /// The mask has no taps, or an even number of taps along some axis.
    #[error("mask of shape {shape:?} is not 2r+1 taps along every axis (odd, non-zero lengths)")]
    BadMask {
        /// The mask's shape as given.
        shape: Vec<usize>,
    },
    /// The mask is beyond what the chosen variant supports.
    #[error("mask radius {radius} is too large for {variant}: it supports at most {max} ({why})")]
    MaskTooLarge {
        /// The variant asked for (or the one `Auto` fell to).
        variant: Variant,
        /// The mask's largest radius.
        radius: usize,
        /// The largest radius the variant supports on every axis.
        max: usize,
        /// The resource that sets the limit.
        why: &'static str,
    },
    /// A variant for another dimension (e.g. a 2D kernel for a 1D signal).
    #[error("variant {variant} does not do {dim}D convolution")]
    WrongDimension {
        /// The variant asked for.
        variant: Variant,
        /// The dimension of the call.
        dim: usize,
    },
    /// A variant for plain arrays asked to filter an image.
    #[error("{variant} filters plain arrays, not pitched images: use image_fast, image_tiled or auto")]
    NotForImages {
        /// The variant asked for.
        variant: Variant,
    },
    /// An image variant asked to filter a plain array.
    #[error("{variant} filters pitched multi-channel images: use Gpu::correlate_image and friends")]
    OnlyForImages {
        /// The variant asked for.
        variant: Variant,
    },
    /// An image row pitch the kernels cannot use.
    #[error("row pitch of {pitch} bytes is not usable for {width} pixels of {bytes_per_pixel} bytes: it must be at least {} and a multiple of the channel size", width * bytes_per_pixel)]
    BadPitch {
        /// Bytes asked for between rows.
        pitch: usize,
        /// Pixels per row.
        width: usize,
        /// Bytes per pixel (channels · channel size).
        bytes_per_pixel: usize,
    },
    /// Input and output images with different pitches (the kernels take one).
    #[error("input rows are {input} bytes apart, output rows {output}: the pitches must match")]
    PitchMismatch {
        /// The input's pitch.
        input: usize,
        /// The output's pitch.
        output: usize,
    },
    /// Arrays of a dimension no kernel handles (only 1, 2 and 3).
    #[error("{ndim}-dimensional arrays are not supported: 1D, 2D and 3D only")]
    UnsupportedDimension {
        /// The array's number of axes.
        ndim: usize,
    },
    /// The mask has another number of axes than the input (dynamic-dimension arrays).
    #[error("mask has {mask} axes, input {input}: they must match")]
    MaskDimension {
        /// Axes of the input.
        input: usize,
        /// Axes of the mask.
        mask: usize,
    },
    /// Input and output device arrays disagree in shape.
    #[error("shape mismatch: input is {input:?}, output {output:?}")]
    ShapeMismatch {
        /// The input's (or source's) shape.
        input: Vec<usize>,
        /// The output's (or destination's) shape.
        output: Vec<usize>,
    },
    /// The input is larger than the kernels' 32-bit indexing or the grid allows.
    #[error("input of {elements} elements is too large: at most {max} per call")]
    TooLarge {
        /// Elements (or items along an axis) asked for.
        elements: usize,
        /// The limit.
        max: usize,
    },
    /// The variant does not implement this ghost-cell policy.
    #[error("{variant} does not implement the {} ghost-cell mode ({why})", mode.name())]
    ModeUnsupported {
        /// The variant asked for.
        variant: Variant,
        /// The policy asked for.
        mode: Mode,
        /// Which kernels do.
        why: &'static str,
    },
    /// The GPU has not enough free memory for the buffers.
    #[error("GPU out of memory while allocating {bytes} bytes")]
    OutOfMemory {
        /// Bytes requested when the allocation failed.
        bytes: usize,
    },
    /// The driver refused a kernel the dynamic shared memory its launch needs.
    #[error("kernel {entry} cannot have {bytes} bytes of dynamic shared memory: {reason}")]
    SharedMemory {
        /// The PTX entry.
        entry: String,
        /// Bytes asked for.
        bytes: u32,
        /// The driver's answer.
        reason: String,
    },
    /// An image with more interleaved channels than the kernels take.
    #[error("image has {channels} channels: 1 to 4 are supported")]
    Channels {
        /// Channels of the image.
        channels: usize,
    },
    /// The FMA probe needs at least one block of outputs.
    #[error("the FMA probe needs at least {min} outputs, got {got}")]
    ProbeTooSmall {
        /// Outputs given.
        got: usize,
        /// Outputs needed.
        min: usize,
    },
    /// A driver call made without cust failed.
    #[error("CUDA driver call {call} failed: {result}")]
    Driver {
        /// The driver function.
        call: &'static str,
        /// Its result code.
        result: String,
    },
    /// Any other CUDA driver error.
    #[error("CUDA error: {0}")]
    Cuda(#[from] cust::error::CudaError),
}

/// The library's result type.
pub type Result<T> = std::result::Result<T, Error>;

impl From<layout::ShapeError> for Error {
    fn from(e: layout::ShapeError) -> Self {
        match e {
            layout::ShapeError::TooLarge { elements, max } => Error::TooLarge { elements, max },
        }
    }
}
