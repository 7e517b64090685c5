// NVTX ranges from C++ with the toolkit's NVTX v3 header, for tests/gpu/nvtx.sh:
// each kernel is named after the range it is launched in (k_forward runs in
// "forward", k_layer7 in "layer 7" of domain "mylib", ...), so the check can tell
// from the trace and `cupmon stats --by-range` whether each landed in its range.
// Also drawn on the CPU thread: marks ("checkpoint" inside "layer 7", "step end" of
// domain mylib with a named category and a color), "layer 7"'s category "compute" and
// color, and "left open", pushed last and never popped (open when the window ends).
#include <cstdio>
#include <cstdlib>
#include <nvtx3/nvToolsExt.h>

__global__ void k_forward(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void k_layer7(float *x) { x[threadIdx.x] *= 1.5f; }
__global__ void k_backward(float *x) { x[threadIdx.x] -= 0.5f; }
__global__ void k_optimizer(float *x) { x[threadIdx.x] *= 0.9f; }
__global__ void k_none(float *x) { x[threadIdx.x] = 0.0f; }

int main(int argc, char **argv) {
    int steps = argc > 1 ? atoi(argv[1]) : 3;
    float *x;
    cudaMalloc(&x, 256 * sizeof(float));
    cudaDeviceSynchronize();
    nvtxDomainHandle_t lib = nvtxDomainCreateA("mylib");
    nvtxStringHandle_t layer = nvtxDomainRegisterStringA(lib, "layer 7");
    nvtxDomainNameCategoryA(lib, 5, "compute");
    for (int s = 0; s < steps; s++) {
        nvtxRangePushA("forward");
        for (int i = 0; i < 3; i++) k_forward<<<1, 256>>>(x);
        nvtxEventAttributes_t a = {};
        a.version = NVTX_VERSION;
        a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        a.colorType = NVTX_COLOR_ARGB;
        a.color = 0xff00ff00;
        a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        a.message.registered = layer;
        a.category = 5;
        nvtxDomainRangePushEx(lib, &a);
        nvtxMarkA("checkpoint");
        for (int i = 0; i < 2; i++) k_layer7<<<1, 256>>>(x);
        nvtxDomainRangePop(lib);
        nvtxRangePop();
        nvtxRangePushA("backward");
        for (int i = 0; i < 4; i++) k_backward<<<1, 256>>>(x);
        nvtxRangePop();
        nvtxRangeId_t opt = nvtxRangeStartA("optimizer");
        k_optimizer<<<1, 256>>>(x);
        nvtxRangeEnd(opt);
        k_none<<<1, 256>>>(x);
        nvtxEventAttributes_t m = {};
        m.version = NVTX_VERSION;
        m.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        m.category = 5;
        m.colorType = NVTX_COLOR_ARGB;
        m.color = 0xff123456;
        m.messageType = NVTX_MESSAGE_TYPE_ASCII;
        m.message.ascii = "step end";
        nvtxDomainMarkEx(lib, &m);
    }
    cudaDeviceSynchronize();
    nvtxRangePushA("left open");
    printf("steps %d kernels %d\n", steps, steps * 11);
    return 0;
}
