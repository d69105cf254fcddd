//! The kernel-family table: one file per family (its geometry, its launch-shape function
//! and its row, `FAMILY`), and [`with_families!`], the one list of them. Everything else
//! is derived from here: the host's `Variant`, the PTX entries the builder requires (and
//! the only ones it allows), the lists the PTX tests walk, and the bench ids.
use crate::family::{str_eq, Family};

pub mod textbook;

/// Halo cells the fast kernels stage on each side of a tile: the `cells` a tap reaches,
/// rounded up to whole 32-byte sectors (8 floats), so staged rows are copied with
/// 16-byte `cp.async` and start on a sector. Rounded to 4 floats, a row began 16 bytes
/// into a sector and a warp's 512-byte copy touched 17 sectors: on the H200 that was
/// 5-11% slower at r <= 4 (conv2d_fast r = 1 154 -> 138 us, conv2d_separable r = 4
/// 171 -> 157, image_fast f32 r = 1 455 -> 425).
#[inline]
pub const fn pad(cells: u32) -> u32 {
    cells.div_ceil(8) * 8
}

/// Shared memory of an SM on sm_90 (228 KiB), of which the system keeps 1 KiB per block.
pub const SM_SHARED_BYTES: u32 = 228 * 1024;

/// Whether `blocks` blocks of `bytes` shared bytes each fit in one SM's shared memory.
#[inline]
pub const fn shared_fits(bytes: u32, blocks: u32) -> bool {
    blocks * (bytes + 1024) <= SM_SHARED_BYTES
}

/// Words of a 3D walk's group table (`stage::group_table`) after `table_at` floats of a
/// block's shared memory: one per 4-float group of a staged plane of `plane_floats`, or
/// none where it would cost one of the `blocks` per SM (there, border windows stage their
/// groups as before).
#[inline]
pub const fn walk_table_words(table_at: u32, plane_floats: u32, blocks: u32) -> u32 {
    if shared_fits(4 * (table_at + plane_floats / 4), blocks) {
        plane_floats / 4
    } else {
        0
    }
}

/// Whether a 3D walk at radius `r` that stages its planes by threads takes each step's
/// window, its edge cell and the thread's index anew (not held across the loop) and the
/// edge cells its threads do not cover (`stage::EdgeCell::covered`) in line rather than
/// by the out-of-line call (`stage::walked`'s `INLINE_EDGES`): from r = 4, which only
/// `conv3d_separable` compiles. There 8 rows a thread hold 72 sums: around the call (its
/// arguments and the registers it keeps) ptxas spilled 13 of them a step, and with the
/// window held, 8. Below, the walks keep the call (in line, LLVM leaves division and bound
/// checks it cannot prove away in `conv3d_fast`).
#[inline]
pub const fn walk_inline_edges(r: u32) -> bool {
    r >= 4
}

/// Floats between a 3D walk's tensor-copy barriers and its ghost list, which every thread
/// reads each step: a 128-byte line of their own for the barriers, which the copies
/// update as they land.
pub const WALK_BARRIER_GAP: u32 = 32;

/// Ghost cells a thread of a 3D walk holds in registers at most (`planes::segment`).
pub const WALK_HELD_MAX: u32 = 3;

/// Ghost cells a thread of a 3D walk at radius `r` holds in registers, of a window of
/// `sw` x `sh` with `threads` threads: those of one x side and one y side, `r(sw + sh)`.
#[inline]
pub const fn walk_held(r: u32, [sw, sh, _]: [u32; 3], threads: u32) -> u32 {
    let held = (r * (sw + sh)).div_ceil(threads);
    if held < WALK_HELD_MAX {
        held
    } else {
        WALK_HELD_MAX
    }
}

/// Words before a 3D walk's ghost list's entries: the count and a pad word (the entries'
/// word pairs 8-byte aligned).
pub const WALK_LIST_HEAD: u32 = 2;

/// Words of a 3D walk's ghost list proper: its head ([`WALK_LIST_HEAD`]), then a pair
/// (slot offset, source) per cell of a window of `sw` x `sh` at radius `r`, at most
/// `2r(sw + sh)` (`r` columns on each side down every row, `r` rows on each side across
/// every column; a window on no x side takes fewer stand-in cells than a side's).
#[inline]
pub const fn walk_list_words(r: u32, [sw, sh, _]: [u32; 3]) -> u32 {
    WALK_LIST_HEAD + 2 * 2 * r * (sw + sh)
}

/// Shared words of a 3D walk's ghost cells (`planes::walk` under a mode other than zero
/// ghost cells, where planes come by tensor copies): the list ([`walk_list_words`]), then
/// for each slot of the `ring` the values of each thread's held cells read from global
/// memory (wrap; [`walk_held`] a thread). None where it would cost one of the `blocks` per
/// SM after `at` floats (there, mapping modes stage their planes by threads).
#[inline]
pub const fn walk_ghost_words(
    tile_map: bool,
    at: u32,
    r: u32,
    tile_box: [u32; 3],
    ring: u32,
    blocks: u32,
    threads: u32,
) -> u32 {
    let words = walk_list_words(r, tile_box) + ring * walk_held(r, tile_box, threads) * threads;
    if tile_map && shared_fits(4 * (at + words), blocks) {
        words
    } else {
        0
    }
}

/// Shared floats of a 3D walk's tensor-copy barriers (`crate::tile_map`): one a slot of
/// its `ring` and the [`WALK_BARRIER_GAP`] where the family's radius takes tensor copies,
/// else none (the walk's layout then is that of threads' staging alone).
#[inline]
pub const fn walk_barriers(tile_map: bool, ring: u32) -> u32 {
    if tile_map {
        ring * crate::tile_map::BARRIER_FLOATS + WALK_BARRIER_GAP
    } else {
        0
    }
}

/// Calls `$m! { $(#[doc] module => Variant,)* }` with every kernel family: the one list of
/// them. A family's module name is its name everywhere (device file, PTX entry, host
/// `Variant::name`, test and bench ids); the second name is its host `Variant`.
#[macro_export]
macro_rules! with_families {
    ($m:ident) => {
        $m! {
            /// 1D, one thread per output, mask by pointer (textbook Fig. 7.6).
            conv1d_basic => Conv1dBasic,
            /// 1D, mask in `__constant__` memory (Fig. 7.8).
            conv1d_const => Conv1dConst,
            /// 1D, input tile plus left/right halo cells in shared memory (Fig. 7.11).
            conv1d_tiled => Conv1dTiled,
            /// 1D, only internal cells in shared memory, halos read through the cache (Fig. 7.13).
            conv1d_tiled_cached => Conv1dTiledCached,
            /// 1D, fastest: compile-time radius, several outputs per thread from a register window.
            conv1d_fast => Conv1dFast,
            /// 2D, one thread per output, mask from global memory (Fig. 7.7).
            conv2d_basic => Conv2dBasic,
            /// 2D, mask in `__constant__` memory (Fig. 7.9).
            conv2d_const => Conv2dConst,
            /// 2D, block = input tile (32x32), output tile 32-2r: edge threads only load (Fig. 7.12).
            conv2d_tiled_in => Conv2dTiledIn,
            /// 2D, block = output tile (32x32), halo cells read through the cache (Fig. 7.15).
            conv2d_tiled_cached => Conv2dTiledCached,
            /// 2D, fastest: compile-time radius, register-blocked outputs from a shared tile.
            conv2d_fast => Conv2dFast,
            /// 2D rank-1 (separable) masks, one pass: row and column filters, the intermediate kept on chip.
            conv2d_separable => Conv2dSeparable,
            /// 3D, one thread per output, mask by pointer.
            conv3d_basic => Conv3dBasic,
            /// 3D, mask in the `__constant__` symbol `MASK_3D`.
            conv3d_const => Conv3dConst,
            /// 3D, block = 8x8x8 input tile, edge threads only load (the lecture's MP-4 strategy).
            conv3d_tiled_in => Conv3dTiledIn,
            /// 3D, block = 8x8x8 output tile, halos read through the cache.
            conv3d_tiled_cached => Conv3dTiledCached,
            /// 3D, fastest: compile-time radius, planes streamed along depth through a shared ring, register-blocked outputs.
            conv3d_fast => Conv3dFast,
            /// 3D rank-1 (separable) masks, one pass: x and y filters on chip, z through register patches.
            conv3d_separable => Conv3dSeparable,
            /// Pitched multi-channel image (u8 or f32), the textbook's tiled kernel with a channel loop (7.15-7.17).
            image_tiled => ImageTiled,
            /// Pitched multi-channel image (u8 or f32), fastest: radius and channel count compiled in, every mode.
            image_fast => ImageFast,
            /// Pitched f32 image, conv2d_fast's register patches over interleaved channels: radius and channel count compiled in, every mode.
            image_patches => ImagePatches,
            /// Pitched u8 image on the tensor cores: fp16 Toeplitz products with split taps, every mode.
            image_mma => ImageMma,
        }
    };
}

macro_rules! declare_families {
    ($($(#[$doc:meta])* $module:ident => $variant:ident,)*) => {
        $(pub mod $module;)*
        /// Every family's row, in the list's order.
        pub const ALL: &[&Family] = &[$(&$module::FAMILY),*];
        // Each row carries its module's name: the name is written once, as the module.
        const _: () = {
            $(assert!(str_eq($module::FAMILY.name, stringify!($module)), "FAMILY.name must be its module's name");)*
        };
    };
}
with_families!(declare_families);

/// The family named `name`.
#[inline]
pub fn by_name(name: &str) -> Option<&'static Family> {
    ALL.iter().copied().find(|f| f.name == name)
}

/// Every PTX entry the module must have, as the builder checks it: every entry of every
/// family, and the FMA probe.
pub fn expected_entries() -> impl Iterator<Item = EntryName> {
    ALL.iter()
        .flat_map(|f| f.entries())
        .map(EntryName::Family)
        .chain(core::iter::once(EntryName::Probe(crate::args::FMA_PROBE_ENTRY)))
}

/// An expected PTX entry and the parameter list it takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryName {
    /// An entry of a convolution family.
    Family(crate::Entry),
    /// A probe kernel.
    Probe(&'static str),
}

impl EntryName {
    /// The argument struct the entry takes.
    #[inline]
    pub fn params(&self) -> crate::ParamList {
        match self {
            EntryName::Family(e) => e.family.params,
            EntryName::Probe(_) => crate::ParamList::FmaProbe,
        }
    }
}

impl core::fmt::Display for EntryName {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            EntryName::Family(e) => e.fmt(f),
            EntryName::Probe(p) => f.write_str(p),
        }
    }
}
