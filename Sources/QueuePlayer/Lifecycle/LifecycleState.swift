import Dispatch
import Logging

/// A background task that has begun and not ended.
struct RunningTask {
    let name: String
    let expirationHandler: (@Sendable () -> Void)?
    /// When it began, on the application's ``LifecycleClock``.
    let began: Duration
    var expirationNotified = false
}

/// Work registered with ``Application/performWhenEnteringBackground(named:_:)``.
struct BackgroundWork {
    let name: String
    let work: @Sendable () async -> Void
}

/// Everything an ``Application`` keeps, guarded by its lock.
struct LifecycleState {
    var manifest: AppManifest
    var backgroundTime: BackgroundTimeConfiguration
    var logger: Logger
    var applicationState = ApplicationState.active {
        didSet {
            guard applicationState != oldValue, !stateStreams.isEmpty else { return }
            let continuations = Array(stateStreams.values)
            let newState = applicationState
            Self.streamDelivery.async {
                for continuation in continuations { continuation.yield(newState) }
            }
        }
    }
    /// When the background time runs out, on the application's ``LifecycleClock``; nil in the foreground.
    var backgroundDeadline: Duration?
    /// Bumped by every transition, so that timers of an earlier stay in the background do nothing.
    var timerGeneration = 0
    var tasks: [Int: RunningTask] = [:]
    var nextTaskID = 1
    var observers: [Int: (DispatchQueue, @Sendable (LifecycleNotification) -> Void)] = [:]
    var streams: [Int: AsyncStream<LifecycleNotification>.Continuation] = [:]
    var stateStreams: [Int: AsyncStream<ApplicationState>.Continuation] = [:]
    var backgroundWorks: [Int: BackgroundWork] = [:]
    var nextObserverID = 1

    /// Where streams are told, in the order of posting. Never under the lock: a yield needs the Swift runtime's lock
    /// on the consuming task, which that task's cancellation holds while it removes the stream under this lock.
    private static let streamDelivery = DispatchQueue(label: "queueplayer.lifecycle-streams")

    /// Hands `notification` to every observer and stream. Called in transition order under the lock, so each
    /// observer's queue and each stream receive the notifications in that order.
    func post(_ notification: LifecycleNotification) {
        for (queue, block) in observers.sorted(by: { $0.key < $1.key }).map(\.value) {
            queue.async { block(notification) }
        }
        guard !streams.isEmpty else { return }
        let continuations = Array(streams.values)
        Self.streamDelivery.async {
            for continuation in continuations { continuation.yield(notification) }
        }
    }

    mutating func takeObserverID() -> LifecycleObserverToken {
        defer { nextObserverID += 1 }
        return LifecycleObserverToken(id: nextObserverID)
    }
}
