// Allocations and frees of every flavour, for cupmon's MEMORY2 / MEMORY_POOL check:
// cudaMalloc/cudaFree, cudaMallocHost, stream-ordered cudaMallocAsync/cudaFreeAsync
// from the default pool, and a trim of that pool. Prints one JSON line with each
// allocation's address and size, for memory_check.py to compare with the dump.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

__global__ void touch(char *p, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; if (i < n) p[i] = 1; }

int main() {
  const size_t sizes[3] = {1 << 20, 3 << 20, 16 << 20};
  void *dev[3]; void *host; void *async_p[2];
  cudaStream_t s; CHECK(cudaStreamCreate(&s));
  for (int i = 0; i < 3; i++) CHECK(cudaMalloc(&dev[i], sizes[i]));
  CHECK(cudaMallocHost(&host, 2 << 20));
  CHECK(cudaMallocAsync(&async_p[0], 4 << 20, s));
  CHECK(cudaMallocAsync(&async_p[1], 8 << 20, s));
  touch<<<64, 256, 0, s>>>((char *)async_p[0], 4 << 20);
  CHECK(cudaFreeAsync(async_p[0], s));
  CHECK(cudaFreeAsync(async_p[1], s));
  CHECK(cudaStreamSynchronize(s));
  cudaMemPool_t pool; CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
  CHECK(cudaMemPoolTrimTo(pool, 0));
  for (int i = 0; i < 3; i++) CHECK(cudaFree(dev[i]));
  CHECK(cudaFreeHost(host));
  CHECK(cudaDeviceSynchronize());
  printf("{\"device\": [");
  for (int i = 0; i < 3; i++) printf("%s[%llu, %zu]", i ? ", " : "", (unsigned long long)dev[i], sizes[i]);
  printf("], \"host\": [%llu, %d], \"async\": [[%llu, %d], [%llu, %d]]}\n",
         (unsigned long long)host, 2 << 20, (unsigned long long)async_p[0], 4 << 20,
         (unsigned long long)async_p[1], 8 << 20);
  return 0;
}
