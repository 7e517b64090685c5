// What the parts of cupmon's NVTX push/pop pair cost on this machine, for
// bench/gpu/nvtx_cost.sh: besides cupmon's own bookkeeping, a pair (outside windows)
// makes one CUPTI external correlation push and one pop (CUSTOM1, so the GPU work
// launched inside lands in the range's gpu_user_annotation); inside a window two
// CLOCK_REALTIME reads more. On the H200 a pair cost 404-722 ns (1.2-2.0 us inside a
// window) against 124-184 ns (595-646 ns) on a development VM with the fake libcupti:
// this tells how much of that is CUPTI's calls and the machine's clock.
// Run alone (no injection): CUDA initialised, EXTERNAL_CORRELATION activity enabled
// with buffers as cupmon gives them, then N pushes and pops, N clock reads, timed.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>
#include <cupti.h>

static void CUPTIAPI request(uint8_t **buffer, size_t *size, size_t *max_records) {
    *size = 8 << 20;
    *buffer = static_cast<uint8_t *>(aligned_alloc(8, *size));
    *max_records = 0;
}

static void CUPTIAPI complete(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t) {
    free(buffer);
}

template <typename F> static double ns_each(long n, F f) {
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < n; i++) f(i);
    auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    cudaFree(0);
    if (cuptiActivityRegisterCallbacks(request, complete) != CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) != CUPTI_SUCCESS) {
        printf("FAIL nvtx_parts_cost: CUPTI refused the external correlation activity\n");
        return 1;
    }
    uint64_t last = 0;
    double pair = ns_each(n, [&](long i) {
        cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, i + 1);
        cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &last);
    });
    struct timespec ts;
    double realtime = ns_each(n, [&](long) { clock_gettime(CLOCK_REALTIME, &ts); });
    double coarse = ns_each(n, [&](long) { clock_gettime(CLOCK_REALTIME_COARSE, &ts); });
    cuptiActivityFlushAll(1);
    printf("CUPTI external correlation push+pop %.1f ns; clock_gettime REALTIME %.1f ns, "
           "REALTIME_COARSE %.1f ns (%ld each)\n", pair, realtime, coarse, n);
    return 0;
}
