//! One row of the kernel-family table: everything the host, the builder and the tests
//! need to know about a family, with the limits derived from the resources that set them.
use crate::args::ParamList;
use crate::masks::ConstSymbol;
use crate::shape::{LaunchShape, Problem, ShapeError};

/// Where a family reads its mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaskLoc {
    /// A device buffer, passed as [`crate::ConvArgs::mask`] (the `*_basic` kernels).
    Global,
    /// A `__constant__` symbol the host fills before the launch.
    Const(ConstSymbol),
    /// `image_mma`'s tensor-core B table, which the host builds from the mask
    /// (`families::image_mma::entry_taps`: each tap split into fp16 parts, placed per
    /// lane) into a device buffer passed as [`crate::ConvArgs::mask`]: the blocks copy
    /// it instead of each building it from the taps.
    MmaTable,
}

/// How the radius reaches a family's kernel, which fixes its PTX entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Radii {
    /// One entry, named as the family; the radius is a run-time argument.
    Runtime,
    /// Only compile-time-radius entries `<name>_r0 ..= <name>_r<max>`. A mask whose
    /// radii differ between axes runs on the entry of its largest radius, zero-padded.
    Compiled {
        /// The largest compiled radius.
        max: u32,
    },
    /// Both: `<name>_r<R>` for masks of radius `R <= max` on every axis (the CUDA C++
    /// twins' `template <int R>`), the run-time entry for any other mask.
    Both {
        /// The largest compiled radius.
        max: u32,
    },
}

/// Which ghost-cell policies a family implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Modes {
    /// Only zero, the textbook's (the others are refused with a typed error).
    ZeroOnly,
    /// Every [`crate::Mode`].
    All,
}

/// The pixel types an image family filters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pixels {
    /// u8 and f32 (and every array family, which takes no images).
    Both,
    /// u8 only (`image_mma`: fp16 holds u8 pixels exactly, not f32).
    U8,
    /// f32 only (`image_patches`: its windows are staged as they are, with 16-byte copies).
    F32,
}

/// A kernel family: one device file, one row of the table.
#[derive(Clone, Copy, Debug)]
pub struct Family {
    /// Shared by the device file, the PTX entries, the host `Variant`, tests and benches.
    pub name: &'static str,
    /// 1, 2 or 3.
    pub dim: usize,
    /// Where the mask lives.
    pub mask: MaskLoc,
    /// How the radius reaches the kernel.
    pub radii: Radii,
    /// The argument struct its entries take.
    pub params: ParamList,
    /// The largest radius along any axis its tiles allow, and why (`u32::MAX` where the
    /// tiles set no limit).
    pub tile_limit: (u32, &'static str),
    /// Ghost-cell policies it implements.
    pub modes: Modes,
    /// It also takes arrays of one more axis whose mask has length 1 along it: each
    /// slice along that outermost axis filtered on its own (a stack of images or of
    /// signals), in one launch.
    pub batch: bool,
    /// It filters pitched multi-channel images (u8 or f32, 1 to 4 interleaved channels,
    /// every channel with the same mask) rather than plain arrays.
    pub image: bool,
    /// `Some(max)`: one entry per channel count `1..=max`, compiled in (`<name>_c<C>_r<R>`);
    /// `None`: channels (if any) at run time.
    pub compiled_channels: Option<u32>,
    /// The pixel types of the images it filters (the others get a typed error).
    pub pixels: Pixels,
    /// It takes rank-1 masks as one 1D mask per axis (their taps in its mask storage one
    /// axis after the other, x first), not the full mask.
    pub separable: bool,
    /// Grid, block and shared memory for a problem.
    pub launch_shape: fn(&Problem) -> Result<LaunchShape, ShapeError>,
    /// One line for tables: what it is (textbook figure).
    pub summary: &'static str,
}

/// A PTX entry point of a family: the run-time-radius one, or `_r<R>` (`_c<C>_r<R>`
/// where the channel count is compiled in too).
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The family.
    pub family: &'static Family,
    /// `Some(R)`: the entry with radius `R` compiled in.
    pub radius: Option<u32>,
    /// `Some(C)`: the entry with `C` channels compiled in.
    pub channels: Option<u32>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.family.name == other.family.name && self.radius == other.radius && self.channels == other.channels
    }
}
impl Eq for Entry {}
impl core::hash::Hash for Entry {
    fn hash<H: core::hash::Hasher>(&self, h: &mut H) {
        self.family.name.hash(h);
        self.radius.hash(h);
        self.channels.hash(h);
    }
}

/// The driver JIT's default optimization level (`CU_JIT_OPTIMIZATION_LEVEL`: 0 to 4; 4 is
/// ptxas's `-O3`).
pub const DEFAULT_JIT_LEVEL: u32 = 4;

impl Entry {
    /// The optimization level the driver's JIT builds this entry's baked modules at
    /// ([`Entry::baked_taps`]): [`DEFAULT_JIT_LEVEL`] but where a family's geometry says
    /// otherwise (`conv3d_fast::baked_jit_level`).
    pub fn baked_jit_level(&self) -> u32 {
        match (self.family.name, self.radius) {
            ("conv3d_fast", Some(r)) => crate::families::conv3d_fast::baked_jit_level(r),
            _ => DEFAULT_JIT_LEVEL,
        }
    }

    /// The `.const` symbol whose taps the host bakes into this entry's code, immediates in
    /// place of tap loads (`ptx_builder::bake`): the fast families' compiled-radius
    /// entries, whose every tap index is a constant. The textbook's entries keep reading
    /// the symbol.
    #[inline]
    pub const fn baked_taps(&self) -> Option<ConstSymbol> {
        match (self.family.mask, self.family.radii, self.radius) {
            (MaskLoc::Const(sym), Radii::Compiled { .. }, Some(_)) => Some(sym),
            _ => None,
        }
    }
}

impl core::fmt::Display for Entry {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.family.name)?;
        if let Some(c) = self.channels {
            write!(f, "_c{c}")?;
        }
        match self.radius {
            Some(r) => write!(f, "_r{r}"),
            None => Ok(()),
        }
    }
}

/// Why a mask is beyond a family: the largest radius it takes on every axis, and the
/// resource that sets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// Largest radius (same on every axis).
    pub max: u32,
    /// What sets it.
    pub why: &'static str,
}

/// Taps a mask indexed with 32 bits may have (the `*_basic` kernels' global masks).
const INDEXED_TAPS: u64 = i32::MAX as u64;

impl Family {
    /// Taps the mask storage holds.
    #[inline]
    pub const fn mask_capacity(&self) -> (u64, &'static str) {
        match self.mask {
            MaskLoc::Global | MaskLoc::MmaTable => (INDEXED_TAPS, "32-bit indexing of the mask"),
            MaskLoc::Const(sym) => (sym.len as u64, sym.why),
        }
    }

    /// The largest radius, the same on every axis, this family supports, and what sets
    /// it: the smallest of the mask storage, the compiled radii and the tiles.
    #[inline]
    pub const fn max_radius(&self) -> Limit {
        let (cap, why) = self.mask_capacity();
        // Largest r with (2r+1)^dim <= cap (a separable family stores dim·(2r+1) taps), by
        // bisection (cap reaches 2^31).
        let (mut lo, mut hi): (u64, u64) = (0, cap);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            let taps = if self.separable {
                self.dim as u64 * (2 * mid + 1)
            } else {
                pow(2 * mid + 1, self.dim)
            };
            if taps <= cap {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        let mut limit = Limit { max: lo as u32, why };
        if let Radii::Compiled { max } = self.radii {
            if max < limit.max {
                limit = Limit {
                    max,
                    why: "the radii compiled as fast entry points",
                };
            }
        }
        if self.tile_limit.0 < limit.max {
            limit = Limit {
                max: self.tile_limit.0,
                why: self.tile_limit.1,
            };
        }
        limit
    }

    /// Checks a mask of radius `radius` (per axis; axes past the dimension 0) against
    /// every limit: each axis within the compiled radii and the tiles, and all taps
    /// within the mask storage (rectangular masks may be long on one axis).
    #[inline]
    pub const fn check_radius(&self, radius: [u32; 3]) -> Result<(), Limit> {
        let (cap, why) = self.mask_capacity();
        let mut taps: u64 = 1;
        let mut axis = 0;
        while axis < self.dim {
            let r = radius[axis];
            if r > self.tile_limit.0 {
                return Err(Limit {
                    max: self.tile_limit.0,
                    why: self.tile_limit.1,
                });
            }
            if let Radii::Compiled { max } = self.radii {
                if r > max {
                    return Err(self.max_radius());
                }
            }
            taps = if self.separable {
                taps.saturating_add(2 * r as u64 + 1)
            } else {
                taps.saturating_mul(2 * r as u64 + 1)
            };
            axis += 1;
        }
        if self.separable {
            taps -= 1; // the sum started from 1
        }
        if taps > cap {
            return Err(Limit {
                max: self.max_radius().max,
                why,
            });
        }
        Ok(())
    }

    /// The entry that runs a mask of radius `radius` (checked by [`Family::check_radius`])
    /// on a plain array (one channel).
    #[inline]
    pub const fn entry(&'static self, radius: [u32; 3]) -> Entry {
        self.entry_for(radius, 1)
    }

    /// The entry that runs a mask of radius `radius` on elements of `channels`
    /// interleaved channels.
    #[inline]
    pub const fn entry_for(&'static self, radius: [u32; 3], channels: u32) -> Entry {
        let largest = {
            let mut m = 0;
            let mut axis = 0;
            while axis < self.dim {
                if radius[axis] > m {
                    m = radius[axis];
                }
                axis += 1;
            }
            m
        };
        let same = {
            let mut s = true;
            let mut axis = 0;
            while axis < self.dim {
                s &= radius[axis] == largest;
                axis += 1;
            }
            s
        };
        let compiled = match self.radii {
            Radii::Runtime => None,
            Radii::Compiled { .. } => Some(largest),
            Radii::Both { max } if same && largest <= max => Some(largest),
            Radii::Both { .. } => None,
        };
        Entry {
            family: self,
            radius: compiled,
            channels: match self.compiled_channels {
                Some(_) => Some(channels),
                None => None,
            },
        }
    }

    /// Whether a mask of radius `radius` runs zero-padded to the largest radius (a
    /// compiled-radius entry for a mask whose radii differ between axes).
    #[inline]
    pub const fn pads_mask(&'static self, radius: [u32; 3]) -> bool {
        match self.entry(radius).radius {
            None => false,
            Some(r) => {
                let mut axis = 0;
                let mut pads = false;
                while axis < self.dim {
                    pads |= radius[axis] != r;
                    axis += 1;
                }
                pads
            }
        }
    }

    /// Every PTX entry of the family.
    #[inline]
    pub fn entries(&'static self) -> impl Iterator<Item = Entry> {
        let (runtime, compiled) = match self.radii {
            Radii::Runtime => (true, None),
            Radii::Compiled { max } => (false, Some(max)),
            Radii::Both { max } => (true, Some(max)),
        };
        let channels: &[Option<u32>] = match self.compiled_channels {
            Some(max) => &[Some(1), Some(2), Some(3), Some(4)][..max as usize],
            None => &[None],
        };
        channels.iter().flat_map(move |&channels| {
            let radii = runtime
                .then_some(None)
                .into_iter()
                .chain(compiled.into_iter().flat_map(|max| (0..=max).map(Some)));
            radii.map(move |radius| Entry {
                family: self,
                radius,
                channels,
            })
        })
    }

    /// Checks an element's channel count against the family.
    #[inline]
    pub const fn check_channels(&self, channels: u32) -> bool {
        match self.compiled_channels {
            Some(max) => channels >= 1 && channels <= max,
            None => channels == 1 || self.image,
        }
    }

    /// Whether it implements every ghost-cell policy.
    #[inline]
    pub const fn all_modes(&self) -> bool {
        matches!(self.modes, Modes::All)
    }
}

#[inline]
const fn pow(base: u64, exp: usize) -> u64 {
    let mut v: u64 = 1;
    let mut i = 0;
    while i < exp {
        v = v.saturating_mul(base);
        i += 1;
    }
    v
}

/// `a == b` in a `const` context (the table checks its names at compile time).
#[inline]
pub const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::DEFAULT_JIT_LEVEL;
    use crate::families;
    use std::string::ToString;

    /// The table's limits, derived from the storage and tiles that set them.
    #[test]
    fn limits_follow_from_storage_tiles_and_compiled_radii() {
        let max = |name| families::by_name(name).unwrap().max_radius();
        assert_eq!(max("conv1d_basic").max, (i32::MAX as u32 - 1) / 2);
        assert_eq!(max("conv2d_basic").max, 23_169);
        assert_eq!(max("conv3d_basic").max, 644);
        assert_eq!(max("conv1d_const").max, 2047);
        assert_eq!(max("conv2d_const").max, 31);
        assert_eq!(max("conv3d_const").max, 7);
        assert_eq!(max("conv2d_tiled_in").max, 15);
        assert_eq!(max("conv3d_tiled_in").max, 3);
        assert_eq!(max("conv2d_fast").why, "the radii compiled as fast entry points");
        assert!(max("conv2d_const").why.contains("MASK_2D"));
        assert!(max("conv3d_tiled_in").why.contains("8x8x8"));
    }

    #[test]
    fn baked_modules_take_the_jit_level_their_family_gives() {
        let c3 = families::by_name("conv3d_fast").unwrap();
        assert_eq!(c3.entry([3, 3, 3]).baked_jit_level(), 1);
        assert_eq!(c3.entry([2, 2, 2]).baked_jit_level(), 1);
        assert_eq!(c3.entry([1, 1, 1]).baked_jit_level(), DEFAULT_JIT_LEVEL);
        let c2 = families::by_name("conv2d_fast").unwrap();
        assert_eq!(c2.entry([4, 4, 0]).baked_jit_level(), DEFAULT_JIT_LEVEL);
        for e in families::ALL.iter().flat_map(|f| f.entries()) {
            assert!(e.baked_jit_level() <= 4, "{e}: the driver takes levels 0 to 4");
        }
    }

    #[test]
    fn entries_name_the_compiled_radius_or_the_run_time_one() {
        let f = families::by_name("conv2d_const").unwrap();
        assert_eq!(f.entry([3, 3, 0]).to_string(), "conv2d_const_r3");
        assert_eq!(
            f.entry([3, 1, 0]).to_string(),
            "conv2d_const",
            "rectangular: run-time radii"
        );
        assert_eq!(
            f.entry([9, 9, 0]).to_string(),
            "conv2d_const",
            "past the compiled radii"
        );
        let fast = families::by_name("conv2d_fast").unwrap();
        assert_eq!(
            fast.entry([3, 1, 0]).to_string(),
            "conv2d_fast_r3",
            "padded to the largest"
        );
        assert!(fast.pads_mask([3, 1, 0]) && !fast.pads_mask([2, 2, 0]));
        assert_eq!(f.entries().count(), 1 + 9);
        assert_eq!(fast.entries().count(), 9);
    }
}
