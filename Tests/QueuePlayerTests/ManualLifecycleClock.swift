import Synchronization

@testable import QueuePlayer

/// A ``LifecycleClock`` that stands still until a test moves it on: ``advance(by:)`` runs every timer that falls due,
/// in the order they fall due, on the calling thread, so that once it returns their effects are there to check.
final class ManualLifecycleClock: LifecycleClock {
    private struct Timer {
        let deadline: Duration
        let action: @Sendable () -> Void
    }

    /// The time, and the timers not yet run in the order they were scheduled.
    private let state = Mutex<(now: Duration, timers: [Timer])>((.zero, []))

    var now: Duration { state.withLock { $0.now } }

    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.timers.append(Timer(deadline: $0.now + max(delay, .zero), action: action)) }
    }

    /// Moves the time on by `duration`, running each timer due by then at its own deadline (a timer scheduled by
    /// one that runs is run too, if it falls due in time).
    func advance(by duration: Duration) {
        let target = state.withLock { $0.now + duration }
        while let timer = nextTimer(dueBy: target) {
            timer.action()
        }
        state.withLock { $0.now = target }
    }

    /// Removes the earliest timer due by `target` (of two due together, the first scheduled) and sets the time to
    /// its deadline.
    private func nextTimer(dueBy target: Duration) -> Timer? {
        state.withLock { state in
            let timers = state.timers
            guard let index = timers.indices.filter({ timers[$0].deadline <= target })
                .min(by: { timers[$0].deadline < timers[$1].deadline })
            else { return nil }
            let timer = state.timers.remove(at: index)
            state.now = max(state.now, timer.deadline)
            return timer
        }
    }
}
