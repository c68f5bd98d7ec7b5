import Glibc

/// Starts the engine's, the null sink's and the service's own threads with `pthread_create`, named so that `top -H`,
/// `ps -L` and crash reports say which is which.
///
/// Foundation's `Thread` would link all of Foundation (and ICU), which costs about 7 MiB of resident memory for
/// the one call the engine needs. The only unsafe pointer here is the opaque argument of `pthread_create`: it
/// carries one retained `Start` object, which the new thread takes back (balancing the retain) before running it.
package enum PosixThread {
    private final class Start: Sendable {
        let body: @Sendable () -> Void

        init(body: @escaping @Sendable () -> Void) {
            self.body = body
        }
    }

    /// Runs `body` on a new detached thread named `name` (Linux keeps the first 15 bytes). `name` also appears in
    /// the error if the system cannot create a thread, which stops the process, as Foundation's `Thread` does.
    /// With `realTime`, the thread is created with real-time priority where the scheduler allows it, and at normal
    /// priority otherwise (see ``RealTimeScheduling``).
    package static func start(name: String, realTime: Bool = false, _ body: @escaping @Sendable () -> Void) {
        let threadName = String(name.utf8.prefix(15)) ?? "QueuePlayer"
        let start = Unmanaged.passRetained(
            Start {
                nameCurrentThread(threadName)
                body()
            }
        ).toOpaque()
        var status: Int32 = 0
        if realTime, RealTimeScheduling.isAvailable {
            let priority = RealTimeScheduling.grantablePriority()
            status = create(start) { RealTimeScheduling.apply(to: &$0, priority: priority) }
            if status == 0 { return }
            RealTimeScheduling.noteRefusal(status)
        }
        status = create(start) { _ in }
        guard status == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            fatalError("QueuePlayer could not start its \(name) thread: \(String(cString: strerror(status)))")
        }
    }

    /// Creates a detached thread that runs the `Start` at `start`, with attributes set up by `configure`.
    private static func create(_ start: UnsafeMutableRawPointer, configure: (inout pthread_attr_t) -> Void) -> Int32 {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        configure(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        var thread = pthread_t()
        return pthread_create(
            &thread, &attributes,
            { argument in
                let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
                start.body()
                return nil
            }, start)
    }

    /// The kernel's id of the calling thread, as in /proc/self/task (Swift's Glibc module does not export `gettid`):
    /// read from the /proc/thread-self link, `PID/task/TID`. 0 if /proc cannot be read.
    package static func currentThreadID() -> Int32 {
        var target = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/thread-self", &target, target.count - 1)
        guard length > 0 else { return 0 }
        let path = String(decoding: target[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return path.split(separator: "/").last.flatMap { Int32($0) } ?? 0
    }

    /// Names the calling thread as `pthread_setname_np` does (which Swift's Glibc module does not export): by
    /// writing its `comm` file. A failure leaves the thread unnamed, which only makes diagnostics less clear.
    private static func nameCurrentThread(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = name.withCString { write(descriptor, $0, strlen($0)) }
    }
}
