//! The kernel variants, named as on the device side: `Variant::Conv1dTiled` launches the
//! PTX entry `conv1d_tiled`, is benchmarked as `conv1d_tiled` and tested under that name.
use crate::error::{Error, Result};
use ptx_builder::{MASK_1D, MASK_2D};

/// Radii with a compiled `conv1d_fast_r{R}` entry (one entry point per radius).
pub const FAST_1D_RADII: std::ops::RangeInclusive<usize> = 0..=16;
/// Radii with a compiled `conv2d_fast_r{R}` entry.
pub const FAST_2D_RADII: std::ops::RangeInclusive<usize> = 0..=8;
/// Radii with compiled compile-time-radius entries `conv2d_{basic,const,tiled_in,tiled_cached}_r{R}`
/// (the CUDA C++ twins' `template <int R>`, MAXR = 8); other radii use the run-time entry.
pub const TEXTBOOK_2D_RADII: std::ops::RangeInclusive<usize> = 0..=8;

/// Which kernel runs a convolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Pick the fastest kernel for the shape and radius (see [`Variant::resolve`]).
    Auto,
    /// 1D, one thread per output, mask read from global memory (textbook Fig. 7.6).
    Conv1dBasic,
    /// 1D, mask in `__constant__` memory (Fig. 7.8).
    Conv1dConst,
    /// 1D, input tile plus left/right halo cells in shared memory (Fig. 7.11).
    Conv1dTiled,
    /// 1D, only internal cells in shared memory, halos read through the cache (Fig. 7.13).
    Conv1dTiledCached,
    /// 1D, fastest: compile-time radius, several outputs per thread from a register window.
    Conv1dFast,
    /// 2D, one thread per output, mask from global memory.
    Conv2dBasic,
    /// 2D, mask in `__constant__` memory.
    Conv2dConst,
    /// 2D, block = input tile (32x32), output tile 32-2r: edge threads only load.
    Conv2dTiledIn,
    /// 2D, block = output tile (32x32), halo cells read through the cache.
    Conv2dTiledCached,
    /// 2D, fastest: compile-time radius, register-blocked outputs from a shared tile.
    Conv2dFast,
}

impl Variant {
    /// Every concrete 1D variant.
    pub const ALL_1D: [Variant; 5] = [
        Variant::Conv1dBasic,
        Variant::Conv1dConst,
        Variant::Conv1dTiled,
        Variant::Conv1dTiledCached,
        Variant::Conv1dFast,
    ];
    /// Every concrete 2D variant.
    pub const ALL_2D: [Variant; 5] = [
        Variant::Conv2dBasic,
        Variant::Conv2dConst,
        Variant::Conv2dTiledIn,
        Variant::Conv2dTiledCached,
        Variant::Conv2dFast,
    ];

    /// The snake_case name shared by the PTX entry, the bench id and the tests.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Auto => "auto",
            Variant::Conv1dBasic => "conv1d_basic",
            Variant::Conv1dConst => "conv1d_const",
            Variant::Conv1dTiled => "conv1d_tiled",
            Variant::Conv1dTiledCached => "conv1d_tiled_cached",
            Variant::Conv1dFast => "conv1d_fast",
            Variant::Conv2dBasic => "conv2d_basic",
            Variant::Conv2dConst => "conv2d_const",
            Variant::Conv2dTiledIn => "conv2d_tiled_in",
            Variant::Conv2dTiledCached => "conv2d_tiled_cached",
            Variant::Conv2dFast => "conv2d_fast",
        }
    }

    /// Parses [`Variant::name`] back.
    pub fn from_name(s: &str) -> Option<Variant> {
        std::iter::once(Variant::Auto)
            .chain(Self::ALL_1D)
            .chain(Self::ALL_2D)
            .find(|v| v.name() == s)
    }

    /// The PTX entry point for this variant at `radius` (fast variants have one per radius;
    /// the 2D textbook variants one per radius in [`TEXTBOOK_2D_RADII`], else the run-time one).
    pub fn entry(self, radius: usize) -> String {
        match self {
            Variant::Conv1dFast | Variant::Conv2dFast => format!("{}_r{radius}", self.name()),
            v if v.has_radius_entries() && TEXTBOOK_2D_RADII.contains(&radius) => {
                format!("{}_r{radius}", v.name())
            }
            v => v.name().to_string(),
        }
    }

    /// Whether [`Variant::entry`]`(radius)` of a textbook variant takes the radius as an
    /// argument (the run-time-radius entries) or has it compiled in (the `_r{R}` ones).
    pub fn entry_takes_radius(self, radius: usize) -> bool {
        !self.is_fast() && !(self.has_radius_entries() && TEXTBOOK_2D_RADII.contains(&radius))
    }

    /// Textbook variants compiled once per radius of [`TEXTBOOK_2D_RADII`] besides their
    /// run-time-radius entry.
    fn has_radius_entries(self) -> bool {
        matches!(
            self,
            Variant::Conv2dBasic | Variant::Conv2dConst | Variant::Conv2dTiledIn | Variant::Conv2dTiledCached
        )
    }

    /// Every PTX entry point the host may launch: what `ptx_builder::check` expects.
    pub fn all_entries() -> Vec<String> {
        let textbook = Self::ALL_1D.iter().chain(Self::ALL_2D.iter()).filter(|v| !v.is_fast());
        let mut e: Vec<String> = textbook.clone().map(|v| v.name().to_string()).collect();
        for v in textbook.filter(|v| v.has_radius_entries()) {
            e.extend(TEXTBOOK_2D_RADII.map(|r| v.entry(r)));
        }
        e.extend(FAST_1D_RADII.map(|r| Variant::Conv1dFast.entry(r)));
        e.extend(FAST_2D_RADII.map(|r| Variant::Conv2dFast.entry(r)));
        e
    }

    fn is_fast(self) -> bool {
        matches!(self, Variant::Conv1dFast | Variant::Conv2dFast)
    }

    /// 1 or 2 (0 for `Auto`, which fits either).
    pub fn dim(self) -> usize {
        match self {
            Variant::Auto => 0,
            v if Self::ALL_1D.contains(&v) => 1,
            _ => 2,
        }
    }

    /// The largest radius this variant supports, and what sets that limit.
    pub fn max_radius(self) -> (usize, &'static str) {
        // Global-memory masks: (2r+1)^d taps must index with 32 bits.
        const GLOBAL_1D: usize = (i32::MAX as usize - 1) / 2;
        match self {
            Variant::Auto => (GLOBAL_1D, "the basic kernel's 32-bit indexing"),
            Variant::Conv1dBasic => (GLOBAL_1D, "32-bit indexing of the mask"),
            Variant::Conv1dConst | Variant::Conv1dTiled | Variant::Conv1dTiledCached => {
                ((MASK_1D.1 - 1) / 2, "the MASK_1D __constant__ symbol")
            }
            Variant::Conv1dFast => (*FAST_1D_RADII.end(), "the radii compiled as fast entry points"),
            Variant::Conv2dBasic => (23_169, "32-bit indexing of the mask"),
            Variant::Conv2dConst | Variant::Conv2dTiledCached => (
                ((MASK_2D.1 as f64).sqrt() as usize - 1) / 2,
                "the MASK_2D __constant__ symbol",
            ),
            // Output tile is 32-2r; r = 15 leaves 2 outputs per 32x32 input tile.
            Variant::Conv2dTiledIn => (15, "the 32x32 input tile in shared memory"),
            Variant::Conv2dFast => (*FAST_2D_RADII.end(), "the radii compiled as fast entry points"),
        }
    }

    /// The concrete variant for a `dim`-D call with this radius: `Auto` becomes the fastest
    /// kernel that supports the radius; other variants are checked and returned as is.
    pub fn resolve(self, dim: usize, radius: usize) -> Result<Variant> {
        let v = match self {
            Variant::Auto => match dim {
                1 if FAST_1D_RADII.contains(&radius) => Variant::Conv1dFast,
                1 if radius <= Variant::Conv1dTiled.max_radius().0 => Variant::Conv1dTiled,
                1 => Variant::Conv1dBasic,
                _ if FAST_2D_RADII.contains(&radius) => Variant::Conv2dFast,
                // Past the fast radii, the textbook kernels in their measured order at r = 4
                // on the H200: tiled_in < const < basic < tiled_cached (BENCHMARKS.md).
                _ if radius <= Variant::Conv2dTiledIn.max_radius().0 => Variant::Conv2dTiledIn,
                _ if radius <= Variant::Conv2dConst.max_radius().0 => Variant::Conv2dConst,
                _ => Variant::Conv2dBasic,
            },
            v => v,
        };
        if v.dim() != dim {
            return Err(Error::WrongDimension { variant: self, dim });
        }
        let (max, why) = v.max_radius();
        if radius > max {
            return Err(Error::MaskTooLarge {
                variant: v,
                radius,
                max,
                why,
            });
        }
        Ok(v)
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for v in Variant::ALL_1D.into_iter().chain(Variant::ALL_2D) {
            assert_eq!(Variant::from_name(v.name()), Some(v));
        }
    }

    #[test]
    fn resolve_checks_dimension_and_radius() {
        assert!(matches!(
            Variant::Conv2dConst.resolve(1, 1),
            Err(Error::WrongDimension { .. })
        ));
        assert!(matches!(
            Variant::Conv2dTiledIn.resolve(2, 16),
            Err(Error::MaskTooLarge { max: 15, .. })
        ));
        assert_eq!(Variant::Conv2dConst.max_radius().0, 31);
        assert_eq!(Variant::Auto.resolve(1, 2).unwrap(), Variant::Conv1dFast);
        assert_eq!(Variant::Auto.resolve(2, 12).unwrap(), Variant::Conv2dTiledIn);
        assert_eq!(Variant::Auto.resolve(2, 20).unwrap(), Variant::Conv2dConst);
        assert_eq!(Variant::Auto.resolve(2, 40).unwrap(), Variant::Conv2dBasic);
    }

    #[test]
    fn textbook_2d_entries_per_radius() {
        assert_eq!(Variant::Conv2dConst.entry(3), "conv2d_const_r3");
        assert!(!Variant::Conv2dConst.entry_takes_radius(3));
        assert_eq!(Variant::Conv2dTiledIn.entry(12), "conv2d_tiled_in");
        assert!(Variant::Conv2dTiledIn.entry_takes_radius(12));
        assert_eq!(Variant::Conv2dBasic.entry(0), "conv2d_basic_r0");
        assert_eq!(Variant::Conv1dTiled.entry(3), "conv1d_tiled");
        assert!(Variant::Conv1dTiled.entry_takes_radius(3));
        let all = Variant::all_entries();
        for e in [
            "conv2d_basic",
            "conv2d_tiled_cached",
            "conv2d_tiled_cached_r8",
            "conv2d_basic_r1",
            "conv1d_fast_r16",
        ] {
            assert!(all.iter().any(|x| x == e), "{e}");
        }
        assert!(!all.iter().any(|x| x == "conv2d_const_r9"));
        let mut dedup = all.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), all.len());
    }
}
