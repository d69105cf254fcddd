//! Staging of 2D windows into shared memory, shared by the fast kernels: the `sw × sh`
//! window of a row-major plane of pixels (f32, or u8 converted to f32 on the way) whose
//! top-left input cell is `(gx0, gy0)` (coordinates wrap below 0), into a shared f32
//! buffer whose rows are `sw` floats apart. Ghost cells follow the ghost-cell mode:
//! interior groups of 4 are one copy (LDGSTS.128 for f32); only groups at the border map
//! each cell to the element it reads (`layout::mode::map_index`) or store the fill value.
use crate::device::*;
use layout::mode::{code, map_index};

/// A window of a plane to stage.
#[derive(Clone, Copy)]
pub struct Window<P> {
    /// The plane's first element.
    pub plane: *const P,
    /// Elements between the starts of two rows of the plane.
    pub row_pitch: u32,
    /// Elements per row that belong to the plane (`width · channels`).
    pub w: u32,
    /// Rows of the plane.
    pub h: u32,
    /// Interleaved channels: ghost cells along x map pixels, keeping the channel.
    pub channels: u32,
    /// Float column of the window's first column (wrapping: may be "negative").
    pub gx0: u32,
    /// Row of the window's first row (wrapping).
    pub gy0: u32,
    /// Window width in floats, a multiple of 4.
    pub sw: u32,
    /// Window height in rows.
    pub sh: u32,
    /// Ghost-cell mode code.
    pub mode: u32,
    /// The value of ghost cells that read no element (zero, constant).
    pub fill: f32,
    /// The whole window is ghost cells that read no element (a plane outside a volume
    /// under zero or constant): fill it without reading.
    pub ghost: bool,
    /// Staged columns at each end of a row that no tap reads (the halo pad beyond the
    /// `R·C` columns taps reach): border cells there take the fill value instead of being
    /// mapped one by one (at r = 1 that is 3 of the 4 cells of a border group).
    pub unread: u32,
    /// Inline the border path (a constant at each call site). Out of line, the border
    /// path costs nothing in the kernels whose patches need every register, but the call
    /// costs registers of its own: kernels with small register budgets (conv1d_fast)
    /// inline it.
    pub inline_border: bool,
}

/// The offset of the element a ghost cell at column `x` (an element of `channels`
/// interleaved per pixel), row `y` reads under `mode`, in a plane of `h` rows of `w`
/// elements `row_pitch` apart; `u32::MAX` for the fill value.
#[inline(always)]
fn source(mode: u32, x: u32, y: u32, w: u32, h: u32, channels: u32, row_pitch: u32) -> u32 {
    let c = channels.max(1); // never 0: no division-by-zero panic path
                             // The pixel and channel of column x (floor division: x may be "negative").
    let (px, ch) = if (x as i32) >= 0 {
        ((x / c) as i32, x % c)
    } else {
        let back = x.wrapping_neg(); // cells before column 0
        let p = back.div_ceil(c);
        (-(p as i32), p * c - back)
    };
    let mx = map_index(mode, px, (w / c) as i32);
    let my = map_index(mode, y as i32, h as i32);
    if mx < 0 || my < 0 {
        return u32::MAX;
    }
    my as u32 * row_pitch + mx as u32 * c + ch
}

/// Stages `count` consecutive cells of row `y` from column `x` into the shared floats
/// from `dst` by the mode: a copy of the element each reads, or the fill value. Only
/// windows at a border come here. Out of line and on scalars (a struct argument would go
/// through local memory): inlined, its index arithmetic takes registers from the fast
/// kernels' patches.
///
/// # Safety
/// The `count` cells from `dst` are inside the buffer; the plane (`h` rows of `w`
/// elements `row_pitch` apart) is readable.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the window's fields, by value
unsafe fn border_cells_inline<P: Pixel>(
    plane: *const P,
    row_pitch: u32,
    w: u32,
    h: u32,
    channels: u32,
    mode: u32,
    fill: f32,
    ghost: bool,
    dst: u32,
    x: u32,
    y: u32,
    count: u32,
) {
    for k in 0..count {
        let x = x.wrapping_add(k);
        let off = if ghost {
            u32::MAX
        } else if x < w && y < h {
            y * row_pitch + x
        } else {
            source(mode, x, y, w, h, channels, row_pitch)
        };
        if off == u32::MAX {
            // SAFETY: the cell is inside the buffer.
            unsafe { store_shared(dst + 4 * k, fill) }
        } else {
            // SAFETY: the offset lies inside the plane (inside, or mapped into it).
            unsafe { P::stage1(dst + 4 * k, plane.wrapping_add(off as usize)) }
        }
    }
}

/// [`border_cells_inline`], out of line.
///
/// # Safety
/// As [`border_cells_inline`].
#[inline(never)]
#[allow(clippy::too_many_arguments)] // the window's fields, by value
unsafe fn border_cells<P: Pixel>(
    plane: *const P,
    row_pitch: u32,
    w: u32,
    h: u32,
    channels: u32,
    mode: u32,
    fill: f32,
    ghost: bool,
    dst: u32,
    x: u32,
    y: u32,
    count: u32,
) {
    // SAFETY: forwarded.
    unsafe { border_cells_inline(plane, row_pitch, w, h, channels, mode, fill, ghost, dst, x, y, count) }
}

/// [`border_cells`] of a window, in line or not as the window says.
///
/// # Safety
/// As [`border_cells`].
#[inline(always)]
unsafe fn cells<P: Pixel>(win: &Window<P>, dst: u32, x: u32, y: u32, count: u32) {
    if win.inline_border {
        // SAFETY: forwarded.
        return unsafe {
            border_cells_inline(
                win.plane,
                win.row_pitch,
                win.w,
                win.h,
                win.channels,
                win.mode,
                win.fill,
                win.ghost,
                dst,
                x,
                y,
                count,
            )
        };
    }
    // SAFETY: forwarded.
    unsafe {
        border_cells(
            win.plane,
            win.row_pitch,
            win.w,
            win.h,
            win.channels,
            win.mode,
            win.fill,
            win.ghost,
            dst,
            x,
            y,
            count,
        )
    }
}

/// The staged columns `[left, end)` that lie in groups wholly inside the plane's columns
/// (`gx0` is a multiple of 4): `(left, end)`, the cells pass stages the others.
#[inline(always)]
fn edge_columns<P>(win: &Window<P>) -> (u32, u32) {
    let left = if (win.gx0 as i32) < 0 {
        win.gx0.wrapping_neg().min(win.sw)
    } else {
        0
    };
    let end = if (win.gx0 as i32) < 0 {
        (win.w & !3).saturating_add(left)
    } else {
        win.w.saturating_sub(win.gx0) & !3
    }
    .clamp(left, win.sw);
    (left, end)
}

/// The second pass of [`window`] for one channel under a mapping mode: every cell of
/// the groups not wholly inside the plane's columns (those before the first group inside
/// and from the end of the last one), one per thread: a copy of the element it maps to,
/// or the fill value where no tap reads it (`unread`).
///
/// # Safety
/// As [`window`], `win.channels == 1`, `row_pitch` a multiple of 4.
#[inline(always)]
unsafe fn edge_cells_inline<P: Pixel>(win: &Window<P>, buf: u32, tid: u32, threads: u32) {
    let (left, end_in) = edge_columns(win);
    let cols = left + (win.sw - end_in);
    if cols == 0 {
        return; // (no division by zero below)
    }
    let mut i = tid;
    while i < cols * win.sh {
        let (sy, c) = (i / cols, i % cols);
        let sx = if c < left { c } else { end_in + (c - left) };
        let dst = buf + 4 * (sy * win.sw + sx);
        if sx < win.unread || sx >= win.sw - win.unread {
            // SAFETY: the cell lies inside the buffer.
            unsafe { store_shared(dst, win.fill) };
        } else {
            let gy = win.gy0.wrapping_add(sy);
            let row = if gy < win.h {
                gy as i32
            } else {
                map_index(win.mode, gy as i32, win.h as i32)
            };
            let gx = win.gx0.wrapping_add(sx);
            let x = if gx < win.w {
                gx as i32
            } else {
                map_index(win.mode, gx as i32, win.w as i32)
            };
            // SAFETY: a mapping mode maps every row and column into the plane; the cell
            // lies inside the buffer.
            unsafe {
                P::stage1(
                    dst,
                    win.plane.wrapping_add((row as u32 * win.row_pitch + x as u32) as usize),
                )
            };
        }
        i += threads;
    }
}

/// [`edge_cells_inline`], out of line: in line, its index arithmetic takes registers from
/// the fast kernels' patches (conv3d_fast at r = 1 spilled). On scalars, as
/// [`border_cells`]: a window passed by reference would live in local memory.
///
/// # Safety
/// As [`edge_cells_inline`] for the window of these fields.
#[inline(never)]
#[allow(clippy::too_many_arguments)] // the window's fields, by value
unsafe fn edge_cells_outlined<P: Pixel>(
    plane: *const P,
    row_pitch: u32,
    (w, h): (u32, u32),
    (gx0, gy0): (u32, u32),
    (sw, sh): (u32, u32),
    mode: u32,
    fill: f32,
    unread: u32,
    buf: u32,
    tid: u32,
    threads: u32,
) {
    let win = Window {
        plane,
        row_pitch,
        w,
        h,
        channels: 1,
        gx0,
        gy0,
        sw,
        sh,
        mode,
        fill,
        ghost: false,
        unread,
        inline_border: false,
    };
    // SAFETY: forwarded.
    unsafe { edge_cells_inline(&win, buf, tid, threads) }
}

/// [`edge_cells_inline`], in line or not as the window says.
///
/// # Safety
/// As [`edge_cells_inline`].
#[inline(always)]
unsafe fn edge_cells<P: Pixel>(win: &Window<P>, buf: u32, tid: u32, threads: u32) {
    if win.inline_border {
        // SAFETY: forwarded.
        unsafe { edge_cells_inline(win, buf, tid, threads) }
    } else {
        // SAFETY: forwarded (one channel, not ghost: the caller's condition).
        unsafe {
            edge_cells_outlined(
                win.plane,
                win.row_pitch,
                (win.w, win.h),
                (win.gx0, win.gy0),
                (win.sw, win.sh),
                win.mode,
                win.fill,
                win.unread,
                buf,
                tid,
                threads,
            )
        }
    }
}

/// Starts the copies of `win` into the shared buffer at shared address `buf`, spread over
/// the block's `threads` threads (`tid` is this thread's index among them). Every thread
/// of the block calls it; the caller commits, waits and synchronizes (fill values are
/// plain shared stores, visible after the same barrier).
///
/// A window wholly inside the plane (most of them) takes a lean loop of 4-element
/// copies; only windows at a border take the loop that checks every group.
///
/// # Safety
/// `win.plane` holds `h` rows of `row_pitch` pixels, aligned to 4 pixels when
/// `row_pitch` is a multiple of 4; `buf` holds `sw·sh` shared floats, 16-byte aligned;
/// `gx0` is a multiple of 4 (wrapping). `sw` is a constant after inlining (no division
/// path).
#[inline(always)]
pub unsafe fn window<P: Pixel>(win: Window<P>, buf: u32, tid: u32, threads: u32) {
    let aligned = win.row_pitch.is_multiple_of(4);
    let f = win.sw / 4;
    let interior = !win.ghost
        && (win.gx0 as i32) >= 0
        && win.gx0 + win.sw <= win.w
        && (win.gy0 as i32) >= 0
        && win.gy0 + win.sh <= win.h;
    if aligned && interior {
        let first = win.plane.wrapping_add((win.gy0 * win.row_pitch + win.gx0) as usize);
        let mut g = tid;
        while g < f * win.sh {
            let (sy, c) = (g / f, g % f);
            // SAFETY: the group lies inside the plane (the window does; aligned: row_pitch
            // and gx0 multiples of 4) and inside the buffer.
            unsafe {
                P::stage4(
                    buf + 4 * (sy * win.sw + 4 * c),
                    first.wrapping_add((sy * win.row_pitch + 4 * c) as usize),
                )
            };
            g += threads;
        }
    } else if aligned {
        // One channel under a mode that maps (nearest, reflect, mirror, wrap): the groups
        // not wholly inside the plane's columns are left to a second pass over their
        // cells, one cell per thread. Mapped group by group, one lane of a warp would map
        // 4 cells while the other 31 wait (border windows ran 1.3-1.7x zero's time).
        let by_cells = win.channels == 1 && !win.ghost && win.mode != code::ZERO && win.mode != code::CONSTANT;
        let mut g = tid;
        while g < f * win.sh {
            let (sy, c) = (g / f, g % f);
            let (gx, gy) = (win.gx0.wrapping_add(4 * c), win.gy0.wrapping_add(sy));
            let dst = buf + 4 * (sy * win.sw + 4 * c);
            let columns_inside = gx < win.w && gx + 4 <= win.w;
            // A row outside the plane reads the row the mode maps it to (-1: fill).
            let row = if win.ghost {
                -1
            } else if gy < win.h {
                gy as i32
            } else {
                map_index(win.mode, gy as i32, win.h as i32)
            };
            if columns_inside && row >= 0 {
                // SAFETY: the group lies inside the plane (aligned) and inside the buffer.
                unsafe { P::stage4(dst, win.plane.wrapping_add((row as u32 * win.row_pitch + gx) as usize)) };
            } else if row < 0 || ((win.mode == code::ZERO || win.mode == code::CONSTANT) && gx >= win.w) {
                // SAFETY: a group of the buffer, wholly ghost cells; nothing is read.
                unsafe { store_shared_f4(dst, [win.fill; 4]) };
            } else if by_cells {
                // The cells pass below stages it.
            } else if win.channels == 1 && row >= 0 {
                // One channel, zero or constant, a group across the right edge: each
                // column by itself, in line.
                let src = win.plane.wrapping_add((row as u32 * win.row_pitch) as usize);
                for k in 0..4 {
                    let x = gx.wrapping_add(k);
                    if x < win.w {
                        // SAFETY: x < w on a row of the plane; the cell lies inside the buffer.
                        unsafe { P::stage1(dst + 4 * k, src.wrapping_add(x as usize)) };
                    } else {
                        // SAFETY: the cell lies inside the buffer.
                        unsafe { store_shared(dst + 4 * k, win.fill) };
                    }
                }
            } else {
                // SAFETY: the group lies inside the buffer.
                unsafe { cells(&win, dst, gx, gy, 4) };
            }
            g += threads;
        }
        if by_cells {
            // Only threads with a cell to stage make the call.
            let (left, end) = edge_columns(&win);
            if tid < (left + win.sw - end) * win.sh {
                // SAFETY: forwarded (the same window and buffer).
                unsafe { edge_cells(&win, buf, tid, threads) };
            }
        }
    } else {
        let mut i = tid;
        while i < win.sh * win.sw {
            let (sy, sx) = (i / win.sw, i % win.sw);
            // SAFETY: the cell lies inside the buffer.
            unsafe { cells(&win, buf + 4 * i, win.gx0.wrapping_add(sx), win.gy0.wrapping_add(sy), 1) };
            i += threads;
        }
    }
}
