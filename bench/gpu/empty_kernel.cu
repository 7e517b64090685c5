// Launch-bound workload for cupmon's overhead benchmark (issue 7, workload a).
//
// Default mode: N launches of an empty kernel on one stream, timed with a host clock
// from the first launch to the end of cudaDeviceSynchronize. Every launch is recorded
// by CUPTI as one CONCURRENT_KERNEL record, so the per-launch time difference between
// configurations is the collector's cost per kernel.
//
// --burst SECONDS: launch as fast as possible (or at --rate) for that long, from
// --threads host threads, each with its own stream, either one launch per kernel
// (--graph 0) or by replaying a captured CUDA graph of --graph kernel nodes (each node
// still yields one kernel record). Used for the >= 1M kernels/s zero-drop check and for
// the 60 s memory-flatness run.
//
// Output: one line `BENCH {json}` on stdout (the driver greps for the prefix, because
// `cupmon run` prints its own summary on the same terminal).
//
// usage: empty_kernel [--launches N] [--warmup W]
//        empty_kernel --burst SECONDS [--threads T] [--graph K] [--rate KERNELS_PER_S]

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
#include <unistd.h>

__global__ void empty_kernel() {}

#define CHECK(call)                                                                   \
    do {                                                                              \
        cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess) {                                                    \
            fprintf(stderr, "empty_kernel: %s failed at line %d: %s\n", #call,        \
                    __LINE__, cudaGetErrorString(err_));                              \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

using Clock = std::chrono::steady_clock;

static double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Options {
    long launches = 200000;
    long warmup = 2000;
    double burst_s = 0;   // 0: the timed launch loop; > 0: burst mode
    int threads = 1;
    int graph = 0;        // kernel nodes per graph; 0: plain launches
    double rate = 0;      // kernels/s over all threads; 0: as fast as possible
    bool vary = false;    // graph nodes with 512 different launch configurations
};

static void usage() {
    fprintf(stderr,
            "usage: empty_kernel [--launches N] [--warmup W]\n"
            "       empty_kernel --burst SECONDS [--threads T] [--graph K] [--rate R] [--vary]\n");
    exit(2);
}

static Options parse(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--vary") { o.vary = true; continue; }
        if (i + 1 >= argc) usage();
        const char *v = argv[++i];
        if (a == "--launches") o.launches = atol(v);
        else if (a == "--warmup") o.warmup = atol(v);
        else if (a == "--burst") o.burst_s = atof(v);
        else if (a == "--threads") o.threads = atoi(v);
        else if (a == "--graph") o.graph = atoi(v);
        else if (a == "--rate") o.rate = atof(v);
        else usage();
    }
    if (o.launches < 1 || o.warmup < 0 || o.threads < 1 || o.graph < 0 || o.rate < 0) usage();
    return o;
}

// One launcher thread of burst mode. Checking the clock every batch (not every
// launch) keeps the loop as tight as a plain launch loop.
struct Launcher {
    cudaStream_t stream = nullptr;
    cudaGraphExec_t exec = nullptr;
    long kernels = 0;  // kernels launched by this thread (graph nodes count one each)
    // Why a burst may end early or thin out (the H200 10-minute run 3 ended with one
    // graph per thread after a gap): the longest single launch call (CUPTI or the
    // driver blocking the launching thread), and the most the thread fell behind its
    // pacing schedule (a thread that was not run, e.g. a frozen process).
    double max_launch_s = 0;
    double max_behind_s = 0;
    double last_launch_s = 0;  // when the last launch returned, from the burst's start
};

static void launcher_loop(Launcher *l, const Options *o, Clock::time_point t0,
                          std::atomic<bool> *stop) {
    const int per_batch = o->graph > 0 ? o->graph : 256;
    const double thread_rate = o->rate > 0 ? o->rate / o->threads : 0;
    while (!stop->load(std::memory_order_relaxed)) {
        double before = seconds_since(t0);
        if (o->graph > 0) {
            CHECK(cudaGraphLaunch(l->exec, l->stream));
        } else {
            for (int i = 0; i < per_batch; i++) empty_kernel<<<1, 1, 0, l->stream>>>();
        }
        l->last_launch_s = seconds_since(t0);
        l->max_launch_s = std::max(l->max_launch_s, l->last_launch_s - before);
        l->kernels += per_batch;
        if (thread_rate > 0) {
            // Pace to the target rate: sleep until this thread is back on schedule.
            double ahead = l->kernels / thread_rate - seconds_since(t0);
            if (ahead > 0) std::this_thread::sleep_for(std::chrono::duration<double>(ahead));
            else l->max_behind_s = std::max(l->max_behind_s, -ahead);
        }
        if (seconds_since(t0) >= o->burst_s) break;
    }
    stop->store(true);
}

static int run_burst(const Options &o) {
    std::vector<Launcher> ls(o.threads);
    long warm = 0;
    for (auto &l : ls) {
        CHECK(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking));
        if (o.graph > 0) {
            // Load the kernel's module before capturing (lazy loading inside a capture
            // is not allowed on every CUDA version).
            empty_kernel<<<1, 1, 0, l.stream>>>();
            CHECK(cudaStreamSynchronize(l.stream));
            warm += 1;
            cudaGraph_t g;
            CHECK(cudaStreamBeginCapture(l.stream, cudaStreamCaptureModeThreadLocal));
            for (int i = 0; i < o.graph; i++) {
                // --vary: records that compress like a real job's (many launch
                // configurations), not like one kernel repeated.
                dim3 grid = o.vary ? dim3(1 + (i * 7919) % 61, 1 + i % 3) : dim3(1);
                dim3 block = o.vary ? dim3(32 * (1 + i % 8)) : dim3(1);
                empty_kernel<<<grid, block, 0, l.stream>>>();
            }
            CHECK(cudaStreamEndCapture(l.stream, &g));
            CHECK(cudaGraphInstantiate(&l.exec, g, 0));
            CHECK(cudaGraphDestroy(g));
        }
    }
    // Warm-up outside the measured window (module load, graph upload, CUPTI's first-use costs).
    for (auto &l : ls) {
        if (o.graph > 0) { CHECK(cudaGraphLaunch(l.exec, l.stream)); warm += o.graph; }
        else { for (int i = 0; i < 256; i++) empty_kernel<<<1, 1, 0, l.stream>>>(); warm += 256; }
    }
    CHECK(cudaDeviceSynchronize());

    std::atomic<bool> stop{false};
    auto t0 = Clock::now();
    // The burst's start on the wall clock, to set against the dump's Unix-ns times.
    double start_unix_s =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    std::vector<std::thread> ts;
    for (auto &l : ls) ts.emplace_back(launcher_loop, &l, &o, t0, &stop);
    for (auto &t : ts) t.join();
    double launch_s = seconds_since(t0);
    CHECK(cudaDeviceSynchronize());
    double total_s = seconds_since(t0);
    CHECK(cudaGetLastError());

    long kernels = 0;
    double max_launch_s = 0, max_behind_s = 0, first_stop_s = 1e300;
    for (auto &l : ls) {
        kernels += l.kernels;
        max_launch_s = std::max(max_launch_s, l.max_launch_s);
        max_behind_s = std::max(max_behind_s, l.max_behind_s);
        first_stop_s = std::min(first_stop_s, l.last_launch_s);
    }
    printf("BENCH {\"workload\":\"empty_kernel\",\"mode\":\"burst\",\"pid\":%d,"
           "\"threads\":%d,\"graph\":%d,\"target_rate\":%.0f,\"seconds\":%.6f,"
           "\"launch_seconds\":%.6f,\"kernels\":%ld,\"warmup_kernels\":%ld,"
           "\"total_kernels\":%ld,\"rate\":%.1f,\"max_launch_call_s\":%.6f,"
           "\"max_behind_schedule_s\":%.6f,\"first_thread_last_launch_s\":%.6f,"
           "\"start_unix_s\":%.6f}\n",
           (int)getpid(), o.threads, o.graph, o.rate, total_s, launch_s, kernels, warm,
           kernels + warm, kernels / total_s, max_launch_s, max_behind_s, first_stop_s,
           start_unix_s);
    return 0;
}

static int run_loop(const Options &o) {
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (long i = 0; i < o.warmup; i++) empty_kernel<<<1, 1, 0, s>>>();
    CHECK(cudaDeviceSynchronize());

    auto t0 = Clock::now();
    for (long i = 0; i < o.launches; i++) empty_kernel<<<1, 1, 0, s>>>();
    double launch_s = seconds_since(t0);
    CHECK(cudaDeviceSynchronize());
    double total_s = seconds_since(t0);
    CHECK(cudaGetLastError());

    printf("BENCH {\"workload\":\"empty_kernel\",\"mode\":\"loop\",\"pid\":%d,"
           "\"launches\":%ld,\"warmup_kernels\":%ld,\"total_kernels\":%ld,"
           "\"seconds\":%.6f,\"launch_seconds\":%.6f,\"ns_per_launch\":%.2f}\n",
           (int)getpid(), o.launches, o.warmup, o.launches + o.warmup, total_s, launch_s,
           total_s * 1e9 / o.launches);
    return 0;
}

int main(int argc, char **argv) {
    Options o = parse(argc, argv);
    CHECK(cudaFree(0));  // create the context (and let the injection library start) untimed
    // For the driver's memory sampling: this process's pid, now that the context exists
    // (under `cupmon run` the driver's child is cupmon, not this process).
    printf("BENCH_PID %d\n", (int)getpid());
    fflush(stdout);
    int rc = o.burst_s > 0 ? run_burst(o) : run_loop(o);
    fflush(stdout);
    return rc;
}
