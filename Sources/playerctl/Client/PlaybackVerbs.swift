import ArgumentParser
import QueuePlayerService

/// A verb that sends one request with no arguments and prints nothing: play, pause, play-pause, stop, next,
/// previous, clear, background, foreground, quit.
protocol SimpleVerb: AsyncParsableCommand {
    static var command: String { get }
    var options: ClientOptions { get }
}

extension SimpleVerb {
    func run() async throws {
        _ = try await options.call(ControlRequest(command: Self.command))
    }
}

struct PlayVerb: SimpleVerb {
    static let command = "play"
    static let configuration = CommandConfiguration(commandName: command, abstract: "Start or resume playback.")
    @OptionGroup var options: ClientOptions
}

struct PauseVerb: SimpleVerb {
    static let command = "pause"
    static let configuration = CommandConfiguration(commandName: command, abstract: "Pause playback.")
    @OptionGroup var options: ClientOptions
}

struct PlayPauseVerb: SimpleVerb {
    static let command = "play-pause"
    static let configuration = CommandConfiguration(commandName: command, abstract: "Pause if playing, else play.")
    @OptionGroup var options: ClientOptions
}

struct StopVerb: SimpleVerb {
    static let command = "stop"
    static let configuration = CommandConfiguration(
        commandName: command, abstract: "Stop playback: pause and go back to the start of the current item.")
    @OptionGroup var options: ClientOptions
}

struct NextVerb: SimpleVerb {
    static let command = "next"
    static let configuration = CommandConfiguration(commandName: command, abstract: "Skip to the next item.")
    @OptionGroup var options: ClientOptions
}

struct PreviousVerb: SimpleVerb {
    static let command = "previous"
    static let configuration = CommandConfiguration(
        commandName: command,
        abstract: "Play the item heard or skipped before this one (or restart this one when there is none).")
    @OptionGroup var options: ClientOptions
}

struct ClearVerb: SimpleVerb {
    static let command = "clear"
    static let configuration = CommandConfiguration(commandName: command, abstract: "Empty the queue.")
    @OptionGroup var options: ClientOptions
}

struct BackgroundVerb: SimpleVerb {
    static let command = "background"
    static let configuration = CommandConfiguration(
        commandName: command, abstract: "Flag the daemon backgrounded (as SIGUSR1 does).")
    @OptionGroup var options: ClientOptions
}

struct ForegroundVerb: SimpleVerb {
    static let command = "foreground"
    static let configuration = CommandConfiguration(
        commandName: command, abstract: "Flag the daemon active again (as SIGUSR2 does).")
    @OptionGroup var options: ClientOptions
}

struct QuitVerb: SimpleVerb {
    static let command = "quit"
    static let configuration = CommandConfiguration(
        commandName: command, abstract: "Stop the daemon cleanly (as SIGTERM does).")
    @OptionGroup var options: ClientOptions
}

struct StatusVerb: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Print Playing, Paused or Stopped.")
    @OptionGroup var options: ClientOptions
    @Flag(name: [.customShort("F"), .long], help: "Keep printing the status as it changes.") var follow = false

    func run() async throws {
        if follow {
            try await options.follow { $0.status }
        } else {
            print(try await options.call(ControlRequest(command: "status")).state?.status ?? "Stopped")
        }
    }
}

struct PositionVerb: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "position",
        abstract: "Print the position in seconds, or seek: OFFSET, OFFSET+ or OFFSET- (seconds).")
    @OptionGroup var options: ClientOptions
    @Flag(name: [.customShort("F"), .long], help: "Keep printing the position as it changes.") var follow = false
    @Argument(help: ArgumentHelp("Where to seek: 3 (absolute), 2+ or 2- (relative).", valueName: "offset"))
    var offset: AdjustableValue?

    func run() async throws {
        if follow {
            try await options.follow { fixedDecimals($0.position, places: 6) }
            return
        }
        var request = ControlRequest(command: "position")
        request.seconds = offset?.value
        request.relative = offset?.relative
        let reply = try await options.call(request)
        if offset == nil { print(fixedDecimals(reply.state?.position ?? 0, places: 6)) }
    }
}

struct VolumeVerb: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "volume", abstract: "Print the volume (0.0 to 1.0), or set it: LEVEL, LEVEL+ or LEVEL-.")
    @OptionGroup var options: ClientOptions
    @Argument(help: ArgumentHelp("0.5 (absolute), 0.1+ or 0.1- (relative).", valueName: "level"))
    var level: AdjustableValue?

    func run() async throws {
        var request = ControlRequest(command: "volume")
        request.level = level?.value
        request.relative = level?.relative
        let reply = try await options.call(request)
        if level == nil { print(fixedDecimals(reply.state?.volume ?? 0, places: 6)) }
    }
}
