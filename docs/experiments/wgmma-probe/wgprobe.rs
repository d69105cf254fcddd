//! Experiment: checks our reading of wgmma's TF32 fragment and descriptor layouts and
//! times `wgmma.mma_async` m64nNk8 (docs/experiments/wgmma-probe). `wgprobe <ptx>`.
use cust::event::{Event, EventFlags};
use cust::function::{BlockSize, GridSize};
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use std::ffi::c_void;

#[repr(C)]
struct CheckArgs {
    a: u64,
    b: u64,
    d: u64,
    n: u32,
    a_smem: u32,
}
#[repr(C)]
struct RateArgs {
    out: u64,
    iters: u32,
    mode: u32,
}

fn tf32_trunc(x: f32) -> f32 {
    f32::from_bits(x.to_bits() & 0xffff_e000)
}
fn tf32_round(x: f32) -> f32 {
    let b = x.to_bits();
    f32::from_bits((b + 0xfff + ((b >> 13) & 1)) & 0xffff_e000)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).expect("ptx path");
    let ptx = std::fs::read_to_string(path)?;
    let _ctx = cust::quick_init()?;
    let module = Module::from_ptx(&ptx, &[])?;
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    // Pseudo-random data in [-1, 1).
    let mut seed = 12345u64;
    let mut rnd = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    };
    let a: Vec<f32> = (0..64 * 8).map(|_| rnd()).collect();
    let b: Vec<f32> = (0..16 * 8).map(|_| rnd()).collect();
    let da = DeviceBuffer::from_slice(&a)?;
    let db = DeviceBuffer::from_slice(&b)?;
    let dd = DeviceBuffer::from_slice(&vec![0.0f32; 64 * 16])?;
    let f = module.get_function("wg_check")?;
    for (n, a_smem) in [(8u32, 0u32), (8, 1), (16, 0)] {
        let args = CheckArgs {
            a: da.as_device_ptr().as_raw(),
            b: db.as_device_ptr().as_raw(),
            d: dd.as_device_ptr().as_raw(),
            n,
            a_smem,
        };
        // SAFETY: buffers cover the kernel's reads and writes.
        unsafe {
            stream.launch(
                &f,
                GridSize::x(1),
                BlockSize::x(128),
                8192,
                &[&args as *const _ as *mut c_void],
            )?;
        }
        stream.synchronize()?;
        let mut d = vec![0.0f32; 64 * 16];
        dd.copy_to(&mut d)?;
        let (mut e_exact, mut e_tr, mut e_rn) = (0.0f64, 0.0f64, 0.0f64);
        for m in 0..64 {
            for j in 0..n as usize {
                let (mut x, mut t, mut r) = (0.0f64, 0.0f64, 0.0f64);
                for k in 0..8 {
                    let (av, bv) = (a[m * 8 + k], b[j * 8 + k]);
                    x += av as f64 * bv as f64;
                    t += tf32_trunc(av) as f64 * tf32_trunc(bv) as f64;
                    r += tf32_round(av) as f64 * tf32_round(bv) as f64;
                }
                let g = d[m * n as usize + j] as f64;
                e_exact = e_exact.max((g - x).abs());
                e_tr = e_tr.max((g - t).abs());
                e_rn = e_rn.max((g - r).abs());
            }
        }
        println!("check n={n} a_smem={a_smem}: max |err| vs fp32 inputs {e_exact:.3e}, vs truncated tf32 {e_tr:.3e}, vs rounded tf32 {e_rn:.3e}");
    }
    let out = DeviceBuffer::from_slice(&vec![0.0f32; 132 * 8 * 128])?;
    for (mode, blocks) in [
        (0u32, 1056usize),
        (1, 1056),
        (2, 1056),
        (3, 1056),
        (4, 1056),
        (4, 132),
        (4, 264),
        (4, 396),
        (1, 132),
        (1, 264),
        (3, 132),
        (3, 264),
    ] {
        let fr = module.get_function(&format!("wg_rate{mode}"))?;
        let iters = 2000u32;
        let n = [8, 16, 8, 8, 32][mode as usize];
        let mut best = f64::MAX;
        for _ in 0..5 {
            let args = RateArgs {
                out: out.as_device_ptr().as_raw(),
                iters,
                mode,
            };
            let (s, e) = (Event::new(EventFlags::DEFAULT)?, Event::new(EventFlags::DEFAULT)?);
            s.record(&stream)?;
            // SAFETY: out covers one float per thread.
            unsafe {
                stream.launch(
                    &fr,
                    GridSize::x(blocks as u32),
                    BlockSize::x(128),
                    36 * 1024,
                    &[&args as *const _ as *mut c_void],
                )?;
            }
            e.record(&stream)?;
            e.synchronize()?;
            best = best.min(e.elapsed_time_f32(&s)? as f64);
        }
        let macs = blocks as f64 * iters as f64 * 27.0 * 64.0 * n as f64 * 8.0;
        println!(
            "{blocks} blocks: rate mode {mode} (n={n}, A {}): {:.3} ms, {:.1} TMAC/s",
            [
                "regs, 3-chains",
                "regs, 3-chains",
                "smem, 3-chains",
                "regs, interleaved",
                "regs, interleaved"
            ][mode as usize],
            best,
            macs / (best * 1e-3) / 1e12
        );
    }
    Ok(())
}
