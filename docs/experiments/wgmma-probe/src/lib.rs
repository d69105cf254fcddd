//! wgmma (sm_90a) probes: does our reading of the fragment and descriptor layouts hold,
//! and how fast is TF32 `wgmma.mma_async` m64nNk8 with A in registers, B in shared memory.
#![no_std]
#![feature(abi_gpu_kernel, stdarch_nvptx, asm_experimental_arch)]
#![feature(core_intrinsics, gpu_intrinsics, gpu_launch_sized_workgroup_mem)]
#![allow(internal_features, improper_gpu_kernel_arg, clippy::missing_safety_doc)]
use core::arch::asm;
use core::arch::nvptx;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: trap.
    unsafe { nvptx::trap() }
}

#[repr(C, align(16))]
struct F4([f32; 4]);

#[inline(always)]
fn smem() -> *mut f32 {
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<F4>() as *mut f32
}
#[inline(always)]
fn tid() -> u32 {
    // SAFETY: special register.
    unsafe { nvptx::_thread_idx_x() as u32 }
}
#[inline(always)]
fn bid() -> u32 {
    // SAFETY: special register.
    unsafe { nvptx::_block_idx_x() as u32 }
}
#[inline(always)]
fn sync() {
    // SAFETY: barrier.
    unsafe { nvptx::_syncthreads() }
}
#[inline(always)]
fn saddr(p: *const f32) -> u32 {
    let a: u32;
    // SAFETY: address arithmetic.
    unsafe {
        asm!("{{ .reg .u64 t; cvta.to.shared.u64 t, {p}; cvt.u32.u64 {a}, t; }}",
            a = out(reg32) a, p = in(reg64) p as u64, options(pure, nomem, nostack));
    }
    a
}
/// K-major, no swizzle: start, LBO (K-adjacent core matrices), SBO (M/N-adjacent 8-row groups).
#[inline(always)]
fn desc(addr: u32, lbo: u32, sbo: u32) -> u64 {
    (((addr & 0x3ffff) >> 4) as u64) | ((((lbo & 0x3ffff) >> 4) as u64) << 16) | ((((sbo & 0x3ffff) >> 4) as u64) << 32)
}
#[inline(always)]
fn fence() {
    // SAFETY: wgmma ordering.
    unsafe { asm!("wgmma.fence.sync.aligned;", options(nostack)) }
}
/// Pins the accumulators' values here (an empty asm that defines them), so that their
/// initialisation stays before the next `wgmma.fence`.
#[inline(always)]
fn pin8(d: &mut [f32; 8]) {
    // SAFETY: no instruction.
    unsafe {
        asm!("// pin {0} {1} {2} {3} {4} {5} {6} {7}",
            inout(reg32) d[0], inout(reg32) d[1], inout(reg32) d[2], inout(reg32) d[3],
            inout(reg32) d[4], inout(reg32) d[5], inout(reg32) d[6], inout(reg32) d[7], options(nostack));
    }
}
#[inline(always)]
fn commit() {
    // SAFETY: wgmma bookkeeping.
    unsafe { asm!("wgmma.commit_group.sync.aligned;", options(nostack)) }
}
#[inline(always)]
fn wait0() {
    // SAFETY: wgmma bookkeeping.
    unsafe { asm!("wgmma.wait_group.sync.aligned 0;", options(nostack)) }
}
#[inline(always)]
fn wait1() {
    // SAFETY: wgmma bookkeeping.
    unsafe { asm!("wgmma.wait_group.sync.aligned 1;", options(nostack)) }
}
#[inline(always)]
fn n8(d: &mut [f32; 4], a: &[u32; 4], b: u64) {
    // SAFETY: registers and the B descriptor's shared memory.
    unsafe {
        asm!("{{ .reg .pred p; setp.ne.b32 p, 1, 0;",
            "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {b}, p, 1, 1; }}",
            d0 = inout(reg32) d[0], d1 = inout(reg32) d[1], d2 = inout(reg32) d[2], d3 = inout(reg32) d[3],
            a0 = in(reg32) a[0], a1 = in(reg32) a[1], a2 = in(reg32) a[2], a3 = in(reg32) a[3],
            b = in(reg64) b, options(nostack));
    }
}
#[inline(always)]
fn n16(d: &mut [f32; 8], a: &[u32; 4], b: u64) {
    // SAFETY: registers and the B descriptor's shared memory.
    unsafe {
        asm!("{{ .reg .pred p; setp.ne.b32 p, 1, 0;",
            "wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 {{{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}}}, {{{a0}, {a1}, {a2}, {a3}}}, {b}, p, 1, 1; }}",
            d0 = inout(reg32) d[0], d1 = inout(reg32) d[1], d2 = inout(reg32) d[2], d3 = inout(reg32) d[3],
            d4 = inout(reg32) d[4], d5 = inout(reg32) d[5], d6 = inout(reg32) d[6], d7 = inout(reg32) d[7],
            a0 = in(reg32) a[0], a1 = in(reg32) a[1], a2 = in(reg32) a[2], a3 = in(reg32) a[3],
            b = in(reg64) b, options(nostack));
    }
}
#[inline(always)]
fn n32x(d: &mut [f32; 16], a: &[u32; 4], b: u64) {
    // SAFETY: registers and the B descriptor's shared memory.
    unsafe {
        asm!("{{ .reg .pred p; setp.ne.b32 p, 1, 0;",
            "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 {{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}}}, {{{a0}, {a1}, {a2}, {a3}}}, {b}, p, 1, 1; }}",
            inout(reg32) d[0], inout(reg32) d[1], inout(reg32) d[2], inout(reg32) d[3], inout(reg32) d[4], inout(reg32) d[5], inout(reg32) d[6], inout(reg32) d[7], inout(reg32) d[8], inout(reg32) d[9], inout(reg32) d[10], inout(reg32) d[11], inout(reg32) d[12], inout(reg32) d[13], inout(reg32) d[14], inout(reg32) d[15],
            a0 = in(reg32) a[0], a1 = in(reg32) a[1], a2 = in(reg32) a[2], a3 = in(reg32) a[3],
            b = in(reg64) b, options(nostack));
    }
}
/// A from shared memory too (both descriptors).
#[inline(always)]
fn n8ss(d: &mut [f32; 4], a: u64, b: u64) {
    // SAFETY: registers and the descriptors' shared memory.
    unsafe {
        asm!("{{ .reg .pred p; setp.ne.b32 p, 1, 0;",
            "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {{{d0}, {d1}, {d2}, {d3}}}, {a}, {b}, p, 1, 1; }}",
            d0 = inout(reg32) d[0], d1 = inout(reg32) d[1], d2 = inout(reg32) d[2], d3 = inout(reg32) d[3],
            a = in(reg64) a, b = in(reg64) b, options(nostack));
    }
}

/// Byte offset of element (row, k) in a K-major no-swizzle layout with the given LBO/SBO.
#[inline(always)]
fn kmaj(row: u32, k: u32, lbo: u32, sbo: u32) -> u32 {
    (row / 8) * sbo + (k / 4) * lbo + (row % 8) * 16 + (k % 4) * 4
}

#[repr(C)]
pub struct CheckArgs {
    pub a: *const f32, // 64 x 8 row-major
    pub b: *const f32, // n x 8 (row n holds B[.][n] along k)
    pub d: *mut f32,   // 64 x n row-major
    pub n: u32,        // 8 or 16
    pub a_smem: u32,   // 1: A from shared memory (n = 8 only)
}

/// One wgmma of a 64 x 8 A by an 8 x n B, D written row-major.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn wg_check(p: CheckArgs) {
    let t = tid();
    let s = smem();
    let (lbo, sbo) = (128u32, 256u32);
    // B: n rows of 8 k at byte kmaj(n, k); base 0. A (smem variant): at 4096.
    if t < p.n * 8 {
        let (n, k) = (t / 8, t % 8);
        // SAFETY: in bounds of the probe's buffers.
        unsafe { *s.byte_add(kmaj(n, k, lbo, sbo) as usize) = *p.b.add(t as usize) };
    }
    for i in 0..4 {
        let e = t * 4 + i;
        let (m, k) = (e / 8, e % 8);
        // SAFETY: in bounds.
        unsafe { *s.byte_add(4096 + kmaj(m, k, lbo, 256 * 1) as usize) = *p.a.add(e as usize) };
    }
    sync();
    // Fence the generic-proxy shared stores before the async proxy reads them.
    // SAFETY: fence.
    unsafe { asm!("fence.proxy.async.shared::cta;", options(nostack)) };
    sync();
    let (w, l) = (t / 32, t % 32);
    let (g, q) = (l / 4, l % 4);
    let row = 16 * w + g;
    // SAFETY: in bounds.
    let ld = |r: u32, k: u32| unsafe { (*p.a.add((r * 8 + k) as usize)).to_bits() };
    let a = [ld(row, q), ld(row + 8, q), ld(row, q + 4), ld(row + 8, q + 4)];
    let bd = desc(saddr(s), lbo, sbo);
    let ad = desc(saddr(s) + 4096, lbo, 256);
    let n = p.n;
    let mut d = [0.0f32; 8];
    fence();
    if n == 8 {
        let mut d4 = [0.0f32; 4];
        if p.a_smem != 0 {
            n8ss(&mut d4, ad, bd);
        } else {
            n8(&mut d4, &a, bd);
        }
        commit();
        wait0();
        d[..4].copy_from_slice(&d4);
    } else {
        n16(&mut d, &a, bd);
        commit();
        wait0();
    }
    for i in 0..(n / 8) {
        for h in 0..2u32 {
            for e in 0..2u32 {
                let r = row + 8 * h;
                let c = 8 * i + 2 * q + e;
                let v = d.get((4 * i + 2 * h + e) as usize).copied().unwrap_or(0.0);
                // SAFETY: in bounds.
                unsafe { *p.d.add((r * n + c) as usize) = v };
            }
        }
    }
}

#[repr(C)]
pub struct RateArgs {
    pub out: *mut f32,
    pub iters: u32,
    pub mode: u32, // 0: n8 A regs, 1: n16 A regs, 2: n8 A smem
}

/// Each warpgroup: `iters` rounds of 9 K-chunks x 3 products into 8 accumulator sets, B
/// from a band of 80 k x 16 n in shared memory (descriptor moved along K per chunk).
#[no_mangle]
pub unsafe extern "gpu-kernel" fn wg_rate0(p: RateArgs) {
    rate::<0>(p)
}
#[no_mangle]
pub unsafe extern "gpu-kernel" fn wg_rate1(p: RateArgs) {
    rate::<1>(p)
}
#[no_mangle]
pub unsafe extern "gpu-kernel" fn wg_rate2(p: RateArgs) {
    rate::<2>(p)
}
#[no_mangle]
pub unsafe extern "gpu-kernel" fn wg_rate3(p: RateArgs) {
    rate::<3>(p)
}
#[no_mangle]
pub unsafe extern "gpu-kernel" fn wg_rate4(p: RateArgs) {
    rate::<4>(p)
}

#[inline(always)]
fn rate<const MODE: u32>(p: RateArgs) {
    let t = tid();
    let s = smem();
    // 16 n x 80 k band + A 64 x 80: fill with small values.
    for i in (t..(16 * 80 + 64 * 80)).step_by(blockdim() as usize) {
        // SAFETY: the launch gives 36 KiB.
        unsafe { *s.add(i as usize) = ((i % 7) as f32) * 0.125 };
    }
    sync();
    // SAFETY: fence.
    unsafe { asm!("fence.proxy.async.shared::cta;", options(nostack)) };
    sync();
    let wg = t / 128;
    let base = saddr(s);
    // B: K-major, LBO 128 (k chunks adjacent), SBO = 20*128 (n groups).
    let bsbo = 20 * 128;
    let abase = base + 16 * 80 * 4;
    let asbo = 20 * 128;
    let a0 = [
        t ^ 0x3f80_0000,
        t.wrapping_mul(3) ^ 0x3f00_0000,
        0x3e80_0000,
        0x3f00_0000 + wg,
    ];
    let a1 = [a0[1], a0[2], a0[3], a0[0]];
    let a2 = [a0[2], a0[3], a0[0], a0[1]];
    let mut acc = [[0.0f32; 8]; 8];
    for a in acc.iter_mut() {
        pin8(a);
    }
    fence();
    macro_rules! rounds {
        ($body:expr) => {
            for _ in 0..p.iters {
                $body(0, &mut acc[0]);
                $body(1, &mut acc[1]);
                $body(2, &mut acc[2]);
                $body(3, &mut acc[3]);
                $body(4, &mut acc[4]);
                $body(5, &mut acc[5]);
                $body(6, &mut acc[6]);
                $body(7, &mut acc[7]);
                $body(8, &mut acc[0]);
                commit();
                wait1();
            }
        };
    }
    match MODE {
        0 => rounds!(|c: u32, a: &mut [f32; 8]| {
            let bd = desc(base + c * 256, 128, bsbo);
            let mut d: [f32; 4] = [a[0], a[1], a[2], a[3]];
            n8(&mut d, &a0, bd);
            n8(&mut d, &a1, bd + 2);
            n8(&mut d, &a2, bd + 4);
            a[..4].copy_from_slice(&d);
        }),
        1 => rounds!(|c: u32, a: &mut [f32; 8]| {
            let bd = desc(base + c * 256, 128, bsbo);
            n16(a, &a0, bd);
            n16(a, &a1, bd + 2);
            n16(a, &a2, bd + 4);
        }),
        3 => {
            // n8, consecutive wgmmas on different accumulators.
            for _ in 0..p.iters {
                for q in 0..3u32 {
                    let aq = if q == 0 {
                        &a0
                    } else if q == 1 {
                        &a1
                    } else {
                        &a2
                    };
                    let one = |c: u32, a: &mut [f32; 8]| {
                        let bd = desc(base + c * 256, 128, bsbo) + 2 * q as u64;
                        let mut d: [f32; 4] = [a[0], a[1], a[2], a[3]];
                        n8(&mut d, aq, bd);
                        a[..4].copy_from_slice(&d);
                    };
                    one(0, &mut acc[0]);
                    one(1, &mut acc[1]);
                    one(2, &mut acc[2]);
                    one(3, &mut acc[3]);
                    one(4, &mut acc[4]);
                    one(5, &mut acc[5]);
                    one(6, &mut acc[6]);
                    one(7, &mut acc[7]);
                    one(8, &mut acc[0]);
                }
                commit();
                wait1();
            }
        }
        4 => {
            // n32: 4 accumulators of 16.
            let mut big = [[0.0f32; 16]; 4];
            for (i, b) in big.iter_mut().enumerate() {
                let (x, y) = b.split_at_mut(8);
                x.copy_from_slice(&acc[2 * i]);
                y.copy_from_slice(&acc[2 * i + 1]);
                pin8(x.try_into().unwrap());
                pin8(y.try_into().unwrap());
            }
            fence();
            for _ in 0..p.iters {
                for q in 0..3u32 {
                    let aq = if q == 0 {
                        &a0
                    } else if q == 1 {
                        &a1
                    } else {
                        &a2
                    };
                    let one = |c: u32, a: &mut [f32; 16]| {
                        let bd = desc(base + c * 256, 128, bsbo) + 2 * q as u64;
                        n32x(a, aq, bd);
                    };
                    let [b0, b1, b2, b3] = &mut big;
                    one(0, b0);
                    one(1, b1);
                    one(2, b2);
                    one(3, b3);
                    one(4, b0);
                    one(5, b1);
                    one(6, b2);
                    one(7, b3);
                    one(8, b0);
                }
                commit();
                wait1();
            }
            wait0();
            for (i, b) in big.iter().enumerate() {
                acc[2 * i].copy_from_slice(&b[..8]);
                acc[2 * i + 1].copy_from_slice(&b[8..]);
            }
        }
        _ => rounds!(|c: u32, a: &mut [f32; 8]| {
            let bd = desc(base + c * 256, 128, bsbo);
            let ad = desc(abase + c * 256, 128, asbo);
            let mut d: [f32; 4] = [a[0], a[1], a[2], a[3]];
            n8ss(&mut d, ad, bd);
            n8ss(&mut d, ad + 2, bd + 2);
            n8ss(&mut d, ad + 4, bd + 4);
            a[..4].copy_from_slice(&d);
        }),
    }
    wait0();
    let mut sum = 0.0f32;
    for a in acc.iter() {
        for v in a.iter() {
            sum += *v;
        }
    }
    // SAFETY: one float per thread.
    unsafe { *p.out.add((bid() * blockdim() + t) as usize) = sum };
}

#[inline(always)]
fn blockdim() -> u32 {
    // SAFETY: special register.
    unsafe { nvptx::_block_dim_x() as u32 }
}
