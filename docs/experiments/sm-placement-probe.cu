// Which blocks of a one-wave 1D grid share an SM (2 or 3 blocks an SM by shared memory).
#include <cstdio>
#include <vector>
__global__ void k(int* sm, long long spin) {
    extern __shared__ float s[];
    if (threadIdx.x == 0) {
        unsigned id; asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
        sm[blockIdx.x] = id; s[0] = id;
    }
    long long t0 = clock64(); while (clock64() - t0 < spin) {}
}
int main() {
    int n; cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, 0);
    for (int per : {2, 3}) {
        int bytes = per == 2 ? 101 * 1024 : 75 * 1024;
        cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        int G = n * per; int* d; cudaMalloc(&d, G * 4);
        for (int rep = 0; rep < 3; rep++) {
            k<<<G, 256, bytes>>>(d, 200000);
            std::vector<int> h(G); cudaMemcpy(h.data(), d, G * 4, cudaMemcpyDeviceToHost);
            int same = 0, diff_first = 0; std::vector<int> cnt(n, 0);
            for (int b = 0; b < G; b++) cnt[h[b]]++;
            for (int b = 0; b < n; b++) same += h[b] == h[b + n];
            for (int b = 0; b < n; b++) for (int c = b + 1; c < n; c++) diff_first += h[b] == h[c];
            int maxc = 0; for (int c : cnt) maxc = maxc > c ? maxc : c;
            printf("per=%d rep=%d G=%d: b,b+%d same SM %d of %d; among first %d, pairs sharing %d; max blocks an SM %d; first 8 smids:", per, rep, G, n, same, n, n, diff_first, maxc);
            for (int b = 0; b < 8; b++) printf(" %d/%d", h[b], h[b + n]);
            printf("\n");
        }
        cudaFree(d);
    }
}
