//! The B table `image_mma` (kernels-gpu/src/image_mma.rs) reads, built here once per mask
//! rather than by every block from the taps: the taps scaled by `2^s` so that their sum
//! of |taps| is at most `2^SUM_BITS`, each split into an fp16 hi part (an integer) and an
//! fp16 lo part (the rest times `2^LO_SHIFT`), placed per lane as the MMA's B fragments
//! take them (`layout::families::image_mma::entry_taps`), then `2^-s`.
use half::f16;
use layout::families::image_mma::{entry_taps, pow2, scale_exponent, table_buffer_bytes, table_bytes, LO_SHIFT};

/// A scaled tap as fp16 bits (hi, lo): hi the nearest integer (ties to even), then the
/// nearest fp16 (an integer too); lo the rest, exact in f32 (at most half an fp16 step
/// of hi), times `2^LO_SHIFT`, to the nearest fp16.
fn split(v: f32) -> (u16, u16) {
    let hi = f16::from_f32(v.round_ties_even());
    let rest = v - hi.to_f32();
    (hi.to_bits(), f16::from_f32(rest * pow2(LO_SHIFT)).to_bits())
}

/// The table buffer for the `(2r+1)²` taps of a radius-`r` mask (row-major, finite), as
/// the words `ConvArgs::mask` points at (`table_buffer_bytes(r)` bytes).
pub(crate) fn table(taps: &[f32], r: u32) -> Vec<u32> {
    let n = (2 * r + 1) as usize;
    assert_eq!(taps.len(), n * n, "a mask of radius {r}");
    let s = scale_exponent(taps.iter().fold(0.0f32, |sum, t| sum + t.abs()));
    let up = pow2(s);
    let mut words = Vec::with_capacity(table_buffer_bytes(r) as usize / 4);
    for e in 0..table_bytes(r) / 16 {
        let parts = entry_taps(r, e).map(|t| t.map_or((0, 0), |i| split(taps[i as usize] * up)));
        let pair = |a: u16, b: u16| a as u32 | (b as u32) << 16;
        words.extend([
            pair(parts[0].0, parts[1].0),
            pair(parts[2].0, parts[3].0),
            pair(parts[0].1, parts[1].1),
            pair(parts[2].1, parts[3].1),
        ]);
    }
    words.extend([pow2(-s).to_bits(), 0, 0, 0]);
    debug_assert_eq!(words.len() * 4, table_buffer_bytes(r) as usize);
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every slot of the table holds its tap: `(hi + lo·2^-LO_SHIFT)·2^-s` is the tap to
    /// within 2^-22 of the mask's sum of |taps|, and slots outside the band are 0.
    #[test]
    fn slots_hold_their_taps_to_fp32_accuracy() {
        for r in 0..=layout::families::image_mma::MAX_RADIUS {
            let n = (2 * r + 1) as usize;
            let taps: Vec<f32> = (0..n * n).map(|i| ((i * 7919 % 113) as f32 - 50.0) / 37.0).collect();
            let sum: f32 = taps.iter().map(|t| t.abs()).sum();
            let w = table(&taps, r);
            let down = f32::from_bits(w[w.len() - 4]);
            let mut seen = vec![0; n * n];
            for e in 0..table_bytes(r) / 16 {
                let words = &w[4 * e as usize..4 * e as usize + 4];
                let half = |word: u32, hi16: bool| {
                    f16::from_bits(if hi16 { (word >> 16) as u16 } else { word as u16 }).to_f32()
                };
                for (slot, tap) in entry_taps(r, e).iter().enumerate() {
                    let (hw, lw, upper) = (words[slot / 2], words[2 + slot / 2], slot % 2 == 1);
                    let v = (half(hw, upper) + half(lw, upper) * pow2(-LO_SHIFT)) * down;
                    match tap {
                        Some(i) => {
                            seen[*i as usize] += 1;
                            let want = taps[*i as usize];
                            assert!(
                                (v - want).abs() <= sum * 2f32.powi(-22),
                                "r={r} e={e} slot {slot}: {v} vs {want}"
                            );
                        }
                        None => assert_eq!(v, 0.0, "r={r} e={e} slot {slot}"),
                    }
                }
            }
            // Each tap sits in 8 slots per mask row's table: one per output column n.
            assert!(seen.iter().all(|&k| k == 8), "r={r}: {seen:?}");
        }
    }

    #[test]
    fn the_scale_keeps_the_hi_sums_exact() {
        // A mask of one huge and one tiny tap: scaled to 2^15 at most, the tiny one
        // survives in the lo part.
        let mut taps = vec![0.0f32; 9];
        taps[4] = 3.0e6;
        taps[0] = 1.0e-3;
        let w = table(&taps, 1);
        let down = f32::from_bits(w[w.len() - 4]);
        let s = scale_exponent(3.0e6 + 1.0e-3);
        assert_eq!(down, pow2(-s));
        assert!(3.0e6 * pow2(s) <= 32768.0);
    }
}
