//! The `__constant__` mask symbols: real PTX `.const` arrays that the device declares and
//! reads (`ld.const`) and the host fills through cuModuleGetGlobal (the textbook's
//! cudaMemcpyToSymbol). Their sizes fix each constant-mask family's largest mask.

/// One `.const .f32` array of the module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConstSymbol {
    /// The PTX symbol name.
    pub name: &'static str,
    /// Its length in f32.
    pub len: usize,
    /// What it is, as errors name the limit it sets ("the MASK_2D __constant__ symbol
    /// (3969 taps)").
    pub why: &'static str,
}

impl ConstSymbol {
    /// The PTX declaration the device emits for it (what the PTX check looks for).
    /// Written out by hand because the device side builds it from the same tokens with
    /// `concat!` (see [`with_const_masks!`]).
    #[inline]
    pub fn matches_declaration(&self, line: &str) -> bool {
        let l = line.trim();
        let Some(rest) = l.strip_prefix(".const .align 16 .f32 ") else {
            return false;
        };
        let Some(rest) = rest.strip_prefix(self.name) else {
            return false;
        };
        let Some(num) = rest.strip_prefix('[').and_then(|r| r.strip_suffix("];")) else {
            return false;
        };
        num.parse::<usize>() == Ok(self.len)
    }
}

/// Calls `$m! { SYMBOL: TypeName = length; ... }` with every `.const` mask symbol: the
/// one list of them. kernels-gpu declares each symbol and its typed reader from it; this
/// crate defines the [`ConstSymbol`] constants and [`ALL`] from it.
#[macro_export]
macro_rules! with_const_masks {
    ($m:ident) => {
        // Together 45.8 KB of the 64 KB constant bank.
        $m! {
            MASK_1D: Mask1d = 4095; // 2r+1 taps: r <= 2047
            MASK_2D: Mask2d = 3969; // 63 x 63: r <= 31
            MASK_3D: Mask3d = 3375; // 15 x 15 x 15: r <= 7
        }
    };
}

macro_rules! define_symbols {
    ($($name:ident: $ty:ident = $len:literal;)*) => {
        $(
            #[doc = concat!("The `", stringify!($name), "` symbol: ", stringify!($len), " f32.")]
            pub const $name: ConstSymbol = ConstSymbol {
                name: stringify!($name),
                len: $len,
                why: concat!("the ", stringify!($name), " __constant__ symbol (", stringify!($len), " taps)"),
            };
        )*
        /// Every symbol, for checks that walk them.
        pub const ALL: &[ConstSymbol] = &[$($name),*];
    };
}
with_const_masks!(define_symbols);
