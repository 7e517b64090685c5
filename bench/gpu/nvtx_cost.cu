// The cost of an NVTX push/pop pair (toolkit's <nvtx3/nvToolsExt.h>), for
// bench/gpu/nvtx_cost.sh: CUDA is initialised first (so cupmon's session runs), then
// N pairs of one name and N of eight names in turn, each timed as a whole; prints the
// mean ns per pair. With no NVTX tool, NVTX's calls are no-ops.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nvtx3/nvToolsExt.h>

static double ns_per_pair(long n, bool eight) {
    static const char *names[8] = {"forward", "backward", "layer 0", "layer 1",
                                   "layer 2", "layer 3", "optimizer", "step"};
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < n; i++) {
        nvtxRangePushA(eight ? names[i & 7] : "forward");
        nvtxRangePop();
    }
    auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    cudaFree(0);
    nvtxRangePushA("warm up");
    nvtxRangePop();
    double one = ns_per_pair(n, false), eight = ns_per_pair(n, true);
    printf("pairs %ld: one name %.1f ns, 8 names %.1f ns\n", n, one, eight);
    return 0;
}
