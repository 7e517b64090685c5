/*
 * The reference for cupmon's occupancy code (crates/cupmon-trace/src/occupancy.rs):
 * NVIDIA's own cuda_occupancy.h, fed as Kineto feeds it, plus Kineto's float
 * arithmetic around it. Built and run by run.sh; the header is never committed.
 *
 * stdin, one launch a line, 21 integers:
 *   computeMajor computeMinor maxThreadsPerBlock maxThreadsPerMultiprocessor
 *   regsPerBlock regsPerMultiprocessor warpSize sharedMemPerBlock
 *   sharedMemPerMultiprocessor numSms sharedMemPerBlockOptin reservedSharedMemPerBlock
 *   registersPerThread staticSharedMemory dynamicSharedMemory
 *   blockX blockY blockZ gridX gridY gridZ
 * stdout, one line each:
 *   status activeBlocks limitingFactors blockLimitRegs blockLimitSharedMem
 *   blockLimitWarps blockLimitBlocks blockLimitBarriers allocatedRegistersPerBlock
 *   allocatedSharedMemPerBlock blocksPerSmText warpsPerSmText percent211 percentLround
 * where the texts are what torch 2.11's Kineto prints (printf %f, "inf" quoted)
 * and the percents are its (int)(0.5 + x * 100.0) and later Kineto's lround.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_occupancy.h>

/* std::to_string(float) is %f of the value widened to double. */
static void kineto_text(char *out, size_t n, float v)
{
    if (isinf(v)) {
        snprintf(out, n, "\"inf\"");
    } else {
        snprintf(out, n, "%f", (double)v);
    }
}

int main(void)
{
    char line[1024];
    while (fgets(line, sizeof line, stdin)) {
        long long d[12];
        int32_t regs, static_smem, dynamic_smem, b[3], g[3];
        int got = sscanf(line,
                         "%lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld"
                         " %d %d %d %d %d %d %d %d %d",
                         &d[0], &d[1], &d[2], &d[3], &d[4], &d[5], &d[6], &d[7], &d[8],
                         &d[9], &d[10], &d[11], &regs, &static_smem, &dynamic_smem,
                         &b[0], &b[1], &b[2], &g[0], &g[1], &g[2]);
        if (got != 21) {
            fprintf(stderr, "oracle: expected 21 integers, got %d in: %s", got, line);
            return 2;
        }
        cudaOccDeviceProp prop;
        memset(&prop, 0, sizeof prop);
        prop.computeMajor = (int)d[0];
        prop.computeMinor = (int)d[1];
        prop.maxThreadsPerBlock = (int)d[2];
        prop.maxThreadsPerMultiprocessor = (int)d[3];
        prop.regsPerBlock = (int)d[4];
        prop.regsPerMultiprocessor = (int)d[5];
        prop.warpSize = (int)d[6];
        prop.sharedMemPerBlock = (size_t)d[7];
        prop.sharedMemPerMultiprocessor = (size_t)d[8];
        prop.numSms = (int)d[9];
        prop.sharedMemPerBlockOptin = (size_t)d[10];
        prop.reservedSharedMemPerBlock = (size_t)d[11];

        /* Kineto's attributes; the fields it leaves alone keep the values of the
         * header's C++ default constructor (no barriers, no virtual resources). */
        cudaOccFuncAttributes attr;
        memset(&attr, 0, sizeof attr);
        attr.maxThreadsPerBlock = INT_MAX;
        attr.numRegs = (uint16_t)regs;
        attr.sharedSizeBytes = (size_t)static_smem;
        attr.partitionedGCConfig = PARTITIONED_GC_OFF;
        attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_DEFAULT;
        attr.maxDynamicSharedSizeBytes = 0;
        attr.numBlockBarriers = 0;
        attr.virtualResourceCount = 0;
        /* Kineto's `= {}` runs the C++ constructor: no cache or carveout preference. */
        cudaOccDeviceState state;
        state.cacheConfig = CACHE_PREFER_NONE;
        state.carveoutConfig = SHAREDMEM_CARVEOUT_DEFAULT;

        int block_size = b[0] * b[1] * b[2];
        int blocks = g[0] * g[1] * g[2];
        int sm_count = prop.numSms;
        float blocks_per_sm = blocks / (float)sm_count;
        float warps_per_sm = blocks_per_sm * block_size / 32;

        cudaOccResult result;
        memset(&result, 0, sizeof result);
        cudaOccError status = cudaOccMaxActiveBlocksPerMultiprocessor(
            &result, &prop, &attr, &state, block_size, (size_t)dynamic_smem);
        float occupancy = -1.0f;
        if (status == CUDA_OCC_SUCCESS) {
            float resident = sm_count ? blocks / (float)sm_count : -1.0f;
            if (result.activeBlocksPerMultiprocessor < resident) {
                resident = result.activeBlocksPerMultiprocessor;
            }
            occupancy = resident * block_size / (float)prop.maxThreadsPerMultiprocessor;
        }
        char bps_text[400], wps_text[400];
        kineto_text(bps_text, sizeof bps_text, blocks_per_sm);
        kineto_text(wps_text, sizeof wps_text, warps_per_sm);
        printf("%d %d %u %d %d %d %d %d %d %zu %s %s %d %ld\n", (int)status,
               result.activeBlocksPerMultiprocessor, result.limitingFactors,
               result.blockLimitRegs, result.blockLimitSharedMem, result.blockLimitWarps,
               result.blockLimitBlocks, result.blockLimitBarriers,
               result.allocatedRegistersPerBlock, result.allocatedSharedMemPerBlock,
               bps_text, wps_text, (int)(0.5 + occupancy * 100.0),
               lround(occupancy * 100.0));
    }
    return 0;
}
