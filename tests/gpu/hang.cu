// A rank of a job for tests/gpu/hang.sh: small kernels every 10 ms for WARMUP
// seconds, then according to MODE:
//   healthy: goes on launching until TOTAL seconds have passed;
//   spin:    launches a kernel that spins for TOTAL seconds (a compute kernel that
//            does not end), then waits for it in cudaDeviceSynchronize;
//   stop:    stops launching (the host thread sleeps TOTAL seconds).
//
// usage: hang MODE WARMUP TOTAL
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

__global__ void step(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = x[i] * 0.5f + 1.0f; }

// Busy for `ns` nanoseconds of the GPU's global timer.
__global__ void spin_forever(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}

int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: hang healthy|spin|stop WARMUP TOTAL\n"); return 2; }
  const char *mode = argv[1];
  double warmup = atof(argv[2]), total = atof(argv[3]);
  const int n = 1 << 20;
  float *x; CHECK(cudaMalloc(&x, n * sizeof(float)));
  cudaStream_t s; CHECK(cudaStreamCreate(&s));
  auto t0 = std::chrono::steady_clock::now();
  auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  double until = strcmp(mode, "healthy") == 0 ? total : warmup;
  long steps = 0;
  while (since() < until) {
    step<<<n / 256, 256, 0, s>>>(x, n);
    CHECK(cudaStreamSynchronize(s));
    ++steps;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  printf("{\"mode\":\"%s\",\"steps\":%ld}\n", mode, steps);
  fflush(stdout);
  if (strcmp(mode, "spin") == 0) {
    spin_forever<<<1, 1, 0, s>>>((unsigned long long)(total * 1e9));
    CHECK(cudaDeviceSynchronize());
  } else if (strcmp(mode, "stop") == 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(total));
  }
  return 0;
}
