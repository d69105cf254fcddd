//! 3D fast: compile-time radius (one entry point per radius). A block owns a 128 x 16
//! column of outputs and a chunk of depth, and walks it plane by plane. The input planes
//! of its column (with x/y halos) stream through a ring of shared buffers with 16-byte
//! `cp.async`, `ahead(R)` planes ahead of the ones in use, so each input plane is read
//! once per column while earlier ones are computed. An output plane is the sum, over
//! the `2R+1` staged planes around it, of a 2D register patch (`patch::accumulate`, the
//! fast 2D kernel's inner loop) with that plane's slice of the mask. Geometry:
//! `layout::families::conv3d_fast`.
use crate::device::*;
use crate::{patch, stage};
use layout::families::conv3d_fast::{
    ahead, chunk_z, min_blocks, pad, plane_floats, ring, rows_per_thread, staged_w, tile_h, QX, THREADS_X, THREADS_Y,
    TILE_W,
};
use layout::mode::map_index;

/// Threads per block.
const THREADS: u32 = THREADS_X * THREADS_Y;

const _: () = assert!(QX == patch::QX && rows_per_thread(0) as usize <= patch::MAX_ROWS);

/// # Safety
/// `a.input`, `a.output` hold `w·h·d` floats (< 2^31); `MASK_3D` holds the `(2R+1)^3`
/// taps; launched as `layout::families::conv3d_fast` says.
#[inline(always)]
unsafe fn conv3d_fast<const R: u32>(a: &ConvArgs) {
    let (n, p) = (input(a), output(a));
    let [w, h, d] = a.extent;
    let (k, pd, sw) = (rows_per_thread(R), pad(R), staged_w(R));
    let (tx, ty) = (thread_x(), thread_y());
    let tid = ty * THREADS_X + tx;
    let (x0, y0) = (block_x() * TILE_W, block_y() * tile_h(R));
    // The launch cuts depth into gridDim.z chunks (shorter ones for small volumes).
    let chunk = chunk_z(d, grid_dim_z());
    let z_begin = block_z() * chunk;
    let steps = d.saturating_sub(z_begin).min(chunk);
    let plane_len = w as usize * h as usize;
    let s = shared_f32();
    let base = shared_addr(s);
    let slot_floats = plane_floats(R);
    // Staged plane q is input plane z_begin - R + q, held in slot q % ring(R).
    let stage_plane = |q: u32| {
        // A plane before or past the volume reads the plane the mode maps it to, or is
        // all fill values (zero, constant).
        let iz = map_index(a.mode, (z_begin + q) as i32 - R as i32, d as i32);
        let win = stage::Window {
            plane: n.wrapping_add(iz.max(0) as usize * plane_len),
            row_pitch: w,
            w,
            h,
            channels: 1,
            gx0: x0.wrapping_sub(pd),
            gy0: y0.wrapping_sub(R),
            sw,
            sh: tile_h(R) + 2 * R,
            mode: a.mode,
            fill: a.fill,
            ghost: iz < 0,
            inline_border: false,
        };
        // SAFETY: the kernel's contract covers n, w, h and d; a slot holds
        // plane_floats(R) = sw·sh floats inside the launch's ring(R) slots; x0 and pd
        // are multiples of 4.
        unsafe { stage::window(win, base + 4 * slot_floats * (q % ring(R)), tid, THREADS) }
    };
    // Prologue: the planes of the first output plane, and `ahead(R)` more in flight.
    let last = steps + 2 * R; // planes staged: 0..last
    for q in 0..2 * R + ahead(R) {
        if q < last {
            stage_plane(q);
        }
        cp_async_commit(); // one group per plane, empty ones keep the count uniform
    }
    let first = ((ty * k) * sw + QX * tx) as usize;
    for t in 0..steps {
        // Plane t + 2R + ahead goes into the slot of plane t - 1, freed by the barrier
        // that ended the previous step.
        let q = t + 2 * R + ahead(R);
        if q < last {
            stage_plane(q);
        }
        cp_async_commit();
        cp_async_wait_all_but(ahead(R)); // this thread's copies of plane t + 2R landed
        sync_threads(); // ... and everyone else's
        let mut acc: patch::Acc = [[0.0; QX as usize]; patch::MAX_ROWS];
        // Unrolled over the planes, ptxas hoists several planes' windows at once and
        // spills from r = 2; rolled (an opaque bound), each plane's taps stay unrolled
        // and the mask plane's offset is uniform.
        let planes = if R <= 1 {
            2 * R + 1
        } else {
            core::hint::black_box(2 * R + 1)
        };
        for dz in 0..planes {
            let slot = s.wrapping_add((slot_floats * ((t + dz) % ring(R))) as usize);
            let plane_taps = dz * (2 * R + 1) * (2 * R + 1);
            // SAFETY: the thread's window lies inside the slot.
            unsafe {
                patch::accumulate::<R, 1>(slot.wrapping_add(first), sw, pd, k, false, &mut acc, |fr, fc| {
                    Mask3d::get(plane_taps + fr * (2 * R + 1) + fc)
                })
            };
        }
        let out = p.wrapping_add((z_begin + t) as usize * plane_len);
        // SAFETY: output plane z_begin + t < d lies inside P.
        unsafe { patch::store(&acc, k, out, w, w, h, x0 + QX * tx, y0 + ty * k) };
        sync_threads(); // the slot of plane t is free to be refilled
    }
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
