// Internal to RealTimeAudit: what the interposers count with.
#ifndef REAL_TIME_AUDIT_COUNTERS_H
#define REAL_TIME_AUDIT_COUNTERS_H

#include "include/RealTimeAudit.h"

enum audit_kind { audit_allocation, audit_deallocation, audit_lock, audit_wait, audit_kind_count };

/// Counts one event on the calling thread (and in the write-callback scope it is in, if any). Never allocates.
void audit_count(enum audit_kind kind);

/// Greater than 0 inside a PulseAudio write callback on this thread.
extern __thread int audit_callback_depth;
/// Greater than 0 inside a libpulse call made from a write callback on this thread.
extern __thread int audit_library_depth;

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define REAL_TIME_AUDIT_SANITIZED 1
#endif
#endif

#endif
