//! Criterion benchmarks of every variant: GPU time from CUDA events around `iters`
//! back-to-back launches (`iter_custom`), so host overhead between launches is hidden
//! as it would be in a pipeline. Sizes default to 4096² and 2^24 to keep a full run
//! short; `GPUCONV_BENCH_FULL=1` uses the roofline report's 8192² and 2^28.
//!
//! `cargo bench -p gpuconv-benches --bench variants`
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cust::event::{Event, EventFlags};
use gpuconv::{Error, Gpu, Variant};
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
    let full = std::env::var_os("GPUCONV_BENCH_FULL").is_some();
    let (side, len) = if full {
        (b::SIZE_2D, b::SIZE_1D)
    } else {
        (4096, 1 << 24)
    };

    let n2 = gpu.upload2(b::image(side).view()).expect("upload");
    let mut p2 = gpu.alloc2(n2.dim()).expect("alloc");
    for r in b::RADII_2D {
        let m = b::mask2(r);
        let mut g = c.benchmark_group(format!("conv2d_{side}x{side}_r{r}"));
        g.throughput(Throughput::Bytes(2 * (side * side * 4) as u64));
        for v in std::iter::once(Variant::Auto).chain(Variant::ALL_2D) {
            if v.resolve(2, r).is_ok() {
                g.bench_function(BenchmarkId::from_parameter(v.name()), |bn| {
                    bn.iter_custom(|iters| {
                        gpu_time(&gpu, iters, || {
                            gpu.conv2d_device(&n2, m.view(), v, &mut p2).expect("launch");
                        })
                    })
                });
            }
        }
        g.finish();
    }
    drop((n2, p2));

    let n1 = gpu.upload1(b::signal(len).view()).expect("upload");
    let mut p1 = gpu.alloc1(len).expect("alloc");
    for r in b::RADII_1D {
        let m = b::mask1(r);
        let mut g = c.benchmark_group(format!("conv1d_{len}_r{r}"));
        g.throughput(Throughput::Bytes(2 * (len * 4) as u64));
        for v in std::iter::once(Variant::Auto).chain(Variant::ALL_1D) {
            if v.resolve(1, r).is_ok() {
                g.bench_function(BenchmarkId::from_parameter(v.name()), |bn| {
                    bn.iter_custom(|iters| {
                        gpu_time(&gpu, iters, || {
                            gpu.conv1d_device(&n1, m.view(), v, &mut p1).expect("launch");
                        })
                    })
                });
            }
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
