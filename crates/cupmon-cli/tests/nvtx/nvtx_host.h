/* NVTX v3's calling side, as its header-only library behaves, shared by the test
 * programs: the export table a tool's InitializeInjectionNvtx2 asks for, the CORE
 * (module 1) and CORE2 (module 5) slot tables it fills, and the call that hands them
 * over. An unfilled slot stays NULL: the programs treat it as a no-op. */
#ifndef CUPMON_TEST_NVTX_HOST_H
#define CUPMON_TEST_NVTX_HOST_H
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

typedef void (*slot_t)(void);
typedef int (*module_table_fn)(int module, slot_t ***table, unsigned *size);
typedef struct {
    size_t struct_size;
    module_table_fn get_module_function_table;
} callbacks_t;

/* Slots 1..15 of each module (index 0 unused). */
static slot_t core[16], core2[16];
static slot_t *core_table[17], *core2_table[17];

static int get_module_function_table(int module, slot_t ***table, unsigned *size) {
    slot_t **chosen = module == 1 ? core_table : module == 5 ? core2_table : NULL;
    if (!chosen) return 0;
    *table = chosen;
    *size = 16;
    return 1;
}
static const callbacks_t callbacks = {sizeof(callbacks_t), get_module_function_table};
static const void *get_export_table(uint32_t id) { return id == 1 ? &callbacks : NULL; }

/* Hand the tables to the tool loaded as `tool`: 1 when it took NVTX's calls. */
static int nvtx_host_attach(void *tool) {
    for (int i = 1; i < 16; i++) { core_table[i] = &core[i]; core2_table[i] = &core2[i]; }
    core_table[0] = core2_table[0] = NULL;
    core_table[16] = core2_table[16] = NULL;
    int (*init)(const void *(*)(uint32_t)) =
        (int (*)(const void *(*)(uint32_t)))dlsym(tool, "InitializeInjectionNvtx2");
    return init && init(get_export_table);
}
#endif
