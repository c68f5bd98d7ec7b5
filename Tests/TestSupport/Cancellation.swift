import Dispatch
import Foundation

/// Cancels `task` on a thread of its own and reports whether the cancellation returned within `seconds`: a
/// cancellation that deadlocks (its handlers run under the Swift runtime's lock on the task) is reported by the test
/// instead of hanging it. The caller's thread never waits.
public func cancellationReturns(_ task: Task<Void, Never>, within seconds: Double = 10) async -> Bool {
    await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
        Thread.detachNewThread {
            let cancelled = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                task.cancel()
                cancelled.signal()
            }
            done.resume(returning: cancelled.wait(timeout: .now() + seconds) == .success)
        }
    }
}
