import Synchronization

/// One run of a background work: its task, and the background task it holds. Ends the background task exactly once,
/// whether the work returns or time runs out first.
final class BackgroundWorkRun: Sendable {
    private let application: Application
    private let state = Mutex<(identifier: BackgroundTaskIdentifier, work: Task<Void, Never>?, ended: Bool)>(
        (.invalid, nil, false))

    init(application: Application) {
        self.application = application
    }

    func start(identifier: BackgroundTaskIdentifier, work: @escaping @Sendable () async -> Void) {
        state.withLock { $0.identifier = identifier }
        let task = Task { [self] in
            await work()
            end()
        }
        state.withLock { $0.work = task }
    }

    /// The expiration handler: cancels the work and ends its background task.
    func cancelAndEnd() {
        state.withLock { $0.work }?.cancel()
        end()
    }

    private func end() {
        let identifier = state.withLock { state -> BackgroundTaskIdentifier? in
            guard !state.ended, state.identifier != .invalid else { return nil }
            state.ended = true
            return state.identifier
        }
        if let identifier { application.endBackgroundTask(identifier) }
    }
}
