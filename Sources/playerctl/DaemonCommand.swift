import ArgumentParser
import FoundationEssentials
import Logging
import QueuePlayer
import ServiceLifecycle

/// `playerctl daemon`: plays files and folders in order, headless, until stopped.
struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Run the player service and play ITEMs in order.",
        discussion: """
            Files play in the order given; a folder contributes its MP3 files in name order. Items of the same
            format join with no gap. A file that cannot be played is reported on stderr, naming it, and the rest
            still plays. SIGINT and SIGTERM stop playback cleanly.

            \(ExitStatus.helpText)
            """
    )

    /// Where the audio goes.
    enum SinkKind: String, ExpressibleByArgument, CaseIterable {
        case pulse, null
    }

    @Option(help: "Where audio goes: 'pulse' (a PulseAudio server) or 'null' (nowhere; for tests and benchmarks).")
    var sink: SinkKind = .pulse

    @Flag(help: "With --sink null: decode as fast as possible instead of in real time.")
    var unpaced = false

    @Option(
        help: ArgumentHelp(
            "PulseAudio server address (unix:/path/to/native or tcp:host:port).",
            discussion: "Default: $PULSE_SERVER, then $XDG_RUNTIME_DIR/pulse/native.", valueName: "address"))
    var server: String?

    @Flag(help: "Exit once the last item has been heard, instead of waiting for more.")
    var exitWhenEmpty = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    @Argument(help: ArgumentHelp("MP3 files or folders to play.", valueName: "item"))
    var items: [String] = []

    func validate() throws {
        if unpaced && sink != .null {
            throw ValidationError("--unpaced applies only to --sink null")
        }
        if server != nil && sink != .pulse {
            throw ValidationError("--server applies only to --sink pulse")
        }
    }

    func run() async throws {
        var logger = Logger(label: "queueplayer")
        logger.logLevel = logLevel
        let sink: any AudioSink
        do {
            sink = try makeSink(logger: logger)
        } catch {
            logger.critical("\(error)")
            throw ExitStatus.outputFailed
        }
        let engine = PlaybackEngine(sink: sink, logger: logger)
        let urls = ItemPaths.expand(items, logger: logger)
        if urls.isEmpty {
            logger.notice("nothing to play yet: give files or folders, such as `playerctl daemon Music/`")
        }
        engine.enqueue(urls)
        let service = PlaybackService(
            engine: engine, exitWhenEmpty: exitWhenEmpty, showsStatusLine: StatusLine.isAvailable, logger: logger)
        var serviceConfiguration = ServiceGroupConfiguration.ServiceConfiguration(service: service)
        serviceConfiguration.successTerminationBehavior = .gracefullyShutdownGroup
        let group = ServiceGroup(
            configuration: .init(
                services: [serviceConfiguration], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        let outcome = service.outcome
        if outcome.outputError != nil {
            throw ExitStatus.outputFailed
        }
        if !outcome.failedItems.isEmpty {
            logger.error("\(outcome.failedItems.count) item(s) could not be played")
            throw ExitStatus.itemsFailed
        }
    }

    private func makeSink(logger: Logger) throws -> any AudioSink {
        switch sink {
        case .pulse: try PulseAudioSink(server: server, logger: logger)
        case .null: NullSink(pacing: unpaced ? .unpaced : .realTime)
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
