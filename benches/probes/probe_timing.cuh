// Shared by the probes: the best of 5 runs of `launch` timed with CUDA events on the
// default stream, after one warm-up run, in seconds.
#pragma once
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
