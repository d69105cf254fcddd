//! The project's own cuda_std: indices, barrier, shared memory and `.const` masks.
//!
//! This is the only module with intrinsics and inline PTX; kernels read like the
//! textbook's pseudo-code on top of it.
use core::arch::nvptx;

/// `threadIdx.x`
#[inline(always)]
pub fn thread_x() -> u32 {
    // SAFETY: reads a special register; always defined inside a kernel.
    unsafe { nvptx::_thread_idx_x() as u32 }
}
/// `threadIdx.y`
#[inline(always)]
pub fn thread_y() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_thread_idx_y() as u32 }
}
/// `threadIdx.z`
#[inline(always)]
pub fn thread_z() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_thread_idx_z() as u32 }
}
/// `blockIdx.x`
#[inline(always)]
pub fn block_x() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_idx_x() as u32 }
}
/// `blockIdx.y`
#[inline(always)]
pub fn block_y() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_idx_y() as u32 }
}
/// `blockIdx.z`
#[inline(always)]
pub fn block_z() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_idx_z() as u32 }
}
/// `blockDim.x`
#[inline(always)]
pub fn block_dim_x() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_dim_x() as u32 }
}
/// `blockDim.y`
#[inline(always)]
pub fn block_dim_y() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_dim_y() as u32 }
}
/// `blockDim.z`
#[inline(always)]
pub fn block_dim_z() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_block_dim_z() as u32 }
}

/// `gridDim.x`
#[inline(always)]
pub fn grid_dim_x() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_grid_dim_x() as u32 }
}

/// `__syncthreads()`: every thread of the block must reach it.
#[inline(always)]
pub fn sync_threads() {
    // SAFETY: a barrier; callers keep it out of divergent code.
    unsafe { nvptx::_syncthreads() }
}

/// The block's dynamic shared memory (`extern __shared__ float s[]`), sized by the launch.
#[inline(always)]
pub fn shared_f32() -> *mut f32 {
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<F4>() as *mut f32
}

/// `a·b + c` with one rounding (`fma.rn.f32`, FFMA). Rust never contracts `a*b + c` on
/// its own, and PTX `mul.rn`/`add.rn` forbid ptxas from fusing them; nvcc fuses by
/// default, so the textbook kernels use this too to stay the CUDA C++ peers' twins.
#[inline(always)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    core::intrinsics::fmaf32(a, b, c)
}

/// Four floats, 16-byte aligned: one `ld/st.v4.f32` (LDG.128/LDS.128 in SASS).
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct F4(pub [f32; 4]);

/// Loads 16 aligned bytes of read-only global memory through the non-coherent
/// (texture) path, `ld.global.nc.v4.f32`: rustc cannot mark a pointer `__restrict__`, so
/// LLVM would not choose `.nc` by itself.
///
/// # Safety
/// `p` is 16-byte aligned, points to 4 readable floats not written during the kernel.
#[inline(always)]
pub unsafe fn load_nc_f4(p: *const f32) -> F4 {
    let (a, b, c, d): (f32, f32, f32, f32);
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!(
            "ld.global.nc.v4.f32 {{{a}, {b}, {c}, {d}}}, [{p}];",
            a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
            p = in(reg64) p,
            options(pure, readonly, nostack, preserves_flags)
        );
    }
    F4([a, b, c, d])
}

/// Stores 16 aligned bytes with one `st.global.v4.f32` (LLVM otherwise may split a store
/// that it merges with an edge path's scalar stores).
///
/// # Safety
/// `p` is 16-byte aligned and points to 4 writable floats.
#[inline(always)]
pub unsafe fn store_f4(p: *mut f32, v: F4) {
    let [a, b, c, d] = v.0;
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!(
            "st.global.v4.f32 [{p}], {{{a}, {b}, {c}, {d}}};",
            p = in(reg64) p, a = in(reg32) a, b = in(reg32) b, c = in(reg32) c, d = in(reg32) d,
            options(nostack, preserves_flags)
        );
    }
}

/// Loads one read-only float through the non-coherent path (`ld.global.nc.f32`).
///
/// # Safety
/// `p` points to a readable float not written during the kernel.
#[inline(always)]
pub unsafe fn load_nc(p: *const f32) -> f32 {
    let v: f32;
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("ld.global.nc.f32 {v}, [{p}];", v = out(reg32) v, p = in(reg64) p,
            options(pure, readonly, nostack, preserves_flags));
    }
    v
}

/// The 32-bit shared-state-space address of a pointer into shared memory, as
/// `cp.async` takes its destination.
#[inline(always)]
pub fn shared_addr(p: *const f32) -> u32 {
    let a: u32;
    // SAFETY: pure address arithmetic (`cvta.to.shared`); nothing is read or written.
    unsafe {
        core::arch::asm!(
            "{{ .reg .u64 t; cvta.to.shared.u64 t, {p}; cvt.u32.u64 {a}, t; }}",
            a = out(reg32) a, p = in(reg64) p,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    a
}

/// Starts an asynchronous 16-byte copy global → shared (`cp.async.cg`, LDGSTS): the
/// block computes one tile while the next one streams in. `src_bytes` is 16 to copy or
/// 0 to fill zeros (ghost cells) without reading `src`.
///
/// # Safety
/// `dst` is a 16-byte aligned shared address (from [`shared_addr`]); when `src_bytes`
/// is 16, `src` is 16-byte aligned and points to 4 readable floats.
#[inline(always)]
pub unsafe fn cp_async_f4(dst: u32, src: *const f32, src_bytes: u32) {
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!(
            "cp.async.cg.shared.global [{d}], [{s}], 16, {n};",
            d = in(reg32) dst, s = in(reg64) src, n = in(reg32) src_bytes,
            options(nostack, preserves_flags)
        );
    }
}

/// As [`cp_async_f4`] for one float (`cp.async.ca`, 4 bytes), for unaligned rows.
///
/// # Safety
/// `dst` is a 4-byte aligned shared address; when `src_bytes` is 4, `src` is readable.
#[inline(always)]
pub unsafe fn cp_async_f1(dst: u32, src: *const f32, src_bytes: u32) {
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!(
            "cp.async.ca.shared.global [{d}], [{s}], 4, {n};",
            d = in(reg32) dst, s = in(reg64) src, n = in(reg32) src_bytes,
            options(nostack, preserves_flags)
        );
    }
}

/// Closes the group of `cp.async` copies this thread issued since the last commit.
#[inline(always)]
pub fn cp_async_commit() {
    // SAFETY: bookkeeping of this thread's async copies; no memory is touched.
    unsafe { core::arch::asm!("cp.async.commit_group;", options(nostack, preserves_flags)) }
}

/// Waits until at most `N` of this thread's committed copy groups are still pending.
/// Other threads' copies become visible only after a following [`sync_threads`].
#[inline(always)]
pub fn cp_async_wait<const N: u32>() {
    // SAFETY: waits on this thread's own copies; no memory is touched.
    unsafe { core::arch::asm!("cp.async.wait_group {n};", n = const N, options(nostack, preserves_flags)) }
}

/// Waits until at most `stages - 1` copy groups are pending (`stages` is a compile-time
/// constant after inlining, so this is one `cp.async.wait_group`).
#[inline(always)]
fn cp_async_wait_all_but(pending: u32) {
    match pending {
        0 => cp_async_wait::<0>(),
        1 => cp_async_wait::<1>(),
        2 => cp_async_wait::<2>(),
        _ => cp_async_wait::<3>(),
    }
}

/// The persistent, multi-stage tile loop of the fast kernels. Block `b` takes tiles
/// `b, b + gridDim.x, ...`; `stages` shared buffers of `buf_floats` each form a ring:
/// while tile `t` is computed, the copies of the next `stages - 1` tiles are in flight,
/// so memory never waits for arithmetic. `stage(t, shared_address)` must only issue
/// `cp.async` copies; `compute(t, buffer)` reads the staged tile. Every thread of the
/// block must call this (it contains barriers). `stages` is 1 to 4, a constant at the
/// call site so that the ring arithmetic folds away.
#[inline(always)]
pub fn pipelined_tiles(
    stages: u32,
    tiles: u32,
    buf_floats: u32,
    mut stage: impl FnMut(u32, u32),
    mut compute: impl FnMut(u32, *const f32),
) {
    let s = shared_f32();
    let base = shared_addr(s);
    let step = grid_dim_x();
    let first = block_x();
    for k in 0..stages - 1 {
        let t = first + k * step;
        if t < tiles {
            stage(t, base + 4 * buf_floats * k);
        }
        cp_async_commit(); // empty groups keep the count uniform
    }
    let (mut t, mut b) = (first, 0);
    while t < tiles {
        let ahead = t + (stages - 1) * step;
        if ahead < tiles {
            stage(ahead, base + 4 * buf_floats * ((b + stages - 1) % stages));
        }
        cp_async_commit();
        cp_async_wait_all_but(stages - 1); // this thread's copies of tile t have landed
        sync_threads(); // ... and everyone else's
                        // SAFETY: buffer b lies inside the launch's stages * buf_floats shared floats.
        compute(t, unsafe { s.add((buf_floats * b) as usize) });
        sync_threads(); // buffer b is free to be refilled
        t += step;
        b = (b + 1) % stages;
    }
}

/// CUDA's `__launch_bounds__(max_threads, min_blocks)` for an entry: rustc has no such
/// attribute, so this leaves a PTX comment that ptx-builder turns into the entry's
/// `.maxntid`/`.minnctapersm` directives (the register budget ptxas then keeps to).
#[macro_export]
macro_rules! launch_bounds {
    ($entry:ident, $max_threads:literal, $min_blocks:literal) => {
        core::arch::global_asm!(concat!(
            "// launch_bounds ",
            stringify!($entry),
            " ",
            $max_threads,
            " ",
            $min_blocks
        ));
    };
}

// The `__constant__` masks: real PTX `.const` symbols, filled by the host through
// cuModuleGetGlobal (the textbook's cudaMemcpyToSymbol). Together they stay well
// under the 64 KiB constant bank; the sizes fix each dimension's largest radius.
core::arch::global_asm!(
    ".const .align 16 .f32 MASK_1D[4095];",
    ".const .align 16 .f32 MASK_2D[3969];",
    ".const .align 16 .f32 MASK_3D[3375];",
);

/// Largest radius whose `2r+1` taps fit in `MASK_1D`.
pub const MAX_RADIUS_1D: usize = 2047;
/// Largest radius whose `(2r+1)^2` taps fit in `MASK_2D`.
pub const MAX_RADIUS_2D: usize = 31;
/// Largest radius whose `(2r+1)^3` taps fit in `MASK_3D`.
pub const MAX_RADIUS_3D: usize = 7;

macro_rules! const_mask {
    ($name:ident, $sym:literal) => {
        /// A typed view of one `.const` mask symbol; reads compile to `ld.const.f32`.
        pub struct $name;
        impl $name {
            /// The symbol's address (`mov.u64 a, MASK_xD`).
            #[inline(always)]
            pub fn base() -> u64 {
                let a: u64;
                // SAFETY: takes the address of the module's own symbol; touches nothing.
                unsafe {
                    core::arch::asm!(
                        concat!("mov.u64 {a}, ", $sym, ";"),
                        a = out(reg64) a,
                        options(pure, nomem, nostack, preserves_flags)
                    );
                }
                a
            }
            /// Tap `i`, with a run-time index. The address is `base() + 4i` in Rust, so
            /// in a loop LLVM walks one pointer (as nvcc does for `F_c[j]`) and ptxas
            /// loads taps in pairs (`LDC.64`/`ULDC.64`) instead of one `LDC` per tap.
            #[inline(always)]
            pub fn get(i: u32) -> f32 {
                let v: f32;
                // SAFETY: `ld.const` inside the module's own symbol; the host checks the
                // radius so `i` stays inside it.
                unsafe {
                    core::arch::asm!(
                        "ld.const.f32 {v}, [{a}];",
                        v = out(reg32) v,
                        a = in(reg64) Self::base() + (i as u64) * 4,
                        // Not `pure`: LLVM would hoist and CSE every tap into a register
                        // (255 registers and spills at r = 8); left in place, ptxas folds
                        // each load into its FFMA as a constant-bank operand.
                        options(readonly, nostack, preserves_flags)
                    );
                }
                v
            }
            /// Tap `I`, with a compile-time index: an immediate address, which ptxas
            /// folds straight into the FFMA's constant-bank operand.
            #[inline(always)]
            pub fn at<const I: usize>() -> f32 {
                let v: f32;
                // SAFETY: as `get`; the offset is a constant inside the symbol.
                unsafe {
                    core::arch::asm!(
                        concat!("ld.const.f32 {v}, [", $sym, "+{o}];"),
                        v = out(reg32) v,
                        o = const I * 4,
                        options(readonly, nostack, preserves_flags)
                    );
                }
                v
            }
        }
    };
}
const_mask!(Mask1d, "MASK_1D");
const_mask!(Mask2d, "MASK_2D");
const_mask!(Mask3d, "MASK_3D");

/// One float with a plain `ld.global.f32` (LDG through L1, like nvcc's for a `const
/// float*`). For kernels that read either shared or global memory on the two sides of a
/// branch (halos through the cache): written as two ordinary loads, LLVM sinks them into
/// one load of a selected pointer, which only a generic `ld` (LD.E, plus the shared-window
/// conversion) can serve; the asm keeps the global load apart and the shared one `ld.shared`.
///
/// # Safety
/// `p` points to a readable float of global memory.
#[inline(always)]
pub unsafe fn load_global(p: *const f32) -> f32 {
    let v: f32;
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("ld.global.f32 {v}, [{p}];", v = out(reg32) v, p = in(reg64) p,
            options(pure, readonly, nostack, preserves_flags));
    }
    v
}

/// Defines one compile-time-radius entry point per `name = R` pair, each calling the
/// `#[inline(always)]` kernel body `$body(R, args...)` with a literal radius, so LLVM
/// unrolls its loops and folds the offsets (the CUDA C++ `template <int R>` twins).
/// The entries take the body's arguments without the radius.
#[macro_export]
macro_rules! radius_entries {
    (@one $body:ident ($($arg:ident : $ty:ty),* $(,)?) $name:ident $r:literal) => {
        #[doc = concat!("`", stringify!($body), "` at radius ", stringify!($r), " (compile-time).")]
        ///
        /// # Safety
        /// As the run-time-radius entry of this file, with the radius fixed.
        #[no_mangle]
        pub unsafe extern "gpu-kernel" fn $name($($arg: $ty),*) {
            // SAFETY: forwarded from the entry's contract.
            unsafe { $body($r, $($arg),*) }
        }
    };
    ($body:ident $args:tt; $($name:ident = $r:literal),+ $(,)?) => {
        $($crate::radius_entries!(@one $body $args $name $r);)+
    };
}
