import Dispatch
import FoundationEssentials
import Glibc
import Logging
import Synchronization

/// The process as an iOS application: its state, the four transition notifications, the capabilities its manifest
/// declares, and finite background tasks. Modelled on `UIApplication`; see the DocC article on the lifecycle.
///
/// - ``enterBackground()`` posts ``LifecycleNotification/willResignActive`` then
///   ``LifecycleNotification/didEnterBackground``; ``enterForeground()`` posts
///   ``LifecycleNotification/willEnterForeground`` then ``LifecycleNotification/didBecomeActive``. Each observer
///   gets them in that order.
/// - In the background a process without the `audio` capability and with no running background task is
///   ``ApplicationState/suspended``.
/// - Background time is a budget counted from the moment the process enters the background; tasks still running
///   when it is spent terminate the process with ``watchdogExitStatus`` (iOS's watchdog).
///
/// Threading: every member may be used from any thread or task. Observers run on the queues they were given;
/// expiration handlers on the application's own serial queue (with a manual `LifecycleClock`, on the thread that
/// moves it on). Nothing here runs on the audio path.
public final class Application: Sendable {
    /// The process's application, as `UIApplication.shared`. Starts active, without capabilities, with the default
    /// background time; a program configures it once at start-up with ``configure(manifest:backgroundTime:logger:)``.
    public static let shared = Application()

    /// The exit status of a process terminated because a background task outlived the background time.
    public static let watchdogExitStatus: Int32 = 86

    private let terminate: @Sendable (Int32) -> Void
    private let clock: any LifecycleClock
    private let state: Mutex<LifecycleState>

    /// Creates an application (tests; programs use ``shared``). `terminate` ends the process when the background
    /// time runs out with tasks still running; by default it calls `exit`.
    public convenience init(
        manifest: AppManifest = AppManifest(), backgroundTime: BackgroundTimeConfiguration = .init(),
        logger: Logger = Logger(label: "queueplayer.lifecycle"),
        terminate: @escaping @Sendable (Int32) -> Void = { status in exit(status) }
    ) {
        self.init(
            manifest: manifest, backgroundTime: backgroundTime, logger: logger, clock: ContinuousLifecycleClock(),
            terminate: terminate)
    }

    /// Creates an application whose background time passes on `clock` (tests move a manual one on).
    package init(
        manifest: AppManifest = AppManifest(), backgroundTime: BackgroundTimeConfiguration = .init(),
        logger: Logger = Logger(label: "queueplayer.lifecycle"), clock: any LifecycleClock,
        terminate: @escaping @Sendable (Int32) -> Void
    ) {
        self.terminate = terminate
        self.clock = clock
        state = Mutex(LifecycleState(manifest: manifest, backgroundTime: backgroundTime, logger: logger))
    }

    /// Sets the capabilities, the background time and the logger. Call it once, before the first transition.
    public func configure(manifest: AppManifest, backgroundTime: BackgroundTimeConfiguration, logger: Logger) {
        state.withLock { state in
            state.manifest = manifest
            state.backgroundTime = backgroundTime
            state.logger = logger
        }
    }

    /// The state now.
    public var applicationState: ApplicationState { state.withLock { $0.applicationState } }

    /// The manifest in force: ``AppManifest/allowsBackgroundAudio`` decides whether playback goes on in the
    /// background.
    public var manifest: AppManifest { state.withLock { $0.manifest } }

    /// Seconds of background time left: `Double.greatestFiniteMagnitude` in the foreground (undetermined, as on
    /// iOS), counting down to 0 from ``BackgroundTimeConfiguration/budget`` from the moment the process enters the
    /// background.
    public var backgroundTimeRemaining: Double {
        state.withLock { state in
            guard let deadline = state.backgroundDeadline else { return .greatestFiniteMagnitude }
            return max(0, Self.seconds(deadline - clock.now))
        }
    }

    var logger: Logger { state.withLock { $0.logger } }

    // MARK: Transitions

    /// Leaves the foreground: posts ``LifecycleNotification/willResignActive`` and
    /// ``LifecycleNotification/didEnterBackground``, starts the background time, begins the tasks registered with
    /// ``performWhenEnteringBackground(named:_:)``, and suspends if nothing may run. Does nothing when already in
    /// the background.
    public func enterBackground() {
        let generation = state.withLock { state -> Int? in
            guard state.applicationState == .active || state.applicationState == .inactive else { return nil }
            state.applicationState = .inactive
            state.post(.willResignActive)
            state.applicationState = .background
            state.post(.didEnterBackground)
            state.timerGeneration += 1
            state.backgroundDeadline = clock.now + .seconds(state.backgroundTime.budget)
            state.logger.info("entered the background", metadata: ["state": "\(state.applicationState)"])
            return state.timerGeneration
        }
        guard let generation else { return }
        scheduleBackgroundTimers(generation: generation)
        for (name, work) in state.withLock({ $0.backgroundWorks.values.map { ($0.name, $0.work) } }) {
            startBackgroundWork(named: name, work)
        }
        suspendIfIdle()
    }

    /// Comes back to the foreground: posts ``LifecycleNotification/willEnterForeground`` and
    /// ``LifecycleNotification/didBecomeActive``. Running tasks go on without a time limit. Does nothing when
    /// already in the foreground.
    public func enterForeground() {
        state.withLock { state in
            guard state.applicationState == .background || state.applicationState == .suspended else { return }
            state.timerGeneration += 1
            state.backgroundDeadline = nil
            state.post(.willEnterForeground)
            state.applicationState = .inactive
            state.post(.didBecomeActive)
            state.applicationState = .active
            state.logger.info("entered the foreground", metadata: ["state": "\(state.applicationState)"])
        }
    }

    // MARK: Observing

    /// Calls `block` on `queue` with every transition notification, in order. Any thread.
    @discardableResult
    public func addObserver(
        queue: DispatchQueue, using block: @escaping @Sendable (LifecycleNotification) -> Void
    ) -> LifecycleObserverToken {
        state.withLock { state in
            state.observers[state.nextObserverID] = (queue, block)
            return state.takeObserverID()
        }
    }

    /// The transition notifications from now on, as an asynchronous sequence (UIKit's notifications, for
    /// `for await`). The stream ends when the consuming task's loop ends.
    public func notifications() -> AsyncStream<LifecycleNotification> {
        let (stream, continuation) = AsyncStream.makeStream(of: LifecycleNotification.self)
        let token = state.withLock { state in
            state.streams[state.nextObserverID] = continuation
            return state.takeObserverID()
        }
        continuation.onTermination = { [weak self] _ in self?.removeObserver(token) }
        return stream
    }

    /// The state now, then each change of it, in order: also the changes no notification marks (suspended when the
    /// last background task ends). Kept until its consumer goes (the stream is dropped or its task cancelled). Any
    /// thread.
    package func states() -> AsyncStream<ApplicationState> {
        let (stream, continuation) = AsyncStream.makeStream(of: ApplicationState.self)
        let token = state.withLock { state in
            // Before any consumer exists, so the yield needs no other lock; later changes queue behind it.
            continuation.yield(state.applicationState)
            state.stateStreams[state.nextObserverID] = continuation
            return state.takeObserverID()
        }
        continuation.onTermination = { [weak self] _ in self?.removeObserver(token) }
        return stream
    }

    /// Each time the process enters the background, begins a background task named `name` and runs `work` in it;
    /// the task ends when `work` returns. When the background time is about to run out, `work` is cancelled and
    /// the task ended. This is the pattern the seeds arrived at (begin on entering the background, every time),
    /// made the natural one: no identifier to keep, pair or reset. Any thread.
    @discardableResult
    public func performWhenEnteringBackground(
        named name: String, _ work: @escaping @Sendable () async -> Void
    ) -> LifecycleObserverToken {
        state.withLock { state in
            state.backgroundWorks[state.nextObserverID] = BackgroundWork(name: name, work: work)
            return state.takeObserverID()
        }
    }

    /// Removes an observer, a notification stream or a background work. Unknown tokens are ignored. Any thread.
    public func removeObserver(_ token: LifecycleObserverToken) {
        let (notifications, states) = state.withLock { state in
            state.observers[token.id] = nil
            state.backgroundWorks[token.id] = nil
            return (state.streams.removeValue(forKey: token.id), state.stateStreams.removeValue(forKey: token.id))
        }
        notifications?.finish()
        states?.finish()
    }

    // MARK: Background tasks

    /// Asks for time to finish `name`'s work in the background. Returns the task's identifier, or
    /// ``BackgroundTaskIdentifier/invalid`` when the background time is already spent. `expirationHandler` runs
    /// on the application's queue ``BackgroundTimeConfiguration/expirationMargin`` seconds before the time runs
    /// out, and must end the task. Any thread.
    public func beginBackgroundTask(
        name: String? = nil, expirationHandler: (@Sendable () -> Void)? = nil
    ) -> BackgroundTaskIdentifier {
        let identifier = state.withLock { state -> BackgroundTaskIdentifier in
            let label = name ?? "unnamed"
            if let deadline = state.backgroundDeadline, clock.now >= deadline {
                state.logger.notice(
                    "background task '\(label)' was not granted time: the background time is spent",
                    metadata: ["hint": "begin background tasks on entering the background, each time"])
                return .invalid
            }
            let identifier = BackgroundTaskIdentifier(rawValue: state.nextTaskID)
            state.nextTaskID += 1
            state.tasks[identifier.rawValue] = RunningTask(
                name: label, expirationHandler: expirationHandler, began: clock.now)
            if state.applicationState == .suspended {
                state.applicationState = .background
            }
            state.logger.info("background task '\(label)' (\(identifier)) began")
            return identifier
        }
        return identifier
    }

    /// Ends a task begun with ``beginBackgroundTask(name:expirationHandler:)``; set your copy of the identifier to
    /// ``BackgroundTaskIdentifier/invalid`` afterwards. Ending a task twice, or an identifier never returned, is a
    /// programmer error: it is logged and otherwise ignored. Any thread.
    public func endBackgroundTask(_ identifier: BackgroundTaskIdentifier) {
        state.withLock { state in
            guard let task = state.tasks.removeValue(forKey: identifier.rawValue) else {
                state.logger.error(
                    "endBackgroundTask(\(identifier)): no such task is running (ended twice, or never begun); ignored")
                return
            }
            let milliseconds = Self.seconds(clock.now - task.began) * 1000
            state.logger.info(
                "background task '\(task.name)' (\(identifier)) ended after \(Self.format(milliseconds)) ms")
        }
        suspendIfIdle()
    }

    /// The names of the tasks running now, in the order they began (logs, tests).
    public var runningBackgroundTasks: [String] {
        state.withLock { state in state.tasks.sorted { $0.key < $1.key }.map(\.value.name) }
    }

    // MARK: Private

    private func startBackgroundWork(named name: String, _ work: @escaping @Sendable () async -> Void) {
        let run = BackgroundWorkRun(application: self)
        let identifier = beginBackgroundTask(name: name) { run.cancelAndEnd() }
        guard identifier != .invalid else { return }
        run.start(identifier: identifier, work: work)
    }

    private func suspendIfIdle() {
        state.withLock { state in
            guard state.applicationState == .background, !state.manifest.allowsBackgroundAudio, state.tasks.isEmpty
            else { return }
            state.applicationState = .suspended
            state.logger.info("suspended: in the background without the audio capability and with no task running")
        }
    }

    private func scheduleBackgroundTimers(generation: Int) {
        let configuration = state.withLock { $0.backgroundTime }
        let expiry = max(0, configuration.budget - configuration.expirationMargin)
        clock.schedule(after: .seconds(expiry)) { [weak self] in self?.expireTasks(generation: generation) }
        clock.schedule(after: .seconds(configuration.budget)) { [weak self] in
            self?.terminateIfTasksRemain(generation: generation)
        }
    }

    private func expireTasks(generation: Int) {
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            guard state.timerGeneration == generation else { return [] }
            var handlers: [@Sendable () -> Void] = []
            for (id, task) in state.tasks where !task.expirationNotified {
                state.tasks[id]?.expirationNotified = true
                state.logger.notice("background task '\(task.name)' (#\(id)) is about to run out of time")
                task.expirationHandler.map { handlers.append($0) }
            }
            return handlers
        }
        for handler in handlers { handler() }
    }

    private func terminateIfTasksRemain(generation: Int) {
        let overran = state.withLock { state -> Bool in
            guard state.timerGeneration == generation, !state.tasks.isEmpty else { return false }
            for (id, task) in state.tasks.sorted(by: { $0.key < $1.key }) {
                state.logger.critical(
                    """
                    background task '\(task.name)' (#\(id)) was still running when the background time ran out; \
                    terminating with status \(Self.watchdogExitStatus)
                    """,
                    metadata: ["hint": "end every background task, at the latest in its expiration handler"])
            }
            return true
        }
        if overran { terminate(Self.watchdogExitStatus) }
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    static func format(_ milliseconds: Double) -> String {
        let hundredths = Int((milliseconds * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
