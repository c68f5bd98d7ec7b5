/// Identifies a finite background task, as `UIBackgroundTaskIdentifier` does. ``invalid`` means no time was
/// granted; set a stored identifier back to it after ending the task.
public struct BackgroundTaskIdentifier: Hashable, Sendable, CustomStringConvertible {
    let rawValue: Int

    /// No task: what ``Application/beginBackgroundTask(name:expirationHandler:)`` returns when no time is granted.
    public static let invalid = BackgroundTaskIdentifier(rawValue: 0)

    /// `#7`, or `invalid`, as logs show it.
    public var description: String { self == .invalid ? "invalid" : "#\(rawValue)" }
}

/// How much time the background grants, and when the expiration handlers hear of its end.
public struct BackgroundTimeConfiguration: Sendable, Equatable {
    /// Seconds a process may run background tasks each time it enters the background (iOS gave about 600).
    public var budget: Double
    /// Seconds before the budget ends at which running tasks' expiration handlers are called.
    public var expirationMargin: Double

    /// The defaults: 600 s, with handlers called 5 s before the end.
    public init(budget: Double = 600, expirationMargin: Double = 5) {
        self.budget = budget
        self.expirationMargin = min(max(0, expirationMargin), budget)
    }
}

/// A registration made with ``Application/addObserver(queue:using:)`` or
/// ``Application/performWhenEnteringBackground(named:_:)``, for ``Application/removeObserver(_:)``.
public struct LifecycleObserverToken: Hashable, Sendable {
    let id: Int
}
