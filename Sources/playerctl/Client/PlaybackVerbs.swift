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

/// `loop [None|Track|Playlist]`: the standard playerctl's verb for what plays again (MPRIS's LoopStatus), which
/// the daemon's repeat modes are: prints it, or sets it.
struct LoopVerb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loop", abstract: "Print what plays again (None, Track or Playlist), or set it.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var output: PrintOptions
    @Argument(
        help: ArgumentHelp(
            "None, Track (the current item, again and again) or Playlist (the whole queue).",
            valueName: "status"))
    var value: String?

    func run() throws {
        try output.printOrSet(value, verb: "loop", with: options, command: ControlCommand.loop) { $0.loop.rawValue }
    }
}

/// `shuffle [On|Off|Toggle]`: the standard playerctl's verb for whether the queue plays shuffled (MPRIS's Shuffle):
/// prints `On` or `Off`, or sets it.
struct ShuffleVerb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shuffle", abstract: "Print whether the queue plays shuffled (On or Off), or set it.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var output: PrintOptions
    @Argument(help: ArgumentHelp("On, Off or Toggle.", valueName: "status")) var value: String?

    func run() throws {
        try output.printOrSet(value, verb: "shuffle", with: options, command: ControlCommand.shuffle) {
            $0.shuffle ? "On" : "Off"
        }
    }
}

/// `replaygain [Off|Track|Album|Auto]`: which ReplayGain plays (MPD's `replay_gain_mode`); prints it, or sets it.
struct ReplayGainVerb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replaygain",
        abstract: "Print which ReplayGain plays (Off, Track, Album or Auto), or set it.",
        discussion: "Auto is album gain while the queue plays in order and track gain while it is shuffled.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var output: PrintOptions
    @Argument(help: ArgumentHelp("Off, Track, Album or Auto.", valueName: "mode")) var value: String?

    func run() throws {
        try output.printOrSet(value, verb: "replaygain", with: options, command: ControlCommand.replayGain) {
            $0.replayGain.rawValue
        }
    }
}
