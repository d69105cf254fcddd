// The rate of the integer tensor-core MMA against the fp16 one on this GPU, measured:
// warps issue `mma.sync.m16n8k16` fp16 products (f32 sums) and `mma.sync.m16n8k32`
// s8 x u8 products (s32 sums) back to back, 8 or 2 independent chains a warp, at 4, 6, 8
// and 16 warps a scheduler (the image kernels' occupancies). Used by BENCHMARKS.md (the
// integer path of image_mma, `exp/imma`: one m16n8k32 costs what one m16n8k16 does).
// Build and run on the GPU machine: nvcc -O3 -arch=sm_90 mma_int8_rate.cu -o r && ./r
#include <cstdio>
#include <cuda_runtime.h>
#include "mma_s8_steps.cuh"
#include "probe_timing.cuh"
template <int CHAINS>
__global__ void mma_f16(float* out, int iters, unsigned a0) {
    float acc[CHAINS][4] = {};
    unsigned a[4] = {a0, a0 + 1, a0 + 2, a0 + 3}, b[2] = {a0 + 4, a0 + 5};
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int c = 0; c < CHAINS; ++c)
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
                : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
    float s = 0;
    for (int c = 0; c < CHAINS; ++c) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
template <int CHAINS>
__global__ void mma_s8(float* out, int iters, unsigned a0) {
    int acc[CHAINS][4] = {};
    unsigned a[4] = {a0, a0 + 1, a0 + 2, a0 + 3}, b[2] = {a0 + 4, a0 + 5};
    for (int i = 0; i < iters; ++i) mma_s8_steps<CHAINS>(acc, a, b);
    int s = 0;
    for (int c = 0; c < CHAINS; ++c) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
int main() {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    float* out;
    cudaMalloc(&out, sizeof(float) * sms * 16 * 256);
    const int iters = 2048;
    for (int wps : {4, 6, 8, 16}) {  // warps a scheduler: wps blocks of 4 warps an SM
        int threads = 128, blocks = sms * wps;
        double warps = double(blocks) * threads / 32;
        double f8 = best_seconds([&] { mma_f16<8><<<blocks, threads>>>(out, iters, 0x3c003c00u); });
        double i8 = best_seconds([&] { mma_s8<8><<<blocks, threads>>>(out, iters, 0x01010101u); });
        double f2 = best_seconds([&] { mma_f16<2><<<blocks, threads>>>(out, iters, 0x3c003c00u); });
        double i2 = best_seconds([&] { mma_s8<2><<<blocks, threads>>>(out, iters, 0x01010101u); });
        double m16 = warps * iters * 16.0 * 8 * 16, m32 = warps * iters * 16.0 * 8 * 32;
        printf("%2d warps/sched: f16 k16 8ch %.1f TMAC/s, 2ch %.1f | s8 k32 8ch %.1f TMAC/s, 2ch %.1f | time per MMA int8:f16 %.2f\n",
               wps, m16 * 8 / f8 / 1e12, m16 * 2 / f2 / 1e12, m32 * 8 / i8 / 1e12, m32 * 2 / i2 / 1e12, i8 / f8);
    }
    if (cudaGetLastError() != cudaSuccess) {
        printf("CUDA error\n");
        return 1;
    }
    return 0;
}
