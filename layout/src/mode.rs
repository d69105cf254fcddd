//! Ghost-cell policies: what a tap that falls outside the array reads. Names and meanings
//! are SciPy's (`scipy.ndimage`), with `n` the axis length:
//!
//! | mode | outside `a b c d` | OpenCV | NPP |
//! | --- | --- | --- | --- |
//! | `zero` (the textbook's) | `0 0 0 0 \| a b c d \| 0 0 0 0` | `BORDER_CONSTANT`, value 0 | `NPP_BORDER_CONSTANT`, value 0 |
//! | `constant(v)` | `v v v v \| a b c d \| v v v v` | `BORDER_CONSTANT`, value v | `NPP_BORDER_CONSTANT` |
//! | `nearest` (the book's "closest valid element") | `a a a a \| a b c d \| d d d d` | `BORDER_REPLICATE` | `NPP_BORDER_REPLICATE` |
//! | `reflect` (period `2n`) | `d c b a \| a b c d \| d c b a` | `BORDER_REFLECT` | — |
//! | `mirror` (period `2n-2`) | `d c b \| a b c d \| c b a` | `BORDER_REFLECT_101` (`BORDER_DEFAULT`) | `NPP_BORDER_MIRROR` |
//! | `wrap` (period `n`) | `a b c d \| a b c d \| a b c d` | `BORDER_WRAP` | `NPP_BORDER_WRAP` |
//!
//! Far outside, reflect, mirror and wrap keep repeating with their period; on an axis of
//! one element all three read that element (SciPy's rules).

/// A ghost-cell policy.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Mode {
    /// Ghost cells are 0 (the textbook's).
    #[default]
    Zero,
    /// Ghost cells hold this value.
    Constant(f32),
    /// The nearest edge element.
    Nearest,
    /// Reflection about the edge, the edge element repeated (half-sample symmetric).
    Reflect,
    /// Reflection about the edge element, not repeated (whole-sample symmetric).
    Mirror,
    /// Periodic.
    Wrap,
}

/// `Mode` codes as the kernels receive them ([`crate::ConvArgs::mode`]).
pub mod code {
    /// [`super::Mode::Zero`].
    pub const ZERO: u32 = 0;
    /// [`super::Mode::Constant`] (the value is [`crate::ConvArgs::fill`]).
    pub const CONSTANT: u32 = 1;
    /// [`super::Mode::Nearest`].
    pub const NEAREST: u32 = 2;
    /// [`super::Mode::Reflect`].
    pub const REFLECT: u32 = 3;
    /// [`super::Mode::Mirror`].
    pub const MIRROR: u32 = 4;
    /// [`super::Mode::Wrap`].
    pub const WRAP: u32 = 5;
}

impl Mode {
    /// Every policy (constant with value 0), for loops over them.
    pub const ALL: [Mode; 6] = [
        Mode::Zero,
        Mode::Constant(0.0),
        Mode::Nearest,
        Mode::Reflect,
        Mode::Mirror,
        Mode::Wrap,
    ];

    /// The code the kernels receive.
    #[inline]
    pub const fn code(self) -> u32 {
        match self {
            Mode::Zero => code::ZERO,
            Mode::Constant(_) => code::CONSTANT,
            Mode::Nearest => code::NEAREST,
            Mode::Reflect => code::REFLECT,
            Mode::Mirror => code::MIRROR,
            Mode::Wrap => code::WRAP,
        }
    }

    /// The value a ghost cell takes where the policy reads no element (0 but for constant).
    #[inline]
    pub const fn fill(self) -> f32 {
        match self {
            Mode::Constant(v) => v,
            _ => 0.0,
        }
    }

    /// SciPy's name (`constant` for both zero and constant).
    #[inline]
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Zero => "zero",
            Mode::Constant(_) => "constant",
            Mode::Nearest => "nearest",
            Mode::Reflect => "reflect",
            Mode::Mirror => "mirror",
            Mode::Wrap => "wrap",
        }
    }

    /// Parses a name: SciPy's (`constant` takes `value`), `zero`, and the OpenCV/NPP
    /// synonyms `replicate`, `reflect101`/`reflect_101`, `periodic`.
    #[inline]
    pub fn from_name(name: &str, value: f32) -> Option<Mode> {
        Some(match name {
            "zero" | "zeros" => Mode::Zero,
            "constant" => Mode::Constant(value),
            "nearest" | "replicate" | "edge" => Mode::Nearest,
            "reflect" | "symmetric" => Mode::Reflect,
            "mirror" | "reflect101" | "reflect_101" => Mode::Mirror,
            "wrap" | "periodic" | "grid-wrap" => Mode::Wrap,
            _ => return None,
        })
    }
}

/// Whether ghost cells under mode `mode` (a [`code`]) with constant fill `fill` are
/// +0.0: zero, or a constant of +0.0 (not -0.0). The tensor copies read cells outside
/// the tensor as +0.0, so only then may they stage a window that crosses the border.
#[inline]
pub fn zero_ghosts(mode: u32, fill: f32) -> bool {
    mode == code::ZERO || (mode == code::CONSTANT && fill.to_bits() == 0)
}

/// Where coordinate `i` (possibly outside `0..n`, `n >= 1`) reads under the policy with
/// code `mode`: an index in `0..n`, or -1 for a ghost cell that takes the fill value
/// (zero, constant). This is the device's mapping; the CPU reference has its own.
/// Written without a path that can panic (no division by a possibly-zero value): the
/// device crate cannot link core's panic functions.
#[inline(always)]
pub fn map_index(mode: u32, i: i32, n: i32) -> i32 {
    if i >= 0 && i < n {
        return i;
    }
    // One period out (every mask no wider than the axis): no division. In i64: 2n
    // overflows i32 for the longest axes.
    let (w, m) = (i as i64, n as i64);
    let near = match mode {
        code::NEAREST => Some(if w < 0 { 0 } else { m - 1 }),
        code::WRAP if w >= -m && w < 2 * m => Some(if w < 0 { w + m } else { w - m }),
        code::REFLECT if w >= -m && w < 2 * m => Some(if w < 0 { -w - 1 } else { 2 * m - 1 - w }),
        code::MIRROR if m > 1 && w > -m && w < 2 * m - 1 => Some(if w < 0 { -w } else { 2 * m - 2 - w }),
        _ => None,
    };
    if let Some(j) = near {
        return j as i32;
    }
    let n = n as u32;
    // Periods fit u32: n < 2^31.
    let (period, reflected) = match mode {
        code::NEAREST => return if i < 0 { 0 } else { n as i32 - 1 },
        code::WRAP => (n, false),
        code::REFLECT => (2 * n, true),
        code::MIRROR => (2 * n - 2, true),
        _ => return -1,
    };
    let Some(p) = core::num::NonZeroU32::new(period) else {
        return 0; // mirror of a one-element axis
    };
    let m = if i >= 0 {
        i as u32 % p
    } else {
        match i.unsigned_abs() % p {
            0 => 0,
            k => p.get() - k,
        }
    };
    if !reflected || m < n {
        m as i32
    } else if mode == code::REFLECT {
        (2 * n - 1 - m) as i32
    } else {
        (2 * n - 2 - m) as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SciPy's own examples of each mode on `a b c d` (n = 4), coordinates -4..8.
    #[test]
    fn scipy_examples() {
        let at = |mode, range: core::ops::Range<i32>| {
            let mut out = [0i32; 16];
            for (k, i) in range.clone().enumerate() {
                out[k] = map_index(mode, i, 4);
            }
            out
        };
        // reflect: d c b a | a b c d | d c b a
        assert_eq!(at(code::REFLECT, -4..8)[..12], [3, 2, 1, 0, 0, 1, 2, 3, 3, 2, 1, 0]);
        // mirror: d c b | a b c d | c b a   (coordinates -3..7)
        assert_eq!(at(code::MIRROR, -3..7)[..10], [3, 2, 1, 0, 1, 2, 3, 2, 1, 0]);
        // wrap: a b c d | a b c d | a b c d
        assert_eq!(at(code::WRAP, -4..8)[..12], [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
        // nearest: a a a a | a b c d | d d d d
        assert_eq!(at(code::NEAREST, -4..8)[..12], [0, 0, 0, 0, 0, 1, 2, 3, 3, 3, 3, 3]);
        // zero and constant: outside reads the fill value (-1).
        assert_eq!(at(code::ZERO, -2..6)[..8], [-1, -1, 0, 1, 2, 3, -1, -1]);
        assert_eq!(at(code::CONSTANT, -1..5)[..6], [-1, 0, 1, 2, 3, -1]);
    }

    /// The device's formulas (one period out without division, the modular rest) against
    /// the definitions applied step by step (reflect about the edges until inside), for
    /// every mode, axis lengths 1..=9 and coordinates up to 60 outside.
    #[test]
    fn formulas_match_step_by_step_reflection() {
        fn stepwise(mode: u32, mut i: i32, n: i32) -> i32 {
            match mode {
                code::ZERO | code::CONSTANT if !(0..n).contains(&i) => return -1,
                code::NEAREST => return i.clamp(0, n - 1),
                code::WRAP => {
                    while i < 0 {
                        i += n;
                    }
                    while i >= n {
                        i -= n;
                    }
                }
                code::REFLECT => {
                    while !(0..n).contains(&i) {
                        i = if i < 0 { -i - 1 } else { 2 * n - 1 - i };
                    }
                }
                code::MIRROR if n == 1 => return 0,
                code::MIRROR => {
                    while !(0..n).contains(&i) {
                        i = if i < 0 { -i } else { 2 * n - 2 - i };
                    }
                }
                _ => {}
            }
            i
        }
        for mode in [
            code::ZERO,
            code::CONSTANT,
            code::NEAREST,
            code::REFLECT,
            code::MIRROR,
            code::WRAP,
        ] {
            for n in 1..=9 {
                for i in -60..70 {
                    assert_eq!(map_index(mode, i, n), stepwise(mode, i, n), "mode {mode}, i {i}, n {n}");
                }
            }
        }
    }

    /// Short axes (SciPy: a one-element axis always reads it) and far-out coordinates.
    #[test]
    fn short_axes_and_far_out() {
        for mode in [code::REFLECT, code::MIRROR, code::WRAP, code::NEAREST] {
            for i in -9..10 {
                assert_eq!(map_index(mode, i, 1), 0, "mode {mode} i {i}");
            }
        }
        // n = 2, reflect (period 4): a b | a b | b a a b b a
        let r: [i32; 8] = core::array::from_fn(|k| map_index(code::REFLECT, k as i32 - 4, 2));
        assert_eq!(r, [0, 1, 1, 0, 0, 1, 1, 0]);
        // n = 2, mirror (period 2): b a b a | a b | a b a
        let m: [i32; 8] = core::array::from_fn(|k| map_index(code::MIRROR, k as i32 - 4, 2));
        assert_eq!(m, [0, 1, 0, 1, 0, 1, 0, 1]);
        assert_eq!(
            map_index(code::WRAP, -1_000_000_001, 7),
            (-1_000_000_001i64).rem_euclid(7) as i32
        );
        // The longest axes: i64 periods, against the i32 fast path.
        let reference = |mode, i: i64, n: i64| -> i64 {
            match mode {
                code::WRAP => i.rem_euclid(n),
                code::REFLECT => {
                    let p = i.rem_euclid(2 * n);
                    if p < n {
                        p
                    } else {
                        2 * n - 1 - p
                    }
                }
                code::MIRROR => {
                    let p = i.rem_euclid(2 * n - 2);
                    if p < n {
                        p
                    } else {
                        2 * n - 2 - p
                    }
                }
                _ => i.clamp(0, n - 1),
            }
        };
        for n in [i32::MAX, i32::MAX - 1, (1 << 30) + 1, 1 << 30, (1 << 30) - 3] {
            for i in [
                i32::MIN,
                i32::MIN + 1,
                -n,
                -n + 1,
                -n - 1,
                -5,
                n - 1,
                n,
                n.saturating_add(4),
                i32::MAX - 1,
                i32::MAX,
            ] {
                for mode in [code::REFLECT, code::MIRROR, code::WRAP, code::NEAREST] {
                    assert_eq!(
                        map_index(mode, i, n) as i64,
                        reference(mode, i as i64, n as i64),
                        "mode {mode}, i {i}, n {n}"
                    );
                }
            }
        }
        assert_eq!(map_index(code::REFLECT, i32::MIN, 3), {
            let p = (i32::MIN as i64).rem_euclid(6);
            if p < 3 {
                p as i32
            } else {
                (5 - p) as i32
            }
        });
    }
}
