//! 3D fast: compile-time radius (one entry point per radius). A block owns a 128 x 8K
//! column of outputs and a chunk of depth (from r = 2, an equal share of all columns'
//! planes, a column's run at a time), and walks it plane by plane (`planes::walk`):
//! the input planes of its column (with x/y halos) stream through a ring of shared
//! buffers with 16-byte `cp.async`, `ahead(R)` planes ahead of the one in use, so each
//! input plane is read once per column while earlier ones are computed.
//!
//! Each thread keeps one register patch (`patch::accumulate`, the fast 2D kernel's inner
//! loop) for each of the `2R+1` output planes the current input plane touches: it reads
//! the plane's window from shared memory once and adds it into every patch through that
//! patch's slice of the mask, then stores the patch that is complete and moves the
//! others down. Every tap's mask plane is then a constant (a uniform-register FFMA
//! operand), and shared memory is read once per input plane instead of `2R+1` times.
//! Geometry: `layout::families::conv3d_fast`.
use crate::device::*;
use crate::{patch, planes};
use layout::families::conv3d_fast::{min_blocks, rows_per_thread, staged_w, QX, THREADS_X, THREADS_Y};

/// Threads per block.
const THREADS: u32 = THREADS_X * THREADS_Y;

const _: () = assert!(
    QX == patch::QX
        && rows_per_thread(0) as usize <= patch::MAX_ROWS
        && ((2 * layout::families::conv3d_fast::MAX_RADIUS) as usize) < patch::MAX_PLANES
);

/// # Safety
/// `a.input`, `a.output` hold `w·h·d` floats (< 2^31); `MASK_3D` holds the `(2R+1)^3`
/// taps; launched as `layout::families::conv3d_fast` says.
#[inline(always)]
unsafe fn conv3d_fast<const R: u32>(a: &ConvArgs) {
    let g = crate::walk_of!(conv3d_fast, R, a);
    let first = ((thread_y() * g.k) * staged_w(R) + QX * thread_x()) as usize;
    let add = #[inline(always)]
    |_: u32, slot: *const f32, acc: &mut [patch::Acc; patch::MAX_PLANES]| {
        // SAFETY: the thread's window lies inside the slot.
        unsafe {
            patch::accumulate::<R, 1>(
                slot.wrapping_add(first),
                staged_w(R),
                g.pd,
                g.k,
                false,
                acc,
                2 * R + 1,
                |j, fr, fc| {
                    // Output plane q - 2R + j reads input plane q through mask plane 2R - j.
                    let n = 2 * R as usize + 1;
                    Mask3d::get(((n - 1 - j) * n + fr) * n + fc)
                },
            )
        }
    };
    // SAFETY: forwarded from the contract; the walk's geometry is this family's.
    unsafe { planes::walk::<R>(a, g, |_, _| {}, add) }
}

/// Entries and their launch bounds: 256 threads, `min_blocks(R)` blocks per SM.
macro_rules! entries {
    ($($name:ident = $r:literal),* $(,)?) => {$(
        crate::launch_bounds!($name, THREADS, min_blocks($r));
        /// `conv3d_fast` at a fixed radius.
        ///
        /// # Safety
        /// As `conv3d_fast`, for a mask of this radius.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $name(a: ConvArgs) {
            // SAFETY: forwarded from the entry's contract.
            unsafe { conv3d_fast::<$r>(&a) }
        }
    )*};
}
entries!(
    conv3d_fast_r0 = 0,
    conv3d_fast_r1 = 1,
    conv3d_fast_r2 = 2,
    conv3d_fast_r3 = 3
);
