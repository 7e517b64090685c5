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
// Opt-in knobs for the stall sweep (bench/recorder/sweep.sh); unset, the floor is as above:
//   MINCON_COUNT=1            count the records in each completed buffer by kind (on CUPTI's
//                             completion thread, off the launch path) and note the time of
//                             the last buffer that held kernels
//   MINCON_FLUSH_MS=N         a thread calling cuptiActivityFlushAll(0) every N ms, as cupmon
//                             does; the longest flush is reported
//   MINCON_DEVICE_BUFFER_SIZE=BYTES, MINCON_DEVICE_BUFFER_POOL_LIMIT=N,
//   MINCON_CUPTI_FLUSH_PERIOD_MS=N    CUPTI's own settings (cuptiActivitySetAttribute,
//                             cuptiActivityFlushPeriod), set before any activity is enabled
//   MINCON_BUFFER_SIZE=BYTES  the host buffer size (default 4 MiB)
//
// build (run.sh does this):
//   gcc -O2 -shared -fPIC -o libminimal_consumer.so minimal_consumer.c
//       -I$CUDA/targets/x86_64-linux/include -L$CUPTI_LIB -lcupti -Wl,-rpath,$CUPTI_LIB
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <time.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define DEFAULT_BUFFER_SIZE (4u << 20)

static size_t buffer_size = DEFAULT_BUFFER_SIZE;
static atomic_ullong buffers_requested, buffers_completed, valid_bytes, dropped_records;
static atomic_int failures;
// MINCON_COUNT: records by kind, and when (ns since start) kernels last arrived.
static int count_records;
static atomic_ullong kernel_records, memcpy_records, memset_records, other_records;
static atomic_ullong last_kernel_buffer_ns, flushes, flush_longest_ns;
static uint64_t start_ns;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static unsigned long long env_u64(const char *name) {
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 0) : 0;
}

static void report_failure(const char *what, CUptiResult rc) {
    const char *msg = NULL;
    cuptiGetResultString(rc, &msg);
    fprintf(stderr, "[minimal_consumer] %s failed: %s\n", what, msg ? msg : "?");
    atomic_fetch_add(&failures, 1);
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
    *buffer = aligned_alloc(8, buffer_size);
    *size = *buffer ? buffer_size : 0;
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
    if (count_records && valid) {
        CUpti_Activity *record = NULL;
        unsigned long long k = 0, c = 0, m = 0, o = 0;
        while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
            switch (record->kind) {
            case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
            case CUPTI_ACTIVITY_KIND_KERNEL: k++; break;
            case CUPTI_ACTIVITY_KIND_MEMCPY: c++; break;
            case CUPTI_ACTIVITY_KIND_MEMSET: m++; break;
            default: o++;
            }
        }
        atomic_fetch_add_explicit(&kernel_records, k, memory_order_relaxed);
        atomic_fetch_add_explicit(&memcpy_records, c, memory_order_relaxed);
        atomic_fetch_add_explicit(&memset_records, m, memory_order_relaxed);
        atomic_fetch_add_explicit(&other_records, o, memory_order_relaxed);
        if (k) atomic_store_explicit(&last_kernel_buffer_ns, now_ns() - start_ns, memory_order_relaxed);
    }
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
            "\"dropped_records\":%llu,\"failures\":%d,\"kernel_records\":%llu,"
            "\"memcpy_records\":%llu,\"memset_records\":%llu,\"other_records\":%llu,"
            "\"last_kernel_buffer_s\":%.3f,\"flushes\":%llu,\"flush_longest_ms\":%.1f,"
            "\"counted\":%s}\n",
            (int)getpid(), version, real, (unsigned)buffer_size, (unsigned long long)buffers_requested,
            (unsigned long long)buffers_completed, (unsigned long long)valid_bytes,
            (unsigned long long)dropped_records, atomic_load(&failures),
            (unsigned long long)kernel_records, (unsigned long long)memcpy_records,
            (unsigned long long)memset_records, (unsigned long long)other_records,
            last_kernel_buffer_ns / 1e9, (unsigned long long)flushes, flush_longest_ns / 1e6,
            count_records ? "true" : "false");
    fclose(f);
}

// A forced flush also returns buffers holding unfinished records, so every buffer CUPTI
// filled goes through buffer_completed before the process ends.
static void at_exit(void) {
    CUptiResult rc = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (rc != CUPTI_SUCCESS) report_failure("cuptiActivityFlushAll", rc);
    write_info();
}

// MINCON_FLUSH_MS: the periodic flush cupmon does, to tell CUPTI's stall from cupmon's.
static void *flush_thread(void *arg) {
    unsigned long long period_ms = *(unsigned long long *)arg;
    for (;;) {
        struct timespec ts = {(time_t)(period_ms / 1000), (long)(period_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        uint64_t t0 = now_ns();
        CUptiResult rc = cuptiActivityFlushAll(0);
        uint64_t took = now_ns() - t0;
        if (rc != CUPTI_SUCCESS) report_failure("cuptiActivityFlushAll(0)", rc);
        atomic_fetch_add(&flushes, 1);
        unsigned long long prev = atomic_load(&flush_longest_ns);
        while (took > prev && !atomic_compare_exchange_weak(&flush_longest_ns, &prev, took)) {}
    }
    return NULL;
}

static void set_attribute(const char *env, CUpti_ActivityAttribute attr) {
    unsigned long long v = env_u64(env);
    if (!v) return;
    size_t value = (size_t)v, size = sizeof value;
    CUptiResult rc = cuptiActivitySetAttribute(attr, &size, &value);
    if (rc != CUPTI_SUCCESS) report_failure(env, rc);
}

int InitializeInjection(void) {
    start_ns = now_ns();
    count_records = env_u64("MINCON_COUNT") != 0;
    if (env_u64("MINCON_BUFFER_SIZE")) buffer_size = (size_t)env_u64("MINCON_BUFFER_SIZE");
    set_attribute("MINCON_DEVICE_BUFFER_SIZE", CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE);
    set_attribute("MINCON_DEVICE_BUFFER_POOL_LIMIT", CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT);
    if (env_u64("MINCON_CUPTI_FLUSH_PERIOD_MS")) {
        CUptiResult prc = cuptiActivityFlushPeriod((uint32_t)env_u64("MINCON_CUPTI_FLUSH_PERIOD_MS"));
        if (prc != CUPTI_SUCCESS) report_failure("cuptiActivityFlushPeriod", prc);
    }
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
    static unsigned long long period_ms;
    period_ms = env_u64("MINCON_FLUSH_MS");
    if (period_ms) {
        pthread_t t;
        if (pthread_create(&t, NULL, flush_thread, &period_ms) == 0) pthread_detach(t);
    }
    return 1;
}
