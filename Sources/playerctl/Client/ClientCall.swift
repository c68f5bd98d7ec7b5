import ArgumentParser
import FoundationEssentials
import Glibc
import QueuePlayerControl
import Synchronization

/// `--socket` and the player selection, shared by every command that talks to the daemon.
struct ClientOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The daemon's control socket.", discussion: ControlSocketPath.defaultDescription, valueName: "path"))
    var socket: String?

    @OptionGroup var selection: PlayerSelection

    var client: ControlClient { ControlClient(path: ControlSocketPath.resolve(socket)) }

    /// Sends `request`; on no daemon (or a selection without it) or an error reply, says so on stderr (unless
    /// `-s`) and exits 1, as playerctl does.
    func call(_ request: ControlRequest) throws -> ControlReply {
        guard selection.selectsThisDaemon else { fail("No players found") }
        let reply: ControlReply
        do {
            reply = try client.send(request)
        } catch is ControlClient.NoPlayer {
            fail(noPlayerMessage)
        }
        if reply.ok != true { fail("playerctl: \(reply.error ?? "the daemon refused the request")") }
        return reply
    }

    /// True when a daemon answers on the socket.
    func daemonAnswers() -> Bool {
        (try? client.send(ControlRequest(.status)))?.ok == true
    }

    /// Prints every state the daemon reports whose rendering differs from the last one printed.
    func follow(_ render: @escaping @Sendable (PlayerSnapshot) -> String?) throws {
        guard selection.selectsThisDaemon else { fail("No players found") }
        let printed = PrintedLine()
        do {
            try client.follow { state in
                guard let text = render(state), printed.replace(with: text) else { return }
                print(text)
                fflush(nil)
            }
        } catch is ControlClient.NoPlayer {
            fail(noPlayerMessage)
        }
    }

    private var noPlayerMessage: String {
        "No players found (nothing listens at \(ControlSocketPath.resolve(socket)); "
            + "start one with `playerctl daemon Music/`)"
    }

    /// Says `message` on stderr (unless `-s`) and exits 1.
    func fail(_ message: String) -> Never {
        if !selection.noMessages {
            var line = message + "\n"
            line.withUTF8 { bytes in _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count) }
        }
        Glibc.exit(1)
    }
}

/// The line `--follow` printed last, so that a report rendering the same is not printed again.
private final class PrintedLine: Sendable {
    private let line = Mutex<String?>(nil)

    /// Records `text` and returns true when it differs from the line recorded before.
    func replace(with text: String) -> Bool {
        line.withLock { line in
            guard line != text else { return false }
            line = text
            return true
        }
    }
}

/// `3` (absolute), `2+` or `2-` (relative), as playerctl's `position` and `volume` take them.
struct AdjustableValue: ExpressibleByArgument {
    let value: Double
    let relative: Bool

    init?(argument: String) {
        let sign: Double? = argument.hasSuffix("+") ? 1 : argument.hasSuffix("-") ? -1 : nil
        let number = sign == nil ? argument : String(argument.dropLast())
        guard let parsed = Double(number), parsed.isFinite, parsed >= 0 else { return nil }
        value = parsed * (sign ?? 1)
        relative = sign != nil
    }
}

/// A path as the daemon needs it: absolute (the daemon runs elsewhere); URLs (`file://`, `https://`) kept.
func absolutePath(_ item: String) -> String {
    if item.hasPrefix("/") || item.contains("://") { return item }
    return URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(item).path
}
