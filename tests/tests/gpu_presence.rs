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
