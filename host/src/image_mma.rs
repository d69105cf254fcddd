//! The tables `image_mma` (kernels-gpu/src/image_mma.rs) reads, built here once per mask
//! rather than by every block from the taps. The fp16 path's B table (r = 0, 3, 4): the
//! taps scaled by `2^s` so that their sum of |taps| is at most `2^SUM_BITS`, each split
//! into an fp16 hi part (an integer) and an fp16 lo part (the rest times `2^LO_SHIFT`),
//! placed per lane as the MMA's B fragments take them
//! (`layout::families::image_mma::entry_taps`), then `2^-s`. The integer path's A table
//! (r = 1, 2, per channel count): [`imma_table`].
use half::f16;
use layout::families::image_mma::{
    entry_taps, imma, imma_prefix_at, imma_prefix_side, imma_slot_dx, imma_table_buffer_bytes, pow2, scale_exponent,
    table_buffer_bytes, table_bytes, IMMA_MAX_TAP, LIMBS, LO_SHIFT,
};

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
pub(crate) fn table(taps: &[f32], r: u32, c: u32) -> Vec<u32> {
    let n = (2 * r + 1) as usize;
    assert_eq!(taps.len(), n * n, "a mask of radius {r}");
    if imma(r) {
        return imma_table(taps, r, c);
    }
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

/// The exponent `s` of the integer path's scale: the largest with `max|tap|·2^s` at most
/// [`IMMA_MAX_TAP`] (0 for a mask of zeros), within -126..=110 (so that `2^(16-s)` is a
/// normal f32).
fn imma_exponent(taps: &[f32]) -> i32 {
    let max = taps.iter().fold(0.0f64, |m, t| m.max(t.abs() as f64));
    if max == 0.0 {
        return 0;
    }
    let mut s = (IMMA_MAX_TAP as f64 / max).log2().floor() as i32;
    while max * 2f64.powi(s) > IMMA_MAX_TAP as f64 {
        s -= 1;
    }
    s.clamp(-126, 110)
}

/// The limbs of a scaled tap: `v = d2·2^16 + d1·2^8 + d0`, each in -128..=127.
fn limbs(v: i32) -> [i8; LIMBS as usize] {
    let d0 = ((v + 128).rem_euclid(256) - 128) as i8;
    let v1 = (v - d0 as i32) / 256;
    let d1 = ((v1 + 128).rem_euclid(256) - 128) as i8;
    let d2 = (v1 - d1 as i32) / 256;
    [d0, d1, i8::try_from(d2).expect("a scaled tap within IMMA_MAX_TAP")]
}

/// The integer path's table buffer (`image_mma::imma`): the taps scaled by `2^s` so that
/// the largest is at most [`IMMA_MAX_TAP`], rounded to integers, split into [`LIMBS`]
/// signed bytes, placed per lane as the MMA's A fragments take them (entry
/// `(dy·LIMBS + limb)·32 + lane`, `imma_slot_dx`), then `2^-s` and `2^(16-s)`, then the
/// taps' prefix sums (`imma_prefix_side`).
fn imma_table(taps: &[f32], r: u32, c: u32) -> Vec<u32> {
    let n = (2 * r + 1) as usize;
    let s = imma_exponent(taps);
    let scaled = |t: f32| limbs(((t as f64) * 2f64.powi(s)).round() as i32);
    let mut words = Vec::with_capacity(imma_table_buffer_bytes(r) as usize / 4);
    for dy in 0..n {
        for limb in 0..LIMBS as usize {
            for lane in 0..32 {
                for q in 0..4 {
                    let mut word = 0u32;
                    for i in 0..4 {
                        if let Some(dx) = imma_slot_dx(r, c, lane, q, i) {
                            let d = scaled(taps[dy * n + dx as usize])[limb];
                            word |= (d as u8 as u32) << (8 * i);
                        }
                    }
                    words.push(word);
                }
            }
        }
    }
    words.extend([pow2(-s).to_bits(), pow2(16 - s).to_bits(), 0, 0]);
    debug_assert_eq!(words.len() * 4, imma_prefix_at(r) as usize);
    // The prefix sums, in f64 then rounded once.
    let side = imma_prefix_side(r) as usize;
    let mut prefix = vec![0f64; side * side];
    for i in 1..side {
        for j in 1..side {
            prefix[i * side + j] =
                taps[(i - 1) * n + j - 1] as f64 + prefix[(i - 1) * side + j] + prefix[i * side + j - 1]
                    - prefix[(i - 1) * side + j - 1];
        }
    }
    words.extend(prefix.iter().map(|&p| (p as f32).to_bits()));
    words.resize(imma_table_buffer_bytes(r) as usize / 4, 0);
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use layout::families::image_mma::imma_table_bytes;

    /// Every slot of the table holds its tap: `(hi + lo·2^-LO_SHIFT)·2^-s` is the tap to
    /// within 2^-22 of the mask's sum of |taps|, and slots outside the band are 0.
    #[test]
    fn slots_hold_their_taps_to_fp32_accuracy() {
        for r in (0..=layout::families::image_mma::MAX_RADIUS).filter(|&r| !imma(r)) {
            let n = (2 * r + 1) as usize;
            let taps: Vec<f32> = (0..n * n).map(|i| ((i * 7919 % 113) as f32 - 50.0) / 37.0).collect();
            let sum: f32 = taps.iter().map(|t| t.abs()).sum();
            let w = table(&taps, r, 1);
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
        let mut taps = vec![0.0f32; 49];
        taps[24] = 3.0e6;
        taps[0] = 1.0e-3;
        let w = table(&taps, 3, 1);
        let down = f32::from_bits(w[w.len() - 4]);
        let s = scale_exponent(3.0e6 + 1.0e-3);
        assert_eq!(down, pow2(-s));
        assert!(3.0e6 * pow2(s) <= 32768.0);
    }

    /// The integer path's prefix sums: entry (i, j) is the sum of the taps of mask rows
    /// below i and columns below j, so a rectangle's sum is four entries.
    #[test]
    fn integer_table_ends_with_the_taps_prefix_sums() {
        for r in (1..=2).filter(|&r| imma(r)) {
            let n = (2 * r + 1) as usize;
            let taps: Vec<f32> = (0..n * n).map(|i| ((i * 7919 % 113) as f32 - 50.0) / 37.0).collect();
            let w = table(&taps, r, 3);
            assert_eq!(w.len() * 4, imma_table_buffer_bytes(r) as usize);
            let side = imma_prefix_side(r) as usize;
            let p = |i: usize, j: usize| f32::from_bits(w[imma_prefix_at(r) as usize / 4 + i * side + j]);
            for (y0, y1, x0, x1) in [(0, n, 0, n), (1, n, 0, 2), (0, 1, 1, n), (2, 3, 2, 3)] {
                let want: f32 = (y0..y1)
                    .flat_map(|y| (x0..x1).map(move |x| (y, x)))
                    .map(|(y, x)| taps[y * n + x])
                    .sum();
                let got = p(y1, x1) - p(y0, x1) - p(y1, x0) + p(y0, x0);
                assert!(
                    (got - want).abs() <= 1e-5,
                    "r={r} rows {y0}..{y1} columns {x0}..{x1}: {got} vs {want}"
                );
            }
        }
    }

    /// The integer path's table, read back as the MMA reads it: for every channel count
    /// and radius, 16 output bytes of random interleaved rows filtered through the A
    /// fragments' limbs (the `m16n8k32` layout: register `q`, byte `i` of lane `l` is
    /// `A[l/4 + 8(q%2)][4(l%4) + i + 16(q/2)]`) against the direct sums, to within the
    /// scale's rounding.
    #[test]
    #[allow(clippy::needless_range_loop)] // m indexes the band and the reference alike
    fn integer_table_filters_interleaved_bytes() {
        for r in (1..=2).filter(|&r| imma(r)) {
            for c in 1..=layout::families::image_mma::MAX_CHANNELS {
                let n = (2 * r + 1) as usize;
                let taps: Vec<f32> = (0..n * n).map(|i| ((i * 7919 % 113) as f32 - 50.0) / 37.0).collect();
                let max = taps.iter().fold(0.0f32, |m, t| m.max(t.abs()));
                let w = table(&taps, r, c);
                let scales = imma_table_bytes(r) as usize / 4;
                let down = f32::from_bits(w[scales]) as f64;
                assert_eq!(f32::from_bits(w[scales + 1]) as f64, down * 65536.0);
                // Rows of 32 window bytes (k) for each mask row dy.
                let rows: Vec<Vec<u8>> = (0..n)
                    .map(|dy| (0..32).map(|k| ((dy * 37 + k * 101) % 256) as u8).collect())
                    .collect();
                let mut a = vec![[[0i64; 32]; 16]; n * LIMBS as usize];
                for e in 0..(n as u32 * LIMBS * 32) {
                    let (dl, lane) = ((e / 32) as usize, e % 32);
                    for q in 0..4 {
                        let word = w[(4 * e + q) as usize];
                        for i in 0..4 {
                            let (m, k) = (lane / 4 + 8 * (q % 2), 4 * (lane % 4) + i + 16 * (q / 2));
                            a[dl][m as usize][k as usize] = (word >> (8 * i)) as u8 as i8 as i64;
                        }
                    }
                }
                for m in 0..16usize {
                    let mut got = 0f64;
                    let mut want = 0f64;
                    for (dy, row) in rows.iter().enumerate() {
                        for limb in 0..LIMBS as usize {
                            let sum: i64 = (0..32)
                                .map(|k| a[dy * LIMBS as usize + limb][m][k] * row[k] as i64)
                                .sum();
                            got += sum as f64 * 256f64.powi(limb as i32) * down;
                        }
                        for dx in 0..n {
                            let k = m as i64 + 8 + c as i64 * (dx as i64 - r as i64);
                            want += taps[dy * n + dx] as f64 * row[k as usize] as f64;
                        }
                    }
                    let bound = 0.5 * down * (n * n) as f64 * 255.0;
                    assert!((got - want).abs() <= bound, "r={r} c={c} m={m}: {got} vs {want}");
                    assert!(bound <= max as f64 * 2f64.powi(-11), "r={r} c={c}: bound {bound}");
                }
            }
        }
    }
}
