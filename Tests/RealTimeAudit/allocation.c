// The malloc family, counted and forwarded to glibc's own allocator (its exported __libc_* entry points), so that
// every block is still allocated and freed by the same allocator whichever entry point a caller uses.
#define _GNU_SOURCE
#include "counters.h"

#include <errno.h>
#include <stddef.h>

int audit_is_active(void) {
#ifdef REAL_TIME_AUDIT_SANITIZED
    return 0;
#else
    return 1;
#endif
}

#ifndef REAL_TIME_AUDIT_SANITIZED

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);
extern void __libc_free(void *pointer);

void *malloc(size_t size) {
    audit_count(audit_allocation);
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    audit_count(audit_allocation);
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    audit_count(audit_allocation);
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    audit_count(audit_allocation);
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    audit_count(audit_allocation);
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    audit_count(audit_allocation);
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL && size != 0) return ENOMEM;
    *result = pointer;
    return 0;
}

void *valloc(size_t size) {
    audit_count(audit_allocation);
    return __libc_valloc(size);
}

void *pvalloc(size_t size) {
    audit_count(audit_allocation);
    return __libc_pvalloc(size);
}

void free(void *pointer) {
    if (pointer != NULL) audit_count(audit_deallocation);
    __libc_free(pointer);
}

#endif
