//! Criterion benchmarks of every variant on every case of `gpuconv_benches::cases` (1D,
//! 2D and 3D, one loop): GPU time from CUDA events around `iters` back-to-back launches
//! (`iter_custom`), so host overhead between launches is hidden as it would be in a
//! pipeline. Sides are halved to keep a full run short; `GPUCONV_BENCH_FULL=1` uses the
//! roofline report's full sizes. Bench ids: `conv{d}d_{size}_r{r}/{variant}`, and the
//! separable and 3-channel image cases of the roofline report.
//!
//! `cargo bench -p gpuconv-benches --bench variants`
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cust::event::{Event, EventFlags};
use gpuconv::{Error, Gpu, Options, Variant};
use gpuconv_benches as b;
use std::time::Duration;

/// GPU time of `iters` launches of `work`, measured by events on the library's stream.
fn gpu_time(gpu: &Gpu, iters: u64, mut work: impl FnMut()) -> Duration {
    let start = Event::new(EventFlags::DEFAULT).expect("event");
    let stop = Event::new(EventFlags::DEFAULT).expect("event");
    start.record(gpu.stream()).expect("record");
    for _ in 0..iters {
        work();
    }
    stop.record(gpu.stream()).expect("record");
    stop.synchronize().expect("sync");
    stop.elapsed(&start).expect("elapsed")
}

fn benches(c: &mut Criterion) {
    let gpu = match Gpu::new() {
        Ok(g) => g,
        Err(Error::NoGpu(why)) => {
            eprintln!("!!!! NO GPU ({why}): criterion benchmarks SKIPPED, nothing measured. !!!!");
            return;
        }
        Err(e) => panic!("GPU setup failed: {e}"),
    };
    let scale = if std::env::var_os("GPUCONV_BENCH_FULL").is_some() {
        1
    } else {
        2
    };
    for case in b::cases(scale) {
        let dim = case.dim();
        let n = gpu.upload(b::input(&case.shape).view()).expect("upload");
        let mut p = gpu.alloc(n.raw_dim()).expect("alloc");
        for &r in &case.radii {
            let m = b::mask(dim, r);
            let mut g = c.benchmark_group(case.id(r));
            g.throughput(Throughput::Bytes(2 * (case.len() * 4) as u64));
            for v in std::iter::once(Variant::Auto).chain(Variant::all_of_dim(dim)) {
                if v.resolve(dim, r).is_ok() {
                    g.bench_function(BenchmarkId::from_parameter(v.name()), |bn| {
                        bn.iter_custom(|iters| {
                            gpu_time(&gpu, iters, || {
                                gpu.conv_device(&n, m.view(), v, &mut p).expect("launch");
                            })
                        })
                    });
                }
            }
            g.finish();
        }
    }
    separable(c, &gpu, 8192 / scale);
    separable_3d(c, &gpu, 512 / scale);
    images::<f32>(c, &gpu, 8192 / scale, "f32");
    images::<u8>(c, &gpu, 8192 / scale, "u8");
}

/// Rank-1 masks given as two 1D masks, r = 2..32: `separable_{side}x{side}_r{r}/{variant}`.
fn separable(c: &mut Criterion, gpu: &Gpu, side: usize) {
    let n = gpu
        .upload(
            b::input(&[side, side])
                .into_dimensionality::<ndarray::Ix2>()
                .expect("2D")
                .view(),
        )
        .expect("upload");
    let mut p = gpu.alloc(n.raw_dim()).expect("alloc");
    for r in [2usize, 4, 8, 16, 32] {
        let k = 2 * r + 1;
        let taps = ndarray::Array1::from_elem(k, 1.0 / k as f32);
        let mut g = c.benchmark_group(format!("separable_{side}x{side}_r{r}"));
        g.throughput(Throughput::Bytes(2 * (side * side * 4) as u64));
        for v in [Variant::Auto, Variant::Conv2dSeparable] {
            g.bench_function(BenchmarkId::from_parameter(v.name()), |bn| {
                bn.iter_custom(|iters| {
                    gpu_time(gpu, iters, || {
                        gpu.correlate_separable_device(&n, taps.view(), taps.view(), Options::variant(v), &mut p)
                            .expect("launch");
                    })
                })
            });
        }
        g.finish();
    }
}

/// Rank-1 3D masks given as three 1D masks, r = 1..4:
/// `separable3d_{side}x{side}x{side}_r{r}/{variant}`.
fn separable_3d(c: &mut Criterion, gpu: &Gpu, side: usize) {
    let n = gpu
        .upload(
            b::input(&[side, side, side])
                .into_dimensionality::<ndarray::Ix3>()
                .expect("3D")
                .view(),
        )
        .expect("upload");
    let mut p = gpu.alloc(n.raw_dim()).expect("alloc");
    for r in 1..=4usize {
        let k = 2 * r + 1;
        let taps = ndarray::Array1::from_elem(k, 1.0 / k as f32);
        let mut g = c.benchmark_group(format!("separable3d_{side}x{side}x{side}_r{r}"));
        g.throughput(Throughput::Bytes(2 * (side * side * side * 4) as u64));
        for v in [Variant::Auto, Variant::Conv3dSeparable] {
            g.bench_function(BenchmarkId::from_parameter(v.name()), |bn| {
                bn.iter_custom(|iters| {
                    gpu_time(gpu, iters, || {
                        gpu.correlate_separable_3d_device(
                            &n,
                            taps.view(),
                            taps.view(),
                            taps.view(),
                            Options::variant(v),
                            &mut p,
                        )
                        .expect("launch");
                    })
                })
            });
        }
        g.finish();
    }
}

/// 3-channel interleaved images, r = 1..4: `image_{pixel}_{side}x{side}x3_r{r}/{variant}`.
fn images<T: gpuconv::Pixel>(c: &mut Criterion, gpu: &Gpu, side: usize, pixel: &str) {
    let img = ndarray::Array3::from_elem((side, side, 3), T::from_f32(7.0));
    let n = gpu.upload_image(img.view()).expect("upload");
    let mut p = gpu.alloc_image::<T>(side, side, 3).expect("alloc");
    for r in 1..=4usize {
        let m = b::mask(2, r).into_dimensionality::<ndarray::Ix2>().expect("2D");
        let mut g = c.benchmark_group(format!("image_{pixel}_{side}x{side}x3_r{r}"));
        g.throughput(Throughput::Bytes(
            2 * (side * side * 3 * std::mem::size_of::<T>()) as u64,
        ));
        for v in std::iter::once(Variant::Auto).chain(Variant::IMAGES) {
            if v.resolve_image([r as u32, r as u32, 0], 3, gpuconv::Mode::Zero)
                .is_err()
                || !v.takes_pixels(T::KIND)
            {
                continue;
            }
            g.bench_function(BenchmarkId::from_parameter(v.name()), |bn| {
                bn.iter_custom(|iters| {
                    gpu_time(gpu, iters, || {
                        gpu.correlate_image_device(&n, m.view(), Options::variant(v), &mut p)
                            .expect("launch");
                    })
                })
            });
        }
        g.finish();
    }
}

criterion_group! {
    name = variants;
    config = Criterion::default().sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(1));
    targets = benches
}
criterion_main!(variants);
