import Dispatch
import FoundationEssentials
import Logging
import QueuePlayer
import QueuePlayerControl
import ServiceLifecycle
import Synchronization

/// Runs a ``QueuePlayer`` as a service: reports its events, draws the status line, and stops it cleanly on
/// graceful shutdown (SIGINT, SIGTERM) or, with `exitWhenEmpty`, once the queue has been heard.
package final class PlaybackService: Service {
    /// How the run ended, for the exit status.
    package struct Outcome: Sendable {
        package var failedItems: [QueueEntry] = []
    }

    private let player: QueuePlayer
    private let controller: PlayerController
    private let application: Application
    private let startsPlaying: Bool
    private let exitWhenEmpty: Bool
    private let terminal: Int32?
    private let backgroundLogInterval: Double
    private let stateURL: URL
    private let logger: Logger
    private let outcomeStorage = Mutex(Outcome())
    private let progress = Mutex(Progress())

    /// How far ``prepare()`` and ``start()`` have gone.
    private struct Progress: Sendable {
        var subscriptions: Subscriptions?
        var isStarted = false
    }

    private struct Subscriptions: Sendable {
        var events: AsyncStream<PlaybackEvent>
        var saving: LifecycleObserverToken
        var logging: ObserverToken
        var checkpointing: ObserverToken
    }

    /// `terminal` is where the status line may be drawn (nil: never); `stateURL` is where the state is saved on
    /// entering the background.
    package init(
        player: QueuePlayer, controller: PlayerController, application: Application, startsPlaying: Bool,
        exitWhenEmpty: Bool,
        terminal: Int32?, backgroundLogInterval: Double, stateURL: URL, logger: Logger
    ) {
        self.player = player
        self.controller = controller
        self.application = application
        self.startsPlaying = startsPlaying
        self.exitWhenEmpty = exitWhenEmpty
        self.terminal = terminal
        self.backgroundLogInterval = backgroundLogInterval
        self.stateURL = stateURL
        self.logger = logger
    }

    /// How the run ended. Read it after ``run()`` returns.
    package var outcome: Outcome { outcomeStorage.withLock { $0 } }

    /// Subscribes to the player's events and, if the service starts playback, prerolls (see
    /// ``QueuePlayer/preroll()``): the daemon calls it while its control socket is still being claimed, so that the
    /// opening overlaps that, and nothing is heard until ``start()``. Only the first call has an effect. Any thread.
    package func prepare() {
        let isFirst = progress.withLock { progress in
            guard progress.subscriptions == nil else { return false }
            progress.subscriptions = subscribe()
            return true
        }
        if isFirst, startsPlaying { player.preroll() }
    }

    /// Prepares if that was not done, then, unless the service was made not to, starts playback. The daemon calls
    /// it as soon as its control socket is bound, so that the first sound does not wait for the session bus and the
    /// service group; ``run()`` calls it if nobody did. Only the first call has an effect. Any thread.
    package func start() {
        prepare()
        let isFirst = progress.withLock { progress in
            defer { progress.isStarted = true }
            return !progress.isStarted
        }
        if isFirst, startsPlaying { player.playUnlessBackgrounded() }
    }

    /// The event stream and observers the run needs, taken before anything plays so that no event is missed.
    ///
    /// The position is saved once a second of the item's time while it plays (a SIGKILL loses at most a second;
    /// commands and item changes save it themselves): a periodic time observer is called only while the position
    /// moves, so a paused, stopped or waiting daemon does not wake for it. It writes at most every half second of
    /// the clock's time, which a second of playing always passes: unpaced (a benchmark, a test), a second of the item
    /// goes by in a millisecond, and 300 writes took a tenth of a 300 s decode. It shares its queue with the
    /// background log, whose calls fall due at the same moments, so that one wake-up serves both.
    private func subscribe() -> Subscriptions {
        let events = player.playbackEvents()
        let saving = application.performWhenEnteringBackground(named: "save state") { [self] in saveState() }
        let ticks = DispatchQueue(label: "queueplayer.position-ticks")
        let logging = player.addPeriodicTimeObserver(
            forInterval: MediaTime(seconds: backgroundLogInterval, preferredTimescale: 1000), queue: ticks
        ) { [self] time in
            if application.applicationState == .background {
                logger.info("App is backgrounded. Time is: \(fixedDecimals(time.seconds, places: 2))")
            }
        }
        let lastCheckpoint = Mutex<ContinuousClock.Instant?>(nil)
        let checkpointing = player.addPeriodicTimeObserver(
            forInterval: MediaTime(seconds: 1, preferredTimescale: 1), queue: ticks
        ) { [controller] _ in
            let now = ContinuousClock.now
            let isDue = lastCheckpoint.withLock { last in
                guard last.map({ now - $0 >= .milliseconds(500) }) ?? true else { return false }
                last = now
                return true
            }
            if isDue { controller.checkpoint() }
        }
        return Subscriptions(events: events, saving: saving, logging: logging, checkpointing: checkpointing)
    }

    package func run() async throws {
        start()
        guard let subscriptions = progress.withLock({ $0.subscriptions }) else { return }
        defer {
            application.removeObserver(subscriptions.saving)
            player.removeObserver(subscriptions.logging)
            player.removeObserver(subscriptions.checkpointing)
        }
        // Saved once playback is under way, so that writing the store does not delay the first sound.
        controller.saveAll()
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                if terminal != nil {
                    group.addTask { await self.drawStatusLine() }
                }
                await reportEvents(subscriptions.events)
                group.cancelAll()
            }
        } onGracefulShutdown: {
            self.controller.saveAll()
            self.player.shutdown()
        }
        controller.saveAll()
        player.shutdown()
        if terminal != nil { StatusLine().finish() }
    }

    /// Seed 003's pattern, run in a background task on each time the process enters the background.
    private func saveState() {
        controller.saveAll()
        logger.info("saved the state to \(stateURL.path)")
    }

    private func reportEvents(_ events: AsyncStream<PlaybackEvent>) async {
        for await event in events {
            controller.note(event)
            switch event {
            case .itemStarted(let item):
                var metadata: Logger.Metadata = ["duration": "\(StatusLine.clock(item.duration))"]
                metadata["title"] = item.metadata.title.map { "\($0)" }
                metadata["artist"] =
                    item.metadata.artists.isEmpty ? nil : "\(item.metadata.artists.joined(separator: ", "))"
                if application.applicationState == .background {
                    logger.info("New music name: \(item.entry.displayName)", metadata: metadata)
                } else {
                    logger.info("playing \(item.entry.location)", metadata: metadata)
                }
            case .itemReady:
                break
            case .metadataChanged(let entry, let metadata):
                if let title = metadata.title {
                    logger.info("now playing on \(metadata.stationName ?? entry.displayName): \(title)")
                }
            case .itemFinished(let entry):
                logger.debug("finished \(entry.location)")
            case .itemFailed(let entry, let error):
                logger.error("\(error)")
                outcomeStorage.withLock { $0.failedItems.append(entry) }
            case .queueFinished:
                logger.info("the queue has been played")
                if exitWhenEmpty { return }
            case .outputFailed, .outputRestored, .outputSuspended, .outputResumed, .stalled, .resumedAfterBuffering,
                .liveGap:
                // The engine said so in the log, and reconnects by itself; commands still work meanwhile.
                break
            }
        }
    }

    private func drawStatusLine() async {
        let line = StatusLine()
        while !Task.isCancelled {
            if application.applicationState == .active, BackgroundSignals.ownsTerminal(terminal) {
                line.render(player)
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
    }
}
