// The floor for always-on collection (issue 7): the least a CUPTI activity consumer can
// do and still collect kernels, copies and memsets. Loaded by the CUDA driver through
// CUDA_INJECTION64_PATH; it enables CONCURRENT_KERNEL, MEMCPY and MEMSET, hands CUPTI a
// fresh 4 MiB buffer on request and frees each completed buffer unread. Whatever cupmon
// adds on top of this is cupmon's own cost; what this adds over a bare run is CUPTI's.
//
// Per completed buffer it also asks CUPTI for the dropped-record count (cupmon does the
// same, and a floor that silently dropped records would not be a fair floor). When
// MINCON_INFO names a file, the CUPTI version, the libcupti path and the totals are
// written there as one JSON object at exit; nothing is written otherwise.
//
// build (run.sh does this):
//   gcc -O2 -shared -fPIC -o libminimal_consumer.so minimal_consumer.c
//       -I$CUDA/targets/x86_64-linux/include -L$CUPTI_LIB -lcupti -Wl,-rpath,$CUPTI_LIB
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define BUFFER_SIZE (4u << 20)

static atomic_ullong buffers_requested, buffers_completed, valid_bytes, dropped_records;
static atomic_int failures;

static void report_failure(const char *what, CUptiResult rc) {
    const char *msg = NULL;
    cuptiGetResultString(rc, &msg);
    fprintf(stderr, "[minimal_consumer] %s failed: %s\n", what, msg ? msg : "?");
    atomic_fetch_add(&failures, 1);
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
    *buffer = aligned_alloc(8, BUFFER_SIZE);
    *size = *buffer ? BUFFER_SIZE : 0;
    *max_records = 0;  // as many as fit
    atomic_fetch_add_explicit(&buffers_requested, 1, memory_order_relaxed);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
                                      size_t size, size_t valid) {
    (void)size;
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS && dropped)
        atomic_fetch_add_explicit(&dropped_records, dropped, memory_order_relaxed);
    atomic_fetch_add_explicit(&buffers_completed, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&valid_bytes, valid, memory_order_relaxed);
    free(buffer);
}

static void write_info(void) {
    const char *path = getenv("MINCON_INFO");
    if (!path || !*path) return;
    uint32_t version = 0;
    cuptiGetVersion(&version);
    // The file libcupti resolved to (its versioned name tells the exact release).
    Dl_info info = {0};
    char real[PATH_MAX] = "";
    if (dladdr((void *)&cuptiGetVersion, &info) && info.dli_fname &&
        !realpath(info.dli_fname, real))
        snprintf(real, sizeof real, "%s", info.dli_fname);
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f,
            "{\"pid\":%d,\"cupti_api_version\":%u,\"libcupti\":\"%s\",\"buffer_size\":%u,"
            "\"buffers_requested\":%llu,\"buffers_completed\":%llu,\"valid_bytes\":%llu,"
            "\"dropped_records\":%llu,\"failures\":%d}\n",
            (int)getpid(), version, real, BUFFER_SIZE, (unsigned long long)buffers_requested,
            (unsigned long long)buffers_completed, (unsigned long long)valid_bytes,
            (unsigned long long)dropped_records, atomic_load(&failures));
    fclose(f);
}

// A forced flush also returns buffers holding unfinished records, so every buffer CUPTI
// filled goes through buffer_completed before the process ends.
static void at_exit(void) {
    CUptiResult rc = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (rc != CUPTI_SUCCESS) report_failure("cuptiActivityFlushAll", rc);
    write_info();
}

int InitializeInjection(void) {
    CUptiResult rc = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (rc != CUPTI_SUCCESS) {
        report_failure("cuptiActivityRegisterCallbacks", rc);
        return 0;
    }
    static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                               CUPTI_ACTIVITY_KIND_MEMCPY,
                                               CUPTI_ACTIVITY_KIND_MEMSET};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        rc = cuptiActivityEnable(kinds[i]);
        if (rc != CUPTI_SUCCESS) report_failure("cuptiActivityEnable", rc);
    }
    atexit(at_exit);
    return 1;
}
