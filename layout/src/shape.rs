//! Launch shapes: grid, block and dynamic shared memory of one launch, computed from the
//! problem by each family's launch-shape function (with the same constants its kernel
//! indexes with), and tested without a GPU.

/// One launch's shape, in one visible place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    /// Blocks in x, y, z.
    pub grid: (u32, u32, u32),
    /// Threads per block in x, y, z.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory per block, in bytes.
    pub shared_bytes: u32,
    /// The kernel loops over tiles (persistent blocks): `grid.0` is one block per tile,
    /// and the launch caps it at the blocks that fit on the GPU at once.
    pub persistent: bool,
    /// Blocks walk chunks of depth (`grid.2` chunks, a kernel derives their length from
    /// gridDim.z): the launch replaces `grid.2` with the count that finishes soonest on
    /// the GPU at hand ([`DepthSplit::chunks`]).
    pub depth: Option<DepthSplit>,
}

/// Depth walked in chunks, each of which also reads `halo` planes more than it writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DepthSplit {
    /// Planes to write.
    pub planes: u32,
    /// Planes a chunk reads beyond the ones it writes (2r).
    pub halo: u32,
    /// The fewest waves of blocks to cut the depth into while chunks stay at least 8
    /// halos long: 1 where arithmetic dominates (more chunks only add halo planes to
    /// compute); memory-bound walks run faster in several waves than in one, whose
    /// blocks all fill their rings at once and finish at once (H200, 512^3 r = 1,
    /// 16-byte pads: conv3d_fast 370 -> 349 -> 349 us in 1, 2, 4 waves).
    pub waves: u32,
    /// The columns on a y side take one chunk more than the others: the launch adds a
    /// row of chunks (`grid.2 + 1`), which the other columns leave empty
    /// (`conv3d_separable::side_chunks`).
    pub sides: bool,
}

impl DepthSplit {
    /// The chunk count (at least 1, none empty) with the least estimated time when `columns` blocks per chunk
    /// run `slots` at a time (blocks per SM x SMs): waves of blocks x planes per block.
    /// Waves count whole (a wave 10% full takes as long as a full one), so the count
    /// that fills the last wave wins: 512^3 at r = 1 (64 columns, 264 slots) takes 4
    /// chunks of 128 planes, one wave, rather than 9 chunks of 57 (three waves, the
    /// last 18% full); asked for at least 4 waves ([`Self::waves`]), 16 chunks of 32.
    pub fn chunks(&self, columns: u32, slots: u32) -> u32 {
        let (columns, slots) = (columns.max(1) as u64, slots.max(1) as u64);
        // At most one chunk per plane, and the grid's limit in z.
        let most = MAX_GRID_YZ.min(self.planes).max(1) as u64;
        // Beyond four waves more chunks only add halo planes.
        let most = most.min((4 * slots).div_ceil(columns).max(1));
        let planes = self.planes.max(1) as u64;
        // More than `waves - 1` full waves, where chunks stay long enough.
        let more = (self.waves.max(1) as u64 - 1) * slots / columns + 1;
        let long = (planes / (8 * self.halo.max(1) as u64)).max(1);
        let least = more.min(long).min(most);
        let cost = |n: u64| (columns * n).div_ceil(slots) * (planes.div_ceil(n) + self.halo as u64);
        let best = (least..=most).min_by_key(|&n| (cost(n), n)).unwrap_or(1);
        self.whole(best as u32)
    }

    /// The launch's grid depth: [`Self::chunks`], and with [`Self::sides`] the row of
    /// chunks the y-side columns take beyond it (`conv3d_fast::column_chunk` cuts a column
    /// by the same rule), within the grid's limit.
    pub fn grid_depth(&self, columns: u32, slots: u32) -> u32 {
        let n = self.chunks(columns, slots);
        if self.sides {
            (n + 1).min(MAX_GRID_YZ)
        } else {
            n
        }
    }

    /// The fewest chunks as long as `n` chunks would be (`ceil(planes / n)`): none empty
    /// when a kernel cuts the planes into chunks of `ceil(planes / count)`.
    pub const fn whole(&self, n: u32) -> u32 {
        let planes = if self.planes == 0 { 1 } else { self.planes };
        let n = if n == 0 { 1 } else { n };
        planes.div_ceil(planes.div_ceil(n))
    }
}

impl LaunchShape {
    /// Threads per block.
    #[inline]
    pub const fn threads(&self) -> u32 {
        self.block.0 * self.block.1 * self.block.2
    }
}

/// What a launch-shape function needs to know: the array and the mask, per axis (x is the
/// innermost, contiguous axis; axes past the dimension have extent 1 and radius 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Elements along x, y, z (for images: pixels along x).
    pub extent: [u32; 3],
    /// Mask radius along x, y, z.
    pub radius: [u32; 3],
    /// Interleaved channels per element: 1 but for images.
    pub channels: u32,
    /// Bytes of a pixel: 4 but for u8 images (whose tiles `image_patches` lays out and
    /// pipelines its own way).
    pub pixel_bytes: u32,
}

impl Problem {
    /// Elements in all.
    #[inline]
    pub const fn elements(&self) -> usize {
        self.extent[0] as usize * self.extent[1] as usize * self.extent[2] as usize
    }
    /// The largest radius along any axis.
    #[inline]
    pub const fn max_radius(&self) -> u32 {
        let [x, y, z] = self.radius;
        let m = if x > y { x } else { y };
        if m > z {
            m
        } else {
            z
        }
    }
}

/// Why no launch shape fits a problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeError {
    /// More items along an axis than the grid can cover (`max` is the most it covers).
    TooLarge {
        /// Items asked for.
        elements: usize,
        /// The most a launch covers.
        max: usize,
    },
}

/// The grid limit in y and z (x allows 2^31 - 1).
pub const MAX_GRID_YZ: u32 = 65_535;
/// The grid limit in x.
pub const MAX_GRID_X: u32 = i32::MAX as u32;

/// Blocks needed to cover `n` items with `per_block` each, within the grid limit `max`
/// (at least one, so that an empty axis still launches a valid grid).
#[inline]
pub const fn blocks(n: usize, per_block: usize, max: u32) -> Result<u32, ShapeError> {
    let b = n.div_ceil(per_block);
    if b > max as usize {
        return Err(ShapeError::TooLarge {
            elements: n,
            max: max as usize * per_block,
        });
    }
    Ok(if b == 0 { 1 } else { b as u32 })
}

/// Bytes of `floats` f32 (shared memory sizes).
#[inline]
pub const fn f32_bytes(floats: u32) -> u32 {
    floats * 4
}

/// Division of a `u32` by a divisor fixed for a launch, by a multiply-high and shifts
/// (Granlund and Montgomery's method, as libdivide's branch-free `u32` one): exact for
/// every dividend, where `/` by a value known only at run time is a reciprocal's
/// refinement of about 20 instructions each time.
#[derive(Clone, Copy)]
pub struct Divider {
    /// The multiplier.
    m: u32,
    /// The two shifts, the first in the low byte.
    shifts: u32,
}

impl Divider {
    /// The divider by `d` (taken as 1 if 0).
    #[inline]
    pub fn new(d: u32) -> Self {
        let d = d.max(1);
        // l = ceil(log2(d)); m = floor(2^32 (2^l - d) / d) + 1 < 2^32 (1 where d is a
        // power of 2): the quotient is (t + ((n - t) >> 1)) >> (l - 1), t = m·n / 2^32
        // (for d = 1, t = 0 and no shift).
        let l = 32 - (d - 1).leading_zeros();
        let m = ((((1u64 << l) - d as u64) << 32) / d as u64 + 1) as u32;
        let first = l.min(1);
        Divider {
            m,
            shifts: first | (l - first) << 8,
        }
    }

    /// `n / d`.
    #[inline]
    pub fn quotient(self, n: u32) -> u32 {
        let t = ((self.m as u64 * n as u64) >> 32) as u32;
        (t + ((n - t) >> (self.shifts & 0xff))) >> (self.shifts >> 8)
    }

    /// Its two words (to keep in shared memory).
    #[inline]
    pub fn words(self) -> [u32; 2] {
        [self.m, self.shifts]
    }

    /// The divider of [`Self::words`].
    #[inline]
    pub fn from_words([m, shifts]: [u32; 2]) -> Self {
        Divider { m, shifts }
    }
}

#[cfg(test)]
mod tests {
    use super::{DepthSplit, Divider};

    #[test]
    fn dividers_divide_exactly() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u32
        };
        let mut ds: std::vec::Vec<u32> = (1..3000).collect();
        for k in 0..32 {
            let p = 1u64 << k;
            ds.extend(
                [p - 1, p, p + 1]
                    .into_iter()
                    .filter(|&v| v >= 1 && v <= u32::MAX as u64)
                    .map(|v| v as u32),
            );
        }
        ds.extend([u32::MAX - 1, u32::MAX]);
        ds.extend((0..500).map(|_| next() | 1));
        for d in ds {
            let v = Divider::new(d);
            let mut ns = std::vec![0, 1, d - 1, d, d.wrapping_add(1), u32::MAX / 2, u32::MAX - 1, u32::MAX];
            ns.extend((1..40u32).flat_map(|k| [d.wrapping_mul(k), d.wrapping_mul(k).wrapping_sub(1)]));
            ns.extend((0..300).map(|_| next()));
            for n in ns {
                assert_eq!(v.quotient(n), n / d, "{n} / {d}");
            }
        }
        assert_eq!(Divider::new(0).quotient(7), 7, "0 divides as 1");
    }

    #[test]
    fn depth_chunks_fill_the_last_wave_and_are_never_empty() {
        let split = |planes, halo, waves| DepthSplit {
            planes,
            halo,
            waves,
            sides: false,
        };
        // 512^3 at r = 1: 64 columns, 264 slots -> one wave of 4 chunks of 128.
        assert_eq!(split(512, 2, 1).chunks(64, 264), 4);
        // Asked for 2 or 4 waves: 8 chunks of 64 (2 waves), 16 of 32 (3.9 waves).
        assert_eq!(split(512, 2, 2).chunks(64, 264), 8);
        assert_eq!(split(512, 2, 4).chunks(64, 264), 16);
        // ... but not into chunks shorter than 8 halos: at r = 4, 8 chunks of 64, 2 waves.
        assert_eq!(split(512, 8, 4).chunks(64, 264), 8);
        // 512^3 at rank-1 r = 3 (128 columns): 2 chunks of 256, and the y sides' row of
        // chunks on top where the family asks for it.
        let sides = DepthSplit {
            sides: true,
            ..split(512, 6, 1)
        };
        assert_eq!(split(512, 6, 1).grid_depth(128, 264), 2);
        assert_eq!(sides.grid_depth(128, 264), 3);
        // A small volume is cut finer, to use the GPU.
        assert!(split(128, 4, 1).chunks(8, 264) >= 16);
        for (planes, waves) in (1..300).flat_map(|p| [(p, 1), (p, 2), (p, 4)]) {
            for columns in [1, 3, 64, 1000] {
                let s = split(planes, 4, waves);
                let n = s.chunks(columns, 264);
                let c = planes.div_ceil(n);
                assert!(
                    n >= 1 && (n - 1) * c < planes && n * c >= planes,
                    "{planes} {columns}: {n} x {c}"
                );
            }
        }
    }
}
