import ArgumentParser

/// The `playerctl` command: runs the QueuePlayer service and, later, controls it with the verbs the standard
/// `playerctl` uses (`play`, `pause`, `next`, ...).
@main
struct PlayerCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playerctl",
        abstract: "Headless MP3 queue player for Linux, with AVQueuePlayer semantics.",
        discussion: """
            Run `playerctl daemon ITEM...` to play files and folders through PulseAudio.
            The control verbs (play, pause, next, ...) arrive with the control socket.
            """,
        version: "0.1.0",
        subcommands: [DaemonCommand.self]
    )
}
