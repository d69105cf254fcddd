//! Device crate: every convolution kernel, compiled to one PTX module.
//!
//! Built only for `nvptx64-nvidia-cuda` by `ptx-builder`; the host never links it.
//! One kernel family per file; the file, the PTX entry and the host `Variant` share a name.
#![no_std]
#![feature(abi_gpu_kernel, stdarch_nvptx, asm_experimental_arch)]
#![feature(core_intrinsics, gpu_intrinsics, gpu_launch_sized_workgroup_mem)]
#![allow(internal_features)]

pub mod device;

pub mod conv1d_basic;
pub mod conv1d_const;
pub mod conv1d_fast;
pub mod conv1d_tiled;
pub mod conv1d_tiled_cached;
pub mod conv2d_basic;
pub mod conv2d_const;
pub mod conv2d_fast;
pub mod conv2d_tiled_cached;
pub mod conv2d_tiled_in;
pub mod roofline;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; the launch then reports an error to the host.
    unsafe { core::arch::nvptx::trap() }
}
