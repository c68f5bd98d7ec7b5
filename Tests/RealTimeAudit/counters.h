// Internal to RealTimeAudit: what the interposers count with.
#ifndef REAL_TIME_AUDIT_COUNTERS_H
#define REAL_TIME_AUDIT_COUNTERS_H

#include "include/RealTimeAudit.h"

#include <stdatomic.h>

enum audit_kind { audit_allocation, audit_deallocation, audit_lock, audit_wait, audit_kind_count };

/// Counts one event on the calling thread (and in the write-callback scope it is in, if any). Never allocates.
void audit_count(enum audit_kind kind);

/// Greater than 0 inside a PulseAudio write callback on this thread.
extern __thread int audit_callback_depth;
/// Greater than 0 inside a libpulse call made from a write callback on this thread.
extern __thread int audit_library_depth;

/// Declares `function` of `type` as the definition found by `lookup` (dlsym or dlvsym with RTLD_NEXT: the C
/// library's or libpulse's, after this executable's), resolved on the first call. Two threads may both resolve it,
/// to the same address, which is harmless.
#define RESOLVE_ONCE(function, lookup, type)                                                                         \
    static _Atomic(type) resolved_##function;                                                                        \
    type function = atomic_load_explicit(&resolved_##function, memory_order_relaxed);                                \
    if (function == NULL) {                                                                                          \
        function = (type)(lookup);                                                                                   \
        atomic_store_explicit(&resolved_##function, function, memory_order_relaxed);                                 \
    }

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define REAL_TIME_AUDIT_SANITIZED 1
#endif
#endif

#endif
