/* torch's autograd under emit_nvtx, played for tests without torch or a GPU: a library a
 * Python program (tests/python/stacks/autograd_app.py) calls through ctypes.
 * - NVTX's calling side as its v3 headers behave (as nvtx_app.c): load
 *   NVTX_INJECTION64_PATH, call its InitializeInjectionNvtx2, then push and pop
 *   through the slots it filled;
 * - forward_op: what one op does under emit_nvtx on the Python thread that called it:
 *   its range pushed (named as torch names it, "<op>, seq = N, op_id = M"), its kernels
 *   launched through the fake libcupti (CUPMON_LIBCUPTI), the range popped;
 * - backward_pass: the autograd engine: a thread of its own (no Python frames) that
 *   runs each backward op inside the engine's range (no number), the op's range
 *   (carrying its forward op's number) and an inner op's range (carrying the engine
 *   thread's own number, as with create_graph), launching the op's kernels; after the
 *   op's range, still in the engine's, the sum of the gradients it made into the next
 *   op's input (InputBuffer::add: "<kernel>_sum"), then the AccumulateGrad of a
 *   parameter it made a gradient for (ranges without a number: "<kernel>_accumulate");
 *   then one launch outside any range. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "nvtx_host.h"


static int (*launch)(unsigned count, unsigned stream, const char *name);

static int push_a(const char *m) { return core[9] ? ((int (*)(const char *))core[9])(m) : -9; }
static int pop(void) { return core[11] ? ((int (*)(void))core[11])() : -9; }

/* 0 when NVTX went to the tool and the fake's launch function was found. */
int autograd_nvtx_init(void) {
    const char *path = getenv("NVTX_INJECTION64_PATH");
    const char *fake = getenv("CUPMON_LIBCUPTI");
    if (!path || !fake) return 1;
    void *tool = dlopen(path, RTLD_NOW);
    void *cupti = dlopen(fake, RTLD_NOW);
    if (!tool || !cupti) return 2;
    if (!nvtx_host_attach(tool)) return 3;
    launch = (int (*)(unsigned, unsigned, const char *))dlsym(cupti, "cupmonFakeLaunchKernels");
    return launch && core[9] && core[11] ? 0 : 4;
}

/* One op on the calling thread: 0 when its kernels were launched. */
int forward_op(const char *range, unsigned kernels, const char *kernel_name) {
    push_a(range);
    int rc = kernels ? launch(kernels, 7, kernel_name) : 0;
    pop();
    return rc;
}

struct pass {
    int n;
    const uint64_t *seqs;
    const char *const *kernel_names;
    int rc;
};

static void *engine(void *arg) {
    struct pass *p = arg;
    char name[128];
    for (int i = 0; i < p->n; i++) {
        snprintf(name, sizeof name, "autograd::engine::evaluate_function: Op%dBackward0", i);
        push_a(name);
        snprintf(name, sizeof name, "Op%dBackward0, seq = %llu, op_id = %d", i,
                 (unsigned long long)p->seqs[i], 900 + i);
        push_a(name);
        /* An op the backward op calls: the engine thread's own number, not the forward's. */
        snprintf(name, sizeof name, "aten::mm, seq = %d, op_id = %d", i, 950 + i);
        push_a(name);
        p->rc |= launch(2, 9, p->kernel_names[i]);
        pop();
        pop();
        snprintf(name, sizeof name, "%s_sum", p->kernel_names[i]);
        p->rc |= launch(1, 9, name);
        pop();
        push_a("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad");
        push_a("torch::autograd::AccumulateGrad");
        snprintf(name, sizeof name, "%s_accumulate", p->kernel_names[i]);
        p->rc |= launch(1, 9, name);
        pop();
        pop();
    }
    p->rc |= launch(1, 9, "bwd_outside_ranges");
    return NULL;
}

/* The backward ops of numbers `seqs`, on a thread without Python frames, each
 * launching two kernels named `kernel_names[i]`. 0 when all launched. */
int backward_pass(int n, const uint64_t *seqs, const char *const *kernel_names) {
    struct pass p = {n, seqs, kernel_names, 0};
    pthread_t t;
    if (pthread_create(&t, NULL, engine, &p) != 0) return 5;
    pthread_join(t, NULL);
    return p.rc;
}
