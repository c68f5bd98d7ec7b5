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
    package static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let threadName = String(name.utf8.prefix(15)) ?? "QueuePlayer"
        let start = Unmanaged.passRetained(
            Start {
                nameCurrentThread(threadName)
                body()
            }
        ).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        defer { pthread_attr_destroy(&attributes) }
        var thread = pthread_t()
        let status = pthread_create(
            &thread, &attributes,
            { argument in
                let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
                start.body()
                return nil
            }, start)
        guard status == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            fatalError("QueuePlayer could not start its \(name) thread: \(String(cString: strerror(status)))")
        }
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
