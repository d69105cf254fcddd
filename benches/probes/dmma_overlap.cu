// FP64 tensor-core MMAs (`mma.sync ... .f64`, DMMA) as a second pipe beside the FFMAs: their
// rate on this GPU, and whether a stream of them overlaps FFMAs on the same scheduler.
// Why: a product of two f32 values is exact in f64, so an f32 convolution's taps could go
// to the FP64 tensor cores with no split (3xTF32 takes three products) and a result at
// least as exact as the FFMAs'; that pays only if DMMAs add to the FFMAs' rate rather than
// take turns with them, as the integer MMAs did (mma_overlap.cu, BENCHMARKS.md §8, the
// sixty-first session). Blocks of 8 warps: warps 0-3 issue DMMAs (8 independent chains),
// warps 4-7 FFMAs (8 chains); each stream alone, then both; and both in every warp.
// Build and run on the GPU machine: nvcc -O3 -arch=sm_90 dmma_overlap.cu -o d && ./d
#include <cstdio>
#include <cuda_runtime.h>
#include "probe_timing.cuh"

constexpr int CHAINS = 8;

// One round of CHAINS independent m8n8k4 products (256 FMAs a warp each).
__device__ __forceinline__ void dmma_k4(double (&acc)[CHAINS][4], double a, double b) {
#pragma unroll
    for (int c = 0; c < CHAINS; ++c)
        asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                     : "+d"(acc[c][0]), "+d"(acc[c][1])
                     : "d"(a), "d"(b));
}

// One round of CHAINS independent m16n8k16 products (2048 FMAs a warp each; sm_90).
__device__ __forceinline__ void dmma_k16(double (&acc)[CHAINS][4], const double (&a)[8], const double (&b)[4]) {
#pragma unroll
    for (int c = 0; c < CHAINS; ++c)
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
            "{%12,%13,%14,%15}, {%0,%1,%2,%3};"
            : "+d"(acc[c][0]), "+d"(acc[c][1]), "+d"(acc[c][2]), "+d"(acc[c][3])
            : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
              "d"(b[1]), "d"(b[2]), "d"(b[3]));
}

// SHAPE 4 or 16. `mma_on` / `ffma_on`: which warps work (warps 0-3 DMMA, 4-7 FFMA).
template <int SHAPE>
__global__ void split(float* out, int mma_iters, int ffma_iters, float seed, int mma_on, int ffma_on) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    double s = 0;
    if (warp < 4) {
        if (!mma_on) return;
        double acc[CHAINS][4] = {};
        double a[8], b[4];
        for (int k = 0; k < 8; ++k) a[k] = seed * (k + 1);
        for (int k = 0; k < 4; ++k) b[k] = seed * (k + 2);
        for (int i = 0; i < mma_iters; ++i) {
            if (SHAPE == 4)
                dmma_k4(acc, a[0], b[0]);
            else
                dmma_k16(acc, a, b);
        }
        for (int c = 0; c < CHAINS; ++c) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
    } else {
        if (!ffma_on) return;
        float x[CHAINS];
        for (int c = 0; c < CHAINS; ++c) x[c] = float(lane + c);
        ffma_steps(x, ffma_iters, 0.999f, seed);
        for (int c = 0; c < CHAINS; ++c) s += x[c];
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = float(s);
}

// Both streams in every warp: each round CHAINS m16n8k16 DMMAs, then `ffma_per_round`
// rounds of CHAINS FFMAs.
__global__ void mixed(float* out, int iters, int ffma_per_round, float seed, int mma_on, int ffma_on) {
    const int lane = threadIdx.x % 32;
    double acc[CHAINS][4] = {};
    double a[8], b[4];
    for (int k = 0; k < 8; ++k) a[k] = seed * (k + 1);
    for (int k = 0; k < 4; ++k) b[k] = seed * (k + 2);
    float x[CHAINS];
    for (int c = 0; c < CHAINS; ++c) x[c] = float(lane + c);
    for (int i = 0; i < iters; ++i) {
        if (mma_on) dmma_k16(acc, a, b);
        if (ffma_on) ffma_steps(x, ffma_per_round, 0.999f, seed);
    }
    double s = 0;
    for (int c = 0; c < CHAINS; ++c) s += x[c] + acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = float(s);
}

int main() {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    float* out;
    cudaMalloc(&out, sizeof(float) * sms * 8 * 256);
    const float seed = 1e-3f;
    for (int per_sm : {1, 2}) {  // blocks of 8 warps an SM: 2 or 4 warps a scheduler
        const int blocks = sms * per_sm, threads = 256;
        // Rates: every warp of the block on one stream (the split kernel's 4 warps
        // counted; FMAs a warp instruction: m8n8k4 256, m16n8k16 2048, FFMA 32).
        const int iters = 1024;
        double t4 = best_seconds([&] { split<4><<<blocks, threads>>>(out, iters, 0, seed, 1, 0); });
        double t16 = best_seconds([&] { split<16><<<blocks, threads>>>(out, iters, 0, seed, 1, 0); });
        double tf = best_seconds([&] { split<4><<<blocks, threads>>>(out, 0, 8 * iters, seed, 0, 1); });
        const double warps = 4.0 * blocks;
        printf("%d warps/sched: m8n8k4 %.1f TFMA/s, m16n8k16 %.1f TFMA/s (DMMA warps alone), FFMA %.1f TFMA/s "
               "(FFMA warps alone)\n",
               2 * per_sm, warps * iters * CHAINS * 256 / t4 * 1e-12, warps * iters * CHAINS * 2048 / t16 * 1e-12,
               warps * 32.0 * 8 * iters * CHAINS / tf * 1e-12);
        // Overlap: the FFMA rounds chosen so that each stream alone takes about as long.
        for (int ffma_iters : {4096, 16384}) {
            const int mma_iters = 256;
            char what[96];
            snprintf(what, sizeof what, "%d warps/sched, DMMA warps | FFMA warps x%d", 2 * per_sm, ffma_iters);
            overlap_row(what, "DMMA", "FFMA", [&](int on_a, int on_b) {
                split<16><<<blocks, threads>>>(out, mma_iters, ffma_iters, seed, on_a, on_b);
            });
        }
        for (int ffma_per_round : {4, 16}) {
            const int rounds = 256;
            char what[96];
            snprintf(what, sizeof what, "%d warps/sched, both in every warp, %d FFMA/DMMA", 2 * per_sm,
                     ffma_per_round);
            overlap_row(what, "DMMA", "FFMA", [&](int on_a, int on_b) {
                mixed<<<blocks, threads>>>(out, rounds, ffma_per_round, seed, on_a, on_b);
            });
        }
    }
    if (cudaGetLastError() != cudaSuccess) {
        printf("CUDA error\n");
        return 1;
    }
    return 0;
}
