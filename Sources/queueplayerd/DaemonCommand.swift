import ArgumentParser
import FoundationEssentials
import Glibc
import Logging
import QueuePlayer
import QueuePlayerControl
import QueuePlayerService
import ServiceLifecycle

/// `queueplayerd`, which `playerctl daemon` runs (exec, same process): plays files and folders in order, headless,
/// until stopped. Help, errors and the man page name it `queueplayerd`, its executable, which is also how the Debian
/// package's systemd unit runs it.
struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queueplayerd",
        abstract: "Run the player service and play ITEMs in order.",
        discussion: """
            Files play in the order given; a folder contributes its MP3 files in name order. Items join with no \
            gap, whatever their sample rate (those at another rate than the sound server's are resampled). A file \
            that cannot be played is reported on stderr, naming it, and the rest still plays. SIGINT and SIGTERM \
            stop playback cleanly.

            Background: with --background, after SIGUSR1, or when job control puts the process in the background \
            ('&', Ctrl-Z then 'bg'), the player is backgrounded; SIGUSR2 or 'fg' make it active again. With the \
            'audio' mode in the manifest, playback goes on and the time is logged; without it, playback pauses \
            (and stays paused on return unless --resume-on-foreground). Entering the background saves the queue \
            and position to the state file, in a background task.

            \(ExitStatus.helpText)
            """,
        version: ReleaseVersion.printed
    )

    /// Parses the arguments and runs the daemon (see ``DaemonMain``), and returns the process's exit status. An
    /// error or a request for help is reported as ArgumentParser's `exit(withError:)` does, without exiting.
    static func parseAndRun() async -> Int32 {
        do {
            try await parse().run()
            return ExitCode.success.rawValue
        } catch {
            let code = exitCode(for: error)
            let text = fullMessage(for: error)
            let line = text.isEmpty ? "" : text + "\n"
            _ = line.withCString { write(code == .success ? STDOUT_FILENO : STDERR_FILENO, $0, strlen($0)) }
            return code.rawValue
        }
    }

    /// Where the audio goes.
    enum SinkKind: String, ExpressibleByArgument, CaseIterable {
        case pulse, snapcast, null
    }

    @Option(
        help: ArgumentHelp(
            "Where audio goes: 'pulse' (a PulseAudio server), 'snapcast' (a Snapcast server's tcp source, for "
                + "rooms in step) or 'null' (nowhere; for tests and benchmarks).",
            discussion: "With 'snapcast', --server is the source's HOST:PORT (default 127.0.0.1:4953)."))
    var sink: SinkKind = .pulse

    @Flag(help: "With --sink null: decode as fast as possible instead of in real time.")
    var unpaced = false

    @Option(
        help: ArgumentHelp(
            "The server's address: PulseAudio's (unix:/path/to/native or tcp:host:port), or with --sink snapcast "
                + "the snapserver tcp source's (host:port).",
            discussion: "PulseAudio's default: $PULSE_SERVER, then $XDG_RUNTIME_DIR/pulse/native.",
            valueName: "address"))
    var server: String?

    @Option(help: ArgumentHelp("With --sink snapcast: the source's sample rate (its sampleformat).", valueName: "hz"))
    var sampleRate = 48_000

    @Option(
        help: ArgumentHelp(
            "With --sink snapcast: snapserver's buffer (its `buffer` setting), which the reported time counts.",
            discussion: "The rooms play what is sent this long after; snapserver does not report it.",
            valueName: "ms"))
    var snapcastBuffer = 1_000

    @Flag(help: "Exit once the last item has been heard, instead of waiting for more.")
    var exitWhenEmpty = false

    @Option(
        help: ArgumentHelp(
            "Diagnostics: append the monotonic clock, a 10 ms observer's time and the audible time to FILE.",
            discussion: "Read by scripts/audible-time, which checks reported time against a recording.",
            valueName: "file"))
    var timeTrace: String?

    @Option(
        help: ArgumentHelp(
            "Trust the certificate authorities in this PEM file for https items, beside the system's store.",
            discussion: "For a server with an authority of its own (a home Icecast). May be given more than once.",
            valueName: "file"))
    var tlsCaFile: [String] = []

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    @OptionGroup(title: "Lifecycle")
    var lifecycle: LifecycleOptions

    @Option(
        help: ArgumentHelp(
            "The control socket to serve.", discussion: ControlSocketPath.defaultDescription, valueName: "path"))
    var socket: String?

    @Option(
        help: ArgumentHelp(
            "Serve MPD's protocol at ADDRESS (HOST:PORT, or a Unix socket's path), for MPD clients.",
            discussion: """
                May be given more than once. An address that is taken is logged and left out. One beyond loopback \
                lets others on the network in: give it with --mpd-password.
                """,
            valueName: "address"))
    var mpd: [String] = []

    @Option(
        help: ArgumentHelp(
            "An MPD password and what it allows: PASSWORD@PERMISSIONS (read, add, player, control, admin).",
            discussion: """
                May be given more than once. With one, a client that gives no password may do only what \
                --mpd-default-permissions allows (nothing, by default), as in MPD.
                """,
            valueName: "password@permissions"))
    var mpdPassword: [String] = []

    @Option(
        help: ArgumentHelp(
            "Read MPD passwords from FILE: PASSWORD@PERMISSIONS a line, '#' lines ignored.",
            discussion: "Unlike --mpd-password, not visible to other users in the process list.",
            valueName: "file"))
    var mpdPasswordFile: String?

    @Option(
        help: ArgumentHelp(
            "What an MPD client that gave no password may do (comma-separated permissions).",
            discussion: "Default: everything without --mpd-password, nothing with it.", valueName: "permissions"))
    var mpdDefaultPermissions: String?

    @Option(help: ArgumentHelp("The most MPD clients served at once; more are refused.", valueName: "n"))
    var mpdMaxConnections = MPDServer.defaultMaximumConnections

    @Option(
        help: ArgumentHelp(
            "Disconnect an MPD client that says nothing for this long, unless it idles (MPD's connection_timeout).",
            valueName: "seconds"))
    var mpdConnectionTimeout = Int(MPDServer.defaultConnectionTimeout.components.seconds)

    @Option(
        help: ArgumentHelp(
            "The folder MPD clients' song names are relative to, and the music index's.",
            discussion: """
                Default: $XDG_MUSIC_DIR (as ~/.config/user-dirs.dirs sets it), else ~/Music. Its MP3 files are \
                indexed with their tags in the state file when the daemon first starts on it, and again on MPD's \
                update.
                """,
            valueName: "dir"))
    var musicDirectory: String?

    @Flag(
        help: ArgumentHelp(
            "Update the music index by itself when files change in the music folder, as mpd's auto_update.",
            discussion: """
                Follows the folder with inotify and updates the folders that changed once nothing has changed \
                for 5 s. Each folder takes one of the user's inotify watches (fs.inotify.max_user_watches).
                """))
    var autoUpdate = false

    @Option(
        help: ArgumentHelp(
            "The folder of MPD clients' stored playlists (NAME.m3u).",
            discussion: "Default: a 'playlists' folder beside the state file.", valueName: "dir"))
    var playlistDirectory: String?

    @Flag(help: "With no ITEM: play the restored queue at once instead of waiting, paused, for `playerctl play`.")
    var resume = false

    @Flag(help: "Start paused, as mpv's --pause does: the queue is there, and nothing is heard until `playerctl play`.")
    var pause = false

    @Argument(
        help: ArgumentHelp(
            "MP3 files or http(s) URLs, folders, playlists (.m3u, .m3u8, .pls: files or URLs) to play.",
            valueName: "item"))
    var items: [String] = []

    func validate() throws {
        if pause && resume {
            throw ValidationError("--pause and --resume ask for opposite starts; give one of them")
        }
        if unpaced && sink != .null {
            throw ValidationError("--unpaced applies only to --sink null")
        }
        if server != nil && sink == .null {
            throw ValidationError("--server applies only to --sink pulse or snapcast")
        }
        if sampleRate != 48_000 && sink != .snapcast {
            throw ValidationError("--sample-rate applies only to --sink snapcast")
        }
        if snapcastBuffer != 1_000 && sink != .snapcast {
            throw ValidationError("--snapcast-buffer applies only to --sink snapcast")
        }
        guard (20...10_000).contains(snapcastBuffer) else {
            throw ValidationError("--snapcast-buffer \(snapcastBuffer): give snapserver's buffer in ms, 20 to 10000")
        }
        guard (8_000...192_000).contains(sampleRate) else {
            throw ValidationError("--sample-rate \(sampleRate): give the snapserver source's rate, 8000 to 192000")
        }
        if sink == .snapcast { _ = try Self.snapcastAddress(server ?? "127.0.0.1:4953") }
        _ = try mpdAddresses()
        _ = try mpdAccess()
        guard (1...100_000).contains(mpdMaxConnections) else {
            throw ValidationError("--mpd-max-connections \(mpdMaxConnections): give 1 to 100000")
        }
        guard (1...86_400).contains(mpdConnectionTimeout) else {
            throw ValidationError("--mpd-connection-timeout \(mpdConnectionTimeout): give 1 to 86400 seconds")
        }
    }

    /// The `--mpd` addresses, read.
    func mpdAddresses() throws -> [MPDListenAddress] {
        try mpd.map { text in
            guard let address = MPDListenAddress(text) else {
                throw ValidationError("--mpd \(text): give HOST:PORT (127.0.0.1:6600) or a Unix socket's path")
            }
            return address
        }
    }

    /// The `--mpd-password`, `--mpd-password-file` and `--mpd-default-permissions` values, read.
    func mpdAccess() throws -> MPDAccess {
        var passwords = mpdPassword
        if let mpdPasswordFile {
            guard let text = try? String(contentsOfFile: mpdPasswordFile, encoding: .utf8) else {
                throw ValidationError("--mpd-password-file \(mpdPasswordFile): cannot be read")
            }
            passwords += text.split(whereSeparator: \.isNewline).map(String.init).filter {
                !$0.isEmpty && !$0.hasPrefix("#")
            }
        }
        do throws(MPDError) {
            return try MPDAccess(passwords: passwords, defaultPermissions: mpdDefaultPermissions)
        } catch {
            throw ValidationError("--mpd-password, --mpd-password-file or --mpd-default-permissions: \(error.message)")
        }
    }

    func run() async throws {
        let logger = makeLogger()
        for file in tlsCaFile {
            do throws(RemoteItemTrust.Failure) {
                try RemoteItemTrust.addCertificateAuthorities(fromPEMFile: file)
            } catch {
                throw ValidationError("--tls-ca-file \(error)")
            }
        }
        // Opened on another thread while the socket, the output and the player are set up: checking and migrating
        // the database took a millisecond of every start, on the way to the first sound.
        let stateURL = lifecycle.stateURL
        let storeOpening = Task.detached(priority: .userInitiated) { try Self.openStore(at: stateURL, logger: logger) }
        // Claimed in the background while the rest starts; nothing plays before the claim has succeeded.
        let server = ControlServer(path: ControlSocketPath.resolve(socket), logger: logger)
        defer { server.removeSocketFile() }
        let application = Application.shared
        try configure(application, logger: logger)
        let player: QueuePlayer
        do {
            player = try makePlayer(logger: logger, application: application)
        } catch {
            logger.critical("\(error)")
            throw ExitStatus.outputFailed
        }
        player.resumesAfterBackground = lifecycle.resumeOnForeground
        if let timeTrace {
            do {
                try TimeTrace(path: timeTrace).attach(to: player)
            } catch {
                throw ValidationError(error.description)
            }
        }
        let controller = PlayerController(
            player: player, application: application, store: try await storeOpening.value, logger: logger)
        let restored = fillQueue(player, controller: controller, logger: logger)
        let terminal = [STDOUT_FILENO, STDERR_FILENO, STDIN_FILENO].first { isatty($0) == 1 }
        if lifecycle.background || (terminal != nil && !BackgroundSignals.ownsTerminal(terminal)) {
            application.enterBackground()
        }
        controller.onQuit { [player] in player.shutdown() }
        let service = PlaybackService(
            player: player, controller: controller, application: application,
            startsPlaying: !pause && (!restored || resume),
            exitWhenEmpty: exitWhenEmpty,
            terminal: StatusLine.isAvailable ? STDOUT_FILENO : nil,
            backgroundLogInterval: lifecycle.backgroundLogInterval, stateURL: lifecycle.stateURL, logger: logger)
        // Sound first: the first item and the output open (paused) while the socket's claim completes; once it
        // has (so a second daemon exits without a sound), playback starts, and the bus follows.
        service.prepare()
        let mpdServer = try makeMPDServer(controller: controller, logger: logger)
        await mpdServer?.bind()
        do {
            try await server.serve(controller)
        } catch {
            logger.critical("cannot serve the control socket: \(error)")
            throw ExitStatus.socketUnavailable
        }
        service.start()
        // Each service is named here: without a name, the group names it `"\(service)"`, a reflection of the type
        // whose protocol-conformance lookups took 0.7 ms of every start.
        let lifecycleService = BackgroundSignals(
            application: application, terminal: terminal, signals: await BackgroundSignals.trapSignals(),
            logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: service, successTerminationBehavior: .gracefullyShutdownGroup, serviceName: "playback"),
            .init(service: lifecycleService, serviceName: "process lifecycle"),
            .init(service: server, serviceName: "control socket"),
        ]
        if let mpdServer { services.append(.init(service: mpdServer, serviceName: "MPD protocol")) }
        if let bus = MPRISBus.start(controller: controller, logger: logger) {
            services.append(.init(service: MPRISService(bus: bus, controller: controller), serviceName: "MPRIS"))
        }
        let group = ServiceGroup(
            configuration: .init(
                services: services,
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        let outcome = service.outcome
        if !outcome.failedItems.isEmpty {
            logger.error("\(outcome.failedItems.count) item(s) could not be played")
            throw ExitStatus.itemsFailed
        }
    }

    /// The MPD protocol's server for the `--mpd` addresses; nil without any.
    private func makeMPDServer(controller: PlayerController, logger: Logger) throws -> MPDServer? {
        guard !mpd.isEmpty else { return nil }
        let folder =
            musicDirectory.map { MPDMusicFolder(path: URL(fileURLWithPath: $0).standardizedFileURL.path) }
            ?? MPDMusicFolder.standard()
        let playlists = MPDStoredPlaylists(
            folder: playlistDirectory.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
                ?? lifecycle.stateURL.deletingLastPathComponent().appendingPathComponent("playlists").path)
        return MPDServer(
            addresses: try mpdAddresses(), controller: controller, musicFolder: folder, playlists: playlists,
            access: try mpdAccess(), maximumConnections: mpdMaxConnections,
            connectionTimeout: .seconds(mpdConnectionTimeout), followsMusicFolder: autoUpdate, logger: logger)
    }

    /// swift-log's stderr lines, or journal lines when stderr is the systemd journal.
    private func makeLogger() -> Logger {
        var logger =
            JournalLogHandler.stderrIsJournal
            ? Logger(label: "queueplayer") { JournalLogHandler(label: $0) } : Logger(label: "queueplayer")
        logger.logLevel = logLevel
        return logger
    }

    /// Reads the manifest into `application`; a malformed one ends the run before anything plays.
    private func configure(_ application: Application, logger: Logger) throws {
        do {
            let manifest = try AppManifest.load(from: lifecycle.manifestURL, logger: logger)
            application.configure(
                manifest: manifest, backgroundTime: lifecycle.backgroundTimeConfiguration, logger: logger)
        } catch {
            logger.critical("\(error)")
            throw ExitStatus.badManifest
        }
    }

    private static func openStore(at url: URL, logger: Logger) throws -> StateStore {
        do {
            return try StateStore.openRecovering(url: url, logger: logger)
        } catch {
            logger.critical("cannot open the state store \(url.path): \(error)")
            throw ExitStatus.stateUnavailable
        }
    }

    /// Queues the ITEMs, or with none restores the saved queue. Returns true when a saved queue was restored.
    private func fillQueue(_ player: QueuePlayer, controller: PlayerController, logger: Logger) -> Bool {
        guard items.isEmpty else {
            let expansion = ItemPaths.expand(items)
            for problem in expansion.problems { logger.warning("\(problem); not queued") }
            player.insert(controller.items(for: expansion), after: nil)
            return false
        }
        if controller.restore() { return true }
        logger.notice("nothing to play yet: give files or folders, such as `playerctl daemon Music/`")
        return false
    }

    private func makePlayer(logger: Logger, application: Application) throws -> QueuePlayer {
        switch sink {
        case .pulse:
            let sink = try PulseAudioSink(server: server, logger: logger, waitsForServer: true)
            return QueuePlayer(sink: sink, logger: logger, application: application)
        case .snapcast:
            let (host, port) = try Self.snapcastAddress(server ?? "127.0.0.1:4953")
            let sink = SnapcastSink(
                host: host, port: port, sampleRate: sampleRate, bufferMilliseconds: snapcastBuffer)
            return QueuePlayer(sink: sink, logger: logger, application: application)
        case .null:
            let sink = NullSink(pacing: unpaced ? .unpaced : .realTime)
            return QueuePlayer(sink: sink, logger: logger, application: application)
        }
    }
}

extension DaemonCommand {
    /// `HOST:PORT`, `[IPV6]:PORT` or `HOST` (port 4953) as a host and a port.
    static func snapcastAddress(_ text: String) throws -> (host: String, port: Int) {
        var host = Substring(text)
        var port = 4953
        if let colon = text.lastIndex(of: ":"), text.hasPrefix("[") || !text[..<colon].contains(":") {
            guard let number = Int(text[text.index(after: colon)...]), (1...65_535).contains(number) else {
                throw ValidationError("--server \(text): the port after the last ':' must be a number from 1 to 65535")
            }
            host = text[..<colon]
            port = number
        }
        host = host.hasPrefix("[") && host.hasSuffix("]") ? host.dropFirst().dropLast() : host
        guard !host.isEmpty else {
            throw ValidationError("--server \(text): give the snapserver host, as in 127.0.0.1:4953")
        }
        return (String(host), port)
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
