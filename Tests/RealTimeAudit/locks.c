// The pthread lock family and the blocking waits, counted and forwarded to the C library's own functions (looked up
// once with dlsym(RTLD_NEXT), which finds the next definition after this executable's).
#define _GNU_SOURCE
#include "counters.h"

#ifndef REAL_TIME_AUDIT_SANITIZED

#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <time.h>

/// Counts a call of `kind`, then makes `function` the C library's definition found by `lookup`. The condition
/// variables need their version named: an unversioned lookup finds glibc's pre-2.3.2 compatibility functions,
/// which use another layout.
#define FORWARD_LOOKUP(lookup, type, kind)                                                                           \
    audit_count(kind);                                                                                               \
    RESOLVE_ONCE(function, lookup, type)
#define FORWARD(name, type) FORWARD_LOOKUP(dlsym(RTLD_NEXT, name), type, audit_lock)
#define FORWARD_WAIT(name, type) FORWARD_LOOKUP(dlsym(RTLD_NEXT, name), type, audit_wait)

typedef int (*mutex_function)(pthread_mutex_t *);
typedef int (*mutex_timed_function)(pthread_mutex_t *, const struct timespec *);
typedef int (*rwlock_function)(pthread_rwlock_t *);
typedef int (*spin_function)(pthread_spinlock_t *);
typedef int (*cond_wait_function)(pthread_cond_t *, pthread_mutex_t *);
typedef int (*cond_timedwait_function)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
typedef int (*sem_function)(sem_t *);
typedef int (*sem_timed_function)(sem_t *, const struct timespec *);

int pthread_mutex_lock(pthread_mutex_t *mutex) {
    FORWARD("pthread_mutex_lock", mutex_function)
    return function(mutex);
}

int pthread_mutex_trylock(pthread_mutex_t *mutex) {
    FORWARD("pthread_mutex_trylock", mutex_function)
    return function(mutex);
}

int pthread_mutex_timedlock(pthread_mutex_t *mutex, const struct timespec *deadline) {
    FORWARD("pthread_mutex_timedlock", mutex_timed_function)
    return function(mutex, deadline);
}

int pthread_rwlock_rdlock(pthread_rwlock_t *lock) {
    FORWARD("pthread_rwlock_rdlock", rwlock_function)
    return function(lock);
}

int pthread_rwlock_wrlock(pthread_rwlock_t *lock) {
    FORWARD("pthread_rwlock_wrlock", rwlock_function)
    return function(lock);
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t *lock) {
    FORWARD("pthread_rwlock_tryrdlock", rwlock_function)
    return function(lock);
}

int pthread_rwlock_trywrlock(pthread_rwlock_t *lock) {
    FORWARD("pthread_rwlock_trywrlock", rwlock_function)
    return function(lock);
}

int pthread_spin_lock(pthread_spinlock_t *lock) {
    FORWARD("pthread_spin_lock", spin_function)
    return function(lock);
}

int pthread_cond_wait(pthread_cond_t *condition, pthread_mutex_t *mutex) {
    FORWARD_LOOKUP(dlvsym(RTLD_NEXT, "pthread_cond_wait", "GLIBC_2.3.2"), cond_wait_function, audit_wait)
    return function(condition, mutex);
}

int pthread_cond_timedwait(pthread_cond_t *condition, pthread_mutex_t *mutex, const struct timespec *deadline) {
    FORWARD_LOOKUP(
        dlvsym(RTLD_NEXT, "pthread_cond_timedwait", "GLIBC_2.3.2"), cond_timedwait_function, audit_wait)
    return function(condition, mutex, deadline);
}

int sem_wait(sem_t *semaphore) {
    FORWARD_WAIT("sem_wait", sem_function)
    return function(semaphore);
}

int sem_timedwait(sem_t *semaphore, const struct timespec *deadline) {
    FORWARD_WAIT("sem_timedwait", sem_timed_function)
    return function(semaphore, deadline);
}

#endif
