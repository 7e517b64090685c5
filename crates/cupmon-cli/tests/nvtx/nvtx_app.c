/* A stand-in for a CUDA program that marks its phases with NVTX, for tests without a
 * GPU or a CUDA toolkit. It plays three parts:
 * - the CUDA driver: loads CUDA_INJECTION64_PATH and calls InitializeInjection;
 * - NVTX v3's calling side, as its header-only library behaves: at the first NVTX
 *   call, load NVTX_INJECTION64_PATH, call its InitializeInjectionNvtx2 with a
 *   function handing out the export tables, then call every NVTX function through
 *   the slots the tool filled (an unfilled slot is a no-op);
 * - the program: nested ranges of two domains, with kernels launched inside them
 *   through the fake libcupti (CUPMON_LIBCUPTI), named after the range they run in;
 *   marks, a named category, colors, and a range left open at the end.
 * It prints what NVTX returned, one "call value" line each, for the test to check. */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvtx_host.h"

typedef struct {
    uint16_t version, size;
    uint32_t category;
    int32_t color_type;
    uint32_t color;
    int32_t payload_type, reserved0;
    uint64_t payload;
    int32_t message_type;
    const void *message;
} attributes_t;


static void *must_open(const char *var) {
    const char *path = getenv(var);
    if (!path) { fprintf(stderr, "%s is not set\n", var); exit(90); }
    void *h = dlopen(path, RTLD_NOW);
    if (!h) { fprintf(stderr, "%s: %s\n", path, dlerror()); exit(91); }
    return h;
}

static void nvtx_init(void) {
    void *tool = must_open("NVTX_INJECTION64_PATH");
    if (!nvtx_host_attach(tool)) { fprintf(stderr, "NVTX tool refused\n"); exit(92); }
}

/* The NVTX API, each call through its slot (CORE: 2 MarkA, 4 RangeStartEx,
 * 5 RangeStartA, 7 RangeEnd, 8 RangePushEx, 9 RangePushA, 11 RangePop; CORE2:
 * 1 DomainMarkEx, 2 DomainRangeStartEx, 3 DomainRangeEnd, 4 DomainRangePushEx,
 * 5 DomainRangePop, 8 DomainNameCategoryA, 10 DomainRegisterStringA, 12 DomainCreateA). */
static int push_a(const char *m) { return core[9] ? ((int (*)(const char *))core[9])(m) : -9; }
static int push_ex(const attributes_t *a) { return core[8] ? ((int (*)(const attributes_t *))core[8])(a) : -9; }
static int pop(void) { return core[11] ? ((int (*)(void))core[11])() : -9; }
static uint64_t start_a(const char *m) { return core[5] ? ((uint64_t (*)(const char *))core[5])(m) : 0; }
static void end(uint64_t id) { if (core[7]) ((void (*)(uint64_t))core[7])(id); }
static void *domain_create(const char *n) { return core2[12] ? ((void *(*)(const char *))core2[12])(n) : NULL; }
static void *register_string(void *d, const char *s) { return core2[10] ? ((void *(*)(void *, const char *))core2[10])(d, s) : NULL; }
static int domain_push(void *d, const attributes_t *a) { return core2[4] ? ((int (*)(void *, const attributes_t *))core2[4])(d, a) : -9; }
static int domain_pop(void *d) { return core2[5] ? ((int (*)(void *))core2[5])(d) : -9; }
static void mark_a(const char *m) { if (core[2]) ((void (*)(const char *))core[2])(m); }
static void domain_mark(void *d, const attributes_t *a) { if (core2[1]) ((void (*)(void *, const attributes_t *))core2[1])(d, a); }
static void name_category(void *d, uint32_t c, const char *n) { if (core2[8]) ((void (*)(void *, uint32_t, const char *))core2[8])(d, c, n); }

static attributes_t ascii(const char *m) {
    attributes_t a;
    memset(&a, 0, sizeof a);
    a.version = 3; a.size = sizeof a; a.color_type = 1; a.color = 0xff00ff00u;
    a.message_type = 1; a.message = m;
    return a;
}
static attributes_t registered(void *handle) {
    attributes_t a = ascii(NULL);
    a.message_type = 3; a.message = handle;
    return a;
}

static void *end_elsewhere(void *id) {
    end(*(uint64_t *)id);
    return NULL;
}

static int (*launch)(unsigned count, unsigned stream, const char *name);
static void kernels(unsigned n, const char *name) {
    if (launch(n, 7, name) != 0) { fprintf(stderr, "launch failed\n"); exit(93); }
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* `nvtx_app bench N`: N push/pop pairs of one name, then of 8 names in turn, then N
 * marks; prints the mean nanoseconds per pair (per mark) (whatever tool NVTX_INJECTION64_PATH names). */
static int bench(long n) {
    static const char *names[8] = {"forward", "backward", "layer 0", "layer 1",
                                   "layer 2", "layer 3", "optimizer", "step"};
    double t0 = now_ns();
    for (long i = 0; i < n; i++) { push_a("forward"); pop(); }
    double t1 = now_ns();
    for (long i = 0; i < n; i++) { push_a(names[i & 7]); pop(); }
    double t2 = now_ns();
    for (long i = 0; i < n; i++) mark_a(names[i & 7]);
    double t3 = now_ns();
    printf("push/pop pair, one name: %.1f ns\n", (t1 - t0) / n);
    printf("push/pop pair, 8 names: %.1f ns\n", (t2 - t1) / n);
    printf("mark: %.1f ns\n", (t3 - t2) / n);
    return 0;
}

int main(int argc, char **argv) {
    int benching = argc > 2 && strcmp(argv[1], "bench") == 0;
    unsigned repeat = argc > 1 && !benching ? (unsigned)atoi(argv[1]) : 1;
    void *inject = must_open("CUDA_INJECTION64_PATH");
    int (*init)(void) = (int (*)(void))dlsym(inject, "InitializeInjection");
    if (!init || init() != 1) { fprintf(stderr, "InitializeInjection failed\n"); exit(94); }
    launch = (int (*)(unsigned, unsigned, const char *))dlsym(must_open("CUPMON_LIBCUPTI"),
                                                              "cupmonFakeLaunchKernels");
    if (!launch) { fprintf(stderr, "no cupmonFakeLaunchKernels\n"); exit(95); }
    /* Let the scheduled window open. */
    struct timespec wait = {0, 400 * 1000 * 1000};
    nanosleep(&wait, NULL);

    nvtx_init();
    if (benching) return bench(atol(argv[2]));
    void *lib = domain_create("mylib");
    void *layer = register_string(lib, "layer 7");
    name_category(lib, 5, "compute");
    for (unsigned r = 0; r < repeat; r++) {
        printf("push forward %d\n", push_a("forward"));
        kernels(3, "k_forward");
        attributes_t a = registered(layer);
        a.category = 5;
        printf("push layer7 %d\n", domain_push(lib, &a));
        mark_a("checkpoint");
        kernels(2, "k_layer7");
        printf("pop layer7 %d\n", domain_pop(lib));
        printf("pop forward %d\n", pop());

        a = ascii("backward");
        printf("push backward %d\n", push_ex(&a));
        kernels(4, "k_backward");
        printf("pop backward %d\n", pop());

        uint64_t id = start_a("optimizer");
        printf("start optimizer %d\n", id != 0);
        kernels(1, "k_optimizer");
        end(id);

        /* Out of order across domains: "outer" ends while "inner" (another domain,
         * pushed after it) is open; the kernels after belong to "inner" alone. */
        printf("push outer %d\n", push_a("outer"));
        a = ascii("inner");
        printf("push inner %d\n", domain_push(lib, &a));
        printf("pop outer %d\n", pop());
        kernels(2, "k_inner");
        printf("pop inner %d\n", domain_pop(lib));
        kernels(1, "k_none");

        /* A start/end range ended on another thread: closed on this one at its next
         * NVTX call (here a pop with nothing open), so k_after is in no range. */
        uint64_t handoff = start_a("handoff");
        kernels(1, "k_handoff");
        pthread_t other;
        pthread_create(&other, NULL, end_elsewhere, &handoff);
        pthread_join(other, NULL);
        /* Its CPU slice ends where the other thread ended it, not here. */
        struct timespec pause = {0, 50 * 1000 * 1000};
        nanosleep(&pause, NULL);
        printf("pop nothing %d\n", pop());
        kernels(1, "k_after");

        /* A mark of a domain with a category and a color of its own. */
        a = ascii("epoch end");
        a.category = 5; a.color = 0xff123456u;
        domain_mark(lib, &a);
    }
    /* Still open when the program ends, and so when the window does. */
    printf("push left open %d\n", push_a("left open"));
    return 0;
}
