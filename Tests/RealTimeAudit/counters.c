// The counters: per thread (a slot per thread, found through a thread-local pointer) and per write-callback scope.
// Nothing here allocates or locks: the slots are a static array claimed with an atomic increment.
#define _GNU_SOURCE
#include "counters.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { slot_capacity = 4096 };

struct thread_slot {
    _Atomic long tid;
    _Atomic long counts[audit_kind_count];
};

static struct thread_slot slots[slot_capacity];
static _Atomic int claimed_slots;
static _Atomic long callback_totals[audit_kind_count];
static _Atomic long library_totals[audit_kind_count];

static __thread struct thread_slot *this_thread_slot;
__thread int audit_callback_depth;
__thread int audit_library_depth;

static struct thread_slot *current_slot(void) {
    if (this_thread_slot == NULL) {
        int index = atomic_fetch_add_explicit(&claimed_slots, 1, memory_order_relaxed);
        if (index >= slot_capacity) return NULL;
        atomic_store_explicit(&slots[index].tid, syscall(SYS_gettid), memory_order_release);
        this_thread_slot = &slots[index];
    }
    return this_thread_slot;
}

void audit_count(enum audit_kind kind) {
    struct thread_slot *slot = current_slot();
    if (slot != NULL) atomic_fetch_add_explicit(&slot->counts[kind], 1, memory_order_relaxed);
    if (audit_callback_depth > 0) {
        _Atomic long *totals = audit_library_depth > 0 ? library_totals : callback_totals;
        atomic_fetch_add_explicit(&totals[kind], 1, memory_order_relaxed);
    }
}

static audit_counts counts_of(_Atomic long *counts) {
    audit_counts result = {
        .allocations = atomic_load_explicit(&counts[audit_allocation], memory_order_relaxed),
        .deallocations = atomic_load_explicit(&counts[audit_deallocation], memory_order_relaxed),
        .lockAcquisitions = atomic_load_explicit(&counts[audit_lock], memory_order_relaxed),
        .waits = atomic_load_explicit(&counts[audit_wait], memory_order_relaxed),
    };
    return result;
}

/// True when thread `tid` of this process is alive and named `name`.
static int thread_is_named(long tid, const char *name) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld/comm", tid);
    FILE *file = fopen(path, "r");
    if (file == NULL) return 0;
    char comm[32] = {0};
    int matches = fgets(comm, sizeof comm, file) != NULL && strncmp(comm, name, strcspn(comm, "\n")) == 0
        && strlen(name) == strcspn(comm, "\n");
    fclose(file);
    return matches;
}

audit_counts audit_thread_counts(const char *thread_name) {
    audit_counts total = {0, 0, 0, 0};
    int claimed = atomic_load_explicit(&claimed_slots, memory_order_acquire);
    for (int index = 0; index < claimed && index < slot_capacity; index++) {
        long tid = atomic_load_explicit(&slots[index].tid, memory_order_acquire);
        if (tid == 0 || !thread_is_named(tid, thread_name)) continue;
        audit_counts counts = counts_of(slots[index].counts);
        total.allocations += counts.allocations;
        total.deallocations += counts.deallocations;
        total.lockAcquisitions += counts.lockAcquisitions;
        total.waits += counts.waits;
    }
    return total;
}

audit_counts audit_callback_counts(void) { return counts_of(callback_totals); }

audit_counts audit_callback_library_counts(void) { return counts_of(library_totals); }
