import ArgumentParser
import FoundationEssentials
import QueuePlayer

/// The daemon's options for the app lifecycle: the manifest, starting backgrounded, background time, and what
/// is logged in the background.
struct LifecycleOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The manifest (a property list, like Info.plist) declaring UIBackgroundModes.",
            discussion: """
                Default: $XDG_CONFIG_HOME/queueplayer/Info.plist (~/.config/queueplayer/Info.plist). With the \
                'audio' mode, playback goes on in the background; without it (or without a manifest), entering \
                the background pauses playback. An example declaring 'audio': \
                /usr/share/doc/queueplayer/examples/Info.plist (contrib/Info.plist in the source).
                """,
            valueName: "file"))
    var manifest: String?

    @Flag(help: "Start backgrounded, as if started with '&'.")
    var background = false

    @Option(
        help: ArgumentHelp(
            "Background time granted each time the process enters the background.", valueName: "seconds"))
    var backgroundTime: Double = 600

    @Option(
        help: ArgumentHelp("How long before the background time ends tasks are told to finish.", valueName: "seconds"))
    var expirationMargin: Double = 5

    @Flag(help: "Play again on returning to the foreground if entering the background paused playback.")
    var resumeOnForeground = false

    @Option(
        help: ArgumentHelp(
            "While backgrounded with the audio mode, log the time this often.",
            discussion: "0.01 logs every 10 ms observation, as the iOS sample does.", valueName: "seconds"))
    var backgroundLogInterval: Double = 1

    @Option(
        help: ArgumentHelp(
            "The state store (SQLite): queue, position, volume and history, restored on start.",
            discussion: """
                Default: $XDG_STATE_HOME/queueplayer/state.sqlite (~/.local/state/queueplayer/state.sqlite).
                """,
            valueName: "file"))
    var stateFile: String?

    func validate() throws {
        guard backgroundTime > 0, backgroundTime.isFinite else {
            throw ValidationError("--background-time must be a positive number of seconds")
        }
        guard expirationMargin >= 0, expirationMargin <= backgroundTime else {
            throw ValidationError("--expiration-margin must be between 0 and --background-time")
        }
        guard backgroundLogInterval >= 0.001, backgroundLogInterval.isFinite else {
            throw ValidationError("--background-log-interval must be at least 0.001 seconds")
        }
    }

    var manifestURL: URL { manifest.map { URL(fileURLWithPath: $0) } ?? AppManifest.defaultURL() }

    var stateURL: URL {
        if let stateFile { return URL(fileURLWithPath: stateFile) }
        let environment = ProcessInfo.processInfo.environment
        let base =
            environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? "/root") + "/.local/state")
        return URL(fileURLWithPath: base).appendingPathComponent("queueplayer/state.sqlite")
    }

    var backgroundTimeConfiguration: BackgroundTimeConfiguration {
        BackgroundTimeConfiguration(budget: backgroundTime, expirationMargin: expirationMargin)
    }
}
