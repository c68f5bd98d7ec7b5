import ArgumentParser
import QueuePlayerControl

/// The `playerctl` command: runs the QueuePlayer service (`daemon`) and controls it over its control socket with
/// the verbs the standard `playerctl` uses (`play`, `pause`, `next`, ...), plus queue and lifecycle verbs.
@main
struct PlayerCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: PlayerCtl.commandName,
        abstract: "Headless MP3 queue player for Linux, with AVQueuePlayer semantics.",
        discussion: """
            Run `\(PlayerCtl.commandName) daemon ITEM...` to play files and folders through PulseAudio; the other \
            verbs control that daemon through its control socket, with the syntax, output and exit statuses of the \
            standard playerctl where they overlap. With no daemon running they print "No players found" and exit 1.
            """,
        version: ReleaseVersion.printed,
        subcommands: [
            DaemonVerb.self, PlayVerb.self, PauseVerb.self, PlayPauseVerb.self, StopVerb.self, NextVerb.self,
            PreviousVerb.self, PositionVerb.self, VolumeVerb.self, StatusVerb.self, MetadataVerb.self,
            OpenVerb.self, AddVerb.self, InsertVerb.self, RemoveVerb.self, MoveVerb.self, PriorityVerb.self,
            TagVerb.self, UntagVerb.self, RangeVerb.self, ClearVerb.self, QueueVerb.self, BackgroundVerb.self,
            ForegroundVerb.self, QuitVerb.self, LoopVerb.self,
            ShuffleVerb.self, ReplayGainVerb.self, SnapcastPluginVerb.self,
        ]
    )

    /// The name this executable was run by: `playerctl` as built, `queueplayerctl` as the Debian package installs it
    /// (beside Debian's own `playerctl`). Help, man pages and completion scripts use it, so that each installed name
    /// completes and documents itself and no other.
    static let commandName: String = {
        let invoked = CommandLine.arguments.first?.split(separator: "/").last.map(String.init) ?? ""
        return invoked.isEmpty ? "playerctl" : invoked
    }()

    /// Hands `daemon` to the daemon's executable before anything is parsed, then runs the verb asked for.
    static func main() {
        DaemonLauncher.runIfAsked(Array(CommandLine.arguments.dropFirst()))
        main(nil)
    }

    // The standard playerctl's options may come before the verb; each verb takes the same groups.
    @OptionGroup var options: ClientOptions
    @OptionGroup var output: PrintOptions

    @Flag(
        name: [.customShort("l"), .customLong("list-all")],
        help: "List the players that can be controlled: queueplayer, when its daemon answers.")
    var listAll = false

    @Flag(name: [.customShort("v"), .customShort("V")], help: "Print the version (as --version does).")
    var printVersion = false

    mutating func run() throws {
        if printVersion {
            print(ReleaseVersion.printed)
            return
        }
        guard listAll else { throw CleanExit.helpRequest(self) }
        if options.selection.selectsThisDaemon, options.daemonAnswers() {
            print(PlayerSelection.playerName)
        }
    }
}
