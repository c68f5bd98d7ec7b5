import NIOCore

/// Runs the downloads' tasks on the HTTP client's own event loop thread instead of Swift's shared cooperative pool.
///
/// The pool has a thread per core, and a program may hold them (async code waiting on a lock, or opening an item on
/// a task): a download that waited for a free pool thread would then never deliver, and the decoding thread waiting
/// for its bytes would wait for ever. The client's loop serves nothing else, so a download always runs.
/// Threading: any thread may enqueue; the jobs run on the loop's thread, one at a time.
final class DownloadExecutor: TaskExecutor {
    /// The executor of the shared client's loop.
    static let shared = DownloadExecutor(eventLoop: HTTPDownload.eventLoopGroup.next())

    private let eventLoop: any EventLoop

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
