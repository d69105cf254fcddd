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
    /// A separable variant asked to run a mask that is not of rank 1.
    #[error("{variant} runs separable (rank-1) masks, the outer product of one 1D mask per axis; this mask is not one (give it as 1D masks with correlate_separable or correlate_separable_3d, or pick another variant)")]
    NotSeparable {
        /// The variant asked for.
        variant: Variant,
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
    /// A variant that cannot take these pixels, this mask or this fill value (image_mma:
    /// u8 pixels only, a mask whose sum of |taps| is finite, constant fills that are
    /// integers of magnitude at most 255).
    #[error("{variant} cannot run this call: {why} (image_fast or auto can)")]
    ImageCallUnsupported {
        /// The variant asked for.
        variant: Variant,
        /// What it does not take.
        why: &'static str,
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
    /// A mask name that `masks::by_name` does not know.
    #[error("unknown mask `{name}`: the named masks are {known}")]
    UnknownMask {
        /// The name given.
        name: String,
        /// The names it knows, comma-separated.
        known: String,
    },
    /// A ghost-cell mode name that `Mode::from_name` does not know.
    #[error("unknown mode `{name}`: the modes are {known}")]
    UnknownMode {
        /// The name given.
        name: String,
        /// The modes' names, comma-separated.
        known: String,
    },
    /// A variant name that `Variant::from_name` does not know.
    #[error("unknown variant `{name}`: the variants are {known}")]
    UnknownVariant {
        /// The name given.
        name: String,
        /// The variants' names, comma-separated.
        known: String,
    },
    /// A Gaussian's sigma that makes no mask.
    #[error("gaussian sigma {sigma} is not a finite number above 0")]
    BadSigma {
        /// The sigma given.
        sigma: f32,
    },
    /// A named mask's radius beyond what `masks` builds (its taps would not fit memory).
    #[error("mask radius {radius} is too large: the named masks go up to radius {max}")]
    NamedMaskRadius {
        /// The radius asked for (for a Gaussian, `ceil(3 sigma)`).
        radius: usize,
        /// The largest radius built.
        max: usize,
    },
    /// A mask text with a field that is not a finite number.
    #[error("mask line {line}: `{token}` is not a finite number")]
    MaskNumber {
        /// 1-based line number.
        line: usize,
        /// The field as written.
        token: String,
    },
    /// A mask text row whose length differs from the first row's.
    #[error("mask line {line}: row has {got} numbers, but the first row has {want}: every row must be as long")]
    MaskRagged {
        /// 1-based line number.
        line: usize,
        /// Numbers on this row.
        got: usize,
        /// Numbers on the first row.
        want: usize,
    },
    /// A mask text with an even number of rows or columns: it has no centre tap.
    #[error("mask is {rows}x{cols} (rows x columns): both must be odd, 2r+1, so the mask has a centre")]
    MaskEven {
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
    },
    /// A mask text with no rows.
    #[error("mask has no rows: every line is empty or a comment")]
    MaskEmpty,
    /// A mask file whose text is not a valid mask.
    #[error("mask file {}: {source}", path.display())]
    MaskFile {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with its text.
        source: Box<Error>,
    },
    /// A file or directory that cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The path.
        path: std::path::PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// A file or directory that cannot be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The path.
        path: std::path::PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// A file in an image format gpuconv does not read.
    #[error("{}: unsupported image format ({why}): PNG and JPEG are supported", path.display())]
    ImageFormat {
        /// The file.
        path: std::path::PathBuf,
        /// The decoder's reason.
        why: String,
    },
    /// An output file whose extension names no format gpuconv writes.
    #[error("{}: cannot write images with extension `{ext}`: use .png, .jpg or .jpeg", path.display())]
    OutputExtension {
        /// The file.
        path: std::path::PathBuf,
        /// The extension (empty if none).
        ext: String,
    },
    /// A PNG or JPEG whose pixels are not 8-bit gray, gray+alpha, RGB or RGBA.
    #[error("{}: {pixels} pixels are not supported: 8-bit gray, gray+alpha, RGB or RGBA only", path.display())]
    PixelFormat {
        /// The file.
        path: std::path::PathBuf,
        /// The pixel layout found (e.g. `Rgb16`).
        pixels: String,
    },
    /// An `image` crate buffer whose pixels are not 8-bit gray, gray+alpha, RGB or RGBA.
    #[error("{pixels} pixels are not supported: 8-bit gray, gray+alpha, RGB or RGBA only")]
    BufferPixels {
        /// The pixel layout found (e.g. `Rgb16`).
        pixels: String,
    },
    /// A file that claims a supported format but does not decode.
    #[error("{}: not a valid image: {why}", path.display())]
    Decode {
        /// The file.
        path: std::path::PathBuf,
        /// The decoder's reason.
        why: String,
    },
    /// An image the encoder refused.
    #[error("{}: cannot encode the image: {why}", path.display())]
    Encode {
        /// The file.
        path: std::path::PathBuf,
        /// The encoder's reason.
        why: String,
    },
    /// A directory given as input that holds no PNG or JPEG file.
    #[error("{}: no .png, .jpg or .jpeg files in this directory", dir.display())]
    NoImages {
        /// The directory.
        dir: std::path::PathBuf,
    },
    /// Some files of a directory batch failed (each reported as it failed).
    #[error("{failed} of {total} images failed (see the messages above)")]
    BatchFailed {
        /// Files that failed.
        failed: usize,
        /// Files tried.
        total: usize,
    },
    /// An output that would overwrite the input it is computed from.
    #[error("output {} is the input: write to another file or directory so the input is kept", path.display())]
    OutputIsInput {
        /// The path given for both.
        path: std::path::PathBuf,
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
