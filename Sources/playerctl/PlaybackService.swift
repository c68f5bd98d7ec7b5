import Logging
import QueuePlayer
import ServiceLifecycle
import Synchronization

/// Runs a ``PlaybackEngine`` as a service: reports its events, draws the status line, and stops it cleanly on
/// graceful shutdown (SIGINT, SIGTERM) or, with `exitWhenEmpty`, once the queue has been heard.
final class PlaybackService: Service {
    /// How the run ended, for the exit status.
    struct Outcome: Sendable {
        var failedItems: [QueueEntry] = []
        var outputError: AudioSinkError?
    }

    private let engine: PlaybackEngine
    private let exitWhenEmpty: Bool
    private let showsStatusLine: Bool
    private let logger: Logger
    private let outcomeStorage = Mutex(Outcome())

    init(engine: PlaybackEngine, exitWhenEmpty: Bool, showsStatusLine: Bool, logger: Logger) {
        self.engine = engine
        self.exitWhenEmpty = exitWhenEmpty
        self.showsStatusLine = showsStatusLine
        self.logger = logger
    }

    /// How the run ended. Read it after ``run()`` returns.
    var outcome: Outcome { outcomeStorage.withLock { $0 } }

    func run() async throws {
        engine.play()
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                if showsStatusLine {
                    group.addTask { await self.drawStatusLine() }
                }
                await reportEvents()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            self.engine.shutdown()
        }
        engine.shutdown()
        if showsStatusLine { StatusLine().finish() }
    }

    private func reportEvents() async {
        for await event in engine.events {
            switch event {
            case .itemStarted(let item):
                var metadata: Logger.Metadata = ["duration": "\(StatusLine.clock(item.duration))"]
                metadata["title"] = item.metadata.title.map { "\($0)" }
                metadata["artist"] =
                    item.metadata.artists.isEmpty ? nil : "\(item.metadata.artists.joined(separator: ", "))"
                logger.info("playing \(item.entry.url.path)", metadata: metadata)
            case .itemReady:
                break
            case .itemFinished(let entry):
                logger.debug("finished \(entry.url.path)")
            case .itemFailed(let entry, let error):
                logger.error("\(error)")
                outcomeStorage.withLock { $0.failedItems.append(entry) }
            case .queueFinished:
                logger.info("the queue has been played")
                if exitWhenEmpty { return }
            case .outputFailed(let error):
                logger.critical("\(error)")
                outcomeStorage.withLock { $0.outputError = error }
                return
            }
        }
    }

    private func drawStatusLine() async {
        let line = StatusLine()
        while !Task.isCancelled {
            line.render(engine.status())
            try? await Task.sleep(for: .milliseconds(200))
        }
    }
}
