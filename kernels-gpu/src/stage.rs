//! Staging of 2D windows into shared memory with `cp.async`, shared by the fast kernels:
//! the `sw × sh` window of a row-major `w × h` plane whose top-left input cell is
//! `(gx0, gy0)` (coordinates wrap below 0: ghost cells), into a shared buffer whose rows
//! are `sw` floats apart. Ghost cells are 0.
use crate::device::*;

/// A window of a plane to stage.
#[derive(Clone, Copy)]
pub struct Window {
    /// The plane's first element.
    pub plane: *const f32,
    /// Plane width and height.
    pub w: u32,
    /// Plane height.
    pub h: u32,
    /// Input column of the window's first column (wrapping: may be "negative").
    pub gx0: u32,
    /// Input row of the window's first row (wrapping).
    pub gy0: u32,
    /// Window width in floats, a multiple of 4.
    pub sw: u32,
    /// Window height in rows.
    pub sh: u32,
}

/// Starts the copies of `win` into the shared buffer at shared address `buf`, spread over
/// the block's `threads` threads (`tid` is this thread's index among them). Every thread
/// of the block calls it; the caller commits, waits and synchronizes.
///
/// # Safety
/// `win.plane` holds `w·h` floats; `buf` holds `sw·sh` shared floats, 16-byte aligned;
/// when `w.is_multiple_of(4)`, `gx0` is a multiple of 4 (wrapping), so that 16-byte groups are
/// wholly inside or outside the plane.
#[inline(always)]
pub unsafe fn window(win: Window, buf: u32, tid: u32, threads: u32) {
    let Window {
        plane,
        w,
        h,
        gx0,
        gy0,
        sw,
        sh,
    } = win;
    if w.is_multiple_of(4) {
        // Rows 16-byte aligned: each group of 4 cells is wholly inside the plane or
        // wholly a ghost: one LDGSTS.128 or a zero fill. Thread tid copies the 16-byte
        // column c = tid % f of rows tid / f, + rows_step, ... (the last threads % f
        // threads idle): no division inside the loop.
        let f = sw / 4;
        let rows_step = threads / f;
        let c = tid % f;
        let mut sy = if tid < f * rows_step { tid / f } else { sh };
        let gx = gx0.wrapping_add(4 * c);
        let mut gy = gy0.wrapping_add(sy);
        let mut dst = buf + 4 * (sy * sw + 4 * c);
        while sy < sh {
            let inside = gx < w && gy < h;
            let src = if inside {
                plane.wrapping_add((gy * w + gx) as usize)
            } else {
                plane
            };
            // SAFETY: the group lies inside the buffer, and inside the plane when copied.
            unsafe { cp_async_f4(dst, src, if inside { 16 } else { 0 }) };
            sy += rows_step;
            gy = gy.wrapping_add(rows_step);
            dst += 4 * rows_step * sw;
        }
    } else {
        let mut i = tid;
        while i < sh * sw {
            let (sy, sx) = (i / sw, i % sw);
            let (gy, gx) = (gy0.wrapping_add(sy), gx0.wrapping_add(sx));
            let inside = gy < h && gx < w;
            let src = if inside {
                plane.wrapping_add((gy * w + gx) as usize)
            } else {
                plane
            };
            // SAFETY: the cell lies inside the buffer, and inside the plane when copied.
            unsafe { cp_async_f1(buf + 4 * i, src, if inside { 4 } else { 0 }) };
            i += threads;
        }
    }
}
