// Shared by the probes: one round of CHAINS independent `mma.sync.m16n8k32` s8 x u8
// products into s32 sums, the instruction image_mma's integer path issues.
#pragma once

template <int CHAINS>
__device__ __forceinline__ void mma_s8_steps(int (&acc)[CHAINS][4], const unsigned (&a)[4], const unsigned (&b)[2]) {
#pragma unroll
    for (int c = 0; c < CHAINS; ++c)
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+r"(acc[c][0]), "+r"(acc[c][1]), "+r"(acc[c][2]), "+r"(acc[c][3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
