import Glibc

/// Starts the engine's and the null sink's own threads with `pthread_create`.
///
/// Foundation's `Thread` would link all of Foundation (and ICU), which costs about 7 MiB of resident memory for
/// the one call the engine needs. The only unsafe pointer here is the opaque argument of `pthread_create`: it
/// carries one retained `Start` object, which the new thread takes back (balancing the retain) before running it.
enum PosixThread {
    private final class Start: Sendable {
        let body: @Sendable () -> Void

        init(body: @escaping @Sendable () -> Void) {
            self.body = body
        }
    }

    /// Runs `body` on a new detached thread. `name` appears in the error if the system cannot create a thread,
    /// which stops the process, as Foundation's `Thread` does.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(Start(body: body)).toOpaque()
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
}
