// Counts what a process does on its audio threads: allocations (the malloc family), lock acquisitions (pthread
// mutexes, rwlocks and spin locks) and blocking waits (condition variables and POSIX semaphores, which libdispatch's
// semaphores use on Linux), so that a test can show that the audio callback path does none of these. Linked only
// into the RenderPathAudit executable, whose allocator and locks it interposes (a definition in the executable takes
// precedence over the C library's for every caller in the process); it forwards every call to the C library
// unchanged.
//
// What it cannot see: locks that never call into the C library (Swift's Synchronization.Mutex and the Swift
// runtime's own locks take a futex only when contended), and allocations made inside the C library itself.
#ifndef REAL_TIME_AUDIT_H
#define REAL_TIME_AUDIT_H

/// What was counted.
typedef struct {
    long allocations;
    long deallocations;
    long lockAcquisitions;
    long waits;
} audit_counts;

/// 1 when the interposers are in place; 0 in a sanitizer build, whose own allocator they would displace.
int audit_is_active(void);

/// Everything done so far by the live threads named `thread_name` (as in /proc/self/task/TID/comm). Any thread.
audit_counts audit_thread_counts(const char *thread_name);

/// Everything done so far inside PulseAudio stream write callbacks by the callbacks' own code: the calls they make
/// into libpulse (to take a buffer, to write it, to read the timing) are counted apart, by
/// audit_callback_library_counts. Any thread.
audit_counts audit_callback_counts(void);

/// How many PulseAudio stream write callbacks have run. Any thread.
long audit_write_callback_calls(void);

/// What libpulse did in the calls made from inside the write callbacks (for information: not the player's code).
audit_counts audit_callback_library_counts(void);

#endif
