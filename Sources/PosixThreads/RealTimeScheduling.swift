import Glibc
import Synchronization

/// Real-time scheduling for the threads that feed a sound server or keep a device's time, as audio clients ask for
/// it: `SCHED_FIFO` at a low priority, so that a busy machine's other work at normal priority does not delay them.
///
/// The priority is below every sound server's own (PulseAudio's is 5, PipeWire's 83 and up): the server that takes
/// the frames always runs first. The scheduler grants it to a process with `CAP_SYS_NICE` (root) or whose
/// `RLIMIT_RTPRIO` allows it (the rtprio limit Debian's pipewire package gives its group in /etc/security/limits.d,
/// or a system service's `LimitRTPRIO=`). A refusal costs nothing but the protection: the thread runs at
/// normal priority, and the first refusal is kept for the player to log once (``takeUntoldRefusal()``).
///
/// Threading: any thread. No unsafe pointers beyond the `sched_param` passed by reference to the C calls.
package enum RealTimeScheduling {
    /// The `SCHED_FIFO` priority asked for.
    package static let priority: Int32 = 4

    /// Whether threads ask for it at all: not in a ThreadSanitizer build (`scripts/sanitize thread` defines
    /// `QUEUEPLAYER_THREAD_SANITIZER`), where a sink thread created with real-time attributes once never ran and
    /// the sink's stop waited for it for ever (a CI run; the cause is not found). Elsewhere it runs in every test.
    #if QUEUEPLAYER_THREAD_SANITIZER
        package static let isAvailable = false
    #else
        package static let isAvailable = true
    #endif

    /// Whether a refusal was ever seen, so that only the first is told.
    private static let refused = Atomic<Bool>(false)
    /// The error of the first refusal, until taken.
    private static let untoldRefusal = Atomic<Int32>(0)

    /// Sets the real-time policy and the priority to ask for in `attributes`, for a thread about to be created.
    static func apply(to attributes: inout pthread_attr_t, priority: Int32) {
        var parameters = sched_param()
        parameters.sched_priority = priority
        pthread_attr_setinheritsched(&attributes, Int32(PTHREAD_EXPLICIT_SCHED))
        pthread_attr_setschedpolicy(&attributes, SCHED_FIFO)
        pthread_attr_setschedparam(&attributes, &parameters)
    }

    /// Asks for real-time priority for the calling thread (libpulse's loop thread, which it creates itself). Returns
    /// true when granted; a refusal is noted for ``takeUntoldRefusal()``.
    @discardableResult
    package static func makeCurrentThreadRealTime() -> Bool {
        guard isAvailable else { return false }
        var parameters = sched_param()
        parameters.sched_priority = grantablePriority()
        let status = pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters)
        guard status == 0 else {
            noteRefusal(status)
            return false
        }
        return true
    }

    /// The priority to ask for: ``priority``, or less where `RLIMIT_RTPRIO` allows less but some. With a limit of 0
    /// it is still ``priority``: a process with `CAP_SYS_NICE` is granted it whatever the limit, and the call tells.
    static func grantablePriority() -> Int32 {
        guard let limit = rtprioLimit() else { return priority }
        if limit.rlim_cur == 0 || limit.rlim_cur >= rlim_t(priority) { return priority }
        return Int32(limit.rlim_cur)
    }

    /// The process's `RLIMIT_RTPRIO`, or nil if it cannot be read.
    private static func rtprioLimit() -> rlimit? {
        var limit = rlimit()
        return getrlimit(__rlimit_resource_t(__RLIMIT_RTPRIO.rawValue), &limit) == 0 ? limit : nil
    }

    /// Notes a refusal with the scheduler's error `code` (EPERM: neither privilege nor an rtprio limit).
    static func noteRefusal(_ code: Int32) {
        guard !refused.exchange(true, ordering: .acquiringAndReleasing) else { return }
        untoldRefusal.store(code, ordering: .releasing)
    }

    /// The first refusal, described for a log line, the first time it is asked after it happened; nil otherwise.
    package static func takeUntoldRefusal() -> String? {
        let code = untoldRefusal.exchange(0, ordering: .acquiringAndReleasing)
        guard code != 0 else { return nil }
        let rtprio = rtprioLimit().map { "\($0.rlim_cur)" } ?? "unknown"
        return "the render thread runs at normal priority: the scheduler refused real-time priority "
            + "(\(String(cString: strerror(code))); RLIMIT_RTPRIO is \(rtprio)), so other work on a busy machine may "
            + "delay it into a dropout; give the user an rtprio limit of at least \(priority) (Debian's pipewire "
            + "group has one: adduser USER pipewire) or a system service LimitRTPRIO=\(priority)"
    }
}
