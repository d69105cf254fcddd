//! Whether this build's GPU tests run must match the machine: a test binary built
//! without them (ignored) that finds a GPU fails, so GPU tests are never silently skipped
//! on a GPU machine; one built with them fails when there is no usable GPU. Prints the
//! banner either way.
use std::io::Write;

#[test]
fn gpu_tests_run_exactly_when_a_gpu_is_usable() {
    let compiled = gpuconv_tests::GPU_TESTS_COMPILED;
    let gpu = gpuconv::Gpu::new().and_then(|g| g.device_name());
    let bar = "!".repeat(78);
    let text = match (&gpu, compiled) {
        (Ok(name), true) => format!("!!! GPU TESTS ARE COMPILED IN and run on {name}. None is skipped."),
        (Err(_), false) => "!!! NO GPU: every GPU test is IGNORED, i.e. NOT RUN. Only the CPU reference,\n\
             !!! error mapping, table and PTX-content tests ran."
            .to_string(),
        (Ok(name), false) => panic!(
            "a GPU ({name}) is usable but this build's GPU tests are compiled out (ignored): rebuild with \
             GPUCONV_GPU_TESTS=1, or run with --include-ignored"
        ),
        (Err(e), true) => panic!("GPU tests are compiled in but there is no usable GPU: {e}"),
    };
    // Straight to the stderr handle: libtest captures `eprintln!` of passing tests.
    let _ = writeln!(std::io::stderr(), "\n{bar}\n{text}\n{bar}");
}

/// On the GPU the build assembled its cubin for, the kernels load from that cubin, not
/// through the driver's JIT of the PTX (unless `GPUCONV_JIT=1` asks for the JIT); on any
/// other GPU, or with no cubin embedded, they load from the PTX and say why.
#[test]
#[cfg_attr(not(gpu_present), ignore = "no GPU on this machine: GPU test NOT run (kernel image)")]
fn kernels_load_from_the_cubin_on_its_gpu() {
    let gpu = gpuconv_tests::gpu();
    let arch = gpu.arch().unwrap();
    let jit = std::env::var("GPUCONV_JIT").is_ok_and(|v| v == "1");
    let image = gpu.kernel_image();
    let _ = writeln!(std::io::stderr(), "kernels on {arch}: {image}");
    // "sm_90 SASS from ptxas ...": an sm_90a cubin runs on sm_90 too.
    let built_for = gpuconv::gpu::CUBIN_ABOUT.split(' ').next().unwrap_or("");
    if !jit && !gpuconv::gpu::CUBIN.is_empty() && built_for.trim_end_matches('a') == arch {
        assert_eq!(image, gpuconv::gpu::CUBIN_ABOUT);
    } else {
        assert!(image.starts_with("PTX, JIT-compiled"), "{image}");
    }
}
