//! Small helpers shared by the launch-shape functions.
use crate::error::{Error, Result};

/// Blocks needed to cover `n` items with `per_block` each, within the grid limit `max`.
pub(crate) fn blocks(n: usize, per_block: usize, max: u32) -> Result<u32> {
    let b = n.div_ceil(per_block);
    if b > max as usize {
        return Err(Error::TooLarge {
            elements: n,
            max: max as usize * per_block,
        });
    }
    Ok(b.max(1) as u32)
}

/// The grid limit in y and z.
pub(crate) const MAX_GRID_YZ: u32 = 65_535;
