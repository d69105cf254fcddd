// The tensor-core rate a TF32 convolution path could use on this GPU, measured: warps
// issue independent `mma.sync.m16n8k8` TF32 products (the warp-level MMA a Rust kernel
// can emit from inline PTX) back to back, beside an FFMA loop of the same shape, so the
// two rates come from the same run. Used by BENCHMARKS.md (why no tensor-core path).
// Build and run on the GPU machine: nvcc -O3 -arch=sm_90 mma_tf32_rate.cu -o mma && ./mma
#include <cstdio>
#include <cuda_runtime.h>
#include "probe_timing.cuh"

constexpr int CHAINS = 8;  // independent accumulator sets per warp (latency hiding)

__global__ void mma_tf32(float* out, int iters, unsigned a0) {
    float acc[CHAINS][4] = {};
    unsigned a[4] = {a0, a0 + 1, a0 + 2, a0 + 3}, b[2] = {a0 + 4, a0 + 5};
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int c = 0; c < CHAINS; ++c) {
            asm volatile(
                "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
                : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
        }
    }
    float s = 0;
    for (int c = 0; c < CHAINS; ++c) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void ffma(float* out, int iters, float x, float y) {
    float acc[CHAINS * 4];
    for (int c = 0; c < CHAINS * 4; ++c) acc[c] = threadIdx.x + c;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int c = 0; c < CHAINS * 4; ++c) acc[c] = fmaf(acc[c], x, y);
    }
    float s = 0;
    for (int c = 0; c < CHAINS * 4; ++c) s += acc[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

int main() {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    const int threads = 256, blocks = sms * 8, iters = 4096;
    float* out;
    cudaMalloc(&out, sizeof(float) * blocks * threads);
    double warps = double(blocks) * threads / 32;
    double s_mma = best_seconds([&] { mma_tf32<<<blocks, threads>>>(out, iters, 0x3f800000u); });
    double macs = warps * iters * CHAINS * 16.0 * 8.0 * 8.0;
    double s_fma = best_seconds([&] { ffma<<<blocks, threads>>>(out, iters, 0.999f, 1e-3f); });
    double fmas = double(blocks) * threads * iters * CHAINS * 4.0;
    if (cudaGetLastError() != cudaSuccess) { printf("CUDA error\n"); return 1; }
    printf("mma.sync m16n8k8 TF32: %.1f TMAC/s (%.0f TFLOP/s)\n", macs / s_mma / 1e12, 2 * macs / s_mma / 1e12);
    printf("FFMA fp32:             %.1f TFMA/s (%.0f TFLOP/s)\n", fmas / s_fma / 1e12, 2 * fmas / s_fma / 1e12);
    printf("ratio (MAC per FFMA):  %.2f\n", (macs / s_mma) / (fmas / s_fma));
    return 0;
}
