//! The kernel variants, one per family of the table (`layout::families`), generated from
//! the table's one list of them: `Variant::Conv1dTiled` launches the PTX entries of the
//! family `conv1d_tiled`, is benchmarked as `conv1d_tiled` and tested under that name.
//! Names, dimensions, limits and entries all come from the family's row.
use crate::error::{Error, Result};
use crate::Mode;
use layout::Family;

macro_rules! define_variant {
    ($($(#[$doc:meta])* $module:ident => $variant:ident,)*) => {
        /// Which kernel runs a convolution: `Auto`, or one kernel family.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
        #[non_exhaustive]
        pub enum Variant {
            /// Pick the fastest kernel for the shape, mask and ghost-cell mode (see
            /// [`Variant::resolve_for`]).
            #[default]
            Auto,
            $($(#[$doc])* $variant,)*
        }

        impl Variant {
            /// Every concrete variant (every kernel family), in the table's order.
            pub const ALL: &'static [Variant] = &[$(Variant::$variant),*];

            /// The family's row of the table (`None` for `Auto`).
            pub const fn family(self) -> Option<&'static Family> {
                match self {
                    Variant::Auto => None,
                    $(Variant::$variant => Some(&layout::families::$module::FAMILY),)*
                }
            }
        }
    };
}
layout::with_families!(define_variant);

/// Whether `v` is a family for plain arrays of dimension `dim` (dim 0: for images).
const fn is_of(v: Variant, dim: usize) -> bool {
    match v.family() {
        Some(f) if dim == 0 => f.image,
        Some(f) => f.dim == dim && !f.image,
        None => false,
    }
}

/// Concrete variants of dimension `dim` (a `const` so the `ALL_nD` arrays are derived).
const fn count(dim: usize) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < Variant::ALL.len() {
        if is_of(Variant::ALL[i], dim) {
            n += 1;
        }
        i += 1;
    }
    n
}

const fn of_dim<const N: usize>(dim: usize) -> [Variant; N] {
    let mut out = [Variant::Auto; N];
    let (mut i, mut k) = (0, 0);
    while i < Variant::ALL.len() {
        if is_of(Variant::ALL[i], dim) {
            out[k] = Variant::ALL[i];
            k += 1;
        }
        i += 1;
    }
    out
}

/// The order `Auto` tries the image families in: the fast kernel where its compiled
/// radii and channels reach, else the textbook one.
const IMAGE_AUTO_ORDER: &[Variant] = &[Variant::ImageFast, Variant::ImageTiled];

/// The order `Auto` tries the families in, per dimension: the first that supports the
/// mask and the ghost-cell mode runs. Measured on the H200 (BENCHMARKS.md): the fast
/// kernels beat every other variant wherever they apply; past their radii the textbook
/// kernels follow in their measured order.
const AUTO_ORDER: [&[Variant]; 3] = [
    // 1D at r = 16: tiled is the fastest textbook kernel.
    &[Variant::Conv1dFast, Variant::Conv1dTiled, Variant::Conv1dBasic],
    // A mask one row tall is a batch of 1D filters: conv1d_fast on every row, exact, where
    // conv2d_fast would pad it square. A rank-1 mask runs separable, one pass. 2D at
    // r = 4: tiled_in < const < basic < tiled_cached.
    &[
        Variant::Conv1dFast,
        Variant::Conv2dSeparable,
        Variant::Conv2dFast,
        Variant::Conv2dTiledIn,
        Variant::Conv2dConst,
        Variant::Conv2dBasic,
    ],
    // A mask one plane deep is a batch of 2D filters: conv2d_fast on every plane. A
    // rank-1 mask runs separable, one pass. 3D at r = 1..3: const < basic < tiled_in <
    // tiled_cached.
    &[
        Variant::Conv2dFast,
        Variant::Conv3dSeparable,
        Variant::Conv3dFast,
        Variant::Conv3dConst,
        Variant::Conv3dBasic,
    ],
];

/// The smallest radius at which `Auto` runs a rank-1 mask on a separable family, per
/// dimension. 2D: at r = 1 conv2d_fast runs near the copy (H200, 8192²: 137 us, 1.05x);
/// from r = 2 the separable family's short chunks make it the faster (145 vs 154 us at
/// r = 2, 146 vs 250 at r = 4, BENCHMARKS.md). 3D: `3(2r+1)` FMAs against `(2r+1)^3`
/// win from r = 1 (BENCHMARKS.md).
const fn separable_from_radius(dim: usize) -> u32 {
    if dim >= 3 {
        1
    } else {
        2
    }
}

/// Whether `f` runs a `dim`-D array under a mask of radius `radius` (x first): its own
/// dimension, or one axis more as a batch when the mask is one element deep along it.
fn takes(f: &Family, dim: usize, radius: [u32; 3]) -> bool {
    !f.image && (f.dim == dim || (f.batch && f.dim + 1 == dim && radius[dim - 1] == 0))
}

impl Variant {
    /// Every concrete 1D variant (plain arrays).
    pub const ALL_1D: [Variant; count(1)] = of_dim::<{ count(1) }>(1);
    /// Every concrete 2D variant (plain arrays).
    pub const ALL_2D: [Variant; count(2)] = of_dim::<{ count(2) }>(2);
    /// Every concrete 3D variant (plain arrays).
    pub const ALL_3D: [Variant; count(3)] = of_dim::<{ count(3) }>(3);
    /// Every variant for pitched multi-channel images.
    pub const IMAGES: [Variant; count(0)] = of_dim::<{ count(0) }>(0);

    /// Every concrete variant for plain arrays of dimension `dim` (1, 2 or 3; none for
    /// others).
    pub fn all_of_dim(dim: usize) -> impl Iterator<Item = Variant> {
        Variant::ALL.iter().copied().filter(move |v| dim > 0 && is_of(*v, dim))
    }

    /// Whether the variant filters pitched multi-channel images (else plain arrays).
    pub fn is_image(self) -> bool {
        self.family().is_some_and(|f| f.image)
    }

    /// The snake_case name shared by the device file, the PTX entries, the bench ids and
    /// the tests (`auto` for `Auto`).
    pub const fn name(self) -> &'static str {
        match self.family() {
            Some(f) => f.name,
            None => "auto",
        }
    }

    /// Parses [`Variant::name`] back.
    pub fn from_name(s: &str) -> Option<Variant> {
        std::iter::once(Variant::Auto)
            .chain(Variant::ALL.iter().copied())
            .find(|v| v.name() == s)
    }

    /// 1, 2 or 3 (0 for `Auto`, which fits every dimension).
    pub const fn dim(self) -> usize {
        match self.family() {
            Some(f) => f.dim,
            None => 0,
        }
    }

    /// The largest radius (the same on every axis) this variant supports, and what sets
    /// that limit: the mask storage, the compiled radii or the tiles (`layout::Family`).
    pub fn max_radius(self) -> (usize, &'static str) {
        match self.family() {
            Some(f) => {
                let l = f.max_radius();
                (l.max as usize, l.why)
            }
            None => (
                Variant::Conv1dBasic.max_radius().0,
                "the basic kernel's 32-bit indexing",
            ),
        }
    }

    /// Whether the variant implements every ghost-cell mode (else only zero).
    pub fn all_modes(self) -> bool {
        self.family().is_some_and(Family::all_modes)
    }

    /// Whether the variant filters images of `kind` pixels (its family's
    /// [`layout::Pixels`]; array variants take no images at all, see
    /// [`Variant::resolve_image`]).
    pub fn takes_pixels(self, kind: crate::PixelKind) -> bool {
        match self.family().map_or(layout::Pixels::Both, |f| f.pixels) {
            layout::Pixels::Both => true,
            layout::Pixels::U8 => kind == crate::PixelKind::U8,
            layout::Pixels::F32 => kind == crate::PixelKind::F32,
        }
    }

    /// The PTX entry this variant runs for a mask of radius `radius` on every axis.
    pub fn entry(self, radius: usize) -> Option<String> {
        let f = self.family()?;
        let r = radius as u32;
        Some(
            f.entry([r, if f.dim > 1 { r } else { 0 }, if f.dim > 2 { r } else { 0 }])
                .to_string(),
        )
    }

    /// Every PTX entry of every family (what the PTX must contain besides the probe),
    /// the run-time-radius entries `Auto` uses included.
    pub fn all_entries() -> Vec<String> {
        Variant::ALL
            .iter()
            .filter_map(|v| v.family())
            .flat_map(|f| f.entries())
            .map(|e| e.to_string())
            .collect()
    }

    /// [`Variant::resolve_for`] a mask of radius `radius` on every axis, ghost cells zero.
    pub fn resolve(self, dim: usize, radius: usize) -> Result<Variant> {
        let r = u32::try_from(radius).unwrap_or(u32::MAX);
        let mut radii = [0; 3];
        radii[..dim.min(3)].fill(r);
        self.resolve_for(dim, radii, Mode::Zero)
    }

    /// The concrete variant for a `dim`-D call with per-axis mask radii `radius` (x
    /// first) and ghost-cell `mode`. `Auto` becomes the first family of its measured
    /// order for `dim` that supports the mask and the mode; other variants are checked
    /// and returned as they are.
    pub fn resolve_for(self, dim: usize, radius: [u32; 3], mode: Mode) -> Result<Variant> {
        self.resolve_mask(dim, radius, false, mode)
    }

    /// [`Variant::resolve_for`] knowing whether the mask is a 2D or 3D mask of rank 1
    /// (which a separable family runs, one 1D filter per axis).
    pub fn resolve_mask(self, dim: usize, radius: [u32; 3], rank1: bool, mode: Mode) -> Result<Variant> {
        if !(1..=3).contains(&dim) {
            return Err(Error::UnsupportedDimension { ndim: dim });
        }
        let order = AUTO_ORDER[dim - 1];
        let largest = radius.iter().copied().max().unwrap_or(0);
        let fits = |v: &Variant| {
            let f = v.family().expect("concrete");
            takes(f, dim, radius)
                && (!f.separable || (rank1 && largest >= separable_from_radius(f.dim)))
                && f.check_radius(radius).is_ok()
                && (mode == Mode::Zero || f.all_modes())
        };
        let v = match self {
            Variant::Auto => match order.iter().copied().find(fits) {
                Some(v) => v,
                // Nothing fits: report against the most general kernel, which names the
                // limit the mask or the mode is beyond.
                None => *order.last().expect("non-empty"),
            },
            v => v,
        };
        let f = v.family().expect("concrete");
        if f.image {
            return Err(Error::OnlyForImages { variant: v });
        }
        if !takes(f, dim, radius) {
            return Err(Error::WrongDimension { variant: self, dim });
        }
        if f.separable && !rank1 {
            return Err(Error::NotSeparable { variant: v });
        }
        check_radius(v, radius)?;
        if mode != Mode::Zero && !f.all_modes() {
            return Err(Error::ModeUnsupported {
                variant: self,
                mode,
                why: if self == Variant::Auto {
                    "no kernel that implements it takes this mask; Auto's array calls pad the input on the host instead"
                } else {
                    "the textbook kernels keep the book's zero ghost cells; the fast kernels implement every mode"
                },
            });
        }
        Ok(v)
    }

    /// What an array call (`Gpu::correlate`, `Gpu::correlate_device`, ...) runs. As
    /// [`Variant::resolve_mask`], but `Auto` under a mode that no kernel implementing it
    /// takes the mask for (2D general masks past radius 8, 3D past 3, 1D past 16) pads
    /// the input on the host by the mask's radii under the mode and runs the zero-mode
    /// `Auto` kernel on it ([`crate::pad`]): `padded` is then true.
    pub fn resolve_call(self, dim: usize, radius: [u32; 3], rank1: bool, mode: Mode) -> Result<Resolved> {
        match self.resolve_mask(dim, radius, rank1, mode) {
            Ok(variant) => Ok(Resolved { variant, padded: false }),
            Err(Error::ModeUnsupported { .. }) if self == Variant::Auto => {
                let variant = Variant::Auto.resolve_mask(dim, radius, rank1, Mode::Zero)?;
                Ok(Resolved { variant, padded: true })
            }
            Err(e) => Err(e),
        }
    }
}

/// What [`Variant::resolve_call`] found an array call runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The kernel that runs.
    pub variant: Variant,
    /// Whether it runs on the input padded on the host by the mode (with zero ghost
    /// cells), the result cropped back.
    pub padded: bool,
}

impl Variant {
    /// What an image call on host arrays (`Gpu::correlate_image`) runs: for `Auto`,
    /// image_fast where it takes the mask, else the 2D array kernel `Auto` picks, run on
    /// every channel plane (conv2d_fast, conv2d_separable: every mode, and far faster
    /// than the textbook image_tiled; past their radii the planes padded on the host,
    /// [`Variant::resolve_call`]), else image_tiled; a named variant as it is.
    pub fn resolve_image_call(self, radius: [u32; 3], rank1: bool, channels: u32, mode: Mode) -> Result<Variant> {
        if self != Variant::Auto {
            return self.resolve_image(radius, channels, mode);
        }
        match Variant::ImageFast.resolve_image(radius, channels, mode) {
            Ok(v) => Ok(v),
            Err(Error::Channels { channels }) => Err(Error::Channels { channels }),
            Err(_) => Variant::Auto
                .resolve_call(2, radius, rank1, mode)
                .map(|run| run.variant)
                .or_else(|e| self.resolve_image(radius, channels, mode).map_err(|_| e)),
        }
    }

    /// The concrete variant for a pitched image of `channels` channels under a 2D mask of
    /// radii `radius` (x first) and ghost-cell `mode`: `Auto` becomes the first image
    /// family that supports all three; other variants are checked and returned.
    pub fn resolve_image(self, radius: [u32; 3], channels: u32, mode: Mode) -> Result<Variant> {
        let fits = |v: &Variant| {
            let f = v.family().expect("concrete");
            f.check_radius(radius).is_ok() && f.check_channels(channels) && (mode == Mode::Zero || f.all_modes())
        };
        let v = match self {
            Variant::Auto => IMAGE_AUTO_ORDER
                .iter()
                .copied()
                .find(fits)
                .unwrap_or(Variant::ImageTiled),
            v => v,
        };
        let f = v.family().expect("concrete");
        if !f.image {
            return Err(Error::NotForImages { variant: v });
        }
        check_radius(v, radius)?;
        if !f.check_channels(channels) {
            return Err(Error::Channels {
                channels: channels as usize,
            });
        }
        if mode != Mode::Zero && !f.all_modes() {
            return Err(Error::ModeUnsupported {
                variant: self,
                mode,
                why:
                    "image_tiled keeps the book's zero ghost cells; image_fast implements every mode for radii up to 4",
            });
        }
        Ok(v)
    }
}

/// `v`'s radius limit as the typed error that names it.
fn check_radius(v: Variant, radius: [u32; 3]) -> Result<()> {
    let f = v.family().expect("concrete");
    f.check_radius(radius).map_err(|limit| Error::MaskTooLarge {
        variant: v,
        radius: radius.iter().copied().max().unwrap_or(0) as usize,
        max: limit.max as usize,
        why: limit.why,
    })
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
    fn names_round_trip_and_follow_the_table() {
        for v in Variant::ALL {
            assert_eq!(Variant::from_name(v.name()), Some(*v));
            assert_eq!(layout::families::by_name(v.name()).map(|f| f.dim), Some(v.dim()));
        }
        assert_eq!(Variant::ALL.len(), layout::families::ALL.len());
        assert_eq!(
            Variant::ALL_1D.len() + Variant::ALL_2D.len() + Variant::ALL_3D.len() + Variant::IMAGES.len(),
            Variant::ALL.len()
        );
        assert!(Variant::ALL_3D.contains(&Variant::Conv3dTiledIn));
        assert_eq!(
            Variant::IMAGES,
            [
                Variant::ImageTiled,
                Variant::ImageFast,
                Variant::ImagePatches,
                Variant::ImageMma
            ]
        );
        assert!(!Variant::ALL_2D.contains(&Variant::ImageFast));
    }

    #[test]
    fn auto_order_lists_each_dimension_s_own_variants() {
        for (i, order) in AUTO_ORDER.iter().enumerate() {
            for v in *order {
                let f = v.family().unwrap();
                assert!(f.dim == i + 1 || (f.batch && f.dim == i), "{v} in the {}D order", i + 1);
            }
            // The last one takes any radius its storage allows: the fallback.
            assert!(matches!(
                order.last().unwrap().family().unwrap().mask,
                layout::MaskLoc::Global
            ));
        }
    }

    #[test]
    fn resolve_checks_dimension_radius_and_mode() {
        assert!(matches!(
            Variant::Conv2dConst.resolve(1, 1),
            Err(Error::WrongDimension { .. })
        ));
        assert!(matches!(
            Variant::Conv2dTiledIn.resolve(2, 16),
            Err(Error::MaskTooLarge { max: 15, .. })
        ));
        assert!(matches!(
            Variant::Conv3dTiledIn.resolve(3, 4),
            Err(Error::MaskTooLarge { max: 3, .. })
        ));
        assert_eq!(Variant::Conv3dConst.max_radius().0, 7);
        assert!(matches!(
            Variant::Auto.resolve(4, 1),
            Err(Error::UnsupportedDimension { ndim: 4 })
        ));
        assert!(matches!(
            Variant::Conv2dBasic.resolve_for(2, [1, 1, 0], Mode::Reflect),
            Err(Error::ModeUnsupported { .. })
        ));
        assert_eq!(Variant::Auto.resolve(3, 2).unwrap(), Variant::Conv3dFast);
    }

    #[test]
    fn rectangular_masks_are_checked_per_axis_and_by_taps() {
        // A 1x65 mask on MASK_2D: radius 32 > 31 on one axis, but only 65 taps.
        assert_eq!(
            Variant::Conv2dConst.resolve_for(2, [32, 0, 0], Mode::Zero).unwrap(),
            Variant::Conv2dConst
        );
        // 5x1001 = 5005 taps > 3969.
        assert!(Variant::Conv2dConst.resolve_for(2, [500, 2, 0], Mode::Zero).is_err());
        // The fast kernels take a rectangular mask up to their compiled radius.
        assert_eq!(
            Variant::Auto.resolve_for(2, [8, 1, 0], Mode::Zero).unwrap(),
            Variant::Conv2dFast
        );
        assert_eq!(
            Variant::Auto.resolve_for(2, [9, 1, 0], Mode::Zero).unwrap(),
            Variant::Conv2dTiledIn
        );
    }

    #[test]
    fn batches_run_on_the_kernels_of_one_axis_less() {
        // A (d, h, w) stack under a (1, 5, 5) mask: conv2d_fast on every plane.
        assert_eq!(
            Variant::Auto.resolve_for(3, [2, 2, 0], Mode::Zero).unwrap(),
            Variant::Conv2dFast
        );
        assert_eq!(
            Variant::Conv2dFast.resolve_for(3, [2, 2, 0], Mode::Reflect).unwrap(),
            Variant::Conv2dFast
        );
        assert!(matches!(
            Variant::Conv2dFast.resolve_for(3, [2, 2, 1], Mode::Zero),
            Err(Error::WrongDimension { .. })
        ));
        // A (h, w) image under a (1, 9) mask: conv1d_fast on every row.
        assert_eq!(
            Variant::Auto.resolve_for(2, [4, 0, 0], Mode::Zero).unwrap(),
            Variant::Conv1dFast
        );
        assert_eq!(
            Variant::Auto.resolve_for(2, [1, 2, 0], Mode::Zero).unwrap(),
            Variant::Conv2dFast
        );
        assert_eq!(
            Variant::Auto.resolve_for(2, [4, 1, 0], Mode::Zero).unwrap(),
            Variant::Conv2dFast
        );
        assert_eq!(
            Variant::Auto.resolve_for(3, [4, 4, 0], Mode::Zero).unwrap(),
            Variant::Conv2dFast
        );
        // The textbook kernels take only their own dimension.
        assert!(Variant::Conv2dConst.resolve_for(3, [1, 1, 0], Mode::Zero).is_err());
    }

    #[test]
    fn rank1_3d_masks_run_separable_from_radius_1_up_to_4() {
        let auto = |r: [u32; 3], rank1| Variant::Auto.resolve_mask(3, r, rank1, Mode::Zero).unwrap();
        assert_eq!(auto([1, 1, 1], true), Variant::Conv3dSeparable);
        assert_eq!(auto([4, 2, 1], true), Variant::Conv3dSeparable);
        assert_eq!(auto([1, 1, 1], false), Variant::Conv3dFast);
        // One plane deep: conv2d_fast on every plane; past radius 4: the general kernels.
        assert_eq!(auto([1, 1, 0], true), Variant::Conv2dFast);
        assert_eq!(auto([5, 1, 1], true), Variant::Conv3dConst);
        // Every mode.
        let reflect = Variant::Auto.resolve_mask(3, [2, 2, 2], true, Mode::Reflect);
        assert_eq!(reflect.unwrap(), Variant::Conv3dSeparable);
    }

    #[test]
    fn rank1_masks_run_separable_from_radius_2_up_to_32() {
        let auto = |r: u32, rank1| Variant::Auto.resolve_mask(2, [r, r, 0], rank1, Mode::Zero).unwrap();
        assert_eq!(auto(1, true), Variant::Conv2dFast);
        assert_eq!(auto(2, true), Variant::Conv2dSeparable);
        // 65 x 65: the separable family stores 2 x 65 taps, well within MASK_1D.
        assert_eq!(auto(32, true), Variant::Conv2dSeparable);
        // 67 x 67 = 4489 taps overflow MASK_2D (3969): only the basic kernel is left.
        assert_eq!(auto(33, true), Variant::Conv2dBasic);
        assert_eq!(auto(31, false), Variant::Conv2dConst);
        assert_eq!(auto(2, false), Variant::Conv2dFast);
        assert_eq!(auto(3, false), Variant::Conv2dFast);
        assert_eq!(auto(4, false), Variant::Conv2dFast);
        assert_eq!(auto(5, false), Variant::Conv2dFast);
        // Named, image_fast still takes only images.
        assert!(matches!(
            Variant::ImageFast.resolve_mask(2, [3, 3, 0], false, Mode::Zero),
            Err(Error::OnlyForImages { .. })
        ));
        assert_eq!(Variant::Conv2dSeparable.max_radius().0, 32);
        assert!(matches!(
            Variant::Conv2dSeparable.resolve_mask(2, [3, 3, 0], false, Mode::Zero),
            Err(Error::NotSeparable { .. })
        ));
    }

    #[test]
    fn array_calls_pad_where_no_kernel_implements_the_mode() {
        let host = |v: Variant, dim, r: u32, rank1, mode| {
            let mut radius = [0; 3];
            radius[..dim].fill(r);
            v.resolve_call(dim, radius, rank1, mode)
        };
        // (dimension, radius, rank 1, mode) under Auto: the kernel that runs, and whether
        // the input is padded on the host first.
        let cases = [
            ((2, 8, false, Mode::Reflect), Variant::Conv2dFast, false),
            ((2, 9, false, Mode::Reflect), Variant::Conv2dTiledIn, true),
            ((2, 40, true, Mode::Wrap), Variant::Conv2dBasic, true),
            ((1, 17, false, Mode::Nearest), Variant::Conv1dTiled, true),
            ((3, 4, false, Mode::Constant(1.0)), Variant::Conv3dConst, true),
            ((3, 4, true, Mode::Mirror), Variant::Conv3dSeparable, false),
            // Zero needs no padding.
            ((2, 9, false, Mode::Zero), Variant::Conv2dTiledIn, false),
        ];
        for ((dim, r, rank1, mode), variant, padded) in cases {
            assert_eq!(
                host(Variant::Auto, dim, r, rank1, mode).unwrap(),
                Resolved { variant, padded },
                "{dim}D r = {r}, rank 1 {rank1}, {mode:?}"
            );
        }
        // A named textbook kernel still refuses other modes, and resolve_mask (the
        // kernels alone) still reports the mode.
        assert!(matches!(
            host(Variant::Conv2dBasic, 2, 9, false, Mode::Reflect),
            Err(Error::ModeUnsupported { .. })
        ));
        match Variant::Auto.resolve_for(2, [9, 9, 0], Mode::Reflect) {
            Err(e @ Error::ModeUnsupported { .. }) => assert!(e.to_string().contains("pad"), "{e}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn auto_images_fall_back_to_channel_planes() {
        let call = |v: Variant, r: u32, rank1, mode| v.resolve_image_call([r, r, 0], rank1, 3, mode);
        assert_eq!(
            call(Variant::Auto, 2, false, Mode::Reflect).unwrap(),
            Variant::ImageFast
        );
        assert_eq!(call(Variant::Auto, 6, false, Mode::Zero).unwrap(), Variant::Conv2dFast);
        assert_eq!(
            call(Variant::ImageTiled, 6, false, Mode::Zero).unwrap(),
            Variant::ImageTiled
        );
        assert!(matches!(
            call(Variant::Auto, 1, false, Mode::Zero),
            Ok(Variant::ImageFast)
        ));
        assert_eq!(
            call(Variant::Auto, 6, false, Mode::Reflect).unwrap(),
            Variant::Conv2dFast
        );
        assert_eq!(
            call(Variant::Auto, 20, true, Mode::Wrap).unwrap(),
            Variant::Conv2dSeparable
        );
        // Past every kernel that implements wrap: the planes, padded on the host, on the
        // zero-mode 2D kernel; device images have no such way.
        assert_eq!(
            call(Variant::Auto, 20, false, Mode::Wrap).unwrap(),
            Variant::Conv2dConst
        );
        assert!(matches!(
            Variant::Auto.resolve_image([10, 10, 0], 3, Mode::Wrap),
            Err(Error::ModeUnsupported { .. })
        ));
        assert!(matches!(
            call(Variant::ImageFast, 6, false, Mode::Reflect),
            Err(Error::MaskTooLarge { .. })
        ));
    }

    #[test]
    fn entries_per_radius() {
        assert_eq!(Variant::Conv2dConst.entry(3).unwrap(), "conv2d_const_r3");
        assert_eq!(Variant::Conv2dTiledIn.entry(12).unwrap(), "conv2d_tiled_in");
        assert_eq!(Variant::Conv1dTiled.entry(3).unwrap(), "conv1d_tiled");
        assert_eq!(Variant::Conv3dFast.entry(2).unwrap(), "conv3d_fast_r2");
        assert_eq!(Variant::Auto.entry(2), None);
        let all = Variant::all_entries();
        for e in [
            "conv2d_basic",
            "conv2d_tiled_cached_r8",
            "conv1d_fast_r16",
            "conv3d_tiled_in_r3",
        ] {
            assert!(all.iter().any(|x| x == e), "{e}");
        }
        assert!(!all.iter().any(|x| x == "conv2d_const_r9"));
    }
}
