import ArgumentParser
import QueuePlayerControl

/// `snapcast-plugin`: what snapserver runs as the stream's `controlscript` (through `contrib/snapcast`), so that
/// Snapcast's clients show and control the daemon.
struct SnapcastPluginVerb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapcast-plugin",
        abstract: "Snapcast's stream plugin: snapserver runs it to show and control the daemon.",
        discussion: """
            Speaks Snapcast's stream plugin interface (JSON-RPC on standard input and output): Snapcast's clients \
            play, pause, skip, seek and set the volume, and see the state, position and current item's title, \
            artist, album and length. Snapserver runs it through contrib/snapcast/queueplayer-snapcast, named in \
            the source's controlscript; it is not for a terminal.
            """)

    @OptionGroup var options: ClientOptions

    @Option(help: ArgumentHelp("The Snapcast stream served (snapserver passes it; not used).", valueName: "id"))
    var stream: String?

    @Option(help: ArgumentHelp("Snapserver's host (newer snapservers pass it; not used).", valueName: "host"))
    var snapcastHost: String?

    @Option(help: ArgumentHelp("Snapserver's port (newer snapservers pass it; not used).", valueName: "port"))
    var snapcastPort: Int?

    func run() throws {
        SnapcastPlugin(client: options.client).run()
    }
}
