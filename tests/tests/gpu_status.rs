//! Always runs: says loudly whether the GPU tests of this build run or are ignored.
use std::io::Write;

#[test]
fn gpu_status_banner() {
    let text = gpuconv_tests::gpu_status_banner_text();
    // Straight to the stderr handle: libtest captures `eprintln!` of passing tests, and
    // this banner must show in every run.
    let _ = std::io::stderr().write_all(text.as_bytes());
    eprintln!("{text}");
    if gpuconv_tests::GPU_TESTS_COMPILED {
        match gpuconv::Gpu::new().and_then(|g| g.device_name()) {
            Ok(name) => {
                let _ = writeln!(std::io::stderr(), "!!! GPU: {name}");
            }
            Err(e) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "!!! GPU tests compiled in but Gpu::new() failed: {e}\n!!! every GPU test will FAIL"
                );
            }
        }
    }
}
