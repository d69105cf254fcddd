//! Device crate: every convolution kernel, compiled to one PTX module.
//!
//! Built only for `nvptx64-nvidia-cuda` by `ptx-builder`; the host never links it. One
//! kernel family per file; the file, the PTX entry and the host `Variant` share a name,
//! and the family's geometry, launch shape and table row live in
//! `layout/src/families/<name>.rs`. Every entry takes one [`layout::ConvArgs`] (or the
//! probe's struct) by value, the struct the host fills.
#![no_std]
#![feature(abi_gpu_kernel, stdarch_nvptx, asm_experimental_arch)]
#![feature(
    core_intrinsics,
    gpu_intrinsics,
    gpu_launch_sized_workgroup_mem,
    stmt_expr_attributes
)]
#![allow(internal_features)]
#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]
// Entries take one `#[repr(C)]` struct by value. rustc's nvptx backend passes it as
// nvcc does (`.param .align 8 .b8 <entry>_param_0[N]`, read with `ld.param`), and
// ptx-builder checks every entry's parameter against the struct its table row names,
// so a change in that lowering fails the build instead of misreading arguments.
#![allow(improper_gpu_kernel_arg)]

pub mod device;
pub mod patch;
pub mod planes;
pub mod stage;

pub mod conv1d_basic;
pub mod conv1d_const;
pub mod conv1d_fast;
pub mod conv1d_tiled;
pub mod conv1d_tiled_cached;
pub mod conv2d_basic;
pub mod conv2d_const;
pub mod conv2d_fast;
pub mod conv2d_separable;
pub mod conv2d_tiled_cached;
pub mod conv2d_tiled_in;
pub mod conv3d_basic;
pub mod conv3d_const;
pub mod conv3d_fast;
pub mod conv3d_separable;
pub mod conv3d_tiled_cached;
pub mod conv3d_tiled_in;
pub mod image_fast;
pub mod image_mma;
pub mod image_patches;
pub mod image_tiled;
pub mod roofline;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; the launch then reports an error to the host.
    unsafe { core::arch::nvptx::trap() }
}
