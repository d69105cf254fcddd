//! 2D fast: compile-time radius (one entry point per radius), register-blocked outputs.
//!
//! Blocks are persistent and pipelined (`device::pipelined_tiles`): while one tile is
//! computed, the next tiles' inputs (outputs + halo) stream into shared memory with 16-byte `cp.async`.
//! Each thread owns a 4-wide × `K`-tall patch of outputs in registers: it reads each
//! input row of its window once (LDS.128) and adds it into every output row
//! it touches, so taps are FFMAs with the mask as a constant-bank operand, and shared
//! memory traffic is ~(K+2R)/K window loads per output row instead of 2R+1.
use crate::device::*;

/// Threads across a block: one warp, so a warp's LDS.128/STG.128 cover 512 contiguous bytes.
pub const THREADS_X: u32 = 32;
/// Threads down a block.
pub const THREADS_Y: u32 = 8;
/// Outputs per thread across (one F4).
const QX: u32 = 4;
/// Output tile width of a block.
pub const TILE_W: u32 = THREADS_X * QX;

/// Output rows per thread for radius `r`: more rows share each loaded input row, but
/// code size grows as 4·K·(2r+1)²; the host's launch shape uses the same function.
pub const fn rows_per_thread(r: u32) -> u32 {
    match r {
        0..=3 => 4,
        4 => 3, // 4 rows need ~148 registers: one block per SM instead of two
        _ => 2,
    }
}

/// Halo columns staged on each side: `r` rounded up to whole F4s (16-byte aligned rows).
pub const fn pad(r: u32) -> u32 {
    r.div_ceil(4) * 4
}

/// Tiles in flight per block (ring of shared buffers, `device::pipelined_tiles`). The
/// host launches persistent blocks for r >= 3, where arithmetic dominates and a 3-deep
/// ring overlaps it with memory; below, one block per tile and a single buffer, so
/// more blocks fit per SM and the hardware's block scheduling overlaps tiles.
pub const fn stages(r: u32) -> u32 {
    if r >= 3 {
        3
    } else {
        1
    }
}

/// Shared floats a block needs for radius `r`: `stages(r)` tile buffers (the host
/// sizes the launch with this; above 48 KiB it raises the kernel's shared limit).
pub const fn shared_floats(r: u32) -> u32 {
    stages(r) * (TILE_W + 2 * pad(r)) * (THREADS_Y * rows_per_thread(r) + 2 * r)
}

/// Threads per block.
const THREADS: u32 = THREADS_X * THREADS_Y;

/// Walks tiles `t, t + step, ...` in row-major order, yielding each tile's first output
/// (x, y) without a division per tile (`pipelined_tiles` visits tiles in that order).
struct TileCursor {
    tiles_x: u32,
    step: (u32, u32),
    at: (u32, u32),
}

impl TileCursor {
    fn new(w: u32, first: u32, step: u32) -> Self {
        let tiles_x = w.div_ceil(TILE_W).max(1); // never 0: no division-by-zero panic path
        TileCursor {
            tiles_x,
            step: (step % tiles_x, step / tiles_x),
            at: (first % tiles_x, first / tiles_x),
        }
    }

    /// The current tile's origin (in outputs), then moves on by one step.
    fn next<const R: u32>(&mut self) -> (u32, u32) {
        let (x, y) = self.at;
        let (mut nx, mut ny) = (x + self.step.0, y + self.step.1);
        if nx >= self.tiles_x {
            nx -= self.tiles_x;
            ny += 1;
        }
        self.at = (nx, ny);
        (x * TILE_W, y * THREADS_Y * rows_per_thread(R))
    }
}

/// Starts the asynchronous copy of the inputs of the tile at `(x0, y0)` (outputs and
/// halo, ghost cells 0) into the shared buffer at shared address `buf`.
#[inline(always)]
unsafe fn stage<const R: u32>(n: *const f32, w: u32, h: u32, (x0, y0): (u32, u32), buf: u32) {
    let (k, pd) = (rows_per_thread(R), pad(R));
    let (sw, sh) = (TILE_W + 2 * pd, THREADS_Y * k + 2 * R);
    let tid = thread_y() * THREADS_X + thread_x();
    if w % 4 == 0 {
        // Rows 16-byte aligned; x0 and pd are multiples of 4, so each group of 4 cells
        // is wholly inside the image or wholly a ghost: one LDGSTS.128 or a zero fill.
        // Thread tid copies the 16-byte column c = tid % f of rows tid / f, + rows_step,
        // ... (the last THREADS % f threads idle): no division inside the loop.
        let f = sw / 4;
        let rows_step = THREADS / f;
        let c = tid % f;
        let mut sy = if tid < f * rows_step { tid / f } else { sh };
        let gx = (x0 + 4 * c).wrapping_sub(pd);
        let mut gy = (y0 + sy).wrapping_sub(R);
        let mut dst = buf + 4 * (sy * sw + 4 * c);
        while sy < sh {
            let inside = gx < w && gy < h;
            let src = if inside { n.add((gy * w + gx) as usize) } else { n };
            cp_async_f4(dst, src, if inside { 16 } else { 0 });
            sy += rows_step;
            gy = gy.wrapping_add(rows_step);
            dst += 4 * rows_step * sw;
        }
    } else {
        let mut i = tid;
        while i < sh * sw {
            let (sy, sx) = (i / sw, i % sw);
            let (gy, gx) = ((y0 + sy).wrapping_sub(R), (x0 + sx).wrapping_sub(pd));
            let inside = gy < h && gx < w;
            let src = if inside { n.add((gy * w + gx) as usize) } else { n };
            cp_async_f1(buf + 4 * i, src, if inside { 4 } else { 0 });
            i += THREADS;
        }
    }
}

/// Computes and stores the tile at `(x0, y0)` from its staged inputs at `s`.
#[inline(always)]
unsafe fn compute<const R: u32>(s: *const f32, p: *mut f32, w: u32, h: u32, (x0, y0): (u32, u32)) {
    let (k, pd) = (rows_per_thread(R), pad(R));
    let sw = TILE_W + 2 * pd;
    let (tx, ty) = (thread_x(), thread_y());
    // acc[o][j]: output (y0 + ty*k + o, x0 + 4*tx + j).
    let mut acc = [[0.0f32; QX as usize]; 8];
    let win = (QX + 2 * pd) as usize;
    // Fully unrolled up to r = 4. Beyond, ptxas would hoist every row's window into
    // registers and spill; an opaque bound keeps the row loop rolled (taps stay unrolled).
    let rows = if R <= 4 {
        k + 2 * R
    } else {
        core::hint::black_box(k + 2 * R)
    };
    for i in 0..rows {
        // Shared row ty*k + i holds input row (its output row - R + i).
        let row = s.add(((ty * k + i) * sw + QX * tx) as usize);
        let mut v = [0.0f32; 20];
        for c in 0..win / 4 {
            let f = *(row.add(4 * c) as *const F4);
            v[4 * c..4 * c + 4].copy_from_slice(&f.0);
        }
        // Input row i feeds output row o through mask row fr = i - o.
        for o in 0..k {
            let fr = i.wrapping_sub(o);
            if fr <= 2 * R {
                for fc in 0..2 * R + 1 {
                    let m = Mask2d::get(fr * (2 * R + 1) + fc);
                    for j in 0..QX {
                        acc[o as usize][j as usize] =
                            fma(m, v[(pd - R + fc + j) as usize], acc[o as usize][j as usize]);
                    }
                }
            }
        }
    }

    let x = x0 + QX * tx;
    for o in 0..k {
        let y = y0 + ty * k + o;
        if y < h {
            let out = p.add((y * w + x) as usize);
            if w % 4 == 0 && x + QX <= w {
                store_f4(out, F4(acc[o as usize]));
            } else {
                for j in 0..QX {
                    if x + j < w {
                        *out.add(j as usize) = acc[o as usize][j as usize];
                    }
                }
            }
        }
    }
}

#[inline(always)]
unsafe fn conv2d_fast<const R: u32>(n: *const f32, p: *mut f32, w: u32, h: u32) {
    let tiles = w.div_ceil(TILE_W) * h.div_ceil(THREADS_Y * rows_per_thread(R));
    // Both callbacks see tiles block_x, block_x + grid, ... in order: one cursor each.
    let mut staged = TileCursor::new(w, block_x(), grid_dim_x());
    let mut computed = TileCursor::new(w, block_x(), grid_dim_x());
    pipelined_tiles(
        stages(R),
        tiles,
        shared_floats(R) / stages(R),
        // SAFETY (both): the kernel's contract covers n, p, w and h.
        |_, buf| unsafe { stage::<R>(n, w, h, staged.next::<R>(), buf) },
        |_, s| unsafe { compute::<R>(s, p, w, h, computed.next::<R>()) },
    )
}

/// Entries and their launch bounds: 256 threads, and the blocks per SM the radius
/// needs for latency hiding (2 blocks = 128 registers, 4 = 64, 5 = 48).
macro_rules! entries {
    ($($name:ident = $r:literal, $min_blocks:literal);* $(;)?) => {$(
        crate::launch_bounds!($name, 256, $min_blocks);
        /// `conv2d_fast` at a fixed radius. Launch: block (32, 8), a 1D grid of any
        /// size (best: the blocks that fit on the GPU at once), `shared_floats(R)·4` bytes.
        ///
        /// # Safety
        /// `n`, `p` hold `w*h` floats; `MASK_2D` holds the `(2R+1)^2` taps.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $name(n: *const f32, p: *mut f32, w: u32, h: u32) {
            conv2d_fast::<$r>(n, p, w, h)
        }
    )*};
}
entries!(
    conv2d_fast_r0 = 0, 5;
    conv2d_fast_r1 = 1, 5;
    conv2d_fast_r2 = 2, 4;
    conv2d_fast_r3 = 3, 2;
    conv2d_fast_r4 = 4, 2;
    conv2d_fast_r5 = 5, 4;
    conv2d_fast_r6 = 6, 4;
    conv2d_fast_r7 = 7, 4;
    conv2d_fast_r8 = 8, 4;
);
