#include "csoxr.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

static csoxr_functions loaded;
static const char *load_error;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

/// Resolves `name` into `*slot`; false (with load_error set) when the library lacks it.
static int resolve(void *library, const char *name, void **slot) {
    *slot = dlsym(library, name);
    if (*slot == NULL) load_error = dlerror();
    return *slot != NULL;
}

static void load(void) {
    // RTLD_LOCAL: nothing else in the process needs its symbols.
    void *library = dlopen("libsoxr.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        load_error = dlerror();
        return;
    }
    if (resolve(library, "soxr_create", (void **)&loaded.create) &&
        resolve(library, "soxr_process", (void **)&loaded.process) &&
        resolve(library, "soxr_clear", (void **)&loaded.clear) &&
        resolve(library, "soxr_delete", (void **)&loaded.delete) &&
        resolve(library, "soxr_io_spec", (void **)&loaded.io_spec) &&
        resolve(library, "soxr_quality_spec", (void **)&loaded.quality_spec) &&
        resolve(library, "soxr_runtime_spec", (void **)&loaded.runtime_spec)) {
        load_error = NULL;
    }
}

const csoxr_functions *csoxr_load(const char **error) {
    pthread_once(&load_once, load);
    *error = load_error;
    return load_error == NULL ? &loaded : NULL;
}
