#include "csoxr.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

static csoxr_functions loaded;
/// The loader's message when loading failed, copied: dlerror's text belongs to the thread that asked.
static char load_error_text[512];
static const char *load_error;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void note_load_error(void) {
    const char *message = dlerror();
    snprintf(load_error_text, sizeof load_error_text, "%s", message ? message : "unknown error");
    load_error = load_error_text;
}

/// Resolves `name` into `*slot`; false (with load_error set) when the library lacks it.
static int resolve(void *library, const char *name, void **slot) {
    *slot = dlsym(library, name);
    if (*slot == NULL) note_load_error();
    return *slot != NULL;
}

static void load(void) {
    // RTLD_LOCAL: nothing else in the process needs its symbols.
    void *library = dlopen("libsoxr.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        note_load_error();
        return;
    }
    // Stops at the first symbol missing, with load_error set.
    (void)(resolve(library, "soxr_create", (void **)&loaded.create) &&
           resolve(library, "soxr_process", (void **)&loaded.process) &&
           resolve(library, "soxr_clear", (void **)&loaded.clear) &&
           resolve(library, "soxr_delete", (void **)&loaded.delete) &&
           resolve(library, "soxr_io_spec", (void **)&loaded.io_spec) &&
           resolve(library, "soxr_quality_spec", (void **)&loaded.quality_spec) &&
           resolve(library, "soxr_runtime_spec", (void **)&loaded.runtime_spec));
}

const csoxr_functions *csoxr_load(const char **error) {
    pthread_once(&load_once, load);
    *error = load_error;
    return load_error == NULL ? &loaded : NULL;
}
