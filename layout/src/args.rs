//! The kernels' parameters. Every entry takes exactly one `#[repr(C)]` struct by value
//! (PTX `.param .align 8 .b8 <entry>_param_0[N]`), so the host and the device read one
//! definition of each parameter list and cannot disagree on order or types. The PTX
//! builder checks that every entry's parameter is `size_of` the struct its table row names.

/// Which argument struct an entry takes: the table's "parameter list" column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamList {
    /// [`ConvArgs`]: every convolution kernel.
    Conv,
    /// [`FmaProbeArgs`]: the roofline FMA probe.
    FmaProbe,
}

impl ParamList {
    /// Bytes of the struct: what the PTX parameter must hold.
    #[inline]
    pub const fn size(self) -> usize {
        match self {
            ParamList::Conv => core::mem::size_of::<ConvArgs>(),
            ParamList::FmaProbe => core::mem::size_of::<FmaProbeArgs>(),
        }
    }
}

/// A kernel argument struct and the parameter list it is.
///
/// # Safety
/// `Self` must be `#[repr(C)]`, hold no host pointers, and be the struct the entries
/// with parameter list `LIST` read (their one parameter): the host passes its bytes.
pub unsafe trait KernelParams: Copy {
    /// The table's parameter list for this struct.
    const LIST: ParamList;
}

/// Where, among the [`COUNTED_WORDS`], the two dividers thread 0 splits a tile's index
/// with lie (4 words): after two slots of a tile's coordinates (4 words each), one
/// published while the other is read.
pub const COUNTED_DIVIDERS_AT: u32 = 2 * 4;

/// Words of shared memory a block that takes its tiles from [`ConvArgs::tile_counter`]
/// keeps after its buffers: the coordinates' two slots and the dividers
/// ([`COUNTED_DIVIDERS_AT`]).
pub const COUNTED_WORDS: u32 = COUNTED_DIVIDERS_AT + 4;

/// Arguments of every convolution kernel. Axes are named from the innermost (x, the
/// contiguous one) out: a `(depth, height, width)` array has `extent = [width, height,
/// depth]`. Axes past the dimension have extent 1 and radius 0. Each kernel reads the
/// fields its family uses; the rest are ignored.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ConvArgs {
    /// Device address of the input's first element (row-major, contiguous).
    pub input: u64,
    /// Device address of the output's first element (same shape as the input).
    pub output: u64,
    /// Device address of the mask, row-major, for families whose mask is a pointer
    /// ([`crate::MaskLoc::Global`]); 0 for the others, which read a `.const` symbol.
    pub mask: u64,
    /// Device address of two words, 0 at launch, that entries handing out their tiles by
    /// a counter take them from (and set back to 0 when done; [`COUNTED_WORDS`]); the
    /// host's one pair, as launches on its stream run one at a time.
    pub tile_counter: u64,
    /// Elements along x, y, z.
    pub extent: [u32; 3],
    /// Mask radius along x, y, z: the mask is `2r+1` taps along each axis.
    pub radius: [u32; 3],
    /// Ghost-cell policy, a [`crate::Mode`] code.
    pub mode: u32,
    /// The ghost-cell value of [`crate::Mode::Constant`].
    pub fill: f32,
    /// Image families: bytes between the starts of two rows (a pitched image, as
    /// cuMemAllocPitch pads it; the book's `wbImage_t` pitch).
    pub pitch: u32,
    /// Image families: interleaved channels per pixel, 1 to 4 (`extent[0]` counts pixels).
    pub channels: u32,
    /// Image families: the pixel type, a [`pixel`] code.
    pub pixel: u32,
    /// 1 where the host filled the `TILE_MAP` symbol ([`crate::tile_map`]) with a tensor
    /// map of `input` whose box is the entry's staged tile, so the entry stages its tiles
    /// with sm_90's tensor copies (TMA: out-of-bounds cells read as zeros); 0 else.
    pub tile_map: u32,
}

/// Pixel type codes of [`ConvArgs::pixel`].
pub mod pixel {
    /// 32-bit float pixels.
    pub const F32: u32 = 0;
    /// 8-bit unsigned pixels: loaded as floats, stored rounded to nearest (ties to even)
    /// and saturated to 0..=255.
    pub const U8: u32 = 1;
}

// SAFETY: repr(C), device addresses only; every `ParamList::Conv` entry takes it.
unsafe impl KernelParams for ConvArgs {
    const LIST: ParamList = ParamList::Conv;
}

/// Arguments of the FMA probe (`roofline_fma`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FmaProbeArgs {
    /// Device address of one float per launched thread.
    pub out: u64,
    /// Multiplier of the chains.
    pub a: f32,
    /// Addend of the chains.
    pub b: f32,
    /// Loop trips: each thread runs `iters · FMA_PER_ITER` FMAs.
    pub iters: u32,
}

// SAFETY: repr(C), device addresses only; the probe entry takes it.
unsafe impl KernelParams for FmaProbeArgs {
    const LIST: ParamList = ParamList::FmaProbe;
}

/// FMA probe geometry: independent chains per thread (enough to hide FFMA latency).
pub const FMA_CHAINS: usize = 8;
/// FMA probe: unrolled steps of every chain per loop trip.
pub const FMA_STEPS: usize = 16;
/// FMAs per thread per loop trip of the probe.
pub const FMA_PER_ITER: u64 = (FMA_CHAINS * FMA_STEPS) as u64;
/// Threads per block of the probe.
pub const FMA_BLOCK: u32 = 256;
/// The probe's PTX entry; the table names it so the builder's entry check covers it.
pub const FMA_PROBE_ENTRY: &str = "roofline_fma";
