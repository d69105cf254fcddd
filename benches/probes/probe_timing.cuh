// Shared by the probes: the best of 5 runs of `launch` timed with CUDA events on the
// default stream, after one warm-up run, in seconds.
#pragma once
#include <cstdio>
#include <cuda_runtime.h>

template <class Launch>
double best_seconds(Launch launch) {
    cudaEvent_t t0, t1;
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    launch();  // warm-up
    float best = 1e30f;
    for (int r = 0; r < 5; ++r) {
        cudaEventRecord(t0);
        launch();
        cudaEventRecord(t1);
        cudaEventSynchronize(t1);
        float ms;
        cudaEventElapsedTime(&ms, t0, t1);
        best = ms < best ? ms : best;
    }
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    return best * 1e-3;
}

// Prints how two streams of work timed alone (`a`, `b`, seconds) and together (`both`)
// overlap: "not overlapped" is (both - the longer alone) / the shorter alone, 0 when both
// took the longer alone (full overlap), 1 when they took the sum (none).
static void report_overlap(const char* what, const char* a_name, const char* b_name, double a, double b,
                           double both) {
    double longer = a > b ? a : b, shorter = a > b ? b : a;
    printf("%-48s %s alone %8.1f us, %s alone %8.1f us, both %8.1f us: not overlapped %.2f\n", what, a_name, a * 1e6,
           b_name, b * 1e6, both * 1e6, (both - longer) / shorter);
}

// Times `launch(a_on, b_on)` with stream a alone, stream b alone and both, and prints the
// row (`report_overlap`).
template <class Launch>
void overlap_row(const char* what, const char* a_name, const char* b_name, Launch launch) {
    double a = best_seconds([&] { launch(1, 0); });
    double b = best_seconds([&] { launch(0, 1); });
    double both = best_seconds([&] { launch(1, 1); });
    report_overlap(what, a_name, b_name, a, b, both);
}

// `rounds` rounds of N independent FFMA chains: the FFMA stream of the overlap probes.
template <int N>
__device__ __forceinline__ void ffma_steps(float (&x)[N], int rounds, float m, float d) {
    for (int i = 0; i < rounds; ++i) {
#pragma unroll
        for (int c = 0; c < N; ++c) x[c] = fmaf(x[c], m, d);
    }
}
