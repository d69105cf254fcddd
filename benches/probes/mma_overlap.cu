// Do integer tensor-core MMAs overlap other warps' work on the same scheduler? Each block
// has 8 warps, so each scheduler holds one "MMA warp" (warps 0-3: `mma.sync.m16n8k32`
// s8 x u8, 8 independent chains) and one "other warp" (warps 4-7: FFMAs in 8 independent
// chains, or shared-memory word loads). The kernel runs with only the MMA warps working,
// with only the other warps working, and with both; if the two overlap, "both" takes
// about the longer of the two alone, and if each MMA holds its scheduler's issue, about
// their sum. A last kernel puts both streams in every warp (interleaved in one loop).
// Why: image_mma's integer path ran close to the sum of its MMAs' time and its other
// work's (BENCHMARKS.md §8, sixtieth session).
// Build and run on the GPU machine: nvcc -O3 -arch=sm_90 mma_overlap.cu -o o && ./o
#include <cstdio>
#include <cuda_runtime.h>
#include "mma_s8_steps.cuh"
#include "probe_timing.cuh"

constexpr int CHAINS = 8;
enum Other { FFMA = 0, LDS = 1 };

// `mma_on` / `other_on`: which warps work. MMA warps run `mma_iters` rounds of CHAINS
// MMAs; the other warps `other_iters` rounds of CHAINS FFMAs or shared loads.
template <int OTHER>
__global__ void split(float* out, int mma_iters, int other_iters, unsigned a0, int mma_on, int other_on) {
    __shared__ unsigned words[1024];
    for (int i = threadIdx.x; i < 1024; i += blockDim.x) words[i] = a0 + i;
    __syncthreads();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float s = 0;
    if (warp < 4) {
        if (!mma_on) return;
        int acc[CHAINS][4] = {};
        unsigned a[4] = {a0, a0 + 1, a0 + 2, a0 + 3}, b[2] = {a0 + 4, a0 + 5};
        for (int i = 0; i < mma_iters; ++i) mma_s8_steps<CHAINS>(acc, a, b);
        for (int c = 0; c < CHAINS; ++c) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
    } else {
        if (!other_on) return;
        if (OTHER == FFMA) {
            float x[CHAINS];
            for (int c = 0; c < CHAINS; ++c) x[c] = float(lane + c);
            ffma_steps(x, other_iters, 0.999f, float(a0 & 1));
            for (int c = 0; c < CHAINS; ++c) s += x[c];
        } else {
            unsigned v = 0;
            int at[CHAINS];
            for (int c = 0; c < CHAINS; ++c) at[c] = lane + 32 * c;
            for (int i = 0; i < other_iters; ++i) {
#pragma unroll
                for (int c = 0; c < CHAINS; ++c) {
                    // CHAINS independent chains of loads, each address depending on the
                    // chain's last word (none hoisted); a warp's 32 words are consecutive
                    // (no bank conflict).
                    unsigned w = *(volatile unsigned*)&words[at[c]];
                    v += w;
                    at[c] = (at[c] + (w & 32)) & 1023;
                }
            }
            s = float(v);
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// Both streams in every warp: each round, CHAINS MMAs then `ffma_per_round` rounds of
// CHAINS FFMAs. With `mma_on` 0 or `ffma_on` 0, one stream alone.
__global__ void mixed(float* out, int iters, int ffma_per_round, unsigned a0, int mma_on, int ffma_on) {
    const int lane = threadIdx.x % 32;
    int acc[CHAINS][4] = {};
    unsigned a[4] = {a0, a0 + 1, a0 + 2, a0 + 3}, b[2] = {a0 + 4, a0 + 5};
    float x[CHAINS];
    for (int c = 0; c < CHAINS; ++c) x[c] = float(lane + c);
    for (int i = 0; i < iters; ++i) {
        if (mma_on) mma_s8_steps<CHAINS>(acc, a, b);
        if (ffma_on) ffma_steps(x, ffma_per_round, 0.999f, float(a0 & 1));
    }
    float s = 0;
    for (int c = 0; c < CHAINS; ++c) s += x[c] + acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

int main() {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    float* out;
    cudaMalloc(&out, sizeof(float) * sms * 8 * 256);
    const unsigned a0 = 0x01010101u;
    for (int per_sm : {1, 2}) {  // blocks of 8 warps an SM: 2 or 4 warps a scheduler
        int blocks = sms * per_sm, threads = 256;
        // Rounds chosen so that each stream alone takes a comparable time (an MMA about
        // 6.7 scheduler cycles at full rate, an FFMA or a conflict-free load 1 to 4).
        const int mma_iters = 2048;
        for (int other_iters : {4096, 16384}) {
            char what[96];
            snprintf(what, sizeof what, "%d warps/sched, MMA warps | FFMA warps x%d", 2 * per_sm, other_iters);
            overlap_row(what, "MMA", "other", [&](int on_a, int on_b) {
                split<FFMA><<<blocks, threads>>>(out, mma_iters, other_iters, a0, on_a, on_b);
            });
            snprintf(what, sizeof what, "%d warps/sched, MMA warps | LDS warps x%d", 2 * per_sm, other_iters);
            overlap_row(what, "MMA", "other", [&](int on_a, int on_b) {
                split<LDS><<<blocks, threads>>>(out, mma_iters, other_iters, a0, on_a, on_b);
            });
        }
        for (int ffma_per_round : {1, 4}) {
            const int iters = 2048;
            char what[96];
            snprintf(what, sizeof what, "%d warps/sched, both in every warp, %d FFMA/MMA", 2 * per_sm, ffma_per_round);
            overlap_row(what, "MMA", "other", [&](int on_a, int on_b) {
                mixed<<<blocks, threads>>>(out, iters, ffma_per_round, a0, on_a, on_b);
            });
        }
    }
    if (cudaGetLastError() != cudaSuccess) {
        printf("CUDA error\n");
        return 1;
    }
    return 0;
}
