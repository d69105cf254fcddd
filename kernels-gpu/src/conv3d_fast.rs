//! 3D fast: compile-time radius (one entry point per radius). A block owns a 128 x 8K
//! column of outputs and a chunk of depth, and walks it plane by plane. The input planes
//! of its column (with x/y halos) stream through a ring of shared buffers with 16-byte
//! `cp.async`, `ahead(R)` planes ahead of the one in use, so each input plane is read
//! once per column while earlier ones are computed.
//!
//! Each thread keeps one register patch (`patch::accumulate`, the fast 2D kernel's inner
//! loop) for each of the `2R+1` output planes the current input plane touches: it reads
//! the plane's window from shared memory once and adds it into every patch through that
//! patch's slice of the mask, then stores the patch that is complete and moves the
//! others down. Every tap's mask plane is then a constant (a constant-bank FFMA
//! operand), and shared memory is read once per input plane instead of `2R+1` times.
//! Geometry: `layout::families::conv3d_fast`.
use crate::device::*;
use crate::{patch, stage};
use layout::families::conv3d_fast::{
    ahead, chunk_z, min_blocks, pad, plane_floats, ring, rows_per_thread, staged_w, tile_h, QX, THREADS_X, THREADS_Y,
    TILE_W,
};
use layout::mode::map_index;

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
            unread: pd - R,
            inline_border: false,
        };
        // SAFETY: the kernel's contract covers n, w, h and d; a slot holds
        // plane_floats(R) = sw·sh floats inside the launch's ring(R) slots; x0 and pd
        // are multiples of 4.
        unsafe { stage::window(win, base + 4 * slot_floats * (q % ring(R)), tid, THREADS) }
    };
    let planes = steps + 2 * R; // staged: 0..planes
    for q in 0..ahead(R) {
        if q < planes {
            stage_plane(q);
        }
        cp_async_commit(); // one group per plane, empty ones keep the count uniform
    }
    let first = ((ty * k) * sw + QX * tx) as usize;
    // acc[j] sums output plane q - 2R + j (of the chunk) while plane q is read.
    let mut acc = [patch::ZERO; patch::MAX_PLANES];
    for q in 0..planes {
        // Plane q + ahead goes into the slot of plane q - 2: everyone finished reading
        // it before the barrier of step q - 1 (the ring holds ahead + 2 planes).
        if q + ahead(R) < planes {
            stage_plane(q + ahead(R));
        }
        cp_async_commit();
        cp_async_wait_all_but(ahead(R)); // this thread's copies of plane q landed
        sync_threads(); // ... and everyone else's
        let slot = s.wrapping_add((slot_floats * (q % ring(R))) as usize);
        // SAFETY: the thread's window lies inside the slot.
        unsafe {
            patch::accumulate::<R, 1>(
                slot.wrapping_add(first),
                sw,
                pd,
                k,
                false,
                &mut acc,
                2 * R + 1,
                |j, fr, fc| {
                    // Output plane q - 2R + j reads input plane q through mask plane 2R - j.
                    let n = 2 * R as usize + 1;
                    Mask3d::get(((n - 1 - j) * n + fr) * n + fc)
                },
            )
        };
        if q >= 2 * R {
            let out = p.wrapping_add((z_begin + q - 2 * R) as usize * plane_len);
            // SAFETY: output plane z_begin + q - 2R < z_begin + steps <= d lies inside P.
            unsafe { patch::store(&acc[0], k, out, w, w, h, x0 + QX * tx, y0 + ty * k) };
        }
        for j in 0..2 * R as usize {
            acc[j] = acc[j + 1];
        }
        acc[2 * R as usize] = patch::ZERO;
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
