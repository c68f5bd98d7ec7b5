import Foundation
import Synchronization

/// The one thread every child process of the tests is started from.
///
/// Foundation's `Process.run()` gives the thread it is called on a run loop (an epoll, an eventfd and a timerfd),
/// which that thread keeps until it exits. Started from the test runner's pool, every worker that had started a child
/// held three more descriptors until the pool let the worker go, so a test process's descriptors went up and down
/// with its workers (the long network soak's: 43, 49, 43, 49 as icecast2 was started again from one worker or
/// another). Started from here, there is one run loop for the process's life.
///
/// Threading: any thread calls ``run(_:)``; the work runs on the starter's thread, one at a time, in order.
final class ChildStarter: Sendable {
    static let shared = ChildStarter()

    private let pending = Mutex<[@Sendable () -> Void]>([])
    private let wake = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in serve() }
        thread.name = "child starter"
        thread.start()
    }

    /// Runs `work` on the starter's thread, blocking the caller until it has, and throws what it threw.
    func run(_ work: @escaping @Sendable () throws -> Void) throws {
        let done = DispatchSemaphore(value: 0)
        let failure = Mutex<(any Error)?>(nil)
        pending.withLock { pending in
            pending.append {
                do { try work() } catch { failure.withLock { $0 = error } }
                done.signal()
            }
        }
        wake.signal()
        done.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    private func serve() {
        while true {
            wake.wait()
            pending.withLock { $0.removeFirst() }()
        }
    }
}
