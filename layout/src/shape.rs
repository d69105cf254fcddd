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
