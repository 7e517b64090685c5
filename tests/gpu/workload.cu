// cupmon's GPU test workload: what the fixture recorder's workload covers
// (streams, templated and extern "C" kernels, every common memcpy kind,
// memset, events, a CUDA graph) plus launches from a second thread. It prints
// one JSON line with what it launched, for tests/gpu/check.py to compare, and
// the truth tests/gpu/matrix_check.py compares with: a kernel's duration timed by
// CUDA events, the streams' ids, the runtime and driver versions.
//
// usage: workload [ITERATIONS] [SECONDS_BETWEEN_ITERATIONS]
#include <cuda_runtime.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

namespace gpu_test {
template <typename T> __global__ void scale(T *x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }
template <typename T, int B> __global__ void blocked_add(T *y, const T *x, int n) {
  int i = blockIdx.x * B + threadIdx.x; if (i < n) y[i] += x[i]; }
namespace {
__global__ void hidden(int *p) { p[threadIdx.x] += 1; }
}
void launch_hidden(int *p, cudaStream_t s) { hidden<<<1, 64, 0, s>>>(p); }
// Busy for `ns` nanoseconds of the GPU's global timer: a kernel of known length.
__global__ void spin_ns(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
}
extern "C" __global__ void plain_c_kernel(int *p) { p[threadIdx.x] = threadIdx.x; }

static long tid() { return syscall(SYS_gettid); }

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 4;
  double pause = argc > 2 ? atof(argv[2]) : 0.0;
  const int n = 1 << 20;
  float *a, *b, *h_pinned, *h_pageable; double *d; int *ip;
  CHECK(cudaMalloc(&a, n * 4)); CHECK(cudaMalloc(&b, n * 4)); CHECK(cudaMalloc(&d, n * 8));
  CHECK(cudaMalloc(&ip, 1024));
  CHECK(cudaMallocHost(&h_pinned, n * 4)); h_pageable = (float *)malloc(n * 4);
  for (int i = 0; i < n; i++) { h_pinned[i] = 1.0f; h_pageable[i] = 2.0f; }
  cudaStream_t s1, s2; CHECK(cudaStreamCreate(&s1)); CHECK(cudaStreamCreate(&s2));
  cudaEvent_t ev; CHECK(cudaEventCreate(&ev));
  long kernels = 0, memcpys = 0, memsets = 0;
  for (int it = 0; it < iters; it++) {
    CHECK(cudaMemcpyAsync(a, h_pinned, n * 4, cudaMemcpyHostToDevice, s1)); memcpys++;   // pinned HtoD
    CHECK(cudaMemcpy(b, h_pageable, n * 4, cudaMemcpyHostToDevice)); memcpys++;          // pageable HtoD
    CHECK(cudaMemsetAsync(ip, 0, 1024, s2)); memsets++;
    gpu_test::scale<float><<<n / 256, 256, 0, s1>>>(a, 2.0f, n); kernels++;
    gpu_test::scale<double><<<n / 256, 256, 0, s2>>>(d, 0.5, n); kernels++;
    CHECK(cudaEventRecord(ev, s1));
    CHECK(cudaStreamWaitEvent(s2, ev, 0));
    gpu_test::blocked_add<float, 256><<<n / 256, 256, 1024, s2>>>(b, a, n); kernels++;
    plain_c_kernel<<<1, 32>>>(ip); kernels++;
    gpu_test::launch_hidden(ip, s1); kernels++;
    CHECK(cudaMemcpyAsync(a, b, n * 4, cudaMemcpyDeviceToDevice, s2)); memcpys++;
    CHECK(cudaMemcpyAsync(h_pinned, a, n * 4, cudaMemcpyDeviceToHost, s2)); memcpys++;
    CHECK(cudaEventSynchronize(ev));
    CHECK(cudaStreamSynchronize(s2));
    if (pause > 0) std::this_thread::sleep_for(std::chrono::duration<double>(pause));
  }
  // One kernel of 2 ms between two events on s1: the duration's truth.
  cudaEvent_t t0, t1; CHECK(cudaEventCreate(&t0)); CHECK(cudaEventCreate(&t1));
  CHECK(cudaEventRecord(t0, s1));
  gpu_test::spin_ns<<<1, 1, 0, s1>>>(2000000ull); kernels++;
  CHECK(cudaEventRecord(t1, s1));
  CHECK(cudaEventSynchronize(t1));
  float spin_ms = 0; CHECK(cudaEventElapsedTime(&spin_ms, t0, t1));
  // Launches from a second thread: API records must carry its OS thread id.
  long worker_tid = 0;
  std::thread t([&] {
    worker_tid = tid();
    for (int i = 0; i < 10; i++) plain_c_kernel<<<1, 32, 0, s1>>>(ip);
    CHECK(cudaStreamSynchronize(s1));
  });
  t.join(); kernels += 10;
  // A CUDA graph: captured on s1, replayed twice (3 nodes each).
  cudaGraph_t g; cudaGraphExec_t ge;
  CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  gpu_test::scale<float><<<n / 256, 256, 0, s1>>>(a, 1.5f, n);
  CHECK(cudaMemsetAsync(ip, 1, 1024, s1));
  gpu_test::blocked_add<float, 256><<<n / 256, 256, 0, s1>>>(b, a, n);
  CHECK(cudaStreamEndCapture(s1, &g));
  CHECK(cudaGraphInstantiate(&ge, g, 0));
  for (int r = 0; r < 2; r++) { CHECK(cudaGraphLaunch(ge, s1)); kernels += 2; memsets += 1; }
  CHECK(cudaDeviceSynchronize());
  int runtime = 0, driver = 0;
  CHECK(cudaRuntimeGetVersion(&runtime)); CHECK(cudaDriverGetVersion(&driver));
  unsigned long long id1 = 0, id2 = 0;
  CHECK(cudaStreamGetId(s1, &id1)); CHECK(cudaStreamGetId(s2, &id2));
  printf("{\"kernels\": %ld, \"memcpy\": %ld, \"memset\": %ld, \"main_tid\": %ld, \"worker_tid\": %ld, \"pid\": %d, "
         "\"spin_ms\": %.4f, \"runtime\": %d, \"driver\": %d, \"headers\": %d, \"s1\": %llu, \"s2\": %llu}\n",
         kernels, memcpys, memsets, tid(), worker_tid, getpid(), spin_ms, runtime, driver, CUDART_VERSION,
         id1, id2);
  return 0;
}
