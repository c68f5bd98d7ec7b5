#if QUEUEPLAYER_THREAD_SANITIZER
    import Glibc

    /// Stands in for the standard library's `Mutex` in ThreadSanitizer builds, and only there (`scripts/sanitize
    /// thread` defines `QUEUEPLAYER_THREAD_SANITIZER`). On Linux that `Mutex` waits on a futex inside the standard
    /// library, which ThreadSanitizer cannot see: every access made under it is reported as a race (four threads
    /// counting under one `Mutex` are enough to show it). This one locks a pthread mutex, which ThreadSanitizer
    /// intercepts. It offers the part of `Mutex`'s interface the package uses, so the same code builds against
    /// either; declared in this module, it shadows the standard library's here and in the modules that import this
    /// one.
    ///
    /// `@unchecked Sendable`: the value is read and written only between `pthread_mutex_lock` and
    /// `pthread_mutex_unlock` on the mutex allocated with it. It lives in an allocation of its own: a stored property
    /// of an empty type (`Mutex(())`) shares its address with the next one, and ThreadSanitizer took the unlocked
    /// read of the mutex's pointer for a race with the locked access to the value.
    package final class Mutex<Value>: @unchecked Sendable {
        private let value: UnsafeMutablePointer<Value>
        private let mutex: UnsafeMutablePointer<pthread_mutex_t>

        /// A mutex guarding `initialValue`.
        package init(_ initialValue: Value) {
            value = .allocate(capacity: 1)
            value.initialize(to: initialValue)
            mutex = .allocate(capacity: 1)
            pthread_mutex_init(mutex, nil)
        }

        deinit {
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
            value.deinitialize(count: 1)
            value.deallocate()
        }

        /// Runs `body` on the guarded value with the lock held. Any thread; not reentrant.
        package func withLock<Result, Failure: Error>(
            _ body: (inout Value) throws(Failure) -> Result
        )
            throws(Failure) -> Result
        {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }
#endif
