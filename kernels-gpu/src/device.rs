//! The project's own cuda_std: indices, barrier, shared memory, `.const` masks, global
//! loads and stores, `cp.async` and the tile pipeline.
//!
//! This is the only module with intrinsics and inline PTX; kernels read like the
//! textbook's pseudo-code on top of it.
//!
//! Pointers: the host passes device addresses in [`ConvArgs`] (generic addresses, as
//! cuMemAlloc returns them). PTX maps every address outside the shared, local, const and
//! param windows to the global space one to one, so these addresses are used as they are
//! by the `.global` instructions below (`ld.global`, `st.global`, `cp.async`).
use core::arch::nvptx;
use layout::shape::Divider;
pub use layout::ConvArgs;

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
/// `gridDim.z`
#[inline(always)]
pub fn grid_dim_z() -> u32 {
    // SAFETY: as above.
    unsafe { nvptx::_grid_dim_z() as u32 }
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

/// `v`, opaque to LLVM: a loop bounded by it stays rolled. Unlike
/// `core::hint::black_box`, which goes through local memory (a load per iteration), the
/// value stays in a register.
#[inline(always)]
pub fn opaque(v: u32) -> u32 {
    let o: u32;
    // SAFETY: a register move; touches no memory.
    unsafe {
        core::arch::asm!(
            "mov.u32 {o}, {v};",
            o = out(reg32) o,
            v = in(reg32) v,
            options(pure, nomem, nostack, preserves_flags)
        )
    };
    o
}

/// `v`, computed here: a register move LLVM may neither sink nor drop (not `pure`). A
/// sum used only under a store's bounds test is otherwise sunk into that branch, which
/// turns tap-major sums into output-major ones that reload every tap per output.
#[inline(always)]
pub fn computed(v: f32) -> f32 {
    let o: f32;
    // SAFETY: a register move; touches no memory.
    unsafe {
        core::arch::asm!("mov.b32 {o}, {v};", o = out(reg32) o, v = in(reg32) v,
            options(nomem, nostack, preserves_flags))
    };
    o
}

/// [`computed`] for a `u32`: a loop's invariant taken into each iteration, so that LLVM
/// does not hoist what follows from it out of the loop (live, in registers, throughout).
#[inline(always)]
pub fn computed_u32(v: u32) -> u32 {
    // The same 32-bit move: the casts are free.
    computed(f32::from_bits(v)).to_bits()
}

/// `(threadIdx.x, threadIdx.y)` read where this is called (`S2R`; not `pure`, so LLVM
/// neither hoists nor merges it): an address computed from them inside a loop is then
/// not held in a register across the loop (`image_patches_c3_r4` at three blocks an SM
/// spilled one such address around its out-of-line border staging).
#[inline(always)]
pub fn thread_xy_here() -> (u32, u32) {
    let (x, y): (u32, u32);
    // SAFETY: reads two special registers; touches no memory.
    unsafe {
        core::arch::asm!("mov.u32 {x}, %tid.x;", "mov.u32 {y}, %tid.y;", x = out(reg32) x, y = out(reg32) y,
            options(nomem, nostack, preserves_flags))
    };
    (x, y)
}

/// `a·b + c` with one rounding (`fma.rn.f32`, FFMA). Rust never contracts `a*b + c` on
/// its own, and PTX `mul.rn`/`add.rn` forbid ptxas from fusing them; nvcc fuses by
/// default, so the textbook kernels use this too to stay the CUDA C++ peers' twins.
#[inline(always)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    core::intrinsics::fmaf32(a, b, c)
}

/// Four floats, 16-byte aligned: one `ld/st.v4.f32` (LDS.128/STG.128 in SASS).
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct F4(pub [f32; 4]);

/// Two floats, 8-byte aligned: one `ld/st.v2.f32` (LDS.64/STG.64 in SASS).
#[derive(Clone, Copy)]
#[repr(C, align(8))]
pub struct F2(pub [f32; 2]);

/// The input array of a launch.
#[inline(always)]
pub fn input(a: &ConvArgs) -> *const f32 {
    a.input as *const f32
}

/// The output array of a launch.
#[inline(always)]
pub fn output(a: &ConvArgs) -> *mut f32 {
    a.output as *mut f32
}

/// The mask of a launch whose family takes it by pointer.
#[inline(always)]
pub fn mask(a: &ConvArgs) -> *const f32 {
    a.mask as *const f32
}

/// One float of global memory with `ld.global.f32` (LDG, as nvcc's for a kernel's
/// `const float*`). Rust cannot give a pointer read from the argument struct the global
/// address space, so a plain read would be a generic `ld`; this keeps the textbook
/// kernels' loads what their twins' are. It also keeps a global load apart from a shared
/// one on the other side of a branch (LLVM would merge the two into one generic load).
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

/// Stores one float with `st.global.f32` (see [`load_global`]).
///
/// # Safety
/// `p` points to a writable float of global memory.
#[inline(always)]
pub unsafe fn store_global(p: *mut f32, v: f32) {
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("st.global.f32 [{p}], {v};", p = in(reg64) p, v = in(reg32) v,
            options(nostack, preserves_flags));
    }
}

/// Stores one float to shared memory at a shared-state-space address (from
/// [`shared_addr`]), as `cp.async` addresses it: ghost cells that hold a value.
///
/// # Safety
/// `addr` is a 4-byte aligned address inside the block's shared memory.
#[inline(always)]
pub unsafe fn store_shared(addr: u32, v: f32) {
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("st.shared.f32 [{a}], {v};", a = in(reg32) addr, v = in(reg32) v,
            options(nostack, preserves_flags));
    }
}

/// Stores four floats to shared memory with one `st.shared.v4.f32` (ghost cells that hold
/// a value, u8 pixels converted on the way in).
///
/// # Safety
/// `addr` is a 16-byte aligned address inside the block's shared memory.
#[inline(always)]
pub unsafe fn store_shared_f4(addr: u32, v: [f32; 4]) {
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("st.shared.v4.f32 [{a}], {{{x}, {y}, {z}, {w}}};", a = in(reg32) addr,
            x = in(reg32) v[0], y = in(reg32) v[1], z = in(reg32) v[2], w = in(reg32) v[3],
            options(nostack, preserves_flags));
    }
}

/// Loads a 32-bit word from shared memory (`ld.shared.u32`): raw u8 pixels that landed
/// there, an output tile's bytes.
///
/// # Safety
/// `addr` is a 4-byte aligned address inside the block's shared memory.
#[inline(always)]
pub unsafe fn load_shared_u32(addr: u32) -> u32 {
    let w: u32;
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("ld.shared.u32 {w}, [{a}];", w = out(reg32) w, a = in(reg32) addr,
            options(readonly, nostack, preserves_flags));
    }
    w
}

/// Adds `v` to the word at shared `addr` atomically and returns the word before
/// (`atom.shared.add.u32`): slots handed out to the threads of a block.
///
/// # Safety
/// `addr` is a 4-byte aligned address inside the block's shared memory.
#[inline(always)]
pub unsafe fn atomic_add_shared_u32(addr: u32, v: u32) -> u32 {
    let old: u32;
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("atom.shared.add.u32 {o}, [{a}], {v};", o = out(reg32) old, a = in(reg32) addr,
            v = in(reg32) v, options(nostack, preserves_flags));
    }
    old
}

/// Adds `v` to the global word at `p` atomically (`atom.global.add.u32`, relaxed, GPU
/// scope) and returns the word before: tiles handed out to a grid's blocks.
///
/// # Safety
/// `p` is a 4-byte aligned global address of a live `u32`.
#[inline(always)]
pub unsafe fn atomic_add_global_u32(p: *mut u32, v: u32) -> u32 {
    let old: u32;
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("atom.global.add.u32 {o}, [{p}], {v};", o = out(reg32) old, p = in(reg64) p,
            v = in(reg32) v, options(nostack, preserves_flags));
    }
    old
}

/// `fence.acq_rel.gpu`: this thread's memory operations before it are seen by the GPU's
/// other threads before those after it.
#[inline(always)]
pub fn fence_gpu() {
    // SAFETY: a fence; touches no memory.
    unsafe { core::arch::asm!("fence.acq_rel.gpu;", options(nostack, preserves_flags)) }
}

/// Loads 16 bytes from shared memory as four words (`ld.shared.v4.u32`).
///
/// # Safety
/// `addr` is a 16-byte aligned address inside the block's shared memory.
#[inline(always)]
pub unsafe fn load_shared_u32x4(addr: u32) -> [u32; 4] {
    let (a, b, c, d): (u32, u32, u32, u32);
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("ld.shared.v4.u32 {{{a}, {b}, {c}, {d}}}, [{p}];", p = in(reg32) addr,
            a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
            options(readonly, nostack, preserves_flags));
    }
    [a, b, c, d]
}

/// Stores the low 16 bits of `v` to shared memory (`st.shared.u16`).
///
/// # Safety
/// `addr` is a 2-byte aligned address inside the block's shared memory.
#[inline(always)]
pub unsafe fn store_shared_u16(addr: u32, v: u32) {
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("st.shared.u16 [{p}], {v};", p = in(reg32) addr, v = in(reg16) v as u16,
            options(nostack, preserves_flags));
    }
}

/// Stores the low byte of `v` to shared memory (`st.shared.u8`).
///
/// # Safety
/// `addr` is an address inside the block's shared memory.
#[inline(always)]
pub unsafe fn store_shared_u8(addr: u32, v: u32) {
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("st.shared.u8 [{p}], {v};", p = in(reg32) addr, v = in(reg32) v,
            options(nostack, preserves_flags));
    }
}

/// Stores two words to shared memory (`st.shared.v2.u32`).
///
/// # Safety
/// `addr` is an 8-byte aligned address inside the block's shared memory.
#[inline(always)]
pub unsafe fn store_shared_u32x2(addr: u32, a: u32, b: u32) {
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("st.shared.v2.u32 [{p}], {{{a}, {b}}};", p = in(reg32) addr, a = in(reg32) a, b = in(reg32) b,
            options(nostack, preserves_flags));
    }
}

/// Stores four words to shared memory (`st.shared.v4.u32`).
///
/// # Safety
/// `addr` is a 16-byte aligned address inside the block's shared memory.
#[inline(always)]
pub unsafe fn store_shared_u32x4(addr: u32, v: [u32; 4]) {
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("st.shared.v4.u32 [{p}], {{{a}, {b}, {c}, {d}}};", p = in(reg32) addr,
            a = in(reg32) v[0], b = in(reg32) v[1], c = in(reg32) v[2], d = in(reg32) v[3],
            options(nostack, preserves_flags));
    }
}

/// Loads one byte of global memory, zero-extended (`ld.global.u8`).
///
/// # Safety
/// `p` points to a readable byte of global memory.
#[inline(always)]
pub unsafe fn load_global_u8(p: *const u8) -> u32 {
    let v: u32;
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("ld.global.u8 {v}, [{p}];", v = out(reg32) v, p = in(reg64) p,
            options(pure, readonly, nostack, preserves_flags));
    }
    v
}

/// Loads 4 bytes of global memory as a word (`ld.global.u32`).
///
/// # Safety
/// `p` is 4-byte aligned with 4 readable bytes of global memory.
#[inline(always)]
pub unsafe fn load_global_u32(p: *const u8) -> u32 {
    let w: u32;
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("ld.global.u32 {w}, [{p}];", w = out(reg32) w, p = in(reg64) p,
            options(pure, readonly, nostack, preserves_flags));
    }
    w
}

/// Loads 4 bytes of global memory as a word through the read-only path
/// (`ld.global.nc.u32`): for inputs no thread of the launch writes.
///
/// # Safety
/// As [`load_global_u32`], and nothing writes those bytes during the launch.
#[inline(always)]
pub unsafe fn load_global_nc_u32(p: *const u8) -> u32 {
    let w: u32;
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("ld.global.nc.u32 {w}, [{p}];", w = out(reg32) w, p = in(reg64) p,
            options(pure, readonly, nostack, preserves_flags));
    }
    w
}

/// Stores the low byte of `w` to global memory (`st.global.u8`).
///
/// # Safety
/// `p` points to a writable byte of global memory.
#[inline(always)]
pub unsafe fn store_global_u8(p: *mut u8, w: u32) {
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("st.global.u8 [{p}], {w};", p = in(reg64) p, w = in(reg32) w,
            options(nostack, preserves_flags));
    }
}

/// Stores a word to global memory (`st.global.u32`).
///
/// # Safety
/// `p` is 4-byte aligned with 4 writable bytes of global memory.
#[inline(always)]
pub unsafe fn store_global_u32(p: *mut u8, w: u32) {
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("st.global.u32 [{p}], {w};", p = in(reg64) p, w = in(reg32) w,
            options(nostack, preserves_flags));
    }
}

/// Stores two words to global memory (`st.global.v2.u32`).
///
/// # Safety
/// `p` is 8-byte aligned with 8 writable bytes of global memory.
#[inline(always)]
pub unsafe fn store_global_u32x2(p: *mut u8, v: [u32; 2]) {
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("st.global.v2.u32 [{p}], {{{a}, {b}}};", p = in(reg64) p,
            a = in(reg32) v[0], b = in(reg32) v[1], options(nostack, preserves_flags));
    }
}

/// Stores four words to global memory (`st.global.v4.u32`).
///
/// # Safety
/// `p` is 16-byte aligned with 16 writable bytes of global memory.
#[inline(always)]
pub unsafe fn store_global_u32x4(p: *mut u8, v: [u32; 4]) {
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("st.global.v4.u32 [{p}], {{{a}, {b}, {c}, {d}}};", p = in(reg64) p,
            a = in(reg32) v[0], b = in(reg32) v[1], c = in(reg32) v[2], d = in(reg32) v[3],
            options(nostack, preserves_flags));
    }
}

/// The 4 bytes of `w` as floats, without the conversion pipe (`I2F`, a quarter of the
/// FMA pipe's rate on sm_90): each byte goes under the exponent of 2^23 (`PRMT`), then
/// 2^23 is subtracted (`FADD`, exact).
#[inline(always)]
pub fn widen_bytes(w: u32) -> [f32; 4] {
    const TWO_23: u32 = 0x4b00_0000;
    // Result bytes: byte k of w, then bytes 0, 0 and 0x4b of TWO_23 (selectors 4, 4, 7).
    let b = |k: u32| f32::from_bits(prmt(w, TWO_23, 0x7440 | k)) - f32::from_bits(TWO_23);
    [b(0), b(1), b(2), b(3)]
}

/// The 4 bytes of `w` as floats through the conversion pipe: one `I2F.U8` a byte (ptxas
/// selects the byte), against [`widen_bytes`]' `PRMT` and `FADD`: half the issue slots,
/// at a quarter of the rate (`conv2d_fast::compute_bytes` mixes the two).
#[inline(always)]
pub fn widen_bytes_cvt(w: u32) -> [f32; 4] {
    [
        (w & 0xff) as f32,
        ((w >> 8) & 0xff) as f32,
        ((w >> 16) & 0xff) as f32,
        (w >> 24) as f32,
    ]
}

/// A float rounded to nearest (ties to even) and saturated to 0..=255, NaN to 0
/// (`cvt.rni.sat.u8.f32`, what NPP's 8-bit filters do), in the low byte: callers read
/// only that byte (`st.global.u8`, [`prmt`]), so no mask is spent on the others.
#[inline(always)]
pub fn u8_sat(v: f32) -> u32 {
    let d: u32;
    // SAFETY: a conversion between registers; no memory is touched.
    unsafe {
        core::arch::asm!("cvt.rni.sat.u8.f32 {d}, {v};", d = out(reg32) d, v = in(reg32) v,
            options(pure, nomem, nostack, preserves_flags));
    }
    d
}

/// 2 sums rounded and saturated as [`u8_sat`] does into bytes 0 and 1 of a word, above
/// them `c`'s low half: each rounded to an s32 (`cvt.rni.s32.f32`, which clamps and takes
/// NaN to 0), then both saturated and packed (`cvt.pack.sat.u8.s32.b32`, its `b` in byte
/// 0 and `a` in byte 1). ptxas fuses the three into one `F2IP.U8.F32` of two floats.
#[inline(always)]
fn pack2_u8(v0: f32, v1: f32, c: u32) -> u32 {
    let d: u32;
    // SAFETY: conversions between registers; no memory is touched.
    unsafe {
        core::arch::asm!(
            "cvt.rni.s32.f32 {r0}, {v0};",
            "cvt.rni.s32.f32 {r1}, {v1};",
            "cvt.pack.sat.u8.s32.b32 {d}, {r1}, {r0}, {c};",
            r0 = out(reg32) _,
            r1 = out(reg32) _,
            d = out(reg32) d,
            v0 = in(reg32) v0,
            v1 = in(reg32) v1,
            c = in(reg32) c,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    d
}

/// 4 sums rounded and saturated ([`u8_sat`]) into the bytes of a word, in order: two
/// [`pack2_u8`], 2 `F2IP`s where [`pack_u8`] takes 4 and 3 `PRMT`s (ncu counts `F2IP`
/// off the conversion pipe, which holds the `I2F`s).
#[inline(always)]
fn pack_u8_pairs(v: [f32; 4]) -> u32 {
    pack2_u8(v[0], v[1], pack2_u8(v[2], v[3], 0))
}

/// 4 sums rounded and saturated ([`u8_sat`]) into the bytes of a word, in order, a byte at
/// a time: each conversion needs one sum live, not two as [`pack_u8_pairs`]' (with those,
/// the baked `image_patches_c1_r4`, at 80 registers, spilled 108 bytes).
#[inline(always)]
fn pack_u8(v: [f32; 4]) -> u32 {
    prmt(
        prmt(u8_sat(v[0]), u8_sat(v[1]), 0x0040),
        prmt(u8_sat(v[2]), u8_sat(v[3]), 0x0040),
        0x5410,
    )
}

/// The bytes of `a` (0..=3) and `b` (4..=7) that the selector's nibbles pick
/// (`prmt.b32`, PRMT): packs a u8 store's 4 saturated bytes in 3 instructions, where
/// shifts, masks and ORs took 7 (ptxas does not know `cvt.rni.sat.u8` clears the high
/// bytes).
#[inline(always)]
pub fn prmt(a: u32, b: u32, selector: u32) -> u32 {
    let d: u32;
    // SAFETY: a byte permutation between registers; no memory is touched.
    unsafe {
        core::arch::asm!("prmt.b32 {d}, {a}, {b}, {s};", d = out(reg32) d, a = in(reg32) a,
            b = in(reg32) b, s = in(reg32) selector, options(pure, nomem, nostack, preserves_flags));
    }
    d
}

/// A pixel type of the image kernels: how it reaches shared memory (as f32) and how a
/// sum leaves for global memory.
pub trait Pixel: Copy {
    /// Interior groups are staged raw ([`Pixel::stage4_raw`], asynchronous) and widened
    /// once they land ([`Pixel::widen4`]), where the kernel gives a raw area: u8, whose
    /// 4-byte loads would otherwise wait out their latency before the widening store.
    const RAW: bool;
    /// Copies 4 consecutive pixels at `src` into 4 floats at the shared address `dst`.
    ///
    /// # Safety
    /// `src` points to 4 readable pixels of global memory, 16-byte aligned for f32 and
    /// 4-byte aligned for u8; `dst` is 16-byte aligned inside shared memory.
    unsafe fn stage4(dst: u32, src: *const Self);
    /// Starts an asynchronous copy of 4 consecutive pixels at `src`, as they are, to the
    /// shared address `dst` (a [`Pixel::RAW`] pixel's; others stage them as `stage4`).
    ///
    /// # Safety
    /// As [`Pixel::stage4`], `dst` aligned to 4 pixels.
    #[inline(always)]
    unsafe fn stage4_raw(dst: u32, src: *const Self) {
        // SAFETY: forwarded.
        unsafe { Self::stage4(dst, src) }
    }
    /// Widens 4 pixels copied by [`Pixel::stage4_raw`] to the shared address `raw` (landed:
    /// after this thread's wait) into 4 floats at the shared address `dst` (a no-op for
    /// pixels that are not [`Pixel::RAW`]).
    ///
    /// # Safety
    /// `raw` holds 4 landed pixels this thread copied; `dst` is 16-byte aligned inside
    /// shared memory.
    #[inline(always)]
    unsafe fn widen4(_dst: u32, _raw: u32) {}
    /// Starts an asynchronous copy of the aligned 4-pixel word holding the pixel at `src`,
    /// as it is, to the shared address `dst` (a [`Pixel::RAW`] pixel's; others stage the
    /// pixel as `stage1`).
    ///
    /// # Safety
    /// As [`Pixel::stage1`], the aligned word holding `src` readable; `dst` 4-byte aligned.
    #[inline(always)]
    unsafe fn stage1_raw(dst: u32, src: *const Self) {
        // SAFETY: forwarded.
        unsafe { Self::stage1(dst, src) }
    }
    /// Widens pixel `byte` of the word [`Pixel::stage1_raw`] copied to `raw` (landed) into
    /// the float at the shared address `dst` (a no-op for pixels that are not
    /// [`Pixel::RAW`]).
    ///
    /// # Safety
    /// `raw` holds a landed word this thread copied; `dst` lies inside shared memory.
    #[inline(always)]
    unsafe fn widen1(_dst: u32, _raw: u32, _byte: u32) {}
    /// Copies one pixel at `src` into the float at the shared address `dst`.
    ///
    /// # Safety
    /// `src` points to a readable pixel of global memory; `dst` is inside shared memory.
    unsafe fn stage1(dst: u32, src: *const Self);
    /// Stores 4 sums at `p`.
    ///
    /// # Safety
    /// `p` points to 4 writable pixels of global memory, aligned as for `stage4`.
    unsafe fn store4(p: *mut Self, v: [f32; 4]);
    /// Stores 8 sums at `p`: two [`Pixel::store4`]s, or for u8 one 8-byte store.
    ///
    /// # Safety
    /// `p` points to 8 writable pixels of global memory, aligned to 8 pixels.
    #[inline(always)]
    unsafe fn store8(p: *mut Self, v: [f32; 8]) {
        // SAFETY: per the trait's contract.
        unsafe {
            Self::store4(p, [v[0], v[1], v[2], v[3]]);
            Self::store4(p.wrapping_add(4), [v[4], v[5], v[6], v[7]]);
        }
    }
    /// Stores 2 sums at `p` (one by one, but for f32).
    ///
    /// # Safety
    /// `p` points to 2 writable pixels of global memory, aligned to 2 pixels.
    #[inline(always)]
    unsafe fn store2(p: *mut Self, v: [f32; 2]) {
        // SAFETY: per the trait's contract.
        unsafe {
            Self::store1(p, v[0]);
            Self::store1(p.wrapping_add(1), v[1]);
        }
    }
    /// Stores one sum at `p`.
    ///
    /// # Safety
    /// `p` points to a writable pixel of global memory.
    unsafe fn store1(p: *mut Self, v: f32);
    /// The pixel at `p`, as an f32 (the textbook image kernel's loads).
    ///
    /// # Safety
    /// `p` points to a readable pixel of global memory.
    unsafe fn load(p: *const Self) -> f32;
}

impl Pixel for f32 {
    const RAW: bool = false;
    #[inline(always)]
    unsafe fn stage4(dst: u32, src: *const f32) {
        // SAFETY: per the trait's contract.
        unsafe { cp_async_f4(dst, src, 16) }
    }
    #[inline(always)]
    unsafe fn stage1(dst: u32, src: *const f32) {
        // SAFETY: per the trait's contract.
        unsafe { cp_async_f1(dst, src, 4) }
    }
    #[inline(always)]
    unsafe fn store4(p: *mut f32, v: [f32; 4]) {
        // SAFETY: per the trait's contract.
        unsafe { store_f4(p, F4(v)) }
    }
    #[inline(always)]
    unsafe fn store2(p: *mut f32, v: [f32; 2]) {
        // SAFETY: per the trait's contract: 8 writable bytes, 8-byte aligned.
        unsafe {
            core::arch::asm!(
                "st.global.v2.f32 [{p}], {{{a}, {b}}};",
                p = in(reg64) p, a = in(reg32) v[0], b = in(reg32) v[1],
                options(nostack, preserves_flags)
            );
        }
    }
    #[inline(always)]
    unsafe fn store1(p: *mut f32, v: f32) {
        // SAFETY: per the trait's contract.
        unsafe { store_global(p, v) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> f32 {
        // SAFETY: per the trait's contract.
        unsafe { load_global(p) }
    }
}

impl Pixel for u8 {
    const RAW: bool = true;
    #[inline(always)]
    unsafe fn stage4_raw(dst: u32, src: *const u8) {
        // SAFETY: per the trait's contract: 4 readable bytes, 4-byte aligned.
        unsafe {
            core::arch::asm!(
                "cp.async.ca.shared.global [{d}], [{s}], 4;",
                d = in(reg32) dst, s = in(reg64) src,
                options(nostack, preserves_flags)
            );
        }
    }
    #[inline(always)]
    unsafe fn widen4(dst: u32, raw: u32) {
        // SAFETY: per the trait's contract: 4 landed bytes at `raw`.
        let w = unsafe { load_shared_u32(raw) };
        // SAFETY: per the trait's contract.
        unsafe { store_shared_f4(dst, widen_bytes(w)) }
    }
    #[inline(always)]
    unsafe fn stage1_raw(dst: u32, src: *const u8) {
        // SAFETY: per the trait's contract: the aligned word holding src is readable.
        unsafe { Self::stage4_raw(dst, src.wrapping_sub(src as usize & 3)) }
    }
    #[inline(always)]
    unsafe fn widen1(dst: u32, raw: u32, byte: u32) {
        // SAFETY: per the trait's contract: a landed word at `raw`.
        let w = unsafe { load_shared_u32(raw) };
        // SAFETY: per the trait's contract.
        unsafe { store_shared(dst, ((w >> (8 * (byte & 3))) & 0xff) as f32) }
    }
    #[inline(always)]
    unsafe fn stage4(dst: u32, src: *const u8) {
        // SAFETY: per the trait's contract: 4 readable bytes, 4-byte aligned.
        let w = unsafe { load_global_u32(src) };
        // SAFETY: per the trait's contract.
        unsafe { store_shared_f4(dst, widen_bytes(w)) }
    }
    #[inline(always)]
    unsafe fn stage1(dst: u32, src: *const u8) {
        // SAFETY: per the trait's contract.
        unsafe { store_shared(dst, Self::load(src)) }
    }
    #[inline(always)]
    unsafe fn load(p: *const u8) -> f32 {
        // SAFETY: per the trait's contract: one readable byte.
        unsafe { load_global_u8(p) as f32 }
    }
    #[inline(always)]
    unsafe fn store4(p: *mut u8, v: [f32; 4]) {
        // SAFETY: per the trait's contract: 4 writable bytes, 4-byte aligned.
        unsafe { store_global_u32(p, pack_u8([v[0], v[1], v[2], v[3]])) }
    }
    #[inline(always)]
    unsafe fn store8(p: *mut u8, v: [f32; 8]) {
        // Two floats a conversion (`pack_u8_pairs`): the byte ring's rows of 8 at r = 1
        // with channels, where the 8 `F2IP` and 6 `PRMT` were 14 of a row's 118
        // instructions, now 4 of 108 (H200, 8192² × 3, three rounds: 141.0–141.1 ->
        // 131.0–131.8 µs).
        let w = [
            pack_u8_pairs([v[0], v[1], v[2], v[3]]),
            pack_u8_pairs([v[4], v[5], v[6], v[7]]),
        ];
        // SAFETY: per the trait's contract: 8 writable bytes, 8-byte aligned.
        unsafe { store_global_u32x2(p, w) }
    }
    #[inline(always)]
    unsafe fn store1(p: *mut u8, v: f32) {
        // SAFETY: per the trait's contract: one writable byte.
        unsafe { store_global_u8(p, u8_sat(v)) }
    }
}

/// Stores 16 aligned bytes with one `st.global.v4.f32` (LLVM otherwise may split a store
/// that it merges with an edge path's scalar stores).
///
/// # Safety
/// `p` is 16-byte aligned and points to 4 writable floats of global memory.
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

/// The 32-bit shared-state-space address of a pointer into shared memory, as
/// `cp.async` takes its destination.
#[inline(always)]
pub fn shared_addr(p: *const f32) -> u32 {
    let a: u32;
    // SAFETY: pure address arithmetic (`cvta.to.shared`); nothing is read or written.
    unsafe {
        core::arch::asm!(
            "{{ .reg .u64 t; cvta.to.shared.u64 t, {p}; cvt.u32.u64 {a}, t; }}",
            a = out(reg32) a, p = in(reg64) p as u64,
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
/// is 16, `src` is 16-byte aligned and points to 4 readable floats of global memory.
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

/// As [`cp_async_f4`] for one float (`cp.async.ca`, 4 bytes), for unaligned rows and
/// ghost cells that read another element.
///
/// # Safety
/// `dst` is a 4-byte aligned shared address; when `src_bytes` is 4, `src` points to a
/// readable float of global memory.
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

// The tensor map the host fills (`layout::tile_map`; ptx-builder checks the name).
core::arch::global_asm!(
    ".const .align {a} .b8 TILE_MAP[{n}];",
    a = const layout::tile_map::ALIGN,
    n = const layout::tile_map::BYTES
);

/// The shared address of barrier `k` of the tensor copies' barriers from `bars`.
#[inline(always)]
pub fn tile_barrier(bars: u32, k: u32) -> u32 {
    bars + 4 * layout::tile_map::BARRIER_FLOATS * k
}

/// Makes the `count` barriers from `bars` ([`tile_barrier`]) ready for tensor copies:
/// thread `tid` 0 initializes them and fences them for the copies, then the block waits
/// for it. Every thread of the block calls it, before any copy.
///
/// # Safety
/// The barriers lie in this block's shared memory (8-byte aligned), which nothing else
/// uses.
#[inline(always)]
pub unsafe fn init_tile_barriers(bars: u32, count: u32, tid: u32) {
    if tid == 0 {
        for k in 0..count {
            // SAFETY: per the function's contract.
            unsafe { barrier_init(tile_barrier(bars, k)) };
        }
        fence_barrier_init();
    }
    sync_threads();
}

/// Retires the `count` barriers from `bars` made by [`init_tile_barriers`], so that they
/// may be made again: thread `tid` 0 invalidates them.
///
/// # Safety
/// Every copy on them landed and every thread of the block finished its waits on them
/// (a block barrier since).
#[inline(always)]
pub unsafe fn inval_tile_barriers(bars: u32, count: u32, tid: u32) {
    if tid == 0 {
        for k in 0..count {
            // SAFETY: per the function's contract.
            unsafe {
                core::arch::asm!(
                    "mbarrier.inval.shared::cta.b64 [{b}];",
                    b = in(reg32) tile_barrier(bars, k),
                    options(nostack, preserves_flags)
                )
            };
        }
    }
}

/// Makes `bar` (a shared address, 8-byte aligned) an `mbarrier` that completes a phase
/// when one thread has arrived and the bytes it announced have landed. One thread
/// initializes; [`fence_barrier_init`] and a block barrier follow before any use.
///
/// # Safety
/// `bar` is 8 bytes of this block's shared memory that nothing else uses.
#[inline(always)]
unsafe fn barrier_init(bar: u32) {
    // SAFETY: per the function's contract.
    unsafe {
        core::arch::asm!("mbarrier.init.shared::cta.b64 [{b}], 1;", b = in(reg32) bar, options(nostack, preserves_flags));
    }
}

/// Makes the initialized `mbarrier`s visible to the tensor copies (the async proxy).
#[inline(always)]
fn fence_barrier_init() {
    // SAFETY: a fence; no memory is touched.
    unsafe {
        core::arch::asm!(
            "fence.mbarrier_init.release.cluster;",
            options(nostack, preserves_flags)
        )
    }
}

/// Orders this thread's shared-memory accesses so far (and those a block barrier made
/// visible to it) before its later tensor copies into the same memory (`fence.proxy.async`).
#[inline(always)]
pub fn fence_proxy_async() {
    // SAFETY: a fence; no memory is touched.
    unsafe { core::arch::asm!("fence.proxy.async.shared::cta;", options(nostack, preserves_flags)) }
}

/// Starts the tensor copy of the `TILE_MAP` box at `(x, y, z)` (elements; negative or
/// past the tensor read as zeros) into shared memory at `dst`, completing on `bar`, after
/// announcing its `bytes` there (the phase's one arrival). With `keep` the box's lines
/// stay in L2 past other lines (`createpolicy ... evict_last`): the 3D walks' halo rows,
/// which the neighbouring columns' blocks copy again some planes later.
///
/// # Safety
/// The host filled `TILE_MAP` with a map of live global memory whose box holds `bytes`
/// (`ConvArgs::tile_map`); `x` times the element's bytes is a multiple of 16 (a box that
/// started 8 bytes into a 16-byte group faulted with an illegal instruction: BENCHMARKS
/// §8, the fifty-eighth session); `dst` is 128-byte aligned and holds the box; `bar` is an
/// initialized barrier ([`init_tile_barriers`]) whose current phase nobody else arrives on.
#[inline(always)]
pub unsafe fn tile_map_load(dst: u32, bar: u32, bytes: u32, [x, y, z]: [u32; 3], keep: bool) {
    // The copy, with (`copy!(keep)`) or without an L2 policy.
    macro_rules! copy {
        () => {
            copy!("", "", "", "")
        };
        (keep) => {
            copy!(
                " .reg .b64 pol;",
                " createpolicy.fractional.L2::evict_last.b64 pol, 1.0;",
                ".L2::cache_hint",
                ", pol"
            )
        };
        ($decl:literal, $make:literal, $hint:literal, $policy:literal) => {
            core::arch::asm!(
                concat!("{{ .reg .u64 m; .reg .b64 st;", $decl),
                "mbarrier.arrive.expect_tx.shared::cta.b64 st, [{b}], {n};",
                concat!("mov.u64 m, TILE_MAP; cvta.const.u64 m, m;", $make),
                concat!(
                    "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                    $hint,
                    " [{d}], [m, {{{x}, {y}, {z}}}], [{b}]",
                    $policy,
                    "; }}"
                ),
                d = in(reg32) dst, b = in(reg32) bar, n = in(reg32) bytes,
                x = in(reg32) x, y = in(reg32) y, z = in(reg32) z,
                options(nostack, preserves_flags)
            )
        };
    }
    // SAFETY: per the function's contract.
    unsafe {
        if keep {
            copy!(keep)
        } else {
            copy!()
        }
    }
}

/// Thread `tid` 0 starts the tensor copy of the box at `at` into the buffer at `dst`,
/// completing on barrier `slot` from `bars` ([`tile_map_load`]), after ordering the
/// shared stores the block made visible to it before the copy's (the buffer's last tile
/// may have been stored by threads: a border tile). Every thread may call it.
///
/// # Safety
/// As [`tile_map_load`], for `tile_barrier(bars, slot)`.
#[inline(always)]
pub unsafe fn start_tile_copy(tid: u32, dst: u32, (bars, slot): (u32, u32), bytes: u32, at: [u32; 3]) {
    if tid == 0 {
        fence_proxy_async();
        // SAFETY: per the function's contract.
        unsafe { tile_map_load(dst, tile_barrier(bars, slot), bytes, at, false) }
    }
}

/// The parity each buffer's tensor-copy barrier ([`tile_barrier`]) completes next: one
/// bit a buffer (at most 32), flipped at each wait; `default()`: every barrier at its
/// first phase. Every thread keeps its own.
#[derive(Default)]
pub struct CopyPhases(core::cell::Cell<u32>);

impl CopyPhases {
    /// Waits for the tensor copy into buffer `slot` (barrier `slot` from `bars`) to land.
    ///
    /// # Safety
    /// The barriers from `bars` are initialized ([`init_tile_barriers`]), and every copy
    /// into buffer `slot` is waited for here once, in order.
    #[inline(always)]
    pub unsafe fn wait(&self, bars: u32, slot: u32) {
        let q = self.0.get();
        // SAFETY: per the function's contract.
        unsafe { barrier_wait(tile_barrier(bars, slot), (q >> slot) & 1) };
        self.0.set(q ^ (1 << slot));
    }
}

/// Waits until the phase of `bar` with parity `parity` (0 or 1: its uses so far, modulo
/// 2) completed: the tensor copy that phase announced has landed, visible to this thread.
///
/// # Safety
/// `bar` is an initialized barrier ([`init_tile_barriers`]).
#[inline(always)]
pub unsafe fn barrier_wait(bar: u32, parity: u32) {
    loop {
        let done: u32;
        // SAFETY: per the function's contract (`try_wait` returns after a while if the
        // phase has not completed; the loop asks again).
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred p;",
                "mbarrier.try_wait.parity.shared::cta.b64 p, [{b}], {q};",
                "selp.u32 {d}, 1, 0, p; }}",
                d = out(reg32) done, b = in(reg32) bar, q = in(reg32) parity,
                options(nostack, preserves_flags)
            );
        }
        if done != 0 {
            break;
        }
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

/// Waits until at most `pending` copy groups are pending (`pending` is a compile-time
/// constant after inlining, so this is one `cp.async.wait_group`).
#[inline(always)]
pub fn cp_async_wait_all_but(pending: u32) {
    match pending {
        0 => cp_async_wait::<0>(),
        1 => cp_async_wait::<1>(),
        2 => cp_async_wait::<2>(),
        _ => cp_async_wait::<3>(),
    }
}

/// The ring of the fast walks (`planes::walk` along depth, `image_fast` down rows):
/// steps `0..steps` stream through `ring` shared slots of `slot_floats`, step `q` in
/// slot `q % ring`. `stage(q, shared_address)` issues step `q`'s copies `ahead` steps
/// before `consume(q, slot)` reads it, with one barrier per step: the slot step `q +
/// ahead` fills was last read at step `q + ahead - ring <= q - 2`, which every thread
/// finished before the barrier of step `q - 1` (so `ring >= ahead + 2`). Every thread of
/// the block calls it; `consume` may add barriers of its own but must not touch other
/// slots. `land(q, slot)` runs after this thread's copies of step `q` landed and before
/// the barrier (widening what `stage` copied raw).
#[inline(always)]
pub fn streamed(
    steps: u32,
    (ahead, ring, slot_floats): (u32, u32, u32),
    mut stage: impl FnMut(u32, u32),
    mut land: impl FnMut(u32, u32),
    mut consume: impl FnMut(u32, *const f32),
) {
    let s = shared_f32();
    let base = shared_addr(s);
    for q in 0..ahead {
        if q < steps {
            stage(q, base + 4 * slot_floats * (q % ring));
        }
        cp_async_commit(); // one group per step, empty ones keep the count uniform
    }
    for q in 0..steps {
        if q + ahead < steps {
            stage(q + ahead, base + 4 * slot_floats * ((q + ahead) % ring));
        }
        cp_async_commit();
        cp_async_wait_all_but(ahead); // this thread's copies of step q landed
        land(q, base + 4 * slot_floats * (q % ring));
        sync_threads(); // ... and everyone else's
        consume(q, s.wrapping_add((slot_floats * (q % ring)) as usize));
    }
}

/// The persistent, multi-stage tile loop of the fast kernels. Block `b` takes tiles
/// `b, b + gridDim.x, ...`; `stages` shared buffers of `buf_floats` each form a ring:
/// while tile `t` is computed, the copies of the next `stages - 1` tiles are in flight,
/// so memory never waits for arithmetic. `stage(t, slot, shared_address)` must only issue
/// copies (and plain stores) into buffer `slot`; `land(t, slot, shared_address)` runs once
/// this thread's `cp.async` copies of tile `t` landed, before the barrier (widening what
/// it copied raw, waiting for a tensor copy), and says whether the block must then wait
/// for everyone's copies (false where each thread waited for a tensor copy itself: the
/// barrier is skipped; the value must be the same in every thread of the block);
/// `compute(t, buffer)` reads the staged tile. Every thread of the block must call this
/// (it contains barriers). `stages` is 1 to 4, a constant at the call site so that the
/// ring arithmetic folds away.
#[inline(always)]
pub fn pipelined_tiles(
    stages: u32,
    tiles: u32,
    buf_floats: u32,
    mut stage: impl FnMut(u32, u32, u32),
    mut land: impl FnMut(u32, u32, u32) -> bool,
    mut compute: impl FnMut(u32, *const f32),
) {
    let s = shared_f32();
    let base = shared_addr(s);
    let step = grid_dim_x();
    let first = block_x();
    for k in 0..stages - 1 {
        let t = first + k * step;
        if t < tiles {
            stage(t, k, base + 4 * buf_floats * k);
        }
        cp_async_commit(); // empty groups keep the count uniform
    }
    let (mut t, mut b) = (first, 0);
    while t < tiles {
        let ahead = t + (stages - 1) * step;
        if ahead < tiles {
            let slot = (b + stages - 1) % stages;
            stage(ahead, slot, base + 4 * buf_floats * slot);
        }
        cp_async_commit();
        cp_async_wait_all_but(stages - 1); // this thread's copies of tile t have landed
        if land(t, b, base + 4 * buf_floats * b) {
            sync_threads(); // ... and everyone else's
        }
        compute(t, s.wrapping_add((buf_floats * b) as usize));
        sync_threads(); // buffer b is free to be refilled
        t += step;
        b = (b + 1) % stages;
    }
}

/// [`pipelined_tiles`] over the tiles `cursor` walks (the block's own, `gridDim.x`
/// apart), with [`counted_tiles`]' closures: `stage` and `compute` take a tile's
/// coordinates, `land` a cursor standing at them. The tile that lands is the tile
/// computed next: one cursor for both, one for the tile staged.
#[inline(always)]
pub fn walked_tiles(
    stages: u32,
    tiles: u32,
    buf_floats: u32,
    cursor: TileCursor,
    mut stage: impl FnMut([u32; 3], u32, u32),
    mut land: impl FnMut(&TileCursor, u32, u32) -> bool,
    mut compute: impl FnMut([u32; 3], *const f32),
) {
    let (mut staged, computed) = (cursor, core::cell::Cell::new(cursor));
    pipelined_tiles(
        stages,
        tiles,
        buf_floats,
        #[inline(always)]
        |_, slot, buf| stage(staged.advance(), slot, buf),
        #[inline(always)]
        |_, slot, buf| land(&computed.get(), slot, buf),
        #[inline(always)]
        |_, s| {
            let mut c = computed.get();
            let tile = c.advance();
            computed.set(c);
            compute(tile, s)
        },
    )
}

/// [`pipelined_tiles`] over the tiles of a grid of `n[0] × n[1] × n[2]` (x fastest), but
/// handed out by a counter rather than walked `gridDim.x` apart: each block stages its
/// first `stages - 1` tiles as the fixed walk would (`b + k·gridDim.x`), and every later
/// tile is the next of the rest, taken from `counter[0]` by thread 0 while the block
/// computes and published to the block in the `layout::args::COUNTED_WORDS` shared words
/// at byte address `words`. A block that finishes early takes more, so the blocks end
/// within about a tile of each other, where the fixed walk leaves the SMs of its
/// `tiles mod gridDim.x` last tiles working alone. `stage` and `compute` take a tile's
/// coordinates, `land` a cursor standing at them (as `pipelined_tiles`' callers pass
/// theirs: read only where needed). `classify` may mark a tile's coordinates (e.g. a high
/// bit no coordinate reaches) with what `stage` and `land` would otherwise work out again
/// from them at each turn: thread 0 applies it once, as it publishes the tile (every
/// thread to the block's first `stages - 1` tiles), and every closure receives the marked
/// coordinates; with `fast_split` it splits the index it takes with dividers made once
/// rather than by two divisions. The last block to finish sets both counter words back to
/// 0 (`counter[1]` counts the blocks done), so the next launch finds them so.
///
/// # Safety
/// `counter` is two global words, 0 at launch and touched by no other launch running
/// at the same time; the block's shared memory holds `stages` buffers of `buf_floats`,
/// and the `COUNTED_WORDS` at `words` (16-byte aligned), which nothing else uses. Every
/// thread of the block calls it.
#[inline(always)]
pub unsafe fn counted_tiles(
    (stages, n): (u32, [u32; 3]),
    (buf_floats, words): (u32, u32),
    (counter, tid, fast_split): (*mut u32, u32, bool),
    classify: impl Fn([u32; 3]) -> [u32; 3],
    mut stage: impl FnMut([u32; 3], u32, u32),
    mut land: impl FnMut(&TileCursor, u32, u32) -> bool,
    mut compute: impl FnMut([u32; 3], *const f32),
) {
    const NONE: u32 = u32::MAX; // a coordinate past the grid: no tile
    let s = shared_f32();
    let base = shared_addr(s);
    let (step, tiles) = (grid_dim_x(), n[0] * n[1] * n[2]);
    // Tile `t`'s coordinates, split by the dividers where given, then classified; `NONE`
    // where there is no tile `t`.
    let coords = |t: u32, divided: Option<(Divider, Divider)>| {
        if t >= tiles {
            return [NONE; 3];
        }
        classify(match divided {
            None => TileCursor::split(n, t),
            Some((dx, dy)) => {
                let row = dx.quotient(t);
                let plane = dy.quotient(row);
                [t - row * n[0], row - plane * n[1], plane]
            }
        })
    };
    // Thread 0 takes the next tile of those past the fixed first rounds: its index, which
    // it splits only when it publishes it, so that its warp waits for the atomic there,
    // after the tile it computes, rather than at the barrier before it.
    let take = || {
        // SAFETY: counter[0] is live (the function's contract).
        unsafe { atomic_add_global_u32(counter, 1) }
    };
    // With `fast_split`, thread 0 splits the indices it takes by the grid's x and y counts
    // with dividers (`Divider`) made once and kept after the two slots: two
    // divisions of ~20 instructions each, on its warp's path to the tile's barrier, become
    // ~5 each (H200, 8192² × 3 u8, r = 1: 128.1 -> 125.4 µs, four rounds).
    let dividers = words + 4 * layout::args::COUNTED_DIVIDERS_AT;
    if fast_split && tid == 0 {
        let ([mx, sx], [my, sy]) = (Divider::new(n[0]).words(), Divider::new(n[1]).words());
        // SAFETY: the contract's words, read by this thread alone.
        unsafe { store_shared_u32x4(dividers, [mx, sx, my, sy]) }
    }
    let publish = |slot: u32, k: u32| {
        if tid == 0 {
            // Here (`computed_u32`): LLVM would split it as soon as the atomic returns.
            // (Saturating: `NONE`, no tile taken, stays past the grid.)
            let t = computed_u32(k).saturating_add((stages - 1) * step);
            let divided = fast_split.then(|| {
                // SAFETY: as above.
                let [mx, sx, my, sy] = unsafe { load_shared_u32x4(dividers) };
                (Divider::from_words([mx, sx]), Divider::from_words([my, sy]))
            });
            let c = coords(t, divided);
            // SAFETY: slot `slot` of the published coordinates (the contract's words).
            unsafe { store_shared_u32x4(words + 16 * slot, [c[0], c[1], c[2], 0]) }
        }
    };
    let read = |slot: u32| {
        // SAFETY: as `publish`.
        let [x, y, z, _] = unsafe { load_shared_u32x4(words + 16 * slot) };
        [x, y, z]
    };
    // The staged tiles not yet computed, oldest first (at most 3: `stages` ≤ 4).
    let mut pend = [[NONE; 3]; 3];
    for k in 0..stages - 1 {
        pend[k as usize] = coords(block_x() + k * step, None);
        if pend[k as usize][0] != NONE {
            stage(pend[k as usize], k, base + 4 * buf_floats * k);
        }
        cp_async_commit(); // empty groups keep the count uniform
    }
    publish(0, if tid == 0 { take() } else { NONE });
    sync_threads();
    let mut ahead = read(0);
    let (mut b, mut q) = (0, 0);
    while pend[0][0] != NONE {
        let mut taken = NONE;
        if ahead[0] != NONE {
            let slot = (b + stages - 1) % stages;
            stage(ahead, slot, base + 4 * buf_floats * slot);
            if tid == 0 {
                taken = take(); // flies while the block computes
            }
        }
        cp_async_commit();
        cp_async_wait_all_but(stages - 1); // this thread's copies of pend[0] have landed
        if land(&TileCursor::at(n, pend[0]), b, base + 4 * buf_floats * b) {
            sync_threads(); // ... and everyone else's
        }
        compute(pend[0], s.wrapping_add((buf_floats * b) as usize));
        // Slot q + 1 was last read after the barrier that ended iteration q - 2, and the
        // barrier that ended iteration q - 1 lies between.
        publish((q + 1) % 2, taken);
        sync_threads(); // buffer b is free to be refilled; the next tile is published
        for k in 0..stages as usize - 2 {
            pend[k] = pend[k + 1];
        }
        pend[stages as usize - 2] = ahead;
        ahead = read((q + 1) % 2);
        b = (b + 1) % stages;
        q += 1;
    }
    if tid == 0 {
        // This block's takes before its count of the blocks done.
        fence_gpu();
        // SAFETY: counter[1] is live (the function's contract).
        let done = unsafe { atomic_add_global_u32(counter.wrapping_add(1), 1) };
        if done == step - 1 {
            // Every block has taken its last tile: set the counter back for the next launch.
            fence_gpu();
            // SAFETY: the two counter words (the function's contract).
            unsafe {
                store_global_u32(counter as *mut u8, 0);
                store_global_u32(counter.wrapping_add(1) as *mut u8, 0);
            }
        }
    }
}

/// Walks the tiles `first, first + step, ...` of a grid of `n[0] × n[1] × n[2]` tiles (x
/// fastest) as `pipelined_tiles` visits them, yielding each tile's coordinates without a
/// division per tile: the first tile and the step are split into coordinates once, then
/// added with carries. [`Self::rotated`] shifts each row of tiles by its row index.
#[derive(Clone, Copy)]
pub struct TileCursor {
    n: [u32; 3],
    step: [u32; 3],
    at: [u32; 3],
    /// Rotating: the current row's index over the whole grid (`y + z·n[1]`) modulo
    /// `n[0]`, and the rows a step moves on by, modulo `n[0]`; `None`: not rotating.
    shift: Option<(u32, u32)>,
}

impl TileCursor {
    /// Splits `v` into coordinates of the grid `n` (x fastest).
    #[inline(always)]
    pub fn split(n: [u32; 3], v: u32) -> [u32; 3] {
        // Never 0: no division-by-zero panic path.
        let (nx, ny) = (n[0].max(1), n[1].max(1));
        [v % nx, (v / nx) % ny, v / nx / ny]
    }

    /// A cursor standing at the tile of coordinates `at` (which it does not move from).
    #[inline(always)]
    pub fn at(n: [u32; 3], at: [u32; 3]) -> Self {
        TileCursor {
            n,
            step: [0; 3],
            at,
            shift: None,
        }
    }

    /// A cursor at tile `first`, moving `step` tiles at a time.
    #[inline(always)]
    pub fn new(n: [u32; 3], first: u32, step: u32) -> Self {
        TileCursor {
            n,
            step: Self::split(n, step),
            at: Self::split(n, first),
            shift: None,
        }
    }

    /// [`Self::new`], but row `j` of the grid's rows (`y + z·n[1]`) yields its tiles'
    /// columns shifted by `j mod n[0]` (wrapping): a persistent block's tiles, the grid's
    /// blocks apart, then cover every column rather than keep to a few (528 blocks over
    /// 192 columns: 4). The shift is carried like the coordinates, with no division per
    /// tile (two of them a tile cost u8 `image_patches` about 120 instructions a thread).
    #[inline(always)]
    pub fn rotated(n: [u32; 3], first: u32, step: u32) -> Self {
        let nx = n[0].max(1); // (never 0: no division-by-zero path)
        TileCursor {
            shift: Some(((first / nx) % nx, (step / nx) % nx)),
            ..Self::new(n, first, step)
        }
    }

    /// The current tile's coordinates.
    #[inline(always)]
    pub fn current(&self) -> [u32; 3] {
        let mut cur = self.at;
        if let Some((shift, _)) = self.shift {
            // cur[0], shift < n[0]: one subtraction keeps the sum below n[0].
            let shifted = cur[0] + shift;
            cur[0] = if shifted >= self.n[0] {
                shifted - self.n[0]
            } else {
                shifted
            };
        }
        cur
    }

    /// The current tile's coordinates, then moves on by one step.
    #[inline(always)]
    pub fn advance(&mut self) -> [u32; 3] {
        let cur = self.current();
        let [x0, y0, z0] = self.at;
        let mut x = x0 + self.step[0];
        let mut y = y0 + self.step[1];
        let mut carry = 0;
        if x >= self.n[0] {
            x -= self.n[0];
            y += 1;
            carry = 1;
        }
        let mut z = z0 + self.step[2];
        if y >= self.n[1] {
            y -= self.n[1];
            z += 1;
        }
        self.at = [x, y, z];
        if let Some((shift, rows)) = self.shift {
            // shift, rows < n[0]: one subtraction keeps the sum below n[0].
            let next = shift + rows + carry;
            self.shift = Some((if next >= self.n[0] { next - self.n[0] } else { next }, rows));
        }
        cur
    }
}

/// CUDA's `__launch_bounds__(max_threads, min_blocks)` for an entry: rustc has no such
/// attribute, so this leaves a PTX comment that ptx-builder turns into the entry's
/// `.maxntid`/`.minnctapersm` directives (the register budget ptxas then keeps to). The
/// numbers are constant expressions, so they come from the family's layout module. A
/// third number, where given, is the blocks per SM of the entry's code with its taps
/// baked in (`ptx_builder::bake`), which needs fewer registers.
#[macro_export]
macro_rules! launch_bounds {
    ($entry:ident, $max_threads:expr, $min_blocks:expr) => {
        $crate::launch_bounds!($entry, $max_threads, $min_blocks, $min_blocks);
    };
    ($entry:ident, $max_threads:expr, $min_blocks:expr, $baked_min_blocks:expr) => {
        core::arch::global_asm!(
            concat!("// launch_bounds ", stringify!($entry), " {t} {b} {k}"),
            t = const $max_threads,
            b = const $min_blocks,
            k = const $baked_min_blocks,
        );
    };
}

/// Declares every `__constant__` mask symbol of [`layout::with_const_masks!`] (real PTX
/// `.const` arrays the host fills through cuModuleGetGlobal, the textbook's
/// cudaMemcpyToSymbol) and a typed reader for each.
macro_rules! declare_const_masks {
    ($($name:ident: $ty:ident = $len:literal;)*) => {$(
        core::arch::global_asm!(concat!(".const .align 16 .f32 ", stringify!($name), "[", $len, "];"));

        #[doc = concat!("Reads the `", stringify!($name), "` symbol; reads compile to `ld.const.f32`.")]
        pub struct $ty;
        impl $ty {
            /// The symbol's address (`mov.u64 a, MASK_xD`).
            #[inline(always)]
            pub fn base() -> u64 {
                let a: u64;
                // SAFETY: takes the address of the module's own symbol; touches nothing.
                unsafe {
                    core::arch::asm!(
                        concat!("mov.u64 {a}, ", stringify!($name), ";"),
                        a = out(reg64) a,
                        options(pure, nomem, nostack, preserves_flags)
                    );
                }
                a
            }
            /// Tap `i`. The address is `base() + 4i` in Rust, so in a loop LLVM walks
            /// one pointer (as nvcc does for `F_c[j]`) and ptxas loads taps in pairs
            /// (`LDC.64`/`ULDC.64`) instead of one `LDC` per tap; with a constant `i`
            /// ptxas (12.9, sm_90) loads it with `ULDC` into a uniform register the
            /// FFMAs read. It never takes a `.const` tap as an FFMA's constant-bank
            /// operand here, not even a hand-written load with one use (BENCHMARKS.md §8,
            /// the twenty-second session).
            #[inline(always)]
            pub fn get(i: usize) -> f32 {
                let v: f32;
                // SAFETY: `ld.const` inside the module's own symbol; the host checks the
                // mask against the symbol's length, so `i` stays inside it.
                unsafe {
                    core::arch::asm!(
                        "ld.const.f32 {v}, [{a}];",
                        v = out(reg32) v,
                        a = in(reg64) Self::base() + (i as u64) * 4, // usize is u64 on nvptx64
                        // Not `pure`: LLVM would hoist and CSE every tap into a register
                        // (255 registers and spills at r = 8); left in place, ptxas loads
                        // each tap where it is used, into a uniform register.
                        options(readonly, nostack, preserves_flags)
                    );
                }
                v
            }
        }
    )*};
}
layout::with_const_masks!(declare_const_masks);

/// Defines one compile-time-radius entry point per `name = R` pair, each calling the
/// `#[inline(always)]` kernel body `$body([R; 3], &args)` with a literal radius on every
/// axis, so LLVM unrolls its loops and folds the offsets (the CUDA C++ `template <int
/// R>` twins). The host uses these entries for masks of radius R on every axis.
#[macro_export]
macro_rules! radius_entries {
    ($body:ident; $($name:ident = $r:literal),+ $(,)?) => {$(
        #[doc = concat!("`", stringify!($body), "` at radius ", stringify!($r), " on every axis (compile-time).")]
        ///
        /// # Safety
        /// As the run-time-radius entry of this file, for a mask of this radius.
        #[no_mangle]
        // `$body` is a kernel body of the invoking file, an `unsafe fn` by design.
        #[allow(clippy::macro_metavars_in_unsafe)]
        pub unsafe extern "gpu-kernel" fn $name(a: $crate::device::ConvArgs) {
            // SAFETY: forwarded from the entry's contract.
            unsafe { $body([$r; 3], &a) }
        }
    )+};
}
