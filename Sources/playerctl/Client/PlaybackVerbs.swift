import ArgumentParser
import QueuePlayerControl

/// A verb that sends one request with no arguments and prints nothing: play, pause, play-pause, stop, next,
/// previous, clear, background, foreground, quit.
protocol SimpleVerb: ParsableCommand {
    static var command: ControlCommand { get }
    var options: ClientOptions { get }
}

extension SimpleVerb {
    func run() throws {
        _ = try options.call(ControlRequest(Self.command))
    }
}

struct PlayVerb: SimpleVerb {
    static let command = ControlCommand.play
    static let configuration = CommandConfiguration(
        commandName: command.name.rawValue, abstract: "Start or resume playback.")
    @OptionGroup var options: ClientOptions
}

struct PauseVerb: SimpleVerb {
    static let command = ControlCommand.pause
    static let configuration = CommandConfiguration(commandName: command.name.rawValue, abstract: "Pause playback.")
    @OptionGroup var options: ClientOptions
}

struct PlayPauseVerb: SimpleVerb {
    static let command = ControlCommand.playPause
    static let configuration = CommandConfiguration(
        commandName: command.name.rawValue, abstract: "Pause if playing, else play.")
    @OptionGroup var options: ClientOptions
}

struct StopVerb: SimpleVerb {
    static let command = ControlCommand.stop
    static let configuration = CommandConfiguration(
        commandName: command.name.rawValue,
        abstract: "Stop playback: pause and go back to the start of the current item.")
    @OptionGroup var options: ClientOptions
}

struct NextVerb: SimpleVerb {
    static let command = ControlCommand.next
    static let configuration = CommandConfiguration(
        commandName: command.name.rawValue, abstract: "Skip to the next item.")
    @OptionGroup var options: ClientOptions
}

struct PreviousVerb: SimpleVerb {
    static let command = ControlCommand.previous
    static let configuration = CommandConfiguration(
        commandName: command.name.rawValue,
        abstract: "Play the item heard or skipped before this one (or restart this one when there is none).")
    @OptionGroup var options: ClientOptions
}

struct ClearVerb: SimpleVerb {
    static let command = ControlCommand.clear
    static let configuration = CommandConfiguration(commandName: command.name.rawValue, abstract: "Empty the queue.")
    @OptionGroup var options: ClientOptions
}

struct BackgroundVerb: SimpleVerb {
    static let command = ControlCommand.background
    static let configuration = CommandConfiguration(
        commandName: command.name.rawValue, abstract: "Flag the daemon backgrounded (as SIGUSR1 does).")
    @OptionGroup var options: ClientOptions
}

struct ForegroundVerb: SimpleVerb {
    static let command = ControlCommand.foreground
    static let configuration = CommandConfiguration(
        commandName: command.name.rawValue, abstract: "Flag the daemon active again (as SIGUSR2 does).")
    @OptionGroup var options: ClientOptions
}

struct QuitVerb: SimpleVerb {
    static let command = ControlCommand.quit
    static let configuration = CommandConfiguration(
        commandName: command.name.rawValue, abstract: "Stop the daemon cleanly (as SIGTERM does).")
    @OptionGroup var options: ClientOptions
}

struct StatusVerb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Print Playing, Paused or Stopped.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var output: PrintOptions

    func run() throws {
        try output.print(ControlRequest(.status), with: options) { $0.status.rawValue }
    }
}

struct PositionVerb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "position",
        abstract: "Print the position in seconds, or seek: OFFSET, OFFSET+ or OFFSET- (seconds).")
    @OptionGroup var options: ClientOptions
    @OptionGroup var output: PrintOptions
    @Argument(help: ArgumentHelp("Where to seek: 3 (absolute), 2+ or 2- (relative).", valueName: "offset"))
    var offset: AdjustableValue?

    func run() throws {
        guard let offset else {
            try output.print(ControlRequest(.position(nil, relative: false)), with: options) {
                fixedDecimals($0.position, places: 6)
            }
            return
        }
        _ = try options.call(ControlRequest(.position(offset.value, relative: offset.relative)))
    }
}

struct VolumeVerb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "volume", abstract: "Print the volume (0.0 to 1.0), or set it: LEVEL, LEVEL+ or LEVEL-.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var output: PrintOptions
    @Argument(help: ArgumentHelp("0.5 (absolute), 0.1+ or 0.1- (relative).", valueName: "level"))
    var level: AdjustableValue?

    func run() throws {
        guard let level else {
            try output.print(ControlRequest(.volume(nil, relative: false)), with: options) {
                fixedDecimals($0.volume, places: 6)
            }
            return
        }
        _ = try options.call(ControlRequest(.volume(level.value, relative: level.relative)))
    }
}

/// `loop` and `shuffle`: the standard playerctl's verbs for settings this player does not have. It plays its queue
/// once, in order: they print `None` and `Off` (as MPRIS's LoopStatus and Shuffle say), accept those values, and
/// refuse any other with an error that says why (exit 1).
protocol FixedSettingVerb: ParsableCommand {
    static var settingName: String { get }
    /// The one value the setting has, as playerctl prints it.
    static var onlyValue: String { get }
    /// The values the standard playerctl accepts for it.
    static var knownValues: [String] { get }
    static var reason: String { get }
    var options: ClientOptions { get }
    var output: PrintOptions { get }
    var value: String? { get }
}

extension FixedSettingVerb {
    func run() throws {
        guard let value else {
            try output.print(ControlRequest(.status), with: options) { _ in Self.onlyValue }
            return
        }
        _ = try options.call(ControlRequest(.status))
        guard value.lowercased() == Self.onlyValue.lowercased() else {
            let known = Self.knownValues.contains { $0.lowercased() == value.lowercased() }
            let values = Self.knownValues.joined(separator: ", ")
            options.fail(
                known
                    ? "playerctl: \(Self.settingName) \(value): \(Self.reason); only \(Self.onlyValue) is possible"
                    : "playerctl: \(Self.settingName): '\(value)' is not one of \(values)"
            )
        }
    }
}

struct LoopVerb: FixedSettingVerb {
    static let configuration = CommandConfiguration(
        commandName: "loop", abstract: "Print the loop status (always None), or set it (None only).")
    static let settingName = "loop"
    static let onlyValue = "None"
    static let knownValues = ["None", "Track", "Playlist"]
    static let reason = "QueuePlayer plays its queue once and does not loop"
    @OptionGroup var options: ClientOptions
    @OptionGroup var output: PrintOptions
    @Argument(help: ArgumentHelp("None (Track and Playlist are refused).", valueName: "status")) var value: String?
}

struct ShuffleVerb: FixedSettingVerb {
    static let configuration = CommandConfiguration(
        commandName: "shuffle", abstract: "Print the shuffle status (always Off), or set it (Off only).")
    static let settingName = "shuffle"
    static let onlyValue = "Off"
    static let knownValues = ["On", "Off", "Toggle"]
    static let reason = "QueuePlayer plays its queue in order and does not shuffle"
    @OptionGroup var options: ClientOptions
    @OptionGroup var output: PrintOptions
    @Argument(help: ArgumentHelp("Off (On and Toggle are refused).", valueName: "status")) var value: String?
}
