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

/// The element of its row a ghost cell at column `x` (an element of `channels`
/// interleaved per pixel) reads under `mode`, in rows of `w` elements: the pixel maps,
/// the channel stays; `u32::MAX` for the fill value.
#[inline(always)]
pub(crate) fn column(mode: u32, x: u32, w: u32, channels: u32) -> u32 {
    if x < w {
        return x;
    }
    let c = channels.max(1); // never 0: no division-by-zero panic path
    let (px, ch) = pixel_of(x, c);
    let mx = map_index(mode, px, (w / c) as i32);
    if mx < 0 {
        return u32::MAX;
    }
    mx as u32 * c + ch
}

/// The pixel and channel of column `x` (`c >= 1` interleaved channels; floor division:
/// `x` may be "negative").
#[inline(always)]
fn pixel_of(x: u32, c: u32) -> (i32, u32) {
    if (x as i32) >= 0 {
        ((x / c) as i32, x % c)
    } else {
        let back = x.wrapping_neg(); // cells before column 0
        let p = back.div_ceil(c);
        (-(p as i32), p * c - back)
    }
}

/// The offset of the element a ghost cell at column `x`, row `y` reads under `mode`, in
/// a plane of `h` rows of `w` elements (`channels` interleaved) `row_pitch` apart;
/// `u32::MAX` for the fill value.
#[inline(always)]
fn source(mode: u32, x: u32, y: u32, w: u32, h: u32, channels: u32, row_pitch: u32) -> u32 {
    let col = column(mode, x, w, channels);
    let my = map_index(mode, y as i32, h as i32);
    if col == u32::MAX || my < 0 {
        return u32::MAX;
    }
    my as u32 * row_pitch + col
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

/// The second pass of [`window`] under a mapping mode: every cell of
/// the groups not wholly inside the plane's columns (those before the first group inside
/// and from the end of the last one), one per thread: a copy of the element it maps to,
/// or the fill value where no tap reads it (`unread`).
///
/// # Safety
/// As [`window`], `row_pitch` a multiple of 4.
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
            let col = column(win.mode, win.gx0.wrapping_add(sx), win.w, win.channels);
            let off = mapped_row(win, sy) * win.row_pitch + col;
            // SAFETY: a mapping mode maps every row and column into the plane; the cell
            // lies inside the buffer.
            unsafe { P::stage1(dst, win.plane.wrapping_add(off as usize)) };
        }
        i += threads;
    }
}

/// The plane row that window row `sy` reads under a mapping mode.
#[inline(always)]
fn mapped_row<P>(win: &Window<P>, sy: u32) -> u32 {
    let gy = win.gy0.wrapping_add(sy);
    if gy < win.h {
        gy
    } else {
        map_index(win.mode, gy as i32, win.h as i32) as u32
    }
}

/// The staged columns at a window's ends that taps read lie in `[lo, hi)`: the unread
/// ones are `[0, lo)` and `[hi, sw)` (edge columns only: the groups wholly inside the
/// plane's columns are copied whole).
#[inline(always)]
fn read_edges<P>(win: &Window<P>) -> (u32, u32) {
    let (left, end_in) = edge_columns(win);
    (win.unread.min(left), win.sw.saturating_sub(win.unread).max(end_in))
}

/// Stores the fill value into the unread edge cells of a walk's `slots` shared buffers
/// (`slot_bytes` apart from `base`), once before the walk: under a mapping mode its
/// [`EdgeCell`]s stage only the cells taps read, and nothing else writes these (every
/// window of the walk has `win`'s columns). Nothing to do where the edge cells are not
/// covered (the edge pass stages every cell each step), the rows are not 4-aligned (every
/// cell is staged each step) or the mode fills by groups.
///
/// # Safety
/// Each slot holds `sw·sh` shared floats; no copy in flight writes these cells.
#[inline(always)]
pub unsafe fn fill_unread<P>(
    win: &Window<P>,
    walk: &Walking,
    (base, slot_bytes, slots): (u32, u32, u32),
    tid: u32,
    threads: u32,
) {
    // Rows not 4-aligned take the cell-by-cell path, which stages these cells each step.
    if !walk.edge.covered || !by_cells(win) || !by_groups(win) {
        return;
    }
    let (lo, hi) = read_edges(win);
    let cols = lo + (win.sw - hi);
    let cells = cols * win.sh;
    // (max(1): no division-by-zero path; with no cells the loop does not run.)
    let (cols, per_slot) = (cols.max(1), cells.max(1));
    let mut i = tid;
    while i < cells * slots {
        let (cell, slot) = (i % per_slot, i / per_slot);
        let (sy, c) = (cell / cols, cell % cols);
        let sx = if c < lo { c } else { hi + (c - lo) };
        // SAFETY: a cell of slot `slot`, inside its buffer.
        unsafe { store_shared(base + slot * slot_bytes + 4 * (sy * win.sw + sx), win.fill) };
        i += threads;
    }
}

/// A thread's cell of the edge pass, worked out once by a walk whose windows keep their
/// columns from one step to the next (they move down rows or through planes): where it
/// lands and the element of its row it reads. Per step only its row is mapped, where
/// that row lies outside the plane (a walk through planes, whose windows keep their rows
/// too, not even that): the pass's divisions and column mapping (on the critical path of
/// every step of a border block) are paid once per block.
#[derive(Clone, Copy)]
pub struct EdgeCell {
    /// Where it lands in the window (`sy·sw + sx`), or [`EdgeCell::NONE`]: this thread has
    /// no cell.
    at: u32,
    /// The element of its row it reads, or with `fixed_rows` of the plane (with
    /// [`EdgeCell::PAST_ROW`] where its aligned word reaches past the row).
    col: u32,
    /// Every window of the walk has the first one's rows: `col` counts from the plane.
    fixed_rows: bool,
    /// The cells taps read are no more than the threads, one to a thread (the unread
    /// ones hold the fill value from [`fill_unread`]); else the pass stages every cell
    /// each step, as in [`window`]. A flag of its own, not a third value of `at`: LLVM
    /// turned the two tests of `at` into a jump table (an indexed constant load and an
    /// indirect branch on every step of a border block, before its barrier).
    covered: bool,
}

impl EdgeCell {
    /// No cell for this thread.
    const NONE: u32 = u32::MAX;

    /// Thread `tid`'s cell of `win`'s edge pass (and of every window of the same columns
    /// and height; with `fixed_rows`, of the same rows too), for `threads` threads. Only
    /// the cells taps read count: the unread ones keep the fill value [`fill_unread`]
    /// stored once per slot (at r = 1 with sector pads, 1 cell of each row's 8 at a
    /// border).
    #[inline(always)]
    pub fn of<P: Pixel>(win: &Window<P>, tid: u32, threads: u32, fixed_rows: bool) -> EdgeCell {
        let (left, end_in) = edge_columns(win);
        let (lo, hi) = read_edges(win);
        // Read columns: l on the left ([lo, left)), then [end_in, hi).
        let l = left - lo;
        let cols = l + (hi - end_in);
        if cols * win.sh > threads {
            return EdgeCell {
                at: Self::NONE,
                col: 0,
                fixed_rows,
                covered: false,
            };
        }
        if tid >= cols * win.sh {
            return EdgeCell {
                at: Self::NONE,
                col: 0,
                fixed_rows,
                covered: true,
            };
        }
        let per_row = cols.max(1); // (cols > 0 here; no division-by-zero path)
        let (sy, c) = (tid / per_row, tid % per_row);
        let sx = if c < l { lo + c } else { end_in + (c - l) };
        // (A mapping mode maps every column: never u32::MAX; columns < 2^31.)
        let col = column(win.mode, win.gx0.wrapping_add(sx), win.w, win.channels);
        let past = P::RAW && (col | 3) >= win.w;
        // (Planes hold < 2^31 elements: bit 31 stays free for PAST_ROW.)
        // (Only the mapping modes use the cell: there every row maps into the plane.)
        let col = if fixed_rows && by_cells(win) {
            mapped_row(win, sy) * win.row_pitch + col
        } else {
            col
        };
        EdgeCell {
            at: sy * win.sw + sx,
            col: if past { col | Self::PAST_ROW } else { col },
            fixed_rows,
            covered: true,
        }
    }

    /// Marks (raw pixels only) a `col` whose aligned 4-element word reaches past its row's
    /// `w` elements: a word copy would read the pitch's padding, never written, so the
    /// cell is copied by itself.
    const PAST_ROW: u32 = 1 << 31;

    /// Whether the cell reads an element whose aligned word lies wholly in its row.
    #[inline(always)]
    fn raw_word(&self) -> bool {
        self.col < Self::PAST_ROW
    }

    /// The element of its row the cell reads (not the fill value).
    #[inline(always)]
    fn element<P: Pixel>(&self) -> u32 {
        if P::RAW {
            self.col & !Self::PAST_ROW
        } else {
            self.col
        }
    }

    /// The element of `win`'s plane the cell reads (`sw` a constant: no division path).
    #[inline(always)]
    fn offset<P: Pixel>(&self, win: &Window<P>) -> u32 {
        if self.fixed_rows {
            return self.element::<P>();
        }
        mapped_row(win, self.at / win.sw.max(1)) * win.row_pitch + self.element::<P>()
    }
}

/// What a walk adds to [`window`]: its [`EdgeCell`], a shared raw area where the
/// groups of [`Pixel::RAW`] pixels land as they are (group `g` at `raw + 4g`, then a word
/// per thread for its edge cell's aligned word), to be widened by [`land`], and for a
/// walk whose windows keep their rows and columns, its [`group_table`].
#[derive(Clone, Copy)]
pub struct Walking {
    /// This thread's edge cell.
    pub edge: EdgeCell,
    /// The raw area's shared address (`sw·sh + 4·threads` bytes, 4-byte aligned), for raw
    /// pixels.
    pub raw: Option<u32>,
    /// Where the walk's [`group_table`] lies: bytes from the dynamic shared base (an
    /// offset, not an address: the base is uniform, the walk's registers are not).
    pub groups: Option<u32>,
}

/// What a [`group_table`] entry below these says: the group's 4 elements start at that
/// element of the plane.
mod entry {
    /// Fill values (zero or constant outside the plane's columns or rows).
    pub const FILL: u32 = u32::MAX;
    /// The edge pass stages its cells (a mapping mode, across the plane's edge).
    pub const CELLS: u32 = u32::MAX - 1;
}

/// Whether a walk of `win`'s windows can stage them by a [`group_table`]: every group
/// that is neither inside the plane nor fill values goes to the edge pass (rows of a
/// multiple of 4 elements, or a mode that maps; else zero or constant rows end inside
/// a group, which the cells of each step fill).
#[inline(always)]
pub fn table_fits<P>(win: &Window<P>) -> bool {
    win.w.is_multiple_of(4) || by_cells(&Window { ghost: false, ..*win })
}

/// Writes, for each group `g` of `win`'s window that this thread stages (`g = tid + k·threads`),
/// what staging it takes at every step of a walk whose windows keep `win`'s rows and
/// columns (a walk through planes), at `table + 4g`: a border window's groups then cost a
/// shared load each rather than their row mapped and columns checked (29% of the windows
/// at r = 4 in `conv3d_separable`, each 122 instructions a warp against 44 inside: the
/// blocks at the borders finished last). Only this thread reads its entries, in program
/// order: no barrier. Planes hold fewer than `entry::CELLS` elements.
///
/// # Safety
/// The `sw·sh / 4` shared words `table` bytes past the dynamic shared base, 4-byte
/// aligned, are this walk's alone; its rows are a multiple of 4 elements long or the mode
/// maps (no group is then worked out cell by cell each step: [`table_fits`]);
/// `sw` is a multiple of 4 (group `g` lands at float `4g` of the window).
#[inline(always)]
pub unsafe fn group_table<P>(win: &Window<P>, table: u32, tid: u32, threads: u32) {
    let table = shared_addr(shared_f32()) + table;
    let win = Window { ghost: false, ..*win };
    let f = win.sw / 4;
    let mut g = tid;
    while g < f * win.sh {
        let (sy, c) = row_col(g, f);
        let (gx, columns_inside, row) = group_at(&win, sy, c);
        // The fill test below is `staged`'s border loop's, kept in step with it by hand:
        // as one shared helper, LLVM compiled 88 entries' mode tests differently.
        let e = if columns_inside && row >= 0 {
            row as u32 * win.row_pitch + gx
        } else if row < 0 || ((win.mode == code::ZERO || win.mode == code::CONSTANT) && gx >= win.w) {
            entry::FILL
        } else {
            // (by_cells: the walk's condition for a table)
            entry::CELLS
        };
        // SAFETY: word g of the table.
        unsafe { store_shared(table + 4 * g, f32::from_bits(e)) };
        g += threads;
    }
}

/// Group `(sy, c)` of a window at a border: its first column in the plane, whether its 4
/// columns lie inside the plane's, and the plane row it reads (the row the mode maps it
/// to; -1: fill values).
#[inline(always)]
fn group_at<P>(win: &Window<P>, sy: u32, c: u32) -> (u32, bool, i32) {
    let (gx, gy) = (win.gx0.wrapping_add(4 * c), win.gy0.wrapping_add(sy));
    let row = if win.ghost {
        -1
    } else if gy < win.h {
        gy as i32
    } else {
        map_index(win.mode, gy as i32, win.h as i32)
    };
    (gx, gx < win.w && gx + 4 <= win.w, row)
}

/// [`edge_cells_inline`], out of line: in line, its index arithmetic takes registers from
/// the fast kernels' patches (conv3d_fast at r = 1 spilled). On scalars, as
/// [`border_cells`]: a window passed by reference would live in local memory. The
/// channel count `C` is compiled in (one more argument made conv2d_fast spill at r = 5).
///
/// # Safety
/// As [`edge_cells_inline`] for the window of these fields, `C` channels.
#[inline(never)]
#[allow(clippy::too_many_arguments)] // the window's fields, by value
unsafe fn edge_cells_outlined<P: Pixel, const C: u32>(
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
        channels: C,
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
    /// The out-of-line call for `C` channels.
    macro_rules! outlined {
        ($c:literal) => {
            // SAFETY: forwarded (not ghost: the caller's condition; `C` is the window's).
            unsafe {
                edge_cells_outlined::<P, $c>(
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
        };
    }
    match win.channels {
        _ if win.inline_border => {}
        1 => return outlined!(1),
        2 => return outlined!(2),
        3 => return outlined!(3),
        4 => return outlined!(4),
        _ => {}
    }
    // SAFETY: forwarded.
    unsafe { edge_cells_inline(win, buf, tid, threads) }
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
    // SAFETY: forwarded.
    unsafe { staged::<P, false>(win, buf, None, tid, threads) }
}

/// Whether [`bytes16`] stages `win`: an [`aligned16`] window wholly inside the plane.
#[inline(always)]
pub fn by_bytes16<P: Pixel>(win: &Window<P>) -> bool {
    aligned16(win) && interior(win)
}

/// Whether `win` holds byte pixels (u8) whose rows, first column and width are 16-pixel
/// aligned, as is the plane: its 16-byte groups inside the plane can be copied as they
/// are ([`bytes16`], [`bytes16_inside`]).
#[inline(always)]
pub fn aligned16<P: Pixel>(win: &Window<P>) -> bool {
    P::RAW
        && core::mem::size_of::<P>() == 1
        && !win.ghost
        && win.row_pitch.is_multiple_of(16)
        && win.gx0.is_multiple_of(16)
        && win.sw.is_multiple_of(16)
        && (win.plane as usize).is_multiple_of(16)
}

/// How a 16-byte group of an [`aligned16`] window is staged ([`group16`]).
#[derive(Clone, Copy)]
enum Group16 {
    /// Copied as it is from this offset of the plane: inside it, or under the mapping
    /// modes a group whose cells map to one whole group (rows above and below the plane;
    /// under wrap, with rows a multiple of 16 cells, beside it too).
    Copy(u32),
    /// Beside the plane, the cells taps read (`n` from cell `at`) are one pixel's, which
    /// the mode maps to cells `from..` of the group of the plane at `off`: that group is
    /// copied into this one's place at staging, and shifted into place once it lands.
    Gather { off: u32, from: u32, at: u32, n: u32 },
    /// Every cell takes the ghost value (beyond the plane under zero or constant, or
    /// read by no tap).
    Fill,
    /// Across the plane's right edge (rows not a multiple of 16 cells): cell by cell.
    Cells,
}

/// Row `sy` (from `gy0`) and the column of the 16-byte group `c` (from `gx0`) of `win`,
/// and how it is staged. Only [`Group16::Cells`] loads once the tile lands, and
/// waits: every other group is a copy at staging or a fill with no load. (Mapping cells
/// one by one in one thread while the block waited made border tiles, at 3.6% of the
/// tiles, about 10% of the time: H200, 8192² × 3 u8, r = 1, zero 172.6–176.4 ->
/// 155.0–158.4 µs.)
#[inline(always)]
fn group16<P>(win: &Window<P>, sy: u32, c: u32) -> (u32, u32, Group16) {
    let (x, y) = (win.gx0.wrapping_add(16 * c), win.gy0.wrapping_add(sy));
    let maps = win.mode >= code::NEAREST;
    let my = if y < win.h {
        y as i32
    } else if maps {
        map_index(win.mode, y as i32, win.h as i32)
    } else {
        -1
    };
    if my < 0 {
        return (x, y, Group16::Fill);
    }
    let row = my as u32 * win.row_pitch;
    if x < win.w && win.w - x >= 16 {
        return (x, y, Group16::Copy(row + x));
    }
    if win.mode == code::WRAP && win.w.is_multiple_of(16) {
        // A period of whole groups: the group's cells stay together.
        return (
            x,
            y,
            Group16::Copy(row + map_index(code::WRAP, x as i32, win.w as i32) as u32),
        );
    }
    // The window columns taps read in this group.
    let (lo, hi) = ((16 * c).max(win.unread), (16 * c + 15).min(win.sw - win.unread - 1));
    if lo > hi {
        return (x, y, Group16::Fill);
    }
    let (xa, xb) = (win.gx0.wrapping_add(lo), win.gx0.wrapping_add(hi));
    if xa < win.w || xb < win.w {
        return (x, y, Group16::Cells);
    }
    if !maps {
        return (x, y, Group16::Fill);
    }
    let ch = win.channels.max(1); // never 0: no division-by-zero panic path
    let ((pa, from), (pb, _)) = (pixel_of(xa, ch), pixel_of(xb, ch));
    let m = map_index(win.mode, pa, (win.w / ch) as i32);
    let first = m as u32 * ch + from;
    let g = first & !15;
    if pa != pb || m < 0 || first + (hi - lo) >= g + 16 || g + 16 > win.w {
        return (x, y, Group16::Cells);
    }
    let gather = Group16::Gather {
        off: row + g,
        from: first - g,
        at: lo - 16 * c,
        n: hi - lo + 1,
    };
    (x, y, gather)
}

/// The u8 cell of `win` at column `x` of row `y`: the element the mode maps it to, or
/// `ghost` where it reads none.
///
/// # Safety
/// `win.plane` holds the window's plane of u8 (`h` rows of `w` elements `row_pitch` apart).
#[inline(always)]
unsafe fn cell<P>(win: &Window<P>, x: u32, y: u32, ghost: u32) -> u32 {
    let off = source(win.mode, x, y, win.w, win.h, win.channels, win.row_pitch);
    if off == u32::MAX {
        ghost
    } else {
        // SAFETY: the offset lies inside the plane (inside, or mapped into it).
        unsafe { load_global_u8((win.plane as *const u8).wrapping_add(off as usize)) }
    }
}

/// Starts the copies of the 16-byte groups of an [`aligned16`] window at the plane's
/// borders that are read from one group of the plane ([`group16`]: copied or gathered),
/// as [`bytes16`] copies a window inside it; [`bytes16_edges`] stages the others, and
/// shifts the gathered ones, once this thread's copies landed. Every thread of the block
/// calls it.
///
/// # Safety
/// As [`window`], `aligned16(&win)`; `raw` holds `sw·sh` shared bytes, 16-byte aligned.
#[inline(always)]
pub unsafe fn bytes16_inside<P: Pixel>(win: &Window<P>, raw: u32, tid: u32, threads: u32) {
    let plane = win.plane as *const u8;
    groups16(
        win,
        tid,
        threads,
        #[inline(always)]
        |q, sy, c| {
            if let (_, _, Group16::Copy(off) | Group16::Gather { off, .. }) = group16(win, sy, c) {
                let src = plane.wrapping_add(off as usize);
                // SAFETY: 16 bytes of a row inside the plane, 16-byte aligned (aligned16,
                // group16); group q of the raw slot, 16-byte aligned.
                unsafe { cp_async_f4(raw + 16 * q, src as *const f32, 16) }
            }
        },
    )
}

/// Calls `each(q, sy, c)` once for each 16-byte group `q` (row `sy`, column `c`) of an
/// [`aligned16`] window, spread over the block's threads: first every group but each
/// row's first and last that taps read, then those, a row a thread. Beside the plane
/// those two are gathered under nearest, reflect and mirror ([`group16`]). Taken in row
/// order, they fall to one or two threads of every warp, which then takes their mapping
/// at each of its steps; taken last, a row a thread, a warp's threads take the same path
/// (H200, 8192² × 3 u8, r = 1: nearest, reflect, mirror 1.030–1.078 -> 1.005–1.013 of
/// zero's time). One loop, so that `each` is inlined once (two spilled).
#[inline(always)]
fn groups16<P>(win: &Window<P>, tid: u32, threads: u32, mut each: impl FnMut(u32, u32, u32)) {
    let f = win.sw / 16;
    let (first, last) = (win.unread / 16, (win.sw - win.unread - 1) / 16);
    let ends = if first == last { 1 } else { 2 };
    let inner = (f - ends) * win.sh;
    let mut k = tid;
    while k < opaque(f * win.sh) {
        let (sy, c) = if k < inner {
            let (sy, mut c) = row_col(k, f - ends);
            c += (c >= first) as u32;
            c += (c >= last && last != first) as u32;
            (sy, c)
        } else if k - inner < win.sh {
            (k - inner, first)
        } else {
            (k - inner - win.sh, last)
        };
        each(sy * f + c, sy, c);
        k += threads;
    }
}

/// Stages the 16-byte groups of an [`aligned16`] window that [`bytes16_inside`] did not
/// copy as they are ([`group16`]): a gathered group's cells shifted into place, a filled
/// one's set to `ghost` (0, or a constant fill that is a byte value), and a group across
/// the plane's right edge cell by cell ([`cell`]; cells no tap reads, `unread` at either
/// end of a row, are 0), with loads that wait. Done when it returns (the caller's barrier
/// publishes it). Every thread of the block calls it, once its own copies landed.
///
/// # Safety
/// As [`bytes16_inside`] for the same window and slot.
#[inline(always)]
pub unsafe fn bytes16_edges<P: Pixel>(win: &Window<P>, raw: u32, ghost: u32, tid: u32, threads: u32) {
    groups16(
        win,
        tid,
        threads,
        #[inline(always)]
        |q, sy, c| {
            let (x, y, how) = group16(win, sy, c);
            match how {
                Group16::Copy(_) => {}
                Group16::Gather { from, at, n, .. } => {
                    // SAFETY: group q of the raw slot, which this thread's copy filled (landed:
                    // `groups16` gives a group the same thread in both calls).
                    let [w0, w1, w2, w3] = unsafe { load_shared_u32x4(raw + 16 * q) };
                    let v = (w0 as u128) | ((w1 as u128) << 32) | ((w2 as u128) << 64) | ((w3 as u128) << 96);
                    let v = ((v >> (8 * from)) & (u128::MAX >> (128 - 8 * n))) << (8 * at);
                    let words = [v as u32, (v >> 32) as u32, (v >> 64) as u32, (v >> 96) as u32];
                    // SAFETY: group q of the raw slot, 16-byte aligned.
                    unsafe { store_shared_u32x4(raw + 16 * q, words) };
                }
                Group16::Fill => {
                    // SAFETY: group q of the raw slot, 16-byte aligned.
                    unsafe { store_shared_u32x4(raw + 16 * q, [ghost * 0x0101_0101; 4]) };
                }
                Group16::Cells => {
                    // Word by word, rolled (unrolled, the mapping was most of the kernel's code).
                    let mut j = 0;
                    while j < opaque(4) {
                        let mut word = 0;
                        for k in 0..4 {
                            let sx = 16 * c + 4 * j + k;
                            if sx >= win.unread && sx < win.sw - win.unread {
                                // SAFETY: the window's plane (the function's contract).
                                word |= unsafe { cell(win, x.wrapping_add(4 * j + k), y, ghost) } << (8 * k);
                            }
                        }
                        // SAFETY: word j of group q of the raw slot.
                        unsafe { store_shared(raw + 16 * q + 4 * j, f32::from_bits(word)) };
                        j += 1;
                    }
                }
            }
        },
    )
}

/// Starts the copies of a [`by_bytes16`] window as it is, 16 bytes a copy, into the raw
/// area at shared address `raw` (its rows `sw` bytes apart), where [`widen16`] widens
/// them into the buffer. Every thread of the block calls it.
///
/// # Safety
/// As [`window`], `by_bytes16(&win)`; `raw` holds `sw·sh` shared bytes, 16-byte aligned.
#[inline(always)]
pub unsafe fn bytes16<P: Pixel>(win: &Window<P>, raw: u32, tid: u32, threads: u32) {
    let f = win.sw / 16;
    let first = win.plane.wrapping_add((win.gy0 * win.row_pitch + win.gx0) as usize);
    let mut q = tid;
    while q < f * win.sh {
        let (sy, c) = row_col(q, f);
        let src = first.wrapping_add((sy * win.row_pitch + 16 * c) as usize);
        // SAFETY: 16 bytes of a row inside the plane, 16-byte aligned (by_bytes16); chunk
        // q of the raw area, 16-byte aligned.
        unsafe { cp_async_f4(raw + 16 * q, src as *const f32, 16) }
        q += threads;
    }
}

/// Stages `win` of u8 pixels as bytes into the raw slot at shared address `raw` (rows
/// `sw` bytes apart), where [`bytes16`] does not take it (at the image's borders, or rows
/// not 16-byte aligned): a word of 4 cells a thread at a time, one load where the 4 lie
/// in the row and the word is aligned, else cell by cell: the element the mode maps the
/// cell to, or `ghost` where it reads none (0, or a constant fill that is a byte value).
/// Loads that wait, all of a thread's `N` words' before its first store (one
/// latency a window rather than one a word): done when it returns (the caller's barrier
/// publishes it). Every thread of the block calls it.
///
/// # Safety
/// As [`window`] with `P` u8; `raw` holds `sw·sh` shared bytes, 4-byte aligned;
/// `N · threads >= sw·sh / 4`.
#[inline(always)]
pub unsafe fn bytes_window<P: Pixel, const N: usize>(win: &Window<P>, raw: u32, ghost: u32, tid: u32, threads: u32) {
    let plane = win.plane as *const u8;
    let f = win.sw / 4;
    // Word g's row, column and address, and whether it is one aligned load.
    let at = |g: u32| {
        let (sy, c) = row_col(g, f);
        let (x, y) = (win.gx0.wrapping_add(4 * c), win.gy0.wrapping_add(sy));
        let p = plane.wrapping_add((y * win.row_pitch + x) as usize);
        let whole = y < win.h && x < win.w && win.w - x >= 4 && (p as usize).is_multiple_of(4);
        (x, y, p, whole)
    };
    let mut words = [0u32; N];
    for (j, word) in words.iter_mut().enumerate() {
        let g = tid + j as u32 * threads;
        if g < f * win.sh {
            let (_, _, p, whole) = at(g);
            if whole {
                // SAFETY: 4 bytes of a row inside the plane, 4-byte aligned.
                *word = unsafe { load_global_u32(p) };
            }
        }
    }
    for (j, &word) in words.iter().enumerate() {
        let g = tid + j as u32 * threads;
        if g < f * win.sh {
            // SAFETY: word g of the raw slot.
            unsafe { store_shared(raw + 4 * g, f32::from_bits(word)) };
        }
    }
    // The words that are not one aligned load, cell by cell, in a rolled loop (unrolled
    // for each word, the mapping was most of the kernel's code).
    let mut g = tid;
    while g < opaque(f * win.sh) {
        let (x, y, _, whole) = at(g);
        if !whole {
            let mut word = 0;
            for k in 0..4 {
                // SAFETY: the window's plane (the function's contract).
                word |= unsafe { cell(win, x.wrapping_add(k), y, ghost) } << (8 * k);
            }
            // SAFETY: word g of the raw slot.
            unsafe { store_shared(raw + 4 * g, f32::from_bits(word)) };
        }
        g += threads;
    }
}

/// Widens the `cells` cells of a window [`bytes16`] copied to `raw` into the buffer at
/// `buf` ([`Pixel::widen4`]), 4 a thread at a time, once every thread's copies landed
/// (the barrier it starts with): neighbouring threads read neighbouring words and store
/// neighbouring 16 bytes (a thread widening its own 16-byte copy stored 64 bytes apart
/// from its neighbours, 4 times the shared-memory wavefronts). Every thread of the block
/// calls it after its own copies landed.
///
/// # Safety
/// As [`bytes16`] for a window of `cells = sw·sh` cells, after this thread's copies
/// landed; `buf` holds `cells` shared floats, 16-byte aligned.
#[inline(always)]
pub unsafe fn widen16<P: Pixel>(raw: u32, buf: u32, cells: u32, tid: u32, threads: u32) {
    // Every thread's copies landed.
    sync_threads();
    // SAFETY: every word landed (the barrier); the buffer holds `cells` floats.
    unsafe { widen_groups::<P>(raw, buf, cells / 4, tid, threads) }
}

/// Widens the raw words `tid, tid + threads, ...` below `groups` at `raw` into the float
/// groups of the same index at `buf` ([`Pixel::widen4`]: word g to floats 4g..4g+4).
///
/// # Safety
/// Those words have landed; `buf` holds `4·groups` shared floats, 16-byte aligned.
#[inline(always)]
unsafe fn widen_groups<P: Pixel>(raw: u32, buf: u32, groups: u32, tid: u32, threads: u32) {
    let mut g = tid;
    while g < groups {
        // SAFETY: word g of the landed raw area; group g of the buffer.
        unsafe { P::widen4(buf + 16 * g, raw + 4 * g) };
        g += threads;
    }
}

/// [`window`] for a walk (`walk`: its edge cell, for `win`'s columns and height, and
/// its raw area): the groups of [`Pixel::RAW`] pixels that copy 4 elements, and the
/// edge cell's aligned word, are copied as they are, asynchronously; [`land`] widens
/// them into the buffer once this thread's copies landed, before the barrier. With
/// `INLINE_EDGES` the edge cells the walk's threads do not cover (`EdgeCell::covered`)
/// are staged in line rather than by the out-of-line call (`layout::families::
/// walk_inline_edges`); [`Window::inline_border`] would put every border path in line.
///
/// # Safety
/// As [`window`]; `walk.raw` holds `sw·sh + 4·threads` shared bytes, 4-byte aligned.
#[inline(always)]
pub unsafe fn walked<P: Pixel, const INLINE_EDGES: bool>(
    win: Window<P>,
    buf: u32,
    walk: &Walking,
    tid: u32,
    threads: u32,
) {
    // SAFETY: forwarded.
    unsafe { staged::<P, INLINE_EDGES>(win, buf, Some(walk), tid, threads) }
}

/// The second half of [`walked`] for [`Pixel::RAW`] pixels (nothing for others): widens
/// this thread's raw groups of `win`, and its edge cell, into the buffer.
///
/// # Safety
/// As [`walked`], called by the same thread with the same arguments after its copies
/// landed.
#[inline(always)]
pub unsafe fn land<P: Pixel>(win: Window<P>, buf: u32, walk: &Walking, tid: u32, threads: u32) {
    let Some(raw) = walk.raw else { return };
    if !P::RAW || !by_groups(&win) {
        return;
    }
    let f = win.sw / 4;
    if interior(&win) {
        // Every group was copied; the window's floats are its groups in order (rows are
        // `sw = 4f` floats apart): group g's at buf + 16g.
        // SAFETY: this thread copied these groups raw and they have landed; the buffer
        // holds the window's 4f·sh floats.
        return unsafe { widen_groups::<P>(raw, buf, f * win.sh, tid, threads) };
    }
    let mut g = tid;
    while g < f * win.sh {
        let (sy, c) = row_col(g, f);
        let (_, columns_inside, row) = group_at(&win, sy, c);
        if columns_inside && row >= 0 {
            // SAFETY: group g was copied raw by this thread and has landed; the group
            // lies inside the buffer.
            unsafe { P::widen4(buf + 4 * (sy * win.sw + 4 * c), raw + 4 * g) };
        }
        g += threads;
    }
    let e = &walk.edge;
    if e.at != EdgeCell::NONE && e.raw_word() && by_cells(&win) {
        let off = e.offset(&win);
        let byte = (win.plane.wrapping_add(off as usize) as usize & 3) as u32;
        // SAFETY: the cell's aligned word was copied raw by this thread to its word after
        // the groups, and has landed; the cell lies inside the buffer.
        unsafe { P::widen1(buf + 4 * e.at, raw + 4 * (f * win.sh + tid), byte) };
    }
}

/// Group `g` of a window `f` groups wide: its row and its column. `g` is opaque to the
/// division: knowing it small, LLVM narrows `g / f` to 16-bit arithmetic that costs ten
/// instructions a group, not a 32-bit multiply-high (sm_90 SASS of conv2d_separable_r4:
/// 24 instructions a 16-byte copy -> 14).
#[inline(always)]
fn row_col(g: u32, f: u32) -> (u32, u32) {
    (opaque(g) / f, opaque(g) % f)
}

/// Whether the window's rows start 4-element aligned (`row_pitch` a multiple of 4): then
/// [`window`] stages it by groups of 4; else cell by cell, every cell every step.
#[inline(always)]
fn by_groups<P>(win: &Window<P>) -> bool {
    win.row_pitch.is_multiple_of(4)
}

/// Whether the window lies wholly inside the plane (most of them): a lean loop of
/// 4-element copies stages it.
#[inline(always)]
pub fn interior<P>(win: &Window<P>) -> bool {
    !win.ghost
        && (win.gx0 as i32) >= 0
        && win.gx0 + win.sw <= win.w
        && (win.gy0 as i32) >= 0
        && win.gy0 + win.sh <= win.h
}

/// Writes the ghost cells of a one-channel window whose cells came by a tensor copy,
/// which reads cells outside the plane as zeros: each cell outside the plane in window
/// columns `x_lo..x_hi` and rows `0..rows` (those the taps of the outputs inside the plane
/// read) takes the element `mode` maps it to, or the fill. The element comes from the
/// buffer where the copy staged it (nearest, reflect and mirror, the window wider than
/// the mask), else from the plane (wrap). Cells inside the plane are only read and
/// cells outside it only written, so the threads need no barrier among themselves; the
/// block's barrier must follow before the window is read. Every thread of the block
/// calls it. Out of line, on scalars (a struct argument would go through local memory):
/// only border windows under a mapping or constant mode come here.
///
/// # Safety
/// `plane` holds `h` rows of `w` f32 elements `row_pitch` apart; `buf` is the buffer of
/// the window from column `gx0`, row `gy0` of the plane (wrapping: may be "negative"),
/// `sw × sh` floats, its copy landed; `x_lo <= x_hi <= sw`, `rows <= sh`.
#[inline(never)]
#[allow(clippy::too_many_arguments)] // the window's fields, by value
pub unsafe fn ghosts_after_copy(
    plane: *const f32,
    row_pitch: u32,
    (w, h): (u32, u32),
    (gx0, gy0): (u32, u32),
    (sw, sh): (u32, u32),
    (mode, fill): (u32, f32),
    buf: u32,
    (x_lo, x_hi): (u32, u32),
    rows: u32,
    (tid, threads): (u32, u32),
) {
    // The window's origin as signed numbers (left of or above the plane: negative).
    let (ix0, iy0) = (gx0 as i32 as i64, gy0 as i32 as i64);
    let clamp = |v: i64, lo: i64, hi: i64| v.max(lo).min(hi) as u32;
    // The window's columns and rows inside the plane: c0..c1 of x_lo..x_hi, r0..r1 of 0..rows.
    let (c0, c1) = (
        clamp(-ix0, x_lo as i64, x_hi as i64),
        clamp(w as i64 - ix0, x_lo as i64, x_hi as i64),
    );
    let (r0, r1) = (clamp(-iy0, 0, rows as i64), clamp(h as i64 - iy0, 0, rows as i64));
    let c1 = c1.max(c0);
    let r1 = r1.max(r0);
    // Rows outside the plane, whole (x_lo..x_hi); then the rows inside, their columns outside.
    let width = (x_hi - x_lo).max(1);
    let outside_rows = (r0 + rows - r1) * (x_hi - x_lo);
    let (left, side) = (c0 - x_lo, (c0 - x_lo) + (x_hi - c1));
    let cells = outside_rows + (r1 - r0) * side;
    let mut i = tid;
    while i < cells {
        let (row, col) = if i < outside_rows {
            let rr = i / width;
            (if rr < r0 { rr } else { r1 + (rr - r0) }, x_lo + i % width)
        } else {
            let j = i - outside_rows;
            let sd = side.max(1); // (side > 0 here: no division-by-zero path)
            let (rr, q) = (j / sd, j % sd);
            (r0 + rr, if q < left { x_lo + q } else { c1 + (q - left) })
        };
        let (gx, gy) = (gx0.wrapping_add(col), gy0.wrapping_add(row));
        let sx = column(mode, gx, w, 1);
        let sy = map_index(mode, gy as i32, h as i32);
        let v = if sx == u32::MAX || sy < 0 {
            fill
        } else {
            let (wc, wr) = (sx.wrapping_sub(gx0), (sy as u32).wrapping_sub(gy0));
            if wc < sw && wr < sh {
                // SAFETY: a cell of the buffer inside the plane: the copy staged it.
                f32::from_bits(unsafe { load_shared_u32(buf + 4 * (wr * sw + wc)) })
            } else {
                // SAFETY: (sx, sy) lies inside the plane.
                unsafe { load_global(plane.wrapping_add(sy as usize * row_pitch as usize + sx as usize)) }
            }
        };
        // SAFETY: row < rows <= sh, col < x_hi <= sw: a cell of the buffer.
        unsafe { store_shared(buf + 4 * (row * sw + col), v) };
        i += threads;
    }
}

/// Under a mode that maps (nearest, reflect, mirror, wrap), a border window's groups not
/// wholly inside the plane's columns are left to a second pass over their cells, one cell
/// per thread. Mapped group by group, one lane of a warp would map 4 cells while the
/// other 31 wait (border windows ran 1.3-1.7x zero's time).
#[inline(always)]
fn by_cells<P>(win: &Window<P>) -> bool {
    !win.ghost && win.mode != code::ZERO && win.mode != code::CONSTANT
}

/// [`window`] or [`walked`].
///
/// # Safety
/// As [`walked`] where `walk` is given, else as [`window`].
#[inline(always)]
unsafe fn staged<P: Pixel, const INLINE_EDGES: bool>(
    win: Window<P>,
    buf: u32,
    walk: Option<&Walking>,
    tid: u32,
    threads: u32,
) {
    let aligned = by_groups(&win);
    let f = win.sw / 4;
    let raw = match walk {
        Some(&Walking { raw: Some(raw), .. }) if P::RAW => Some(raw),
        _ => None,
    };
    // A group of 4 elements of the plane from `src`, group g of the window.
    // The callers' conditions: the group lies inside the plane (aligned: row_pitch and
    // the column multiples of 4), and inside the buffer.
    let copy = |g: u32, dst: u32, src: *const P| match raw {
        Some(raw) => {
            // SAFETY: as above; group g's word of the raw area lies inside it.
            unsafe { P::stage4_raw(raw + 4 * g, src) }
        }
        None => {
            // SAFETY: as above.
            unsafe { P::stage4(dst, src) }
        }
    };
    if aligned && interior(&win) {
        let first = win.plane.wrapping_add((win.gy0 * win.row_pitch + win.gx0) as usize);
        // Group g = sy·f + c of the window: buffer floats 4g.. (rows are sw = 4f floats
        // apart), plane elements sy·row_pitch + 4c past the first (the window lies inside
        // the plane).
        let mut g = tid;
        while g < f * win.sh {
            let (sy, c) = row_col(g, f);
            copy(
                g,
                buf + 16 * g,
                first.wrapping_add((sy * win.row_pitch + 4 * c) as usize),
            );
            g += threads;
        }
    } else if aligned {
        let by_cells = by_cells(&win);
        let table = match walk {
            Some(&Walking { groups: Some(t), .. }) if !win.ghost => Some(shared_addr(shared_f32()) + t),
            _ => None,
        };
        let mut g = tid;
        if let Some(table) = table {
            while g < f * win.sh {
                // SAFETY: this thread's entry of the table (`group_table`).
                let e = unsafe { load_shared_u32(table + 4 * g) };
                if e < entry::CELLS {
                    copy(g, buf + 16 * g, win.plane.wrapping_add(e as usize));
                } else if e == entry::FILL {
                    // SAFETY: a group of the buffer, wholly ghost cells; nothing is read.
                    unsafe { store_shared_f4(buf + 16 * g, [win.fill; 4]) };
                }
                g += threads;
            }
        }
        // Without a table (after it, g is past the groups).
        while g < f * win.sh {
            let (sy, c) = row_col(g, f);
            let (gx, columns_inside, row) = group_at(&win, sy, c);
            let dst = buf + 4 * (sy * win.sw + 4 * c);
            if columns_inside && row >= 0 {
                copy(
                    g,
                    dst,
                    win.plane.wrapping_add((row as u32 * win.row_pitch + gx) as usize),
                );
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
                unsafe { cells(&win, dst, gx, win.gy0.wrapping_add(sy), 4) };
            }
            g += threads;
        }
        match walk {
            Some(&Walking { edge: e, .. }) if by_cells && e.covered => {
                // The walk's cell: only its row is mapped here.
                if e.at != EdgeCell::NONE {
                    let dst = buf + 4 * e.at;
                    let off = e.offset(&win);
                    let src = win.plane.wrapping_add(off as usize);
                    // A mapping mode maps the cell into the plane (its aligned word too:
                    // rows start 4-pixel aligned).
                    match raw {
                        Some(raw) if e.raw_word() => {
                            // SAFETY: as above; the thread's word follows the raw groups.
                            unsafe { P::stage1_raw(raw + 4 * (f * win.sh + tid), src) }
                        }
                        _ => {
                            // SAFETY: as above; the cell lies inside the buffer.
                            unsafe { P::stage1(dst, src) }
                        }
                    }
                }
            }
            _ if by_cells => {
                // Only threads with a cell to stage make the call.
                let (left, end) = edge_columns(&win);
                if tid < (left + win.sw - end) * win.sh {
                    // SAFETY: forwarded (the same window and buffer).
                    unsafe {
                        if INLINE_EDGES {
                            edge_cells_inline(&win, buf, tid, threads)
                        } else {
                            edge_cells(&win, buf, tid, threads)
                        }
                    };
                }
            }
            _ => {}
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
